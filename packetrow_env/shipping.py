"""Shipments: which contracts a hand can fulfil and which cards pay for them (docs/rules.md R-SHIP, R-SCORE-1).

The payment rule R-SHIP-7 (least total value, then the lexicographically
smallest sorted id list) is turned into an additive cost per card:

    cost(c) = value[c] * 2**200 - 2**(NUM_CARDS - 1 - c)

Shipment cards have value >= 1, so two minimum-value payments are never
subsets of one another; the lexicographically smaller one is then the one
holding the smallest id of their symmetric difference, which is exactly the
one with the larger sum of 2**(NUM_CARDS - 1 - c). Summed 2**-weights stay
below 2**NUM_CARDS < 2**200, so value always dominates, every cost is
positive (a useless card is never worth spending) and distinct card sets
have distinct total costs (no ties left to break).

A shipment splits into two independent problems that share no cards:
ships and captains depend only on the set of destinations; goods, gold and
traders only on the total demand per good (goods may be split between
contracts of one good, R-SHIP-2). Each is solved at least cost on its own.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

from . import cards

_BIG = 1 << 200
_NUM_GOODS = len(cards.GOODS)
_NUM_DESTINATIONS = len(cards.DESTINATIONS)
_SHIPMENT_KINDS = frozenset((cards.SHIP, cards.CAPTAIN, cards.GOLD, cards.GOODS_KIND, cards.TRADER))


class _Tables:
    """Plain-Python copies of the catalogue columns: numpy scalar access is slow on the hot path."""

    def __init__(self, cat):
        n = len(cat.kind)
        self.kind = [int(x) for x in cat.kind]
        self.good = [int(x) for x in cat.good]
        self.quantity = [int(x) for x in cat.quantity]
        self.destination = [int(x) for x in cat.destination]
        self.reward = [int(x) for x in cat.reward]
        self.value = [int(x) for x in cat.value]
        self.relevant = [k in _SHIPMENT_KINDS for k in self.kind]
        self.cost = [self.value[c] * _BIG - (1 << (n - 1 - c)) for c in range(n)]


@lru_cache(maxsize=16)
def _tables(cat) -> _Tables:
    """The plain-Python tables of a catalogue (catalogues hash by identity)."""
    return _Tables(cat)


def _keys(t: _Tables, resources, contracts):
    """Cache keys: sorted relevant resource ids and sorted contract ids (duplicates are settled on a miss)."""
    relevant = t.relevant
    return tuple(sorted([c for c in resources if relevant[c]])), tuple(sorted(contracts))


def _clean(t: _Tables, res: tuple, con: tuple):
    """Plain ints, duplicate resources dropped; contracts validated."""
    res = tuple(sorted({int(c) for c in res}))
    con = tuple(int(c) for c in con)
    if len(set(con)) != len(con):
        raise ValueError(f"contracts must be distinct, got {con}")
    for c in con:
        if not 0 <= c < len(t.kind) or t.kind[c] != cards.CONTRACT:
            raise ValueError(f"card {c} is not a contract")
    return res, con


def _demand(t: _Tables, con):
    """Total units per good and the set of destinations of a contract set."""
    demand = [0] * _NUM_GOODS
    dests = set()
    for c in con:
        demand[t.good[c]] += t.quantity[c]
        dests.add(t.destination[c])
    return demand, dests


def _gold_ok(r, singles: int, doubles: int) -> bool:
    """Whether gold nuggets cover the remaining demand r (R-SHIP-3).

    Singles go first to goods with an odd remainder; a good whose odd
    remainder gets no single wastes one unit of a double.
    """
    total = sum(r)
    odd = sum(x & 1 for x in r)
    return singles + 2 * doubles >= total + max(0, odd - singles)


def _doubles_needed(total: int, odd: int, singles: int) -> int:
    """Fewest doubles that, with `singles` single nuggets, cover a demand of `total` units with `odd` odd goods."""
    need = total + max(0, odd - singles) - singles
    return (need + 1) // 2 if need > 0 else 0


# ---------------------------------------------------------------- feasibility

@lru_cache(maxsize=1 << 16)
def _feasible(cat, res: tuple, con: tuple) -> bool:
    """Exact feasibility of one shipment: counting first, a search over traders only when needed."""
    t = _tables(cat)
    res, con = _clean(t, res, con)
    demand, dests = _demand(t, con)
    kind, good, quantity, destination = t.kind, t.good, t.quantity, t.destination
    native = [0] * _NUM_DESTINATIONS
    own = [0] * _NUM_GOODS
    goods_cards = []
    ships = captains = traders = singles = doubles = 0
    for c in res:
        k = kind[c]
        if k == cards.GOODS_KIND:
            own[good[c]] += quantity[c]
            goods_cards.append(c)
        elif k == cards.SHIP:
            ships += 1
            native[destination[c]] += 1
        elif k == cards.GOLD:
            if quantity[c] == 2:
                doubles += 1
            else:
                singles += 1
        elif k == cards.CAPTAIN:
            captains += 1
        else:
            traders += 1

    # Ships (R-SHIP-2, R-SHIP-5): each destination needs its own ship; every
    # destination with a native ship should take it, since a captained ship
    # costs a ship too and a captain besides.
    if len(dests) > ships:
        return False
    if sum(1 for d in dests if not native[d]) > captains:
        return False

    # Goods: cheap exact answers before any search.
    if sum(own) + singles + 2 * doubles < sum(demand):
        return False
    r = [max(0, q - o) for q, o in zip(demand, own)]
    if _gold_ok(r, singles, doubles):
        return True
    if not traders or not goods_cards:
        return False
    # Moving a card lowers the total shortfall by at most its units.
    traders = min(traders, len(goods_cards))
    movable = sorted((quantity[c] for c in goods_cards), reverse=True)
    if singles + 2 * doubles < sum(r) - sum(movable[:traders]):
        return False

    # Traders (R-SHIP-4): depth-first search over which cards change good,
    # tracking the remaining demand. A card not traded goes to its own good:
    # extra units never hurt feasibility. So a state is a success once the
    # cards left, kept on their own goods, and the gold cover it; and a dead
    # end once all units left cannot, or once it was seen with fewer traders.
    goods_cards.sort(key=lambda c: -quantity[c])  # big cards decide most, try them first
    n = len(goods_cards)
    own_after = [[0] * _NUM_GOODS for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        own_after[i] = own_after[i + 1][:]
        own_after[i][good[goods_cards[i]]] += quantity[goods_cards[i]]
    units_after = [sum(x) + singles + 2 * doubles for x in own_after]
    seen = {}
    stack = [(0, tuple(demand), 0)]
    while stack:
        i, rem, used = stack.pop()
        if seen.get((i, rem), traders + 1) <= used:
            continue
        seen[i, rem] = used
        if sum(rem) > units_after[i]:
            continue
        if _gold_ok([max(0, x - y) for x, y in zip(rem, own_after[i])], singles, doubles):
            return True
        if i == n:
            continue
        c = goods_cards[i]
        g, q = good[c], quantity[c]
        if used < traders:
            for g2 in range(_NUM_GOODS):
                if g2 != g and rem[g2]:
                    moved = list(rem)
                    moved[g2] = max(0, moved[g2] - q)
                    stack.append((i + 1, tuple(moved), used + 1))
        if rem[g]:
            kept = list(rem)
            kept[g] = max(0, kept[g] - q)
            stack.append((i + 1, tuple(kept), used))  # popped first: no trade
        else:
            stack.append((i + 1, rem, used))
    return False


def can_fulfil(cat, resources, contracts) -> bool:
    """Whether `contracts` can be fulfilled together in one shipment with `resources`."""
    res, con = _keys(_tables(cat), resources, contracts)
    if not con:
        return True
    return _feasible(cat, res, con)


# ---------------------------------------------------------------- payment

def _ship_payment(t: _Tables, res, dests):
    """Least-cost (cost, cards) of ships and captains serving every destination in `dests`, or None."""
    if not dests:
        return 0, ()
    cost = t.cost
    ships = sorted((c for c in res if t.kind[c] == cards.SHIP), key=cost.__getitem__)
    captains = sorted((c for c in res if t.kind[c] == cards.CAPTAIN), key=cost.__getitem__)
    cheapest_native = {}
    for c in ships:  # sorted by cost, so the first seen per destination is the cheapest
        cheapest_native.setdefault(t.destination[c], c)
    nativable = [d for d in dests if d in cheapest_native]
    best = None
    # Exchange argument: a destination served by a native ship may as well use
    # its cheapest native one; the others take the cheapest ships left over,
    # each with one of the cheapest captains.
    for size in range(len(nativable), -1, -1):
        captained = len(dests) - size
        if captained > len(captains):
            break
        for chosen in combinations(nativable, size):
            natives = [cheapest_native[d] for d in chosen]
            taken = set(natives)
            rest = [c for c in ships if c not in taken][:captained]
            if len(rest) < captained:
                continue
            used = natives + rest + captains[:captained]
            total = sum(cost[c] for c in used)
            if best is None or total < best[0]:
                best = (total, tuple(used))
    return best


@lru_cache(maxsize=1 << 10)
def _goods_payment(cat, res: tuple, demand: tuple):
    """Least-cost (cost, cards) of goods, gold and traders meeting `demand` units per good, or None."""
    if not any(demand):
        return 0, ()
    t = _tables(cat)
    cost, kind, good, quantity = t.cost, t.kind, t.good, t.quantity
    by_cost = cost.__getitem__
    # Cheap cards of needed goods first, so that good complete payments turn
    # up early and prune the search.
    goods_cards = sorted((c for c in res if kind[c] == cards.GOODS_KIND),
                         key=lambda c: (demand[good[c]] == 0, cost[c]))
    traders = sorted((c for c in res if kind[c] == cards.TRADER), key=by_cost)
    singles = sorted((c for c in res if kind[c] == cards.GOLD and quantity[c] != 2), key=by_cost)
    doubles = sorted((c for c in res if kind[c] == cards.GOLD and quantity[c] == 2), key=by_cost)
    max_traders = min(len(traders), len(goods_cards))
    single_prefix, double_prefix, trader_prefix = [0], [0], [0]
    for group, prefix in ((singles, single_prefix), (doubles, double_prefix), (traders[:max_traders], trader_prefix)):
        for c in group:
            prefix.append(prefix[-1] + cost[c])

    gold_memo = {}

    def gold(rem):
        """Cheapest (cost, singles used, doubles used) covering `rem`, or None (R-SHIP-3)."""
        if rem in gold_memo:
            return gold_memo[rem]
        total = sum(rem)
        odd = sum(x & 1 for x in rem)
        found = None
        for a in range(min(len(singles), total) + 1):
            b = _doubles_needed(total, odd, a)
            if b <= len(doubles):
                price = single_prefix[a] + double_prefix[b]
                if found is None or price < found[0]:
                    found = (price, a, b)
        gold_memo[rem] = found
        return found

    # DP over goods cards; state = (remaining demand per good, traders used)
    # -> (cost so far, chosen cards as a linked list). Traders are
    # interchangeable, so the t used are the t cheapest, priced at the end.
    # Costs only grow, so a state already as dear as the best complete
    # payment found is dropped.
    best = None  # (price, chain, traders used, singles used, doubles used)

    def complete(states):
        nonlocal best
        for (rem, used), (total, chain) in states.items():
            g = gold(rem)
            if g is not None:
                price = total + trader_prefix[used] + g[0]
                if best is None or price < best[0]:
                    best = (price, chain, used, g[1], g[2])

    # Lower bound on what covering r more units costs: r times the cheapest
    # price per unit among the cards still to come and the gold.
    unit_price = [cost[c] // quantity[c] for c in goods_cards]
    gold_unit = min([cost[c] for c in singles[:1]] + [cost[c] // 2 for c in doubles[:1]], default=None)
    cheapest_after = []
    running = gold_unit
    for p in reversed(unit_price):
        running = p if running is None else min(running, p)
        cheapest_after.append(running)
    cheapest_after.reverse()

    states = {(tuple(demand), 0): (0, None)}
    complete(states)
    for i, c in enumerate(goods_cards):
        g, q, cc = good[c], quantity[c], cost[c]
        bound = best[0] if best is not None else None
        if bound is not None:
            unit = cheapest_after[i]
            states = {k: v for k, v in states.items() if v[0] + trader_prefix[k[1]] + sum(k[0]) * unit < bound}
        nxt = dict(states)  # leaving the card unused
        for (rem, used), (total, chain) in states.items():
            new = total + cc
            if bound is not None and new + trader_prefix[used] >= bound:
                continue
            if rem[g]:
                moved = list(rem)
                moved[g] = max(0, moved[g] - q)
                key = (tuple(moved), used)
                old = nxt.get(key)
                if old is None or new < old[0]:
                    nxt[key] = (new, (c, chain))
            if used < max_traders and (bound is None or new + trader_prefix[used + 1] < bound):
                for g2 in range(_NUM_GOODS):
                    if g2 != g and rem[g2]:
                        moved = list(rem)
                        moved[g2] = max(0, moved[g2] - q)
                        key = (tuple(moved), used + 1)
                        old = nxt.get(key)
                        if old is None or new < old[0]:
                            nxt[key] = (new, (c, chain))
        complete(nxt)
        bound = best[0] if best is not None else None
        states = nxt if bound is None else {k: v for k, v in nxt.items() if v[0] + trader_prefix[k[1]] < bound}

    if best is None:
        return None
    price, chain, used, a, b = best
    spent = list(traders[:used]) + singles[:a] + doubles[:b]
    while chain is not None:
        spent.append(chain[0])
        chain = chain[1]
    return price, tuple(spent)


_MANY_UNITS = 16  # from this many units on, a goods payment is found by the search over units (_goods_grid)


@lru_cache(maxsize=1 << 8)
def _goods_payment_by_units(cat, res: tuple, demand: tuple):
    """_goods_payment by _goods_grid: least-cost (cost, cards) meeting `demand` units per good, or None."""
    t = _tables(cat)
    cost, m, ranked = _goods_grid(t, res, list(demand))
    found = int(cost[demand])
    if found >= _INFINITY:
        return None
    bits = -found % (1 << m)  # found = value * 2**m - bits, with 0 < bits < 2**m
    spent = tuple(c for r, c in enumerate(ranked) if bits >> (m - 1 - r) & 1)
    return sum(t.cost[c] for c in spent), spent


@lru_cache(maxsize=1 << 12)
def _payment(cat, res: tuple, con: tuple):
    """(cost, sorted cards) of the R-SHIP-7 payment, or None."""
    if not con:
        return 0, ()
    t = _tables(cat)
    res, con = _clean(t, res, con)
    demand, dests = _demand(t, con)
    if not _feasible(cat, res, con):
        return None
    ships = _ship_payment(t, res, sorted(dests))
    if sum(demand) < _MANY_UNITS:
        goods = _goods_payment(cat, res, tuple(demand))  # cached: contract sets of equal demand share it
    else:  # the search over units: its time does not grow with the hand (a user's file may stage 25 contracts)
        goods = _goods_payment_by_units(cat, res, tuple(demand))
    if ships is None or goods is None:
        raise AssertionError(f"shipping: feasibility and payment disagree on {res} for {con}")
    return ships[0] + goods[0], tuple(sorted(ships[1] + goods[1]))


def payment(cat, resources, contracts) -> tuple[int, ...] | None:
    """Cards (sorted ids, contracts excluded) spent to fulfil `contracts` together (R-SHIP-7), or None if impossible."""
    res, con = _keys(_tables(cat), resources, contracts)
    found = _payment(cat, res, con)
    return None if found is None else found[1]


# ---------------------------------------------------------------- final scoring
#
# The final fulfilment (R-SCORE-1) picks, among the contract sets a hand can ship at once, the one paying the
# most; ties go to the cheapest payment (least total card value), then to the smallest sorted id list. Since
# every contract pays at least 1 (cards.py), no best set holds another, and between two such sets the smaller
# id list is the one holding the smallest id of their difference: a sum of 2**(NUM_CARDS - 1 - id) ("bits")
# per set ranks them the same way, and it adds up over disjoint parts.
#
# Few contracts: a search over the subsets (grown in id order; a superset of an unshippable set is
# unshippable). Many contracts (a user's file may hold 25 in one hand): a search over units instead,
# polynomial in the units a hand holds. A set needs a destination set E (ships and captains, priced on
# their own) and a number of units per good q (goods, gold and traders, priced on their own); for every
# E the goods cards serving it are known, so for every q the best set is a 0/1 knapsack per good.
# The cheapest goods payment of every q comes from one dynamic program over a 4-d array of q.

# At most 2**_SMALL subsets. The end of a real game finds a few contracts per hand, which the subset search
# answers from the feasibility cache play has filled; from 6 contracts on the search over units is as fast
# on cold caches, and it stays fast where the subset search does not (measured: docs/benchmarks.md).
_SMALL = 6


def best_fulfilment(cat, resources, contracts) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(contracts fulfilled, cards spent) for the final fulfilment of R-SCORE-1."""
    t = _tables(cat)
    res, con = _clean(t, *_keys(t, resources, contracts))
    if len(con) > _SMALL:
        return _best_by_units(t, res, con)
    chosen = _best_by_subsets(cat, t, res, con)
    return chosen, (_payment(cat, res, chosen)[1] if chosen else ())


def _best_by_subsets(cat, t: _Tables, res: tuple, con: tuple) -> tuple[int, ...]:
    """The R-SCORE-1 set by a search over contract subsets (exponential: for few contracts)."""
    reward = t.reward
    # Depth-first over sets grown in id order. A superset of an infeasible set
    # is infeasible (more demand, more destinations), so infeasible sets stop;
    # a set that cannot reach the best reward so far even with every later
    # contract stops too (ties are kept: they are settled below).
    after = [0] * (len(con) + 1)
    for i in range(len(con) - 1, -1, -1):
        after[i] = after[i + 1] + reward[con[i]]
    feasible = [((), 0)]
    most = 0
    stack = [((), 0, 0)]
    while stack:
        chosen, start, money = stack.pop()
        for i in range(start, len(con)):
            if money + after[i] < most:
                break
            grown = chosen + (con[i],)
            if _feasible(cat, res, grown):
                gained = money + reward[con[i]]
                most = max(most, gained)
                feasible.append((grown, gained))
                stack.append((grown, i + 1, gained))

    best = None
    for chosen, money in feasible:
        if money != most:
            continue
        spent = _payment(cat, res, chosen)[1]
        key = (sum(t.value[c] for c in spent), chosen)
        if best is None or key < best[0]:
            best = (key, chosen)
    return best[1]


_INFINITY = 1 << 62  # above any payment's cost below; sums of a few costs on top of it stay inside int64
_NEVER = -(1 << 56)  # a score for what cannot be: five of them still add up inside int64


def _goods_grid(t: _Tables, res: tuple, caps: list[int]):
    """Per demand q (units per good, q[g] <= caps[g]): the R-SHIP-7 goods payment covering q, as one int64 cost.

    The goods, gold and traders of the hand get ranks 0..m-1 by id; a card costs value * 2**m - 2**(m-1-rank),
    which orders payments by total value, then by sorted ids (as the module docstring explains for 2**200), and
    stays exact in int64 (m <= 43 cards of a hand, values <= 100). Returns (cost array, m, the ranked cards);
    a cost >= _INFINITY means q cannot be covered.
    """
    import numpy as np

    kind, good, quantity, value = t.kind, t.good, t.quantity, t.value
    ranked = [c for c in res if kind[c] in (cards.GOODS_KIND, cards.GOLD, cards.TRADER)]
    m = len(ranked)
    price = {c: value[c] * (1 << m) - (1 << (m - 1 - r)) for r, c in enumerate(ranked)}
    goods_cards = [c for c in ranked if kind[c] == cards.GOODS_KIND]
    traders = sorted((price[c] for c in ranked if kind[c] == cards.TRADER))[:len(goods_cards)]
    shape = tuple(c + 1 for c in caps)
    axes = len(shape)

    def cover(out, source, axis, units, price):
        """out[q] = min(out[q], source[q with q[axis] lowered by units, floored at 0] + price), in place."""
        if units >= shape[axis]:  # every q[axis] falls to 0
            np.minimum(out, source.take([0], axis=axis) + price, out=out)
            return
        head = (slice(None),) * axis
        moved = source[head + (slice(0, shape[axis] - units),)] + price  # computed before out changes
        np.minimum(out[head + (slice(0, units),)], source[head + (slice(0, 1),)] + price,
                   out=out[head + (slice(0, units),)])
        np.minimum(out[head + (slice(units, None),)], moved, out=out[head + (slice(units, None),)])

    cost = np.full(shape, _INFINITY, dtype=np.int64)
    cost[(0,) * axes] = 0
    for c in ranked:
        if kind[c] == cards.GOLD:  # R-SHIP-3: a nugget's units all go to one good
            before = cost.copy()
            for g in range(axes):
                if caps[g]:
                    cover(cost, before, g, quantity[c], price[c])
    # Trades (R-SHIP-4) by the number made: t trades use the t cheapest traders (they are interchangeable).
    levels = [cost] + [np.full(shape, _INFINITY, dtype=np.int64) for _ in traders]
    for c in goods_cards:
        g0, units = good[c], quantity[c]
        for used in range(len(levels) - 1, -1, -1):  # from the most trades down: each level is read unchanged
            level = levels[used]
            if used < len(traders):
                traded = price[c] + traders[used]
                for g in range(axes):
                    if g != g0 and caps[g]:
                        cover(levels[used + 1], level, g, units, traded)
            if caps[g0]:
                cover(level, level, g0, units, price[c])
    cost = levels[0]
    for level in levels[1:]:
        np.minimum(cost, level, out=cost)
    return cost, m, ranked


def _best_by_units(t: _Tables, res: tuple, con: tuple) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The R-SCORE-1 set and its payment by dynamic programming over units per good (polynomial)."""
    import numpy as np

    kind, good, quantity, destination, value = t.kind, t.good, t.quantity, t.destination, t.value
    n = len(kind)
    # The grid of demands: per good, no more units than its contracts ask or than the hand can bring to it.
    asked, own = [0] * _NUM_GOODS, [0] * _NUM_GOODS
    for c in con:
        asked[good[c]] += quantity[c]
    goods_sizes = sorted((quantity[c] for c in res if kind[c] == cards.GOODS_KIND), reverse=True)
    for c in res:
        if kind[c] == cards.GOODS_KIND:
            own[good[c]] += quantity[c]
    gold_units = sum(quantity[c] for c in res if kind[c] == cards.GOLD)
    traded = sum(goods_sizes[:sum(1 for c in res if kind[c] == cards.TRADER)])
    caps = [min(asked[g], own[g] + gold_units + traded) for g in range(_NUM_GOODS)]
    shape = tuple(c + 1 for c in caps)
    cost, m, ranked = _goods_grid(t, res, caps)
    covered = cost < _INFINITY
    goods_value = np.where(covered, (cost + (1 << m) - 1) >> m, 0)  # the total value part of each cost

    # Destination sets: the ships and captains serving exactly E, once per E (R-SHIP-2, R-SHIP-5).
    destinations = sorted({destination[c] for c in con})
    ship_payments = {}
    for mask in range(1 << len(destinations)):
        chosen = frozenset(d for i, d in enumerate(destinations) if mask >> i & 1)
        paid = _ship_payment(t, res, sorted(chosen))
        if paid is not None:
            ship_payments[chosen] = (sum(value[c] for c in paid[1]), paid[1])
    scale = sum(value[c] for c in res) + 1  # one unit of reward outweighs any payment

    knapsacks = {}

    def knapsack(g, allowed):
        """Per units q of good g: the best (reward, bits, contracts) of the allowed contracts needing exactly q."""
        key = (g, allowed)
        if key not in knapsacks:
            table = [None] * shape[g]
            table[0] = (0, 0, ())
            for c in allowed:
                q, r, bit = quantity[c], t.reward[c], 1 << (n - 1 - c)
                for total in range(caps[g] - q, -1, -1):
                    old = table[total]
                    if old is not None:
                        grown = (old[0] + r, old[1] + bit, old[2] + (c,))
                        if table[total + q] is None or grown[:2] > table[total + q][:2]:
                            table[total + q] = grown
            knapsacks[key] = table
        return knapsacks[key]

    # Score = reward * scale - payment value; a set with destinations inside E is scored with E's ships, which
    # never undervalues the best set (it is scored exactly at E = its own destinations).
    best_score, candidates = None, []
    for dests, (ships, _) in ship_payments.items():
        tables = [knapsack(g, tuple(c for c in con if good[c] == g and destination[c] in dests))
                  for g in range(_NUM_GOODS)]
        if best_score is not None and sum(max(row[0] for row in table if row) for table in tables) * scale - ships \
                < best_score:
            continue
        score = np.where(covered, -goods_value - ships, _NEVER)
        for g, table in enumerate(tables):
            reward = np.array([_NEVER if row is None else row[0] * scale for row in table], dtype=np.int64)
            score = score + reward.reshape([-1 if axis == g else 1 for axis in range(_NUM_GOODS)])
        top = int(score.max())
        if best_score is None or top > best_score:
            best_score, candidates = top, []
        if top == best_score:
            candidates += [(tables, q) for q in zip(*np.nonzero(score == top))]
    best = None
    for tables, q in candidates:
        rows = [tables[g][int(q[g])] for g in range(_NUM_GOODS)]
        bits = sum(row[1] for row in rows)
        if best is None or bits > best[0]:
            best = (bits, tuple(sorted(c for row in rows for c in row[2])), tuple(int(x) for x in q))
    chosen, q = best[1], best[2]
    if not chosen:
        return (), ()
    goods_bits = int(goods_value[q]) * (1 << m) - int(cost[q])
    goods_paid = [c for r, c in enumerate(ranked) if goods_bits >> (m - 1 - r) & 1]
    ships_paid = ship_payments[frozenset(destination[c] for c in chosen)][1]
    return chosen, tuple(sorted(goods_paid + list(ships_paid)))
