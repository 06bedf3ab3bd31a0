"""Time per move of the heuristic: HeuristicAgent game by game against the compiled heuristic_actions over a batch.

Positions are mid-game (the clock ``scoring.deck_left`` between 0.25 and 0.75) from random legal play, of 2
and of 4 players. The agent is timed as self-play used to move it, ``act(SeatView(game, seat, mode))``, both on
a ready ``Game`` and with the ``VectorGame.game(i)`` copy that PoolOpponents made per move; the kernel as
PoolOpponents calls it (the rows' masks given), for batches of 1 to 1024 rows, in microseconds per move (best
of 3 runs). The first call's cost (compilation) is measured in fresh processes, with an empty numba cache and
with it filled. Prints Markdown tables with the date, the machine, the versions and the load average.

    python benchmarks/heuristic_speed.py                     # about a minute
    python benchmarks/heuristic_speed.py --positions 256 --batches 1,256 --note "a training run held one core"
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from packetrow_agents.heuristic import HeuristicAgent
from packetrow_agents.heuristic_batch import heuristic_actions
from packetrow_env.engine import Game
from packetrow_env.knowledge import MODES
from packetrow_env.scoring import deck_left
from packetrow_env.seat_view import SeatView
from packetrow_env.vector import VectorGame
from packetrow_env.vector.learner import random_legal


def _ints(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 1,64,256, got {text!r}")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def mid_game_positions(num_players: int, count: int, seed: int) -> list[Game]:
    """``count`` mid-game positions (deck_left in [0.25, 0.75], a game not over) from random legal play."""
    rng = np.random.default_rng(seed)
    vg = VectorGame(num_players, seeds=range(seed, seed + 256), autoreset=True)
    found: list[Game] = []
    while len(found) < count:
        vg.step(random_legal(vg.legal_action_mask(), rng))
        for i in np.flatnonzero(rng.random(vg.num_games) < 0.02).tolist():  # a few positions per game
            if vg.is_over[i]:
                continue
            game = vg.game(i)
            if 0.25 <= deck_left(game.state, game.cards) <= 0.75:
                found.append(game)
    return found[:count]


def best_of(fn, moves: int, repeat: int = 3) -> float:
    """Microseconds per move: the best of ``repeat`` runs of fn() making ``moves`` moves."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best / moves * 1e6


def python_times(games: list[Game], mode: str) -> tuple[float, float]:
    """(µs per move of HeuristicAgent.act on a SeatView of a ready Game; the same with VectorGame.game(i) first)."""
    agent = HeuristicAgent(seed=0)
    vg = VectorGame.from_games(games)
    seats = [g.current_player for g in games]

    def ready():
        for g, seat in zip(games, seats):
            agent.act(SeatView(g, seat, mode))

    def copied():
        for i, seat in enumerate(seats):
            agent.act(SeatView(vg.game(i), seat, mode))

    return best_of(ready, len(games)), best_of(copied, len(games))


def kernel_time(games: list[Game], batch: int, mode: str, moves: int) -> float:
    """µs per move of heuristic_actions over ``batch`` rows at a time (about ``moves`` moves per run)."""
    vg = VectorGame.from_games(games)
    rng = np.random.default_rng(0)
    groups = [np.arange(start, start + batch) % len(games) for start in range(0, len(games), batch)]
    masks = [vg.legal_action_mask()[rows] for rows in groups]
    calls = max(1, moves // batch)
    heuristic_actions(vg, groups[0], mode, rng, 0.0, masks[0])  # compiled (or loaded from the cache) first

    def run():
        for k in range(calls):
            j = k % len(groups)
            heuristic_actions(vg, groups[j], mode, rng, 0.0, masks[j])

    return best_of(run, calls * batch)


FIRST_CALL = """
import time
import numpy as np
from packetrow_env.vector import VectorGame
vg = VectorGame(4, seeds=range(8))
start = time.perf_counter()
from packetrow_agents.heuristic_batch import heuristic_actions
heuristic_actions(vg, np.arange(8), "tracked", 0)
print(time.perf_counter() - start)
"""


def first_call() -> tuple[float, float]:
    """Seconds of the first heuristic_actions call (with its import) in a fresh process: empty numba cache, filled."""
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, NUMBA_CACHE_DIR=folder)
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, capture_output=True, text=True,
                                 check=True)
            runs.append(float(out.stdout.strip().splitlines()[-1]))
        return runs[0], runs[1]


def machine() -> str:
    """The CPU model and core count."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=1024, help="mid-game positions per player count")
    parser.add_argument("--batches", type=_ints, default=[1, 64, 256, 1024], help="kernel batch sizes")
    parser.add_argument("--players", type=_ints, default=[2, 4], help="player counts")
    parser.add_argument("--mode", choices=MODES, default="tracked", help="the observation mode the seats read")
    parser.add_argument("--moves", type=int, default=20000, help="kernel moves per timed run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--note", default="", help="a word on the machine's load, for the caption")
    parser.add_argument("--no-compile", action="store_true", help="skip the first-call measurement")
    args = parser.parse_args()
    if args.positions < 1 or args.moves < 1:
        parser.error("--positions and --moves must be positive")

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"Heuristic speed, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC: {machine()}; "
          f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}; load average "
          f"{load}{'; ' + args.note if args.note else ''}. Mode {args.mode}, {args.positions} mid-game positions "
          "per player count; microseconds per move, best of 3.\n")
    print("| players | batch | heuristic_actions | HeuristicAgent.act | with VectorGame.game(i) "
          "| speed-up over game(i) + act |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.players:
        games = mid_game_positions(n, args.positions, args.seed + n)
        ready, copied = python_times(games, args.mode)
        for batch in args.batches:
            kernel = kernel_time(games, batch, args.mode, args.moves)
            print(f"| {n} | {batch} | {kernel:.2f} | {ready:.0f} | {copied:.0f} | {copied / kernel:.0f}x |")
    if not args.no_compile:
        cold, warm = first_call()
        print(f"\nFirst call in a fresh process (import and call, 8 games): {cold:.1f} s with an empty numba cache "
              f"(compiles), {warm:.2f} s with it filled.")


if __name__ == "__main__":
    main()
