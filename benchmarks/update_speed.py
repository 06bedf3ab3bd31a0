"""The PPO update's time per rollout: sb3-contrib's MaskablePPO.train against train/ppo_update.py, MMD off and on.

One rollout of a config's games (default ``quick``: 128 games x 64 steps, the compact network, batch 2048, 2
epochs) is collected with the trainer's collector, then each update is timed on it from the same weights, Adam
state and minibatch draw, ``--repeat`` times (the median is printed), with torch on ``--threads`` threads, numpy's
BLAS on one and Adam's fused kernel (``fast_adam``), as the trainer sets them:
- ``sb3``: MaskablePPO.train with sb3-contrib's own policy class (its distribution objects);
- ``sb3 + lean forward``: MaskablePPO.train with the LeanMaskablePolicy, the trainer's update before MMD;
- ``ppo_update``: the update written out (train/ppo_update.py), MMD off, the trainer's update now;
- ``ppo_update, dense first layer``: the same with the compact extractor's first layer as dense products
  (``sparse_input.dense_products``: the update before issue #50's sparse first layer);
- ``ppo_update, precision bf16``: the same with the hidden layers in bfloat16 (the config's ``precision: bf16``);
- ``ppo_update + mmd uniform`` and ``ppo_update + mmd ppo``: with MMD's terms, the magnet uniform or the shipped
  policy (a numpy forward of the magnet per minibatch).
Prints a Markdown table, then what the collection of each variant's rollout took, for scale.

    python benchmarks/update_speed.py
    python benchmarks/update_speed.py --config quick --repeat 5 --threads 1
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import sb3_contrib
import stable_baselines3
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from tqdm import tqdm

from packetrow_agents.policy import load_policy
from packetrow_train import ppo_update
from packetrow_train.config import load_config
from packetrow_train.mmd import MMD
from packetrow_train.policy_export import export_policy
from packetrow_train.rollout import LeanMaskablePolicy, RolloutPPO, fast_adam
from packetrow_train.selfplay import _policy_kwargs, _ppo_kwargs, make_vec_env
from packetrow_train.sparse_input import dense_products
from packetrow_train.update_threads import single_threaded_openblas


def model_with_a_rollout(config, policy_class):
    """A RolloutPPO of ``config`` with ``policy_class``, its rollout buffer full of one collected rollout, and the
    seconds that collection took (the env's first games included)."""
    env = make_vec_env(config)
    model = RolloutPPO(policy_class, env, policy_kwargs=_policy_kwargs(config), seed=config.seed, device="cpu",
                       **_ppo_kwargs(config))
    env.add_snapshot(export_policy(model, config.env.observation_mode), 0)
    _, callback = model._setup_learn(total_timesteps=config.total_timesteps)
    started = time.perf_counter()
    assert model.collect_rollouts(env, callback, model.rollout_buffer, model.n_steps)
    collected = time.perf_counter() - started
    model._update_current_progress_remaining(model.num_timesteps, model._total_timesteps)
    fast_adam(model.policy.optimizer)
    return model, collected


def seconds(model, update, repeat: int) -> list[float]:
    """Wall seconds of ``update(model)``, ``repeat`` times from the same weights, Adam state and numpy draw."""
    weights = {k: v.clone() for k, v in model.policy.state_dict().items()}
    optimizer = model.policy.optimizer.state_dict()
    times = []
    for _ in range(repeat):
        model.policy.load_state_dict(weights)
        model.policy.optimizer.load_state_dict(optimizer)
        fast_adam(model.policy.optimizer)
        np.random.seed(0)
        started = time.perf_counter()
        update(model)
        times.append(time.perf_counter() - started)
        model.logger.dump()
    return times


def dense_update(model) -> None:
    """``ppo_update.update`` with the compact extractor's first layer as dense products."""
    with dense_products():
        ppo_update.update(model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="quick", help="a shipped config's name or a config file (default quick)")
    parser.add_argument("--repeat", type=int, default=5, help="updates timed per variant (default 5)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1, the trainer's default)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = load_config(args.config)
    mmd = {"uniform": MMD(None, 0.05, 0.005, "geometric", 0.05),
           "ppo": MMD(load_policy(), 0.05, 0.005, "geometric", 0.05)}
    if config.env.observation_encoding != "compact" or config.env.observation_mode != "tracked":
        del mmd["ppo"]  # the shipped policy reads tracked compact observations only
    variants = [("sb3", MaskableActorCriticPolicy, MaskablePPO.train, None, None),
                ("sb3 + lean forward", LeanMaskablePolicy, MaskablePPO.train, None, None),
                ("ppo_update", LeanMaskablePolicy, ppo_update.update, None, None),
                ("ppo_update, dense first layer", LeanMaskablePolicy, dense_update, None, None),
                ("ppo_update, precision bf16", LeanMaskablePolicy, ppo_update.update, None, torch.bfloat16),
                *((f"ppo_update + mmd {name}", LeanMaskablePolicy, ppo_update.update, terms, None)
                  for name, terms in mmd.items())]
    rollout = config.ppo.n_steps * config.env.n_envs
    print(f"torch {torch.__version__}, stable-baselines3 {stable_baselines3.__version__}, sb3-contrib "
          f"{sb3_contrib.__version__}, {platform.processor() or platform.machine()}, {args.threads} torch "
          f"thread(s); config {config.name}: {rollout:,} steps a rollout, batch {config.ppo.batch_size}, "
          f"{config.ppo.n_epochs} epochs\n")
    rows, collections = [], []
    for name, policy_class, update, terms, dtype in tqdm(variants, desc="updates"):
        model, collected = model_with_a_rollout(config, policy_class)
        collections.append(collected)
        model.mmd, model.update_dtype = terms, dtype
        with single_threaded_openblas():  # as in training: the magnet's numpy forward on one core
            times = seconds(model, update, args.repeat)
        rows.append((name, statistics.median(times), min(times)))
        model.env.close()
    base = rows[0][1]
    print("| update | median s per rollout | best s | against sb3 |")
    print("|---|---:|---:|---:|")
    for name, median, best in rows:
        print(f"| {name} | {median:.3f} | {best:.3f} | {median / base:.2f}x |")
    print(f"\nThe collection of one rollout (the trainer's collector, numba compiled, first games included): median "
          f"{statistics.median(collections):.3f} s of {len(collections)}.")


if __name__ == "__main__":
    main()
