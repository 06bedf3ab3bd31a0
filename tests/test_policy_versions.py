"""Policies exported for env v1 keep playing v2 games (issue 25): they read the v1 vector inside the v2 one.

v2 appends ``by_board`` to the base layout of both encodings; ``Encoder.v1_observation`` and
``CompactEncoder.v1_observation`` cut it out again (a mode's own pieces, ``deck_contents`` or ``deck_*``, follow
the base layout in both versions), and ``PolicyAgent`` feeds a v1 policy that vector in ``act`` and ``act_batch``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packetrow_agents.base import Turns
from packetrow_agents.policy import NumpyPolicy, PolicyAgent
from packetrow_env import actions
from packetrow_env.compact_observation import ENCODINGS, NUM_SLOTS, encoder_for
from packetrow_env.engine import Game
from packetrow_env.observation import MODES
from packetrow_env.seat_view import SeatView
from packetrow_env.vector import VectorGame
from packetrow_env.vector.learner import random_legal
from tests.positions import random_play

# The v1 layouts (env v1, before by_board): name, offset, shape of every piece of the base vector.
V1_ONEHOT = [("num_players", 0, (4,)), ("round", 4, (1,)), ("phase", 5, (4,)), ("current_board", 9, (4,)),
             ("chosen_boards", 13, (4,)), ("exhausted", 17, (4,)), ("deck_sizes", 21, (4,)), ("seats", 25, (5, 5)),
             ("holds_starting_contract", 50, (5,)), ("ships", 55, (5, 6)), ("pending_shipment", 85, (36,)),
             ("current_supply", 121, (4, 4, 68)), ("future_supply", 1209, (4, 2, 68)), ("hands", 1753, (5, 68)),
             ("discarded", 2093, (68,)), ("unseen", 2161, (68,)), ("paying", 2229, (1,)),
             ("payment_options", 2230, (12, 16))]
V1_COMPACT = [("current_supply", 0, (4, 4)), ("future_supply", 16, (4, 2)), ("num_players", 24, (4,)),
              ("round", 28, (1,)), ("phase", 29, (4,)), ("current_board", 33, (4,)), ("chosen_boards", 37, (4,)),
              ("exhausted", 41, (4,)), ("deck_sizes", 45, (4,)), ("seats", 49, (5, 5)),
              ("holds_starting_contract", 74, (5,)), ("ships", 79, (5, 6)), ("pending_shipment", 109, (36,)),
              ("paying", 145, (1,)), ("payment_options", 146, (12, 15)), ("hands", 326, (5, 62)),
              ("discarded", 636, (68,))]
V1_SIZES = {"onehot": (2422, 2694), "compact": (704, 772)}  # tracked and table; online and full


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_v1_layout_is_the_prefix_of_the_v2_base_layout(encoding):
    coder = encoder_for(encoding)
    v1 = V1_ONEHOT if encoding == "onehot" else V1_COMPACT
    assert [(p.name, p.offset, p.shape) for p in coder.pieces[:len(v1)]] == v1
    assert coder.v1_size == V1_SIZES[encoding][0] < coder.size
    assert [coder.v1_size_of(mode) for mode in ("tracked", "online")] == list(V1_SIZES[encoding])


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_v1_observation_is_the_v1_vector_of_every_mode(encoding):
    """The prefix, then the mode's own pieces, which follow the base layout in both versions; batches too."""
    coder = encoder_for(encoding)
    game = random_play(Game.new(4, seed=2), 120, 2)
    for mode in MODES:
        vector = coder.encode(game, 1, mode)
        old = coder.v1_observation(vector)
        assert old.dtype == np.float32 and old.shape == (coder.v1_size_of(mode),)
        assert np.array_equal(old[:coder.v1_size], vector[:coder.v1_size])
        assert np.array_equal(old[coder.v1_size:], vector[coder.size:])  # deck_contents / deck_* (online, full)
        assert np.array_equal(coder.v1_observation(np.stack([vector, vector])), np.stack([old, old]))


# The agent shipped until env v2's retrained one (trained on env v1, 60 outputs): a real v1 export for the adapter
V1_MODEL = Path(__file__).resolve().parent / "data" / "ppo_packetrow_v1.npz"


def v1_policy(encoding: str, mode: str = "tracked", seed: int = 0) -> NumpyPolicy:
    """A random policy of the v1 observation in ``encoding`` and ``mode``, with every v1 action."""
    coder = encoder_for(encoding)
    rng = np.random.default_rng(seed)
    features, stage = coder.v1_size_of(mode), {}
    if encoding == "compact":
        stage = {"embedding": rng.normal(size=(coder.num_types + 1, 4)), "index_slices": [[0, NUM_SLOTS]]}
        features += NUM_SLOTS * 3
    return NumpyPolicy([rng.normal(size=(features, 16)) / np.sqrt(features)], [rng.normal(size=16)],
                       rng.normal(size=(16, actions.NUM_ACTIONS)), rng.normal(size=actions.NUM_ACTIONS),
                       observation_mode=mode, **stage)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("mode", ["tracked", "online"])
def test_a_v1_policy_reads_its_v1_vector_in_act(encoding, mode):
    agent = PolicyAgent(policy=v1_policy(encoding, mode))
    coder = encoder_for(encoding)
    game = Game.new(3, seed=5)
    moves = 0
    while not game.is_over and moves < 150:
        view = SeatView(game, mode=mode)
        vector = coder.v1_observation(coder.encode(game, game.current_player, mode))
        action = agent.act(view)
        assert action == agent.policy.action(vector, game.legal_action_mask())
        if encoding == "onehot":  # a view of the v2 vector alone is read the same way
            assert agent.act(SeatView.of_observation(coder.encode(game, game.current_player, mode),
                                                     game.legal_action_mask(), mode)) == action
        game.step(action)
        moves += 1


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_v1_and_v2_policies_move_batched_as_they_move_alone(encoding):
    """act_batch: a v1 policy reads the v1 vector of the batch's observations, a v2 policy the vector itself."""
    coder = encoder_for(encoding)
    v2 = v1_policy(encoding, seed=1)
    rng = np.random.default_rng(1)
    v2 = NumpyPolicy([rng.normal(size=(v2.weights[0].shape[0] + coder.size - coder.v1_size, 16))], v2.biases,
                     v2.action_weight, v2.action_bias, embedding=v2.embedding, index_slices=v2.index_slices)
    agents = [PolicyAgent(policy=v1_policy(encoding)), PolicyAgent(policy=v2)]
    vg = VectorGame([2, 3, 4, 5] * 3, seeds=list(range(12)))
    for _ in range(40):
        masks = vg.legal_action_mask()
        vg.step(np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks]))
    rows = np.flatnonzero(vg.current_player >= 0)
    turns = Turns(vg, rows, vg.current_player[rows], np.arange(len(rows)) % 2, vg.legal_action_mask()[rows],
                  "tracked", encoding, np.random.default_rng(0))
    got = PolicyAgent.act_batch(agents, turns)
    assert got.tolist() == [agents[p].act(turns.view(k)) for k, p in enumerate(turns.player.tolist())]
