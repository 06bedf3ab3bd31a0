"""Search targets for the policy (expert iteration, its simplest form): the search labels positions of its own
games with its choices, the policy's network is fine-tuned towards them (cross-entropy), and the result plays.

    python benchmarks/search_targets.py --checkpoint runs/ppo_packetrow_v2_finetune/model.zip --games 600 \
        --epochs 4 --learning-rate 1e-4 --workers 2

The checkpoint is an SB3 file of your own run (loading one unpickles it). The positions are those of the
search's seat in seat-rotated games against ``--opponent``, where it has a choice; the targets are the search's
choices and "deviations" the positions where it left the policy's favourite. A tenth is held out; the fine-tuned
policy then plays ``--eval-games`` seat-rotated games against the opponents, beside the policy it started from.
The experiment log (docs/experiments.md) has what this measured.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing
import os
import platform
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

import packetrow_env
from packetrow_agents.registry import make_agent
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from packetrow_train.policy_export import export_policy
from packetrow_train.rollout import RolloutPPO
from packetrow_arena.tournament import positive_int as positive, run_tournament

_ARGS = None


def _init(args) -> None:
    global _ARGS
    _ARGS = args


def _labelled_game(index: int):
    """One game: (observations, masks, the search's choices, the policy's favourites) at the search's decisions."""
    args = _ARGS
    deal, *seeds = np.random.SeedSequence(args.seed, spawn_key=(index,)).generate_state(args.players + 1)
    learner = index % args.players
    agents = [make_agent(args.search if s == learner else args.opponent, int(seeds[s])) for s in range(args.players)]
    game = Game.new(args.players, seed=int(deal))
    rows = []
    while not game.is_over:
        seat = game.current_player
        view = SeatView(game, seat, "tracked")
        action = int(agents[seat].act(view))
        if seat == learner and view.action_mask.sum() > 1:
            favourite = int(np.argmax(agents[seat].player.action_probabilities(view)))
            rows.append((view.compact_observation("tracked"), view.action_mask.copy(), action, favourite))
        game.step(action)
    return rows


def collect(args) -> dict:
    """The labelled positions of ``args.games`` games, in game order."""
    with multiprocessing.Pool(args.workers, _init, (args,)) as pool:
        games = list(tqdm(pool.imap(_labelled_game, range(args.games)), total=args.games, desc="search games"))
    rows = [row for game in games for row in game]
    return {"obs": np.array([r[0] for r in rows], np.float32), "masks": np.array([r[1] for r in rows]),
            "targets": np.array([r[2] for r in rows]), "favourites": np.array([r[3] for r in rows])}


def distill(args, model, data: dict):
    """``model`` (MaskablePPO) with its policy network fine-tuned towards the targets; prints held-out agreement."""
    policy = model.policy
    obs = torch.as_tensor(data["obs"])
    masks = data["masks"][:, :policy.action_net.out_features]
    targets = torch.as_tensor(data["targets"])
    deviations = targets != torch.as_tensor(data["favourites"])
    weights = torch.where(deviations, args.deviation_weight, 1.0)
    order = np.random.default_rng(args.seed).permutation(len(targets))
    held, train = order[:len(order) // 10], order[len(order) // 10:]
    params = [p for m in (policy.pi_features_extractor, policy.mlp_extractor.policy_net, policy.action_net)
              for p in m.parameters()]
    optimiser = torch.optim.Adam(params, lr=args.learning_rate)

    def agreement(rows) -> str:
        with torch.no_grad():
            chosen = policy.get_distribution(obs[rows], action_masks=masks[rows]).distribution.probs.argmax(1)
        right, dev = chosen == targets[rows], deviations[rows]
        return (f"deviations learned {right[dev].float().mean():.1%} of {int(dev.sum())}, "
                f"agreement elsewhere {right[~dev].float().mean():.1%}")

    print(f"{len(targets)} positions, {deviations.float().mean():.1%} deviations; held out before: {agreement(held)}")
    for epoch in range(args.epochs):
        np.random.default_rng([args.seed, epoch]).shuffle(train)
        for start in range(0, len(train), 256):
            batch = train[start:start + 256]
            distribution = policy.get_distribution(obs[batch], action_masks=masks[batch])
            loss = -(distribution.log_prob(targets[batch]) * weights[batch]).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        print(f"epoch {epoch + 1}: held out {agreement(held)}", flush=True)
    return model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="the SB3 checkpoint (.zip) of your own run to fine-tune")
    parser.add_argument("--search", default="search:rollouts=64,opponents=heuristic",
                        help="the labelling agent, searching on the checkpoint's policy (its policy= is added)")
    parser.add_argument("--opponent", default="heuristic", help="the other seats' agent spec (default heuristic)")
    parser.add_argument("--players", type=int, choices=range(2, 6), default=4, help="players a game (default 4)")
    parser.add_argument("--games", type=positive, default=600, help="labelled games (default 600)")
    parser.add_argument("--epochs", type=positive, default=4, help="passes over the positions (default 4)")
    parser.add_argument("--learning-rate", type=float, default=1e-4, help="Adam's (default 1e-4)")
    parser.add_argument("--deviation-weight", type=float, default=1.0, help="loss weight of the deviations")
    parser.add_argument("--eval-games", type=positive, default=2000, help="seat-rotated games of each policy")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and the fine-tuning")
    parser.add_argument("--workers", type=positive, default=1, help="processes for the games (default 1)")
    parser.add_argument("--out", default="runs/search_targets", help="where the fine-tuned policy (model.npz) goes")
    args = parser.parse_args(argv)
    print(f"{datetime.date.today()}, packetrow {packetrow_env.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cores; {args.games} games of {args.players} players, {args.search} against "
          f"{args.opponent}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = RolloutPPO.load(args.checkpoint, device="cpu")
    start = out / "start.npz"
    export_policy(model, "tracked").save(start)
    args.search = f"{args.search},policy={start}"
    model = distill(args, model, collect(args))
    export_policy(model, "tracked", {"config_name": "search_targets"}).save(out / "model.npz")
    for label, path in (("before", start), ("fine-tuned", out / "model.npz")):
        result = run_tournament([f"ppo:path={path}"] + [args.opponent] * (args.players - 1), args.players,
                                args.eval_games, seed=args.seed + 7, workers=args.workers, progress=False)
        row = result.table[0]
        print(f"{label}: {100 * row['win_rate']:.1f}% [{100 * row['win_low']:.1f}, {100 * row['win_high']:.1f}] "
              f"of {row['games']} games")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
