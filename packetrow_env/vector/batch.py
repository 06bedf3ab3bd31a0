"""The state of B games as batched numpy arrays (one namedtuple, which compiled kernels take whole).

Row i of every array is game i; the fields are ``state.FIELDS`` (their Batch dtypes and empty values are there),
lists as padded arrays with a count (``COUNTS``). In phase pay a game keeps the payment options of the page shown
as card bitsets (card c is bit c % 64 of word c // 64) and how many options its shipment has in all. ``Batch`` is written out (see ``state``'s docstring for why);
tests/test_state_fields.py holds it to ``state.FIELDS``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..actions import MAX_PAYMENT_OPTIONS
from ..cards import NUM_CARDS
from ..state import ARRAY, FIELDS, LIST, SCALAR, State

WORDS = (NUM_CARDS + 63) // 64  # int64 words of one card bitset
HISTORY = 512  # initial history columns; VectorGame widens the array when a game needs more
COUNTS = {"chosen_order": ("n_chosen", np.int8), "pending": ("n_pending", np.int8), "history": ("n_history", np.int32)}


class Batch(NamedTuple):
    """B games' state arrays; scalars of State are arrays of length B."""

    location: np.ndarray  # int8[B, NUM_CARDS]: location code per card (state.py)
    deck: np.ndarray  # int16[B, NUM_BOARDS, MAX_DECK]: top first from deck_top; -1 padding
    deck_top: np.ndarray  # int16[B, NUM_BOARDS]
    deck_end: np.ndarray  # int16[B, NUM_BOARDS]
    current: np.ndarray  # int16[B, NUM_BOARDS, MAX_SUPPLY]: card id per slot, -1 empty
    future: np.ndarray  # int16[B, NUM_BOARDS, FUTURE_SLOTS]
    exhausted: np.ndarray  # int8[B, NUM_BOARDS]
    chosen: np.ndarray  # int8[B, NUM_BOARDS]
    cash: np.ndarray  # int32[B, MAX_PLAYERS]
    has_piece: np.ndarray  # int8[B, MAX_PLAYERS]
    starting_contract: np.ndarray  # int16[B, MAX_PLAYERS], -1 beyond num_players
    num_players: np.ndarray  # int8[B]
    supply_size: np.ndarray  # int8[B]
    round: np.ndarray  # int32[B]
    harbour_master: np.ndarray  # int8[B]
    current_player: np.ndarray  # int8[B] (the engine's value; VectorGame reports -1 where over)
    phase: np.ndarray  # int8[B]: state.PHASES index
    resume_phase: np.ndarray  # int8[B]: -1 unless in phase pay
    payment_page: np.ndarray  # int32[B]: in phase pay, the page of payment options shown
    current_board: np.ndarray  # int8[B], -1 none
    chosen_order: np.ndarray  # int8[B, NUM_BOARDS]
    n_chosen: np.ndarray  # int8[B]
    pending: np.ndarray  # int16[B, NUM_CONTRACTS]: staged contract ids in staging order
    n_pending: np.ndarray  # int8[B]
    history: np.ndarray  # int8[B, H]: actions taken, in order
    n_history: np.ndarray  # int32[B]
    options: np.ndarray  # int64[B, MAX_PAYMENT_OPTIONS, WORDS]: the page's payment option bitsets (phase pay)
    n_options: np.ndarray  # int8[B]: options on the page
    n_payments: np.ndarray  # int32[B]: options of the shipment in all (more pages follow while beyond the page)


def allocate(num_games: int, history: int = HISTORY) -> Batch:
    """Arrays for ``num_games`` games, every field at its empty value (``state.FIELDS``)."""
    arrays = {}
    for f in FIELDS:
        shape = (history,) if f.kind == LIST and not f.shape else f.shape  # the history grows
        arrays[f.name] = np.full((num_games,) + shape, f.empty, f.dtype)
        if f.kind == LIST:
            count, dtype = COUNTS[f.name]
            arrays[count] = np.zeros(num_games, dtype)
    return Batch(**arrays, options=np.zeros((num_games, MAX_PAYMENT_OPTIONS, WORDS), np.int64),
                 n_options=np.zeros(num_games, np.int8), n_payments=np.zeros(num_games, np.int32))


def from_games(games) -> Batch:
    """A batch holding these single-engine games (row i = games[i]), the page of payment options included."""
    games = list(games)
    longest = max((len(g.state.history) for g in games), default=0)
    out = allocate(len(games), max(HISTORY, longest))
    for i, game in enumerate(games):
        s = game.state
        for f in FIELDS:
            value = getattr(s, f.name)
            if f.kind == LIST:
                getattr(out, f.name)[i, :len(value)] = value
                getattr(out, COUNTS[f.name][0])[i] = len(value)
            else:
                getattr(out, f.name)[i] = value
        options = game.payment_page_options()  # [] unless in phase pay
        for k, option in enumerate(options):
            for c in option:
                out.options[i, k, c // 64] |= np.int64(1) << np.int64(c % 64)
        out.n_options[i] = len(options)
        out.n_payments[i] = len(game.payment_options())
    return out


def state_of(b: Batch, i: int, rng_state: dict) -> State:
    """Row i of a batch as an independent ``State`` (the generator's state after the deal given)."""
    s = State(int(b.num_players[i]), rng_state=rng_state)
    for f in FIELDS:
        row = getattr(b, f.name)[i]
        if f.kind == ARRAY:
            getattr(s, f.name)[...] = row
        elif f.kind == SCALAR:
            setattr(s, f.name, int(row))
        else:
            setattr(s, f.name, row[:getattr(b, COUNTS[f.name][0])[i]].tolist())
    return s
