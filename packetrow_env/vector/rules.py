"""The rules of ``engine.Game`` as compiled kernels over a batch: legal masks and one action per game.

Each function mirrors the engine method of the same name (docs/rules.md ids in their docstrings); the
batch kernels at the bottom loop over games inside compiled code. ``Game`` stays the readable reference;
tests/test_vector.py plays both side by side and compares every step.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .. import actions
from ..cards import ASSISTANT, BANK, BANKER, BUILDING, GUILDHALL, MONEY, NUM_BOARDS, SHIP
from ..state import (MAX_PLAYERS, CHOOSE_BOARD, CURRENT, DECK, DISCARD, FUTURE, FUTURE_SLOTS, HAND, MAX_SUPPLY, MUST_TAKE, OVER,
                     PAY, REMOVED, SHIPS, STARTING_CASH, END_THRESHOLD as _END, SUPPLY_SIZE as _SUPPLY_SIZE, TAKE, TWO_PLAYER_REMOVAL)
from .batch import WORDS
from .seeded_shuffle import seed_state, shuffle
from .shipment import GAVE_UP, SHIPPING_KINDS, addable, best_fulfilment, cheapest_cover, fulfillable, payment_options
from .tables import COST, DISCARD as DISCARD_PILE, KIND, MONEY as MONEY_VALUE, NUMBER, REWARD, VP

NUM_ACTIONS = actions.NUM_ACTIONS
ADD_CONTRACT, SHIP_ACTION, PAY_ACTION, MORE = actions.ADD_CONTRACT, actions.SHIP, actions.PAY, actions.MORE
PAGE = actions.MAX_PAYMENT_OPTIONS
TAKE_ACTION, TAKE_FUTURE, PASS = actions.TAKE, actions.TAKE_FUTURE, actions.PASS
END_THRESHOLD = np.array([0, 0] + [_END[n] for n in range(2, 6)], dtype=np.int64)  # by player count (R-END-1)
SUPPLY_SIZE = np.array([0, 0] + [_SUPPLY_SIZE[n] for n in range(2, 6)], dtype=np.int64)  # R-SETUP-4
_JIT = dict(cache=True, nogil=True)
# Kernels that take the Batch (a tuple of ~30 arrays) are compiled without reference counting: with it every call
# increfs and decrefs each array, a large part of a step's time (measured, docs/benchmarks.md). They allocate
# nothing (scratch comes from the batch loops) and call only shipment's kernels, which are compiled with reference
# counting on.
_NO_REFCOUNT = dict(_JIT, _nrt=False)
# The kernels of every step (compute_mask, apply, _take, _end_round) are inlined into the batch loops: a call
# copies the Batch's array structs onto the stack (measured, docs/benchmarks.md).


@numba.njit(**_NO_REFCOUNT)
def more_follow(page, n_payments) -> bool:
    """Whether payment options follow page ``page`` of ``n_payments`` (action ``more`` is legal, R-SHIP-7)."""
    return (page + 1) * PAGE < n_payments


class HandCache(NamedTuple):
    """What the masks read of each seat's hand, kept up to date by the kernels (as Game caches its summaries)."""

    fulfil: np.ndarray  # int64[B, 5]: bits over contract numbers, the contracts shippable alone (while not dirty)
    dirty: np.ndarray  # int8[B, 5]: fulfil must be recomputed (the hand changed)
    money: np.ndarray  # int32[B, 5]: the money cards' total in hand (R-TAKE-4)
    assistants: np.ndarray  # int8[B, 5]: assistants in hand (R-TAKE-2)
    unsettled: np.ndarray  # bool[B, 5]: the final fulfilment (R-SCORE-1) is left to the caller (shipment.GAVE_UP)


def hand_cache(num_games: int) -> HandCache:
    """Empty caches for ``num_games`` games (every seat dirty)."""
    shape = (num_games, MAX_PLAYERS)
    return HandCache(np.zeros(shape, np.int64), np.ones(shape, np.int8), np.zeros(shape, np.int32),
                     np.zeros(shape, np.int8), np.zeros(shape, np.bool_))


# ------------------------------------------------------------------ what a seat holds

@numba.njit(**_NO_REFCOUNT)
def _resources(b, i, p, out):
    """The sorted ids of seat p's hand and ships into ``out``; returns how many."""
    n = 0
    loc = b.location[i]
    for c in range(loc.shape[0]):
        code = loc[c]
        if code == HAND + p or code == SHIPS + p:
            out[n] = c
            n += 1
    return n


@numba.njit(inline='never', **_NO_REFCOUNT)
def _contracts_in_hand(b, tab, i, p, res, n, con):
    """The contracts among the first ``n`` of ``res`` that lie in seat p's hand, into ``con``; returns how many."""
    k = 0
    for j in range(n):
        c = res[j]
        if tab[NUMBER, c] >= 0 and b.location[i, c] == HAND + p:
            con[k] = c
            k += 1
    return k


@numba.njit(inline='never', **_NO_REFCOUNT)
def _fulfillable(b, tab, i, p, res, con):
    """Bitmask over contract numbers: contracts in p's hand that could be shipped on their own now."""
    n = _resources(b, i, p, res)
    has_ship = False
    for j in range(n):
        if b.location[i, res[j]] == SHIPS + p:
            has_ship = True
            break
    found = np.int64(0)
    if not has_ship:  # every contract needs a ship: skip the search
        return found
    k = _contracts_in_hand(b, tab, i, p, res, n, con)
    # the kernels write their answer over the contracts already read: con serves as both
    for j in range(fulfillable(tab, res[:n], con[:k], con)):
        found |= np.int64(1) << tab[NUMBER, con[j]]
    return found


# ------------------------------------------------------------------ legality

@numba.njit(**_NO_REFCOUNT)
def _choosable(b, i, board):
    """Not chosen this round and holding a card in its current or future supply (R-ROUND-1)."""
    if b.chosen[i, board]:
        return False
    for s in range(MAX_SUPPLY):
        if b.current[i, board, s] >= 0:
            return True
    for s in range(FUTURE_SLOTS):
        if b.future[i, board, s] >= 0:
            return True
    return False


@numba.njit(inline='always', **_NO_REFCOUNT)
def _any_choosable(b, i):
    """Whether a board can be chosen (R-ROUND-4: else the harbour master's pass ends the round)."""
    for board in range(NUM_BOARDS):
        if _choosable(b, i, board):
            return True
    return False


@numba.njit(**_NO_REFCOUNT)
def _affordable(b, tab, i, board, budget, has_assistant, mask):
    """Mark the takes on ``board`` the budget allows (R-TAKE-1, R-TAKE-2, R-TAKE-4); whether any is."""
    any_take = False
    for s in range(MAX_SUPPLY):
        c = b.current[i, board, s]
        if c >= 0 and tab[COST, c] <= budget:
            any_take = True
            if mask is not None:
                mask[TAKE_ACTION + s] = True
    if has_assistant:
        for s in range(FUTURE_SLOTS):
            c = b.future[i, board, s]
            if c >= 0 and tab[COST, c] <= budget:
                any_take = True
                if mask is not None:
                    mask[TAKE_FUTURE + s] = True
    return any_take


@numba.njit(**_NO_REFCOUNT)
def _others_have_taken(b, i):
    """Only the harbour master still holds his piece (R-ROUND-5)."""
    held = 0
    for q in range(b.num_players[i]):
        held += b.has_piece[i, q] == 1
    return held == 1


@numba.njit(inline='never', **_NO_REFCOUNT)
def _pending_mask(b, tab, i, p, mask, res, con):
    """While a shipment is staged: the contracts in hand it can take too, and ship (R-SHIP-6)."""
    n = _resources(b, i, p, res)
    k = _contracts_in_hand(b, tab, i, p, res, n, con)
    for j in range(addable(tab, res[:n], b.pending[i, :b.n_pending[i]], con[:k], con)):
        mask[ADD_CONTRACT + tab[NUMBER, con[j]]] = True
    mask[SHIP_ACTION] = True


@numba.njit(inline='always', **_NO_REFCOUNT)
def compute_mask(b, tab, i, hc, mask, res, con):
    """Game i's legal actions into ``mask`` (cleared first), as ``Game._compute_mask``."""
    mask[:] = False
    phase = b.phase[i]
    if phase == OVER:
        return
    if phase == PAY:  # R-SHIP-7: an option of the page shown, or the next page
        for k in range(b.n_options[i]):
            mask[PAY_ACTION + k] = True
        mask[MORE] = more_follow(b.payment_page[i], b.n_payments[i])
        return
    p = b.current_player[i]
    if b.n_pending[i] > 0:  # R-SHIP-6: only add a contract the shipment can take too, or ship
        _pending_mask(b, tab, i, p, mask, res, con)
        return
    if hc.dirty[i, p]:
        hc.fulfil[i, p] = _fulfillable(b, tab, i, p, res, con)  # a call of its own: it stays out of the hot path
        hc.dirty[i, p] = 0
    bits = hc.fulfil[i, p]
    k = 0
    while bits:
        if bits & 1:
            mask[ADD_CONTRACT + k] = True
        bits >>= 1
        k += 1
    if phase == CHOOSE_BOARD:
        for board in range(NUM_BOARDS):
            if _choosable(b, i, board):
                mask[board] = True
        return
    has_assistant = hc.assistants[i, p] > 0
    budget = b.cash[i, p] + hc.money[i, p]
    _affordable(b, tab, i, b.current_board[i], budget, has_assistant, mask)
    if phase == TAKE:
        mask[PASS] = True
        if p == b.harbour_master[i] and _others_have_taken(b, i):  # R-ROUND-5
            for board in range(NUM_BOARDS):
                if _choosable(b, i, board) and _affordable(b, tab, i, board, budget, has_assistant, None):
                    mask[board] = True


# ------------------------------------------------------------------ one action

@numba.njit(**_NO_REFCOUNT)
def _ask_next(b, i):
    """The next seat after the current one that still holds his piece, or the harbour master (R-ROUND-2)."""
    n = b.num_players[i]
    p = b.current_player[i]
    while True:
        p = (p + 1) % n
        if p == b.harbour_master[i] or b.has_piece[i, p]:
            break
    b.current_player[i] = p


@numba.njit(**_NO_REFCOUNT)
def _refill(b, i, board):
    """Refill a board (R-REFILL-1, R-REFILL-2, R-VAR-2), as ``engine.refill``."""
    loc = b.location[i]
    for s in range(MAX_SUPPLY):
        c = b.current[i, board, s]
        if c >= 0:
            loc[c] = DISCARD + board
        b.current[i, board, s] = -1
    filled = 0
    for s in range(FUTURE_SLOTS):  # the future supply moves down first
        c = b.future[i, board, s]
        if c >= 0:
            b.current[i, board, filled] = c
            loc[c] = CURRENT + board
            filled += 1
    top = np.int64(b.deck_top[i, board])
    end = np.int64(b.deck_end[i, board])
    count = min(np.int64(b.supply_size[i]) - filled, end - top)
    for j in range(count):
        c = b.deck[i, board, top + j]
        b.current[i, board, filled] = c
        loc[c] = CURRENT + board
        filled += 1
    top += count
    upcoming = min(top + FUTURE_SLOTS, end) - top
    for s in range(FUTURE_SLOTS):
        c = b.deck[i, board, top + s] if s < upcoming else -1
        b.future[i, board, s] = c
        if c >= 0:
            loc[c] = FUTURE + board
    b.deck_top[i, board] = top + upcoming
    if filled < b.supply_size[i]:  # R-REFILL-2: exhausted for good
        b.exhausted[i, board] = 1


@numba.njit(**_NO_REFCOUNT)
def _discard_bits(b, tab, i, bits):
    """Move every card of a bitset to its discard pile."""
    for w in range(WORDS):
        word = bits[w]
        for j in range(64):
            if word >> j & 1:
                c = w * 64 + j
                b.location[i, c] = tab[DISCARD_PILE, c]


@numba.njit(**_NO_REFCOUNT)
def _settle(b, tab, i, p, paid, hc):
    """Discard the staged contracts and the payment, take the reward (R-SHIP-1, R-SHIP-8)."""
    _discard_bits(b, tab, i, paid)
    for j in range(b.n_pending[i]):
        c = b.pending[i, j]
        b.location[i, c] = tab[DISCARD_PILE, c]
        b.cash[i, p] += tab[REWARD, c]
        b.pending[i, j] = -1
    b.n_pending[i] = 0
    b.n_options[i] = 0
    b.n_payments[i] = 0
    b.payment_page[i] = 0
    hc.dirty[i, p] = 1


@numba.njit(**_NO_REFCOUNT)
def _show_page(b, tab, i, p, res, con):
    """Game i's payment options of its page into b.options and b.n_options, their number in all into
    b.n_payments (R-SHIP-7)."""
    n = _resources(b, i, p, res)
    npend = b.n_pending[i]
    for j in range(npend):  # the staged contracts, sorted by insertion (a few at most)
        c = b.pending[i, j]
        k = j
        while k > 0 and con[k - 1] > c:
            con[k] = con[k - 1]
            k -= 1
        con[k] = c
    first = b.payment_page[i] * PAGE
    count = payment_options(tab, res[:n], con[:npend], b.options[i], first)
    b.n_payments[i] = count
    b.n_options[i] = min(count - first, PAGE)


@numba.njit(**_NO_REFCOUNT)
def _ship(b, tab, i, p, hc, res, con):
    """Fulfil the staged shipment: at once with its only payment option, else enter phase pay (R-SHIP-7)."""
    _show_page(b, tab, i, p, res, con)
    if b.n_payments[i] == 1:
        _settle(b, tab, i, p, b.options[i, 0], hc)
    else:
        b.resume_phase[i] = b.phase[i]
        b.phase[i] = PAY


@numba.njit(**_NO_REFCOUNT)
def _pay_cost(b, tab, i, p, cost, res, bits, hc):
    """Pay a cost, cashing money cards from hand when cash is short (R-TAKE-3, R-TAKE-4)."""
    cash = np.int64(b.cash[i, p])
    if cash < cost:
        n = _resources(b, i, p, res)  # cheapest_cover reads only the money cards among them
        bits[:] = 0
        cheapest_cover(tab, res[:n], cost - cash, bits)
        for w in range(WORDS):
            for j in range(64):
                if bits[w] >> j & 1:
                    c = w * 64 + j
                    b.location[i, c] = DISCARD + BANK
                    cash += tab[MONEY_VALUE, c]
                    hc.money[i, p] -= tab[MONEY_VALUE, c]
    b.cash[i, p] = cash - cost


@numba.njit(inline='always', **_NO_REFCOUNT)
def _take(b, tab, i, p, slot, assistant, hc, res, bits):
    """Take a card from the chosen board's current (or, with an assistant, future) supply (R-TAKE-1..5)."""
    board = b.current_board[i]
    if assistant:  # R-TAKE-2: the lowest assistant goes to the guildhall discard pile
        loc = b.location[i]
        for c in range(loc.shape[0]):
            if loc[c] == HAND + p and tab[KIND, c] == ASSISTANT:
                loc[c] = DISCARD + GUILDHALL
                hc.assistants[i, p] -= 1
                break
        card = b.future[i, board, slot]
        b.future[i, board, slot] = -1
    else:
        card = b.current[i, board, slot]
        b.current[i, board, slot] = -1
    cost = tab[COST, card]
    if cost:
        _pay_cost(b, tab, i, p, cost, res, bits, hc)
    kind = tab[KIND, card]
    b.location[i, card] = SHIPS + p if kind == SHIP else HAND + p  # R-TAKE-5
    hc.money[i, p] += tab[MONEY_VALUE, card]
    hc.assistants[i, p] += kind == ASSISTANT
    b.has_piece[i, p] = 0  # R-ROUND-6: his one card this round
    if SHIPPING_KINDS[kind]:  # buildings, money, bankers and assistants leave what he can ship as it was
        hc.dirty[i, p] = 1


@numba.njit(**_NO_REFCOUNT)
def _finish(b, tab, i, hc, res, con, bits, paid):
    """Final fulfilment, cashing and the end of the game (R-SCORE-1)."""
    loc = b.location[i]
    for p in range(b.num_players[i]):
        n = _resources(b, i, p, res)
        ncon = _contracts_in_hand(b, tab, i, p, res, n, con)
        if ncon:  # (without ships it fulfils nothing)
            bits[:] = 0
            paid[:] = 0
            if best_fulfilment(tab, res[:n], con[:ncon], bits, paid) == GAVE_UP:
                hc.unsettled[i, p] = True  # a hand beyond the compiled search's budget: shipping's search settles it
            _discard_bits(b, tab, i, paid)
            for w in range(WORDS):
                for j in range(64):
                    if bits[w] >> j & 1:
                        c = w * 64 + j
                        loc[c] = tab[DISCARD_PILE, c]
                        b.cash[i, p] += tab[REWARD, c]
        for c in range(loc.shape[0]):
            if loc[c] == HAND + p and tab[KIND, c] == MONEY:
                loc[c] = DISCARD + BANK
                b.cash[i, p] += tab[MONEY_VALUE, c]
        hc.money[i, p] = 0
        hc.dirty[i, p] = 1
    b.phase[i] = OVER
    b.current_board[i] = -1
    b.n_pending[i] = 0
    b.pending[i, :] = -1


@numba.njit(inline='always', **_NO_REFCOUNT)
def _end_round(b, tab, i, hc, res, con, bits, paid):
    """Refill the chosen boards in board order, then end the game or pass the harbour master on (R-REFILL, R-END-1)."""
    for board in range(NUM_BOARDS):  # R-REFILL-1, R-REFILL-3: sorted(chosen_order) is the chosen boards in board order
        if b.chosen[i, board]:
            _refill(b, i, board)
    n = b.num_players[i]
    exhausted = 0
    for board in range(NUM_BOARDS):
        exhausted += b.exhausted[i, board]
    if exhausted >= END_THRESHOLD[n]:
        _finish(b, tab, i, hc, res, con, bits, paid)
        return
    b.harbour_master[i] = (b.harbour_master[i] + 1) % n  # R-REFILL-4
    b.round[i] += 1
    for q in range(n):
        b.has_piece[i, q] = 1
    b.chosen[i, :] = 0
    b.chosen_order[i, :] = -1
    b.n_chosen[i] = 0
    b.phase[i] = CHOOSE_BOARD
    b.current_board[i] = -1
    b.current_player[i] = b.harbour_master[i]


@numba.njit(inline='always', **_NO_REFCOUNT)
def apply(b, tab, contract_ids, i, a, hc, res, con, bits, paid):
    """Apply legal action ``a`` of game i's current player, as ``Game.step`` after its legality check."""
    h = b.n_history[i]
    b.history[i, h] = a
    b.n_history[i] = h + 1
    p = b.current_player[i]
    if a == MORE:
        b.payment_page[i] += 1
        _show_page(b, tab, i, p, res, con)
    elif a >= PAY_ACTION:
        _settle(b, tab, i, p, b.options[i, a - PAY_ACTION], hc)
        b.phase[i] = b.resume_phase[i]
        b.resume_phase[i] = -1
    elif a == SHIP_ACTION:
        _ship(b, tab, i, p, hc, res, con)
    elif a >= ADD_CONTRACT:
        b.pending[i, b.n_pending[i]] = contract_ids[a - ADD_CONTRACT]
        b.n_pending[i] += 1
    elif a == PASS:
        if p != b.harbour_master[i]:
            _ask_next(b, i)
        elif _others_have_taken(b, i) or not _any_choosable(b, i):  # R-ROUND-5, R-ROUND-4
            _end_round(b, tab, i, hc, res, con, bits, paid)
        else:
            b.phase[i] = CHOOSE_BOARD
            b.current_board[i] = -1
    elif a >= TAKE_ACTION:
        if a >= TAKE_FUTURE:
            _take(b, tab, i, p, a - TAKE_FUTURE, True, hc, res, bits)
        else:
            _take(b, tab, i, p, a - TAKE_ACTION, False, hc, res, bits)
        if p == b.harbour_master[i]:  # R-ROUND-3
            _end_round(b, tab, i, hc, res, con, bits, paid)
        else:
            _ask_next(b, i)
    else:  # choose board a
        b.chosen[i, a] = 1
        b.chosen_order[i, b.n_chosen[i]] = a
        b.n_chosen[i] += 1
        b.current_board[i] = a
        if b.phase[i] == TAKE:  # R-ROUND-5: the harbour master chose a board to take from
            b.phase[i] = MUST_TAKE
        else:  # R-ROUND-2: ask from the left of the harbour master
            b.phase[i] = TAKE
            b.current_player[i] = b.harbour_master[i]
            _ask_next(b, i)


# ------------------------------------------------------------------ over the batch

class Scratch(NamedTuple):
    """Work arrays of the kernels, allocated once per batch: kernels without reference counting cannot allocate."""

    res: np.ndarray  # int64[256]: a seat's resources (card ids)
    con: np.ndarray  # int64[64]: contracts
    bits: np.ndarray  # int64[WORDS]: a card bitset
    paid: np.ndarray  # int64[WORDS]: a card bitset


def scratch() -> Scratch:
    """Fresh work arrays for ``masks_of`` and ``step``."""
    return Scratch(np.empty(256, np.int64), np.empty(64, np.int64), np.zeros(WORDS, np.int64),
                   np.zeros(WORDS, np.int64))


@numba.njit(**_NO_REFCOUNT)
def masks_of(b, tab, contract_ids, hc, out, rows, sc):
    """The legal masks of games ``rows`` into ``out[rows]`` (bool[B, NUM_ACTIONS])."""
    for i in rows:
        compute_mask(b, tab, i, hc, out[i], sc.res, sc.con)


@numba.njit(**_NO_REFCOUNT)
def step(b, tab, contract_ids, acts, where, hc, mask, ended, sc):
    """Apply ``acts[i]`` to every running game with ``where[i]``, then refresh ``mask``; ``ended[i]`` is set where
    game i ended on this step. Returns -1, or the first game whose action ``mask`` forbids, before any game moves.
    """
    for i in range(acts.shape[0]):
        if where[i] and b.phase[i] != OVER:
            a = acts[i]
            if a < 0 or a >= NUM_ACTIONS or not mask[i, a]:
                return i
    for i in range(acts.shape[0]):
        ended[i] = False
        if not where[i] or b.phase[i] == OVER:
            continue
        apply(b, tab, contract_ids, i, acts[i], hc, sc.res, sc.con, sc.bits, sc.paid)
        ended[i] = b.phase[i] == OVER
        compute_mask(b, tab, i, hc, mask[i], sc.res, sc.con)
    return -1


@numba.njit(**_JIT)
def holdings(b, tab, rows, building_vp, bankers):
    """Per game of ``rows`` (row j of the outputs) and seat: the VP of the buildings and the number of bankers in
    hand (R-SCORE-2, R-SCORE-3)."""
    building_vp[:] = 0
    bankers[:] = 0
    for j in range(rows.shape[0]):
        i = rows[j]
        n = b.num_players[i]
        loc = b.location[i]
        for c in range(loc.shape[0]):
            q = loc[c] - HAND
            if 0 <= q < n:
                kind = tab[KIND, c]
                if kind == BUILDING:
                    building_vp[j, q] += tab[VP, c]
                elif kind == BANKER:
                    bankers[j, q] += 1


@numba.njit(**_NO_REFCOUNT)
def deal(b, hc, i, n, decks, sizes, starts):
    """Set up game i for ``n`` players from its shuffled decks and starting contracts, as ``Game.new`` (R-SETUP-1..7).

    ``decks[board, :sizes[board]]`` is the board's deck top first, ``starts`` the starting contracts shuffled.
    """
    loc = b.location[i]
    b.num_players[i] = n
    b.supply_size[i] = SUPPLY_SIZE[n]
    for board in range(NUM_BOARDS):  # R-SETUP-2
        b.deck[i, board, :] = -1
        for j in range(sizes[board]):
            c = decks[board, j]
            b.deck[i, board, j] = c
            loc[c] = DECK + board
        b.deck_top[i, board] = 0
        b.deck_end[i, board] = sizes[board]
        if n == 2:  # R-SETUP-3
            for j in range(TWO_PLAYER_REMOVAL):
                loc[decks[board, j]] = REMOVED
            b.deck_top[i, board] = TWO_PLAYER_REMOVAL
        b.current[i, board, :] = -1
        b.future[i, board, :] = -1
        b.exhausted[i, board] = 0
        b.chosen[i, board] = 0
    for board in range(NUM_BOARDS):  # R-SETUP-4: dealing is a refill of empty supplies
        _refill(b, i, board)
    b.starting_contract[i, :] = -1
    for j in range(starts.shape[0]):  # R-SETUP-5
        c = starts[j]
        if j < n:
            loc[c] = HAND + j
            b.starting_contract[i, j] = c
        else:
            loc[c] = REMOVED
    b.cash[i, :] = 0
    b.has_piece[i, :] = 0
    for q in range(n):
        b.cash[i, q] = STARTING_CASH  # R-SETUP-6
        b.has_piece[i, q] = 1
    b.round[i] = 1
    b.harbour_master[i] = 0  # R-SETUP-7
    b.current_player[i] = 0
    b.phase[i] = CHOOSE_BOARD
    b.resume_phase[i] = -1
    b.current_board[i] = -1
    b.chosen_order[i, :] = -1
    b.n_chosen[i] = 0
    b.pending[i, :] = -1
    b.n_pending[i] = 0
    b.options[i, :, :] = 0
    b.n_options[i] = 0
    b.n_payments[i] = 0
    b.payment_page[i] = 0
    b.n_history[i] = 0
    hc.dirty[i, :] = 1
    hc.money[i, :] = 0  # a hand holds only its starting contract
    hc.assistants[i, :] = 0


@numba.njit(**_JIT)
def deal_seeded(b, hc, rows, players, seeds, board_cards, sizes, start_contracts, rng):
    """Deal game ``rows[j]`` as ``Game.new(players[rows[j]], seeds[j])``: its generator's shuffles (board decks in
    board order, then the starting contracts) by ``seeded_shuffle``, the generator's state after the deal into
    ``rng``."""
    decks = np.empty_like(board_cards)
    starts = np.empty_like(start_contracts)
    for j in range(rows.shape[0]):
        i = rows[j]
        st = rng[i]
        seed_state(seeds[j], st)
        for board in range(NUM_BOARDS):  # R-SETUP-2
            decks[board, :] = board_cards[board, :]
            shuffle(st, decks[board, :sizes[board]])
        starts[:] = start_contracts
        shuffle(st, starts)  # R-SETUP-5
        deal(b, hc, i, players[i], decks, sizes, starts)
