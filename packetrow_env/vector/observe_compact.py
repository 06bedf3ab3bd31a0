"""Compact observations of a whole batch in one compiled kernel: bit for bit ``CompactEncoder.encode``.

What a seat knows comes from ``knowledge``: the kernel reads its ``location_view`` tables (per player count,
observer and mode) and applies the one exception it names, the opponents' still-held starting contracts
that are not staged (``knowledge.starting_contracts``), the same way. The card facts come from
``vector.tables`` and the layout from ``CompactEncoder``; tests/test_observe_compact.py compares the two
encoders on batches of random games.

    enc = CompactBatchEncoder(cards, "tracked")
    out = np.empty((B, enc.size), np.float32)
    enc.encode(batch, seats, out)          # seats[i] < 0: row i is zeros
"""

from __future__ import annotations

import numba
import numpy as np

from .. import knowledge
from ..cards import Catalogue, resolve
from ..compact_observation import COMPACT_SPLIT_FEATURES, NUM_SLOTS, encoder as compact_encoder
from ..knowledge import DECK_CONTENTS_MODES, OPPONENT_HAND_MODES, check_mode
from ..observation import CASH_SCALE, ROUND_HALF, VALUE_SCALE
from ..state import (DECK, DISCARD, HAND, MAX_DECK, MAX_PLAYERS, MIN_PLAYERS, NUM_BOARDS, NUM_LOCATIONS, OVER, PAY,
                     SHIPS)
from . import tables
from .batch import Batch
from .observe import check_out, check_seats, write_payment_page

# Offsets passed to the kernel, in this order.
_OFFSETS = ("num_players", "round", "phase", "current_board", "chosen_boards", "exhausted", "deck_sizes", "seats",
            "holds_starting_contract", "ships", "pending_shipment", "paying", "payment_options", "hands",
            "discarded", "payment_page", "by_board")
(O_COUNT, O_ROUND, O_PHASE, O_BOARD, O_CHOSEN, O_EXHAUSTED, O_DECKS, O_SEATS, O_HOLDS, O_SHIPS, O_PENDING, O_PAYING,
 O_OPTIONS, O_HANDS, O_DISCARDED, O_PAGE, O_SPLIT) = range(len(_OFFSETS))
_SEAT_WIDTH = 5  # observation.SEAT_FEATURES
_SPLIT_WIDTH = len(COMPACT_SPLIT_FEATURES)


class CompactBatchEncoder:
    """Compact observations of one catalogue and mode for batches (``CompactEncoder``'s layout and values)."""

    def __init__(self, cards: Catalogue | None, mode: str = "tracked"):
        self.cards = cards = resolve(cards)
        self.mode = check_mode(mode)
        compact = self.compact = compact_encoder(cards)
        self.size = compact.size_of(mode)
        by_name = {p.name: p for p in compact.pieces_of(mode)}
        offsets = np.array([by_name[name].offset for name in _OFFSETS], dtype=np.int64)
        table = tables.table(cards)
        type_of = table[tables.TYPE].astype(np.int64)
        number = table[tables.NUMBER].astype(np.int64)
        f = compact.num_types
        # Where a card of each type lying at each location adds 1, per player count and observer (the knowledge of
        # knowledge.location_view): hands, discard piles, face-up ships (public: by true location) and, where the
        # mode shows them, decks; elsewhere a trash float inside payment_options, zeroed before they are written.
        trash = by_name["payment_options"].offset
        hand_col = np.full(f, -1, np.int64)
        hand_col[compact.hand_types] = np.arange(len(compact.hand_types))
        ship_col = np.full(f, -1, np.int64)
        ship_col[compact.ship_types] = np.arange(len(compact.ship_types))
        deck_at = np.full((NUM_BOARDS, f), trash, np.int64)
        if mode in DECK_CONTENTS_MODES:
            start = compact.size
            for b, types in enumerate(compact.board_types):
                deck_at[b, types] = start + np.arange(len(types))
                start += len(types)
        hands, ships, discarded = by_name["hands"], by_name["ships"], by_name["discarded"].offset
        dest = np.full((MAX_PLAYERS + 1, MAX_PLAYERS, NUM_LOCATIONS, f), trash, np.int32)
        for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            for seat in range(n):
                view = knowledge.location_view(n, seat, mode)
                at = dest[n, seat]
                for loc in range(NUM_LOCATIONS):
                    seen = view[loc]
                    if SHIPS <= loc < SHIPS + n:
                        k = (loc - SHIPS - seat) % n
                        at[loc] = np.where(ship_col >= 0, ships.offset + k * ships.shape[1] + ship_col, trash)
                    elif HAND <= seen < HAND + n:
                        k = (seen - HAND - seat) % n
                        at[loc] = np.where(hand_col >= 0, hands.offset + k * hands.shape[1] + hand_col, trash)
                    elif DISCARD <= seen < DISCARD + NUM_BOARDS:
                        at[loc] = discarded + np.arange(f)
                    elif DECK <= seen < DECK + NUM_BOARDS:
                        at[loc] = deck_at[seen - DECK]
        # by_board: per player count, observer and location the column where a card of a kept pair is counted
        # (-1: not counted), from the Encoder's count rows (knowledge.location_view); card -> its kept pair or -1.
        full = compact.full
        split_at = np.full((MAX_PLAYERS + 1, MAX_PLAYERS, NUM_LOCATIONS), -1, np.int64)
        for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            for seat in range(n):
                columns = full.split_column[full.observer_tables(n, seat, mode)[0] // f]
                split_at[n, seat] = np.where(columns < _SPLIT_WIDTH, columns, -1)
        kept = np.full(len(full.board_pairs) + 1, -1, np.int64)  # Encoder pair -> compact pair (index -1: none)
        kept[compact.split_rows] = np.arange(len(compact.split_rows))
        pair_cards = np.flatnonzero(kept[full.pair_of] >= 0)  # the cards by_board counts, and each one's pair
        pair_of = kept[full.pair_of[pair_cards]]
        # knowledge.starting_contracts: which opponents' held starting contracts are hidden, whose holds are known.
        hides_starts = knowledge.hides_held_starting_contracts(mode)
        holds_known = mode in OPPONENT_HAND_MODES
        others_see_options = knowledge.sees_payment_options(0, 1, mode)  # a seat but the payer
        # What encode_rows reads after the batch's arrays, seats, rows and targets, in its order: internal API for
        # kernels that encode inside their own loop (agents' opponents_batch passes them on).
        self.kernel_tables = (dest, split_at, pair_cards, pair_of, hides_starts, holds_known, others_see_options,
                              type_of, number, compact.option_rows, offsets)

    def encode(self, batch: Batch, seats, out: np.ndarray, rows=None, packed: bool = False) -> np.ndarray:
        """Write game i's compact observation by ``seats[i]`` (one seat per game; < 0: zeros) for every i in
        ``rows`` (default all games) into ``out[i]`` (float32[B, size]; other rows are left alone), or with
        ``packed`` into ``out[j]`` for ``i = rows[j]`` (float32[len(rows), size]). Returns ``out``."""
        num_games = len(batch.num_players)
        seats = check_seats(seats, num_games)
        rows = np.arange(num_games, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
        if rows.ndim != 1 or (len(rows) and (rows.min() < 0 or rows.max() >= num_games)):
            raise ValueError(f"rows must be a list of game indices from 0 to {num_games - 1}")
        check_out(out, (len(rows) if packed else num_games, self.size))
        too_big = seats[rows] >= batch.num_players[rows]
        if too_big.any():
            i = int(rows[np.flatnonzero(too_big)[0]])
            raise ValueError(f"game {i}: seat {int(seats[i])} is not a seat of a {int(batch.num_players[i])}-player "
                             "game (seats are 0 to num_players - 1, or -1 for zeros)")
        targets = np.arange(len(rows), dtype=np.int64) if packed else rows
        seats = seats.astype(np.int64, copy=False)
        encode_rows(batch.location, batch.deck_top, batch.deck_end, batch.current, batch.future, batch.exhausted,
                    batch.chosen, batch.cash, batch.has_piece, batch.starting_contract, batch.num_players, batch.round,
                    batch.harbour_master, batch.current_player, batch.phase, batch.resume_phase, batch.current_board,
                    batch.pending, batch.n_pending, batch.options, batch.n_options, batch.payment_page,
                    batch.n_payments, seats, rows, targets, *self.kernel_tables, out)
        return out


def observe_compact(batch: Batch, seats, mode: str = "tracked", cards: Catalogue | None = None) -> np.ndarray:
    """float32[B, size]: each game's compact observation from ``seats[i]`` (zeros where negative)."""
    enc = CompactBatchEncoder(cards, mode)
    return enc.encode(batch, np.asarray(seats, dtype=np.int64), np.empty((len(batch.num_players), enc.size),
                                                                         np.float32))


@numba.njit(cache=True)
def encode_rows(location, deck_top, deck_end, current, future, exhausted, chosen, cash, has_piece,
                starting_contract, num_players, rnd, harbour_master, current_player, phase, resume_phase,
                current_board, pending, n_pending, options, n_options, payment_page, n_payments, seats, rows, targets,
                dest, split_at, pair_cards, pair_of, hides_starts, holds_known, others_see_options, type_of, number,
                option_rows, off, out):
    """Write game ``rows[r]``'s compact observation by ``seats[rows[r]]`` (zeros where it is < 0) into
    ``out[targets[r]]`` for every r; after the Batch's arrays, seats, rows and targets come a
    ``CompactBatchEncoder``'s ``kernel_tables``. Internal API: compiled callers (opponents_batch) encode with it."""
    num_cards = location.shape[1]
    sums = np.zeros(option_rows.shape[1], np.int64)
    slots = current.shape[2]
    future_slots = future.shape[2]
    width = option_rows.shape[1]
    for r in range(rows.shape[0]):
        i = rows[r]
        o = out[targets[r]]
        o[:] = 0.0
        seat = seats[i]
        if seat < 0:
            continue
        n = num_players[i]
        ph = phase[i]
        # Supply slots: card type + 1, 0 = empty (current 4 x 4, then future 4 x 2).
        for b in range(NUM_BOARDS):
            for k in range(slots):
                c = current[i, b, k]
                if c >= 0:
                    o[b * slots + k] = type_of[c] + 1
            for k in range(future_slots):
                c = future[i, b, k]
                if c >= 0:
                    o[NUM_BOARDS * slots + b * future_slots + k] = type_of[c] + 1
        # Header (observation.Encoder.header).
        o[off[O_COUNT] + n - 2] = 1.0
        o[off[O_ROUND]] = rnd[i] / (rnd[i] + ROUND_HALF)
        o[off[O_PHASE] + (resume_phase[i] if ph == PAY else ph)] = 1.0
        if current_board[i] >= 0:
            o[off[O_BOARD] + current_board[i]] = 1.0
        for b in range(NUM_BOARDS):
            o[off[O_CHOSEN] + b] = chosen[i, b]
            o[off[O_EXHAUSTED] + b] = exhausted[i, b]
            o[off[O_DECKS] + b] = (deck_end[i, b] - deck_top[i, b]) / MAX_DECK
        # Card counts: hands, discard piles, face-up ships and (deck-content modes) decks, one add per card.
        at = dest[n, seat]
        for c in range(num_cards):
            o[at[location[i, c], type_of[c]]] += 1.0
        splits = split_at[n, seat]
        for m in range(pair_cards.shape[0]):  # by_board: the cards of types on several boards, again by board
            column = splits[location[i, pair_cards[m]]]
            if column >= 0:
                o[off[O_SPLIT] + pair_of[m] * _SPLIT_WIDTH + column] += 1.0
        for k in range(n):
            q = (seat + k) % n
            base = off[O_SEATS] + k * _SEAT_WIDTH
            o[base] = 1.0
            o[base + 1] = cash[i, q] / CASH_SCALE
            o[base + 2] = has_piece[i, q]
            o[base + 3] = 1.0 if q == harbour_master[i] else 0.0
            o[base + 4] = 1.0 if ph != OVER and q == current_player[i] else 0.0
            start = starting_contract[i, q]
            holds = location[i, start] == HAND + q
            if holds and (holds_known or k == 0):
                o[off[O_HOLDS] + k] = 1.0
            # knowledge.starting_contracts: an opponent's held starting contract is hidden unless staged.
            if hides_starts and holds and k != 0:
                staged = False
                for j in range(n_pending[i]):
                    if pending[i, j] == start:
                        staged = True
                if not staged:
                    o[at[HAND + q, type_of[start]]] -= 1.0
        for j in range(n_pending[i]):
            o[off[O_PENDING] + number[pending[i, j]]] = 1.0
        o[off[O_OPTIONS]:off[O_OPTIONS] + width] = 0.0  # the trash float
        if ph == PAY:
            o[off[O_PAYING]] = 1.0
        if ph == PAY and (others_see_options or seat == current_player[i]):  # knowledge.sees_payment_options
            write_payment_page(o, off[O_PAGE], payment_page[i], n_payments[i])
            for k in range(n_options[i]):
                sums[:] = 0
                for w in range(options.shape[2]):
                    bits = options[i, k, w]
                    for j in range(64):
                        if (bits >> j) & 1:
                            c = w * 64 + j
                            for x in range(width):
                                sums[x] += option_rows[c, x]
                base = off[O_OPTIONS] + k * width
                for x in range(width - 1):
                    o[base + x] = sums[x]
                o[base + width - 1] = sums[width - 1] / VALUE_SCALE
    return out


__all__ = ["CompactBatchEncoder", "NUM_SLOTS", "encode_rows", "observe_compact"]
