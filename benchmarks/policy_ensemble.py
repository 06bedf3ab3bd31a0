"""Write one policy ``.npz`` whose logits are a weighted sum of several policies' logits (a product of experts).

Policies of the same observation (mode, encoding, catalogue), activation, action layout and hidden-layer count
combine exactly into one network of the summed widths: the embeddings side by side, the hidden layers block-diagonal
(the activation is elementwise, so no unit sees another policy's), the action layers stacked and scaled by the
weights. The result loads as any policy (``ppo:path=OUT``), so every command plays, exploits and trains from it.
With weights w, it plays argmax of sum_i w_i * logits_i, the same as argmax of sum_i w_i * log pi_i: the geometric
mixture of the policies at temperature 1 / sum(w). Issue #49 asks whether such a mixture of a policy that is
strong against search and one that is strong against policies keeps both strengths (docs/evaluation.md).

    python benchmarks/policy_ensemble.py --out runs/ens.npz --policy models/mmd_2p.npz=1 \\
        --policy benchmarks/records/mmd_2p_fresh/policy.npz=0.5
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.linalg import block_diag

from packetrow_agents.policy import ModelFormatError, NumpyPolicy


def combine(policies: list[NumpyPolicy], weights: list[float]) -> NumpyPolicy:
    """One policy whose logits are sum_i weights[i] * policies[i].logits (checked to agree in what they read)."""
    first = policies[0]
    for policy in policies[1:]:
        same = (policy.observation_mode, policy.observation_encoding, policy.observation_size, policy.num_actions,
                policy.activation, len(policy.weights))
        if same != (first.observation_mode, first.observation_encoding, first.observation_size, first.num_actions,
                    first.activation, len(first.weights)):
            raise ModelFormatError(f"policies differ in observation, actions, activation or depth: {same}")
        if first.embedding is not None and not np.array_equal(policy.index_slices, first.index_slices):
            raise ModelFormatError("compact policies with different index slices cannot be combined")
    weights_in = [p.weights[0] for p in policies]
    if first.embedding is None:
        layer_0 = np.concatenate(weights_in, axis=1)
        embedding = slices = None
    else:
        dims = [p.embedding.shape[1] for p in policies]
        count = int((first.index_slices[:, 1] - first.index_slices[:, 0]).sum())
        embedding = np.concatenate([p.embedding for p in policies], axis=1)
        widths = [w.shape[1] for w in weights_in]
        rest = weights_in[0].shape[0] - count * dims[0]
        layer_0 = np.zeros((count * sum(dims) + rest, sum(widths)), dtype=np.float32)
        column = 0
        for i, (w, dim, width) in enumerate(zip(weights_in, dims, widths)):
            offset = sum(dims[:i])
            for k in range(count):  # index float k's embedding: this policy's part of the joint embedding
                layer_0[k * sum(dims) + offset:k * sum(dims) + offset + dim, column:column + width] = \
                    w[k * dim:(k + 1) * dim]
            layer_0[count * sum(dims):, column:column + width] = w[count * dim:]
            column += width
        slices = first.index_slices
    hidden = [layer_0] + [block_diag(*[p.weights[i] for p in policies]) for i in range(1, len(first.weights))]
    biases = [np.concatenate([p.biases[i] for p in policies]) for i in range(len(first.weights))]
    action_weight = np.concatenate([w * p.action_weight for p, w in zip(policies, weights)], axis=0)
    action_bias = sum(w * p.action_bias for p, w in zip(policies, weights))
    metadata = {"config_name": "ensemble", "ensemble": [{"weight": w, **p.metadata}
                                                       for p, w in zip(policies, weights)]}
    return NumpyPolicy(hidden, biases, action_weight, action_bias, first.activation, first.observation_mode,
                       metadata, embedding, slices)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", action="append", required=True, metavar="PATH=WEIGHT",
                        help="a policy .npz and its logits' weight (repeat, two or more)")
    parser.add_argument("--out", required=True, type=Path, help="the combined policy's .npz")
    args = parser.parse_args(argv)
    paths, weights = [], []
    for item in args.policy:
        path, _, weight = item.rpartition("=")
        try:
            weights.append(float(weight))
        except ValueError:
            parser.error(f"--policy {item!r}: expected PATH=WEIGHT with a number for WEIGHT")
        paths.append(path)
    if len(paths) < 2:
        parser.error("give two or more --policy PATH=WEIGHT")
    policies = [NumpyPolicy.load_npz(path) for path in paths]
    combined = combine(policies, weights)
    rng = np.random.default_rng(0)  # a check that the network is the weighted sum, on random observations
    x = rng.integers(0, 3, size=(64, combined.observation_size)).astype(np.float32)
    expected = sum(w * p.logits(x) for p, w in zip(policies, weights))
    if not np.allclose(combined.logits(x), expected, atol=1e-3):
        raise AssertionError("the combined network is not the weighted sum of the logits")
    combined.save(args.out)
    print(f"wrote {args.out}: hidden widths {[w.shape[1] for w in combined.weights]}, weights {weights}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
