"""How much narrower duplicate deals make a tournament's intervals than plain seat rotation, per matchup.

For each matchup this plays the same number of games twice with the same seed: once seat-rotated (the
default tournament) and once with duplicate deals (every deal under every seat rotation). For the first
agent of each matchup it measures two things per game, its share of the win and its VP margin (its VP
minus the mean VP of the others), and puts the same normal interval on both runs: over games for the
rotation, over the deals' means for the duplicate deals (``packetrow_arena.duplicate_deals``); a plain
rotation's deals are its games, so one function does both. It prints both intervals, the ratio of their
widths and the seconds, as a Markdown table for docs/evaluation.md.

    python benchmarks/duplicate_variance.py --games 400 --search-games 40
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

from packetrow_env import __version__
from packetrow_arena import stats
from packetrow_arena.duplicate_deals import per_deal_means
from packetrow_arena.tournament import positive_int as positive
from packetrow_arena.tournament import run_tournament

# (agents, players, uses search): search matchups play fewer games, ISMCTS at a fixed iteration budget
MATCHUPS = [
    (["ppo", "heuristic"], 2, False),
    (["ppo", "heuristic", "heuristic", "heuristic"], 4, False),
    (["heuristic", "random"], 2, False),
    (["heuristic", "random", "random"], 3, False),
    (["ppo", "ismcts:iters=20"], 2, True),
]


def _margins(record: dict) -> list[float]:
    vps = [row["vp"] for row in record["scores"]]
    return [vp - (sum(vps) - vp) / (len(vps) - 1) for vp in vps]


def _wins(record: dict) -> list[float]:
    return stats.win_shares(record["scores"])


def intervals(agents: list[str], players: int, games: int, seed: int, duplicate: bool) -> tuple[list, float]:
    """The first agent's (mean, low, high) of win share and VP margin, per deal, and the seconds played."""
    start = time.perf_counter()
    result = run_tournament(agents, players, games, seed=seed, progress=False, duplicate=duplicate)
    seconds = time.perf_counter() - start
    return [stats.mean_interval(per_deal_means(result.records, players, value)[:, 0])
            for value in (_wins, _margins)], seconds


def _text(interval, scale: float, digits: int) -> str:
    mean, low, high = (scale * x for x in interval)
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _ratio(paired, plain) -> str:
    width = plain[2] - plain[1]
    return f"{(paired[2] - paired[1]) / width:.2f}" if width > 0 else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=positive, default=400, help="games per tournament without search")
    parser.add_argument("--search-games", type=positive, default=40, help="games per tournament with ISMCTS")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{datetime.date.today()}, packetrow {__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, seed {args.seed}")
    print()
    print("| matchup (first agent's results) | players | games | win % rotation [95% CI] | win % duplicate "
          "[95% CI] | width ratio | VP margin rotation [95% CI] | VP margin duplicate [95% CI] | width ratio "
          "| seconds |")
    print("|---|---:|---:|---|---|---:|---|---|---:|---:|")
    total = 0.0
    for agents, players, search in MATCHUPS:
        games = args.search_games if search else args.games
        games -= games % players  # whole deals
        (plain_wins, plain_margin), plain_time = intervals(agents, players, games, args.seed, False)
        (paired_wins, paired_margin), paired_time = intervals(agents, players, games, args.seed, True)
        total += plain_time + paired_time
        print(f"| {' vs '.join(dict.fromkeys(agents))} | {players} | {games} | {_text(plain_wins, 100, 1)} "
              f"| {_text(paired_wins, 100, 1)} | {_ratio(paired_wins, plain_wins)} | {_text(plain_margin, 1, 2)} "
              f"| {_text(paired_margin, 1, 2)} | {_ratio(paired_margin, plain_margin)} "
              f"| {plain_time + paired_time:.0f} |", flush=True)
    print()
    print(f"total {total:.0f} s")


if __name__ == "__main__":
    main()
