"""Many NumpyPolicy networks of one shape, each row of a batch through its own, in one compiled call.

Self-play keeps a pool of snapshots of the learner; in a batch of games each waiting opponent seat may hold
another snapshot. ``NumpyPolicy.logits`` per snapshot costs a dozen numpy calls per group before any
arithmetic (docs/benchmarks.md), so a pool of 20 snapshots paid that up to 20 times
per round of opponent moves. ``PolicyStack`` stacks the snapshots' weights (they share one architecture:
they are one run's exports) and ``PolicyStack.actions`` runs every row through its own policy in one numba
kernel, skipping the zero inputs (most of an observation), then picks each row's action: the most likely
legal one, or a sample of the masked softmax by the Gumbel trick with the caller's uniform draws. The
kernel's sums run in another order than BLAS's, each supply slot's part of the first layer is precomputed
per card type and tanh is a rational fit, so its logits agree with ``NumpyPolicy.logits`` to float32
rounding (tests/test_policy_batch.py), not bit for bit.
"""

from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np


_JIT = dict(cache=True, nogil=True)


class PolicyStack:
    """The weights of policies of one architecture (layer shapes, activation, input stage) stacked on axis 0."""

    def __init__(self, policies: list):
        if not policies:
            raise ValueError("a PolicyStack needs at least one policy")
        first = policies[0]
        for k, policy in enumerate(policies):
            if not same_architecture(first, policy):
                raise ValueError(f"policy {k} has another architecture than policy 0 (layer shapes, activation or "
                                 "input stage differ); stack only policies of one training run")
        self.num_policies = len(policies)
        self.observation_size = first.observation_size
        self.num_actions = first.num_actions
        self.relu = first.activation == "relu"
        self.weights = tuple(np.stack([w[i] for w in _layers(policies, "weights", "action_weight")])
                             for i in range(len(first.weights) + 1))
        self.biases = tuple(np.stack([b[i] for b in _layers(policies, "biases", "action_bias")])
                            for i in range(len(first.biases) + 1))
        # What the kernel reads: the first layer as stored, the dense layers after it transposed (policy, out, in),
        # so that each output is one contiguous dot product: measured faster than adding a row per input.
        self.kernel_weights = (self.weights[0],) + tuple(np.ascontiguousarray(w.transpose(0, 2, 1))
                                                         for w in self.weights[1:])
        positions = np.arange(self.observation_size)
        width = self.weights[0].shape[2]
        if first.embedding is None:
            self.index_positions = np.zeros(0, np.int64)
            self.rest_positions = positions
            self.projected = np.zeros((len(policies), 0, 1, width), np.float32)
            self.first_rest = 0  # the first layer's row of the first plain float
        else:
            self.index_positions = positions[first.index_floats].astype(np.int64)
            self.rest_positions = positions[first.rest_floats].astype(np.int64)
            # Each index float's part of the first layer, per card type: its embedding times its rows of the
            # layer. A row then adds one vector per index float instead of one per embedding entry.
            slots, dim = len(self.index_positions), first.embedding.shape[1]
            embedded_rows = self.weights[0][:, :slots * dim].reshape(len(policies), slots, dim, width)
            embeddings = np.stack([p.embedding for p in policies])
            self.projected = np.einsum("std,sjdh->sjth", embeddings, embedded_rows).astype(np.float32)
            self.first_rest = slots * dim

    def logits(self, policy_ids, observations: np.ndarray) -> np.ndarray:
        """float32[k, A]: row j's logits by policy ``policy_ids[j]`` (as ``NumpyPolicy.logits``)."""
        ids, x = self._check(policy_ids, observations)
        out = np.empty((len(ids), self.num_actions), np.float32)
        stack_logits(x, ids, self.index_positions, self.rest_positions, self.projected, self.first_rest,
                self.kernel_weights, self.biases, self.relu, out)
        return out

    def actions(self, policy_ids, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator,
                deterministic: bool = False) -> np.ndarray:
        """int64[k]: row j's action by policy ``policy_ids[j]``: its most likely legal action, or a sample of its
        masked softmax (one uniform draw per row and action from ``rng``)."""
        logits = self.logits(policy_ids, observations)
        masks = np.asarray(masks)
        if masks.shape != logits.shape or masks.dtype != bool or not masks.any(axis=1).all():
            raise ValueError(f"masks must be bool[{len(logits)}, {self.num_actions}] with a legal action in every "
                             f"row, got {masks.dtype} {masks.shape}")
        uniforms = np.empty((0, 0)) if deterministic else rng.random(logits.shape)
        out = np.empty(len(logits), np.int64)
        _pick(logits, masks, uniforms, deterministic, out)
        return out

    def _check(self, policy_ids, observations) -> tuple[np.ndarray, np.ndarray]:
        ids = np.asarray(policy_ids)
        x = np.ascontiguousarray(observations, dtype=np.float32)
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu") \
                or ((ids < 0) | (ids >= self.num_policies)).any():
            raise ValueError(f"policy_ids must be a 1-D list of policy indices 0-{self.num_policies - 1}, got {ids!r}")
        if x.shape != (len(ids), self.observation_size):
            raise ValueError(f"observations must be float[{len(ids)}, {self.observation_size}] (one per policy id), "
                             f"got shape {x.shape}")
        return ids.astype(np.int64), x


@lru_cache(maxsize=8)
def stack_of(policies: tuple) -> PolicyStack | None:
    """A PolicyStack of ``policies``, kept for the next call with the same ones; None where their architectures
    differ."""
    return PolicyStack(list(policies)) if all(same_architecture(policies[0], p) for p in policies) else None


def same_architecture(a, b) -> bool:
    """Whether two policies can share a PolicyStack (same layer shapes, activation and input stage)."""
    shapes = [w.shape for w in a.weights + [a.action_weight]] == [w.shape for w in b.weights + [b.action_weight]]
    stage = (a.embedding is None) == (b.embedding is None) and (
        a.embedding is None or (a.embedding.shape == b.embedding.shape
                                and np.array_equal(a.index_slices, b.index_slices)))
    return shapes and a.activation == b.activation and stage


def _layers(policies, hidden: str, action: str) -> list[list[np.ndarray]]:
    return [getattr(p, hidden) + [getattr(p, action)] for p in policies]


# reassociation lets LLVM vectorise each output's dot product (measured faster than the sums in order)
@numba.njit(fastmath={"reassoc", "contract"}, **_JIT)
def stack_logits(x, ids, index_positions, rest_positions, projected, first_rest, weights, biases, relu, out):
    """out[r] = the logits of row r by policy ids[r], from a PolicyStack's ``index_positions``, ``rest_positions``,
    ``projected``, ``first_rest``, ``kernel_weights`` (as ``weights``), ``biases`` and ``relu``. Internal API: compiled
    callers (opponents_batch) run a stack's policies inside their own kernels with it."""
    top = projected.shape[2] - 1
    width = weights[0].shape[2]
    for layer in range(1, len(weights)):
        width = max(width, weights[layer].shape[1])
    h = np.empty(width, np.float32)
    g = np.empty(width, np.float32)
    rows = np.empty(len(rest_positions), np.int64)  # the first layer's rows of a row's non-zero plain floats
    values = np.empty(len(rest_positions), np.float32)
    for r in range(x.shape[0]):
        s = ids[r]
        w = weights[0]
        n = w.shape[2]
        h[:n] = biases[0][s]
        for j in range(len(index_positions)):
            t = min(max(int(np.rint(x[r, index_positions[j]])), 0), top)
            for o in range(n):
                h[o] += projected[s, j, t, o]
        count = 0
        for k in range(len(rest_positions)):  # most of an observation is zeros: their rows are skipped
            v = x[r, rest_positions[k]]
            if v != 0.0:
                rows[count] = first_rest + k
                values[count] = v
                count += 1
        q = 0
        while q + 3 < count:  # four rows a pass: h is loaded and stored once for four (measured 10% faster)
            k0, k1, k2, k3 = rows[q], rows[q + 1], rows[q + 2], rows[q + 3]
            v0, v1, v2, v3 = values[q], values[q + 1], values[q + 2], values[q + 3]
            for o in range(n):
                h[o] += v0 * w[s, k0, o] + v1 * w[s, k1, o] + v2 * w[s, k2, o] + v3 * w[s, k3, o]
            q += 4
        for q in range(q, count):
            for o in range(n):
                h[o] += values[q] * w[s, rows[q], o]
        for layer in range(1, len(weights)):
            if relu:
                for o in range(n):
                    h[o] = max(h[o], np.float32(0.0))
            else:
                _tanh(h, n)
            w = weights[layer]
            m = w.shape[1]
            for o in range(m):
                total = biases[layer][s, o]
                for k in range(n):
                    total += h[k] * w[s, o, k]
                g[o] = total
            h, g, n = g, h, m
        out[r] = h[:n]


# tanh as a rational function on [-9, 9] (beyond, tanh is 1 in float32), with the coefficients of the float32
# fit that Eigen and XLA use: within 4e-7 of np.tanh (tests/test_policy_batch.py); unlike np.tanh, a call-free loop.
_ALPHA = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
          1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03)
_BETA = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)


@numba.njit(inline="always", **_JIT)
def _tanh(h, n):
    for o in range(n):
        x = min(max(h[o], np.float32(-9.0)), np.float32(9.0))
        x2 = x * x
        p = np.float32(_ALPHA[0])
        for c in _ALPHA[1:]:
            p = p * x2 + np.float32(c)
        q = np.float32(_BETA[0])
        for c in _BETA[1:]:
            q = q * x2 + np.float32(c)
        h[o] = x * p / q


@numba.njit(**_JIT)
def _pick(logits, masks, uniforms, deterministic, out):
    for r in range(logits.shape[0]):
        best, choice = -np.inf, -1
        for a in range(logits.shape[1]):
            if not masks[r, a]:
                continue
            value = np.float64(logits[r, a])
            if not deterministic:  # argmax(logits + Gumbel noise) samples softmax(logits)
                value -= np.log(-np.log(uniforms[r, a]))
            if value > best or choice < 0:
                best, choice = value, a
        out[r] = choice
