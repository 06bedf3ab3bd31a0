"""The state of B games as batched numpy arrays (one namedtuple, which compiled kernels take whole).

Row i of every array is game i; the fields mirror ``state.State`` field by field, lists as padded
arrays with a count (``chosen_order``/``n_chosen``, ``pending``/``n_pending``, ``history``/``n_history``).
Payment options of a game in phase pay are kept as card bitsets (card c is bit c % 64 of word c // 64).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..actions import MAX_PAYMENT_OPTIONS
from ..cards import NUM_CARDS, NUM_CONTRACTS
from ..state import FUTURE_SLOTS, MAX_DECK, MAX_PLAYERS, MAX_SUPPLY, NUM_BOARDS

WORDS = (NUM_CARDS + 63) // 64  # int64 words of one card bitset
HISTORY = 512  # initial history columns; VectorGame widens the array when a game needs more


class Batch(NamedTuple):
    """B games' state arrays; scalars of State are arrays of length B."""

    location: np.ndarray  # int8[B, NUM_CARDS]: location code per card (state.py)
    deck: np.ndarray  # int16[B, 4, MAX_DECK]: top first from deck_top; -1 padding
    deck_top: np.ndarray  # int16[B, 4]
    deck_end: np.ndarray  # int16[B, 4]
    current: np.ndarray  # int16[B, 4, MAX_SUPPLY]: card id per slot, -1 empty
    future: np.ndarray  # int16[B, 4, FUTURE_SLOTS]
    exhausted: np.ndarray  # int8[B, 4]
    chosen: np.ndarray  # int8[B, 4]
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
    current_board: np.ndarray  # int8[B], -1 none
    chosen_order: np.ndarray  # int8[B, 4]
    n_chosen: np.ndarray  # int8[B]
    pending: np.ndarray  # int16[B, NUM_CONTRACTS]: staged contract ids in staging order
    n_pending: np.ndarray  # int8[B]
    options: np.ndarray  # int64[B, MAX_PAYMENT_OPTIONS, WORDS]: payment option bitsets (phase pay)
    n_options: np.ndarray  # int8[B]
    history: np.ndarray  # int8[B, H]: actions taken, in order
    n_history: np.ndarray  # int32[B]


def allocate(num_games: int, history: int = HISTORY) -> Batch:
    """Arrays for ``num_games`` games, every field at its empty value (-1 card ids, zeros elsewhere)."""
    b = num_games
    return Batch(
        location=np.zeros((b, NUM_CARDS), np.int8),
        deck=np.full((b, NUM_BOARDS, MAX_DECK), -1, np.int16),
        deck_top=np.zeros((b, NUM_BOARDS), np.int16),
        deck_end=np.zeros((b, NUM_BOARDS), np.int16),
        current=np.full((b, NUM_BOARDS, MAX_SUPPLY), -1, np.int16),
        future=np.full((b, NUM_BOARDS, FUTURE_SLOTS), -1, np.int16),
        exhausted=np.zeros((b, NUM_BOARDS), np.int8),
        chosen=np.zeros((b, NUM_BOARDS), np.int8),
        cash=np.zeros((b, MAX_PLAYERS), np.int32),
        has_piece=np.zeros((b, MAX_PLAYERS), np.int8),
        starting_contract=np.full((b, MAX_PLAYERS), -1, np.int16),
        num_players=np.zeros(b, np.int8),
        supply_size=np.zeros(b, np.int8),
        round=np.zeros(b, np.int32),
        harbour_master=np.zeros(b, np.int8),
        current_player=np.zeros(b, np.int8),
        phase=np.zeros(b, np.int8),
        resume_phase=np.full(b, -1, np.int8),
        current_board=np.full(b, -1, np.int8),
        chosen_order=np.full((b, NUM_BOARDS), -1, np.int8),
        n_chosen=np.zeros(b, np.int8),
        pending=np.full((b, NUM_CONTRACTS), -1, np.int16),
        n_pending=np.zeros(b, np.int8),
        options=np.zeros((b, MAX_PAYMENT_OPTIONS, WORDS), np.int64),
        n_options=np.zeros(b, np.int8),
        history=np.zeros((b, history), np.int8),
        n_history=np.zeros(b, np.int32),
    )


def from_games(games) -> Batch:
    """A batch holding these single-engine games (row i = games[i]), payment options included."""
    games = list(games)
    longest = max((len(g.state.history) for g in games), default=0)
    out = allocate(len(games), max(HISTORY, longest))
    for i, game in enumerate(games):
        s = game.state
        for name in ("location", "deck", "deck_top", "deck_end", "current", "future", "exhausted", "chosen", "cash",
                     "has_piece", "starting_contract"):
            getattr(out, name)[i] = getattr(s, name)
        for name in ("num_players", "supply_size", "round", "harbour_master", "current_player", "phase",
                     "resume_phase", "current_board"):
            getattr(out, name)[i] = getattr(s, name)
        for name, count in (("chosen_order", "n_chosen"), ("pending", "n_pending"), ("history", "n_history")):
            values = getattr(s, name)
            getattr(out, name)[i, :len(values)] = values
            getattr(out, count)[i] = len(values)
        options = game.payment_options()  # [] unless in phase pay
        for k, option in enumerate(options):
            for c in option:
                out.options[i, k, c // 64] |= np.int64(1) << np.int64(c % 64)
        out.n_options[i] = len(options)
    return out
