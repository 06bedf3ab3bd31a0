"""Magnetic mirror descent (MMD) for the PPO update: what a config's ``mmd`` section means (the magnet, the
annealing of its weight, the weight of the step toward the previous policy), checked and loaded.

MMD (Sokota et al., ICLR 2023; as benchmarked by Rudolph, Sokota et al., ICLR 2026) is PPO's loss plus

    magnet_coef(t) * KL(pi || magnet)  +  kl_coef * KL(pi || pi_old)

The first pulls the policy toward a fixed "magnet" policy: with the magnet uniform over each row's legal actions
it is log(legal actions) minus the policy's entropy, an entropy bonus (what the paper's code does); with a reference
policy (a ``.npz`` export) it keeps the learner near that policy. The second is the mirror-descent step toward the
previous policy, pi_old being the policy that collected the rollout (the weights before the update; with the
pipeline, one update older). The two terms are computed in train/ppo_update.py (``magnet_kl``, ``previous_kl``).
This module needs no torch, so that configs are checked without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from packetrow_agents.policy import ModelFormatError, ModelNotFoundError, NumpyPolicy, load_policy
from packetrow_agents.registry import parse_spec
from packetrow_env.actions import NUM_ACTIONS
from packetrow_env.compact_observation import encoder_for

UNIFORM = "uniform"  # the magnet uniform over each row's legal actions
SCHEDULES = ("constant", "linear", "geometric")


@dataclass(frozen=True)
class MMD:
    """The MMD terms of a run: the magnet (None: uniform over legal actions), its weight's schedule from
    ``magnet_coef`` at the start to ``magnet_coef_end`` at the end of the run, and ``kl_coef``."""

    magnet: NumpyPolicy | None
    magnet_coef: float
    magnet_coef_end: float
    schedule: str
    kl_coef: float

    def coef(self, progress_remaining: float) -> float:
        """The magnet's weight with ``progress_remaining`` of the run left (SB3's: 1 at the start, 0 at the end)."""
        done = 1.0 - progress_remaining
        if self.schedule == "linear":
            return self.magnet_coef + (self.magnet_coef_end - self.magnet_coef) * done
        if self.schedule == "geometric":
            return self.magnet_coef * (self.magnet_coef_end / self.magnet_coef) ** done
        return self.magnet_coef


def load_magnet(spec: str, observation_mode: str, observation_encoding: str) -> NumpyPolicy | None:
    """The magnet a config names: None for ``uniform``, else the policy of a ``ppo`` agent spec (``ppo``: the
    shipped policy; ``ppo:path=run/model.npz``), which must read the run's observations (its mode, encoding and
    size) and choose among the env's actions. A ValueError says what is wrong."""
    if spec == UNIFORM:
        return None
    allowed = (f"magnet must be {UNIFORM!r} or a policy export as a ppo agent spec (ppo: the shipped policy, "
               f"ppo:path=runs/NAME/model.npz), got {spec!r}")
    try:
        name, options = parse_spec(spec)
    except ValueError as error:
        raise ValueError(f"{allowed}: {error}") from None
    if name != "ppo" or set(options) - {"path"}:
        raise ValueError(allowed)
    path = options.get("path")
    try:
        policy = load_policy(path)
    except (ModelNotFoundError, ModelFormatError) as error:
        raise ValueError(f"magnet {spec!r}: {error}") from None
    size = encoder_for(observation_encoding).size_of(observation_mode)
    found = (policy.observation_mode, policy.observation_encoding, policy.observation_size, policy.num_actions)
    wanted = (observation_mode, observation_encoding, size, NUM_ACTIONS)
    if found != wanted:
        raise ValueError(f"magnet {spec!r} reads {found[0]} {found[1]} observations of {found[2]} floats and "
                         f"has {found[3]} actions; the run trains on {wanted[0]} {wanted[1]} observations of "
                         f"{wanted[2]} floats with {wanted[3]} actions (env.observation_mode, "
                         "env.observation_encoding): name a policy trained on the same observations, or uniform")
    return policy


def check_coefficients(magnet_coef: float, magnet_coef_end: float, schedule: str, kl_coef: float) -> None:
    """A ValueError naming the key unless the coefficients and schedule are usable."""
    for key, value in (("magnet_coef", magnet_coef), ("magnet_coef_end", magnet_coef_end), ("kl_coef", kl_coef)):
        if not (value >= 0 and math.isfinite(value)):
            raise ValueError(f"{key} must be a finite number >= 0, got {value!r}")
    if schedule not in SCHEDULES:
        raise ValueError(f"magnet_schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    if schedule == "geometric" and not (magnet_coef > 0 and magnet_coef_end > 0):
        raise ValueError(f"magnet_schedule geometric needs magnet_coef and magnet_coef_end > 0, got {magnet_coef!r} "
                         f"and {magnet_coef_end!r} (use linear to reach 0)")


def mmd_of(config) -> MMD | None:
    """The MMD of a training config's ``mmd`` section (None when it is not enabled), its magnet loaded for the
    config's observations; a ValueError for bad values."""
    section = config.mmd
    if not section.enabled:
        return None
    check_coefficients(section.magnet_coef, section.magnet_coef_end, section.magnet_schedule, section.kl_coef)
    return MMD(load_magnet(section.magnet, config.env.observation_mode, config.env.observation_encoding),
               section.magnet_coef, section.magnet_coef_end, section.magnet_schedule, section.kl_coef)
