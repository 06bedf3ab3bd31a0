"""Training's scaling with the machine: learner steps/s of the main job against rollout workers and the update's
device and precision, and the time to 65% in 4-player games against three heuristics. One command, one time limit.

Each throughput line is one ``train()`` run of ``configs/quick.yaml`` (pipeline on, evaluations, checkpoints and
logs off) for ``--steps`` learner steps with ``workers`` rollout processes (1, 2, 4, 8, 16 up to the usable
cores; ``--workers`` to choose) and the update on each device of ``--devices`` (cuda only where torch finds one)
in each precision of ``--precisions`` (fp32, and bf16 where the device computes it natively); the rate is learner
steps over ``train()``'s wall time, setup and forks included. Then one run with the fastest setting evaluates
every ``--eval-every`` learner steps (``--eval-games`` 4-player games against three heuristics, seat-rotated) and
stops at 65% or at the first evaluation past the time limit. Runs that would start past ``--limit`` seconds are
skipped and say so. Writes a Markdown table (``--out``, and stdout).

    python benchmarks/training_scaling.py --help
    python benchmarks/training_scaling.py --limit 420 --out scaling.md     # a 16-core machine with a GPU
    python benchmarks/training_scaling.py --steps 100000 --workers 1 2 --limit 600
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from tqdm import tqdm

from packetrow_train.config import config_from_dict
from packetrow_train.machine import native_bf16, usable_cores
from packetrow_train.selfplay import train

QUICK = Path(__file__).resolve().parent.parent / "configs" / "quick.yaml"
TARGET = 0.65  # the 4-player win rate against three heuristics to reach


def quick(steps: int, workers: int, device: str, **top) -> dict:
    """configs/quick.yaml for a measured run: ``steps`` learner steps, pipeline on, nothing else written."""
    data = yaml.safe_load(QUICK.read_text())
    data.update(total_timesteps=steps, pipeline=True, workers=workers, device=device, **top)
    data["eval"].update(every=0, final_games=0)
    data["checkpoint"]["every"] = 0
    data["log"].update(tensorboard=False, progress_bar=False)
    return data


def rate(data: dict) -> float:
    """Learner steps per second of one training run of ``data``."""
    with tempfile.TemporaryDirectory() as out:
        result = train(config_from_dict(data, "scaling"), out=out, progress_bar=False)
    return result.model.num_timesteps / result.wall_seconds


def time_to_target(data: dict, every: int, games: int, deadline: float) -> tuple[float | None, float, int]:
    """(seconds of training to the first evaluation at or above TARGET or None, the best win rate seen, the
    learner steps trained) of a run evaluated every ``every`` steps; it stops at TARGET or at ``deadline``."""
    data["eval"].update(every=every, games=games, num_players=[4], opponents=["heuristic"])
    best, reached = 0.0, None

    def stop(rows) -> bool:
        nonlocal best, reached
        win = rows[0]["win_rate"]
        best = max(best, win)
        if win >= TARGET and reached is None:
            reached = rows[0]["train_seconds"]
        return reached is not None or time.monotonic() > deadline

    with tempfile.TemporaryDirectory() as out:
        result = train(config_from_dict(data, "scaling"), out=out, progress_bar=False, stop=stop)
    return reached, best, int(result.model.num_timesteps)


def main(argv=None) -> int:
    cores = usable_cores()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300_000, help="learner steps per throughput run (default 300000)")
    parser.add_argument("--workers", type=int, nargs="+",
                        default=[w for w in (1, 2, 4, 8, 16) if w == 1 or w < cores],
                        help="rollout workers to measure (default: 1, 2, 4, 8, 16 below this machine's "
                             f"{cores} usable cores, one left for the update)")
    parser.add_argument("--devices", nargs="+", choices=["cpu", "cuda"],
                        default=["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"],
                        help="the update's devices (default: cpu, and cuda where torch finds one)")
    parser.add_argument("--precisions", nargs="+", choices=["fp32", "bf16"],
                        help="the update's precisions (default: fp32, and bf16 on the devices that compute it "
                             "natively)")
    parser.add_argument("--limit", type=float, default=420.0,
                        help="seconds for the whole benchmark; runs that would start later are skipped (default 420)")
    parser.add_argument("--eval-every", type=int, default=250_000,
                        help="learner steps between the evaluations of the time-to-65%% run (default 250000)")
    parser.add_argument("--eval-games", type=int, default=100,
                        help="4-player games per evaluation of that run (default 100)")
    parser.add_argument("--target-steps", type=int, default=10_000_000,
                        help="that run's total_timesteps, over which quick.yaml's learning rate falls to 0 "
                             "(default 10000000)")
    parser.add_argument("--out", type=Path, help="also write the Markdown table to this file")
    args = parser.parse_args(argv)
    if min(args.workers + [args.steps, args.eval_every, args.eval_games, args.target_steps]) < 1 or args.limit <= 0:
        parser.error("--workers, --steps, --eval-every, --eval-games, --target-steps and --limit must be positive")
    if "cuda" in args.devices and not torch.cuda.is_available():
        parser.error("--devices cuda: torch finds no CUDA device here")
    deadline = time.monotonic() + args.limit
    gpu = f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ", no GPU"
    lines = [f"{datetime.datetime.now():%Y-%m-%d %H:%M} on {platform.node()}: {cores} usable cores{gpu}; "
             f"Python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}; "
             f"configs/quick.yaml, {args.steps:,} learner steps per run", "",
             "| workers | update device | precision | learner steps/s |", "|---:|---|---|---:|"]
    rate(quick(16_384, 1, "cpu"))  # warm-up: numba's compiling and first imports are not measured
    best = (0.0, 1, "cpu", "fp32")
    runs = [(w, d, p) for d in args.devices
            for p in (args.precisions or ["fp32"] + (["bf16"] if native_bf16(torch.device(d)) else []))
            for w in args.workers]
    for workers, device, precision in tqdm(runs, desc="throughput runs"):
        if time.monotonic() > deadline:
            lines.append(f"| {workers} | {device} | {precision} | skipped: past the time limit |")
            continue
        measured = rate(quick(args.steps, workers, device, precision=precision))
        best = max(best, (measured, workers, device, precision))
        lines.append(f"| {workers} | {device} | {precision} | {measured:,.0f} |")
    _, workers, device, precision = best
    left = deadline - time.monotonic()
    if left > 0:
        reached, top, steps = time_to_target(quick(args.target_steps, workers, device, precision=precision),
                                             args.eval_every, args.eval_games, deadline)
        result = (f"{reached:.0f} s of training" if reached is not None else
                  f"not reached in {left:.0f} s (best {100 * top:.0f}%)")
        lines += ["", f"Time to {100 * TARGET:.0f}% in 4-player games against three heuristics (workers {workers}, "
                  f"update on {device} in {precision}, {args.eval_games} games every {args.eval_every:,} steps, "
                  f"learning rate over {args.target_steps:,} steps): {result}, {steps:,} learner steps."]
    else:
        lines += ["", f"Time to {100 * TARGET:.0f}%: skipped, past the time limit."]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
