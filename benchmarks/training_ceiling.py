"""The machine's ceiling for the main job's network: bare masked PPO in torch on a free environment, against
the real training run of ``configs/quick.yaml``, in one run, as a ratio.

The bare loop is the least any PPO on this network must do per learner step: the same modules (SB3's
``MaskableActorCriticPolicy`` with the config's extractor and layers), the same PPO settings (rollout
shape, epochs, minibatch, clipping, value and entropy terms, Adam, gradient clipping, the config's torch
threads in rollouts, up to two update threads measured as training measures them: ``UpdateThreads``), and an
environment that costs nothing: the observations and masks of real positions replayed from memory, random
rewards. The real run is ``train()`` with evaluations,
checkpoints and logs off (benchmarks/training_speed.py's ``training_rate``). Runs alternate, so that the
machine's drift falls on both.

    python benchmarks/training_ceiling.py                  # about 2 minutes on 2 cores
    python benchmarks/training_ceiling.py --steps 500000 --repeats 3
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_speed import QUICK, training_rate  # noqa: E402

from packetrow_env.vector.learner import LearnerGames  # noqa: E402
from packetrow_train.config import config_from_dict  # noqa: E402
from packetrow_train.rollout import _sample, fast_adam  # noqa: E402
from packetrow_train.selfplay import _policy_kwargs  # noqa: E402
from packetrow_arena.tournament import positive_int as positive  # noqa: E402
from packetrow_train.update_threads import UpdateThreads  # noqa: E402


def positions(config, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of ``count`` learner positions of random games (the config's players and encoding)."""
    env = config.env
    games = LearnerGames(256, env.num_players, observation_mode=env.observation_mode, seed=0,
                         observation_encoding=env.observation_encoding)
    observations, masks = [games.reset()], [games.action_masks()]
    rng = np.random.default_rng(0)
    while sum(map(len, observations)) < count:
        from packetrow_env.vector.learner import random_legal
        observations.append(games.step(random_legal(masks[-1], rng))[0])
        masks.append(games.action_masks())
    return np.concatenate(observations)[:count], np.concatenate(masks)[:count]


def bare_rate(config, steps: int, bank: tuple[np.ndarray, np.ndarray]) -> float:
    """Learner steps per second of masked PPO in plain torch on replayed positions (module docstring)."""
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    ppo, envs = config.ppo, config.env.n_envs
    observations, masks = bank
    space = spaces.Box(-np.inf, np.inf, observations.shape[1:], np.float32)
    policy = MaskableActorCriticPolicy(space, spaces.Discrete(masks.shape[1]), lambda _: ppo.learning_rate,
                                       **_policy_kwargs(config))
    optimizer = policy.optimizer
    fast_adam(optimizer)  # as training's updates
    rng = np.random.default_rng(0)
    rollout = ppo.n_steps * envs
    # as a sequential training run chooses them, up to 2 threads (quick.yaml's pipeline gives the update one core
    # beside the next rollout; a loop without an env to overlap is fastest with both)
    chooser = UpdateThreads(config.torch_threads, max(config.update_threads, 2))
    done, start = 0, time.perf_counter()
    while done < steps:
        torch.set_num_threads(config.torch_threads)
        at = rng.integers(0, len(observations) - rollout)
        obs, mask = observations[at:at + rollout], masks[at:at + rollout]
        actions = np.empty(rollout, np.int64)
        log_probs = np.empty(rollout, np.float32)
        values = np.empty(rollout, np.float32)
        with torch.no_grad():
            for t in range(ppo.n_steps):
                rows = slice(t * envs, (t + 1) * envs)
                logits, value = _forward(policy, torch.from_numpy(obs[rows]))
                _sample(logits.numpy(), mask[rows], torch.rand(logits.shape, dtype=torch.float64).numpy(),
                        actions[rows], log_probs[rows])
                values[rows] = value.numpy().ravel()
        rewards = rng.normal(size=rollout).astype(np.float32) * (rng.random(rollout) < 0.02)
        returns = _returns(rewards.reshape(ppo.n_steps, envs), values.reshape(ppo.n_steps, envs), ppo.gamma,
                           ppo.gae_lambda).ravel()
        advantages = returns - values
        torch.set_num_threads(chooser.before_update())
        for _ in range(ppo.n_epochs):
            for batch in np.array_split(rng.permutation(rollout), rollout // ppo.batch_size):
                loss = _loss(policy, ppo, torch.from_numpy(obs[batch]), torch.from_numpy(mask[batch]),
                             torch.from_numpy(actions[batch]), torch.from_numpy(log_probs[batch]),
                             torch.from_numpy(advantages[batch]), torch.from_numpy(returns[batch]))
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), ppo.max_grad_norm)
                optimizer.step()
        chooser.after_update()
        done += rollout
    return done / (time.perf_counter() - start)


def _forward(policy, x):
    features = policy.extract_features(x)
    pi, vf = (features, features) if policy.share_features_extractor else features
    return (policy.action_net(policy.mlp_extractor.forward_actor(pi)),
            policy.value_net(policy.mlp_extractor.forward_critic(vf)))


def _returns(rewards, values, gamma, lam):
    """GAE(lambda) returns of one rollout (no episode ends: the free env's episodes never end)."""
    advantages = np.zeros_like(rewards)
    last = np.zeros(rewards.shape[1], np.float32)
    for t in range(len(rewards) - 1, -1, -1):
        following = values[t + 1] if t + 1 < len(rewards) else values[t]
        delta = rewards[t] + gamma * following - values[t]
        last = delta + gamma * lam * last
        advantages[t] = last
    return advantages + values


def _loss(policy, ppo, obs, mask, actions, old_log_probs, advantages, returns):
    """PPO's clipped loss, value loss and entropy bonus, as SB3's MaskablePPO computes them."""
    logits, values = _forward(policy, obs)
    log_p = torch.log_softmax(logits.masked_fill(~mask, -1e8), dim=1)
    log_prob = log_p.gather(1, actions[:, None]).squeeze(1)
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    ratio = torch.exp(log_prob - old_log_probs)
    policy_loss = -torch.min(advantages * ratio, advantages * ratio.clamp(1 - ppo.clip_range, 1 + ppo.clip_range)).mean()
    entropy = -(log_p.exp() * log_p).sum(1).mean()
    return policy_loss + ppo.vf_coef * torch.nn.functional.mse_loss(returns, values.squeeze(1)) - ppo.ent_coef * entropy


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=positive, default=300_000, help="learner steps per run (default 300000)")
    parser.add_argument("--repeats", type=positive, default=2, help="pairs of runs, alternating (default 2)")
    parser.add_argument("--players", type=int, nargs="+", choices=range(2, 6),
                        help="player counts drawn per episode (default quick.yaml's)")
    args = parser.parse_args(argv)
    data = yaml.safe_load(QUICK.read_text())
    args.players = args.players or data["env"]["num_players"]
    data["env"]["num_players"] = args.players
    config = config_from_dict(data, "benchmark")
    print(f"{datetime.date.today()}: Python {platform.python_version()}, numpy {np.__version__}, torch "
          f"{torch.__version__}, {os.cpu_count()} cores; quick.yaml, players {args.players}, {args.steps} learner "
          f"steps per run\n")
    bank = positions(config, 4 * config.ppo.n_steps * config.env.n_envs)
    torch.distributions.Distribution.set_default_validate_args(False)
    bare_rate(config, config.ppo.n_steps * config.env.n_envs, bank)  # warm-up: torch initialisation
    training_rate(None, 2048, "batched", args.players)  # warm-up: compilation, imports
    print("| run | bare torch, learner steps/s | real training, learner steps/s | real / bare |\n|---|---:|---:|---:|")
    ratios = []
    for k in tqdm(range(args.repeats), desc="pairs of runs"):
        bare = bare_rate(config, args.steps, bank)
        real = training_rate(None, args.steps, "batched", args.players)
        ratios.append(real / bare)
        print(f"| {k + 1} | {bare:,.0f} | {real:,.0f} | {real / bare:.2f} |", flush=True)
    print(f"\nmean ratio {np.mean(ratios):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
