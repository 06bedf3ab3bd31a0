"""The search's mirror-descent update: a policy over the candidate actions from the rollouts' paired rewards.

The update is magnetic mirror descent's closed form for the negative-entropy mirror map (Sokota et al., "A
unified approach to reinforcement learning, quantal response equilibria, and two-player zero-sum games", ICLR
2023; the update that MMD-search reproduces at decision time, Sokota et al., ICLR 2024)::

    pi'(a)  proportional to  [pi(a) * rho(a)^(alpha*eta) * exp(eta * Q(a))]^(1 / (1 + alpha*eta))

the maximiser of eta * <p, Q> - alpha * eta * KL(p || rho) - KL(p || pi) over distributions p: a step of size
eta towards the actions that Q favours, held near the policy pi by the KL term and pulled towards the magnet rho
by alpha. Adding a constant to Q leaves pi' unchanged, so Q may be any baseline's advantages.

Q comes from the rollouts (``advantages``): each candidate's mean reward gain over the policy's favourite, paired
by determinisation, shrunk towards 0 by the factor d^2 / (d^2 + s^2), where d is the mean gain and s its standard
error (the posterior mean of a normal gain under a normal prior of scale ``abs(d)``): a gain of one standard error
counts half, one far inside its noise almost nothing, and one from a single deal (no standard error) nothing.
Noise therefore moves the policy little, and more rollouts let the same gain move it more.
"""

from __future__ import annotations

import math

import numpy as np


def mirror_descent_policy(policy: np.ndarray, q: np.ndarray, eta: float, alpha: float = 0.0,
                          magnet: np.ndarray | None = None) -> np.ndarray:
    """float[C]: the mirror-descent update of ``policy`` (float[C], non-negative, summing to 1) by the action
    values ``q`` (float[C]) with step ``eta`` >= 0, magnet weight ``alpha`` >= 0 and magnet ``magnet`` (float[C],
    a distribution; None: uniform). eta = 0 returns ``policy``; as eta grows (alpha = 0) the mass goes to the
    best ``q`` among the actions ``policy`` gives mass. An action with no mass under ``policy`` keeps none unless
    the magnet gives it mass and alpha > 0."""
    policy = np.asarray(policy, np.float64)
    q = np.asarray(q, np.float64)
    magnet = np.full(len(policy), 1.0 / len(policy)) if magnet is None else np.asarray(magnet, np.float64)
    with np.errstate(divide="ignore"):  # log 0 = -inf: no mass stays no mass
        log_policy, log_magnet = np.log(policy), np.log(magnet)
    weight = alpha * eta
    if weight > 0:
        logits = (log_policy + weight * log_magnet + eta * q) / (1 + weight)
    else:  # alpha * eta = 0: the magnet has no weight, and 0 * log 0 must not make a nan
        logits = log_policy + eta * q
    logits = np.where(np.isfinite(logits), logits, -np.inf)
    logits -= logits.max()
    weights = np.exp(logits)
    return weights / weights.sum()


def advantages(rewards: np.ndarray) -> np.ndarray:
    """float[C]: each candidate's mean reward gain over candidate 0 in ``rewards`` (float[deals, C], one row a
    determinisation, every candidate played in every deal), shrunk by d^2 / (d^2 + s^2) (see the module);
    0 for candidate 0 and for every candidate when there is one deal."""
    gains = rewards - rewards[:, :1]
    mean = gains.mean(axis=0)
    if len(gains) < 2:
        return np.zeros(gains.shape[1])
    error2 = gains.var(axis=0, ddof=1) / len(gains)
    square = mean * mean
    with np.errstate(invalid="ignore"):  # 0 / 0 where a candidate ties the favourite on every deal
        return np.where(square > 0, mean * square / (square + error2), 0.0)


def check_step(key: str, value) -> float:
    """``value`` as a float if it is a non-negative finite number, else a ValueError naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not 0 <= value < math.inf:
        raise ValueError(f"{key} must be a non-negative finite number, got {value!r}")
    return float(value)


__all__ = ["advantages", "check_step", "mirror_descent_policy"]
