"""The batch's compiled shuffles against numpy's generator (the deals: tests/test_vector.py), and the random
legal choice."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from packetrow_env.vector import VectorGame, seeded_shuffle
from packetrow_env.vector.learner import random_legal


@settings(max_examples=200, deadline=None)
@given(seed=st.one_of(st.integers(0, 2 ** 32 + 5), st.integers(0, 2 ** 63 - 1)),
       sizes=st.lists(st.integers(0, 70), min_size=1, max_size=6))
def test_shuffles_and_state_match_numpy(seed, sizes):
    """seed_state + shuffle draw what default_rng(seed).permutation draws, and leave the generator where it does."""
    state = np.zeros(seeded_shuffle.STATE_WORDS, np.uint64)
    seeded_shuffle.seed_state(seed, state)
    ref = np.random.default_rng(seed)
    assert seeded_shuffle.state_dict(state) == ref.bit_generator.state
    for n in sizes:
        values = np.arange(n, dtype=np.int64) * 3 + 1
        expected = ref.permutation(values)
        seeded_shuffle.shuffle(state, values)
        assert values.tolist() == expected.tolist()
        assert seeded_shuffle.state_dict(state) == ref.bit_generator.state


def test_seeds_outside_int64_are_refused_with_the_range():
    with pytest.raises(ValueError, match=r"from 0 to 2\*\*63 - 1"):
        VectorGame(2, seeds=[2 ** 63])
    with pytest.raises(ValueError, match=r"from 0 to 2\*\*63 - 1"):
        VectorGame(2, seeds=[-1])


def test_random_legal_is_uniform_over_legal_actions_and_zero_without_any():
    rng = np.random.default_rng(0)
    masks = np.zeros((3, 6), bool)
    masks[0, [1, 4]] = True
    masks[2, [0, 2, 5]] = True
    picks = np.array([random_legal(masks, rng) for _ in range(3000)])
    assert set(picks[:, 0]) == {1, 4} and set(picks[:, 2]) == {0, 2, 5}
    assert (picks[:, 1] == 0).all()
    assert abs((picks[:, 0] == 1).mean() - 0.5) < 0.05
    assert all(abs((picks[:, 2] == a).mean() - 1 / 3) < 0.05 for a in (0, 2, 5))
