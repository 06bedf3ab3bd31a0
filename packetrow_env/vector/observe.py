"""Observation vectors of a whole batch at once: the single engine's ``observation.Encoder``, compiled.

``BatchEncoder(cards, mode).encode(batch, seats, out)`` writes, for every game i of a ``Batch``, the vector
``encoder(cards).encode(game_i, seats[i], mode)`` bit for bit into ``out[i]`` (zeros where seats[i] < 0).
What each mode reveals is not decided here: the lookup tables are the Encoder's own (``observer_tables``, built
from ``knowledge.location_view``), precomputed for every (player count, seat); the kernel only replays
``Encoder.encode`` and ``knowledge.starting_contracts`` over arrays.
"""

from __future__ import annotations

import numba
import numpy as np

from ..cards import DESTINATIONS, Catalogue, resolve
from ..knowledge import OPPONENT_HAND_MODES, check_mode, hides_held_starting_contracts, sees_payment_options
from ..observation import (BLOCK_ROWS, CASH_SCALE, DECK_ROWS, OPTION_FEATURES, ROUND_HALF, SEAT_FEATURES,
                           SPLIT_FEATURES, TRASH_ROW, UNSEEN_ROW, encoder)
from ..state import CURRENT, FUTURE, HAND, MAX_DECK, MAX_PLAYERS, MIN_PLAYERS, NUM_BOARDS, NUM_LOCATIONS, OVER, PAY
from .batch import Batch
from .rules import more_follow

_SEAT_WIDTH = len(SEAT_FEATURES)
_OPTION_WIDTH = len(OPTION_FEATURES)
_SHIP_WIDTH = len(DESTINATIONS)  # per seat in the ships piece
_SPLIT_WIDTH = len(SPLIT_FEATURES)  # per (type, board) pair in by_board


class BatchEncoder:
    """One catalogue's observation of one mode for batches: lookup tables as arrays, and ``encode``."""

    def __init__(self, cards: Catalogue | None = None, mode: str = "tracked"):
        self.cards = cards = resolve(cards)
        self.mode = mode = check_mode(mode)
        enc = self.encoder = encoder(cards)
        f = enc.num_types
        self.size = enc.size_of(mode)
        pieces = {p.name: p for p in enc.pieces_of(mode)}
        block = pieces["current_supply"].offset
        ships = pieces["ships"].offset
        # Per (player count, observer, true location): where a card lying there is counted in the vector (its
        # card type added). Cards the Encoder does not count by location (supplies, counted by slot; ship rows,
        # their own piece) are counted into the payment options instead, cleared right after: no branch per card.
        trash = pieces["paying"].offset
        options = pieces["payment_options"]
        trash_end = options.offset + options.size
        assert trash_end - trash >= max(f, len(DESTINATIONS))  # the trash holds a row of types (f <= 172 cards)
        count_at = np.full((MAX_PLAYERS + 1, MAX_PLAYERS, NUM_LOCATIONS), trash, dtype=np.int32)
        ship_at = np.full((MAX_PLAYERS + 1, MAX_PLAYERS, NUM_LOCATIONS), trash, dtype=np.int32)
        # by_board: where a card of a split pair lying at each location is counted, from its pair's offset: the
        # column, or (not counted) back into the trash. No branch per card: mispredicted, it made the encoder slower
        by_board = pieces["by_board"].offset
        assert trash_end - trash >= len(enc.board_pairs) * _SPLIT_WIDTH
        split_at = np.full((MAX_PLAYERS + 1, MAX_PLAYERS, NUM_LOCATIONS), trash - by_board, dtype=np.int32)
        for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            for seat in range(n):
                keys, _, ship_rows, _ = enc.observer_tables(n, seat, mode)
                for loc in range(NUM_LOCATIONS):
                    key = int(keys[loc])
                    if key < BLOCK_ROWS * f:
                        count_at[n, seat, loc] = block + key
                    elif key < TRASH_ROW * f and self.size != enc.size:  # deck_contents (R-INFO-4)
                        count_at[n, seat, loc] = enc.size + key - DECK_ROWS * f
                    if ship_rows[loc] < MAX_PLAYERS * _SHIP_WIDTH:
                        ship_at[n, seat, loc] = ships + ship_rows[loc]
                    column = enc.split_column[key // f]
                    if column < _SPLIT_WIDTH:
                        split_at[n, seat, loc] = column
        assert (count_at[:, :, CURRENT:FUTURE + NUM_BOARDS] == trash).all()  # supplies: counted by slot only
        self._count_at = count_at
        self._ship_at = ship_at
        self._split_at = split_at
        self._pair_cards = enc.pair_cards.astype(np.int32)  # the cards by_board counts, and each one's offset
        self._pair_at = (by_board + enc.pair_of[enc.pair_cards] * _SPLIT_WIDTH).astype(np.int32)
        self._supply_at = (block + enc.supply_keys).astype(np.int32)  # current then future slots, board-major
        self._type_of = enc.type_of.astype(np.int32)
        self._ship_ids = enc.ship_ids.astype(np.int32)
        self._ship_destination = enc.ship_destination.astype(np.int32)
        self._contract_number = cards.contract_number.astype(np.int32)
        self._option_rows = np.ascontiguousarray(enc.option_rows, dtype=np.float32)
        # Piece offsets, then the end of the payment options, the unseen row and three flags of the mode.
        self._all_rows = {}  # batch size -> arange, the default rows
        self._offsets = np.array([pieces[name].offset for name in (
            "num_players", "round", "phase", "current_board", "chosen_boards", "exhausted", "deck_sizes", "seats",
            "holds_starting_contract", "ships", "pending_shipment", "current_supply", "paying", "payment_options",
            "payment_page")]
            + [trash_end, block + UNSEEN_ROW * f,
               hides_held_starting_contracts(mode),  # R-INFO-3
               mode in OPPONENT_HAND_MODES,  # knows whether opponents still hold theirs
               sees_payment_options(0, 1, mode)],  # a seat but the payer sees his payment options
            dtype=np.int64)

    def encode(self, batch: Batch, seats, out: np.ndarray, rows=None, packed: bool = False) -> np.ndarray:
        """Write game i's observation by ``seats[i]`` (one seat per game; < 0: zeros) for every i in ``rows``
        (default all games) into ``out[i]`` (float32[B, size]; other rows are left alone), or with ``packed``
        into ``out[j]`` for ``i = rows[j]`` (float32[len(rows), size]). Returns ``out``."""
        num_games = len(batch.num_players)
        seats = check_seats(seats, num_games)
        if rows is None:
            rows = self._all_rows.get(num_games)
            if rows is None:
                rows = self._all_rows[num_games] = np.arange(num_games, dtype=np.int64)
        else:
            rows = np.asarray(rows, dtype=np.int64)
            if rows.ndim != 1:
                raise ValueError(f"rows must be a list of game indices from 0 to {num_games - 1}")
        check_out(out, (len(rows) if packed else num_games, self.size))
        bad_row, bad_seat = _encode(batch, seats.astype(np.int64, copy=False), out, rows, packed, self._count_at,
                                    self._ship_at, self._split_at, self._pair_cards, self._pair_at, self._supply_at,
                                    self._type_of,
                                    self._ship_ids, self._ship_destination, self._contract_number, self._option_rows,
                                    self._offsets)
        if bad_row >= 0:  # found before anything was written
            raise ValueError(f"rows must be a list of game indices from 0 to {num_games - 1}, got {int(rows[bad_row])}")
        if bad_seat >= 0:
            i = int(rows[bad_seat])
            raise ValueError(f"game {i}: seat {int(seats[i])} is not a seat of a {int(batch.num_players[i])}-player "
                             "game (seats are 0 to num_players - 1, or -1 for zeros)")
        return out


@numba.njit(inline='always')
def write_payment_page(row, at, page, n_payments):
    """``observation.payment_page`` into ``row[at:at + 2]``: more options follow (action ``more``), the page."""
    row[at] = 1.0 if more_follow(page, n_payments) else 0.0
    row[at + 1] = page / (page + 1)


def check_seats(seats, num_games: int) -> np.ndarray:
    """``seats`` as an array of one integer seat per game, or a ValueError saying so (both batch encoders)."""
    seats = np.asarray(seats)
    if seats.shape != (num_games,) or seats.dtype.kind not in "iu":
        raise ValueError(f"seats must hold one integer seat per game ({num_games}), got {seats.dtype} "
                         f"of shape {seats.shape}")
    return seats


def check_out(out, shape: tuple[int, int]) -> None:
    """A ValueError unless ``out`` is a writeable C-contiguous float32 array of ``shape`` (both batch encoders)."""
    if not isinstance(out, np.ndarray) or out.dtype != np.float32 or out.shape != shape \
            or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"out must be a writeable C-contiguous float32 array of shape {shape}, "
                         f"got {getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}")


@numba.njit(cache=True)
def _encode(batch, seats, out, rows, packed, count_at, ship_at, split_at, pair_cards, pair_at, supply_at, type_of,
            ship_ids, ship_destination, contract_number, option_rows, offsets):
    """Encoder.encode for the games ``rows`` (see BatchEncoder.encode). Checks first, writing nothing if they
    fail: returns (the first position in ``rows`` of a game index out of range, of a seat beyond the game's
    players), -1 where none."""
    for j in range(rows.shape[0]):
        if rows[j] < 0 or rows[j] >= seats.shape[0]:
            return j, -1
        if seats[rows[j]] >= batch.num_players[rows[j]]:
            return -1, j
    o_players, o_round, o_phase, o_board, o_chosen, o_exhausted, o_decks, o_seats = offsets[:8]
    o_holds, o_ships, o_pending, o_block, o_paying, o_options, o_page, o_end, o_unseen = offsets[8:17]
    hides, holds_public, sees_options = offsets[17] != 0, offsets[18] != 0, offsets[19] != 0
    num_cards = type_of.shape[0]
    for j in range(rows.shape[0]):
        i = rows[j]
        row = out[j if packed else i]
        seat = seats[i]
        row[:] = 0.0
        if seat < 0:
            continue
        n = batch.num_players[i]
        location = batch.location[i]
        phase = batch.phase[i]
        over = phase == OVER
        # header (Python floats in Encoder.encode: computed in float64, rounded once to float32)
        row[o_players + n - 2] = 1.0
        r = np.float64(batch.round[i])
        row[o_round] = np.float32(r / (r + ROUND_HALF))
        row[o_phase + (batch.resume_phase[i] if phase == PAY else phase)] = 1.0
        if batch.current_board[i] >= 0:
            row[o_board + batch.current_board[i]] = 1.0
        for b in range(NUM_BOARDS):
            row[o_chosen + b] = batch.chosen[i, b]
            row[o_exhausted + b] = batch.exhausted[i, b]
            row[o_decks + b] = np.float32(np.float64(batch.deck_end[i, b] - batch.deck_top[i, b]) / MAX_DECK)
        for k in range(n):
            q = (seat + k) % n
            at = o_seats + k * _SEAT_WIDTH
            row[at] = 1.0
            row[at + 1] = np.float32(np.float64(batch.cash[i, q]) / CASH_SCALE)
            row[at + 2] = batch.has_piece[i, q]
            row[at + 3] = q == batch.harbour_master[i]
            row[at + 4] = (not over) and q == batch.current_player[i]
        # card counts: by location, then the supplies slot by slot
        counts = count_at[n, seat]
        for c in range(num_cards):
            row[counts[location[c]] + type_of[c]] += 1.0
        splits = split_at[n, seat]
        for m in range(pair_cards.shape[0]):  # by_board: the cards of types on several boards, again by board
            row[pair_at[m] + splits[location[pair_cards[m]]]] += 1.0
        current, future = batch.current[i], batch.future[i]
        width, future_width = current.shape[1], future.shape[1]
        for b in range(NUM_BOARDS):
            for k in range(width + future_width):
                c = current[b, k] if k < width else future[b, k - width]
                if c >= 0:
                    at = supply_at[b * width + k if k < width else NUM_BOARDS * width + b * future_width + k - width]
                    row[at + type_of[c]] += 1.0
        # starting contracts (knowledge.starting_contracts): held ones, and opponents' hidden while unstaged
        for k in range(n):
            q = (seat + k) % n
            c = batch.starting_contract[i, q]
            held = location[c] == HAND + q
            if held and (holds_public or k == 0):
                row[o_holds + k] = 1.0
            if held and hides and k != 0:
                staged = False
                for m in range(batch.n_pending[i]):
                    staged = staged or batch.pending[i, m] == c
                if not staged:
                    row[counts[HAND + q] + type_of[c]] -= 1.0
                    row[o_unseen + type_of[c]] += 1.0
        # ships face up, pending shipment
        ships = ship_at[n, seat]
        for m in range(ship_ids.shape[0]):
            row[ships[location[ship_ids[m]]] + ship_destination[m]] += 1.0
        row[o_paying:o_end] = 0.0  # the trash (see BatchEncoder.__init__)
        for m in range(batch.n_pending[i]):
            row[o_pending + contract_number[batch.pending[i, m]]] = 1.0
        # phase pay: each option the sum of its cards' rows in card-id order, as numpy sums them (float32)
        if phase == PAY:
            row[o_paying] = 1.0
        if phase == PAY and (sees_options or seat == batch.current_player[i]):  # knowledge.sees_payment_options
            write_payment_page(row, o_page, batch.payment_page[i], batch.n_payments[i])
            for k in range(batch.n_options[i]):
                at = o_options + k * _OPTION_WIDTH
                for w in range(batch.options.shape[2]):
                    bits = batch.options[i, k, w]
                    for bit in range(64):
                        if (bits >> bit) & 1:
                            c = w * 64 + bit
                            for x in range(_OPTION_WIDTH):
                                row[at + x] += option_rows[c, x]
                row[at] = 1.0
    return -1, -1
