"""How a shipment can be paid: its payment options (docs/rules.md R-SHIP-7).

A *payment* is a set of the player's hand cards and ships that fulfils the
pending shipment (R-SHIP-1..5); it is *minimal* when no card can be left
out. Two payments are one *option* when they discard the same multiset of
card names (cards of one name are interchangeable; in a custom catalogue,
cards of one name with different effects or values are told apart). Each
option is represented by the lowest card ids of each name, and options are
ordered by total card value, then by the sorted list of card ids.

Feasibility is monotone (a card more never makes a shipment impossible) and
splits into two independent problems that share no cards (shipping.py):
ships and captains serve the destinations, goods, gold and traders the
demand per good. So the minimal payments are exactly the pairs (minimal ship
part, minimal goods part), and each part is found by a depth-first search
over how many cards of each name it uses, asking shipping's exact
feasibility test.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

from . import cards as card_kinds
from . import shipping

# The kinds of the two parts of a payment, which share no cards: ships and captains serve the destinations, goods,
# gold and traders the demand per good. Internal API: game_info bounds each part's options by them.
SHIP_KINDS = (card_kinds.SHIP, card_kinds.CAPTAIN)
GOODS_KINDS = (card_kinds.GOLD, card_kinds.GOODS_KIND, card_kinds.TRADER)


class _Tables:
    """Plain-Python columns of a catalogue and each card's interchangeability class."""

    def __init__(self, cat):
        self.kind = [int(x) for x in cat.kind]
        self.good = [int(x) for x in cat.good]
        self.destination = [int(x) for x in cat.destination]
        self.value = [int(x) for x in cat.value]
        self.quantity = [int(x) for x in cat.quantity]
        # Cards are interchangeable when they share a name and everything that matters to a shipment.
        classes = {}
        self.group = []
        for c in range(len(self.kind)):
            key = (cat.names[c], self.kind[c], int(cat.good[c]), int(cat.quantity[c]), int(cat.destination[c]),
                   self.value[c])
            self.group.append(classes.setdefault(key, len(classes)))


@lru_cache(maxsize=16)
def _tables(cat) -> _Tables:
    """The tables of a catalogue (catalogues hash by identity)."""
    return _Tables(cat)


def card_classes(cat) -> list[int]:
    """Each card's class of interchangeable cards (R-SHIP-7: a name and everything that matters to a shipment),
    numbered in order of first appearance; the batch's card table (``vector.tables``) holds them as ``group``."""
    return _tables(cat).group


def payment_options(cat, resources, contracts) -> list[tuple[int, ...]]:
    """The payment options of a shipment (sorted card-id tuples in R-SHIP-7 order); [] if it cannot be fulfilled."""
    t = _tables(cat)
    kind = t.kind
    res = tuple(sorted({int(c) for c in resources if kind[c] in SHIP_KINDS or kind[c] in GOODS_KINDS}))
    con = tuple(sorted(int(c) for c in contracts))
    if not con:
        return [()]
    return list(_options(cat, res, con))


def cheapest_payment(cat, resources, contracts) -> tuple[int, ...] | None:
    """The first option (least value, then lowest ids): the automatic payment a bot may use, never a rule."""
    options = payment_options(cat, resources, contracts)
    return options[0] if options else None


@lru_cache(maxsize=1 << 12)
def _options(cat, res: tuple, con: tuple) -> tuple[tuple[int, ...], ...]:
    if not shipping.can_fulfil(cat, res, con):
        return ()
    t = _tables(cat)
    kind = t.kind
    ship_cards = [c for c in res if kind[c] in SHIP_KINDS]
    goods_cards = [c for c in res if kind[c] in GOODS_KINDS]
    destinations = {t.destination[c] for c in con}
    goods = {t.good[c] for c in con}
    # Cards that can never serve: a ship to another destination without a captain to turn it, a
    # goods card of an undemanded good without a trader to change it.
    if not any(kind[c] == card_kinds.CAPTAIN for c in ship_cards):
        ship_cards = [c for c in ship_cards if kind[c] != card_kinds.SHIP or t.destination[c] in destinations]
        # Without captains each destination takes one of its own ships: one ship part, the lowest of each.
        lowest = {}
        for c in ship_cards:  # sorted, so the first seen per class is the lowest id
            lowest.setdefault(t.group[c], c)
        if len({t.destination[c] for c in lowest.values()}) == len(lowest):  # one class per destination
            ship_parts = [tuple(sorted(lowest.values()))]
        else:
            ship_parts = _minimal(cat, t, ship_cards, goods_cards, con)
    else:
        ship_parts = _minimal(cat, t, ship_cards, goods_cards, con)
    if not any(kind[c] == card_kinds.TRADER for c in goods_cards):
        goods_cards = [c for c in goods_cards if kind[c] != card_kinds.GOODS_KIND or t.good[c] in goods]
    goods_parts = _minimal(cat, t, goods_cards, ship_cards, con)
    value = t.value
    options = [tuple(sorted(a + b)) for a, b in product(ship_parts, goods_parts)]
    options.sort(key=lambda o: (sum(value[c] for c in o), o))
    return tuple(options)


def _minimal(cat, t: _Tables, part: list[int], other: list[int], con: tuple) -> list[tuple[int, ...]]:
    """The minimal sub-multisets of ``part`` (lowest ids per class) that fulfil ``con`` together with all of ``other``."""
    classes = {}
    for c in part:  # part is sorted, so each class lists its lowest ids first
        classes.setdefault(t.group[c], []).append(c)
    members = list(classes.values())
    # Classes that serve on their own first (ships to a destination of the shipment, goods of a demanded good,
    # bigger first), helpers last: feasible counts turn up early and end their branch.
    dests = {t.destination[c] for c in con}
    goods = {t.good[c] for c in con}

    def order(m):
        c = m[0]
        k = t.kind[c]
        if k == card_kinds.SHIP:
            return (0 if t.destination[c] in dests else 2, 0)
        if k == card_kinds.GOODS_KIND:
            return (0 if t.good[c] in goods else 2, -t.quantity[c])
        return (1, -t.quantity[c])
    members.sort(key=order)
    limits = [len(m) for m in members]
    other = tuple(other)
    memo = {}
    # A cheap necessary condition first: enough units of goods (with gold) and enough ships in the part.
    kind = t.kind
    units = [t.quantity[m[0]] if kind[m[0]] in (card_kinds.GOODS_KIND, card_kinds.GOLD) else 0 for m in members]
    ships = [int(kind[m[0]] == card_kinds.SHIP) for m in members]
    need_units = sum(t.quantity[c] for c in con) if any(units) else 0
    need_ships = len({t.destination[c] for c in con}) if any(ships) else 0

    def feasible(counts) -> bool:
        found = memo.get(counts)
        if found is None:
            if sum(u * k for u, k in zip(units, counts)) < need_units or \
                    sum(s * k for s, k in zip(ships, counts)) < need_ships:
                found = False
            else:
                chosen = [c for m, k in zip(members, counts) for c in m[:k]]
                found = shipping.can_fulfil(cat, other + tuple(chosen), con)
            memo[counts] = found
        return found

    n = len(members)
    found = []

    def search(i: int, counts: tuple):
        # counts fixes classes 0..i-1; the rest are open. Prune when even all of the rest cannot do it.
        if not feasible(counts + tuple(limits[i:])):
            return
        if i == n:
            found.append(counts)
            return
        for k in range(limits[i] + 1):
            fixed = counts + (k,)
            if feasible(fixed + (0,) * (n - i - 1)):
                found.append(fixed + (0,) * (n - i - 1))  # one more of any class would not be minimal
                return
            search(i + 1, fixed)

    search(0, ())
    minimal = []
    for counts in found:
        if all(not k or not feasible(counts[:j] + (k - 1,) + counts[j + 1:]) for j, k in enumerate(counts)):
            minimal.append(tuple(c for m, k in zip(members, counts) for c in m[:k]))
    return sorted(set(minimal))
