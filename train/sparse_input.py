"""The compact extractor's first layer computed from what an observation holds: its non-zero floats and its slots.

The first layer of ``compact_extractor.CompactExtractor`` (with ``hidden``) was over half of the PPO update's time on
the CPU (docs/benchmarks.md, issue #50), in two products that do mostly nothing:

- the plain floats, about nine in ten zero in a training rollout (one-hot fields, the seats of absent players),
  times their weights: ``SparseInputLinear`` is an ``nn.Linear`` (the same parameters, state dict and checkpoints)
  whose forward lists each row's non-zero entries once (``SparseRows``) and adds only their weight rows, and whose
  backward adds only their products into the weight's gradient;
- the supply slots' card types, embedded and then multiplied by their part of the layer: ``slot_sum`` folds the
  embedding into that part once per call, a table of each slot's contribution per card type (``slot_tables``),
  and adds one table row per slot; its backward scatters the gradient into the tables, and torch takes it on to
  the embedding and the weights.

Both run where the input is a CPU float32 matrix that needs no gradient of its own (else the dense layers run:
``SparseInputLinear`` falls back to ``nn.Linear``, and ``slot_sum_applies`` says when the extractor should take its
own path), and not inside ``dense_products()``, which runs the dense layers for comparisons (the tests,
benchmarks/update_speed.py). Their sums run in another order than BLAS's, so outputs and gradients agree with the
dense layers' to float32 rounding (tests/test_sparse_input.py), not bit for bit; under bfloat16 autocast they stay
float32. The layer is for inputs that are mostly zeros in runs, as the compact observation's plain floats are: on
zeros scattered at random its scan mispredicts and it can be slower than the dense product (``MAX_DENSITY``).

The policy's and the value's extractors read the same minibatch: the non-zero entries of the last input seen on
a thread are kept while that tensor lives and is unchanged, so one scan serves both.
"""

from __future__ import annotations

import contextlib
import threading
import weakref

import numba
import numpy as np
import torch
from torch import nn

_JIT = dict(cache=True, nogil=True)

# a guard for inputs that are not mostly zeros, not a measured crossover: the crossover depends on where the non-zeros
# lie (2,048 x 754 minibatches, the scan included: with non-zeros scattered uniformly the sparse layer was the faster
# at 5% and the slower from 10%; compact observations, 8-13% non-zero in runs of neighbouring fields, take the sparse
# layer about 40% of the dense one's time, the update of a rollout two thirds: benchmarks/update_speed.py)
MAX_DENSITY = 0.3


class SparseRows:
    """The non-zero entries of a float32 matrix by row (CSR: ``indptr``, ``indices``, ``values``) and, made at
    the first ``by_column`` call, by column (the weight gradient's order)."""

    def __init__(self, x: np.ndarray):
        self.shape = x.shape
        self.indptr, self.indices, self.values = _nonzeros(x)
        self._columns = None

    @property
    def density(self) -> float:
        """The share of entries that are not zero."""
        return len(self.values) / max(1, self.shape[0] * self.shape[1])

    def by_column(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(column pointers, row of each entry, value of each entry): the same entries, column by column."""
        if self._columns is None:
            self._columns = _by_column(self.indptr, self.indices, self.values, self.shape[1])
        return self._columns


_last = threading.local()  # (weakref to the input's base tensor, its view's place and version, SparseRows)
_dense = False  # inside dense_products()


@contextlib.contextmanager
def dense_products():
    """Within it, SparseInputLinear and the extractor's slots take the dense layers (in every thread)."""
    global _dense
    before, _dense = _dense, True
    try:
        yield
    finally:
        _dense = before


def sparse_rows(x: torch.Tensor) -> SparseRows:
    """The SparseRows of a CPU float32 matrix, the one made for the same unchanged tensor (or the same view of one)
    where it is the last one seen on this thread."""
    base = x if x._base is None else x._base
    place = (x.storage_offset(), tuple(x.shape), x.stride(), x._version)
    seen = getattr(_last, "seen", None)
    if seen is not None and seen[0]() is base and seen[1] == place:
        return seen[2]
    rows = SparseRows(x.detach().numpy())
    _last.seen = (weakref.ref(base), place, rows)
    return rows


def slot_tables(embedding: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """float32[slots, types, outputs]: each slot's part of a first layer (``weight``, float[outputs, slots * dim],
    the embeddings of the slots in order) applied to each card type's embedding (``embedding``, float[types, dim])."""
    outputs, dim = weight.shape[0], embedding.shape[1]
    with torch.autocast(embedding.device.type, enabled=False):
        return torch.einsum("td,ojd->jto", embedding.float(), weight.float().view(outputs, -1, dim)).contiguous()


def slot_sum_applies(index: torch.Tensor) -> bool:
    """Whether ``slot_sum`` takes ``index`` (a CPU float32 matrix that needs no gradient, outside
    ``dense_products()``)."""
    return not _dense and index.device.type == "cpu" and index.dtype == torch.float32 and not index.requires_grad \
        and index.dim() == 2


def slot_sum(index: torch.Tensor, tables: torch.Tensor) -> torch.Tensor:
    """float32[n, outputs]: row r's sum over slots j of ``tables[j, t]``, t its slot's index float rounded to a whole
    number within the tables' rows (as the extractor's embedding lookup)."""
    return _SlotSum.apply(index, tables)


def compile_jobs() -> list[tuple]:
    """``[(kernel, example arguments)]`` of this module's kernels, with the argument types a training run passes
    (the observations' column views), for ``compile_ahead.compile_ahead``."""
    view = np.zeros((1, 2), np.float32)[:, 1:]
    pointers, entries, values = np.zeros(2, np.int64), np.zeros(1, np.int32), np.zeros(1, np.float32)
    matrix, tables, types = np.zeros((1, 1), np.float32), np.zeros((1, 1, 1), np.float32), np.zeros((1, 1), np.int64)
    return [(_nonzeros, (view,)), (_by_column, (pointers, entries, values, 1)),
            (_product, (pointers, entries, values, matrix, values, matrix)),
            (_weight_gradient, (pointers, entries, values, matrix, matrix)),
            (_slot_sum, (view, tables, types, matrix)), (_slot_sum_gradient, (types, matrix, tables))]


class SparseInputLinear(nn.Linear):
    """``nn.Linear`` whose product skips the input's zeros where that is faster (see the module docstring)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x @ weight.T + bias``."""
        if _dense or x.device.type != "cpu" or x.dtype != torch.float32 or x.requires_grad or x.dim() != 2 \
                or self.bias is None:
            return super().forward(x)
        rows = sparse_rows(x)
        if rows.density > MAX_DENSITY:
            return super().forward(x)
        return _SparseProduct.apply(rows, self.weight, self.bias)


class _SparseProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rows: SparseRows, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        out = np.empty((rows.shape[0], weight.shape[0]), np.float32)
        columns = weight.detach().float().T.contiguous().numpy()  # (inputs, outputs): each input's row contiguous
        _product(rows.indptr, rows.indices, rows.values, columns, bias.detach().float().numpy(), out)
        ctx.rows = rows
        return torch.from_numpy(out)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        grad = grad.float().contiguous()
        weight_grad = np.empty((grad.shape[1], ctx.rows.shape[1]), np.float32)
        _weight_gradient(*ctx.rows.by_column(), grad.numpy(), weight_grad)
        return None, torch.from_numpy(weight_grad), grad.sum(dim=0)


class _SlotSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, index: torch.Tensor, tables: torch.Tensor) -> torch.Tensor:
        types = np.empty(index.shape, np.int64)
        out = np.empty((index.shape[0], tables.shape[2]), np.float32)
        _slot_sum(index.detach().numpy(), tables.detach().numpy(), types, out)
        ctx.types, ctx.shape = types, tables.shape
        return torch.from_numpy(out)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        tables_grad = np.empty(ctx.shape, np.float32)
        _slot_sum_gradient(ctx.types, grad.float().contiguous().numpy(), tables_grad)
        return None, torch.from_numpy(tables_grad)


@numba.njit(**_JIT)
def _nonzeros(x):
    n, d = x.shape
    indptr = np.empty(n + 1, np.int64)
    indices = np.empty(n * d, np.int32)
    values = np.empty(n * d, np.float32)
    count = 0
    for r in range(n):
        indptr[r] = count
        row = x[r]
        for k in range(d):
            if row[k] != 0.0:
                indices[count] = k
                values[count] = row[k]
                count += 1
    indptr[n] = count
    return indptr, indices[:count].copy(), values[:count].copy()


@numba.njit(**_JIT)
def _by_column(indptr, indices, values, d):
    start = np.zeros(d + 1, np.int64)
    for q in range(indices.shape[0]):
        start[indices[q] + 1] += 1
    for k in range(d):
        start[k + 1] += start[k]
    fill = start[:-1].copy()
    rows = np.empty(indices.shape[0], np.int32)
    column_values = np.empty(indices.shape[0], np.float32)
    for r in range(indptr.shape[0] - 1):
        for q in range(indptr[r], indptr[r + 1]):
            k = indices[q]
            rows[fill[k]] = r
            column_values[fill[k]] = values[q]
            fill[k] += 1
    return start, rows, column_values


# four entries a pass: each pass loads and stores the accumulator once (one a pass measured twice the time);
# reassociation lets LLVM vectorise over the outputs
@numba.njit(fastmath={"reassoc", "contract"}, inline="always", **_JIT)
def _add_rows(total, table, at, values, q, end):
    """total += the sum over entries q..end-1 of values[e] * table[at[e]]."""
    h = total.shape[0]
    while q + 3 < end:
        k0, k1, k2, k3 = at[q], at[q + 1], at[q + 2], at[q + 3]
        v0, v1, v2, v3 = values[q], values[q + 1], values[q + 2], values[q + 3]
        for j in range(h):
            total[j] += v0 * table[k0, j] + v1 * table[k1, j] + v2 * table[k2, j] + v3 * table[k3, j]
        q += 4
    for q in range(q, end):
        for j in range(h):
            total[j] += values[q] * table[at[q], j]


@numba.njit(fastmath={"reassoc", "contract"}, **_JIT)
def _product(indptr, indices, values, columns, bias, out):
    total = np.empty(columns.shape[1], np.float32)
    for r in range(indptr.shape[0] - 1):
        total[:] = bias
        _add_rows(total, columns, indices, values, indptr[r], indptr[r + 1])
        out[r, :] = total


@numba.njit(fastmath={"reassoc", "contract"}, **_JIT)
def _weight_gradient(start, rows, values, grad, weight_grad):
    total = np.empty(grad.shape[1], np.float32)
    for k in range(start.shape[0] - 1):
        total[:] = 0.0
        _add_rows(total, grad, rows, values, start[k], start[k + 1])
        weight_grad[:, k] = total


@numba.njit(fastmath={"reassoc", "contract"}, **_JIT)
def _slot_sum(index, tables, types, out):
    top = tables.shape[1] - 1
    h = tables.shape[2]
    total = np.empty(h, np.float32)
    for r in range(index.shape[0]):
        total[:] = 0.0
        for j in range(index.shape[1]):
            t = min(max(int(np.rint(index[r, j])), 0), top)
            types[r, j] = t
            for o in range(h):
                total[o] += tables[j, t, o]
        out[r, :] = total


@numba.njit(**_JIT)
def _slot_sum_gradient(types, grad, tables_grad):
    tables_grad[:] = 0.0
    for r in range(types.shape[0]):
        for j in range(types.shape[1]):
            t = types[r, j]
            for o in range(grad.shape[1]):
                tables_grad[j, t, o] += grad[r, o]
