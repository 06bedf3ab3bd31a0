"""The compact extractor's first layer from its input's non-zero floats and slots (train/sparse_input.py) against the
dense layers it stands for: outputs and gradients to float32 rounding, the dense fallbacks, the shared scan."""

import contextlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gymnasium  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

from packetrow_env.vector import VectorGame  # noqa: E402
from packetrow_env.vector.learner import random_legal  # noqa: E402

from packetrow_train import sparse_input  # noqa: E402
from packetrow_train.compact_extractor import CompactExtractor, extractor_kwargs  # noqa: E402
from packetrow_train.sparse_input import (  # noqa: E402
    SparseInputLinear, SparseRows, dense_products, slot_sum, slot_tables, sparse_rows)


def sparse_matrix(rows, columns, density, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, columns)).astype(np.float32)
    x[rng.random((rows, columns)) >= density] = 0.0
    return torch.from_numpy(x)


def dense_twin(layer: SparseInputLinear) -> torch.nn.Linear:
    twin = torch.nn.Linear(layer.in_features, layer.out_features)
    twin.load_state_dict(layer.state_dict())
    return twin


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 70), columns=st.integers(1, 40), outputs=st.integers(1, 20),
       density=st.sampled_from([0.0, 0.05, 0.2]), seed=st.integers(0, 2 ** 16))
def test_the_sparse_product_is_the_linear_layers(rows, columns, outputs, density, seed):
    """Output, weight gradient and bias gradient equal nn.Linear's to float32 rounding, empty rows included."""
    torch.manual_seed(seed)
    layer = SparseInputLinear(columns, outputs)
    twin = dense_twin(layer)
    x = sparse_matrix(rows, columns, density, seed)
    grad = torch.randn(rows, outputs)
    out, expected = layer(x), twin(x)
    assert out.dtype == torch.float32 and out.shape == expected.shape
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    out.backward(grad)
    expected.backward(grad)
    torch.testing.assert_close(layer.weight.grad, twin.weight.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(layer.bias.grad, twin.bias.grad, rtol=1e-5, atol=1e-5)


def test_dense_inputs_and_inputs_that_need_their_gradient_take_the_dense_product():
    """Above MAX_DENSITY, inside dense_products(), or with an input gradient to compute, the layer is nn.Linear
    (input gradient included)."""
    torch.manual_seed(0)
    layer = SparseInputLinear(12, 5)
    twin = dense_twin(layer)
    dense = sparse_matrix(9, 12, 1.0, 1)
    assert sparse_rows(dense).density > sparse_input.MAX_DENSITY
    assert torch.equal(layer(dense), twin(dense))
    sparse = sparse_matrix(9, 12, 0.1, 3)
    with dense_products():
        assert torch.equal(layer(sparse), twin(sparse))
    x = sparse_matrix(9, 12, 0.1, 2).requires_grad_()
    layer(x).sum().backward()
    torch.testing.assert_close(x.grad, layer.weight.detach().sum(dim=0).expand(9, 12))


def test_the_layer_keeps_nn_linears_parameters_and_state_dict():
    """Checkpoints of the dense layer load into it and back: the same keys and shapes."""
    layer = SparseInputLinear(30, 8)
    assert isinstance(layer, torch.nn.Linear)
    assert {k: v.shape for k, v in layer.state_dict().items()} == \
        {k: v.shape for k, v in torch.nn.Linear(30, 8).state_dict().items()}


def test_one_scan_serves_every_layer_reading_the_same_unchanged_tensor():
    """The same tensor (or the same view of it) gives the same SparseRows; a change in place, or another view,
    a new scan that sees it."""
    x = sparse_matrix(6, 10, 0.3, 3)
    first = sparse_rows(x[:, 2:])
    assert sparse_rows(x[:, 2:]) is first
    assert sparse_rows(x[:, 3:]) is not first
    x[0, 5] = 7.0
    again = sparse_rows(x[:, 2:])
    assert again is not first
    assert 7.0 in again.values[again.indptr[0]:again.indptr[1]].tolist()


def test_rows_by_column_hold_the_same_entries():
    """The column order lists every non-zero entry once, with its row and value."""
    x = sparse_matrix(20, 7, 0.3, 4).numpy()
    rows = SparseRows(x)
    start, row_of, values = rows.by_column()
    rebuilt = np.zeros_like(x)
    for k in range(7):
        rebuilt[row_of[start[k]:start[k + 1]], k] = values[start[k]:start[k + 1]]
    assert np.array_equal(rebuilt, x) and len(values) == np.count_nonzero(x)


def test_the_slot_sum_is_the_embedding_and_its_layer():
    """Per-slot tables summed at the slots' card types equal embedding each slot and applying the layer to the
    concatenation, and so do the embedding's and the layer's gradients; index floats round as the lookup does."""
    torch.manual_seed(5)
    types, dim, slots, outputs = 9, 3, 4, 6
    embedding = torch.nn.Parameter(torch.randn(types, dim))
    weight = torch.nn.Parameter(torch.randn(outputs, slots * dim))
    index = torch.tensor([[0, 1, 8, 3], [2.0000001, 7, 0, 0], [5, 5, 5, 5], [11, -1, 4, 6]], dtype=torch.float32)
    out = slot_sum(index, slot_tables(embedding, weight))
    grad = torch.randn(len(index), outputs)
    out.backward(grad)
    grads = embedding.grad.clone(), weight.grad.clone()
    embedding.grad = weight.grad = None
    looked_up = embedding[torch.round(index).long().clamp(0, types - 1)].reshape(len(index), -1)
    expected = looked_up @ weight.T
    expected.backward(grad)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grads[0], embedding.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grads[1], weight.grad, rtol=1e-5, atol=1e-5)


def extractor_and_observations(rows=64, seed=6):
    """A CompactExtractor with a first layer and the compact observations of games 30 random moves in."""
    games = VectorGame([2, 4] * (rows // 2), seeds=list(range(rows)))
    rng = np.random.default_rng(seed)
    for _ in range(30):
        games.step(random_legal(games.legal_action_mask(), rng))
    observations = games.observe(encoding="compact")
    torch.manual_seed(seed)
    space = gymnasium.spaces.Box(-1e9, 1e9, (observations.shape[1],), np.float32)
    return CompactExtractor(space, **extractor_kwargs(hidden=16)), torch.from_numpy(observations)


def test_the_extractors_sparse_first_layer_is_its_dense_one_on_real_observations():
    """On compact observations of real games, the extractor's features and parameter gradients through the sparse
    path equal those of its dense path (``dense_products``; an input that needs its gradient takes it too)."""
    extractor, observations = extractor_and_observations()
    grad = torch.randn(len(observations), 16)
    results = []
    for dense, x in ((False, observations), (True, observations), (False, observations.clone().requires_grad_())):
        extractor.zero_grad()
        with dense_products() if dense else contextlib.nullcontext():
            features = extractor(x)
            features.backward(grad)
        results.append((features.detach(), {k: p.grad.clone() for k, p in extractor.named_parameters()}))
    assert torch.equal(results[1][0], results[2][0])  # the same dense path
    results = results[:2]
    (sparse, sparse_grads), (dense, dense_grads) = results
    torch.testing.assert_close(sparse, dense, rtol=1e-5, atol=1e-5)
    assert sparse_grads.keys() == dense_grads.keys()
    for name in sparse_grads:
        torch.testing.assert_close(sparse_grads[name], dense_grads[name], rtol=1e-4, atol=1e-4, msg=name)


def test_under_bfloat16_autocast_the_first_layer_stays_float32():
    """The first layer's sparse products ignore autocast: its output is the float32 one."""
    extractor, observations = extractor_and_observations(rows=16)
    with torch.no_grad():
        plain = extractor(observations)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            autocast = extractor(observations)
    torch.testing.assert_close(autocast.float(), plain, rtol=0, atol=0)
