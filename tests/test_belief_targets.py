"""Belief targets from the batched engine (``belief.hidden_locations``) and the scores of learned beliefs."""

from __future__ import annotations

import numpy as np
import pytest

from packetrow_env import belief, knowledge
from packetrow_env.cards import load
from packetrow_env.vector import VectorGame
from packetrow_env.vector.learner import random_legal

CARDS = load()


@pytest.mark.parametrize("mode", knowledge.MODES)
def test_hidden_locations_are_what_knowledge_hides_from_the_seat_to_act(mode):
    """Differential: at every step of 12 random games of 2-5 players, the labels are the true locations of exactly
    the cards ``knowledge.known_locations`` cannot place for the player to act."""
    vg = VectorGame(num_players=[2, 3, 4, 5] * 3, seeds=range(12))
    rng = np.random.default_rng(0)
    step = 0
    while not vg.is_over.all():
        if step % 7 == 0:
            rows = np.flatnonzero(~vg.is_over)
            labels = belief.hidden_locations(vg, mode, rows)
            for k, i in enumerate(rows.tolist()):
                game = vg.game(i)
                hidden = knowledge.known_locations(game.state, CARDS, game.current_player, mode) == knowledge.UNKNOWN
                want = np.where(hidden, game.state.location, belief.NOT_HIDDEN)
                assert np.array_equal(labels[k], want), (mode, i, step)
        vg.step(random_legal(vg.legal_action_mask(), rng))
        step += 1


def test_score_on_hand_values():
    """Two scored cards over three locations, one card not scored."""
    predicted = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0], [1.0, 0.0, 0.0]])
    labels = np.array([0, 1, belief.NOT_HIDDEN])
    exact = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    # per card: NLL -log .5, -log .8; Brier .25 + .25, .04 + .04; KL 0 + .5 log(.5 / .5) + .25 log(.25 / .5) + inf?
    got = belief.score(predicted, labels, bins=10)
    assert got["cards"] == 2
    assert got["nll"] == pytest.approx((np.log(2) - np.log(0.8)) / 2)
    assert got["brier"] == pytest.approx((0.5 + 0.08) / 2)
    # confidences .5 (bin 5, right by argmax: location 0) and .8 (bin 8, right): |.5 - 1| and |.8 - 1|, weighted
    assert got["ece"] == pytest.approx((0.5 + 0.2) / 2)
    assert got["kl"] is None
    # KL from the exact: card 0 puts .25 where the prediction has 0, so infinite; card 1: log(1 / .8)
    assert belief.score(predicted, labels, exact)["kl"] == np.inf
    finite = np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert belief.score(predicted, labels, finite)["kl"] == pytest.approx(np.log(1 / 0.8) / 2)
    assert belief.score(finite, labels, finite)["kl"] == 0.0


def test_score_of_exact_marginals_against_true_locations():
    """The exact prior marginals of a real position score finitely against its true locations, and KL 0 to itself."""
    from packetrow_env.seat_view import SeatView
    vg = VectorGame(num_players=3, seeds=[4])
    rng = np.random.default_rng(1)
    for _ in range(30):
        vg.step(random_legal(vg.legal_action_mask(), rng))
    game = vg.game(0)
    marginals = belief.location_marginals(SeatView(game, game.current_player))
    labels = belief.hidden_locations(vg)[0]
    got = belief.score(marginals, labels, marginals)
    assert got["cards"] == int((labels != belief.NOT_HIDDEN).sum()) > 0
    assert np.isfinite(got["nll"]) and got["kl"] == 0.0 and 0 <= got["ece"] <= 1


def test_score_refuses_bad_input():
    with pytest.raises(ValueError, match="labels' shape"):
        belief.score(np.ones((2, 3)) / 3, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="summing to 1"):
        belief.score(np.ones((2, 3)), np.array([0, 1]))
    with pytest.raises(ValueError, match="location codes"):
        belief.score(np.ones((2, 3)) / 3, np.array([0, 5]))
    with pytest.raises(ValueError, match="bins"):
        belief.score(np.ones((2, 3)) / 3, np.array([0, 1]), bins=0)
