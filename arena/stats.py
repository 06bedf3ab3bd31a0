"""Tournament statistics as small pure functions: intervals, ranks with ties, win shares and ratings."""

from __future__ import annotations

import math
from collections.abc import Sequence

from packetrow_env.scoring import ranks, score_keys  # noqa: F401 - one owner of the R-SCORE-4 order

# openskill's defaults: every entry starts at mu 25, sigma 25/3 (ordinal mu - 3 sigma = 0)
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0


def _check_z(z: float) -> None:
    if not (isinstance(z, (int, float)) and z > 0 and math.isfinite(z)):
        raise ValueError(f"z must be a positive finite number (1.96 for 95%), got {z!r}")


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (low, high) of a proportion; ``successes`` may be fractional (shared wins)."""
    _check_z(z)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer number of trials, got {n!r}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n = {n}, got {successes!r}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # clamp: rounding can push the ends a hair past p (and past [0, 1]) at p = 0 or 1
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def mean_interval(values: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    """(mean, low, high) with the normal interval mean ± z·s/√n (s: sample deviation); nan ends for one value."""
    _check_z(z)
    values = [float(v) for v in values]
    n = len(values)
    if n == 0:
        raise ValueError("mean_interval needs at least one value, got none")
    mean = math.fsum(values) / n
    if n == 1:
        return mean, math.nan, math.nan
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(variance / n)
    return mean, mean - half, mean + half


def win_shares(scores: Sequence[dict]) -> list[float]:
    """Each seat's share of the win: 1/k for each of k winners (a shared win, R-SCORE-4), 0 otherwise."""
    winners = [bool(row["winner"]) for row in scores]
    k = sum(winners)
    if k == 0:
        raise ValueError("scores have no winner; expected final scores from Game.scores()")
    return [1.0 / k if w else 0.0 for w in winners]


def new_rating(mu: float = DEFAULT_MU, sigma: float = DEFAULT_SIGMA) -> tuple[float, float]:
    """A starting rating (mu, sigma)."""
    return float(mu), float(sigma)


def ordinal(rating: tuple[float, float]) -> float:
    """The conservative skill estimate mu - 3·sigma."""
    mu, sigma = rating
    return mu - 3.0 * sigma


def _model():
    # imported lazily: openskill is an optional dependency (the [cli] and [train] extras)
    global _MODEL
    if _MODEL is None:
        try:
            from openskill.models import PlackettLuce
        except ImportError:  # pragma: no cover - depends on the installation
            raise ImportError("ratings need the openskill package: pip install 'packetrow[cli]'") from None
        _MODEL = PlackettLuce()
    return _MODEL


_MODEL = None


def update_ratings(ratings: Sequence[tuple[float, float]], game_ranks: Sequence[float]) -> list[tuple[float, float]]:
    """The (mu, sigma) of each player after one game with these ranks (1 = best, equal ranks tie), Plackett-Luce."""
    if len(ratings) != len(game_ranks):
        raise ValueError(f"got {len(ratings)} ratings but {len(game_ranks)} ranks; need one rank per player")
    if len(ratings) < 2:
        raise ValueError(f"a rated game needs at least 2 players, got {len(ratings)}")
    model = _model()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]
    rated = model.rate(teams, ranks=[float(r) for r in game_ranks])
    return [(float(team[0].mu), float(team[0].sigma)) for team in rated]
