"""One field table (``state.FIELDS``): the state classes and the batch's arrays agree with it (docs/design.md
"The engine")."""

from __future__ import annotations

import numpy as np
import pytest

from packetrow_env.engine import Game
from packetrow_env.seat_view import PublicState
from packetrow_env.state import ARRAY, ARRAYS, FIELDS, LAYOUT, LIST, LISTS, SCALAR, SCALARS, State
from packetrow_env.vector import VectorGame
from packetrow_env.vector.batch import COUNTS, Batch, allocate, from_games, state_of
from tests.positions import random_play


def positions():
    """Games at every player count, mid-game, over, and waiting for a payment choice."""
    games = [random_play(Game.new(n, seed=n), 40 * n, seed=n) for n in range(2, 6)]
    games.append(random_play(Game.new(3, seed=9), 10_000, seed=9))
    paying = Game.new(4, seed=0)
    rng = np.random.default_rng(0)
    while paying.phase != "pay" and not paying.is_over:
        paying.step(int(rng.choice(paying.legal_actions())))
        if paying.is_over:
            paying = Game.new(4, seed=int(rng.integers(1 << 30)))
    games.append(paying)
    return games


def values(state) -> dict:
    """Every field of a State (or PublicState) as comparable plain values."""
    return {f.name: np.asarray(getattr(state, f.name)).tolist() if f.kind != SCALAR else getattr(state, f.name)
            for f in FIELDS if hasattr(state, f.name)}


def test_the_table_names_each_field_once_and_sorts_it_by_kind():
    names = [f.name for f in FIELDS]
    assert len(set(names)) == len(names)
    assert set(ARRAYS) | set(SCALARS) | set(LISTS) == set(names)
    assert {f.kind for f in FIELDS} == {ARRAY, SCALAR, LIST}
    assert list(LAYOUT) == list(ARRAYS)
    assert set(COUNTS) == set(LISTS)


def test_state_slots_are_the_table_and_its_buffer():
    assert set(State.__slots__) == {f.name for f in FIELDS} | {"buffer", "rng_state"}
    s = State(4, rng_state={})
    for name, (offset, shape) in LAYOUT.items():
        assert getattr(s, name).shape == shape
        assert np.shares_memory(getattr(s, name), s.buffer)


def test_batch_class_is_the_table_with_counts_and_payment_options():
    """Batch is written out for the kernels' readers: it must list the table's fields in the table's order."""
    expected = []
    for f in FIELDS:
        expected.append(f.name)
        if f.kind == LIST:
            expected.append(COUNTS[f.name][0])
    assert list(Batch._fields) == expected + ["options", "n_options", "n_payments"]


def test_allocate_gives_each_field_its_dtype_shape_and_empty_value():
    b = allocate(3, history=7)
    for f in FIELDS:
        array = getattr(b, f.name)
        shape = (7,) if f.name == "history" else f.shape
        assert array.dtype == f.dtype and array.shape == (3,) + shape, f.name
        assert (array == f.empty).all(), f.name
    for name, dtype in COUNTS.values():
        assert getattr(b, name).dtype == dtype and (getattr(b, name) == 0).all()


def test_state_copy_carries_every_field_and_shares_nothing_mutable():
    """State.copy is written out for speed; this holds it to the table."""
    for game in positions():
        s = game.state
        copy = s.copy()
        assert values(copy) == values(s)
        assert copy.rng_state is s.rng_state and not np.shares_memory(copy.buffer, s.buffer)
        for name in LISTS:
            assert getattr(copy, name) is not getattr(s, name)


@pytest.mark.parametrize("game", positions(), ids=lambda g: f"{g.num_players}p-{g.phase}")
def test_a_batch_row_holds_every_field_of_a_game(game):
    """from_games and state_of copy every field of the table, both ways."""
    b = from_games([game])
    for f in FIELDS:
        value = getattr(game.state, f.name)
        if f.kind == LIST:
            count = getattr(b, COUNTS[f.name][0])[0]
            assert getattr(b, f.name)[0, :count].tolist() == value, f.name
        else:
            assert np.array_equal(getattr(b, f.name)[0], value), f.name
    back = state_of(b, 0, game.state.rng_state)
    assert values(back) == values(game.state)
    assert back.rng_state is game.state.rng_state
    assert VectorGame.from_games([game]).game(0).to_dict() == game.to_dict()


def test_public_state_carries_the_public_fields_read_only():
    assert set(PublicState.__slots__) == {f.name for f in FIELDS if f.public}
    assert {"location", "deck", "starting_contract"} == {f.name for f in FIELDS if not f.public}
    for game in positions():
        public = PublicState(game.state)
        assert values(public) == {k: v for k, v in values(game.state).items() if k in PublicState.__slots__}
        for name in PublicState.__slots__:
            value = getattr(public, name)
            if isinstance(value, np.ndarray):
                assert not value.flags.writeable, name
            else:
                assert isinstance(value, (int, tuple)), name

