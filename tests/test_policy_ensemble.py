"""benchmarks/policy_ensemble.py: one network that plays the weighted sum of several policies' logits."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from packetrow_agents.policy import ModelFormatError, NumpyPolicy


def _script():
    path = Path(__file__).parents[1] / "benchmarks" / "policy_ensemble.py"
    spec = importlib.util.spec_from_file_location("policy_ensemble", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _policy(rng, widths, dim=None, slices=None, size=9, actions=5):
    """A random policy: onehot when ``dim`` is None, else compact with a ``dim``-wide embedding of 4 types."""
    count = 0 if slices is None else sum(stop - start for start, stop in slices)
    features = size if dim is None else size + count * (dim - 1)
    shapes = list(zip([features] + widths[:-1], widths))
    return NumpyPolicy([rng.normal(size=s) for s in shapes], [rng.normal(size=s[1]) for s in shapes],
                       rng.normal(size=(widths[-1], actions)), rng.normal(size=actions),
                       embedding=None if dim is None else rng.normal(size=(5, dim)),
                       index_slices=None if slices is None else np.array(slices))


def _observations(rng, size=9, slices=((1, 3), (5, 7))):
    x = rng.normal(size=(32, size)).astype(np.float32)
    for start, stop in slices:  # index floats: card types + 1, 0 for none
        x[:, start:stop] = rng.integers(0, 5, size=(32, stop - start))
    return x


@pytest.mark.parametrize("dims", [(None, None), (3, 3), (2, 5)])
def test_combined_logits_are_the_weighted_sum(dims):
    rng = np.random.default_rng(0)
    slices = None if dims[0] is None else [(1, 3), (5, 7)]
    policies = [_policy(rng, [6, 4], dims[0], slices), _policy(rng, [3, 7], dims[1], slices)]
    combined = _script().combine(policies, [1.0, 2.5])
    x = _observations(rng)
    np.testing.assert_allclose(combined.logits(x), policies[0].logits(x) + 2.5 * policies[1].logits(x),
                               rtol=1e-4, atol=1e-4)
    assert [w.shape[1] for w in combined.weights] == [9, 11]


def test_saved_and_loaded_it_plays_the_same(tmp_path):
    rng = np.random.default_rng(1)
    policies = [_policy(rng, [4, 4], 2, [(1, 3)]), _policy(rng, [4, 4], 2, [(1, 3)])]
    combined = _script().combine(policies, [0.5, 0.5])
    loaded = NumpyPolicy.load_npz(combined.save(tmp_path / "ensemble.npz"))
    x = _observations(rng, slices=((1, 3),))
    np.testing.assert_allclose(loaded.logits(x), combined.logits(x), rtol=1e-6)
    assert [member["weight"] for member in loaded.metadata["ensemble"]] == [0.5, 0.5]


def test_policies_that_read_different_inputs_are_refused():
    rng = np.random.default_rng(2)
    with pytest.raises(ModelFormatError, match="differ"):
        _script().combine([_policy(rng, [4]), _policy(rng, [4], size=8)], [1.0, 1.0])
    with pytest.raises(ModelFormatError, match="index slices"):
        _script().combine([_policy(rng, [4], 2, [(1, 3)]), _policy(rng, [4], 2, [(0, 2)])], [1.0, 1.0])
