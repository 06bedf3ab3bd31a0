"""The compact observation: the same information as ``observation`` in about 700 floats a network reads cheaply.

The observation of ``observation.Encoder`` spends 1,632 of its 2,536 floats on 68-wide one-hots of the card
type in each of the 24 supply slots. Here each slot is one float, its card type + 1 (0 = empty), for the
network to embed (``index_slices``, ``num_types``); the rest is the observation's own pieces, less what can
be derived from them:

- ``unseen`` is dropped: every card lies in exactly one count row, so it is the catalogue's per-type totals
  less the supplies, hands, discard piles, face-up ships and (online, full) decks.
- ``hands`` leave out the ship types (ships lie face up, R-TAKE-5; a saved game with a ship in a hand is refused).
- ``deck_contents`` (online, full) keeps per board only the types of that board's cards (a deck holds only its
  own board's cards).
- ``ships`` are counted per ship *type*, not per destination (the same 6 floats per seat in the default
  catalogue): that keeps ``unseen`` derivable in every catalogue; the destinations are a sum of types.
- ``payment_options`` leave out ``present``: every option gives up at least one card and every card that can be
  spent has a positive value (R-SHIP-7, checked when a catalogue loads), so an option is there iff its value > 0.
- ``by_board`` (v2) leaves out each type's last board and the ``unseen`` column: the rows ``discarded`` and
  ``hands`` sum the boards, and a board's unseen cards are its cards of the type less the rest.

What the seat knows comes from ``Encoder.known_counts`` and ``Encoder.header``, i.e. from ``knowledge`` (one
owner); ``CompactEncoder.expand`` rebuilds the ``Encoder`` vector from a compact one (the proof it loses
nothing is tests/test_compact_observation.py). The supply indices are the first ``NUM_SLOTS`` floats of
every mode, so ``index_slices`` is the same slice in every mode. The first ``v1_size`` floats are the v1 layout
(``v1_observation``, as ``Encoder.v1_observation``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .actions import MAX_PAYMENT_OPTIONS
from .cards import BOARDS, DESTINATIONS, GOLD, GOODS, GOODS_KIND, NUM_CONTRACTS, SHIP, TRADER, CAPTAIN, Catalogue, \
    resolve
from . import knowledge
from .knowledge import DECK_CONTENTS_MODES, MODES, check_mode
from .observation import (COUNT_ROWS, OPTION_FEATURES, PAGE_FEATURES, SPLIT_FEATURES, VALUE_SCALE, Encoder, Piece,
                          encoder as full_encoder, payment_page)
from .state import FUTURE_SLOTS, MAX_PLAYERS, MAX_SUPPLY, NUM_BOARDS, PAY

NUM_SLOTS = NUM_BOARDS * (MAX_SUPPLY + FUTURE_SLOTS)  # supply slots: 4 boards x (4 current + 2 future)
COMPACT_OPTION_FEATURES = OPTION_FEATURES[1:]  # 'present' is value > 0
COMPACT_SPLIT_FEATURES = SPLIT_FEATURES[:-1]  # 'unseen' is the board's cards of the type less the rest
# The pieces copied as they are from the front of the Encoder's vector (its scalars and per-seat features).
HEADER_PIECES = ("num_players", "round", "phase", "current_board", "chosen_boards", "exhausted", "deck_sizes",
                 "seats", "holds_starting_contract")


class CompactEncoder:
    """Builds compact observation vectors of one catalogue; one instance per catalogue (see ``encoder``)."""

    def __init__(self, cards: Catalogue):
        self.cards = cards
        self.full = full_encoder(cards)
        full = self.full
        f = self.num_types = full.num_types  # an index float holds 0 (empty) .. num_types
        self.type_of, self.type_names = full.type_of, full.type_names
        ship_ids = np.flatnonzero(cards.kind == SHIP)
        # Card types of ships, hand cards and each board's cards (ascending type numbers).
        self.ship_types = np.unique(self.type_of[ship_ids])
        self.hand_types = np.setdiff1d(np.arange(f), self.ship_types)
        self.board_types = tuple(np.unique(self.type_of[ids]) for ids in cards.board_cards)
        self.totals = np.bincount(self.type_of, minlength=f)  # cards of each type in the catalogue
        # by_board: the Encoder's (type, board) pairs but each type's last board (the sum of the rows tells it)
        pairs = full.board_pairs
        last = [i + 1 == len(pairs) or pairs[i + 1][0] != t for i, (t, _) in enumerate(pairs)]
        self.split_rows = np.flatnonzero(~np.array(last, dtype=bool)).astype(np.int64)
        self._split_kept = set(self.split_rows.tolist())
        self.pair_totals = np.array([np.count_nonzero((self.type_of == t) & (cards.board == b)) for t, b in pairs])
        full_pieces = {p.name: p for p in full.pieces}
        header = [full_pieces[name] for name in HEADER_PIECES]
        self._full_header = header[-1].offset + header[-1].size
        s = len(self.ship_types)
        ship_names = ", ".join(self.type_names[t] for t in self.ship_types)
        spec = [
            ("current_supply", (NUM_BOARDS, MAX_SUPPLY), "INDEX per board and slot: card type + 1 (0 = empty slot); "
             "the type numbers are the observation's card types (type_names)"),
            ("future_supply", (NUM_BOARDS, FUTURE_SLOTS), "INDEX per board and future slot: card type + 1 (0 = empty)"),
        ] + [(p.name, p.shape, p.description) for p in header] + [
            ("ships", (MAX_PLAYERS, s), f"per seat: merchant ships face up, by ship type ({ship_names})"),
            ("pending_shipment", (NUM_CONTRACTS,), "contracts staged for the next shipment, by contract number"),
            ("paying", (1,), "1 in phase pay: the player to act chooses how to pay his staged shipment (R-SHIP-7)"),
            ("payment_options", (MAX_PAYMENT_OPTIONS, len(COMPACT_OPTION_FEATURES)),
             "in phase pay, per option k (action pay:k; zeros = no such option): units of goods cards per good ("
             + ", ".join(GOODS) + "), single gold nuggets, double gold nuggets, traders, captains, ships by "
             f"destination ({', '.join(DESTINATIONS)}), total card value / {VALUE_SCALE:g} (> 0 iff the option is "
             "there)"),
            ("hands", (MAX_PLAYERS, len(self.hand_types)), "per seat: card-type counts of the hand as the mode "
             "reveals it, over the types but ships (hand_types): own hand; opponents: cards known from their takes "
             "(tracked, online), nothing (table), everything (full)"),
            ("discarded", (f,), "card-type counts of all discard piles"),
            # v2: appended, so that the pieces above stay the v1 layout
            ("payment_page", (len(PAGE_FEATURES),), "in phase pay, seen as `payment_options`: 1 if more options "
             "follow the page shown (action more is legal), and the page p shown (0 first) as p / (p + 1)"),
            ("by_board", (len(self.split_rows), len(COMPACT_SPLIT_FEATURES)), "per card type on several boards, per "
             "board holding cards of it but the last (in board order; the one-hot `by_board` less its last board "
             "and its unseen column): its cards in the discard piles and in each seat's hand as `hands` reveals "
             "them (self, then clockwise)"),
        ]
        mode_spec = [(f"deck_{BOARDS[b]}", (len(self.board_types[b]),), f"card-type counts of the cards the "
                      f"{BOARDS[b]} deck still holds, over the {BOARDS[b]} board's types (online and full only: "
                      "R-INFO-4)") for b in range(NUM_BOARDS)]
        self.pieces, offset = _place(spec, 0)
        self.size = offset
        self._mode_pieces, offset = _place(mode_spec, offset)
        self._sizes = {mode: offset if mode in DECK_CONTENTS_MODES else self.size for mode in MODES}
        self._by_name = {p.name: p for p in self.pieces + self._mode_pieces}
        self.index_slices = (slice(0, NUM_SLOTS),)  # the floats that are card-type indices, in every mode
        self.high = float(max(full.high, f))  # a bound of every float (indices go up to num_types)

        # Lookups of encode.
        self._slot_type = np.append(self.type_of + 1, 0).astype(np.float32)  # card id (-1 = empty: last) -> index
        self._header = slice(self._by_name[HEADER_PIECES[0]].offset, self._by_name["ships"].offset)
        self._ship_ids = ship_ids
        self._ship_column = np.searchsorted(self.ship_types, self.type_of[ship_ids])
        self.ship_destination = np.zeros(len(self.ship_types), dtype=np.int64)  # per ship type (a type has one)
        self.ship_destination[self._ship_column] = cards.destination[ship_ids]
        self._ships = self._slice("ships")
        self._pending = self._by_name["pending_shipment"].offset
        self._paying = self._by_name["paying"].offset
        self._options = self._slice("payment_options")
        self._page = self._slice("payment_page")
        self.option_rows = option_rows(cards)  # read by the batch encoder too (vector.observe_compact)
        hand_row, _ = COUNT_ROWS["hands"]
        self._hands = self._slice("hands")
        self._hand_counts = (hand_row * f + np.arange(MAX_PLAYERS)[:, None] * f + self.hand_types).ravel()
        self._discarded = self._slice("discarded")
        self._discard_counts = COUNT_ROWS["discarded"][0] * f + np.arange(f)
        self._split = self._slice("by_board")
        width = len(SPLIT_FEATURES)
        self._split_counts = (full.split_key + self.split_rows[:, None] * width + np.arange(width - 1)).ravel()
        self.v1_size = self._discarded.stop  # the v1 layout is this prefix (then a mode's pieces: v1_observation)
        deck_row, _ = COUNT_ROWS["deck_contents"]
        self._deck_counts = np.concatenate([(deck_row + b) * f + self.board_types[b] for b in range(NUM_BOARDS)])

    def _slice(self, name: str) -> slice:
        p = self._by_name[name]
        return slice(p.offset, p.offset + p.size)

    def pieces_of(self, mode: str) -> list[Piece]:
        """The pieces of a mode's vector, in order."""
        return self.pieces + self._mode_pieces if check_mode(mode) in DECK_CONTENTS_MODES else list(self.pieces)

    def size_of(self, mode: str) -> int:
        """The length of a mode's vector."""
        return self._sizes[check_mode(mode)]

    def encode(self, game, seat: int, mode: str = "tracked") -> np.ndarray:
        """The compact observation vector of ``seat`` in ``mode`` (float32, length ``size_of(mode)``)."""
        s = game.state
        full = self.full
        counts, order, ship_rows, holds = full.known_counts(s, seat, mode)
        size = self._sizes[mode]
        out = np.zeros(size, dtype=np.float32)
        out[:NUM_SLOTS] = self._slot_type[s.buffer[full.supply_slice]]
        out[self._header] = full.header(s, order, holds)
        seat_of = ship_rows // len(DESTINATIONS)  # ship row -> seat in the observer's order (MAX_PLAYERS: none)
        ships = np.bincount(seat_of[s.location[self._ship_ids]] * len(self.ship_types) + self._ship_column,
                            minlength=(MAX_PLAYERS + 1) * len(self.ship_types))
        out[self._ships] = ships[:MAX_PLAYERS * len(self.ship_types)]
        if s.pending:
            out[self._pending + self.cards.contract_number[s.pending]] = 1
        if s.phase == PAY:
            out[self._paying] = 1
        if s.phase == PAY and knowledge.sees_payment_options(seat, s.current_player, mode):
            out[self._page] = payment_page(game)
            block = out[self._options].reshape(MAX_PAYMENT_OPTIONS, len(COMPACT_OPTION_FEATURES))
            for k, option in enumerate(game.payment_page_options()):
                sums = self.option_rows[list(option)].sum(axis=0)
                block[k, :-1] = sums[:-1]
                block[k, -1] = sums[-1] / VALUE_SCALE  # integer value first: the same float in the batch kernel
        out[self._hands] = counts[self._hand_counts]
        out[self._discarded] = counts[self._discard_counts]
        out[self._split] = counts[self._split_counts]
        if size != self.size:
            out[self.size:] = counts[self._deck_counts]
        return out

    def split(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The named pieces of a compact vector of any mode (told apart by its length), reshaped."""
        pieces = self.pieces + self._mode_pieces if len(vector) > self.size else self.pieces
        return {p.name: vector[p.offset:p.offset + p.size].reshape(p.shape) for p in pieces}

    def expand(self, vector: np.ndarray) -> np.ndarray:
        """The ``Encoder`` vector a compact vector stands for (its mode told apart by the length).

        Equal to ``Encoder.encode`` of the same seat and mode bit for bit, but the payment options' values,
        which may differ in the last bit (summed as integers here, as float32 tenths there).
        """
        vector = np.asarray(vector, dtype=np.float32)
        if vector.shape not in ((self.size,), (self._sizes["online"],)):
            raise ValueError(f"a compact vector has {self.size} or {self._sizes['online']} floats, got shape "
                             f"{vector.shape}")
        deck_modes = len(vector) > self.size
        full = self.full
        f = self.num_types
        p = self.split(vector)
        out = np.zeros(full.size_of("online" if deck_modes else "tracked"), dtype=np.float32)
        q = full.split(out)  # views into out
        out[:self._full_header] = vector[self._header]
        for column, d in enumerate(self.ship_destination):
            q["ships"][:, d] += p["ships"][:, column]
        q["pending_shipment"][:] = p["pending_shipment"]
        slots = np.concatenate([p["current_supply"].ravel(), p["future_supply"].ravel()]).astype(np.int64)
        supply = np.zeros((NUM_SLOTS, f), dtype=np.float32)
        filled = np.flatnonzero(slots > 0)
        supply[filled, slots[filled] - 1] = 1
        q["current_supply"][:] = supply[:NUM_BOARDS * MAX_SUPPLY].reshape(q["current_supply"].shape)
        q["future_supply"][:] = supply[NUM_BOARDS * MAX_SUPPLY:].reshape(q["future_supply"].shape)
        q["hands"][:, self.hand_types] = p["hands"]
        q["discarded"][:] = p["discarded"]
        seen = supply.sum(axis=0) + q["hands"].sum(axis=0) + q["discarded"]
        seen[self.ship_types] += p["ships"].sum(axis=0)
        if deck_modes:
            for b in range(NUM_BOARDS):
                q["deck_contents"][b, self.board_types[b]] = p[f"deck_{BOARDS[b]}"]
            seen += q["deck_contents"].sum(axis=0)
        q["unseen"][:] = self.totals - seen
        q["paying"][:] = p["paying"]
        options = q["payment_options"]
        options[:, 1:] = p["payment_options"]
        options[:, 0] = p["payment_options"][:, -1] > 0
        q["payment_page"][:] = p["payment_page"]
        self._expand_split(p, q, supply, deck_modes)
        return out

    def _expand_split(self, p: dict, q: dict, supply: np.ndarray, deck_modes: bool) -> None:
        """The one-hot ``by_board`` (``q``'s view) from the compact pieces ``p`` and the rebuilt supply one-hots."""
        split = q["by_board"]
        split[self.split_rows, :-1] = p["by_board"]
        current = supply[:NUM_BOARDS * MAX_SUPPLY].reshape(NUM_BOARDS, MAX_SUPPLY, -1).sum(axis=1)
        future = supply[NUM_BOARDS * MAX_SUPPLY:].reshape(NUM_BOARDS, FUTURE_SLOTS, -1).sum(axis=1)
        summed = np.concatenate([q["discarded"][:, None], q["hands"].T], axis=1)  # type -> the sums of split's columns
        pairs = self.full.board_pairs
        for i, (t, b) in enumerate(pairs):
            if i not in self._split_kept:  # a type's last board: the sums less the other boards
                others = [j for j, (u, _) in enumerate(pairs) if u == t and j != i]
                split[i, :-1] = summed[t] - split[others, :-1].sum(axis=0)
            seen = split[i, :-1].sum() + current[b, t] + future[b, t]
            if deck_modes:
                seen += q["deck_contents"][b, t]
            split[i, -1] = self.pair_totals[i] - seen

    def v1_size_of(self, mode: str) -> int:
        """The length of a mode's v1 compact vector (what a policy trained on env v1 reads)."""
        return self.v1_size + self.size_of(mode) - self.size

    def v1_observation(self, vector: np.ndarray) -> np.ndarray:
        """The v1 compact observation inside a v2 one (one vector or a batch, any mode): the prefix, then the mode's."""
        vector = np.asarray(vector, dtype=np.float32)
        return np.concatenate([vector[..., :self.v1_size], vector[..., self.size:]], axis=-1)

    def layout_table(self, mode: str = "tracked") -> str:
        """The compact layout as a Markdown table (INDEX pieces are card-type indices for an embedding)."""
        rows = ["| piece | offset | shape | meaning |", "|---|---|---|---|"]
        rows += [f"| `{p.name}` | {p.offset} | {p.shape} | {p.description} |" for p in self.pieces_of(mode)]
        return "\n".join(rows) + f"\n\nTotal: {self.size_of(mode)} float32 values ({mode})."


def _place(spec, offset: int) -> tuple[list[Piece], int]:
    pieces = []
    for name, shape, description in spec:
        pieces.append(Piece(name, offset, shape, description))
        offset += int(np.prod(shape))
    return pieces, offset


def option_rows(cards: Catalogue) -> np.ndarray:
    """int64[card, COMPACT_OPTION_FEATURES]: what discarding a card adds to a payment option (value in whole $)."""
    rows = np.zeros((len(cards.kind), len(COMPACT_OPTION_FEATURES)), dtype=np.int64)
    kind = cards.kind
    goods = np.flatnonzero(kind == GOODS_KIND)
    rows[goods, cards.good[goods]] = cards.quantity[goods]
    gold = np.flatnonzero(kind == GOLD)
    rows[gold, 4 + (cards.quantity[gold] == 2)] = 1
    rows[kind == TRADER, 6] = 1
    rows[kind == CAPTAIN, 7] = 1
    ships = np.flatnonzero(kind == SHIP)
    rows[ships, 8 + cards.destination[ships]] = 1
    spendable = np.isin(kind, (GOODS_KIND, GOLD, TRADER, CAPTAIN, SHIP))
    rows[spendable, -1] = cards.value[spendable]
    rows.flags.writeable = False
    return rows


@lru_cache(maxsize=8)
def encoder(cards: Catalogue | None = None) -> CompactEncoder:
    """The (cached) compact encoder of a catalogue; the default catalogue when None."""
    return CompactEncoder(resolve(cards))


ENCODINGS = ("onehot", "compact")  # observation.Encoder (the default) | CompactEncoder


def encoder_for(encoding: str, cards: Catalogue | None = None):
    """The cached encoder of an observation encoding (``ENCODINGS``) for a catalogue."""
    if encoding not in ENCODINGS:
        raise ValueError(f"observation_encoding must be one of {', '.join(map(repr, ENCODINGS))}, got {encoding!r}")
    return full_encoder(cards) if encoding == "onehot" else encoder(cards)


def layout(mode: str = "tracked", cards: Catalogue | None = None) -> list[Piece]:
    """The pieces of the compact observation vector of ``mode``: name, offset, shape, description."""
    return encoder(cards).pieces_of(mode)


__all__ = ["COMPACT_OPTION_FEATURES", "COMPACT_SPLIT_FEATURES", "ENCODINGS", "CompactEncoder", "NUM_SLOTS", "encoder",
           "encoder_for", "layout", "option_rows"]
