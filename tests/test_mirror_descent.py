"""The search's mirror-descent update: the closed form against a hand computation, its limits, the shrunk
advantages."""

from __future__ import annotations

import math

import numpy as np
import pytest

from packetrow_agents.mirror_descent import advantages, check_step, mirror_descent_policy

POLICY = np.array([0.6, 0.3, 0.1])
Q = np.array([0.0, 0.5, -0.2])


def test_the_update_matches_the_formula_by_hand():
    eta, alpha = 2.0, 0.5
    magnet = np.array([0.2, 0.2, 0.6])
    power = 1 / (1 + alpha * eta)  # 1/2
    hand = [(0.6 * 0.2 ** 1.0 * math.exp(0.0)) ** power, (0.3 * 0.2 * math.exp(1.0)) ** power,
            (0.1 * 0.6 * math.exp(-0.4)) ** power]
    expected = np.array(hand) / sum(hand)
    np.testing.assert_allclose(mirror_descent_policy(POLICY, Q, eta, alpha, magnet), expected, rtol=1e-12)


def test_without_a_magnet_it_is_the_exponentiated_step():
    expected = POLICY * np.exp(3.0 * Q)
    np.testing.assert_allclose(mirror_descent_policy(POLICY, Q, 3.0), expected / expected.sum(), rtol=1e-12)


def test_the_uniform_magnet_is_the_default():
    np.testing.assert_allclose(mirror_descent_policy(POLICY, Q, 2.0, 0.5),
                               mirror_descent_policy(POLICY, Q, 2.0, 0.5, np.full(3, 1 / 3)), rtol=1e-12)


@pytest.mark.parametrize("alpha", [0.0, 0.1, 5.0])
def test_eta_zero_gives_the_policy(alpha):
    np.testing.assert_allclose(mirror_descent_policy(POLICY, Q, 0.0, alpha), POLICY, rtol=1e-12)


def test_a_large_eta_concentrates_on_the_best_q():
    updated = mirror_descent_policy(POLICY, Q, 200.0)
    assert updated[1] > 1 - 1e-12 and np.argmax(updated) == 1


def test_a_large_magnet_weight_goes_to_the_magnet():
    magnet = np.array([0.1, 0.1, 0.8])
    np.testing.assert_allclose(mirror_descent_policy(POLICY, Q, 1.0, 1e6, magnet), magnet, atol=1e-5)


def test_a_constant_added_to_q_changes_nothing_and_no_mass_stays_no_mass():
    np.testing.assert_allclose(mirror_descent_policy(POLICY, Q + 7.0, 2.0, 0.3),
                               mirror_descent_policy(POLICY, Q, 2.0, 0.3), rtol=1e-12)
    updated = mirror_descent_policy(np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.0, 9.0]), 5.0)
    assert updated[2] == 0.0 and np.allclose(updated[:2], 0.5)


def test_advantages_are_paired_gains_shrunk_by_their_standard_error():
    rewards = np.array([[0.0, 0.5, 1.0], [1.0, 1.5, 0.0], [-1.0, -0.5, -1.0], [0.0, 0.5, 1.0]])
    got = advantages(rewards)
    assert got[0] == 0.0
    assert got[1] == pytest.approx(0.5)  # the same gain on every deal: no standard error, no shrinking
    gain = np.array([1.0, -1.0, 0.0, 1.0])  # candidate 2's gains, paired by deal
    mean, error2 = gain.mean(), gain.var(ddof=1) / 4
    assert got[2] == pytest.approx(mean * mean ** 2 / (mean ** 2 + error2))
    assert 0 < got[2] < mean


def test_advantages_of_one_deal_are_zero():
    np.testing.assert_array_equal(advantages(np.array([[0.0, 1.0, -1.0]])), np.zeros(3))


@pytest.mark.parametrize("value", [-0.1, math.inf, math.nan, "1", True, None])
def test_check_step_refuses_what_is_not_a_non_negative_number(value):
    with pytest.raises(ValueError, match="eta must be a non-negative finite number"):
        check_step("eta", value)
