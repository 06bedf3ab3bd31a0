"""Duplicate deals: every deal played once per seat assignment of the agents, and statistics paired by deal.

A duplicate tournament has as many entries as seats. Deal d is played once under each seat assignment
(``rotations``: entry (s + r) mod n at seat s, n games a deal; ``permutations``: every ordering, n! games a
deal), so the luck of the cards falls on every agent alike. The games of one deal are not independent, so
the statistics first average each entry's result over its deal's games, then put a normal interval on
the mean of those per-deal averages: the deals are the independent samples. The luck that the pairing
cancels no longer widens the interval.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from . import stats

DUPLICATE_MODES = ("rotations", "permutations")


def seat_assignments(num_players: int, mode: str = "rotations") -> list[tuple[int, ...]]:
    """The entry at each seat, per game of a deal: the n rotations, or all n! permutations."""
    if mode == "rotations":
        return [tuple((seat + r) % num_players for seat in range(num_players)) for r in range(num_players)]
    if mode == "permutations":
        return list(itertools.permutations(range(num_players)))
    raise ValueError(f"unknown duplicate mode {mode!r}; allowed: {', '.join(DUPLICATE_MODES)}")


def per_deal_means(records: Sequence[dict], num_entries: int,
                   value: Callable[[dict], Sequence[float]]) -> np.ndarray:
    """float[deals, entries]: each entry's mean of ``value(record)`` (one number per seat) over each deal's games."""
    deals = sorted({record["deal"] for record in records})
    row_of = {deal: i for i, deal in enumerate(deals)}
    sums = np.zeros((len(deals), num_entries))
    counts = np.zeros((len(deals), num_entries))
    for record in records:
        row = row_of[record["deal"]]
        for entry, v in zip(record["entries"], value(record)):
            sums[row, entry] += v
            counts[row, entry] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def paired_interval(per_deal: Sequence[float], z: float = 1.96, low: float = -math.inf,
                    high: float = math.inf) -> tuple[float, float, float]:
    """(mean, low, high) over deals: the normal interval of the per-deal means, clipped to [low, high]."""
    mean, lower, upper = stats.mean_interval(per_deal, z)
    if math.isnan(lower):
        return mean, lower, upper
    return mean, max(low, lower), min(high, upper)


def _wins(record: dict) -> list[float]:
    return stats.win_shares(record["scores"])


def _vps(record: dict) -> list[float]:
    return [row["vp"] for row in record["scores"]]


def _places(record: dict) -> list[float]:
    return stats.ranks(stats.score_keys(record["scores"]))


def paired_columns(records: Sequence[dict], num_entries: int, num_players: int, z: float = 1.96) -> list[dict]:
    """Per entry: deals, and win rate, mean VP and mean rank with intervals paired by deal (tournament columns)."""
    wins = per_deal_means(records, num_entries, _wins)
    vps = per_deal_means(records, num_entries, _vps)
    places = per_deal_means(records, num_entries, _places)
    columns = []
    for e in range(num_entries):
        win_rate, win_low, win_high = paired_interval(wins[:, e], z, 0.0, 1.0)
        if len(wins) > 1 and win_low == win_high:
            # every deal scored alike (e.g. all won): a zero spread says nothing about the next deal, so the
            # interval is Wilson's over the deals, each deal one trial of its mean
            win_low, win_high = stats.wilson_interval(win_rate * len(wins), len(wins), z)
        mean_vp, vp_low, vp_high = paired_interval(vps[:, e], z)
        mean_rank, rank_low, rank_high = paired_interval(places[:, e], z, 1.0, float(num_players))
        columns.append({"deals": len(wins), "win_rate": win_rate, "win_low": win_low, "win_high": win_high,
                        "mean_vp": mean_vp, "vp_low": vp_low, "vp_high": vp_high,
                        "mean_rank": mean_rank, "rank_low": rank_low, "rank_high": rank_high})
    return columns
