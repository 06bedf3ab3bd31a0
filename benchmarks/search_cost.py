"""What a SearchAgent decision costs: ms per decision and rollouts per second by wave size (K determinisations x C
candidates in one VectorGame), at positions of the shipped policy's own games, one thread."""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from tqdm import tqdm

import packetrow_env
from packetrow_agents.policy import PolicyAgent
from packetrow_agents.registry import parse_spec
from packetrow_agents.search import SearchAgent
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView

WAVES = ((4, 4), (16, 4), (32, 4), (16, 8))


def positions(players: int, count: int, seed: int) -> list[Game]:
    """Decisions with several legal actions from the shipped policy's self-play, spread over the game."""
    policy = PolicyAgent()
    found = []
    game_seed = seed
    while len(found) < count:
        game = Game.new(players, seed=game_seed)
        game_seed += 1
        k = 0
        while not game.is_over:
            if k % 9 == 4 and len(game.legal_actions()) > 1:
                found.append(game.clone())
            game.step(policy.act(SeatView(game)))
            k += 1
    return found[:count]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", default="2,4", help="player counts (default 2,4)")
    parser.add_argument("--positions", type=int, default=20, help="decisions timed per player count (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--options", default="", help="more search options, e.g. value=ppo (default none)")
    args = parser.parse_args(argv)
    extra = dict(parse_spec(f"search:{args.options}")[1]) if args.options else {}
    counts = [int(p) for p in args.players.split(",")]
    print(f"packetrow {packetrow_env.__version__}, numpy {np.__version__}, Python {platform.python_version()}; "
          f"{args.positions} decisions per player count, one wave each{', ' + args.options if extra else ''}\n")
    print("| players | K x C | rollouts a decision | ms a decision | rollouts/s |\n|---:|---|---:|---:|---:|")
    for n in counts:
        games = positions(n, args.positions, args.seed)
        SearchAgent(rollouts=4, determinizations=2, candidates=2).act(SeatView(games[0]))  # compile, load
        for k, c in tqdm(WAVES, desc=f"{n} players", leave=False):
            agent = SearchAgent(seed=args.seed, rollouts=k * c, determinizations=k, candidates=c, **extra)
            spent, done = 0.0, 0
            for game in games:
                start = time.perf_counter()
                agent.act(SeatView(game))
                spent += time.perf_counter() - start
                done += agent.last_rollouts
            print(f"| {n} | {k} x {c} | {done / len(games):.0f} | {spent / len(games) * 1000:.0f} | "
                  f"{done / spent:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
