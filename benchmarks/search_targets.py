"""Search targets for the policy (expert iteration, one step): the search labels positions of its own games, the
policy's network is fine-tuned towards the labels, and the result plays.

    python benchmarks/search_targets.py --out runs/search_targets --games 600 --workers 2
    python benchmarks/search_targets.py --out runs/expert --players 2 --opponent self --targets policy \\
        --search search:rollouts=128,update=mmd,eta=30,act=sample --games 1600 --workers 2

The search (``--search``, its ``policy=`` set to ``--policy``: a shipped policy's name or a ``.npz`` export;
``--checkpoint`` converts an SB3 file of your own run first, which unpickles it) plays ``--games`` seat-rotated
games against ``--opponent``, or every seat with ``--opponent self``. At every decision of a searching seat with a
choice the label is the search's move (``--targets choice``) or its policy after the rollouts (``--targets
policy``, ``SearchAgent.last_policy``: needs ``update=mmd``; the policy's probabilities with the candidates' share
moved by the mirror-descent update). The games go in chunks of ``--chunk-size`` to ``OUT/decisions/``, each
written once complete, so an interrupted run resumes with the chunks it has (the same command). The policy is
then fine-tuned by cross-entropy to the labels (``packetrow_train.imitation.imitate``: a fifth of the games held
out, the epoch with the lowest held-out cross-entropy kept) into ``OUT/model.npz``, and it and the policy it
started from play ``--eval-games`` duplicate games against each of ``--eval-against``. The experiment log
(docs/experiments.md) has what this measured.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
from pathlib import Path

import numpy as np
from tqdm import tqdm

import packetrow_env
from packetrow_agents.policy import check_model_path, load_policy
from packetrow_agents.registry import make_agent
from packetrow_agents.shipped import SHIPPED_POLICIES
from packetrow_arena.tournament import positive_int as positive, run_tournament
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from packetrow_train.imitation import Decisions, imitate

TARGETS = ("choice", "policy")
_ARGS = None


def _init(args) -> None:
    global _ARGS
    _ARGS = args


def labelled_game(args, index: int) -> list[tuple]:
    """One game: (policy input, mask, the search's move, its policy or None) at the searching seats' decisions with
    a choice, read as the search's policy reads them."""
    deal, *seeds = np.random.SeedSequence(args.seed, spawn_key=(index,)).generate_state(args.players + 1)
    searching = range(args.players) if args.opponent == "self" else [index % args.players]
    agents = [make_agent(args.search if s in searching else args.opponent, int(seeds[s]))
              for s in range(args.players)]
    game = Game.new(args.players, seed=int(deal))
    rows = []
    while not game.is_over:
        seat = game.current_player
        agent = agents[seat]
        view = SeatView(game, seat, "tracked")
        action = int(agent.act(view))
        if seat in searching:
            read = agent.player.read(view)
            if not isinstance(read, int) and read[1].sum() > 1:
                target = None if agent.last_policy is None else agent.last_policy[:len(read[1])]
                rows.append((read[0], read[1], action, target))
        game.step(action)
    return rows


def chunk_path(args, first: int) -> Path:
    """The file of the chunk of games starting at game ``first`` (named by its first and last game, so that a
    chunk cut short by a smaller --games is labelled again in full when --games grows)."""
    return args.decisions / f"games_{first:06d}_{min(first + args.chunk_size, args.games) - 1:06d}.npz"


def _chunk(first: int) -> int:
    """Label the games of the chunk starting at game ``first`` and write them to the decisions folder."""
    args = _ARGS
    games = range(first, min(first + args.chunk_size, args.games))
    rows = [(index, row) for index in games for row in labelled_game(args, index)]
    path = chunk_path(args, first)
    temporary = path.with_suffix(".tmp.npz")
    np.savez_compressed(temporary, observations=np.array([r[0] for _, r in rows], np.float32),
                        masks=np.array([r[1] for _, r in rows], bool),
                        actions=np.array([r[2] for _, r in rows], np.int64),
                        games=np.array([i for i, _ in rows], np.int64),
                        targets=np.array([r[3] for _, r in rows], np.float32) if args.targets == "policy"
                        else np.zeros(0))
    os.replace(temporary, path)  # a chunk is there whole or not at all
    return len(games)


def collect(args) -> Decisions:
    """Every labelled decision of ``args.games`` games, labelling the chunks not yet in ``args.decisions``; chunks
    labelled with other settings (``settings.json`` beside them) are refused, not mixed in."""
    args.decisions.mkdir(parents=True, exist_ok=True)
    settings = {key: str(getattr(args, key)) for key in ("policy", "search", "opponent", "targets", "players", "seed",
                                                           "chunk_size")}
    recorded = args.decisions / "settings.json"
    if recorded.exists() and json.loads(recorded.read_text()) != settings:
        raise SystemExit(f"{args.decisions} holds games labelled with other settings ({recorded.read_text().strip()});"
                         f" give another --out, or the same settings to resume (only --games may grow)")
    recorded.write_text(json.dumps(settings) + "\n")
    starts = range(0, args.games, args.chunk_size)
    todo = [s for s in starts if not chunk_path(args, s).exists()]
    with tqdm(total=args.games, initial=args.games - sum(min(args.chunk_size, args.games - s) for s in todo),
              desc="search games", unit="game") as bar:
        with multiprocessing.get_context("fork").Pool(args.workers, _init, (args,)) as pool:
            for done in pool.imap_unordered(_chunk, todo):
                bar.update(done)
    parts = [np.load(chunk_path(args, s)) for s in starts]
    joined = {key: np.concatenate([p[key] for p in parts]) for key in ("observations", "masks", "actions", "games")}
    targets = np.concatenate([p["targets"] for p in parts]) if args.targets == "policy" else None
    return Decisions(**joined, targets=targets)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--policy", default="ppo",
                        help="the policy to search on and fine-tune: a shipped policy's name or a .npz export")
    source.add_argument("--checkpoint", help="an SB3 checkpoint (.zip) of your own run instead (it is unpickled)")
    parser.add_argument("--search", default="search:rollouts=64,opponents=heuristic",
                        help="the labelling agent, searching on the policy (its policy= is added)")
    parser.add_argument("--opponent", default="heuristic",
                        help="the other seats' agent spec, or 'self': the search at every seat (default heuristic)")
    parser.add_argument("--targets", choices=TARGETS, default="choice",
                        help="the label: the search's move, or its policy after the rollouts (update=mmd)")
    parser.add_argument("--players", type=int, choices=range(2, 6), default=4, help="players a game (default 4)")
    parser.add_argument("--games", type=positive, default=600, help="labelled games (default 600)")
    parser.add_argument("--chunk-size", type=positive, default=20, help="games a saved chunk (default 20)")
    parser.add_argument("--epochs", type=positive, default=4, help="passes over the positions (default 4)")
    parser.add_argument("--learning-rate", type=float, default=1e-4, help="Adam's (default 1e-4)")
    parser.add_argument("--eval-games", type=int, default=2000,
                        help="duplicate games of each policy against each --eval-against (0: none)")
    parser.add_argument("--eval-against", nargs="+", default=["heuristic"], metavar="SPEC",
                        help="the agents the policies play, all other seats (default heuristic)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and the fine-tuning")
    parser.add_argument("--workers", type=positive, default=1, help="processes for the games (default 1)")
    parser.add_argument("--out", default="runs/search_targets", help="the run's folder (decisions/, model.npz)")
    args = parser.parse_args(argv)
    if args.targets == "policy" and "update=mmd" not in args.search:
        parser.error(f"--targets policy needs a search with update=mmd (its policy after the rollouts); got "
                     f"--search {args.search}")
    if args.eval_games < 0:
        parser.error(f"--eval-games must be 0 (no games) or more, got {args.eval_games}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.checkpoint:
        from packetrow_train.policy_export import export_policy
        from packetrow_train.rollout import RolloutPPO
        start = out / "start.npz"
        export_policy(RolloutPPO.load(args.checkpoint, device="cpu"), "tracked").save(start)
        args.policy = str(start)
    elif args.policy not in SHIPPED_POLICIES:
        args.policy = str(check_model_path(args.policy))
    start_policy = load_policy(args.policy)
    args.search = f"{args.search},policy={args.policy}"
    args.decisions = out / "decisions"
    print(f"{datetime.date.today()}, packetrow {packetrow_env.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cores; {args.games} games of {args.players} players, {args.search} against "
          f"{args.opponent}, targets: {args.targets}")
    decisions = collect(args)
    policy, report = imitate(decisions, start_policy, args.epochs, args.learning_rate, seed=args.seed,
                             progress=True, metadata={"config_name": "search_targets", "base_policy": args.policy,
                                                      "search": args.search, "targets": args.targets})
    policy.save(out / "model.npz")
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"{report['decisions']} decisions in {report['games']} games; held out {report['held_out_games']} games: "
          f"agreement {report['agreement_before']:.1%} -> {report['agreement_after']:.1%}, cross-entropy "
          f"{report['cross_entropy_before']:.3f} -> {report['cross_entropy_after']:.3f} (epoch "
          f"{report['epoch_kept']}); wrote {out / 'model.npz'}")
    for against in args.eval_against if args.eval_games else []:
        for label, path in (("before", args.policy), ("fine-tuned", out / "model.npz")):
            spec = f"ppo:path={SHIPPED_POLICIES.get(str(path), path)}"
            result = run_tournament([spec] + [against] * (args.players - 1), args.players, args.eval_games,
                                    seed=args.seed + 7, workers=args.workers, progress=False, duplicate=True)
            row = result.table[0]
            print(f"{label} against {against}: {100 * row['win_rate']:.1f}% [{100 * row['win_low']:.1f}, "
                  f"{100 * row['win_high']:.1f}] of {row['games']} games")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
