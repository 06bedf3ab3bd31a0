"""The seat's view agents act on (packetrow_env.seat_view.SeatView): what the seat knows and nothing else (R-INFO)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packetrow_env.engine import Game
from packetrow_env.observation import encoder
from packetrow_env.seat_view import PublicState, SeatView
from tests.test_leaks import random_position, twins

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=20,
                    suppress_health_check=[HealthCheck.too_slow])


def facts(view: SeatView) -> dict:
    """Everything an agent can read from a view, as comparable values."""
    s = view.state
    out = {
        "mask": view.action_mask.tobytes(), "legal": view.legal_actions(), "observation": view.observation.tobytes(),
        "compact": view.compact_observation().tobytes(),
        "known_hands": view.known_hands(), "holds": view.holds_starting_contract(), "decks": view.deck_contents(),
        "unseen": view.unseen(), "text": view.render_text(), "scores": view.scores(), "clock": view.time_left(0.1),
        "phase": view.phase, "player": view.current_player, "over": view.is_over, "payments": view.payment_options(),
        "own": view.hand(), "ships": [view.ships(q) for q in range(view.num_players)],
        "actions": [view.describe_action(a) for a in view.legal_actions()],
        "sample": view.sample_determinization(np.random.default_rng(7)).to_dict(),
    }
    for name in PublicState.__slots__:
        value = getattr(s, name)
        out["state." + name] = value.tobytes() if isinstance(value, np.ndarray) else value
    return out


@SETTINGS
@given(st.integers(2, 5), st.integers(0, 2**31 - 1), st.integers(0, 200))
def test_R_INFO_2_a_seat_view_is_identical_on_hidden_twins(n, seed, steps):
    """R-INFO-2, R-INFO-4: every accessor of a tracked or online view gives the same on positions the seat cannot
    tell apart, so an agent reading only its view cannot depend on a hidden card."""
    data = random_position(n, seed, steps)
    rng = np.random.default_rng(seed)
    for seat in range(n):
        for mode in ("tracked", "online"):
            base = facts(SeatView(Game.from_dict(data), seat, mode))
            for name, twin in twins(data, seat, rng, mode):
                other = facts(SeatView(Game.from_dict(twin), seat, mode))
                assert [key for key in base if base[key] != other[key]] == [], (name, mode)


def test_a_view_holds_no_hidden_card():
    game = Game.new(3, seed=4)
    view = SeatView(game, 1)
    assert not hasattr(view.state, "location") and not hasattr(view.state, "deck")
    assert not hasattr(view.state, "starting_contract") and not hasattr(view, "game")
    assert view.hand() == game.hand(1) == view.hand(1)
    with pytest.raises(ValueError, match="only his own hand"):
        view.hand(2)
    assert view.known_hand(2) == [c for c in game.hand(2) if c != int(game.state.starting_contract[2])]
    with pytest.raises(ValueError, match="read-only"):
        view.state.cash[0] = 99
    with pytest.raises(ValueError, match="read-only"):
        view.action_mask[0] = True
    assert not view.action_mask.any()  # seat 0 is to act: seat 1 has no legal action
    assert SeatView(game).seat == 0 and SeatView(game).action_mask.any()


def test_a_view_gives_only_the_observations_its_mode_covers():
    game = Game.new(2, seed=1)
    view = SeatView(game, 0, "tracked")
    enc = encoder()
    assert np.array_equal(view.observation, enc.encode(game, 0, "tracked"))
    assert np.array_equal(view.observe("table"), enc.encode(game, 0, "table"))
    for mode in ("online", "full"):
        with pytest.raises(ValueError, match="cannot give"):
            view.observe(mode)
    online = SeatView(game, 0, "online")
    assert np.array_equal(online.observe("online"), enc.encode(game, 0, "online"))
    assert online.deck_contents() is not None and view.deck_contents() is None
    with pytest.raises(ValueError, match="table mode"):
        SeatView(game, 0, "table").sample_determinization(np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown observation mode"):
        SeatView(game, 0, "psychic")
    with pytest.raises(ValueError, match="observer must be a seat number"):
        SeatView(game, 2)


def test_a_view_gives_the_compact_observation_of_the_modes_it_covers():
    from packetrow_env.compact_observation import encoder as compact_encoder

    game = Game.new(3, seed=5)
    for _ in range(9):
        game.step(game.legal_actions()[-1])
    view = SeatView(game, 1, "online")
    for mode in ("table", "tracked", "online"):
        assert np.array_equal(view.compact_observation(mode), compact_encoder().encode(game, 1, mode))
    assert np.array_equal(view.compact_observation(), compact_encoder().encode(game, 1, "online"))
    with pytest.raises(ValueError, match="cannot give a full observation"):
        view.compact_observation("full")
    bare = SeatView.of_observation(view.observation, view.action_mask, "online")
    with pytest.raises(ValueError, match="only an observation and a mask; a compact observation needs"):
        bare.compact_observation()


def test_a_view_of_an_observation_holds_only_it():
    game = Game.new(2, seed=1)
    vector = encoder().encode(game, 0, "tracked")
    view = SeatView.of_observation(vector, game.legal_action_mask().astype(np.int8))
    assert not view.has_game and view.observation is not None and view.action_mask.dtype == bool
    assert view.legal_actions() == game.legal_actions()
    for read in (lambda: view.known_hands(), lambda: view.observe("table"), lambda: view.scores(),
                 lambda: view.sample_determinization(np.random.default_rng(0))):
        with pytest.raises(ValueError, match="only an observation and a mask"):
            read()
    with pytest.raises(ValueError, match="needs the observation and the action mask"):
        SeatView(None)


def test_the_env_hands_out_seat_views():
    import packetrow_env

    env = packetrow_env.env(num_players=3, observation_mode="online")
    env.reset(seed=2)
    agent = env.agent_selection
    view = env.unwrapped.seat_view()
    assert view.seat == int(agent.split("_")[1]) and view.mode == "online"
    assert np.array_equal(view.observation, env.observe(agent)["observation"])
    assert np.array_equal(view.action_mask, env.observe(agent)["action_mask"].astype(bool))
    other = env.unwrapped.seat_view(env.possible_agents[(view.seat + 1) % 3])
    assert not other.action_mask.any()
