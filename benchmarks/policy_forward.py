"""The numpy policy's forward pass (``NumpyPolicy.logits``) in both observation encodings, by batch size and net.

What a batch of snapshot opponents costs in self-play: random weights of the given hidden layers (tanh), the
compact policy with an 8-wide embedding of the supply slots (as ``train/compact_extractor.py``), on tracked
observations of real positions of random 2-5 player games. Prints a Markdown table: microseconds per call and
per observation. Then a pool of snapshots (``--snapshots``, compact): a batch whose rows are spread evenly over
the snapshots, by one ``NumpyPolicy.logits`` call per snapshot against one ``PolicyStack.logits`` call
(``packetrow_agents.policy_batch``, what self-play's opponents use). Set OMP_NUM_THREADS (e.g. 1) to fix the
threads numpy's matrix products use.

    OMP_NUM_THREADS=1 python benchmarks/policy_forward.py
    python benchmarks/policy_forward.py --sizes 1,256,4096 --nets 64x64,256x256 --repeat 50
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from packetrow_agents.policy import NumpyPolicy
from packetrow_agents.policy_batch import PolicyStack
from packetrow_env import actions
from packetrow_env.compact_observation import encoder as compact_encoder
from packetrow_env.engine import Game
from packetrow_env.observation import encoder

ENCODERS = {"onehot": encoder(), "compact": compact_encoder()}


def random_policy(encoding: str, hidden: tuple[int, ...], dim: int, rng: np.random.Generator) -> NumpyPolicy:
    """Random weights reading the tracked observation in ``encoding`` (the index floats embedded when compact)."""
    code, stage = ENCODERS[encoding], {}
    features = code.size_of("tracked") if encoding == "compact" else code.size
    if encoding == "compact":
        slices = [[s.start, s.stop] for s in code.index_slices]
        stage = {"embedding": rng.normal(size=(code.num_types + 1, dim)), "index_slices": slices}
        features += sum(b - a for a, b in slices) * (dim - 1)
    sizes = (features, *hidden)
    weights = [rng.normal(size=(a, b)) / np.sqrt(a) for a, b in zip(sizes, sizes[1:])]
    return NumpyPolicy(weights, [np.zeros(w.shape[1]) for w in weights], rng.normal(size=(sizes[-1], actions.NUM_ACTIONS)),
                       np.zeros(actions.NUM_ACTIONS), **stage)


def observations(encoding: str, count: int, seed: int) -> np.ndarray:
    """``count`` observations of the player to act, drawn from the positions of random 2-5 player games."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        game = Game.new(int(rng.integers(2, 6)), seed=int(rng.integers(2**31)))
        while not game.is_over and len(out) < count:
            out.append(ENCODERS[encoding].encode(game, game.current_player, "tracked"))
            game.step(int(rng.choice(game.legal_actions())))
    return np.stack(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,64,1024", help="batch sizes, comma-separated")
    parser.add_argument("--nets", default="64x64,128x128", help="hidden layers per net, e.g. 64x64,128x128")
    parser.add_argument("--embed-dim", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=30, help="calls timed per cell (the best of 3 rounds)")
    parser.add_argument("--snapshots", type=int, default=8, help="policies in the pool table (default 8)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    nets = [tuple(int(h) for h in net.split("x")) for net in args.nets.split(",")]
    print(f"numpy {np.__version__}, {platform.processor() or platform.machine()}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}\n")
    print("| net | encoding | inputs | batch | us per call | us per observation |")
    print("|---|---|---:|---:|---:|---:|")
    for hidden in nets:
        for encoding in ENCODERS:
            policy = random_policy(encoding, hidden, args.embed_dim, np.random.default_rng(0))
            pool = observations(encoding, max(sizes), 1)
            for size in sizes:
                batch = pool[0] if size == 1 else pool[:size]
                policy.logits(batch)
                best = float("inf")
                for _ in range(3):
                    start = time.perf_counter()
                    for _ in range(args.repeat):
                        policy.logits(batch)
                    best = min(best, (time.perf_counter() - start) / args.repeat)
                inputs = policy.weights[0].shape[0]
                print(f"| {'x'.join(map(str, hidden))} | {encoding} | {inputs} | {size} | {best * 1e6:,.0f} | "
                      f"{best * 1e6 / size:.2f} |")
    print(f"\n{args.snapshots} compact snapshots, rows spread evenly over them: us per batch\n")
    print("| net | batch | one NumpyPolicy.logits per snapshot | one PolicyStack.logits |\n|---|---:|---:|---:|")
    for hidden in nets:
        rng = np.random.default_rng(0)
        policies = [random_policy("compact", hidden, args.embed_dim, rng) for _ in range(args.snapshots)]
        stack = PolicyStack(policies)
        pool = observations("compact", max(sizes), 1)
        for size in sizes:
            batch, ids = pool[:size], np.arange(size) % args.snapshots
            groups = [(policy, batch[ids == k]) for k, policy in enumerate(policies) if (ids == k).any()]
            per_group = best_of(lambda: [policy.logits(rows) for policy, rows in groups], args.repeat)
            stacked = best_of(lambda: stack.logits(ids, batch), args.repeat)
            print(f"| {'x'.join(map(str, hidden))} | {size} | {per_group * 1e6:,.0f} | {stacked * 1e6:,.0f} |")


def best_of(call, repeat: int) -> float:
    """The best of 3 rounds of ``repeat`` calls: seconds per call."""
    call()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


if __name__ == "__main__":
    main()
