"""The cost of the exact starting-contract posterior (``packetrow_env.belief``) at the end of whole games.

For 2-5 players, games are played to their end by the shipped agent in every seat; seat 0's posterior over the
hidden starting contracts is then computed with each opponent modelled as the shipped agent (its batched
probabilities), as uniformly random, and as the heuristic (one view at a time). Prints a Markdown table of the
median of ``--repeats`` timings per game (one core: run with OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1), then
how long games get: the most rounds and actions among ``--random-games`` uniformly random games per player count.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/belief_speed.py --games 3 --repeats 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from tqdm import tqdm

from packetrow_env import Game, belief
from packetrow_env.seat_view import SeatView
from packetrow_env.vector import VectorGame
from packetrow_env.vector.learner import random_legal
from packetrow_agents import HeuristicAgent, RandomAgent, make_agent
from packetrow_agents.policy import action_model


def play_to_end(n: int, seed: int, agent) -> Game:
    """A whole game with ``agent`` in every seat; the position before its last action (so that seats still hold
    their contracts: the final fulfilment reveals those it ships)."""
    game = Game.new(n, seed=seed)
    last = game
    while not game.is_over:
        last = game.clone()
        game.step(agent.act(SeatView(game, game.current_player)))
    return last


def longest(n: int, games: int) -> tuple[int, int]:
    """(the most rounds, the most actions) among ``games`` uniformly random games of ``n`` players."""
    vg = VectorGame(num_players=n, seeds=range(games))
    rng = np.random.default_rng(n)
    while not vg.is_over.all():
        vg.step(random_legal(vg.legal_action_mask(), rng))
    return int(vg.batch.round.max()), int(vg.batch.n_history.max())


def timed(view, policies, repeats: int) -> float:
    """The median seconds of ``repeats`` posteriors."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        belief.starting_contract_posterior(view, policies)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="games per player count (default 3)")
    parser.add_argument("--repeats", type=int, default=5, help="timings per game, the median kept (default 5)")
    parser.add_argument("--random-games", type=int, default=2000,
                        help="random games per player count for the longest games (default 2000)")
    args = parser.parse_args(argv)
    ppo = make_agent("ppo")
    models = {"ppo (batched)": action_model(ppo), "random (batched)": action_model(RandomAgent(0)),
              "heuristic (one view at a time)": action_model(HeuristicAgent(0))}
    warm = play_to_end(3, 0, ppo)  # compiles the batched engine's kernels outside the timings
    belief.starting_contract_posterior(SeatView(warm, 0), {q: models["ppo (batched)"] for q in (1, 2)})
    rows = []
    for n in tqdm(range(2, 6), desc="player counts"):
        for seed in range(args.games):
            game = play_to_end(n, 100 + seed, ppo)
            view = SeatView(game, 0)
            hidden = belief.starting_contract_posterior(view).seats
            policies = {name: {q: model for q in range(1, n)} for name, model in models.items()}
            rows.append((n, seed, game.state.round, len(game.state.history), len(hidden),
                         {name: timed(view, p, args.repeats) for name, p in policies.items()}))
    print("| players | game | rounds | actions | hidden seats | " + " | ".join(models) + " |")
    print("|---:|---:|---:|---:|---:|" + "---:|" * len(models))
    for n, seed, rounds, length, hidden, times in rows:
        print(f"| {n} | {seed} | {rounds} | {length} | {hidden} | "
              + " | ".join(f"{1000 * times[name]:.0f} ms" for name in models) + " |")
    print(f"\nthe longest of {args.random_games} uniformly random games:")
    print("| players | rounds | actions |\n|---:|---:|---:|")
    for n in range(2, 6):
        rounds, length = longest(n, args.random_games)
        print(f"| {n} | {rounds} | {length} |")


if __name__ == "__main__":
    main()
