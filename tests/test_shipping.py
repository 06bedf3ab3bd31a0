"""Shipments (docs/rules.md R-SHIP-1..7) and the final fulfilment (R-SCORE-1), checked against brute force."""

from __future__ import annotations

import csv
import random
from functools import lru_cache
from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packetrow_env import cards, shipping

CAT = cards.load()
GOODS = {name: i for i, name in enumerate(cards.GOODS)}
DEST = {name: i for i, name in enumerate(cards.DESTINATIONS)}
SHIPMENT_KINDS = (cards.SHIP, cards.CAPTAIN, cards.GOLD, cards.GOODS_KIND, cards.TRADER)


# ---------------------------------------------------------------- card lookup (never hard-coded ids)

def ids(cat=CAT, **where):
    """Card ids whose columns equal the given values, e.g. ids(kind=cards.SHIP, destination=2)."""
    mask = np.ones(len(cat.kind), dtype=bool)
    for column, value in where.items():
        mask &= getattr(cat, column) == value
    return [int(c) for c in np.flatnonzero(mask)]


def goods_card(good, quantity, n=0, cat=CAT):
    return ids(cat, kind=cards.GOODS_KIND, good=GOODS[good], quantity=quantity)[n]


def ship(dest, n=0, cat=CAT):
    return ids(cat, kind=cards.SHIP, destination=DEST[dest])[n]


def captain(n=0, cat=CAT):
    return ids(cat, kind=cards.CAPTAIN)[n]


def trader(n=0, cat=CAT):
    return ids(cat, kind=cards.TRADER)[n]


def gold(quantity, n=0, cat=CAT):
    return ids(cat, kind=cards.GOLD, quantity=quantity)[n]


def contract(good, quantity, dest, n=0, cat=CAT):
    return ids(cat, kind=cards.CONTRACT, good=GOODS[good], quantity=quantity, destination=DEST[dest])[n]


# ---------------------------------------------------------------- brute force, written from the rules
#
# Every card of a candidate discard set must get a role (it is discarded, so it
# was used): a goods card ships its units to contracts of its good (changed by
# at most one trader, R-SHIP-4), splittable between those contracts (R-SHIP-2);
# a trader is attached to one goods card and names a new good; a single gold
# nugget gives one unit to one contract; a double gold nugget gives two units to
# one contract or one unit each to two contracts of one good (R-SHIP-3); a ship
# sails to its destination or, with one captain attached, to another one
# (R-SHIP-5), and serves every contract of that destination (R-SHIP-2). The
# payment is the first discard set, in order of (total value, sorted ids), for
# which some assignment fulfils every contract (R-SHIP-7).
#
# Ship roles and goods roles constrain disjoint cards and disjoint parts of a
# contract (its destination vs its units), so "an assignment of all roles
# exists" is checked as "ship roles exist and goods roles exist" (memoised).

def _brute_ships_ok(cat, ship_cards, captains, con):
    dests = {int(cat.destination[c]) for c in con}
    for attach in product([None] + list(range(len(ship_cards))), repeat=len(captains)):
        targets = [a for a in attach if a is not None]
        if len(targets) != len(captains) or len(set(targets)) != len(targets):
            continue  # every captain is used, on its own ship
        captained = set(targets)
        new_dests = [[d for d in range(len(cards.DESTINATIONS)) if d != cat.destination[s]] if i in captained
                     else [int(cat.destination[s])] for i, s in enumerate(ship_cards)]
        for sailing in product(*new_dests):
            # every ship serves at least one contract; every contract has a ship
            if set(sailing) <= dests and dests <= set(sailing):
                return True
    return False


def _brute_goods_ok(cat, goods_cards, traders, singles, doubles, con):
    con = list(con)
    goods_of_contracts = {int(cat.good[c]) for c in con}
    trader_options = [(j, g) for j in range(len(goods_cards)) for g in range(len(cards.GOODS))
                      if g != cat.good[goods_cards[j]]]
    single_options = list(range(len(con)))
    double_options = [(i, j) for i in range(len(con)) for j in range(i, len(con))
                      if cat.good[con[i]] == cat.good[con[j]]]
    for trades in product(trader_options, repeat=len(traders)):
        if len({j for j, _ in trades}) != len(trades):
            continue  # one trader per goods card
        good_of = [int(cat.good[c]) for c in goods_cards]
        for j, g in trades:
            good_of[j] = g
        if not set(good_of) <= goods_of_contracts:
            continue  # an unused goods card would not be discarded
        pool = [0] * len(cards.GOODS)
        for c, g in zip(goods_cards, good_of):
            pool[g] += int(cat.quantity[c])
        for single_to in product(single_options, repeat=len(singles)):
            for double_to in product(double_options, repeat=len(doubles)):
                from_gold = [0] * len(con)
                for i in single_to:
                    from_gold[i] += 1
                for i, j in double_to:
                    from_gold[i] += 1
                    from_gold[j] += 1
                short = [0] * len(cards.GOODS)
                for i, c in enumerate(con):
                    short[cat.good[c]] += max(0, int(cat.quantity[c]) - from_gold[i])
                if all(s <= p for s, p in zip(short, pool)):
                    return True
    return False


def brute_payment(cat, resources, con):
    con = tuple(sorted(con))
    if not con:
        return ()
    hand = sorted({int(c) for c in resources if cat.kind[c] in SHIPMENT_KINDS})
    kind = {c: int(cat.kind[c]) for c in hand}
    double = {c for c in hand if kind[c] == cards.GOLD and cat.quantity[c] == 2}
    value = {c: int(cat.value[c]) for c in hand}
    ships_memo, goods_memo = {}, {}

    def ok(subset):
        of = lambda *ks: tuple(c for c in subset if kind[c] in ks)
        key_s = of(cards.SHIP, cards.CAPTAIN)
        if key_s not in ships_memo:
            ships_memo[key_s] = _brute_ships_ok(cat, of(cards.SHIP), of(cards.CAPTAIN), con)
        if not ships_memo[key_s]:
            return False
        key_g = of(cards.GOODS_KIND, cards.TRADER, cards.GOLD)
        if key_g not in goods_memo:
            gold = of(cards.GOLD)
            goods_memo[key_g] = _brute_goods_ok(cat, of(cards.GOODS_KIND), of(cards.TRADER),
                                                [c for c in gold if c not in double],
                                                [c for c in gold if c in double], con)
        return goods_memo[key_g]

    subsets = [s for n in range(len(hand) + 1) for s in combinations(hand, n)]
    subsets.sort(key=lambda s: (sum(value[c] for c in s), s))
    for s in subsets:
        if ok(s):
            return s
    return None


def brute_best(cat, resources, contracts):
    contracts = sorted(contracts)
    best = None
    for n in range(len(contracts) + 1):
        for chosen in combinations(contracts, n):
            paid = brute_payment(cat, resources, chosen)
            if paid is None:
                continue
            key = (-sum(int(cat.reward[c]) for c in chosen), sum(int(cat.value[c]) for c in paid), chosen)
            if best is None or key < best[0]:
                best = (key, (chosen, paid))
    return best[1]


# ---------------------------------------------------------------- custom catalogues

def _write_catalogue(path, change):
    with open(cards.DEFAULT_PATH, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames
        rows = list(reader)
    change(rows)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return cards.load(path)


def _random_values(rows):
    """Shipment cards get values 1-6, so ties between different-looking payments happen often."""
    rng = random.Random(7)
    for row in rows:
        if row["kind"] in ("ship", "captain", "gold", "goods", "trader"):
            row["value"] = str(rng.randint(1, 6))


def _reshuffled(rows):
    """Other quantities, rewards, ship destinations, gold sizes and goods, with the R-COMP-2 counts kept."""
    rng = random.Random(11)
    ship_rows = [r for r in rows if r["kind"] == "ship"]
    dests = [r["destination"] for r in ship_rows]
    rng.shuffle(dests)
    for r, d in zip(ship_rows, dests):
        r["destination"] = d
    gold_rows = [r for r in rows if r["kind"] == "gold"]
    sizes = [r["quantity"] for r in gold_rows]
    rng.shuffle(sizes)
    for r, q in zip(gold_rows, sizes):
        r["quantity"] = q
    goods_rows = [r for r in rows if r["kind"] == "goods"]
    goods = [r["good"] for r in goods_rows]
    rng.shuffle(goods)
    for r, g in zip(goods_rows, goods):
        r["good"] = g
        r["quantity"] = str(rng.randint(1, 4))
    for r in rows:
        if r["kind"] == "contract":
            r["quantity"] = str(rng.randint(1, 5))
            r["reward"] = str(rng.choice((5, 10, 15, 20, 25, 30, 35)))  # a contract pays (cards.py)
    _random_values(rows)


def _id_tie(rows):
    """Card 80 becomes a 2-grain card of value 4: as costly as two 1-grain cards (2 + 2) but with a smaller id."""
    rows[80]["quantity"] = "2"
    rows[80]["value"] = "4"


@pytest.fixture(scope="module")
def custom(tmp_path_factory):
    folder = tmp_path_factory.mktemp("catalogues")
    return {
        "values": _write_catalogue(folder / "values.csv", _random_values),
        "reshuffled": _write_catalogue(folder / "reshuffled.csv", _reshuffled),
        "id_tie": _write_catalogue(folder / "id_tie.csv", _id_tie),
    }


# ---------------------------------------------------------------- random hands

@lru_cache(maxsize=None)
def _pools(cat):
    """Strategies drawing from card pools, built once: building strategies on every draw is slow."""
    shipment = np.isin(cat.kind, SHIPMENT_KINDS)
    by_quantity = lambda cs: tuple(sorted(cs, key=lambda g: -cat.quantity[g]))  # hypothesis favours early elements
    goods = ids(cat, kind=cards.GOODS_KIND)
    pools = {
        "contracts": tuple(ids(cat, kind=cards.CONTRACT)),
        "captain": tuple(ids(cat, kind=cards.CAPTAIN)),
        "trader": tuple(ids(cat, kind=cards.TRADER)),
        "gold": tuple(ids(cat, kind=cards.GOLD)),
        "any": tuple(int(c) for c in np.flatnonzero(shipment)),
        "others": tuple(int(c) for c in np.flatnonzero(~shipment)),
    }
    for d in range(len(cards.DESTINATIONS)):
        pools["ship", d] = tuple(ids(cat, kind=cards.SHIP, destination=d))
        pools["captained", d] = tuple(c for c in ids(cat, kind=cards.SHIP) if cat.destination[c] != d)
    for g in range(len(cards.GOODS)):
        pools["goods", g] = by_quantity(c for c in goods if cat.good[c] == g)
        pools["other goods", g] = by_quantity(c for c in goods if cat.good[c] != g)
    strategies = {key: st.sampled_from(pool) for key, pool in pools.items()}
    for n in range(1, 5):
        strategies["contract lists", n] = st.lists(strategies["contracts"], min_size=1, max_size=n, unique=True)
    strategies["extra"] = st.lists(strategies["any"], max_size=3)
    strategies["noise"] = st.lists(strategies["others"], max_size=2, unique=True)
    return strategies


SHIP_PLANS = st.sampled_from((("ship",),) * 4 + (("captained", "captain"),) * 2 + ((),))
GOODS_PLANS = st.lists(st.sampled_from((("goods",), ("goods",), ("other goods", "trader"), ("gold",))),
                       min_size=1, max_size=3)


@st.composite
def hands(draw, cat=CAT, max_cards=8, max_contracts=3):
    """A hand planned to nearly fulfil some contracts, then perturbed: feasible and infeasible cases both common."""
    pools = _pools(cat)
    con = draw(pools["contract lists", max_contracts])
    hand = []
    for c in con:
        for role in draw(SHIP_PLANS) + tuple(r for plan in draw(GOODS_PLANS) for r in plan):
            pool = pools[role, int(cat.destination[c])] if role in ("ship", "captained") else (
                pools[role, int(cat.good[c])] if role in ("goods", "other goods") else pools[role])
            hand.append(draw(pool))
    hand += draw(pools["extra"])
    hand = list(dict.fromkeys(hand))
    if draw(st.integers(0, 2)) == 2:
        del hand[draw(st.integers(0, len(hand) - 1))]
    hand = hand[:max_cards]
    # Cards that take no part in a shipment must be ignored.
    hand += draw(pools["noise"])
    draw(st.randoms(use_true_random=False)).shuffle(hand)
    return hand, con


def _check_against_brute(cat, hand, con):
    expected = brute_payment(cat, hand, con)
    assert shipping.payment(cat, hand, con) == expected
    assert shipping.can_fulfil(cat, hand, con) == (expected is not None)


@settings(derandomize=True, deadline=None, max_examples=1500)
@given(hands())
def test_R_SHIP_7_payment_matches_brute_force(case):
    hand, con = case
    _check_against_brute(CAT, hand, con)


@settings(derandomize=True, deadline=None, max_examples=300)
@given(st.sampled_from(["values", "reshuffled", "id_tie"]), st.data())
def test_R_SHIP_7_payment_matches_brute_force_custom_catalogue(custom, name, data):
    cat = custom[name]
    hand, con = data.draw(hands(cat))
    _check_against_brute(cat, hand, con)


@settings(derandomize=True, deadline=None, max_examples=400)
@given(hands(max_cards=12, max_contracts=4))
def test_R_SHIP_7_payment_matches_brute_force_bigger_hands(case):
    """Hands big enough for the pruning of the search to matter."""
    hand, con = case
    _check_against_brute(CAT, hand, con)


@settings(derandomize=True, deadline=None, max_examples=300)
@given(hands(max_cards=6, max_contracts=4))
def test_R_SCORE_1_best_fulfilment_matches_brute_force(case):
    hand, con = case
    assert shipping.best_fulfilment(CAT, hand, con) == brute_best(CAT, hand, con)


@settings(derandomize=True, deadline=None, max_examples=150)
@given(st.sampled_from(["values", "reshuffled"]), st.data())
def test_R_SCORE_1_best_fulfilment_matches_brute_force_custom_catalogue(custom, name, data):
    cat = custom[name]
    hand, con = data.draw(hands(cat, max_cards=6, max_contracts=4))
    assert shipping.best_fulfilment(cat, hand, con) == brute_best(cat, hand, con)


def units_best(cat, hand, con):
    """The search over units (used for many contracts), called directly on any hand."""
    t = shipping._tables(cat)
    res, con = shipping._clean(t, *shipping._keys(t, hand, con))
    return shipping._best_by_units(t, res, con)


@settings(derandomize=True, deadline=None, max_examples=300)
@given(hands(max_cards=6, max_contracts=4))
def test_R_SCORE_1_search_over_units_matches_brute_force(case):
    hand, con = case
    assert units_best(CAT, hand, con) == brute_best(CAT, hand, con)


@settings(derandomize=True, deadline=None, max_examples=150)
@given(st.sampled_from(["values", "reshuffled", "id_tie"]), st.data())
def test_R_SCORE_1_search_over_units_matches_brute_force_custom_catalogue(custom, name, data):
    cat = custom[name]
    hand, con = data.draw(hands(cat, max_cards=6, max_contracts=4))
    assert units_best(cat, hand, con) == brute_best(cat, hand, con)


@pytest.mark.parametrize("name", ["default", "values", "reshuffled"])
def test_R_SCORE_1_search_over_units_matches_the_subset_search_on_big_hands(custom, name):
    """Hands too big for brute force, small enough for the subset search: both searches agree."""
    cat = CAT if name == "default" else custom[name]
    rng = random.Random(5)
    contracts = ids(cat, kind=cards.CONTRACT)
    pool = [int(c) for c in np.flatnonzero(np.isin(cat.kind, SHIPMENT_KINDS))]
    t = shipping._tables(cat)
    for _ in range(60):
        hand, con = rng.sample(pool, rng.randint(4, 30)), rng.sample(contracts, rng.randint(1, shipping._SMALL))
        res, con = shipping._clean(t, *shipping._keys(t, hand, con))
        chosen = shipping._best_by_subsets(cat, t, res, con)
        expected = (chosen, shipping.payment(cat, hand, chosen) if chosen else ())
        assert shipping._best_by_units(t, res, con) == expected, (hand, con)


@pytest.mark.parametrize("name", ["default", "values", "reshuffled"])
def test_R_SHIP_7_goods_payment_by_units_matches_the_search_over_cards(custom, name):
    """Big shipments (16 units and more) are paid by the search over units: the same payment, exactly."""
    cat = CAT if name == "default" else custom[name]
    rng = random.Random(9)
    pool = [int(c) for c in np.flatnonzero(np.isin(cat.kind, (cards.GOLD, cards.GOODS_KIND, cards.TRADER)))]
    for _ in range(80):
        res = tuple(sorted(rng.sample(pool, rng.randint(2, 24))))
        demand = tuple(rng.randint(0, 6) for _ in range(4))
        expected = shipping._goods_payment(cat, res, demand)
        found = shipping._goods_payment_by_units(cat, res, demand)
        assert (found is None) == (expected is None), (res, demand)
        if found is not None:
            assert (found[0], sorted(found[1])) == (expected[0], sorted(expected[1])), (res, demand)


def test_issue_11_6_R_SCORE_1_twenty_five_contracts_in_one_hand():
    """Issue 11 item 6: 25 contracts took 287 s (exponential); now the search over units answers at once. The
    answer pays the most a hand can: every contract left out cannot be added, the payment fulfils the set and
    no card of it can be left out (benchmarks/best_fulfilment.py measures the time)."""
    contracts = [c for c in ids(kind=cards.CONTRACT) if CAT.board[c] != cards.START] + ids(kind=cards.CONTRACT)[-1:]
    hand = [int(c) for c in np.flatnonzero(np.isin(CAT.kind, SHIPMENT_KINDS))]
    for resources in (hand, hand[::2], [c for c in hand if CAT.kind[c] != cards.GOLD]):
        best, paid = shipping.best_fulfilment(CAT, resources, contracts)
        assert len(contracts) == 25 and best and set(paid) <= set(resources)
        assert shipping.can_fulfil(CAT, paid, best)
        for c in paid:
            assert not shipping.can_fulfil(CAT, [x for x in paid if x != c], best)
        for c in set(contracts) - set(best):
            assert not shipping.can_fulfil(CAT, resources, best + (c,))
        assert shipping.payment(CAT, resources, best) == paid  # a shipment of them all at once in play, too


@settings(derandomize=True, deadline=None, max_examples=150)
@given(st.lists(st.sampled_from(ids(kind=cards.CONTRACT)), min_size=1, max_size=10, unique=True),
       st.lists(st.sampled_from([int(c) for c in np.flatnonzero(np.isin(CAT.kind, SHIPMENT_KINDS))]),
                min_size=8, max_size=22, unique=True))
def test_R_SHIP_7_large_hands_minimal_and_consistent(con, hand):
    """Big hands (too big for brute force): the payment really pays, and no card of it can be left out."""
    best, paid = shipping.best_fulfilment(CAT, hand, con)
    assert set(best) <= set(con) and set(paid) <= set(hand)
    assert shipping.payment(CAT, hand, best) == paid
    assert shipping.payment(CAT, paid, best) == paid
    for c in paid:
        assert not shipping.can_fulfil(CAT, [x for x in paid if x != c], best)
    for c in con:
        if c not in best:  # adding a paying contract would have been better
            assert not shipping.can_fulfil(CAT, hand, best + (c,)) or CAT.reward[c] == 0


# ---------------------------------------------------------------- R-SHIP-1

def test_R_SHIP_1_quantity_and_destination_needed():
    c = contract("cotton", 3, "netherlands")
    assert CAT.reward[c] == 25
    hand = [goods_card("cotton", 3), ship("netherlands")]
    assert shipping.payment(CAT, hand, [c]) == tuple(sorted(hand))
    assert shipping.can_fulfil(CAT, hand, [c])
    assert not shipping.can_fulfil(CAT, [goods_card("cotton", 3)], [c])  # no ship
    assert not shipping.can_fulfil(CAT, [goods_card("cotton", 3), ship("france")], [c])  # wrong destination
    assert not shipping.can_fulfil(CAT, [goods_card("cotton", 2), ship("netherlands")], [c])  # too few units
    assert not shipping.can_fulfil(CAT, [goods_card("fur", 3), ship("netherlands")], [c])  # wrong good
    assert shipping.payment(CAT, [goods_card("fur", 3), ship("netherlands")], [c]) is None


def test_R_SHIP_1_35_dollar_contract_met_with_two_goods_cards():
    c = contract("grain", 4, "france")
    assert CAT.reward[c] == 35
    hand = [goods_card("grain", 2, 0), goods_card("grain", 2, 1), ship("france")]
    assert shipping.payment(CAT, hand, [c]) == tuple(sorted(hand))


def test_R_SHIP_1_other_cards_are_ignored():
    c = contract("cotton", 3, "netherlands")
    noise = ids(kind=cards.BUILDING)[:2] + ids(kind=cards.MONEY)[:2] + [contract("fur", 2, "sweden")]
    noise += ids(kind=cards.ASSISTANT)[:1] + ids(kind=cards.BANKER)[:1]
    hand = [goods_card("cotton", 3), ship("netherlands")]
    assert shipping.payment(CAT, hand + noise, [c]) == tuple(sorted(hand))
    assert not shipping.can_fulfil(CAT, noise, [c])


def test_empty_shipment_and_bad_input():
    hand = [goods_card("cotton", 3), ship("netherlands")]
    assert shipping.payment(CAT, hand, []) == ()
    assert shipping.can_fulfil(CAT, [], ())
    assert shipping.best_fulfilment(CAT, hand, []) == ((), ())
    with pytest.raises(ValueError):
        shipping.payment(CAT, hand, [goods_card("cotton", 3)])
    with pytest.raises(ValueError):
        shipping.can_fulfil(CAT, hand, [ship("france")])
    c = contract("cotton", 3, "netherlands")
    # numpy ids and duplicated resources are accepted; results are plain ints
    paid = shipping.payment(CAT, np.array(hand + hand), np.array([c]))
    assert paid == tuple(sorted(hand)) and all(type(x) is int for x in paid)


# ---------------------------------------------------------------- R-SHIP-2

def test_R_SHIP_2_split_goods_between_contracts_three_contracts_65():
    """Rulebook: $35 + $15 + $15 at once; a tobacco card split over two contracts, a cotton unit lost."""
    big = contract("cotton", 4, "great_britain")
    t1 = contract("tobacco", 2, "netherlands")
    t2 = contract("tobacco", 2, "german_confederation")
    assert [CAT.reward[c] for c in (big, t1, t2)] == [35, 15, 15]
    hand = [goods_card("cotton", 3), goods_card("cotton", 2), goods_card("tobacco", 3), goods_card("tobacco", 1),
            ship("great_britain"), ship("netherlands"), ship("german_confederation")]
    assert shipping.payment(CAT, hand, [big, t1, t2]) == tuple(sorted(hand))
    assert shipping.best_fulfilment(CAT, hand, [big, t1, t2]) == (tuple(sorted((big, t1, t2))), tuple(sorted(hand)))
    assert sum(int(CAT.reward[c]) for c in (big, t1, t2)) == 65
    # without the 1-tobacco card the two tobacco contracts cannot both be met
    assert not shipping.can_fulfil(CAT, hand[:3] + hand[4:], [big, t1, t2])


def test_R_SHIP_2_excess_units_are_lost():
    c = contract("grain", 2, "netherlands")
    hand = [goods_card("grain", 3), ship("netherlands")]
    assert shipping.payment(CAT, hand, [c]) == tuple(sorted(hand))


def test_R_SHIP_2_shared_ship_only_for_same_destination():
    tob = contract("tobacco", 2, "netherlands")
    cot = contract("cotton", 3, "netherlands")
    goods = [goods_card("tobacco", 2), goods_card("cotton", 3)]
    hand = goods + [ship("netherlands")]
    assert shipping.payment(CAT, hand, [tob, cot]) == tuple(sorted(hand))
    fur = contract("fur", 2, "sweden")
    goods2 = [goods_card("tobacco", 2), goods_card("fur", 2)]
    assert not shipping.can_fulfil(CAT, goods2 + [ship("netherlands")], [tob, fur])
    assert not shipping.can_fulfil(CAT, goods2 + [ship("sweden")], [tob, fur])
    both = goods2 + [ship("netherlands"), ship("sweden")]
    assert shipping.payment(CAT, both, [tob, fur]) == tuple(sorted(both))


def test_R_SHIP_2_one_ship_per_destination_is_enough():
    tob = contract("tobacco", 2, "netherlands")
    cot = contract("cotton", 3, "netherlands")
    hand = [goods_card("tobacco", 2), goods_card("cotton", 3), ship("netherlands", 0), ship("netherlands", 1)]
    assert shipping.payment(CAT, hand, [tob, cot]) == tuple(sorted(hand[:3]))


# ---------------------------------------------------------------- R-SHIP-3

def test_R_SHIP_3_single_gold_is_one_unit_of_any_good():
    c = contract("fur", 2, "sweden")
    hand = [goods_card("fur", 1), gold(1), ship("sweden")]
    assert shipping.payment(CAT, hand, [c]) == tuple(sorted(hand))
    assert not shipping.can_fulfil(CAT, [gold(1), ship("sweden")], [c])
    assert shipping.payment(CAT, [gold(1, 0), gold(1, 1), ship("sweden")], [c]) == tuple(
        sorted([gold(1, 0), gold(1, 1), ship("sweden")]))


def test_R_SHIP_3_double_gold_is_two_units_of_one_good():
    c = contract("fur", 2, "sweden")
    assert shipping.payment(CAT, [gold(2), ship("sweden")], [c]) == tuple(sorted([gold(2), ship("sweden")]))
    g1, f1 = contract("grain", 2, "netherlands"), contract("fur", 2, "sweden")
    # a double nugget cannot give one unit to each of two goods
    hand = [goods_card("grain", 1), goods_card("fur", 1), gold(2), ship("netherlands"), ship("sweden")]
    assert not shipping.can_fulfil(CAT, hand, [g1, f1])
    hand = [goods_card("grain", 1), goods_card("fur", 1), gold(1, 0), gold(1, 1), ship("netherlands"), ship("sweden")]
    assert shipping.can_fulfil(CAT, hand, [g1, f1])


def test_R_SHIP_3_double_gold_split_over_two_contracts_of_one_good():
    a, b = contract("grain", 2, "netherlands"), contract("grain", 2, "german_confederation")
    hand = [goods_card("grain", 1, 0), goods_card("grain", 1, 1), gold(2), ship("netherlands"),
            ship("german_confederation")]
    assert shipping.payment(CAT, hand, [a, b]) == tuple(sorted(hand))


def test_R_SHIP_3_unused_gold_unit_is_lost():
    c = contract("grain", 3, "great_britain")
    hand = [goods_card("grain", 2), gold(2), ship("great_britain")]
    assert shipping.payment(CAT, hand, [c]) == tuple(sorted(hand))


# ---------------------------------------------------------------- R-SHIP-4

def test_R_SHIP_4_trader_changes_the_good_of_a_goods_card():
    c = contract("fur", 2, "sweden")
    hand = [goods_card("cotton", 2), trader(), ship("sweden")]
    assert shipping.payment(CAT, hand, [c]) == tuple(sorted(hand))
    assert not shipping.can_fulfil(CAT, hand[:1] + hand[2:], [c])


def test_R_SHIP_4_one_trader_per_goods_card():
    c = contract("fur", 4, "netherlands")
    hand = [goods_card("cotton", 2, 0), goods_card("cotton", 2, 1), trader(0), ship("netherlands")]
    assert not shipping.can_fulfil(CAT, hand, [c])
    assert shipping.payment(CAT, hand + [trader(1)], [c]) == tuple(sorted(hand + [trader(1)]))


def test_R_SHIP_4_a_traded_card_keeps_one_good():
    """A traded card changes good as a whole: 3 cotton cannot become 1 grain and 2 fur."""
    g, f = contract("grain", 2, "netherlands"), contract("fur", 2, "sweden")
    hand = [goods_card("cotton", 3), goods_card("grain", 1), trader(0), trader(1), ship("netherlands"), ship("sweden")]
    assert not shipping.can_fulfil(CAT, hand, [g, f])
    hand.append(goods_card("cotton", 1))
    # 3 cotton -> fur, 1 cotton -> grain beside the 1 grain
    assert shipping.payment(CAT, hand, [g, f]) == tuple(sorted(hand))
    assert not shipping.can_fulfil(CAT, hand[:3] + hand[4:], [g, f])  # one trader is not enough


# ---------------------------------------------------------------- R-SHIP-5

def test_R_SHIP_5_captain_changes_a_ships_destination():
    c = contract("grain", 4, "spain")
    hand = [goods_card("grain", 3), goods_card("grain", 1), ship("france"), captain()]
    assert shipping.payment(CAT, hand, [c]) == tuple(sorted(hand))
    assert not shipping.can_fulfil(CAT, hand[:3], [c])
    # a ship already bound for Spain needs no captain
    assert shipping.payment(CAT, hand + [ship("spain")], [c]) == tuple(sorted(hand[:2] + [ship("spain")]))


def test_R_SHIP_5_captained_ship_still_serves_one_destination():
    a, b = contract("grain", 4, "spain"), contract("cotton", 2, "spain")
    goods = [goods_card("grain", 3), goods_card("grain", 1), goods_card("cotton", 2)]
    assert shipping.payment(CAT, goods + [ship("france"), captain()], [a, b]) == tuple(
        sorted(goods + [ship("france"), captain()]))
    s = contract("fur", 2, "sweden")
    goods = [goods_card("grain", 3), goods_card("grain", 1), goods_card("fur", 2)]
    assert not shipping.can_fulfil(CAT, goods + [ship("france"), captain(0), captain(1)], [a, s])
    hand = goods + [ship("france", 0), ship("france", 1), captain(0), captain(1)]
    assert shipping.payment(CAT, hand, [a, s]) == tuple(sorted(hand))


def test_R_SHIP_5_one_captain_changes_one_ship():
    a, s = contract("grain", 4, "spain"), contract("fur", 2, "sweden")
    goods = [goods_card("grain", 3), goods_card("grain", 1), goods_card("fur", 2)]
    ships = [ship("france", 0), ship("france", 1)]
    assert not shipping.can_fulfil(CAT, goods + ships + [captain(0)], [a, s])
    assert shipping.can_fulfil(CAT, goods + ships + [captain(0), captain(1)], [a, s])
    assert shipping.can_fulfil(CAT, goods + [ship("france"), ship("sweden"), captain(0)], [a, s])


# ---------------------------------------------------------------- R-SHIP-7

def test_R_SHIP_7_least_total_value():
    c = contract("grain", 2, "netherlands")
    g2, g1a, g1b = goods_card("grain", 2), goods_card("grain", 1, 0), goods_card("grain", 1, 1)
    hand = [g2, g1a, g1b, gold(2), gold(1), ship("netherlands")]
    assert CAT.value[g1a] + CAT.value[g1b] < CAT.value[g2]
    assert shipping.payment(CAT, hand, [c]) == tuple(sorted([g1a, g1b, ship("netherlands")]))
    assert shipping.payment(CAT, [g2, gold(2), ship("netherlands")], [c]) == tuple(sorted([g2, ship("netherlands")]))


def test_R_SHIP_7_ties_broken_by_smallest_sorted_ids():
    c = contract("grain", 4, "france")
    a1, a3 = goods_card("grain", 1), goods_card("grain", 3)
    b2, c2 = goods_card("grain", 2, 0), goods_card("grain", 2, 1)
    assert CAT.value[a1] + CAT.value[a3] == CAT.value[b2] + CAT.value[c2]
    expected = min(tuple(sorted([a1, a3])), tuple(sorted([b2, c2])))
    ships = ids(kind=cards.SHIP, destination=DEST["france"])
    paid = shipping.payment(CAT, [a1, a3, b2, c2] + ships, [c])
    assert paid == tuple(sorted(expected + (ships[0],)))


def test_R_SHIP_7_custom_values(custom):
    """Card 80 made a 2-grain card of value 4: it ties with two 1-grain cards and wins on its smaller id."""
    cat = custom["id_tie"]
    c = contract("grain", 2, "netherlands", cat=cat)
    ones = ids(cat, kind=cards.GOODS_KIND, good=GOODS["grain"], quantity=1)
    assert 80 not in ones and len(ones) == 2
    s = ids(cat, kind=cards.SHIP, destination=DEST["netherlands"])[0]
    assert shipping.payment(cat, ones + [80, s], [c]) == tuple(sorted([80, s]))
    assert shipping.payment(cat, ones + [s], [c]) == tuple(sorted(ones + [s]))


# ---------------------------------------------------------------- R-SCORE-1

def test_R_SCORE_1_most_money():
    big = contract("grain", 4, "france")
    s1, s2 = contract("grain", 2, "netherlands"), contract("grain", 2, "german_confederation")
    hand = [goods_card("grain", 3), goods_card("grain", 1), ship("france"), ship("netherlands"),
            ship("german_confederation")]
    # 4 grain: either the $35 contract or both $15 ones ($30)
    assert shipping.best_fulfilment(CAT, hand, [big, s1, s2]) == (
        (big,), tuple(sorted([goods_card("grain", 3), goods_card("grain", 1), ship("france")])))


def test_R_SCORE_1_ties_least_value_then_smallest_ids():
    a, b = contract("grain", 2, "netherlands"), contract("cotton", 2, "france")
    assert CAT.reward[a] == CAT.reward[b]
    hand = [goods_card("grain", 2), goods_card("cotton", 1, 0), goods_card("cotton", 1, 1), ship("netherlands"),
            ship("france", 0)]
    hand_one_ship = hand[:3] + [ship("france", 0), captain()]
    # two ships and no captain: both fit -> both
    assert shipping.best_fulfilment(CAT, hand, [a, b])[0] == tuple(sorted((a, b)))
    # one ship and a captain: only one contract; cotton (1+1, value 4) is cheaper than grain (2, value 6)
    assert CAT.value[goods_card("cotton", 1, 0)] * 2 < CAT.value[goods_card("grain", 2)]
    assert shipping.best_fulfilment(CAT, hand_one_ship, [a, b]) == (
        (b,), tuple(sorted([goods_card("cotton", 1, 0), goods_card("cotton", 1, 1), ship("france", 0)])))
    # equal rewards and equal payment values: the smaller contract id
    c = contract("grain", 2, "german_confederation")
    hand = [goods_card("grain", 2), ship("netherlands"), ship("german_confederation")]
    assert shipping.best_fulfilment(CAT, hand, [c, a]) == ((min(a, c),), tuple(sorted(
        [goods_card("grain", 2), ship("netherlands") if min(a, c) == a else ship("german_confederation")])))


def test_R_SCORE_1_nothing_fulfillable():
    assert shipping.best_fulfilment(CAT, [goods_card("grain", 1)], [contract("grain", 4, "france")]) == ((), ())


def test_R_SCORE_1_equal_money_and_value_smallest_sorted_contract_ids():
    """$35 + $15 against $25 + $25, each paid by two 3-grain cards and two ships: the smaller sorted id tuple wins."""
    x, y = contract("grain", 2, "netherlands"), contract("grain", 4, "france")
    u, v = contract("grain", 3, "great_britain"), contract("grain", 3, "sweden")
    assert CAT.reward[x] + CAT.reward[y] == CAT.reward[u] + CAT.reward[v]
    hand = [goods_card("grain", 3, 0), goods_card("grain", 3, 1), ship("netherlands"), ship("france"),
            ship("great_britain"), ship("sweden")]
    first, second = sorted([tuple(sorted((x, y))), tuple(sorted((u, v)))])
    assert first[::-1] > second[::-1]  # the case where comparing from the largest id would disagree
    chosen, paid = shipping.best_fulfilment(CAT, hand, [x, y, u, v])
    assert chosen == first
    assert paid == shipping.payment(CAT, hand, first)
