"""What a training run uses of the machine: the rollout workers' count and the PPO update's torch device and
arithmetic.

``workers: auto`` is the machine's cores minus one (the update's), at least one; ``device: auto`` is CUDA where
torch finds a CUDA device, else the CPU; ``precision: auto`` is bfloat16 where that device computes it natively,
else float32. Nothing needs a GPU: the env, the rollouts and the exported policies stay on the CPU, and only the
update runs on ``device``.
"""

from __future__ import annotations

import os
import sys

import torch

from . import rollout_process
from .config import ConfigError


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this system (macOS, Windows)
        return os.cpu_count() or 1


def rollout_workers(config) -> int:
    """The rollout processes of a checked TrainConfig: its ``workers``, where "auto" is the usable cores minus
    one, at least 1 and at most ``env.n_envs``; 1 without the pipeline (its one collector is the trainer) and
    where processes cannot be forked (a count above 1 then says so on stderr)."""
    if not config.pipeline:
        return 1
    if not rollout_process.available():  # no fork: the pipeline's one thread collects (rollout_process.available)
        if config.workers != "auto" and config.workers > 1:
            print(f"(workers: {config.workers} asked, but rollout processes need fork (Linux) here: the pipeline "
                  "collects on one thread)", file=sys.stderr)
        return 1
    if config.workers == "auto":
        return max(1, min(usable_cores() - 1, config.env.n_envs))
    return config.workers


def update_device(device: str) -> torch.device:
    """The torch device of the PPO update for the config's ``device`` (auto | cpu | cuda); ConfigError for cuda
    where torch finds none, before anything is written."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        built = "built without CUDA" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        raise ConfigError(f"device 'cuda': torch {torch.__version__} ({built}) finds no CUDA device on this "
                          "machine; use device: cpu, or auto (CUDA where there is one, else the CPU)")
    return torch.device(device)


def native_bf16(device: torch.device) -> bool:
    """Whether ``device`` computes bfloat16 matrix products natively: a CPU with AVX512-BF16 or AMX (as torch's
    CPU module reports them), a CUDA device that torch says supports bfloat16."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")  # torch.cpu's own; one torch lacks is a no
    return any(getattr(torch.cpu, probe, lambda: False)() for probe in probes)


def update_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype of the PPO update's hidden layers for the config's ``precision`` (auto | fp32 | bf16) on
    ``device``: torch.bfloat16, or None for float32 throughout."""
    if precision == "bf16" or (precision == "auto" and native_bf16(device)):
        return torch.bfloat16
    return None
