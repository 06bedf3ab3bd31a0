"""Observation encodings: size and encode time per mode, and what each costs the network in SB3 training.

1. Per encoding (``observation.Encoder``, ``compact_observation.CompactEncoder``) and mode: floats, and the
   CPU microseconds to encode one observation of a mid-game position, one game at a time and by the batch
   kernels (``vector.observe``, ``vector.observe_compact``) at batch 1024.
2. SB3 MaskablePPO learner steps/s on a batched VecEnv that costs nothing (random observations of the
   encoding's size and structure, random masks, 60-step episodes), one torch thread, as TRAINING.md's
   table: the current encoding as a plain MLP against the compact one with ``CompactExtractor``.

    python benchmarks/observation_sizes.py                 # about 3 minutes
    python benchmarks/observation_sizes.py --steps 65536 --envs 256 --epochs 4
"""

from __future__ import annotations

import argparse
import datetime
import platform
import time

import numpy as np

from engine_speed import mid_game_positions
from packetrow_env import actions
from packetrow_env.compact_observation import encoder as compact_encoder
from packetrow_env.observation import MODES, encoder as full_encoder
from packetrow_env.vector.batch import from_games
from packetrow_env.vector.observe import BatchEncoder
from packetrow_env.vector.observe_compact import CompactBatchEncoder
from packetrow_arena.tournament import positive_int as positive


def best_time(run, repeats: int = 5) -> float:
    """The least CPU time of ``repeats`` calls (CPU time of this process: the machine's other work left out)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def encode_rates(positions) -> list[tuple[str, str, int, float]]:
    """(encoding, mode, floats, microseconds per observation) of the acting seat in ``positions``."""
    for game in positions:
        game.payment_options()  # cached in the game: the payment search is the engine's cost, not the encoding's
    seats = [g.current_player if not g.is_over else 0 for g in positions]
    rows = []
    for name, enc in (("current (Encoder)", full_encoder()), ("compact (CompactEncoder)", compact_encoder())):
        for mode in MODES:
            seconds = best_time(lambda: [enc.encode(game, seat, mode) for game, seat in zip(positions, seats)])
            rows.append((name, mode, enc.size_of(mode), 1e6 * seconds / len(positions)))
    batch = from_games(positions)
    seats = np.array(seats, np.int64)
    for name, kernel in (("current, batch kernel", BatchEncoder), ("compact, batch kernel", CompactBatchEncoder)):
        for mode in MODES:
            enc = kernel(None, mode)
            out = np.empty((len(positions), enc.size), np.float32)
            enc.encode(batch, seats, out)  # compiled (or loaded from the cache) before the clock starts
            seconds = best_time(lambda: enc.encode(batch, seats, out), 20)
            rows.append((f"{name} (B={len(positions)})", mode, enc.size, 1e6 * seconds / len(positions)))
    return rows


def free_vec_env(size: int, n_envs: int, index_slices=(), num_types: int = 0, seed: int = 0):
    """A VecEnv that costs nothing: random observations (index floats whole numbers 0..num_types, the rest small
    counts), random masks with a legal action, 60-step episodes."""
    import gymnasium as gym
    from stable_baselines3.common.vec_env import VecEnv

    rng = np.random.default_rng(seed)
    pool = 8
    obs = rng.integers(0, 3, (pool, n_envs, size)).astype(np.float32) * (rng.random((pool, n_envs, size)) < 0.1)
    for s in index_slices:
        obs[:, :, s] = rng.integers(0, num_types + 1, (pool, n_envs, s.stop - s.start))
    masks = rng.random((pool, n_envs, actions.NUM_ACTIONS)) < 0.3
    masks[:, :, actions.PASS] = True

    class FreeVecEnv(VecEnv):
        def __init__(self):
            space = gym.spaces.Box(0.0, float(max(num_types, 3)), (size,), np.float32)
            super().__init__(n_envs, space, gym.spaces.Discrete(actions.NUM_ACTIONS))
            self.t = 0

        def reset(self):
            self.t = 0
            return obs[0]

        def step_async(self, acts):
            pass

        def step_wait(self):
            self.t += 1
            done = np.full(n_envs, self.t % 60 == 0)
            rewards = rng.standard_normal(n_envs).astype(np.float32) * done
            infos = [{"terminal_observation": obs[0][i]} for i in range(n_envs)] if done[0] else [{}] * n_envs
            return obs[self.t % pool], rewards, done, infos

        def action_masks(self):
            return masks[self.t % pool]

        def close(self):
            pass

        def get_attr(self, name, indices=None):
            return [None] * n_envs

        def set_attr(self, name, value, indices=None):
            pass

        def env_method(self, name, *args, indices=None, **kwargs):
            if name == "action_masks":  # how sb3-contrib asks a VecEnv for its masks
                return list(self.action_masks())
            return [None] * n_envs

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * n_envs

    return FreeVecEnv()


def learner_rate(env, policy_kwargs: dict, steps: int, n_steps: int, batch: int, epochs: int) -> tuple[float, float]:
    """MaskablePPO learner steps per wall second and per CPU second of this process on ``env`` (a first rollout
    and update before the clocks start). CPU time leaves out what the machine's other work takes from us."""
    from sb3_contrib import MaskablePPO
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=batch, n_epochs=epochs, verbose=0, seed=0,
                        policy_kwargs=policy_kwargs, device="cpu")
    model.learn(n_steps * env.num_envs)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=positive, default=32_768, help="learner steps measured per run")
    parser.add_argument("--repeats", type=positive, default=3,
                        help="runs per encoding, interleaved; the best is shown (default 3)")
    parser.add_argument("--envs", type=positive, default=256, help="VecEnv size (default 256)")
    parser.add_argument("--n-steps", type=positive, default=64, help="rollout steps per env (default 64)")
    parser.add_argument("--batch", type=positive, default=1024, help="minibatch (default 1024)")
    parser.add_argument("--epochs", type=positive, default=4, help="PPO epochs (default 4)")
    parser.add_argument("--positions", type=positive, default=1024, help="mid-game positions to encode")
    parser.add_argument("--skip-training", action="store_true", help="only the encode table")
    args = parser.parse_args(argv)

    import numba
    import sb3_contrib
    import stable_baselines3
    import torch
    torch.set_num_threads(1)
    print(f"{datetime.date.today()}, Python {platform.python_version()}, numpy {np.__version__}, numba "
          f"{numba.__version__}, torch {torch.__version__}, SB3 {stable_baselines3.__version__}, sb3-contrib "
          f"{sb3_contrib.__version__}, one torch thread\n")

    positions = mid_game_positions(4, seed=0, count=args.positions)
    print("| encoding | mode | floats | CPU us per observation |\n|---|---|---:|---:|")
    for name, mode, size, micros in encode_rates(positions):
        print(f"| {name} | {mode} | {size:,} | {micros:.2f} |", flush=True)
    if args.skip_training:
        return 0

    from packetrow_train.compact_extractor import CompactExtractor, extractor_kwargs
    full, compact = full_encoder(), compact_encoder()
    net = dict(net_arch=[128, 128])
    runs = [
        ("current", full.size_of("tracked"), (), net),
        ("compact, floats as they are", compact.size_of("tracked"), compact.index_slices, net),
        ("512 random floats (TRAINING.md's reference)", 512, (), net),
    ]
    for dim in (8, 4):
        runs.append((f"compact + CompactExtractor (embed {dim})", compact.size_of("tracked"), compact.index_slices,
                     dict(net, features_extractor_class=CompactExtractor,
                          features_extractor_kwargs=extractor_kwargs(embed_dim=dim))))
    runs.append(("compact + CompactExtractor (embed 8, hidden 128: first layer shared, net_arch [128])",
                 compact.size_of("tracked"), compact.index_slices,
                 dict(net_arch=[128], features_extractor_class=CompactExtractor,
                      features_extractor_kwargs=extractor_kwargs(embed_dim=8, hidden=128))))
    print(f"\nMaskablePPO on a free VecEnv: n_envs {args.envs}, n_steps {args.n_steps}, minibatch {args.batch}, "
          f"{args.epochs} epochs, 128x128, {args.steps:,} learner steps measured per run (tracked mode)\n")
    best = [(0.0, 0.0)] * len(runs)
    for _ in range(args.repeats):  # interleaved, so that a busy spell of the machine does not favour one encoding
        for k, (name, size, slices, kwargs) in enumerate(runs):
            env = free_vec_env(size, args.envs, slices, compact.num_types)
            rate = learner_rate(env, kwargs, args.steps, args.n_steps, args.batch, args.epochs)
            best[k] = tuple(map(max, best[k], rate))
    print(f"| encoding | inputs | network inputs | learner steps/s (best of {args.repeats}) | per CPU second |\n"
          "|---|---:|---:|---:|---:|")
    for (name, size, slices, kwargs), (wall, cpu) in zip(runs, best):
        extra = kwargs.get("features_extractor_kwargs")
        width = size if extra is None else size + (slices[0].stop - slices[0].start) * (extra["embed_dim"] - 1)
        print(f"| {name} | {size:,} | {width:,} | {wall:,.0f} | {cpu:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
