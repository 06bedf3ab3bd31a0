"""The search agent's strength against thinking time: its win rate against one opponent at several budgets a
move, in duplicate deals (every deal played once per seat assignment, intervals paired by deal), one table.

    python benchmarks/search_strength.py --seconds 0.1,0.3,1 --opponent ppo --games 200 --workers 2
    python benchmarks/search_strength.py --rollouts 140,430,1400 --opponent ppo --games 200 --workers 2

A time budget depends on the machine and on what else runs: give each worker a core of its own (--workers at
most the cores) and say the machine with the figures. A work budget (--rollouts, rollouts a decision) gives
the same games on any machine and under any load; ``benchmarks/search_cost.py`` says how many rollouts a
second of this machine buys.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import numpy as np

import packetrow_env
from packetrow_arena.tournament import run_tournament


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--seconds", default="0.1,0.3,1", help="thinking times a move, comma-separated (default "
                                                               "0.1,0.3,1)")
    budget.add_argument("--rollouts", help="work budgets instead: rollouts a decision, comma-separated")
    parser.add_argument("--options", default="", help="more search options, e.g. belief=posterior (default none)")
    parser.add_argument("--opponent", default="ppo", help="the opponent's agent spec (default ppo, the policy "
                                                          "the search plays on)")
    parser.add_argument("--players", type=int, default=2, help="players a game; the opponent fills the other seats")
    parser.add_argument("--games", type=int, default=200, help="games per thinking time, whole duplicate deals")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals (the same deals at every time)")
    parser.add_argument("--workers", type=int, default=1, help="processes, one core each (default 1)")
    args = parser.parse_args(argv)
    key, text = ("rollouts", args.rollouts) if args.rollouts else ("seconds", args.seconds)
    budgets = [float(s) for s in text.split(",")]
    extra = f",{args.options}" if args.options else ""
    print(f"{datetime.date.today()}, packetrow {packetrow_env.__version__}, numpy {np.__version__}, Python "
          f"{platform.python_version()}, {platform.machine()} with {os.cpu_count()} cores; {args.games} games of "
          f"{args.players} players a row, duplicate deals, seed {args.seed}, {args.workers} workers\n")
    print(f"| {key} a move | search's win rate against `{args.opponent}` [95% CI, paired by deal] | games "
          "| wall time |\n|---:|---|---:|---:|")
    for budget in budgets:
        spec = f"search:{key}={budget:g}{extra}"
        started = time.perf_counter()
        result = run_tournament([spec] + [args.opponent] * (args.players - 1), args.players, args.games,
                                seed=args.seed, workers=args.workers, duplicate=True)
        row = result.table[0]
        print(f"| {budget:g} | {100 * row['win_rate']:.1f}% [{100 * row['win_low']:.1f}, "
              f"{100 * row['win_high']:.1f}] | {row['games']} | {(time.perf_counter() - started) / 60:.1f} min |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
