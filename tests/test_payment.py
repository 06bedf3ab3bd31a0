"""Payment options (docs/rules.md R-SHIP-7): exact, minimal, one per multiset of card names, in order; checked
against exhaustive enumeration of the subsets of a hand written from the rules."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packetrow_env import cards, payment, shipping
from tests.test_shipping import (CAT, SHIPMENT_KINDS, _brute_goods_ok, _brute_ships_ok, _write_catalogue, captain,
                                 contract, gold, goods_card, hands, ids, ship, trader)


def brute_options(cat, resources, con):
    """Every minimal paying subset of the hand, one per multiset of card names, lowest ids, R-SHIP-7 order."""
    con = tuple(sorted(con))
    hand = sorted({int(c) for c in resources if cat.kind[c] in SHIPMENT_KINDS})
    kind = {c: int(cat.kind[c]) for c in hand}
    memo = {}

    def ok(subset):
        if subset not in memo:
            of = lambda *ks: tuple(c for c in subset if kind[c] in ks)
            gold_cards = of(cards.GOLD)
            memo[subset] = (_brute_ships_ok(cat, of(cards.SHIP), of(cards.CAPTAIN), con)
                            and _brute_goods_ok(cat, of(cards.GOODS_KIND), of(cards.TRADER),
                                                [c for c in gold_cards if cat.quantity[c] != 2],
                                                [c for c in gold_cards if cat.quantity[c] == 2], con))
        return memo[subset]

    def name(c):
        return (cat.names[c], int(cat.kind[c]), int(cat.good[c]), int(cat.quantity[c]), int(cat.destination[c]),
                int(cat.value[c]))

    by_name = {}
    for c in hand:
        by_name.setdefault(name(c), []).append(c)
    # ok() asks that every card of a set has a role; a set fulfils the shipment when a subset of it is ok.
    fulfils = {}
    for n in range(len(hand) + 1):
        for subset in combinations(hand, n):
            fulfils[subset] = ok(subset) or any(fulfils[subset[:i] + subset[i + 1:]] for i in range(n))
    options = set()
    for subset, yes in fulfils.items():
        if yes and not any(fulfils[subset[:i] + subset[i + 1:]] for i in range(len(subset))):
            counts = {}
            for c in subset:
                counts[name(c)] = counts.get(name(c), 0) + 1
            options.add(tuple(sorted(c for key, k in counts.items() for c in by_name[key][:k])))
    return sorted(options, key=lambda o: (sum(int(cat.value[c]) for c in o), o))


def _check(cat, hand, con):
    expected = brute_options(cat, hand, con)
    got = payment.payment_options(cat, hand, con)
    assert got == expected
    assert len(set(got)) == len(got)
    assert (payment.cheapest_payment(cat, hand, con) or None) == (shipping.payment(cat, hand, con) or None) \
        if got else shipping.payment(cat, hand, con) is None


@settings(derandomize=True, deadline=None, max_examples=600)
@given(hands(max_cards=9))
def test_R_SHIP_7_options_match_exhaustive_enumeration(case):
    hand, con = case
    _check(CAT, hand, con)


@settings(derandomize=True, deadline=None, max_examples=150)
@given(hands(max_cards=12, max_contracts=4))
def test_R_SHIP_7_options_match_exhaustive_enumeration_bigger_hands(case):
    hand, con = case
    _check(CAT, hand, con)


@pytest.fixture(scope="module")
def custom_values(tmp_path_factory):
    import random

    def change(rows):
        rng = random.Random(3)
        for row in rows:
            if row["kind"] in ("ship", "captain", "gold", "goods", "trader"):
                row["value"] = str(rng.randint(1, 6))
    return _write_catalogue(tmp_path_factory.mktemp("values") / "values.csv", change)


@settings(derandomize=True, deadline=None, max_examples=150)
@given(st.data())
def test_R_SHIP_7_options_match_exhaustive_enumeration_custom_values(custom_values, data):
    hand, con = data.draw(hands(custom_values, max_cards=9))
    _check(custom_values, hand, con)


def test_R_SHIP_7_reproduced_position_keeps_the_great_britain_ship():
    """2 cotton to France + 2 fur to Great Britain, one cotton_2, one captain, ships to GB and Spain: shipping the
    cotton contract may spend the Spain ship with the captain, keeping the GB ship for the fur contract."""
    cotton, fur = contract("cotton", 2, "france"), contract("fur", 2, "great_britain")
    gb, spain, cap, cotton_2 = ship("great_britain"), ship("spain"), captain(), goods_card("cotton", 2)
    hand = [cotton, fur, cotton_2, cap, gb, spain]
    options = payment.payment_options(CAT, hand, [cotton])
    assert options == sorted([tuple(sorted((gb, cap, cotton_2))), tuple(sorted((spain, cap, cotton_2)))])
    assert any(gb not in option for option in options)
    _check(CAT, hand, [cotton])


def test_R_SHIP_7_gold_and_cotton_2_tie_are_two_options():
    """cotton_1 + single gold and cotton_2 cost the same (6): both are offered, not only the lower ids (the gold)."""
    con = contract("cotton", 2, "france")
    hand = [con, ship("france"), goods_card("cotton", 1), gold(1), goods_card("cotton", 2)]
    options = payment.payment_options(CAT, hand, [con])
    with_gold = tuple(sorted((ship("france"), goods_card("cotton", 1), gold(1))))
    with_cotton_2 = tuple(sorted((ship("france"), goods_card("cotton", 2))))
    assert set(options) == {with_gold, with_cotton_2}
    _check(CAT, hand, [con])


def test_R_SHIP_7_cards_of_one_name_are_one_option_with_the_lowest_ids():
    con = contract("grain", 2, "sweden")
    singles = ids(kind=cards.GOODS_KIND, good=0, quantity=1)
    hand = [con, ship("sweden", 1), ship("sweden", 0)] + singles
    options = payment.payment_options(CAT, hand, [con])
    assert options == [tuple(sorted((ship("sweden", 0), singles[0], singles[1])))]


def test_R_SHIP_7_options_are_ordered_by_value_then_ids():
    con = contract("tobacco", 4, "spain")
    hand = [con, ship("spain"), ship("france"), captain(), goods_card("tobacco", 2), goods_card("fur", 2), trader(),
            gold(2), gold(1), goods_card("tobacco", 1), goods_card("tobacco", 3)]
    options = payment.payment_options(CAT, hand, [con])
    keys = [(sum(int(CAT.value[c]) for c in o), o) for o in options]
    assert keys == sorted(keys) and len(set(options)) == len(options) > 3
    assert all(o == tuple(sorted(o)) for o in options)
    _check(CAT, hand, [con])


def test_R_SHIP_7_impossible_shipment_has_no_option():
    con = contract("tobacco", 4, "spain")
    assert payment.payment_options(CAT, [con, ship("france"), goods_card("tobacco", 3)], [con]) == []
    assert payment.cheapest_payment(CAT, [con, ship("france"), goods_card("tobacco", 3)], [con]) is None
