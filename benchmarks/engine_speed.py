"""Engine and environment speed: random legal playouts through ``Game``, ``raw_env()`` and ``env()``,
plus clone and save/load costs.

Each move asks for ``legal_action_mask()``, picks a uniformly random legal
action with a seeded ``numpy.random.Generator`` and calls ``step`` (so the
per-step time includes the mask). Prints Markdown tables for the README.

    python benchmarks/engine_speed.py                # about a minute
    python benchmarks/engine_speed.py --games 50 --players 2,4
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np

import packetrow_env
from packetrow_env.engine import Game

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    tqdm = None


def parse_players(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--players takes comma-separated counts such as 2,3,4,5, got {text!r}")
    if not counts or any(not 2 <= n <= 5 for n in counts):
        raise argparse.ArgumentTypeError(f"player counts must be 2 to 5, got {text!r}")
    return counts


def playouts(num_players: int, games: int, seed: int, progress) -> dict:
    """Play `games` random games; return the number of games and steps and the seconds spent playing."""
    rng = np.random.default_rng([seed, num_players])
    steps = 0
    elapsed = 0.0
    for g in range(games):
        game = Game.new(num_players, seed=seed * 1_000_003 + g, random_start=True)
        start = time.perf_counter()
        while not game.is_over:
            legal = np.flatnonzero(game.legal_action_mask())
            game.step(legal[rng.integers(len(legal))])
            steps += 1
        elapsed += time.perf_counter() - start
        if progress is not None:
            progress.update(1)
    return {"games": games, "steps": steps, "seconds": elapsed}


def env_playouts(make, num_players: int, games: int, seed: int, progress) -> dict:
    """Random games through a PettingZoo env (agent_iter / last / step, the mask read from the observation)."""
    env = make(num_players=num_players)
    rng = np.random.default_rng([seed, num_players, 2])
    steps = 0
    start = time.perf_counter()
    for g in range(games):
        env.reset(seed=seed * 1_000_003 + g)
        for _ in env.agent_iter():
            observation, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(observation["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            steps += 1
        if progress is not None:
            progress.update(1)
    return {"games": games, "steps": steps, "seconds": time.perf_counter() - start}


def mid_game_positions(num_players: int, seed: int, count: int) -> list[Game]:
    """Positions spread over random games: what clone/to_dict/from_dict see in practice."""
    rng = np.random.default_rng([seed, num_players, 1])
    positions = []
    g = 0
    while len(positions) < count:
        game = Game.new(num_players, seed=seed * 7 + g, random_start=True)
        g += 1
        while not game.is_over:
            if rng.random() < 0.05:
                positions.append(game.clone())
            legal = np.flatnonzero(game.legal_action_mask())
            game.step(legal[rng.integers(len(legal))])
    return positions[:count]


def time_per_call(function, items, repeats: int) -> float:
    """Mean microseconds per call of function(item) over items, repeated."""
    start = time.perf_counter()
    for _ in range(repeats):
        for item in items:
            function(item)
    return (time.perf_counter() - start) / (repeats * len(items)) * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Benchmark the Packet Row engine with random legal playouts (mask + step per move), "
                    "and time clone(), to_dict() and from_dict(). Prints Markdown tables.")
    parser.add_argument("--games", type=int, default=1500,
                        help="random games per player count (default: 1500, about a minute in all)")
    parser.add_argument("--players", type=parse_players, default=[2, 3, 4, 5],
                        help="comma-separated player counts (default: 2,3,4,5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and of the random policy (default: 0)")
    parser.add_argument("--positions", type=int, default=200,
                        help="mid-game positions per player count for the clone/to_dict/from_dict timings "
                             "(default: 200)")
    parser.add_argument("--env-games", type=int, default=300,
                        help="random games per player count through raw_env() and env() (default: 300)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.games < 1 or args.positions < 1 or args.env_games < 1:
        parser.error("--games, --env-games and --positions must be at least 1")

    progress = None
    if tqdm is not None and not args.no_progress:
        progress = tqdm(total=args.games * len(args.players), desc="playouts", unit="game", file=sys.stderr)
    results = {}
    for n in args.players:
        if progress is not None:
            progress.set_postfix(players=n)
        results[n] = playouts(n, args.games, args.seed, progress)
    if progress is not None:
        progress.close()

    progress = None
    if tqdm is not None and not args.no_progress:
        progress = tqdm(total=2 * args.env_games * len(args.players), desc="env playouts", unit="game",
                        file=sys.stderr)
    through = {(name, n): env_playouts(make, n, args.env_games, args.seed, progress)
               for n in args.players for name, make in (("raw_env", packetrow_env.raw_env), ("env", packetrow_env.env))}
    if progress is not None:
        progress.close()

    costs = {}
    for n in args.players:
        positions = mid_game_positions(n, args.seed, args.positions)
        saved = [game.to_dict() for game in positions]
        plain = [json.loads(json.dumps(d)) for d in saved]
        costs[n] = {
            "clone": time_per_call(lambda game: game.clone(), positions, 5),
            "to_dict": time_per_call(lambda game: game.to_dict(), positions, 3),
            "from_dict": time_per_call(Game.from_dict, plain, 2),
            "json": time_per_call(lambda game: Game.from_dict(json.loads(json.dumps(game.to_dict()))), positions, 1),
        }

    print(f"Packet Row engine speed: {args.games} random games per player count, seed {args.seed}; "
          f"Python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, one core")
    print()
    print("| players | games/s | steps/s | steps/game | µs/step (mask + step) |")
    print("|---:|---:|---:|---:|---:|")
    for n in args.players:
        r = results[n]
        print(f"| {n} | {r['games'] / r['seconds']:,.0f} | {r['steps'] / r['seconds']:,.0f} | "
              f"{r['steps'] / r['games']:.1f} | {r['seconds'] / r['steps'] * 1e6:.1f} |")
    print()
    print(f"Through PettingZoo ({args.env_games} random games per player count, tracked observations, "
          "agent_iter/last/step, mask read from the observation):")
    print()
    print("| players | raw_env() steps/s | raw_env() µs/step | env() steps/s | env() µs/step | env() - raw_env() µs |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.players:
        raw, wrapped = through["raw_env", n], through["env", n]
        raw_us, env_us = raw["seconds"] / raw["steps"] * 1e6, wrapped["seconds"] / wrapped["steps"] * 1e6
        print(f"| {n} | {raw['steps'] / raw['seconds']:,.0f} | {raw_us:.1f} | {wrapped['steps'] / wrapped['seconds']:,.0f} "
              f"| {env_us:.1f} | {env_us - raw_us:+.1f} |")
    print()
    print(f"Per call, mean over {args.positions} mid-game positions per player count:")
    print()
    print("| players | clone() µs | to_dict() µs | from_dict() µs | JSON save + load µs |")
    print("|---:|---:|---:|---:|---:|")
    for n in args.players:
        c = costs[n]
        print(f"| {n} | {c['clone']:.1f} | {c['to_dict']:.1f} | {c['from_dict']:.1f} | {c['json']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
