"""Batched observations (``vector.observe.BatchEncoder``) against the single engine's ``Encoder.encode``.

Positions are every position of random legal games (4 players unless --players says otherwise), packed into
batches of each size by drawing positions at random; each game is observed by its player to act. Prints a
Markdown table: CPU nanoseconds per game (best of five) by mode and batch size, and the Encoder's time per game on the same positions. The first call's cost (numba compiling, or loading its cache) is printed first.

    python benchmarks/vector_observe.py
    python benchmarks/vector_observe.py --players 2,3,4,5 --sizes 1,1024 --repeat 200
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from packetrow_env.engine import Game
from packetrow_env.observation import MODES, encoder
from packetrow_env.vector.batch import from_games
from packetrow_env.vector.observe import BatchEncoder


def ints(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")


def positions(players: list[int], games: int, seed: int) -> list[Game]:
    """Every position before each move of ``games`` random games per player count (finished ones left out)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in players:
        for g in range(games):
            game = Game.new(n, seed=seed * 1000 + g)
            while not game.is_over:
                out.append(game.clone())
                game.step(int(rng.choice(game.legal_actions())))
    return out


def per_game_ns(call, games: int, repeat: int, trials: int = 5) -> float:
    """Best of ``trials`` timings of ``repeat`` calls, in CPU nanoseconds per game (process time: this
    single thread's own work, not the time other processes on a busy machine take from it)."""
    best = float("inf")
    for _ in range(trials):
        start = time.process_time()
        for _ in range(repeat):
            call()
        best = min(best, time.process_time() - start)
    return best / repeat / games * 1e9


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=ints, default=[4], help="player counts, e.g. 2,3,4,5 (default 4)")
    parser.add_argument("--games", type=int, default=8, help="random games per player count for the positions")
    parser.add_argument("--sizes", type=ints, default=[1, 16, 256, 1024, 4096], help="batch sizes")
    parser.add_argument("--work", type=int, default=200_000, help="games encoded per timing (sets the repeats)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    pool = positions(args.players, args.games, args.seed)
    rng = np.random.default_rng(args.seed)
    print(f"{len(pool)} positions of {args.players}-player random games; {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, one thread\n")

    start = time.perf_counter()
    first = BatchEncoder(None, "tracked")
    first.encode(from_games(pool[:1]), np.array([pool[0].current_player]), np.empty((1, first.size), np.float32))
    print(f"first call (compiling, or loading numba's cache): {time.perf_counter() - start:.2f} s\n")

    enc = encoder()
    sample = [pool[i] for i in rng.integers(len(pool), size=2000)]
    single = {}
    for mode in MODES:
        single[mode] = per_game_ns(lambda: [enc.encode(g, g.current_player, mode) for g in sample], len(sample), 1)

    rows = []
    for size in args.sizes:
        games = [pool[i] for i in rng.integers(len(pool), size=size)]
        batch = from_games(games)
        seats = np.array([g.current_player for g in games], dtype=np.int64)
        cells = []
        for mode in MODES:
            batch_encoder = BatchEncoder(None, mode)
            out = np.zeros((size, batch_encoder.size), np.float32)
            repeat = max(1, args.work // size)
            cells.append(per_game_ns(lambda: batch_encoder.encode(batch, seats, out), size, repeat))
        rows.append((size, cells))

    print("| batch | " + " | ".join(f"{m} ns/game" for m in MODES) + " |")
    print("|---:|" + "---:|" * len(MODES))
    for size, cells in rows:
        print(f"| {size} | " + " | ".join(f"{c:,.0f}" for c in cells) + " |")
    print("| Encoder.encode (one game a call) | " + " | ".join(f"{single[m]:,.0f}" for m in MODES) + " |")


if __name__ == "__main__":
    main()
