"""Scoring facts every part asks here: banker points (R-SCORE-3), ranks and rank rewards (R-SCORE-4), the clock.

One owner each: the engine scores with ``banker_points``, the env and the tournaments rank with ``ranks`` and
``final_rewards``, and the agents' evaluations read the same functions, so a rule is changed in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .state import END_THRESHOLD

REWARD_MODES = ("rank", "win", "vp")


def banker_points(cash: Sequence[int]) -> list[int]:
    """VP per banker for each seat, from every seat's cash (R-SCORE-3)."""
    n = len(cash)
    top = max(cash)
    if n <= 3:
        return [2 if c == top else 0 for c in cash]
    leaders = sum(c == top for c in cash)
    if leaders > 1:
        return [3 if c == top else 0 for c in cash]
    second = max(c for c in cash if c != top)
    return [3 if c == top else 1 if c == second else 0 for c in cash]


def banker_points_batch(cash: np.ndarray, num_players: np.ndarray) -> np.ndarray:
    """``banker_points`` of many games at once: cash int[B, 5] (seats past num_players ignored) -> int[B, 5]."""
    seats = np.arange(cash.shape[1]) < np.asarray(num_players)[:, None]
    cash = np.where(seats, cash, -1)  # absent seats lead nothing; cash is never negative
    top = cash.max(axis=1, keepdims=True)
    leaders = (cash == top).sum(axis=1, keepdims=True)
    second = np.where(cash == top, -1, cash).max(axis=1, keepdims=True)
    many = np.asarray(num_players)[:, None] > 3
    per = np.where(cash == top, np.where(many, 3, 2), np.where(many & (leaders == 1) & (cash == second), 1, 0))
    return np.where(seats, per, 0)


def leader_banker_points(num_players: int) -> int:
    """VP per banker for the sole cash leader of a game with ``num_players`` seats (R-SCORE-3)."""
    return banker_points([1] + [0] * (num_players - 1))[0]


def score_keys(scores: Sequence[dict]) -> list[tuple[int, int]]:
    """The R-SCORE-4 ordering key per seat: (VP, cash), higher is better."""
    return [(int(row["vp"]), int(row["cash"])) for row in scores]


def ranks(keys: Sequence) -> list[float]:
    """Rank per player from comparable keys (higher is better): 1 = best, ties share the mean of their places."""
    if len(keys) == 0:
        raise ValueError("ranks needs at least one key, got none")
    order = sorted(keys, reverse=True)
    result = []
    for key in keys:
        places = [place for place, other in enumerate(order, start=1) if other == key]
        result.append(sum(places) / len(places))
    return result


def rank_rewards(scores: Sequence[dict]) -> list[float]:
    """Per seat: +1 first .. -1 last, linear in the R-SCORE-4 rank, ties sharing the mean of their places.

    This equals the mean over opponents of +1 / 0 / -1 (beat, tied with, lost to).
    """
    n = len(scores)
    return [1.0 - 2.0 * (rank - 1) / (n - 1) for rank in ranks(score_keys(scores))]


def final_rewards(scores: list[dict], reward_mode: str) -> list[float]:
    """Terminal reward per seat (R-SCORE-4 order): rank (+1 first .. -1 last, ties share), win, or vp."""
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode must be one of {', '.join(map(repr, REWARD_MODES))}, got {reward_mode!r}")
    n = len(scores)
    if reward_mode == "win":
        return [1.0 if row["winner"] else 0.0 for row in scores]
    if reward_mode == "vp":
        total = sum(row["vp"] for row in scores)
        return [row["vp"] - (total - row["vp"]) / (n - 1) for row in scores]
    return rank_rewards(scores)


def final_rewards_batch(vp: np.ndarray, cash: np.ndarray, num_players: np.ndarray, reward_mode: str) -> np.ndarray:
    """``final_rewards`` of many finished games: vp and cash int[B, 5] -> float32[B, 5] (zeros past num_players)."""
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode must be one of {', '.join(map(repr, REWARD_MODES))}, got {reward_mode!r}")
    n = np.asarray(num_players)[:, None]
    seats = np.arange(vp.shape[1]) < n
    if reward_mode == "vp":
        total = np.where(seats, vp, 0).sum(axis=1, keepdims=True)
        out = vp - (total - vp) / (n - 1)
    else:
        key = np.where(seats, vp.astype(np.int64) * (1 << 32) + cash, -1)  # the R-SCORE-4 order (VP, then cash)
        if reward_mode == "win":
            out = key == key.max(axis=1, keepdims=True)
        else:  # rank: the mean over opponents of +1 / 0 / -1, as rank_rewards
            beats = np.sign(key[:, :, None] - key[:, None, :]) * seats[:, None, :]
            out = beats.sum(axis=2) / (n - 1)
    return np.where(seats, out, 0).astype(np.float32)


# per player count: the index of the clock's deck among the decks sorted by the share left (deck_left); internal
# API: compiled kernels that compute deck_left themselves (opponents_batch) index with it
CLOCK_DECK = np.array([END_THRESHOLD.get(n, 1) - 1 for n in range(max(END_THRESHOLD) + 1)], dtype=np.int64)


def deck_left(state, cards) -> float:
    """The game clock: the share of its full deck left in the board that ends the game first (R-END-1), 1 to 0.

    The game ends when END_THRESHOLD boards are exhausted, so the threshold-th emptiest deck is the clock.
    (The catalogue's deck sizes, not deck_end: a loaded game's deck_end counts only the cards left.)
    """
    left = np.sort((state.deck_end - state.deck_top) / np.maximum(1, cards.deck_sizes))
    return float(left[END_THRESHOLD[state.num_players] - 1])


TIME_SCALE = 1.5  # time_left: the clock's weight on unfinished plans runs at 1 until a third of the deck is gone


def time_left(state, cards, floor: float) -> float:
    """The clock as the agents weigh unfinished plans: TIME_SCALE x ``deck_left``, clipped to [floor, 1]."""
    return min(1.0, max(floor, TIME_SCALE * deck_left(state, cards)))


def deck_left_batch(deck_top: np.ndarray, deck_end: np.ndarray, num_players: np.ndarray, cards) -> np.ndarray:
    """``deck_left`` of many games: deck_top and deck_end int[B, 4], num_players int[B] -> float64[B]."""
    left = (deck_end.astype(np.int64) - deck_top) / np.maximum(1, cards.deck_sizes)
    left.sort(axis=1)
    return left[np.arange(len(left)), CLOCK_DECK[num_players]]


def time_left_batch(deck_top: np.ndarray, deck_end: np.ndarray, num_players: np.ndarray, cards,
                    floor: float) -> np.ndarray:
    """``time_left`` of many games (the same arithmetic, so the same float64 values): float64[B]."""
    return np.minimum(1.0, np.maximum(floor, TIME_SCALE * deck_left_batch(deck_top, deck_end, num_players, cards)))


__all__ = ["CLOCK_DECK", "REWARD_MODES", "banker_points", "banker_points_batch", "deck_left", "deck_left_batch",
           "final_rewards", "final_rewards_batch", "leader_banker_points", "rank_rewards", "ranks", "score_keys",
           "time_left", "time_left_batch"]
