"""Observation vectors: one spec of named pieces, encoded per observation mode (R-INFO).

Every vector is seat-relative (seat slot 0 = the observer, then his opponents clockwise) and padded
to 5 seats, so one network plays every player count. Cards are counted by *card type*: each
contract is its own type (in contract-number order, as in the action layout), other cards with the
same effect share one (three ships to Spain are one type). ``layout(mode)`` lists the pieces with
their offsets and shapes; the README's observation table is generated from it.

What the observer knows in each mode is decided by ``knowledge`` (one owner); this module only lays it out:
- ``tracked`` (default): what a player with perfect memory knows (R-INFO-3): each opponent's hand
  minus his starting contract while he still holds it (every other hand card was taken face up).
- ``online``: the online edition's view (R-INFO-4): the tracked vector followed by one more piece,
  ``deck_contents`` (each deck's cards by type, not their order).
- ``table``: only what is on the table now: no opponent hand contents or sizes.
- ``full``: everything, opponents' hands included, with ``deck_contents`` as in online. Not a fair
  observation: for debugging and privileged critics only.

Versions (the env's docstring keeps the history): v1 (rules v1, the pay phase) appends the pieces
``paying`` and ``payment_options`` to the v0 layout (before any mode's own pieces) and normalises
``round`` as round / (round + 30). The first ``v0_size`` floats are otherwise the v0 layout, so
``v0_observation`` gives a policy trained on v0 exactly what it read then. v2 appends ``payment_page`` (which
page of options ``payment_options`` shows, and whether more follow: a payment may have more than 12 options)
and ``by_board``: the rows ``hands``, ``discarded`` and ``unseen`` count a card type over every board, which
cannot say which deck still holds the buildings of a name that lie on several boards; ``by_board`` splits
those types' counts board by board. The first ``v1_size`` floats are the v1 layout and a mode's own pieces
follow as before, so ``v1_observation`` gives a policy trained on v1 exactly what it read then. In phase pay
only the payer and the modes that track hands see the payment options and their page
(``knowledge.sees_payment_options``): in ``table`` mode they showed the payer's hidden hand to every seat.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import actions, knowledge
from .actions import MAX_PAYMENT_OPTIONS
from .cards import (CAPTAIN, CONTRACT, DESTINATIONS, GOLD, GOODS, GOODS_KIND, KINDS, NUM_CONTRACTS, SHIP, TRADER,
                    Catalogue, resolve)
from .knowledge import DECK_CONTENTS_MODES, MODES, UNKNOWN, check_mode
from .state import (DECK, DISCARD, FUTURE_SLOTS, HAND, LAYOUT, MAX_DECK, MAX_PLAYERS, MAX_SUPPLY, NUM_BOARDS,
                    NUM_LOCATIONS, OVER, PAY, REMOVED, SHIPS, STARTING_CASH)

SEAT_FEATURES = ("present", "cash", "has_piece", "harbour_master", "to_act")
CASH_SCALE = 25.0
# round / (round + ROUND_HALF) lies in [0, 1) for every round, with no bound to prove or clip, and keeps its
# resolution where games end (25-31 rounds: 0.45-0.51). v0 used round / 20, which real games exceed.
ROUND_HALF = 30.0
ROUND_SCALE_V0 = 20.0
# What each payment option discards, per option (v1): enough for a policy to tell options apart.
OPTION_FEATURES = (("present",) + tuple(f"{g}_units" for g in GOODS) + ("single_gold", "double_gold", "traders",
                   "captains") + tuple(f"ship_{d}" for d in DESTINATIONS) + ("value",))
VALUE_SCALE = 10.0
# payment_page (v2): where the options of payment_options stand among all of them (paged by action more).
PAGE_FEATURES = ("more_follow", "page")
# by_board (v2), per (card type, board) of the types on several boards: where the summed count rows put its cards.
SPLIT_FEATURES = ("discarded",) + tuple(f"hand_{k}" for k in range(MAX_PLAYERS)) + ("unseen",)


@dataclass(frozen=True)
class Piece:
    """One named block of the observation vector."""

    name: str
    offset: int
    shape: tuple[int, ...]
    description: str

    @property
    def size(self) -> int:
        """Number of floats in the piece."""
        return int(np.prod(self.shape))


def card_types(cards: Catalogue) -> tuple[np.ndarray, tuple[str, ...]]:
    """(type index of each card, type names): contracts by contract number, other cards by effect."""
    type_of = np.empty(len(cards.kind), dtype=np.int64)
    type_of[cards.contract_ids] = np.arange(NUM_CONTRACTS)
    names = [cards.names[c] for c in cards.contract_ids]
    seen = {}
    for c in np.flatnonzero(cards.kind != CONTRACT):
        key = tuple(int(getattr(cards, column)[c]) for column in
                    ("kind", "good", "quantity", "destination", "cost", "vp", "money", "value"))
        if key not in seen:
            seen[key] = len(names)
            names.append(cards.names[c] if KINDS[cards.kind[c]] != "building" else f"{cards.names[c]}_{cards.vp[c]}vp")
        type_of[c] = seen[key]
    return type_of, tuple(names)


def board_pairs(cards: Catalogue, type_of: np.ndarray) -> list[tuple[int, int]]:
    """(card type, board) of every type whose cards lie on several boards, by type then board (``by_board``)."""
    pairs = []
    for t in range(int(type_of.max()) + 1):
        boards = np.unique(cards.board[type_of == t])
        if len(boards) > 1:  # buildings in the default catalogue; a contract (one card) never is
            pairs += [(t, int(b)) for b in boards]
    return pairs


def _spec(num_types: int, split_types: str, num_pairs: int) -> list[tuple[str, tuple[int, ...], str]]:
    f = num_types
    # Scalars first, then the card-count block, whose rows come out of one bincount in this order.
    return [
        ("num_players", (4,), "one-hot of the player count 2-5"),
        ("round", (1,), f"round / (round + {ROUND_HALF:g}): in [0, 1), 0.5 at round {ROUND_HALF:g}"),
        ("phase", (4,), "one-hot of the phase: choose_board, take, must_take, over (in phase pay: the phase that "
         "goes on once the shipment is paid)"),
        ("current_board", (NUM_BOARDS,), "one-hot of the board being asked on (zeros when none)"),
        ("chosen_boards", (NUM_BOARDS,), "boards chosen this round"),
        ("exhausted", (NUM_BOARDS,), "exhausted boards"),
        ("deck_sizes", (NUM_BOARDS,), f"cards left in each board's deck / {MAX_DECK}"),
        ("seats", (MAX_PLAYERS, len(SEAT_FEATURES)),
         f"per seat (self, then clockwise; zeros = no such seat): present, cash / {CASH_SCALE:g}, has not taken "
         "this round, is harbour master, is to act"),
        ("holds_starting_contract", (MAX_PLAYERS,), "per seat: still holds his starting contract (opponents: "
         "all modes but table)"),
        ("ships", (MAX_PLAYERS, len(DESTINATIONS)), "per seat: merchant ships face up, by destination"),
        ("pending_shipment", (NUM_CONTRACTS,), "contracts staged for the next shipment, by contract number"),
        ("current_supply", (NUM_BOARDS, MAX_SUPPLY, f), "per board and slot: one-hot card type (zeros = empty slot)"),
        ("future_supply", (NUM_BOARDS, FUTURE_SLOTS, f), "per board and future slot: one-hot card type"),
        ("hands", (MAX_PLAYERS, f), "per seat: card-type counts of the hand as the mode reveals it (own hand; "
         "opponents: cards known from their takes (tracked, online), nothing (table), everything (full))"),
        ("discarded", (f,), "card-type counts of all discard piles"),
        ("unseen", (f,), "card-type counts of the cards out of the observer's sight: removed cards, hidden hand "
         "cards, and the decks' cards where the mode does not show them (all but online and full)"),
        # v1: appended, so that the pieces above stay the v0 layout
        ("paying", (1,), "1 in phase pay: the player to act chooses how to pay his staged shipment (R-SHIP-7)"),
        ("payment_options", (MAX_PAYMENT_OPTIONS, len(OPTION_FEATURES)),
         "in phase pay, per option k (action pay:k; zeros = no such option): present, units of goods cards per "
         "good (" + ", ".join(GOODS) + "), single gold nuggets, double gold nuggets, traders, captains, ships by "
         f"destination ({', '.join(DESTINATIONS)}), total card value / {VALUE_SCALE:g} (only the payer and the "
         "modes that track hands see them: not the other seats in table mode)"),
        # v2: appended, so that the pieces above stay the v1 layout
        ("payment_page", (len(PAGE_FEATURES),), "in phase pay, seen as `payment_options`: 1 if more options follow "
         "the page shown (action more is legal), and the page p shown (0 first) as p / (p + 1)"),
        ("by_board", (num_pairs, len(SPLIT_FEATURES)), f"per card type on several boards ({split_types}), per "
         "board holding cards of it (in board order): its cards in the discard piles, in each seat's hand as "
         "`hands` reveals them (self, then clockwise) and unseen; `discarded`, `hands` and `unseen` sum these"),
    ]


def _mode_spec(num_types: int) -> list[tuple[str, tuple[int, ...], str]]:
    """The pieces only the modes that know each deck's contents (R-INFO-4) append to the vector."""
    return [("deck_contents", (NUM_BOARDS, num_types), "per board: card-type counts of the cards its deck still "
             "holds, not their order (online and full only: R-INFO-4)")]


# Rows of the card-count block (each num_types wide), in layout order. UNSEEN_ROW, BLOCK_ROWS (the rows every mode
# shows), DECK_ROWS and TRASH_ROW are internal API: the batch encoder (vector.observe) turns the count keys of
# ``Encoder.observer_tables`` into offsets of the vector with them.
_CURRENT_ROWS = 0
_FUTURE_ROWS = _CURRENT_ROWS + NUM_BOARDS * MAX_SUPPLY
_HAND_ROWS = _FUTURE_ROWS + NUM_BOARDS * FUTURE_SLOTS
_DISCARDED_ROW = _HAND_ROWS + MAX_PLAYERS
UNSEEN_ROW = _DISCARDED_ROW + 1
BLOCK_ROWS = UNSEEN_ROW + 1
DECK_ROWS = BLOCK_ROWS  # online and full only: appended after the common vector
TRASH_ROW = DECK_ROWS + NUM_BOARDS  # counted elsewhere (ships) or overwritten (supplies)
# The count rows by name (first row, number of rows), for readers of ``Encoder.known_counts``.
COUNT_ROWS = {"current_supply": (_CURRENT_ROWS, NUM_BOARDS * MAX_SUPPLY),
              "future_supply": (_FUTURE_ROWS, NUM_BOARDS * FUTURE_SLOTS),
              "hands": (_HAND_ROWS, MAX_PLAYERS), "discarded": (_DISCARDED_ROW, 1), "unseen": (UNSEEN_ROW, 1),
              "deck_contents": (DECK_ROWS, NUM_BOARDS)}


class Encoder:
    """Builds observation vectors of one catalogue; one instance per catalogue (see ``encoder``).

    Besides the pieces and sizes, its tables are internal API for the encoders that replay it: the batch encoders
    (``vector.observe``, ``vector.observe_compact``) and ``CompactEncoder`` read ``observer_tables``, ``pair_of``,
    ``pair_cards``, ``split_column``, ``split_key``, ``ship_ids``, ``ship_destination``, ``supply_keys``,
    ``supply_slice`` and ``option_rows``.
    """

    def __init__(self, cards: Catalogue):
        self.cards = cards
        self.type_of, self.type_names = card_types(cards)
        f = self.num_types = len(self.type_names)
        self.board_pairs = board_pairs(cards, self.type_of)
        split_types = ", ".join(dict.fromkeys(self.type_names[t] for t, _ in self.board_pairs)) or "none"
        offset = 0
        self.pieces = []
        for name, shape, description in _spec(f, split_types, len(self.board_pairs)):
            self.pieces.append(Piece(name, offset, shape, description))
            offset += int(np.prod(shape))
        self.size = offset  # of the modes without deck contents (tracked, table); see size_of
        self._mode_pieces = []
        for name, shape, description in _mode_spec(f):
            self._mode_pieces.append(Piece(name, offset, shape, description))
            offset += int(np.prod(shape))
        self._sizes = {mode: offset if mode in DECK_CONTENTS_MODES else self.size for mode in MODES}
        by_name = {p.name: p for p in self.pieces}
        self._header = by_name["ships"].offset
        self._ships = slice(by_name["ships"].offset, by_name["ships"].offset + by_name["ships"].size)
        self._pending = by_name["pending_shipment"].offset
        unseen = by_name["unseen"]
        self._block = slice(by_name["current_supply"].offset, unseen.offset + unseen.size)
        self.v0_size = self._block.stop  # the v0 layout is this prefix (round scaled as v0 did: v0_observation)
        self._round = by_name["round"].offset
        self._paying = by_name["paying"].offset
        options = by_name["payment_options"]
        self._options = slice(options.offset, options.offset + options.size)
        self.v1_size = self._options.stop  # the v1 layout is this prefix (then a mode's pieces: v1_observation)
        page = by_name["payment_page"]
        self._page = slice(page.offset, page.offset + page.size)
        split = by_name["by_board"]
        self._split = slice(split.offset, split.offset + split.size)
        # by_board: its cards and their pairs, count row -> column (trash: past the end), and where known_counts
        # counts them: past the count rows, at SPLIT_KEY + pair * width + column (observer_tables' split keys)
        self.pair_of = np.full(len(cards.kind), -1, dtype=np.int64)  # card -> its by_board pair, -1 none
        for i, (t, b) in enumerate(self.board_pairs):
            self.pair_of[(self.type_of == t) & (cards.board == b)] = i
        self.pair_cards = np.flatnonzero(self.pair_of >= 0)  # the cards by_board counts, in id order
        self.split_key = (TRASH_ROW + 1) * f
        column = np.full(TRASH_ROW + 1, len(SPLIT_FEATURES), dtype=np.int64)
        column[_DISCARDED_ROW] = 0
        column[_HAND_ROWS:_HAND_ROWS + MAX_PLAYERS] = 1 + np.arange(MAX_PLAYERS)
        column[UNSEEN_ROW] = len(SPLIT_FEATURES) - 1
        self.split_column = column  # count row (COUNT_ROWS) -> by_board column; read by the batch kernels
        self.option_rows = _option_rows(cards)  # per card, what discarding it adds to a payment option
        self.ship_ids = np.flatnonzero(cards.kind == SHIP)  # the ships piece counts these by owner and destination
        self.ship_destination = cards.destination[self.ship_ids].astype(np.int64)
        # known_counts finds every count in one gather from a per-observer table of (entry, location) keys and one
        # bincount: entry e counts card _counted[e] (all cards by type, the pair cards by board, the ships by owner)
        self.ship_key = self.split_key + len(self.board_pairs) * len(SPLIT_FEATURES)  # ships: seat in order, dest.
        self._counted = np.concatenate((np.arange(len(cards.kind)), self.pair_cards, self.ship_ids))
        self._counted_rows = np.arange(len(self._counted)) * NUM_LOCATIONS
        self._counted_type = np.concatenate((self.type_of, np.zeros(len(self.pair_cards), dtype=np.int64),
                                             self.ship_destination))
        self._counts_size = self.ship_key + (MAX_PLAYERS + 1) * len(DESTINATIONS)
        self.supply_keys = np.arange(_CURRENT_ROWS, _HAND_ROWS) * f  # per supply slot (current, then future) its key
        self._row_tables = {}
        # A provable bound for the observation space: all the cash the game can hold, or all the cards.
        most_cash = STARTING_CASH + int(cards.reward.sum()) + int(cards.money.sum())
        self.high = float(max(len(cards.kind), most_cash / CASH_SCALE, 1.0))
        # State keeps the current and future supplies next to each other in its buffer.
        current, future = LAYOUT["current"], LAYOUT["future"]
        assert future[0] == current[0] + int(np.prod(current[1]))
        self.supply_slice = slice(current[0], future[0] + int(np.prod(future[1])))  # both supplies in the buffer

    def pieces_of(self, mode: str) -> list[Piece]:
        """The pieces of a mode's vector, in order."""
        return self.pieces + self._mode_pieces if check_mode(mode) in DECK_CONTENTS_MODES else list(self.pieces)

    def size_of(self, mode: str) -> int:
        """The length of a mode's vector."""
        return self._sizes[check_mode(mode)]

    def observer_tables(self, n: int, seat: int, mode: str):
        """Lookup tables of one observer: location -> count key, seats in his order, location -> ship key, and
        (counted entry, location) -> key (the count keys, then the by_board and ship keys: ``_counted``)."""
        key = (n, seat, mode)
        tables = self._row_tables.get(key)
        if tables is None:
            view = knowledge.location_view(n, seat, mode)  # true location -> the location the observer sees
            rows = np.full(NUM_LOCATIONS + 1, TRASH_ROW, dtype=np.int64)  # seen location -> count row
            rows[DECK:DECK + NUM_BOARDS] = DECK_ROWS + np.arange(NUM_BOARDS)
            rows[REMOVED] = UNSEEN_ROW
            rows[UNKNOWN] = UNSEEN_ROW
            rows[DISCARD:DISCARD + NUM_BOARDS] = _DISCARDED_ROW
            ships = np.full(NUM_LOCATIONS, MAX_PLAYERS * len(DESTINATIONS), dtype=np.int64)  # past the piece
            for q in range(n):
                k = (q - seat) % n
                rows[HAND + q] = _HAND_ROWS + k
                ships[SHIPS + q] = k * len(DESTINATIONS)
            order = [(seat + k) % n for k in range(n)]
            seen_rows = rows[view[:NUM_LOCATIONS]]
            columns = self.split_column[seen_rows]
            split = self.split_key + self.pair_of[self.pair_cards, None] * len(SPLIT_FEATURES) + columns
            split[:, columns == len(SPLIT_FEATURES)] = TRASH_ROW * self.num_types  # not counted by board
            rows = seen_rows * self.num_types
            keys = np.concatenate((np.broadcast_to(rows, (len(self.type_of), NUM_LOCATIONS)), split,
                                   np.broadcast_to(self.ship_key + ships, (len(self.ship_ids), NUM_LOCATIONS))))
            tables = self._row_tables[key] = (rows, order, ships, keys.ravel())
        return tables

    def encode(self, game, seat: int, mode: str = "tracked") -> np.ndarray:
        """The observation vector of ``seat`` in ``mode`` (float32, length ``size``)."""
        s = game.state
        counts, order, ship_rows, holds = self.known_counts(s, seat, mode)
        size = self._sizes[mode]
        out = np.empty(size, dtype=np.float32)
        out[self._block] = counts[:BLOCK_ROWS * self.num_types]
        out[self._split] = counts[self.split_key:self.ship_key]
        if size != self.size:  # deck_contents (R-INFO-4)
            out[self.size:] = counts[DECK_ROWS * self.num_types:TRASH_ROW * self.num_types]
        out[:self._header] = self.header(s, order, holds)
        out[self._ships] = counts[self.ship_key:self.ship_key + MAX_PLAYERS * len(DESTINATIONS)]
        out[self._pending:self._block.start] = 0
        if s.pending:
            out[self._pending + self.cards.contract_number[s.pending]] = 1
        out[self._paying:self._page.stop] = 0
        if s.phase == PAY:
            out[self._paying] = 1
        if s.phase == PAY and knowledge.sees_payment_options(seat, s.current_player, mode):
            out[self._page] = payment_page(game)
            options = game.payment_page_options()
            rows = self.option_rows
            block = out[self._options].reshape(MAX_PAYMENT_OPTIONS, len(OPTION_FEATURES))
            for k, option in enumerate(options):
                block[k] = rows[list(option)].sum(axis=0)
            block[:len(options), 0] = 1
        return out

    def known_counts(self, s, seat: int, mode: str) -> tuple[np.ndarray, list[int], np.ndarray, list[int]]:
        """What ``seat`` knows of the cards, from ``knowledge``: (card-type counts of every count row, seats in
        his order, location -> ship row, per seat in his order whether he still holds his starting contract).

        The counts are one bincount of ``ROWS * num_types`` values: row ``r`` (see ``COUNT_ROWS``) of type ``t``
        at ``r * num_types + t``, then from ``split_key`` the ``by_board`` counts (pair by pair, ``SPLIT_FEATURES``
        each), then from ``ship_key`` the ships face up (seat in his order, destination). Shared with the compact
        encoding, so both read the same knowledge.
        """
        n = s.num_players
        _, order, ship_rows, keys = self.observer_tables(n, seat, mode)
        key = keys[self._counted_rows + s.location[self._counted]]
        supply = s.buffer[self.supply_slice]
        filled = supply >= 0
        key[supply[filled]] = self.supply_keys[filled]
        hidden, known_holds = knowledge.starting_contracts(s, self.cards, seat, mode)  # mode checked by observer_tables
        if hidden:
            key[hidden] = UNSEEN_ROW * self.num_types  # R-INFO-3
        holds = [known_holds[q] or 0 for q in order]
        counts = np.bincount(key + self._counted_type, minlength=self._counts_size)
        return counts, order, ship_rows, holds

    def header(self, s, order: list[int], holds: list[int]) -> list[float]:
        """The scalar pieces before ``ships`` (num_players .. holds_starting_contract), as Python floats."""
        n = s.num_players
        over = s.phase == OVER
        phase = [0.0] * 4
        phase[s.resume_phase if s.phase == PAY else s.phase] = 1.0
        board = [0.0] * NUM_BOARDS
        if s.current_board >= 0:
            board[s.current_board] = 1.0
        count = [0.0] * 4
        count[n - 2] = 1.0
        cash = s.cash.tolist()
        has_piece = s.has_piece.tolist()
        seats = []
        for q in order:
            seats += (1.0, cash[q] / CASH_SCALE, has_piece[q], q == s.harbour_master,
                      not over and q == s.current_player)
        seats += [0.0] * (len(SEAT_FEATURES) * (MAX_PLAYERS - n))
        return (count + [s.round / (s.round + ROUND_HALF)] + phase + board + s.chosen.tolist() + s.exhausted.tolist()
                + ((s.deck_end - s.deck_top) / MAX_DECK).tolist() + seats + holds + [0] * (MAX_PLAYERS - n))

    def v0_observation(self, vector: np.ndarray) -> np.ndarray:
        """The v0 observation inside a v1 one (one vector or a batch): the prefix, round back to round / 20."""
        old = np.array(vector[..., :self.v0_size], dtype=np.float32)
        x = old[..., self._round].astype(np.float64)
        old[..., self._round] = ROUND_HALF * x / (1.0 - x) / ROUND_SCALE_V0
        return old

    def v1_size_of(self, mode: str) -> int:
        """The length of a mode's v1 vector (what a policy trained on env v1 reads)."""
        return self.v1_size + self.size_of(mode) - self.size

    def v1_observation(self, vector: np.ndarray) -> np.ndarray:
        """The v1 observation inside a v2 one (one vector or a batch, any mode): the prefix, then the mode's pieces."""
        vector = np.asarray(vector, dtype=np.float32)
        return np.concatenate([vector[..., :self.v1_size], vector[..., self.size:]], axis=-1)

    def state_vector(self, game) -> np.ndarray:
        """A global full-information vector (seat 0's full observation), for centralised critics."""
        return self.encode(game, 0, "full")

    def split(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The named pieces of an observation vector of any mode (told apart by its length), reshaped."""
        pieces = self.pieces + self._mode_pieces if len(vector) > self.size else self.pieces
        return {p.name: vector[p.offset:p.offset + p.size].reshape(p.shape) for p in pieces}


def payment_page(game) -> tuple[float, float]:
    """The ``payment_page`` piece of a game in phase pay (PAGE_FEATURES): more options follow, page p as p / (p + 1)."""
    page = game.payment_page
    return float(game.legal_action_mask()[actions.MORE]), page / (page + 1)


def _option_rows(cards: Catalogue) -> np.ndarray:
    """Per card, what discarding it adds to a payment option's features (OPTION_FEATURES, less 'present')."""
    rows = np.zeros((len(cards.kind), len(OPTION_FEATURES)), dtype=np.float32)
    kind = cards.kind
    goods = np.flatnonzero(kind == GOODS_KIND)
    rows[goods, 1 + cards.good[goods]] = cards.quantity[goods]
    gold = np.flatnonzero(kind == GOLD)
    rows[gold, 5 + (cards.quantity[gold] == 2)] = 1
    rows[kind == TRADER, 7] = 1
    rows[kind == CAPTAIN, 8] = 1
    ships = np.flatnonzero(kind == SHIP)
    rows[ships, 9 + cards.destination[ships]] = 1
    spendable = np.isin(kind, (GOODS_KIND, GOLD, TRADER, CAPTAIN, SHIP))
    rows[spendable, -1] = cards.value[spendable] / VALUE_SCALE
    return rows


@lru_cache(maxsize=8)
def encoder(cards: Catalogue | None = None) -> Encoder:
    """The (cached) encoder of a catalogue; the default catalogue when None."""
    return Encoder(resolve(cards))


def layout(mode: str = "tracked", cards: Catalogue | None = None) -> list[Piece]:
    """The pieces of the observation vector of ``mode``: name, offset, shape, description."""
    return encoder(cards).pieces_of(mode)


def added_pieces_table(mode: str = "online", cards: Catalogue | None = None) -> str:
    """The pieces ``mode`` appends to the tracked vector, as a Markdown table (the README's second table)."""
    base = {p.name for p in layout("tracked", cards)}
    rows = ["| piece | offset | shape | meaning |", "|---|---|---|---|"]
    rows += [f"| `{p.name}` | {p.offset} | {p.shape} | {p.description} |" for p in layout(mode, cards)
             if p.name not in base]
    return "\n".join(rows) + f"\n\nTotal in {mode} mode: {encoder(cards).size_of(mode)} float32 values."


def layout_table(mode: str = "tracked", cards: Catalogue | None = None) -> str:
    """The observation layout as a Markdown table (the README's table is generated by this)."""
    rows = ["| piece | offset | shape | meaning |", "|---|---|---|---|"]
    rows += [f"| `{p.name}` | {p.offset} | {p.shape} | {p.description} |" for p in layout(mode, cards)]
    size = encoder(cards).size_of(mode)
    return "\n".join(rows) + f"\n\nTotal: {size} float32 values."
