"""Shipments for compiled kernels: the answers of shipping.py, payment.py and engine._cheapest_cover, in numba.

Every function here answers exactly as its Python reference (tests/test_vector_shipment.py checks them
against it): ``feasible`` is ``shipping.can_fulfil`` (R-SHIP-1..5), ``payment_options`` is
``payment.payment_options`` a page of MAX_PAYMENT_OPTIONS at a time (R-SHIP-7), ``cheapest_payment`` is
``shipping.payment``, ``best_fulfilment`` is ``shipping.best_fulfilment`` (R-SCORE-1) and
``cheapest_cover`` is ``engine._cheapest_cover`` (R-TAKE-4).

Inputs are a catalogue table ``tab = tables.table(cards)`` and int arrays of card ids (any int dtype; each
dtype compiles once): ``res`` a player's hand and ships, which MUST be sorted ascending (the lowest ids of a
class and the R-SHIP-7 id order are read from its order; cards that take no part in a shipment are ignored,
repeats are skipped), ``con`` distinct contract ids in any order (not validated: the engine only stages
contracts of the hand), except for best_fulfilment, whose contracts are sorted ascending too.
Card sets come back as bitsets int64[WORDS]: card c is bit c % 64 of word c // 64.

As in shipping.py a shipment splits into two problems that share no cards: ships and captains serve the
set of destinations, goods, gold and traders the demand per good. Goods with traders are decided by a
dynamic program over the demand still open per good (one mixed-radix index over the four goods).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import cards as _cards
from . import tables as _tables
from .batch import WORDS

KIND, GOOD, QUANTITY, DESTINATION = _tables.KIND, _tables.GOOD, _tables.QUANTITY, _tables.DESTINATION
REWARD, VALUE, MONEY, GROUP = _tables.REWARD, _tables.VALUE, _tables.MONEY, _tables.GROUP
SHIP, CAPTAIN, GOLD, GOODS_KIND, TRADER = _cards.SHIP, _cards.CAPTAIN, _cards.GOLD, _cards.GOODS_KIND, _cards.TRADER
MONEY_KIND = _cards.MONEY
# the kinds a shipment reads (contracts and what pays for them): a hand changed by other cards ships as before
SHIPPING_KINDS = np.zeros(len(_cards.KINDS), np.bool_)
SHIPPING_KINDS[[_cards.CONTRACT, SHIP, CAPTAIN, GOLD, GOODS_KIND, TRADER]] = True
SHIPPING_KINDS.flags.writeable = False
NUM_GOODS = len(_cards.GOODS)
# best_fulfilment gives up (returns GAVE_UP) after this many feasibility tests of contract subsets, or this
# many steps of the trader search (states times cards) over them: a hand holding most of the catalogue has
# millions of feasible subsets, each with a big demand, which shipping.best_fulfilment answers by its search
# over units instead. No hand of a random or played game comes near (benchmarks/vector_shipment.py).
SUBSET_BUDGET = 1 << 14
WORK_BUDGET = 1 << 21
GAVE_UP = -1
_INF = 1 << 62  # above every cost below; sums of a few costs stay inside int64
# reference counting on even where a caller (rules' kernels over the Batch) compiles without it: these allocate
_JIT = dict(cache=True, _nrt=True)


# ---------------------------------------------------------------- small helpers

@njit(**_JIT)
def _popcount(x):
    """Set bits of a non-negative int."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(**_JIT)
def _add_card(bits, c):
    """Set card c in a bitset."""
    bits[c >> 6] |= np.int64(1) << np.int64(c & 63)


@njit(**_JIT)
def _has_above(s, w, low):
    """Whether bitset s holds a card above the single bit `low` of word w."""
    if s[w] & ~(low | (low - 1)):
        return True
    for v in range(w + 1, s.shape[0]):
        if s[v]:
            return True
    return False


@njit(**_JIT)
def _lex_less(a, b):
    """Whether bitset a, as a sorted id list, comes before b (Python tuple order: a prefix comes first)."""
    for w in range(a.shape[0]):
        x = a[w] ^ b[w]
        if x:
            low = x & -x  # the smallest card in one set only
            if a[w] & low:
                return _has_above(b, w, low)  # b is past a here, unless b ends before
            return not _has_above(a, w, low)
    return False


@njit(**_JIT)
def _gold_ok(r, singles, doubles):
    """Whether gold nuggets cover the remaining demand r (R-SHIP-3); shipping._gold_ok."""
    total = 0
    odd = 0
    for g in range(r.shape[0]):
        total += r[g]
        odd += r[g] & 1
    return singles + 2 * doubles >= total + max(0, odd - singles)


@njit(**_JIT)
def _demand(tab, con, demand):
    """Fill units per good of the contracts; return their destinations as a bit mask."""
    demand[:] = 0
    dests = 0
    for c in con:
        demand[tab[GOOD, c]] += tab[QUANTITY, c]
        dests |= 1 << tab[DESTINATION, c]
    return dests


@njit(**_JIT)
def _resources(tab, res, own, cg, cq):
    """Count the shipment cards of res: own units per good and the goods cards' (good, units) go to own/cg/cq.

    Returns (ships, captains, destinations with a ship as a bit mask, single nuggets, double nuggets,
    traders, goods cards)."""
    own[:] = 0
    ships = captains = native = singles = doubles = traders = n = 0
    prev = -1
    for c in res:
        if c == prev:  # res is sorted: a repeat is the same card
            continue
        prev = c
        k = tab[KIND, c]
        if k == GOODS_KIND:
            g = tab[GOOD, c]
            own[g] += tab[QUANTITY, c]
            cg[n] = g
            cq[n] = tab[QUANTITY, c]
            n += 1
        elif k == SHIP:
            ships += 1
            native |= 1 << tab[DESTINATION, c]
        elif k == GOLD:
            if tab[QUANTITY, c] == 2:
                doubles += 1
            else:
                singles += 1
        elif k == CAPTAIN:
            captains += 1
        elif k == TRADER:
            traders += 1
    return ships, captains, native, singles, doubles, traders, n


@njit(**_JIT)
def _ships_ok(ships, captains, native, dests):
    """R-SHIP-2, R-SHIP-5: a ship per destination; destinations without a ship of their own need a captain."""
    return _popcount(dests) <= ships and _popcount(dests & ~native) <= captains


# ---------------------------------------------------------------- feasibility

@njit(**_JIT)
def _radices(demand, stride):
    """Strides of the mixed-radix index of open demand (radix demand[g] + 1); returns the number of states."""
    p = 1
    for g in range(NUM_GOODS):
        stride[g] = p
        p *= demand[g] + 1
    return p


@njit(**_JIT)
def _trade_search(demand, singles, doubles, traders, cg, cq, n):
    """Exact goods feasibility with traders (R-SHIP-3, R-SHIP-4) by a dynamic program over open demand.

    fewest[s] = the fewest traders that leave open demand s; a card is kept on its own good or traded
    (one trader) to another demanded good (leaving it out never helps: extra units are harmless).
    """
    stride = np.empty(NUM_GOODS, np.int64)
    p = _radices(demand, stride)
    fewest = np.full(p, traders + 1, np.int16)
    fewest[p - 1] = 0  # nothing covered yet: the open demand is the whole demand
    for i in range(n):
        g0 = cg[i]
        q = cq[i]
        # Ascending: a card only lowers the index, so a target is never a source again for this card.
        for s in range(p):
            used = fewest[s]
            if used > traders:
                continue
            open0 = (s // stride[g0]) % (demand[g0] + 1)
            if open0:
                t = s - min(open0, q) * stride[g0]
                if used < fewest[t]:
                    fewest[t] = used
            if used < traders:
                for g in range(NUM_GOODS):
                    if g != g0:
                        open_g = (s // stride[g]) % (demand[g] + 1)
                        if open_g:
                            t = s - min(open_g, q) * stride[g]
                            if used + 1 < fewest[t]:
                                fewest[t] = used + 1
    r = np.empty(NUM_GOODS, np.int64)
    for s in range(p):
        if fewest[s] <= traders:
            for g in range(NUM_GOODS):
                r[g] = (s // stride[g]) % (demand[g] + 1)
            if _gold_ok(r, singles, doubles):
                return True
    return False


@njit(**_JIT)
def _goods_ok(demand, own, singles, doubles, traders, cg, cq, n):
    """Whether goods, gold and traders meet the demand per good (R-SHIP-2..4)."""
    return _goods_work(demand, own, singles, doubles, traders, cg, cq, n)[0]


@njit(**_JIT)
def _goods_work(demand, own, singles, doubles, traders, cg, cq, n):
    """(_goods_ok, the steps its trader search took): counting first, then the search."""
    need = 0
    have = singles + 2 * doubles
    for g in range(NUM_GOODS):
        need += demand[g]
        have += own[g]
    if have < need:
        return False, 0
    short = 0  # units the goods leave open, kept on their own goods
    odd = 0
    for g in range(NUM_GOODS):
        left = max(0, demand[g] - own[g])
        short += left
        odd += left & 1
    if singles + 2 * doubles >= short + max(0, odd - singles):  # _gold_ok, without an array
        return True, 0
    if traders == 0 or n == 0:
        return False, 0
    traders = min(traders, n)
    # Trading a card lowers the shortfall by at most its units: the biggest `traders` cards bound it.
    moved = 0
    last = 1 << 30
    taken = 0
    while taken < traders:
        top = 0
        ties = 0
        for i in range(n):
            if cq[i] < last and cq[i] > top:
                top = cq[i]
        for i in range(n):
            if cq[i] == top:
                ties += 1
        use = min(ties, traders - taken)
        moved += use * top
        taken += use
        last = top
        if top == 0:
            break
    if singles + 2 * doubles < short - moved:
        return False, 0
    states = 1
    for g in range(NUM_GOODS):
        states *= demand[g] + 1
    return _trade_search(demand, singles, doubles, traders, cg, cq, n), states * n


@njit(**_JIT)
def feasible(tab, res, con):
    """Whether contracts `con` can be fulfilled together with `res` (shipping.can_fulfil; R-SHIP-1..5)."""
    if con.shape[0] == 0:
        return True
    n = res.shape[0]
    buf = np.empty(8 + 2 * n, np.int64)  # one allocation for every scratch array
    demand, own, cg, cq = buf[:4], buf[4:8], buf[8:8 + n], buf[8 + n:]
    dests = _demand(tab, con, demand)
    ships, captains, native, singles, doubles, traders, m = _resources(tab, res, own, cg, cq)
    if not _ships_ok(ships, captains, native, dests):
        return False
    return _goods_ok(demand, own, singles, doubles, traders, cg, cq, m)


@njit(**_JIT)
def fulfillable(tab, res, contracts, out):
    """Write into `out` the contracts that can each be fulfilled on their own (engine._fulfillable_contracts);
    returns how many."""
    n = res.shape[0]
    buf = np.empty(8 + 2 * n, np.int64)
    demand, own, cg, cq = buf[:4], buf[4:8], buf[8:8 + n], buf[8 + n:]
    ships, captains, native, singles, doubles, traders, m = _resources(tab, res, own, cg, cq)
    found = 0
    for c in contracts:
        demand[:] = 0
        demand[tab[GOOD, c]] = tab[QUANTITY, c]
        if _ships_ok(ships, captains, native, 1 << tab[DESTINATION, c]) and \
                _goods_ok(demand, own, singles, doubles, traders, cg, cq, m):
            out[found] = c
            found += 1
    return found


@njit(**_JIT)
def addable(tab, res, pending, contracts, out):
    """Write into `out` the contracts of `contracts` not pending that can join the pending shipment (the mask
    while a shipment is staged, R-SHIP-6); returns how many."""
    n = res.shape[0]
    buf = np.empty(12 + 2 * n, np.int64)
    demand, base, own, cg, cq = buf[:4], buf[4:8], buf[8:12], buf[12:12 + n], buf[12 + n:]
    ships, captains, native, singles, doubles, traders, m = _resources(tab, res, own, cg, cq)
    dests = _demand(tab, pending, base)
    found = 0
    for c in contracts:
        staged = False
        for d in pending:
            if d == c:
                staged = True
        if staged:
            continue
        demand[:] = base
        demand[tab[GOOD, c]] += tab[QUANTITY, c]
        if _ships_ok(ships, captains, native, dests | (1 << tab[DESTINATION, c])) and \
                _goods_ok(demand, own, singles, doubles, traders, cg, cq, m):
            out[found] = c
            found += 1
    return found


# ---------------------------------------------------------------- payment options (R-SHIP-7)

@njit(**_JIT)
def _classes(tab, res, ship_side, members, counts):
    """Group the ship-side (ships, captains) or goods-side (gold, goods, traders) cards of res by payment class.

    members[j, :counts[j]] are class j's card ids, ascending (res is sorted); returns the number of classes."""
    ncls = 0
    prev = -1
    for c in res:
        if c == prev:
            continue
        prev = c
        k = tab[KIND, c]
        if ship_side:
            if k != SHIP and k != CAPTAIN:
                continue
        elif k != GOLD and k != GOODS_KIND and k != TRADER:
            continue
        j = 0
        while j < ncls and tab[GROUP, members[j, 0]] != tab[GROUP, c]:
            j += 1
        if j == ncls:
            counts[j] = 0
            ncls += 1
        members[j, counts[j]] = c
        counts[j] += 1
    return ncls


@njit(**_JIT)
def _first_vector(v, lim, idx, n, total):
    """Fill v[idx[:n]] greedily from the left with `total` units under the limits; False if they cannot hold it."""
    for i in range(n):
        take = min(lim[idx[i]], total)
        v[idx[i]] = take
        total -= take
    return total == 0


@njit(**_JIT)
def _next_vector(v, lim, idx, n):
    """Step v[idx[:n]] to the next vector of the same sum under the limits (decreasing lexicographic order)."""
    room = 0  # capacity of the positions right of i
    rest = 0  # units right of i
    for i in range(n - 1, -1, -1):
        j = idx[i]
        if v[j] > 0 and rest + 1 <= room:
            v[j] -= 1
            rest += 1
            for i2 in range(i + 1, n):
                j2 = idx[i2]
                take = min(lim[j2], rest)
                v[j2] = take
                rest -= take
            return True
        room += lim[j]
        rest += v[j]
    return False


@njit(**_JIT)
def _grow(bits, vals, n):
    """The part arrays with room for one more (doubled when full)."""
    if n < vals.shape[0]:
        return bits, vals
    bits2 = np.zeros((2 * n, WORDS), np.int64)
    vals2 = np.zeros(2 * n, np.int64)
    bits2[:n] = bits[:n]
    vals2[:n] = vals[:n]
    return bits2, vals2


@njit(**_JIT)
def _ship_parts(tab, members, counts, ncls, dests):
    """Every minimal ship part for the destinations `dests`, as (bitsets, values, count).

    A minimal part is exactly |dests| ships plus exactly one captain per destination that none of those
    ships goes to (fewer ships or captains fail R-SHIP-2/R-SHIP-5, and any more could be left out)."""
    nd = _popcount(dests)
    ship_idx = np.empty(ncls, np.int64)
    cap_idx = np.empty(ncls, np.int64)
    ns = nc = 0
    captains = 0
    for j in range(ncls):
        if tab[KIND, members[j, 0]] == SHIP:
            ship_idx[ns] = j
            ns += 1
        else:
            cap_idx[nc] = j
            nc += 1
            captains += counts[j]
    v = np.zeros(ncls, np.int64)
    bits = np.zeros((4, WORDS), np.int64)
    vals = np.zeros(4, np.int64)
    n = 0
    more = _first_vector(v, counts, ship_idx, ns, nd)
    while more:
        covered = 0
        for i in range(ns):
            if v[ship_idx[i]]:
                covered |= 1 << tab[DESTINATION, members[ship_idx[i], 0]]
        need = nd - _popcount(covered & dests)
        if need <= captains:
            for i in range(nc):
                v[cap_idx[i]] = 0
            more_captains = _first_vector(v, counts, cap_idx, nc, need)
            while more_captains:
                bits, vals = _grow(bits, vals, n)
                bits[n] = 0
                vals[n] = 0
                for j in range(ncls):
                    for r in range(v[j]):
                        _add_card(bits[n], members[j, r])
                        vals[n] += tab[VALUE, members[j, r]]
                n += 1
                more_captains = _next_vector(v, counts, cap_idx, nc)
            for i in range(nc):
                v[cap_idx[i]] = 0
        more = _next_vector(v, counts, ship_idx, ns)
    return bits, vals, n


@njit(**_JIT)
def _counts_ok(tab, members, ncls, v, demand, own, cg, cq):
    """Goods feasibility of v[j] cards of each goods-side class j (the oracle of the minimal-part search)."""
    own[:] = 0
    singles = doubles = traders = n = 0
    for j in range(ncls):
        k = v[j]
        if k == 0:
            continue
        c = members[j, 0]
        kind = tab[KIND, c]
        if kind == GOODS_KIND:
            g = tab[GOOD, c]
            q = tab[QUANTITY, c]
            own[g] += k * q
            for _ in range(k):
                cg[n] = g
                cq[n] = q
                n += 1
        elif kind == GOLD:
            if tab[QUANTITY, c] == 2:
                doubles += k
            else:
                singles += k
        else:
            traders += k
    return _goods_ok(demand, own, singles, doubles, traders, cg, cq, n)


@njit(**_JIT)
def _goods_parts(tab, members, counts, ncls, demand, ncards):
    """Every minimal goods part (lowest ids per class) meeting `demand`, as (bitsets, values, count).

    A depth-first search over how many cards of each class, as payment._minimal: a branch stops when even
    every card left cannot pay, and at the first count of a class that pays with none of the later classes
    (more of it, or any later card, would not be minimal); then each find is kept if lowering any count fails.
    """
    own = np.empty(NUM_GOODS, np.int64)
    cg = np.empty(max(ncards, 1), np.int64)
    cq = np.empty(max(ncards, 1), np.int64)
    # Classes that serve on their own first (goods of a demanded good, bigger first), gold and traders next,
    # other goods last: paying counts turn up early and end their branch.
    order = np.arange(ncls)
    key = np.empty(ncls, np.int64)
    for j in range(ncls):
        c = members[j, 0]
        if tab[KIND, c] == GOODS_KIND:
            key[j] = (0 if demand[tab[GOOD, c]] else 2) * 100 - tab[QUANTITY, c]
        else:
            key[j] = 100 - tab[QUANTITY, c]
    for i in range(1, ncls):  # stable insertion sort on key
        j = order[i]
        a = i - 1
        while a >= 0 and key[order[a]] > key[j]:
            order[a + 1] = order[a]
            a -= 1
        order[a + 1] = j
    v = np.zeros(ncls, np.int64)  # counts by class, set in search order
    probe = np.zeros(ncls, np.int64)
    level = np.full(ncls + 1, -1, np.int64)
    found = np.zeros((4, ncls), np.int64)
    nfound = 0
    i = 0
    while i >= 0:
        if level[i] == -1:  # entering depth i: can the classes from i on, all taken, still pay?
            probe[:] = v
            for a in range(i, ncls):
                probe[order[a]] = counts[order[a]]
            if not _counts_ok(tab, members, ncls, probe, demand, own, cg, cq):
                i -= 1
                continue
            if i == ncls:
                if nfound == found.shape[0]:
                    bigger = np.zeros((2 * nfound, ncls), np.int64)
                    bigger[:nfound] = found
                    found = bigger
                found[nfound] = v
                nfound += 1
                i -= 1
                continue
            level[i] = 0
        else:
            level[i] += 1
        j = order[i]
        if level[i] > counts[j]:
            v[j] = 0
            level[i] = -1
            i -= 1
            continue
        v[j] = level[i]
        if _counts_ok(tab, members, ncls, v, demand, own, cg, cq):  # pays with none of the later classes
            if nfound == found.shape[0]:
                bigger = np.zeros((2 * nfound, ncls), np.int64)
                bigger[:nfound] = found
                found = bigger
            found[nfound] = v
            nfound += 1
            v[j] = 0
            level[i] = -1
            i -= 1
            continue
        i += 1
        level[i] = -1
    bits = np.zeros((max(nfound, 1), WORDS), np.int64)
    vals = np.zeros(max(nfound, 1), np.int64)
    n = 0
    for f in range(nfound):
        minimal = True
        for j in range(ncls):
            if found[f, j]:
                found[f, j] -= 1
                ok = _counts_ok(tab, members, ncls, found[f], demand, own, cg, cq)
                found[f, j] += 1
                if ok:
                    minimal = False
                    break
        if minimal:
            for j in range(ncls):
                for r in range(found[f, j]):
                    _add_card(bits[n], members[j, r])
                    vals[n] += tab[VALUE, members[j, r]]
            n += 1
    return bits, vals, n


@njit(**_JIT)
def _before(value_a, bits_a, value_b, bits_b):
    """R-SHIP-7 order: less total value first, then the sorted card ids."""
    if value_a != value_b:
        return value_a < value_b
    return _lex_less(bits_a, bits_b)


@njit(**_JIT)
def payment_options(tab, res, con, out, first):
    """Write payment options first .. first + len(out) - 1 of the shipment `con` (a page of them, R-SHIP-7 order,
    as payment.payment_options) into out (int64[len(out), WORDS] bitsets, zero beyond the last); returns how many
    options the shipment has in all (0: it cannot be fulfilled)."""
    out[:] = 0
    if con.shape[0] == 0:
        return 1  # the empty shipment: one empty option (all zero bits)
    if not feasible(tab, res, con):
        return 0
    n = res.shape[0]
    members = np.empty((n, n), np.int64)
    counts = np.zeros(n, np.int64)
    demand = np.empty(NUM_GOODS, np.int64)
    dests = _demand(tab, con, demand)
    ncls = _classes(tab, res, True, members, counts)
    ship_bits, ship_vals, n_ship = _ship_parts(tab, members, counts, ncls, dests)
    ncls = _classes(tab, res, False, members, counts)
    goods_bits, goods_vals, n_goods = _goods_parts(tab, members, counts, ncls, demand, n)
    # Every minimal payment is a minimal ship part with a minimal goods part: keep the first ones up to the page's
    # end (in out itself for the first page), sorted by insertion.
    kept_bits = out if first == 0 else np.zeros((first + out.shape[0], WORDS), np.int64)
    cap = kept_bits.shape[0]
    top_vals = np.empty(cap, np.int64)
    kept = 0
    pair = np.empty(WORDS, np.int64)
    for a in range(n_ship):
        for b in range(n_goods):
            value = ship_vals[a] + goods_vals[b]
            for w in range(WORDS):
                pair[w] = ship_bits[a, w] | goods_bits[b, w]
            if kept == cap and not _before(value, pair, top_vals[kept - 1], kept_bits[kept - 1]):
                continue
            at = min(kept, cap - 1)
            while at > 0 and _before(value, pair, top_vals[at - 1], kept_bits[at - 1]):
                if at < cap:
                    top_vals[at] = top_vals[at - 1]
                    kept_bits[at] = kept_bits[at - 1]
                at -= 1
            top_vals[at] = value
            kept_bits[at] = pair
            if kept < cap:
                kept += 1
    if first > 0:
        for k in range(first, kept):
            out[k - first] = kept_bits[k]
    return n_ship * n_goods


# ---------------------------------------------------------------- the cheapest payment (R-SHIP-7)

@njit(**_JIT)
def _cheapest_goods(tab, res, demand, out_bits):
    """Add the cheapest goods part meeting `demand` (least value, then lowest ids) to out_bits; its value, -1: none.

    The goods-side cards of res get ranks r by id (m cards) and cost value * 2**m - 2**(m-1-r): as in
    shipping._goods_grid, the least total cost is the least value, then the smallest sorted id list, exact in
    int64 (m <= 43 cards, values <= 100). A dynamic program over (trades made, open demand) keeps the least
    cost; t trades use the t cheapest traders, as they are interchangeable but for their cost.
    """
    n = res.shape[0]
    ranked = np.empty(max(n, 1), np.int64)
    m = 0
    prev = -1
    for c in res:
        if c != prev:
            k = tab[KIND, c]
            if k == GOLD or k == GOODS_KIND or k == TRADER:
                ranked[m] = c
                m += 1
        prev = c
    price = np.empty(max(m, 1), np.int64)
    trader_price = np.empty(max(m, 1), np.int64)
    goods = traders = 0
    for r in range(m):
        c = ranked[r]
        price[r] = tab[VALUE, c] * (np.int64(1) << m) - (np.int64(1) << (m - 1 - r))
        if tab[KIND, c] == TRADER:
            trader_price[traders] = price[r]
            traders += 1
        elif tab[KIND, c] == GOODS_KIND:
            goods += 1
    trader_price[:traders].sort()
    most = min(traders, goods)
    stride = np.empty(NUM_GOODS, np.int64)
    p = _radices(demand, stride)
    cost = np.full((most + 1, p), _INF, np.int64)
    cost[0, p - 1] = 0
    for r in range(m):
        c = ranked[r]
        k = tab[KIND, c]
        if k == TRADER:
            continue
        units = tab[QUANTITY, c]
        g0 = tab[GOOD, c]
        # Levels from the most trades down: a trade writes one level up, which this card has already passed.
        for level in range(most, -1, -1):
            row = cost[level]
            for s in range(p):  # ascending: a card only lowers the index, so it is spent once
                base = row[s]
                if base >= _INF:
                    continue
                for g in range(NUM_GOODS):
                    open_g = (s // stride[g]) % (demand[g] + 1)
                    if open_g == 0:
                        continue
                    t = s - min(open_g, units) * stride[g]
                    if k == GOLD or g == g0:  # R-SHIP-3: a nugget serves any good; goods their own
                        if base + price[r] < row[t]:
                            row[t] = base + price[r]
                    elif level < most:  # R-SHIP-4: traded to another good
                        traded = base + price[r] + trader_price[level]
                        if traded < cost[level + 1, t]:
                            cost[level + 1, t] = traded
    best = _INF
    for level in range(most + 1):
        best = min(best, cost[level, 0])
    if best >= _INF:
        return -1
    value = (best + (np.int64(1) << m) - 1) >> m
    bits = (value << m) - best
    for r in range(m):
        if (bits >> (m - 1 - r)) & 1:
            _add_card(out_bits, ranked[r])
    return value


@njit(**_JIT)
def _cheapest_ships(tab, res, dests, out_bits):
    """Add the cheapest minimal ship part for `dests` (least value, then lowest ids) to out_bits; its value, -1: none."""
    n = res.shape[0]
    members = np.empty((max(n, 1), max(n, 1)), np.int64)
    counts = np.zeros(max(n, 1), np.int64)
    ncls = _classes(tab, res, True, members, counts)
    bits, vals, found = _ship_parts(tab, members, counts, ncls, dests)
    if found == 0:
        return -1
    best = 0
    for i in range(1, found):
        if _before(vals[i], bits[i], vals[best], bits[best]):
            best = i
    for w in range(WORDS):
        out_bits[w] |= bits[best, w]
    return vals[best]


@njit(**_JIT)
def cheapest_payment(tab, res, con, out_bits):
    """Write the R-SHIP-7 payment of `con` (shipping.payment: least value, then lowest ids; the first payment
    option) into out_bits; returns its value, or -1 if the shipment cannot be fulfilled."""
    out_bits[:] = 0
    if con.shape[0] == 0:
        return 0
    if not feasible(tab, res, con):
        return -1
    demand = np.empty(NUM_GOODS, np.int64)
    dests = _demand(tab, con, demand)
    return _cheapest_ships(tab, res, dests, out_bits) + _cheapest_goods(tab, res, demand, out_bits)


# ---------------------------------------------------------------- the final fulfilment (R-SCORE-1)

@njit(**_JIT)
def _subset_demand(tab, contracts, mask, demand):
    """Units per good of the contracts picked by `mask` (bit i: contracts[i]); returns their destinations."""
    demand[:] = 0
    dests = 0
    for i in range(contracts.shape[0]):
        if (mask >> i) & 1:
            c = contracts[i]
            demand[tab[GOOD, c]] += tab[QUANTITY, c]
            dests |= 1 << tab[DESTINATION, c]
    return dests


@njit(**_JIT)
def best_fulfilment(tab, res, contracts, out_contracts, out_paid):
    """The final fulfilment of R-SCORE-1 (shipping.best_fulfilment): the contracts paying the most, then the least
    payment value, then the smallest sorted id list, into out_contracts; their R-SHIP-7 payment into out_paid.

    Returns the reward earned, or GAVE_UP (bitsets cleared) when the search would pass SUBSET_BUDGET contract
    subsets or WORK_BUDGET trader-search steps (a hand holding most of the catalogue): the caller then asks
    shipping.best_fulfilment, whose search over units handles those.
    """
    out_contracts[:] = 0
    out_paid[:] = 0
    n = contracts.shape[0]
    if n == 0:
        return 0
    size = res.shape[0]
    buf = np.empty(8 + 2 * size, np.int64)
    demand, own, cg, cq = buf[:4], buf[4:8], buf[8:8 + size], buf[8 + size:]
    ships, captains, native, singles, doubles, traders, m = _resources(tab, res, own, cg, cq)
    after = np.zeros(n + 1, np.int64)  # reward of contracts i.. together
    for i in range(n - 1, -1, -1):
        after[i] = after[i + 1] + tab[REWARD, contracts[i]]
    # Depth-first over sets grown in id order, as shipping._best_by_subsets: a superset of an infeasible set
    # is infeasible, and a set that cannot reach the best reward so far even with every later contract stops.
    stack_mask = np.empty(n * n + 1, np.int64)
    stack_start = np.empty(n * n + 1, np.int64)
    stack_money = np.empty(n * n + 1, np.int64)
    found_mask = np.zeros(16, np.int64)
    found_money = np.zeros(16, np.int64)
    nfound = 1  # the empty set
    top = 1
    stack_mask[0] = stack_start[0] = stack_money[0] = 0
    most = 0
    tests = 0
    work = 0
    while top:
        top -= 1
        mask, start, money = stack_mask[top], stack_start[top], stack_money[top]
        for i in range(start, n):
            if money + after[i] < most:
                break
            tests += 1
            if tests > SUBSET_BUDGET:
                return GAVE_UP
            grown = mask | (np.int64(1) << i)
            dests = _subset_demand(tab, contracts, grown, demand)
            if not _ships_ok(ships, captains, native, dests):
                continue
            ok, steps = _goods_work(demand, own, singles, doubles, traders, cg, cq, m)
            work += steps
            if work > WORK_BUDGET:
                return GAVE_UP
            if ok:
                gained = money + tab[REWARD, contracts[i]]
                most = max(most, gained)
                if nfound == found_mask.shape[0]:
                    found_mask = np.concatenate((found_mask, np.zeros(nfound, np.int64)))
                    found_money = np.concatenate((found_money, np.zeros(nfound, np.int64)))
                found_mask[nfound] = grown
                found_money[nfound] = gained
                nfound += 1
                stack_mask[top] = grown
                stack_start[top] = i + 1
                stack_money[top] = gained
                top += 1
    if most == 0:
        return 0
    # Among the sets paying the most: the least payment value, then the smallest sorted id list.
    best_value = -1
    best_mask = np.zeros(1, np.int64)
    mask_bits = np.zeros(1, np.int64)
    scratch = np.zeros(WORDS, np.int64)
    for f in range(nfound):
        if found_money[f] != most:
            continue
        dests = _subset_demand(tab, contracts, found_mask[f], demand)
        states = 1
        for g in range(NUM_GOODS):
            states *= demand[g] + 1
        work += states * size * (min(traders, m) + 1)  # the steps of _cheapest_goods, at most
        if work > WORK_BUDGET:
            out_contracts[:] = 0
            return GAVE_UP
        value = _cheapest_ships(tab, res, dests, scratch) + _cheapest_goods(tab, res, demand, scratch)
        mask_bits[0] = found_mask[f]
        if best_value < 0 or value < best_value or (value == best_value and _lex_less(mask_bits, best_mask)):
            best_value = value
            best_mask[0] = found_mask[f]
    for i in range(n):
        if (best_mask[0] >> i) & 1:
            _add_card(out_contracts, contracts[i])
    dests = _subset_demand(tab, contracts, best_mask[0], demand)
    _cheapest_ships(tab, res, dests, out_paid)
    _cheapest_goods(tab, res, demand, out_paid)
    return most


# ---------------------------------------------------------------- cashing money (R-TAKE-4)

@njit(**_JIT)
def cheapest_cover(tab, hand, shortfall, out_bits):
    """Write the money cards cashed for a shortfall (engine._cheapest_cover, R-TAKE-4: fewest cards, then least
    total, then lowest ids) into out_bits; returns their total, or -1 if all the money cards cannot cover it."""
    out_bits[:] = 0
    if shortfall <= 0:
        return 0
    ids = np.empty(max(hand.shape[0], 1), np.int64)
    money = np.empty(max(hand.shape[0], 1), np.int64)
    n = 0
    prev = -1
    for c in hand:
        if c != prev and tab[KIND, c] == MONEY_KIND:
            ids[n] = c
            money[n] = tab[MONEY, c]
            n += 1
        prev = c
    biggest_after = np.zeros(n + 1, np.int64)  # the largest money card from index i on: a bound on what is left
    for i in range(n - 1, -1, -1):
        biggest_after[i] = max(biggest_after[i + 1], money[i])
    largest = np.sort(money[:n])[::-1]
    fewest = 1
    reach = 0
    for i in range(n):  # the fewest cards that can cover it: the largest ones
        reach += largest[i]
        if reach >= shortfall:
            break
        fewest += 1
    if reach < shortfall:
        return -1
    pick = np.empty(n + 1, np.int64)
    best_pick = np.empty(n + 1, np.int64)
    nxt = np.empty(n + 2, np.int64)
    for count in range(fewest, n + 1):
        best = -1
        # Sets of `count` cards in id order (as itertools.combinations), pruned: a strictly smaller total only.
        depth = 0
        nxt[0] = 0
        total = 0
        while depth >= 0:
            if depth == count:
                if total >= shortfall and (best < 0 or total < best):
                    best = total
                    best_pick[:count] = pick[:count]
                depth -= 1
                if depth >= 0:
                    total -= money[pick[depth]]
                    nxt[depth] = pick[depth] + 1
                continue
            i = nxt[depth]
            left = count - depth
            if i > n - left or (best >= 0 and total >= best) or total + left * biggest_after[i] < shortfall:
                depth -= 1
                if depth >= 0:
                    total -= money[pick[depth]]
                    nxt[depth] = pick[depth] + 1
                continue
            pick[depth] = i
            total += money[i]
            depth += 1
            nxt[depth] = i + 1
        if best >= 0:
            for j in range(count):
                _add_card(out_bits, ids[best_pick[j]])
            return best
    return -1
