"""The observation paths' speed, best of many short windows: fit for comparing two checkouts on a busy machine.

Measures ``Encoder.encode`` (one game a call), random play through ``raw_env()`` with tracked observations, and
``VectorGame`` at batch 1,024 (4 players): one-hot and compact ``observe``, and mask + pick + step. Each figure is
the best of ``--repeats`` windows, so a process running beside it slows only some windows. To compare two
commits, run it alternately with each checkout's interpreter (e.g. a ``git worktree`` of the older one) and
compare the bests: docs/benchmarks.md ("Env v2 against 0.2.0") does so.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import packetrow_env
from packetrow_env.engine import Game
from packetrow_env.env import raw_env
from packetrow_env.observation import Encoder
from packetrow_env.vector import VectorGame
from packetrow_env.vector.learner import random_legal


def best_of(repeats: int, run) -> float:
    """The shortest of ``repeats`` timings of ``run()``, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def positions(games: int, players: int, every: int = 7) -> list[Game]:
    """Every ``every``-th position of ``games`` random games."""
    rng = np.random.default_rng(0)
    found = []
    for seed in range(games):
        game = Game.new(players, seed=seed)
        for k in range(10_000):
            if game.is_over:
                break
            if k % every == 0:
                found.append(game.clone())
            game.step(int(rng.choice(game.legal_actions())))
    return found


def encode_us(repeats: int, players: int) -> float:
    """µs per ``Encoder.encode`` call (tracked, seat 0) over positions of random games."""
    games = positions(30, players)
    enc = Encoder(games[0].cards)
    return best_of(repeats, lambda: [enc.encode(g, 0, "tracked") for g in games]) / len(games) * 1e6


def raw_env_steps(repeats: int, players: int, games: int = 10) -> float:
    """Steps per second of random play through ``raw_env()`` (tracked observations), ``games`` games a window."""
    env = raw_env(num_players=players)
    rng = np.random.default_rng(0)
    steps = [0]

    def play():
        for g in range(games):
            env.reset(seed=g)
            for _ in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
                steps[0] += 1

    play()
    per_window = steps[0]
    return per_window / best_of(repeats, play)


def batch_ns(repeats: int, batch: int = 1024) -> dict[str, float]:
    """ns per game of ``observe`` (one-hot, compact) and of mask + random pick + step, 4 players."""
    vg = VectorGame(4, seeds=range(batch), autoreset=True)
    rng = np.random.default_rng(0)
    for _ in range(20):
        vg.observe("tracked")
        vg.observe("tracked", encoding="compact")
        vg.step(random_legal(vg.legal_action_mask(), rng))
    return {
        "observe one-hot": best_of(repeats, lambda: vg.observe("tracked")) / batch * 1e9,
        "observe compact": best_of(repeats, lambda: vg.observe("tracked", encoding="compact")) / batch * 1e9,
        "mask + pick + step": best_of(repeats, lambda: vg.step(random_legal(vg.legal_action_mask(), rng)))
        / batch * 1e9,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="windows per figure; the best is kept (default 30)")
    parser.add_argument("--players", type=int, default=4, help="players of the single-game figures (default 4)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or not 2 <= args.players <= 5:
        parser.error("--repeats must be at least 1 and --players from 2 to 5")
    print(f"packetrow {packetrow_env.__version__}, numpy {np.__version__}, Python {platform.python_version()}; "
          f"best of {args.repeats} windows\n")
    print("| figure | value |\n|---|---:|")
    print(f"| Encoder.encode, µs a call ({args.players} players) | {encode_us(args.repeats, args.players):.2f} |")
    print(f"| raw_env() random play, steps/s ({args.players} players) | "
          f"{raw_env_steps(max(3, args.repeats // 6), args.players):,.0f} |")
    for name, value in batch_ns(args.repeats).items():
        print(f"| VectorGame {name}, ns a game (batch 1,024, 4 players) | {value:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
