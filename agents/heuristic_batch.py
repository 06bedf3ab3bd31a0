"""HeuristicAgent's moves for many games at once: its rules replayed over a VectorGame's arrays, compiled.

``heuristic_actions(games, rows, mode)`` gives, for each game row of a ``VectorGame``, the action that
``HeuristicAgent(threshold=...).act(SeatView(games.game(i), seat, mode))`` picks for the player to act, reading
only what that seat knows in ``mode`` (``knowledge``: his own hand, the opponents' hands as the mode reveals
them, the public table). Every value is the agent's float64 arithmetic in the agent's order, so the choice is
the agent's; exact ties (within ``heuristic_weights.TIE``) are broken by one uniform draw per row among the tied
options, in the agent's order of options. heuristic.py stays the readable reference:
tests/test_heuristic_batch.py plays both side by side.
"""

from __future__ import annotations

import operator
from functools import lru_cache

import numba
import numpy as np

from packetrow_env import actions
from packetrow_env.cards import (ASSISTANT, BANKER, BUILDING, CAPTAIN, CONTRACT, GOLD, GOODS, GOODS_KIND, KINDS,
                                 MONEY, SHIP, TRADER, Catalogue)
from packetrow_env.knowledge import UNKNOWN, check_mode, hides_held_starting_contracts, location_view
from packetrow_env.scoring import leader_banker_points, time_left_batch
from packetrow_env.state import (CHOOSE_BOARD, FUTURE_SLOTS, HAND, MAX_PLAYERS, MAX_SUPPLY, MIN_PLAYERS, MUST_TAKE,
                                 OVER, PAY, SHIPS)
from packetrow_env.vector import VectorGame
from packetrow_env.vector.tables import COST, DESTINATION, GOOD, KIND, MONEY as MONEY_VALUE, QUANTITY, REWARD, VALUE, \
    VP, table

from . import heuristic_weights as h

# catalogue_constants, hand_visibility, agent_parameters and decide are internal API: what a compiled caller
# (opponents_batch) needs to play the heuristic inside its own kernel
__all__ = ["agent_parameters", "catalogue_constants", "decide", "hand_visibility", "heuristic_actions"]

_JIT = dict(cache=True, nogil=True)
# The per-game kernels take the Batch and a dozen scratch arrays: compiled without reference counting, as rules'
# kernels are (every call would incref and decref each array); they allocate nothing, _actions hands them scratch.
_NO_REFCOUNT = dict(_JIT, _nrt=False)
NUM_GOODS = len(GOODS)
ADD_CONTRACT, SHIP_ACTION, PAY_ACTION = actions.ADD_CONTRACT, actions.SHIP, actions.PAY
TAKE_ACTION, TAKE_FUTURE, PASS = actions.TAKE, actions.TAKE_FUTURE, actions.PASS
NUM_OPTIONS = PASS  # the most options of one decision: the boards and the takes (actions 0 .. PASS-1)

# A hand summary (``heuristic._Needs``): one int64 row per seat, and a scratch row for a hand with a card more
# (a take's value) or a payment less (rule 1's payment).
DEMAND, UNITS = 0, NUM_GOODS  # + good
GOLD_UNITS, TRADERS, CAPTAINS, MONEY_HELD, BANKERS, ASSISTANTS, NUM_SHIPS, SHIP_DESTINATIONS, NUM_CONTRACTS = \
    range(2 * NUM_GOODS, 2 * NUM_GOODS + 9)
NUM_FIELDS = NUM_CONTRACTS + 1
SCRATCH = MAX_PLAYERS
# Per contract of a summary, in hand order (the order the agent sums their money in): good, destination, reward.
C_GOOD, C_DESTINATION, C_REWARD = range(3)

# The agent's constants reach the kernel as an array at run time: a compiled cache does not see a change
# of an imported number, an argument cannot go stale.
PARAMETERS = ("VP", "UNIT_PRICE", "ASSISTANT_SPEND", "NO_SHIP", "BANKER_LEAD", "BANKER_TRAILING", "LEAD_MARGIN",
              "RESERVE_WEIGHT", "SPENT_VALUE", "ASSISTANT_VALUE", "SWITCH_COST", "UNAFFORDABLE", "TIE")
(P_VP, P_UNIT_PRICE, P_ASSISTANT_SPEND, P_NO_SHIP, P_BANKER_LEAD, P_BANKER_TRAILING, P_LEAD_MARGIN, P_RESERVE,
 P_SPENT, P_ASSISTANT_VALUE, P_SWITCH, P_UNAFFORDABLE, P_TIE, P_RIVAL, P_THRESHOLD) = range(len(PARAMETERS) + 2)


def heuristic_actions(games: VectorGame, rows, mode: str = "tracked", rng=None, threshold: float = 0.0,
                      masks: np.ndarray | None = None) -> np.ndarray:
    """int64[len(rows)]: HeuristicAgent(threshold)'s action for the player to act in each game ``rows[j]``, as
    he sees it in observation ``mode``; ``rng`` (a Generator or a seed) breaks exact ties; ``masks``: the rows'
    legal masks (bool[len(rows), NUM_ACTIONS]) when the caller has them."""
    if not isinstance(games, VectorGame):
        raise ValueError(f"heuristic_actions plays the games of a packetrow_env.vector.VectorGame, got "
                         f"{type(games).__name__}")
    mode = check_mode(mode)
    rows = _check_rows(rows, games)
    threshold = _check_threshold(threshold)
    rng = _check_rng(rng)
    if masks is None:
        masks = games.legal_action_mask()[rows]
    else:
        masks = np.asarray(masks)
        if masks.shape != (len(rows), actions.NUM_ACTIONS) or masks.dtype != bool:
            raise ValueError(f"masks must be the rows' legal masks, a bool array of shape ({len(rows)}, "
                             f"{actions.NUM_ACTIONS}), got {masks.dtype} {masks.shape}")
    b = games.batch
    cards = games.cards
    times = time_left_batch(b.deck_top[rows], b.deck_end[rows], b.num_players[rows], cards, h.TIME_FLOOR)
    draws = rng.random(len(rows))
    contract_ids, powers, flexibility, lead = catalogue_constants(cards)
    out = np.empty(len(rows), np.int64)
    _actions(b, table(cards), contract_ids, masks, rows, hand_visibility(mode), hides_held_starting_contracts(mode),
             times, draws, agent_parameters(threshold), flexibility, powers, lead, out)
    return out


# ------------------------------------------------------------------ checks and tables

def _check_rows(rows, games: VectorGame) -> np.ndarray:
    """The rows as int64, or a ValueError: a 1-D list of indices of games that are not over."""
    arr = np.asarray(rows)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError(f"rows must be a 1-D list of game indices (integers 0 to {games.num_games - 1}), got "
                         f"{arr.dtype} of shape {arr.shape}")
    arr = arr.astype(np.int64)
    bad = arr[(arr < 0) | (arr >= games.num_games)]
    if len(bad):
        raise ValueError(f"rows must be game indices from 0 to {games.num_games - 1}, got {int(bad[0])}")
    over = arr[games.batch.phase[arr] == OVER]
    if len(over):
        raise ValueError(f"game {int(over[0])} is over: no player is to act there (rows must be running games)")
    return arr


def _check_threshold(threshold) -> float:
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.integer, np.floating)) \
            or threshold != threshold:
        raise ValueError(f"threshold must be a number (dollars a take must be worth), got {threshold!r}")
    return float(threshold)


def _check_rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    try:
        seed = None if isinstance(rng, (bool, np.bool_)) else operator.index(rng)
    except TypeError:
        seed = None
    if seed is None or seed < 0:
        raise ValueError(f"rng must be a numpy Generator, a non-negative integer seed or None, got {rng!r}")
    return np.random.default_rng(seed)


@lru_cache(maxsize=64)
def agent_parameters(threshold: float) -> np.ndarray:
    """The agent's constants (``PARAMETERS``), its rival weight and ``threshold``, as the kernel reads them."""
    out = np.array([getattr(h, name) for name in PARAMETERS] + [h.RIVAL_WEIGHT, threshold],
                   dtype=np.float64)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=8)
def catalogue_constants(cards: Catalogue) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(the contract ids by number; MISSING_UNIT ** k for every k a hand can miss, computed by Python as the
    agent does; FLEXIBILITY per kind; leader_banker_points per player count)."""
    contracts = cards.kind == CONTRACT
    most_missing = int(cards.quantity[contracts].sum())
    powers = np.array([h.MISSING_UNIT ** k for k in range(most_missing + 1)], dtype=np.float64)
    flexibility = np.array([h.FLEXIBILITY.get(kind, 0.0) for kind in range(len(KINDS))], dtype=np.float64)
    lead = np.array([leader_banker_points(n) if n >= MIN_PLAYERS else 0 for n in range(MAX_PLAYERS + 1)],
                    dtype=np.int64)
    contract_ids = np.array(cards.contract_ids, dtype=np.int64)
    for array in (contract_ids, powers, flexibility, lead):
        array.flags.writeable = False
    return contract_ids, powers, flexibility, lead


@lru_cache(maxsize=None)
def hand_visibility(mode: str) -> np.ndarray:
    """bool[n, observer, seat]: whether ``observer`` knows the cards of ``seat``'s hand (``location_view``); an
    opponent's held starting contract is the exception, ``hides_held_starting_contracts``."""
    out = np.zeros((MAX_PLAYERS + 1, MAX_PLAYERS, MAX_PLAYERS), dtype=np.bool_)
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        for observer in range(n):
            view = location_view(n, observer, mode)
            for seat in range(n):
                out[n, observer, seat] = view[HAND + seat] != UNKNOWN
    out.flags.writeable = False
    return out


# ------------------------------------------------------------------ hand summaries (heuristic._Needs)

@numba.njit(**_NO_REFCOUNT)
def _add(nd, con, s, tab, c, ship):
    """Count card c into summary s: into the hand, or (``ship``) as a ship in front of the seat."""
    if ship:
        nd[s, NUM_SHIPS] += 1
        d = tab[DESTINATION, c]
        if d >= 0:
            nd[s, SHIP_DESTINATIONS] |= np.int64(1) << d
        return
    kind = tab[KIND, c]
    if kind == CONTRACT:
        g = tab[GOOD, c]
        nd[s, DEMAND + g] += tab[QUANTITY, c]
        k = nd[s, NUM_CONTRACTS]
        con[s, k, C_GOOD] = g
        con[s, k, C_DESTINATION] = tab[DESTINATION, c]
        con[s, k, C_REWARD] = tab[REWARD, c]
        nd[s, NUM_CONTRACTS] = k + 1
    elif kind == GOODS_KIND:
        nd[s, UNITS + tab[GOOD, c]] += tab[QUANTITY, c]
    elif kind == GOLD:
        nd[s, GOLD_UNITS] += tab[QUANTITY, c]
    elif kind == TRADER:
        nd[s, TRADERS] += 1
    elif kind == CAPTAIN:
        nd[s, CAPTAINS] += 1
    elif kind == MONEY:
        nd[s, MONEY_HELD] += tab[MONEY_VALUE, c]
    elif kind == BANKER:
        nd[s, BANKERS] += 1
    elif kind == ASSISTANT:
        nd[s, ASSISTANTS] += 1


@numba.njit(**_NO_REFCOUNT)
def _copy(nd, con, source, target):
    """Summary ``target`` := summary ``source``."""
    for f in range(NUM_FIELDS):  # element by element: a slice copy may allocate a temporary (no refcounting here)
        nd[target, f] = nd[source, f]
    for k in range(nd[source, NUM_CONTRACTS]):
        for f in range(3):
            con[target, k, f] = con[source, k, f]


@numba.njit(**_NO_REFCOUNT)
def _short(nd, s, short):
    """Units still needed per good after goods in hand (``_Needs.missing``'s first step) into ``short``;
    returns the spare units beyond the demand."""
    spare = 0
    for g in range(NUM_GOODS):
        d = nd[s, DEMAND + g]
        u = nd[s, UNITS + g]
        short[g] = max(0, d - u)
        spare += max(0, u - d)
    return spare


@numba.njit(**_NO_REFCOUNT)
def _missing(nd, s, g, short):
    """``_Needs.missing``: units of good g the contracts still need, after goods and gold in hand."""
    _short(nd, s, short)
    total = 0
    for k in range(NUM_GOODS):
        total += short[k]
    spare_gold = max(0, nd[s, GOLD_UNITS] - (total - short[g]))
    return max(0, short[g] - spare_gold)


@numba.njit(**_NO_REFCOUNT)
def _potential(nd, con, s, t, params, powers, short, order):
    """``_Needs.potential``: the expected contract money of summary s at time left t."""
    spare = _short(nd, s, short)
    fill = nd[s, GOLD_UNITS] + min(spare, 2 * nd[s, TRADERS])
    for g in range(NUM_GOODS):  # the goods by units short, stably (Python's sorted)
        order[g] = g
    for g in range(1, NUM_GOODS):
        key = order[g]
        k = g
        while k > 0 and short[order[k - 1]] > short[key]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = key
    for j in range(NUM_GOODS):
        g = order[j]
        used = min(short[g], fill)
        short[g] -= used
        fill -= used
    any_ship = nd[s, NUM_SHIPS] > 0 and nd[s, CAPTAINS] > 0
    total = 0.0
    for k in range(nd[s, NUM_CONTRACTS]):
        g = con[s, k, C_GOOD]
        d = con[s, k, C_DESTINATION]
        ready_ship = any_ship or (d >= 0 and (nd[s, SHIP_DESTINATIONS] >> d) & 1 == 1)
        ship = 1.0 if ready_ship else params[P_NO_SHIP]
        ready = short[g] == 0 and ship == 1.0
        total += con[s, k, C_REWARD] * powers[short[g]] * ship * (1.0 if ready else t)
    return total


# ------------------------------------------------------------------ values (heuristic.card_value)

@numba.njit(**_NO_REFCOUNT)
def _card_value(tab, nd, con, pot, budget, n, seat, card, t, params, flexibility, powers, lead, short, order):
    """``card_value``: what taking ``card`` is worth to ``seat``, in dollars."""
    kind = tab[KIND, card]
    cost = np.int64(tab[COST, card])
    mine = budget[seat]
    if cost > mine:
        return params[P_UNAFFORDABLE]
    if kind == MONEY:
        return float(tab[MONEY_VALUE, card])
    if kind == BUILDING:
        vp = np.int64(tab[VP, card])
        exact = params[P_VP] * (vp + (mine - cost) // 10 - mine // 10)
        value = t * (params[P_VP] * vp - cost) + (1 - t) * exact
        units = 0
        for g in range(NUM_GOODS):
            if nd[seat, DEMAND + g]:
                units += _missing(nd, seat, g, short)
        reserve = params[P_UNIT_PRICE] * units
        left = mine - cost
        if left < reserve:
            value -= params[P_RESERVE] * (reserve - left) * t
        if nd[seat, BANKERS]:
            runner_up = np.int64(-1 << 62)
            for p in range(n):
                if p != seat:
                    runner_up = max(runner_up, budget[p])
            if left < runner_up + params[P_LEAD_MARGIN] * t:
                value -= params[P_VP] * lead[n] * nd[seat, BANKERS] * params[P_BANKER_LEAD]
        return value
    if kind == CONTRACT or kind == GOODS_KIND or kind == GOLD or kind == SHIP or kind == CAPTAIN or kind == TRADER:
        _copy(nd, con, seat, SCRATCH)
        _add(nd, con, SCRATCH, tab, card, kind == SHIP)
        after = _potential(nd, con, SCRATCH, t, params, powers, short, order)
        return after - pot[seat] - cost + flexibility[kind]
    if kind == BANKER:
        top = budget[0]
        for p in range(1, n):
            top = max(top, budget[p])
        return params[P_VP] * lead[n] * (params[P_BANKER_LEAD] if mine >= top else params[P_BANKER_TRAILING])
    if kind == ASSISTANT:
        return params[P_ASSISTANT_VALUE]
    return 0.0


@numba.njit(**_NO_REFCOUNT)
def _own_best(b, tab, i, nd, con, pot, budget, n, seat, board, taken, num_taken, t, params, flexibility, powers,
              lead, short, order):
    """``HeuristicAgent._own_best``: the most ``seat`` gets from a board's current supply (but ``taken``), and
    its future supply with an assistant."""
    best = params[P_UNAFFORDABLE]
    found = False
    for slot in range(MAX_SUPPLY):
        c = b.current[i, board, slot]
        if c < 0 or _among(c, taken, num_taken):
            continue
        v = _card_value(tab, nd, con, pot, budget, n, seat, c, t, params, flexibility, powers, lead, short, order)
        if not found or v > best:
            best = v
            found = True
    if nd[seat, ASSISTANTS] > 0:
        for slot in range(FUTURE_SLOTS):
            c = b.future[i, board, slot]
            if c < 0:
                continue
            v = _card_value(tab, nd, con, pot, budget, n, seat, c, t, params, flexibility, powers, lead, short,
                            order) - params[P_ASSISTANT_SPEND]
            if not found or v > best:
                best = v
                found = True
    return best


@numba.njit(**_NO_REFCOUNT)
def _among(c, cards, count):
    for k in range(count):
        if cards[k] == c:
            return True
    return False


@numba.njit(**_NO_REFCOUNT)
def _board_score(b, tab, i, nd, con, pot, budget, n, me, board, t, params, flexibility, powers, lead, short,
                 order, taken):
    """``HeuristicAgent._board_score`` (rule 3): his best card after the earlier takers', minus the rivals' best."""
    num_taken = 0
    rivals = 0.0
    any_rival = False
    for k in range(1, n):  # asked before the harbour master, in order (R-ROUND-2)
        p = (me + k) % n
        if not b.has_piece[i, p]:
            continue
        best = 0.0
        pick = -1
        for slot in range(MAX_SUPPLY):
            c = b.current[i, board, slot]
            if c < 0 or _among(c, taken, num_taken):
                continue
            v = _card_value(tab, nd, con, pot, budget, n, p, c, t, params, flexibility, powers, lead, short, order)
            if pick < 0 or v > best:  # np.argmax: the first of the best
                best = v
                pick = c
        if pick < 0:
            break
        if best >= params[P_THRESHOLD]:
            taken[num_taken] = pick
            num_taken += 1
            if not any_rival or best > rivals:
                rivals = best
                any_rival = True
    own = _own_best(b, tab, i, nd, con, pot, budget, n, me, board, taken, num_taken, t, params, flexibility, powers,
                    lead, short, order)
    return own - params[P_RIVAL] * rivals


@numba.njit(**_NO_REFCOUNT)
def _payment(b, tab, i, nd, con, me, staged, t, params, powers, short, order):
    """``choose_payment`` (rule 1): the index of the option that leaves the hand's expected money highest, less
    the card value it spends; ties keep the earlier option."""
    best = 0
    best_score = -np.inf
    loc = b.location[i]
    for k in range(b.n_options[i]):
        option = b.options[i, k]
        nd[SCRATCH, :] = 0
        spent = 0
        for c in range(loc.shape[0]):
            paid = (option[c >> 6] >> (c & 63)) & 1 == 1
            if paid:
                spent += tab[VALUE, c]
            if paid or staged[c]:
                continue
            if loc[c] == HAND + me:
                _add(nd, con, SCRATCH, tab, c, False)
            elif loc[c] == SHIPS + me:
                _add(nd, con, SCRATCH, tab, c, True)
        score = _potential(nd, con, SCRATCH, t, params, powers, short, order) - params[P_SPENT] * spent
        if score > best_score + params[P_TIE]:
            best = k
            best_score = score
    return best


@numba.njit(**_NO_REFCOUNT)
def _best(values, acts, count, draw, tie):
    """``HeuristicAgent._best``: the option of highest value; exact ties broken by ``draw`` (uniform in [0, 1))."""
    top = values[0]
    for k in range(1, count):
        top = max(top, values[k])
    tied = 0
    for k in range(count):
        tied += values[k] >= top - tie
    pick = min(int(draw * tied), tied - 1)
    for k in range(count):
        if values[k] >= top - tie:
            if pick == 0:
                return acts[k]
            pick -= 1
    return acts[0]  # not reached


# ------------------------------------------------------------------ one decision (HeuristicAgent.act)

@numba.njit(**_NO_REFCOUNT)
def decide(b, tab, contract_ids, mask, i, sees, hides, t, draw, params, flexibility, powers, lead, nd, con, pot,
           budget, staged, short, order, taken, values, acts):
    """The agent's action for game i's player to act (``mask``: his legal actions, ``t``: his time left, ``draw``: a
    uniform draw for ties); ``sees`` is ``hand_visibility``'s, ``params`` ``agent_parameters``', ``flexibility``,
    ``powers`` and ``lead`` ``catalogue_constants``' and the rest scratch arrays shaped as ``_actions`` makes them.
    Internal API: compiled callers (opponents_batch) move the heuristic's seats inside their own kernels with it."""
    best_contract = -1  # rule 1: stage the highest-paying contract that can be added (the first of the best)
    best_reward = 0
    for a in range(ADD_CONTRACT, SHIP_ACTION):
        if mask[a]:
            r = tab[REWARD, contract_ids[a - ADD_CONTRACT]]
            if best_contract < 0 or r > best_reward:
                best_contract = a
                best_reward = r
    if best_contract >= 0:
        return best_contract
    if mask[SHIP_ACTION]:
        return SHIP_ACTION
    n = np.int64(b.num_players[i])
    me = np.int64(b.current_player[i])
    loc = b.location[i]
    for j in range(b.n_pending[i]):
        staged[b.pending[i, j]] = True
    nd[:, :] = 0
    for c in range(loc.shape[0]):  # what he knows of every hand (knowledge.known_hand), in card order
        code = np.int64(loc[c])
        if HAND <= code < HAND + n:
            q = code - HAND
            if q != me and (not sees[n, me, q] or (hides and c == b.starting_contract[i, q] and not staged[c])):
                continue
            _add(nd, con, q, tab, c, False)
        elif SHIPS <= code < SHIPS + n:  # ships lie face up
            _add(nd, con, code - SHIPS, tab, c, True)
    for q in range(n):
        budget[q] = b.cash[i, q] + nd[q, MONEY_HELD]
        pot[q] = _potential(nd, con, q, t, params, powers, short, order)
    phase = b.phase[i]
    if phase == PAY:
        action = PAY_ACTION + _payment(b, tab, i, nd, con, me, staged, t, params, powers, short, order)
    elif phase == CHOOSE_BOARD:  # rule 3
        count = 0
        for board in range(TAKE_ACTION):
            if mask[board]:
                values[count] = _board_score(b, tab, i, nd, con, pot, budget, n, me, board, t, params, flexibility,
                                             powers, lead, short, order, taken)
                acts[count] = board
                count += 1
        action = _best(values, acts, count, draw, params[P_TIE])
    else:  # rule 2
        board = b.current_board[i]
        count = 0
        for a in range(TAKE_ACTION, PASS):
            if mask[a]:
                if a >= TAKE_FUTURE:
                    c = b.future[i, board, a - TAKE_FUTURE]
                    spend = params[P_ASSISTANT_SPEND]
                else:
                    c = b.current[i, board, a - TAKE_ACTION]
                    spend = 0.0
                v = _card_value(tab, nd, con, pot, budget, n, me, c, t, params, flexibility, powers, lead, short,
                                order)
                values[count] = v - spend if a >= TAKE_FUTURE else v
                acts[count] = a
                count += 1
        for other in range(TAKE_ACTION):  # R-ROUND-5: the harbour master may choose another board and take there
            if mask[other]:
                values[count] = _own_best(b, tab, i, nd, con, pot, budget, n, me, other, taken, 0, t, params,
                                          flexibility, powers, lead, short, order) - params[P_SWITCH]
                acts[count] = other
                count += 1
        top = -np.inf
        for k in range(count):
            top = max(top, values[k])
        if phase == MUST_TAKE or not mask[PASS] or (count > 0 and top >= params[P_THRESHOLD]):
            action = _best(values, acts, count, draw, params[P_TIE])
        else:
            action = PASS
    for j in range(b.n_pending[i]):
        staged[b.pending[i, j]] = False
    return action


@numba.njit(**_JIT)
def _actions(b, tab, contract_ids, masks, rows, sees, hides, times, draws, params, flexibility, powers, lead, out):
    """``out[j]``: the agent's action in game ``rows[j]`` (legal mask ``masks[j]``, time left ``times[j]``, tie
    draw ``draws[j]``)."""
    nd = np.zeros((MAX_PLAYERS + 1, NUM_FIELDS), np.int64)
    con = np.zeros((MAX_PLAYERS + 1, contract_ids.shape[0] + 1, 3), np.int64)
    pot = np.zeros(MAX_PLAYERS, np.float64)
    budget = np.zeros(MAX_PLAYERS, np.int64)
    staged = np.zeros(b.location.shape[1], np.bool_)
    short = np.zeros(NUM_GOODS, np.int64)
    order = np.zeros(NUM_GOODS, np.int64)
    taken = np.zeros(MAX_SUPPLY, np.int64)
    values = np.zeros(NUM_OPTIONS, np.float64)
    acts = np.zeros(NUM_OPTIONS, np.int64)
    for j in range(rows.shape[0]):
        out[j] = decide(b, tab, contract_ids, masks[j], rows[j], sees, hides, times[j], draws[j], params,
                        flexibility, powers, lead, nd, con, pot, budget, staged, short, order, taken, values, acts)
