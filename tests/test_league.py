"""The RLlib league freezes main's initial weights, then a copy whenever main's recent win rate reaches the threshold.

Runs without Ray: the league's decision is plain Python (rllib_selfplay imports Ray only when it trains).
"""

from packetrow_train.rllib_selfplay import League


def test_main_is_frozen_first_at_the_start_then_at_the_threshold():
    league = League(win_rate_threshold=0.7)
    assert league.freeze(None) and league.versions == 1  # the initial weights, before any game
    assert not league.freeze(None)  # no game finished in an iteration: nothing to judge
    assert not league.freeze(0.69) and league.versions == 1
    assert league.freeze(0.7) and league.versions == 2
    assert league.freeze(0.95) and league.versions == 3


def test_a_threshold_of_zero_freezes_every_iteration():
    league = League(win_rate_threshold=0.0)
    assert [league.freeze(rate) for rate in (None, 0.0, 0.1)] == [True, True, True]
    assert league.versions == 3
