"""One rollout's collection by the trainer's collector, per opponent mixture, and its opponents' compiled moves.

The rollout side of the training pipeline (``RolloutPPO._collect``: the learner's compiled actor, the env, the
opponents moved by ``opponents_batch.OpponentKernel``) on a config's games (default ``quick``: 128 games x 64 steps),
with a pool of ``--snapshots`` distinct snapshots (the main job keeps 20 from its 2M-th step on), for each mixture
of opponents: every seat random, every seat the heuristic, every seat a snapshot (uniform over the pool), and the
config's own. Prints the median milliseconds a rollout of ``--repeat`` (after two to warm up), and of them the
opponents' compiled moves.

    python benchmarks/collection_speed.py
    python benchmarks/collection_speed.py --snapshots 1 --repeat 8
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import statistics
import time

import numba
import numpy as np
import torch
from tqdm import tqdm

from packetrow_train.config import load_config
from packetrow_train.policy_export import export_policy
from packetrow_train.rollout import LeanMaskablePolicy
from update_speed import model_with_a_rollout

MIXTURES = {"random": {"random": 1.0}, "heuristic": {"heuristic": 1.0}, "snapshots": {"uniform": 1.0}}


def collection_ms(config, snapshots: int, repeat: int) -> tuple[float, float]:
    """(median ms a rollout, of it the median ms in the opponents' compiled moves) of ``config``'s collector with
    ``snapshots`` distinct snapshots in its pool."""
    model, _ = model_with_a_rollout(config, LeanMaskablePolicy)
    env = model.env
    rng = np.random.default_rng(0)
    for k in range(1, snapshots):  # distinct weights, as a run's snapshots are
        policy = export_policy(model, config.env.observation_mode)
        for weight in policy.weights:
            weight += rng.normal(0, 0.01, weight.shape).astype(np.float32)
        env.add_snapshot(policy, k * 100_000)
    behaviour, buffer, generator = model._pipeline_parts()
    moving = [0.0]  # the opponents' seconds in the rollout being collected

    def collect() -> float:
        started = time.perf_counter()
        model._collect(behaviour, env, buffer, model.n_steps, lambda infos, dones: True, generator, values=False)
        return time.perf_counter() - started

    collect()  # builds the compiled mover
    mover = env.opponents.compiled_mover
    move = mover.move

    def timed_move(*args):
        started = time.perf_counter()
        out = move(*args)
        moving[-1] += time.perf_counter() - started
        return out

    mover.move = timed_move
    collect()
    totals, moves = [], []
    for _ in range(repeat):
        moving.append(0.0)
        totals.append(collect())
        moves.append(moving[-1])
    env.close()
    return statistics.median(totals) * 1e3, statistics.median(moves) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="quick", help="a shipped config's name or a config file (default quick)")
    parser.add_argument("--snapshots", type=int, default=20, help="distinct snapshots in the pool (default 20)")
    parser.add_argument("--repeat", type=int, default=6, help="rollouts timed per mixture (default 6)")
    args = parser.parse_args()
    if args.snapshots < 1 or args.repeat < 1:
        parser.error("--snapshots and --repeat must be at least 1")
    torch.set_num_threads(1)
    config = load_config(args.config)
    mixtures = {**MIXTURES, f"{config.name}'s": dict(config.pool.mixture)}
    print(f"numba {numba.__version__}, numpy {np.__version__}, torch {torch.__version__}, "
          f"{platform.processor() or platform.machine()}; config {config.name}: "
          f"{config.ppo.n_steps * config.env.n_envs:,} learner steps a rollout, {args.snapshots} snapshots\n")
    rows = []
    for name, mixture in tqdm(mixtures.items(), desc="mixtures"):
        pool = dataclasses.replace(config.pool, mixture=mixture)
        rows.append((name, *collection_ms(dataclasses.replace(config, pool=pool), args.snapshots, args.repeat)))
    print("| opponents | ms a rollout | of it the opponents' compiled moves (ms) |")
    print("|---|---:|---:|")
    for name, total, moves in rows:
        print(f"| {name} | {total:.0f} | {moves:.0f} |")


if __name__ == "__main__":
    main()
