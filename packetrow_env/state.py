"""The game state: numpy arrays (views into one flat buffer, so a clone is one copy) and a few scalars.

``FIELDS`` is the one list of a position's fields. ``State``'s slots and buffer layout, ``seat_view.PublicState``,
a batch's arrays (``vector.batch.allocate``) and the copies between a ``Game`` and a batch row are built from it.
Two lists stay written out, and tests/test_state_fields.py holds them to the table: ``State.copy`` (for speed: a
loop over the fields makes a clone slower, docs/benchmarks.md) and the ``vector.batch.Batch`` class (a NamedTuple
the compiled kernels read by attribute; written out it shows each array's dtype and shape where the kernels' reader
looks, and a generated class would be no faster).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .cards import NUM_BOARDS, NUM_CARDS, NUM_CONTRACTS

MAX_PLAYERS = 5
MIN_PLAYERS = 2
MAX_DECK = 42  # the largest deck of R-COMP-2
MAX_SUPPLY = 4
FUTURE_SLOTS = 2

SUPPLY_SIZE = {2: 2, 3: 2, 4: 3, 5: 4}  # R-SETUP-4
END_THRESHOLD = {2: 1, 3: 1, 4: 2, 5: 3}  # R-END-1
STARTING_CASH = 25  # R-SETUP-6
TWO_PLAYER_REMOVAL = 6  # R-SETUP-3
# No game lasts longer (R-END-2): with 3 per deck card + 2 per future card + 1 per current card, every round
# lowers the total by at least 1 (a chosen board held a card; a take or the refill moves it on), and the
# 160 deck cards start below 3 * 160.
MAX_ROUNDS = 3 * 160 + 1

# Where a card is: one code per card in State.location.
DECK = 0  # + board
DISCARD = 4  # + board
CURRENT = 8  # + board
FUTURE = 12  # + board
REMOVED = 16
HAND = 17  # + seat
SHIPS = 22  # + seat (merchant ships lie face up in front of their owner)
NUM_LOCATIONS = SHIPS + MAX_PLAYERS

PHASES = ("choose_board", "take", "must_take", "over", "pay")
CHOOSE_BOARD, TAKE, MUST_TAKE, OVER, PAY = range(len(PHASES))


class Field(NamedTuple):
    """One field of a position: how ``State`` keeps it and how a ``vector.batch.Batch`` row holds it."""

    name: str
    kind: str  # ARRAY: a view into State.buffer; SCALAR: an int; LIST: a Python list (a Batch row: padded + count)
    shape: tuple[int, ...]  # per game; a list's capacity in a Batch row (history's grows, so it has none)
    dtype: type  # the Batch array's dtype (State's buffer is int32 throughout)
    empty: int  # a Batch's value before the deal
    public: bool  # every seat may read it (R-INFO-1), so ``seat_view.PublicState`` carries it


ARRAY, SCALAR, LIST = "array", "scalar", "list"

# A position's fields, in the order of State's buffer and of a Batch (see the module docstring).
FIELDS = (
    Field("location", ARRAY, (NUM_CARDS,), np.int8, 0, False),  # location code per card (above)
    Field("deck", ARRAY, (NUM_BOARDS, MAX_DECK), np.int16, -1, False),  # top first from deck_top; -1 padding
    Field("deck_top", ARRAY, (NUM_BOARDS,), np.int16, 0, True),
    Field("deck_end", ARRAY, (NUM_BOARDS,), np.int16, 0, True),
    Field("current", ARRAY, (NUM_BOARDS, MAX_SUPPLY), np.int16, -1, True),  # card id per slot, -1 empty
    Field("future", ARRAY, (NUM_BOARDS, FUTURE_SLOTS), np.int16, -1, True),
    Field("exhausted", ARRAY, (NUM_BOARDS,), np.int8, 0, True),
    Field("chosen", ARRAY, (NUM_BOARDS,), np.int8, 0, True),
    Field("cash", ARRAY, (MAX_PLAYERS,), np.int32, 0, True),
    Field("has_piece", ARRAY, (MAX_PLAYERS,), np.int8, 0, True),  # 1 while the player has not taken a card this round
    Field("starting_contract", ARRAY, (MAX_PLAYERS,), np.int16, -1, False),  # -1 beyond num_players
    Field("num_players", SCALAR, (), np.int8, 0, True),
    Field("supply_size", SCALAR, (), np.int8, 0, True),
    Field("round", SCALAR, (), np.int32, 0, True),
    Field("harbour_master", SCALAR, (), np.int8, 0, True),
    Field("current_player", SCALAR, (), np.int8, 0, True),  # the engine's value, also once the game is over
    Field("phase", SCALAR, (), np.int8, 0, True),  # index into PHASES
    Field("resume_phase", SCALAR, (), np.int8, -1, True),  # in phase PAY: the phase that goes on once paid (R-SHIP-7)
    # in phase pay: the page of payment options shown (R-SHIP-7, actions.MORE); public, as the history shows it
    Field("payment_page", SCALAR, (), np.int32, 0, True),
    Field("current_board", SCALAR, (), np.int8, -1, True),  # -1 none
    Field("chosen_order", LIST, (NUM_BOARDS,), np.int8, -1, True),  # boards chosen this round, in order
    Field("pending", LIST, (NUM_CONTRACTS,), np.int16, -1, True),  # contract ids staged for the next shipment
    Field("history", LIST, (), np.int8, 0, True),  # every action taken, in order
)
ARRAYS = tuple(f.name for f in FIELDS if f.kind == ARRAY)
SCALARS = tuple(f.name for f in FIELDS if f.kind == SCALAR)
LISTS = tuple(f.name for f in FIELDS if f.kind == LIST)

# Slices of the flat buffer: name -> (offset, shape).
LAYOUT = {}
_offset = 0
for _field in FIELDS:
    if _field.kind == ARRAY:
        LAYOUT[_field.name] = (_offset, _field.shape)
        _offset += int(np.prod(_field.shape))
BUFFER_SIZE = _offset
_VIEWS = tuple((name, offset, offset + int(np.prod(shape)), shape) for name, (offset, shape) in LAYOUT.items())


def most_cash(cards) -> int:
    """All the cash one player can ever hold: the starting cash, every contract's reward and every money card."""
    return STARTING_CASH + int(cards.reward.sum()) + int(cards.money.sum())


class State:
    """One position of Packet Row. Arrays are views into ``buffer``; scalars are plain ints."""

    __slots__ = tuple(f.name for f in FIELDS) + ("buffer", "rng_state")

    def __init__(self, num_players: int, rng_state: dict, buffer: np.ndarray | None = None):
        self._attach(np.full(BUFFER_SIZE, -1, dtype=np.int32) if buffer is None else buffer)
        self.num_players = num_players
        self.supply_size = SUPPLY_SIZE[num_players]
        self.round = 1
        self.harbour_master = 0
        self.current_player = 0
        self.phase = CHOOSE_BOARD
        self.resume_phase = -1
        self.payment_page = 0
        self.current_board = -1
        self.chosen_order: list[int] = []
        self.pending: list[int] = []
        self.history: list[int] = []
        # The generator's state after the deal. Nothing draws from it later, so it is kept as a plain dict
        # (saved with the game, shared by clones, never mutated).
        self.rng_state = rng_state

    def _attach(self, buffer: np.ndarray):
        self.buffer = buffer
        for name, start, stop, shape in _VIEWS:
            setattr(self, name, buffer[start:stop].reshape(shape))

    def copy(self) -> "State":
        """An independent copy."""
        new = State.__new__(State)
        new._attach(self.buffer.copy())
        # Written out: a loop over FIELDS makes a clone slower (see the module docstring).
        new.num_players = self.num_players
        new.supply_size = self.supply_size
        new.rng_state = self.rng_state
        new.round = self.round
        new.harbour_master = self.harbour_master
        new.current_player = self.current_player
        new.phase = self.phase
        new.resume_phase = self.resume_phase
        new.payment_page = self.payment_page
        new.current_board = self.current_board
        new.chosen_order = self.chosen_order.copy()
        new.pending = self.pending.copy()
        new.history = self.history.copy()
        return new

    def deck_cards(self, board: int) -> np.ndarray:
        """The cards still in a board's deck, top first."""
        return self.deck[board, self.deck_top[board]:self.deck_end[board]]
