"""PolicyStack: many NumpyPolicy networks of one architecture, each row through its own, in one compiled call."""

import numpy as np
import pytest

from packetrow_agents.policy import NumpyPolicy
from packetrow_agents.policy_batch import PolicyStack, same_architecture

INDEX_SLICES = np.array([[0, 6], [9, 12]])  # index floats at 0-5 and 9-11 of a 20-float observation
SIZE, NUM_TYPES, DIM, ACTIONS = 20, 7, 3, 11


def make_policy(rng, hidden=(16, 8), activation="tanh", compact=True) -> NumpyPolicy:
    features = SIZE + (9 * (DIM - 1) if compact else 0)
    widths = [features, *hidden]
    weights = [rng.normal(0, 0.4, (a, b)) for a, b in zip(widths, widths[1:])]
    biases = [rng.normal(0, 0.2, b) for b in hidden]
    embedding = rng.normal(0, 1, (NUM_TYPES + 1, DIM)) if compact else None
    return NumpyPolicy(weights, biases, rng.normal(0, 0.4, (widths[-1], ACTIONS)), rng.normal(0, 0.2, ACTIONS),
                       activation, embedding=embedding, index_slices=INDEX_SLICES if compact else None)


def observations(rng, count: int, compact=True) -> np.ndarray:
    x = rng.normal(0, 1, (count, SIZE)) * (rng.random((count, SIZE)) < 0.5)  # half zeros, as observations are
    if compact:
        x[:, 0:6] = rng.integers(0, NUM_TYPES + 1, (count, 6))
        x[:, 9:12] = rng.integers(0, NUM_TYPES + 1, (count, 3))
    return x.astype(np.float32)


@pytest.mark.parametrize("hidden", [(16, 8), (5,), ()])
@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("compact", [True, False])
def test_each_row_gets_its_own_policys_logits(hidden, activation, compact):
    """Row j's logits are NumpyPolicy.logits of policy ids[j] (to float32 rounding), for compact and one-hot
    input stages, any depth, either activation."""
    rng = np.random.default_rng(0)
    policies = [make_policy(rng, hidden, activation, compact) for _ in range(4)]
    stack = PolicyStack(policies)
    x = observations(rng, 50, compact)
    ids = rng.integers(0, 4, 50)
    expected = np.stack([policies[i].logits(x[j]) for j, i in enumerate(ids)])
    np.testing.assert_allclose(stack.logits(ids, x), expected, rtol=1e-5, atol=1e-5)


def test_out_of_range_card_types_are_clipped_as_numpy_policy_does():
    rng = np.random.default_rng(1)
    policies = [make_policy(rng) for _ in range(2)]
    x = observations(rng, 6)
    x[:, 0] = [-3, 0, 4.6, 7, 8, 40]
    ids = np.array([0, 1, 0, 1, 0, 1])
    expected = np.stack([policies[i].logits(x[j]) for j, i in enumerate(ids)])
    np.testing.assert_allclose(PolicyStack(policies).logits(ids, x), expected, rtol=1e-5, atol=1e-5)


def test_deterministic_actions_are_the_most_likely_legal_ones():
    rng = np.random.default_rng(2)
    policies = [make_policy(rng) for _ in range(3)]
    x = observations(rng, 200)
    ids = rng.integers(0, 3, 200)
    masks = rng.random((200, ACTIONS)) < 0.4
    masks[np.arange(200), rng.integers(0, ACTIONS, 200)] = True
    got = PolicyStack(policies).actions(ids, x, masks, rng, deterministic=True)
    for j, i in enumerate(ids):
        assert got[j] == policies[i].action(x[j], masks[j], deterministic=True)


def test_sampled_actions_follow_each_policys_masked_probabilities():
    """Sampling by the Gumbel trick: over many draws of one position, the frequencies match the policy's
    masked softmax (a chi-square-sized tolerance; the seed fixes the draws)."""
    rng = np.random.default_rng(3)
    policies = [make_policy(rng) for _ in range(2)]
    x = np.repeat(observations(rng, 1), 40_000, axis=0)
    mask = np.zeros(ACTIONS, bool)
    mask[[0, 3, 4, 9]] = True
    masks = np.repeat(mask[None], len(x), axis=0)
    for k, policy in enumerate(policies):
        ids = np.full(len(x), k)
        counts = np.bincount(PolicyStack(policies).actions(ids, x, masks, rng), minlength=ACTIONS)
        expected = policy.probabilities(x[0], mask)
        assert counts[~mask].sum() == 0
        assert np.abs(counts / len(x) - expected).max() < 4 * np.sqrt(0.25 / len(x))


def test_bad_input_is_refused_with_what_is_allowed():
    rng = np.random.default_rng(4)
    stack = PolicyStack([make_policy(rng), make_policy(rng)])
    x = observations(rng, 3)
    with pytest.raises(ValueError, match="policy indices 0-1"):
        stack.logits([0, 2, 1], x)
    with pytest.raises(ValueError, match=r"float\[2, 20\]"):
        stack.logits([0, 1], x)
    with pytest.raises(ValueError, match="a legal action in every row"):
        stack.actions([0, 1, 0], x, np.zeros((3, ACTIONS), bool), rng)
    with pytest.raises(ValueError, match="another architecture"):
        PolicyStack([make_policy(rng), make_policy(rng, hidden=(16, 9))])
    with pytest.raises(ValueError, match="at least one policy"):
        PolicyStack([])


def test_architectures_differ_in_shape_activation_or_input_stage():
    rng = np.random.default_rng(5)
    base = make_policy(rng)
    assert same_architecture(base, make_policy(rng))
    assert not same_architecture(base, make_policy(rng, hidden=(16, 8, 4)))
    assert not same_architecture(base, make_policy(rng, activation="relu"))
    assert not same_architecture(make_policy(rng, compact=False), make_policy(rng, hidden=(16, 8), compact=False,
                                                                             activation="relu"))


def test_the_kernels_tanh_is_within_float32_rounding_of_numpys():
    from packetrow_agents.policy_batch import _tanh

    x = np.linspace(-12, 12, 100_001, dtype=np.float32)
    h = x.copy()
    _tanh(h, len(h))
    assert np.abs(h - np.tanh(x)).max() < 4e-7
