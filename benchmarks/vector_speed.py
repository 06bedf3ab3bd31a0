"""Throughput of the batched engine (``packetrow_env.vector.VectorGame``) beside pgx on the same CPU.

Random legal play with autoreset: every step reads the masks, picks one uniformly random legal action per
game in numpy over the batch, and steps all games (games that end are re-dealt by ``Game.new``, so dealing
is in the figure). With ``--observe`` each step also builds every game's tracked observation. Prints
Markdown tables: steps/s by batch size and by player count, the first-call (compile) cost with and without
numba's cache, memory per game, and pgx's leduc hold'em (jit + vmap, batch 1024) when pgx is installed.

    python benchmarks/vector_speed.py                  # about two minutes
    python benchmarks/vector_speed.py --seconds 1 --batches 1,1024 --no-pgx
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

from packetrow_env.vector import VectorGame
from packetrow_env.vector.learner import random_legal

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    tqdm = None


def _ints(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 1,16,256, got {text!r}")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def play(num_players: int, batch: int, seconds: float, observe: bool, seed: int = 0) -> float:
    """Steps per second (game steps: one action in one game) of random legal play for about ``seconds``."""
    vg = VectorGame(num_players, seeds=range(seed, seed + batch), autoreset=True)
    rng = np.random.default_rng(seed)
    for _ in range(3):  # warm up (compiled kernels, caches)
        vg.step(random_legal(vg.legal_action_mask(), rng))
    steps = 0
    start = time.perf_counter()
    while True:
        for _ in range(10):
            if observe:
                vg.observe("tracked")
            vg.step(random_legal(vg.legal_action_mask(), rng))
            steps += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed


def memory_per_game(batch: int = 1024) -> float:
    """Bytes of state per game in a batch (the arrays of the batch and VectorGame's per-game caches)."""
    vg = VectorGame(4, seeds=range(batch))
    total = sum(a.nbytes for a in vg.batch) + sum(a.nbytes for a in vg._hands) + vg._mask.nbytes \
        + vg._ended.nbytes + vg._final.nbytes + vg.seeds.nbytes
    return total / batch


FIRST_CALL = """
import time; t = time.perf_counter()
from packetrow_env.vector import VectorGame
import numpy as np
vg = VectorGame(4, seeds=range(8)); vg.step(vg.legal_action_mask().argmax(axis=1)); vg.observe("tracked")
print(time.perf_counter() - t)
"""


def first_call(cache_dir: str) -> float:
    """Seconds from import to the first step and observation in a fresh process, numba cache in ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def pgx_leduc(batch: int, seconds: float) -> float | None:
    """pgx leduc hold'em, random legal play with autoreset, jit + vmap on the CPU: steps/s, or None without pgx."""
    try:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
        import pgx
    except ImportError:
        return None
    env = pgx.make("leduc_holdem")
    init = jax.jit(jax.vmap(env.init))

    @jax.jit
    def one(state, key):
        k1, k2 = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        state = jax.vmap(env.step)(state, jax.random.categorical(k1, logits, axis=-1))
        fresh = jax.vmap(env.init)(jax.random.split(k2, batch))
        done = state.terminated

        def pick(x, y):
            return jnp.where(done.reshape((-1,) + (1,) * (x.ndim - 1)), y, x)
        return jax.tree_util.tree_map(pick, state, fresh)

    key = jax.random.PRNGKey(0)
    state = init(jax.random.split(key, batch))
    state = one(state, key)
    jax.block_until_ready(state)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            key, sub = jax.random.split(key)
            state = one(state, sub)
            steps += batch
        jax.block_until_ready(state)
    return steps / (time.perf_counter() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of play per figure (default 3)")
    parser.add_argument("--batches", type=_ints, default=[1, 16, 256, 1024, 4096],
                        help="batch sizes for the first table (default 1,16,256,1024,4096)")
    parser.add_argument("--no-pgx", action="store_true", help="skip pgx even when it is installed")
    parser.add_argument("--no-first-call", action="store_true", help="skip the compile-cost measurement")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error(f"--seconds must be positive, got {args.seconds}")

    jobs = [("batch", b, 4, obs) for b in args.batches for obs in (False, True)]
    jobs += [("players", 1024, n, obs) for n in (2, 3, 5) for obs in (False, True)]
    bar = tqdm(total=len(jobs) + 1, desc="vector_speed", file=sys.stderr) if tqdm else None
    figures = {}
    for kind, batch, n, obs in jobs:
        figures[batch, n, obs] = play(n, batch, args.seconds, obs)
        if bar:
            bar.update(1)
    pgx = None if args.no_pgx else pgx_leduc(1024, args.seconds)
    if bar:
        bar.update(1)
        bar.close()

    print(f"Measured {datetime.date.today()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}, "
          f"numba {__import__('numba').__version__}; random legal play, autoreset, one thread.\n")
    print("| batch | 4 players, steps/s | with tracked observations |")
    print("|---:|---:|---:|")
    for b in args.batches:
        print(f"| {b:,} | {figures[b, 4, False]:,.0f} | {figures[b, 4, True]:,.0f} |")
    print("\n| players (batch 1,024) | steps/s | with tracked observations |")
    print("|---:|---:|---:|")
    for n in (2, 3, 4, 5):
        key = (1024, n, False)
        if key in figures:
            print(f"| {n} | {figures[key]:,.0f} | {figures[1024, n, True]:,.0f} |")
    if pgx is not None:
        print(f"\npgx {__import__('pgx').__version__} leduc hold'em, jit + vmap, batch 1,024, same machine: "
              f"{pgx:,.0f} steps/s")
        if (1024, 4, False) in figures:
            print(f"packetrow 4 players at batch 1,024 / pgx leduc: {figures[1024, 4, False] / pgx:.2f} "
                  f"(with tracked observations: {figures[1024, 4, True] / pgx:.2f})")
    print(f"\nmemory per game in a batch of 1,024: {memory_per_game():,.0f} bytes")
    if not args.no_first_call:
        with tempfile.TemporaryDirectory() as cold:
            cold_s = first_call(cold)
            warm_s = first_call(cold)
        print(f"first call (import, first step and observation, fresh process): {cold_s:.1f} s compiling, "
              f"{warm_s:.1f} s from numba's cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
