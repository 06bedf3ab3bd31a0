"""The auxiliary belief head experiment (docs/beliefs.md, "An auxiliary belief head").

Trains a config (configs/quick.yaml) as it is and with ``ppo.belief_head``, one run after the other, each for the
same training wall-clock budget: a short evaluation every ``--check-every`` learner steps ends a run once its
training time (evaluations left out, ``train_seconds`` of eval.csv) has reached ``--budget``. Both runs then play
the config's final evaluation (seat-rotated games against the heuristic). The head's calibration is scored on
held-out self-play positions (the trained policy sampling in every seat) with ``belief.score``: against the true
contracts (NLL, Brier, ECE) and against the exact posterior (KL; ``starting_contract_posterior`` with the trained
policy as every opponent's model). The prior and the exact posterior are scored on the same positions.

    python benchmarks/belief_head.py --budget 150 --positions 300 [--weights 0 0.5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from tqdm import tqdm

from packetrow_agents.policy import PolicyAgent, action_model
from packetrow_env import Game, belief
from packetrow_env.seat_view import SeatView
from packetrow_env.vector import VectorGame
from packetrow_env.vector.learner import starting_contract_labels
from packetrow_train.belief_head import OPPONENTS
from packetrow_train.config import config_from_dict, read_config
from packetrow_train.policy_export import export_policy
from packetrow_train.selfplay import train


def run(config_name: str, weight: float, budget: float, check_every: int, out: str, final_games=None):
    """Train the config with ``ppo.belief_head = weight`` for ``budget`` training seconds; the TrainResult."""
    _, data = read_config(config_name)
    if final_games is not None:
        data["eval"]["final_games"] = final_games
    data["name"] = f"{data.get('name', 'run')}-belief-{weight:g}"
    data["ppo"]["belief_head"] = weight
    data["pipeline"] = False  # BeliefPPO collects its rollouts in turn with its updates: both runs alike
    data["eval"].update(every=check_every, games=1)  # one seat rotation: the check of the budget, kept cheap
    config = config_from_dict(data, config_name)
    return train(config, out=f"{out}/{data['name']}", overwrite=True,
                 stop=lambda rows: rows[0]["train_seconds"] >= budget)


def held_out_scores(model, mode: str, positions: int, seed: int) -> dict:
    """Scores of the head, the prior and the exact posterior on ``positions`` self-play positions."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    opponent_model = action_model(PolicyAgent(policy=export_policy(model, mode), deterministic=False))
    starts = None
    head, prior, exact, labels = [], [], [], []
    bar = tqdm(total=positions, desc="held-out positions")
    game_seed = seed
    while len(labels) < positions:
        seeds = list(range(game_seed, game_seed + 32))
        vg = VectorGame(num_players=[2, 4] * 16, seeds=seeds)
        game_seed += 32
        starts = vg.cards.start_contracts
        while (vg.current_player >= 0).any() and len(labels) < positions:
            live = np.flatnonzero(vg.current_player >= 0)
            observations = vg.observe(mode, rows=live, encoding="compact")
            masks = vg.legal_action_mask()[live]
            row_labels = starting_contract_labels(vg, mode)
            # about 300 positions from 32 games of some 70 (2 players) to 200 (4 players) decisions each
            for k in np.flatnonzero(rng.random(len(live)) < 0.04):
                i = int(live[k])
                if (row_labels[i] < 0).all() or len(labels) >= positions:
                    continue
                n, seat = int(vg.num_players[i]), int(vg.current_player[i])
                # rebuilt by the single engine: VectorGame.game leaves 0 in the cash of the seats beyond n, where
                # Game.new has -1, and the posterior's replay check compares every seat's cash (as of 2026-11-24)
                game = Game.new(num_players=n, seed=seeds[i])
                for action in vg.game(i).state.history:
                    game.step(int(action))
                view = SeatView(game, seat, mode)
                rows = []
                for posterior in (belief.starting_contract_posterior(view),
                                  belief.starting_contract_posterior(view, {q: opponent_model for q in range(n)
                                                                            if q != seat})):
                    table = np.full((OPPONENTS, len(starts)), 1 / len(starts))  # unscored seats: any distribution
                    for j in range(OPPONENTS):
                        q = (seat + 1 + j) % n
                        if j + 1 < n and q in posterior:
                            table[j] = [posterior[q].get(int(c), 0.0) for c in starts]
                    rows.append(table)
                prior.append(rows[0])
                exact.append(rows[1])
                head.append(model.policy.belief_probabilities(observations[k:k + 1])[0])
                labels.append(row_labels[i])
                bar.update()
            with torch.no_grad():
                distribution = model.policy.get_distribution(torch.as_tensor(observations),
                                                             action_masks=masks)
                acts = np.zeros(vg.num_games, np.int64)
                acts[live] = distribution.get_actions(deterministic=False).numpy()
            vg.step(acts, where=vg.current_player >= 0)
    bar.close()
    labels, exact = np.array(labels), np.array(exact)
    return {name: belief.score(np.array(predicted), labels, exact)
            for name, predicted in (("prior", prior), ("head", head), ("exact posterior", exact))}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="quick", help="the training config (default: quick)")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.5],
                        help="ppo.belief_head of each run, trained one after the other (default: 0 0.5)")
    parser.add_argument("--budget", type=float, default=150.0, help="training seconds of each run")
    parser.add_argument("--check-every", type=int, default=50_000, help="learner steps between budget checks")
    parser.add_argument("--positions", type=int, default=300, help="held-out positions for the calibration")
    parser.add_argument("--final-games", type=int, help="eval.final_games (default: the config's)")
    parser.add_argument("--out", default="runs/belief_head", help="where the runs write")
    args = parser.parse_args(argv)
    results = {}
    for weight in args.weights:
        started = time.perf_counter()
        result = run(args.config, weight, args.budget, args.check_every, args.out, args.final_games)
        trained = max(row["train_seconds"] for row in result.callback.evaluations if row["stage"] == "periodic") \
            if any(row["stage"] == "periodic" for row in result.callback.evaluations) else float("nan")
        results[weight] = result
        print(f"belief_head {weight:g}: {result.model.num_timesteps} learner steps, about {trained:.0f} s of "
              f"training ({time.perf_counter() - started:.0f} s in all)")
        print("| opponent | players | games | win rate [95% CI] | mean VP |")
        for row in result.evaluation:
            print(f"| {row['opponent']} | {row['num_players']} | {row['games']} | {100 * row['win_rate']:.1f}% "
                  f"[{100 * row['win_low']:.1f}, {100 * row['win_high']:.1f}] | {row['mean_vp']:.1f} |")
    for weight, result in results.items():
        if not weight:
            continue
        history = result.model.belief_loss_history
        print(f"belief_head {weight:g}: the head's training loss over {len(history)} updates: first 10 "
              f"{np.mean(history[:10]):.3f}, last 10 {np.mean(history[-10:]):.3f} (uniform over the contracts: "
              f"{np.log(result.model.policy.belief_classes):.3f})")
        scores = held_out_scores(result.model, result.callback.config.env.observation_mode, args.positions, 10_000)
        print("| beliefs | NLL | Brier | ECE | KL to the exact posterior | opponent contracts scored |")
        for name, s in scores.items():
            print(f"| {name} | {s['nll']:.3f} | {s['brier']:.3f} | {s['ece']:.3f} | {s['kl']:.3f} | {s['cards']} |")

if __name__ == "__main__":
    main()
