"""The game state: numpy arrays (views into one flat buffer, so a clone is one copy) and a few scalars."""

from __future__ import annotations

import numpy as np

from .cards import NUM_CARDS

MAX_PLAYERS = 5
MIN_PLAYERS = 2
NUM_BOARDS = 4
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

# Slices of the flat buffer: name -> (offset, shape).
_FIELDS = (
    ("location", (NUM_CARDS,)),
    ("deck", (NUM_BOARDS, MAX_DECK)),  # top first from deck_top; -1 padding
    ("deck_top", (NUM_BOARDS,)),
    ("deck_end", (NUM_BOARDS,)),
    ("current", (NUM_BOARDS, MAX_SUPPLY)),  # card id per slot, -1 empty
    ("future", (NUM_BOARDS, FUTURE_SLOTS)),
    ("exhausted", (NUM_BOARDS,)),
    ("chosen", (NUM_BOARDS,)),
    ("cash", (MAX_PLAYERS,)),
    ("has_piece", (MAX_PLAYERS,)),  # 1 while the player has not taken a card this round
    ("starting_contract", (MAX_PLAYERS,)),
)
LAYOUT = {}
_offset = 0
for _name, _shape in _FIELDS:
    LAYOUT[_name] = (_offset, _shape)
    _offset += int(np.prod(_shape))
BUFFER_SIZE = _offset
_VIEWS = tuple((name, offset, offset + int(np.prod(shape)), shape) for name, (offset, shape) in LAYOUT.items())


def most_cash(cards) -> int:
    """All the cash one player can ever hold: the starting cash, every contract's reward and every money card."""
    return STARTING_CASH + int(cards.reward.sum()) + int(cards.money.sum())


class State:
    """One position of Packet Row. Arrays are views into ``buffer``; scalars are plain ints."""

    __slots__ = tuple(name for name, _ in _FIELDS) + (
        "buffer", "num_players", "supply_size", "round", "harbour_master", "current_player",
        "phase", "resume_phase", "current_board", "chosen_order", "pending", "history", "rng_state")

    def __init__(self, num_players: int, rng_state: dict, buffer: np.ndarray | None = None):
        self._attach(np.full(BUFFER_SIZE, -1, dtype=np.int32) if buffer is None else buffer)
        self.num_players = num_players
        self.supply_size = SUPPLY_SIZE[num_players]
        self.round = 1
        self.harbour_master = 0
        self.current_player = 0
        self.phase = CHOOSE_BOARD
        self.resume_phase = -1  # in phase PAY: the phase that goes on once the shipment is paid (R-SHIP-7)
        self.current_board = -1
        self.chosen_order: list[int] = []
        self.pending: list[int] = []  # contract ids staged for the next shipment
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
        new.num_players = self.num_players
        new.supply_size = self.supply_size
        new.rng_state = self.rng_state
        new.round = self.round
        new.harbour_master = self.harbour_master
        new.current_player = self.current_player
        new.phase = self.phase
        new.resume_phase = self.resume_phase
        new.current_board = self.current_board
        new.chosen_order = self.chosen_order.copy()
        new.pending = self.pending.copy()
        new.history = self.history.copy()
        return new

    def deck_cards(self, board: int) -> np.ndarray:
        """The cards still in a board's deck, top first."""
        return self.deck[board, self.deck_top[board]:self.deck_end[board]]
