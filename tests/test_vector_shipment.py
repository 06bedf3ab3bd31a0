"""The compiled shipment kernels (packetrow_env/vector/shipment.py) against the Python reference they replace:
shipping.can_fulfil, payment.payment_options and shipping.payment (R-SHIP-1..7), shipping.best_fulfilment
(R-SCORE-1) and engine._cheapest_cover (R-TAKE-4), on hands from random play of real games, on hypothesis
hands and on custom catalogues."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packetrow_env import cards, payment, shipping
from packetrow_env.actions import MAX_PAYMENT_OPTIONS
from packetrow_env.engine import Game, _cheapest_cover
from packetrow_env.vector import shipment, tables
from packetrow_env.vector.batch import WORDS
from tests.fuzzing import default_rows, mutate_catalogue
from tests.test_shipping import (CAT, SHIPMENT_KINDS, _id_tie, _random_values, _reshuffled, _write_catalogue,
                                 hands)

TAB = tables.table(CAT)


def ids_of(bits) -> tuple[int, ...]:
    """The sorted card ids of a bitset."""
    return tuple(w * 64 + b for w in range(len(bits)) for b in range(64) if (int(bits[w]) >> b) & 1)


def arr(ids) -> np.ndarray:
    return np.array(sorted(int(c) for c in ids), dtype=np.int64)


def check_feasible_and_options(cat, tab, hand, con):
    """feasible == shipping.can_fulfil and payment_options, page by page, == payment.payment_options (R-SHIP-7)."""
    res, con_ = arr(hand), arr(con)
    expected = shipping.can_fulfil(cat, hand, con)
    assert shipment.feasible(tab, res, con_) == expected, (hand, con)
    options = payment.payment_options(cat, hand, con)
    out = np.full((MAX_PAYMENT_OPTIONS, WORDS), -1, np.int64)
    for first in range(0, max(len(options), 1), MAX_PAYMENT_OPTIONS):  # every page
        assert shipment.payment_options(tab, res, con_, out, first) == len(options), (hand, con)
        shown = min(MAX_PAYMENT_OPTIONS, len(options) - first)
        got = [ids_of(out[i]) for i in range(shown)]
        assert got == options[first:first + MAX_PAYMENT_OPTIONS], (hand, con, first)
        assert not out[shown:].any()
    bits = np.full(WORDS, -1, np.int64)
    value = shipment.cheapest_payment(tab, res, con_, bits)
    paid = shipping.payment(cat, hand, con)
    assert (ids_of(bits), value) == ((), -1) if paid is None else \
        (ids_of(bits), value) == (paid, sum(int(cat.value[c]) for c in paid)), (hand, con)
    assert paid is None or not options or options[0] == paid  # the cheapest payment is the first option
    return expected


# ---------------------------------------------------------------- hands from real games

def _played_positions(num_games: int, seed: int, cat=CAT):
    """(resources, contracts) at every step of random games: each seat's hand and ships, and (richer, so that
    shipments are often possible) two neighbouring seats' cards together; each distinct one once."""
    rng = np.random.default_rng(seed)
    seen = set()
    for g in range(num_games):
        game = Game.new(2 + g % 4, seed=seed * 1000 + g, cards=cat)
        while not game.is_over:
            n = game.num_players
            for p in range(n):
                for seats in ((p,), (p, (p + 1) % n)):
                    res = sorted(c for q in seats for c in game.hand(q) + game.ships(q))
                    if tuple(res) not in seen:  # a hand stays the same for many steps
                        seen.add(tuple(res))
                        yield res, [c for c in res if cat.kind[c] == cards.CONTRACT]
            game.step(int(rng.choice(game.legal_actions())))


def test_R_SHIP_7_kernels_match_the_reference_on_random_play():
    """Every seat's hand at every step of random games: single contracts and random sets of its contracts."""
    rng = random.Random(0)
    checked = feasible = 0
    for res, contracts in _played_positions(num_games=12, seed=1):
        if not contracts:
            continue
        out = np.zeros(len(contracts), np.int64)
        n = shipment.fulfillable(TAB, arr(res), arr(contracts), out)
        expected = [c for c in sorted(contracts) if shipping.can_fulfil(CAT, res, (c,))]
        assert out[:n].tolist() == expected
        pool = expected if len(expected) > 1 and rng.random() < 0.7 else contracts  # feasible sets often
        con = rng.sample(pool, rng.randint(1, min(4, len(pool))))
        feasible += check_feasible_and_options(CAT, TAB, res, con)
        checked += 1
    assert checked > 1000 and feasible > 300


def test_R_SHIP_6_addable_matches_can_fulfil_of_the_grown_shipment():
    """addable: the contracts that may join a staged shipment (the mask while one is pending)."""
    rng = random.Random(2)
    for res, contracts in _played_positions(num_games=4, seed=2):
        if len(contracts) < 2:
            continue
        pending = rng.sample(contracts, rng.randint(1, len(contracts) - 1))
        out = np.zeros(len(contracts), np.int64)
        n = shipment.addable(TAB, arr(res), np.array(pending, np.int64), arr(contracts), out)
        expected = [c for c in sorted(contracts)
                    if c not in pending and shipping.can_fulfil(CAT, res, pending + [c])]
        assert out[:n].tolist() == expected


# ---------------------------------------------------------------- hypothesis hands

SHIPMENT_CARDS = tuple(int(c) for c in np.flatnonzero(np.isin(CAT.kind, SHIPMENT_KINDS)))
CONTRACTS = tuple(int(c) for c in np.flatnonzero(CAT.kind == cards.CONTRACT))


@st.composite
def rich_hands(draw, cat=CAT, max_cards=20, max_contracts=5):
    """Many shipment cards at once (traders, captains and gold in numbers) and some contracts."""
    pool = tuple(int(c) for c in np.flatnonzero(np.isin(cat.kind, SHIPMENT_KINDS)))
    hand = draw(st.lists(st.sampled_from(pool), min_size=4, max_size=max_cards, unique=True))
    contracts = tuple(int(c) for c in np.flatnonzero(cat.kind == cards.CONTRACT))
    con = draw(st.lists(st.sampled_from(contracts), min_size=1, max_size=max_contracts, unique=True))
    return hand, con


@settings(derandomize=True, deadline=None, max_examples=600)
@given(hands(max_cards=14, max_contracts=4))
def test_R_SHIP_7_kernels_match_the_reference_on_planned_hands(case):
    hand, con = case
    check_feasible_and_options(CAT, TAB, hand, con)


@settings(derandomize=True, deadline=None, max_examples=300)
@given(rich_hands())
def test_R_SHIP_7_kernels_match_the_reference_on_rich_hands(case):
    hand, con = case
    check_feasible_and_options(CAT, TAB, hand, con)


def test_empty_shipment_has_one_empty_option():
    """payment.payment_options gives [()] for no contracts; feasible is True."""
    out = np.full((MAX_PAYMENT_OPTIONS, WORDS), 7, np.int64)
    res = arr(SHIPMENT_CARDS[:5])
    assert shipment.feasible(TAB, res, arr([]))
    assert shipment.payment_options(TAB, res, arr([]), out, 0) == 1
    assert not out.any()


def test_lex_order_puts_a_prefix_first():
    """The R-SHIP-7 tie-break compares sorted id lists as Python tuples: (1, 2) < (1, 2, 5) < (1, 3)."""
    def bits(*ids):
        b = np.zeros(WORDS, np.int64)
        for c in ids:
            b[c // 64] |= np.int64(1) << np.int64(c % 64)
        return b
    cases = [((1, 2), (1, 2, 5)), ((1, 2, 5), (1, 3)), ((63,), (64,)), ((0, 127), (0, 128)), ((5, 130), (5, 131))]
    for a, b in cases:
        assert shipment._lex_less(bits(*a), bits(*b)) and not shipment._lex_less(bits(*b), bits(*a))
    assert not shipment._lex_less(bits(3, 4), bits(3, 4))


# ---------------------------------------------------------------- custom catalogues

@pytest.fixture(scope="module")
def custom(tmp_path_factory):
    """test_shipping's custom catalogues, and catalogues of the fuzzer's mutations that load."""
    folder = tmp_path_factory.mktemp("vector_catalogues")
    found = {name: _write_catalogue(folder / f"{name}.csv", change)
             for name, change in (("values", _random_values), ("reshuffled", _reshuffled), ("id_tie", _id_tie))}
    rng, rows = random.Random(5), default_rows()
    while len(found) < 6:
        path = folder / f"fuzzed{len(found)}.csv"
        path.write_text(mutate_catalogue(rows, rng), encoding="utf-8", errors="surrogateescape")
        try:
            found[path.stem] = cards.load(path)
        except ValueError:
            continue
    return found


NAMES = ["values", "reshuffled", "id_tie", "fuzzed3", "fuzzed4", "fuzzed5"]


@pytest.mark.parametrize("name", NAMES)
def test_R_SHIP_7_kernels_match_the_reference_on_custom_catalogues(custom, name):
    """Random play of a custom catalogue: its card table, classes and values."""
    cat = custom[name]
    tab = tables.table(cat)
    rng = random.Random(name)
    checked = 0
    for res, contracts in _played_positions(num_games=2, seed=3, cat=cat):
        if contracts and rng.random() < 0.3:
            check_feasible_and_options(cat, tab, res, rng.sample(contracts, rng.randint(1, min(3, len(contracts)))))
            checked += 1
    assert checked > 50


@settings(derandomize=True, deadline=None, max_examples=300)
@given(st.sampled_from(NAMES), st.data())
def test_R_SHIP_7_kernels_match_the_reference_on_custom_rich_hands(custom, name, data):
    cat = custom[name]
    hand, con = data.draw(rich_hands(cat))
    check_feasible_and_options(cat, tables.table(cat), hand, con)


# ---------------------------------------------------------------- the cheapest payment and the final fulfilment

def check_best(cat, tab, hand, contracts):
    """best_fulfilment == shipping.best_fulfilment (R-SCORE-1): the contracts, their payment and the reward."""
    out_contracts, out_paid = np.full(WORDS, -1, np.int64), np.full(WORDS, -1, np.int64)
    reward = shipment.best_fulfilment(tab, arr(hand), arr(contracts), out_contracts, out_paid)
    chosen, paid = shipping.best_fulfilment(cat, hand, contracts)
    assert (ids_of(out_contracts), ids_of(out_paid)) == (chosen, paid), (hand, contracts)
    assert reward == sum(int(cat.reward[c]) for c in chosen)


def test_R_SCORE_1_best_fulfilment_matches_the_reference_on_random_play():
    """Every distinct hand of random games with contracts (and the pooled hands of two seats, holding more)."""
    checked = earned = 0
    for res, contracts in _played_positions(num_games=6, seed=4):
        if contracts:
            check_best(CAT, TAB, res, contracts)
            checked += 1
            earned += shipping.best_fulfilment(CAT, res, contracts)[0] != ()
    assert checked > 500 and earned > 100


@settings(derandomize=True, deadline=None, max_examples=300)
@given(hands(max_cards=14, max_contracts=4), st.lists(st.sampled_from(CONTRACTS), max_size=6, unique=True))
def test_R_SCORE_1_best_fulfilment_matches_the_reference_on_planned_hands(case, more):
    """Up to 10 contracts: shipping.best_fulfilment answers by subsets up to 6 and by units above."""
    hand, con = case
    check_best(CAT, TAB, hand, sorted(set(con) | set(more)))


@settings(derandomize=True, deadline=None, max_examples=150)
@given(st.sampled_from(["default"] + NAMES), st.data())
def test_R_SCORE_1_best_fulfilment_matches_the_reference_on_rich_hands(custom, name, data):
    cat = CAT if name == "default" else custom[name]
    hand, con = data.draw(rich_hands(cat, max_contracts=9))
    check_best(cat, tables.table(cat), hand, con)


def test_R_SCORE_1_best_fulfilment_gives_up_on_a_huge_search():
    """Every contract and every shipment card in one hand: millions of feasible subsets, so the kernel leaves it
    to shipping.best_fulfilment (GAVE_UP) with both bitsets cleared, instead of searching for seconds."""
    out_contracts, out_paid = np.full(WORDS, -1, np.int64), np.full(WORDS, -1, np.int64)
    found = shipment.best_fulfilment(TAB, arr(SHIPMENT_CARDS), arr(CONTRACTS), out_contracts, out_paid)
    assert found == shipment.GAVE_UP
    assert not out_contracts.any() and not out_paid.any()


def test_R_SCORE_1_no_contracts_earn_nothing():
    out_contracts, out_paid = np.full(WORDS, -1, np.int64), np.full(WORDS, -1, np.int64)
    assert shipment.best_fulfilment(TAB, arr(SHIPMENT_CARDS[:9]), arr([]), out_contracts, out_paid) == 0
    assert not out_contracts.any() and not out_paid.any()


# ---------------------------------------------------------------- cashing money (R-TAKE-4)

MONEY_CARDS = tuple(int(c) for c in np.flatnonzero(CAT.kind == cards.MONEY))
OTHER_CARDS = tuple(int(c) for c in np.flatnonzero(CAT.kind != cards.MONEY))


@settings(derandomize=True, deadline=None, max_examples=400)
@given(st.lists(st.sampled_from(MONEY_CARDS), max_size=12, unique=True),
       st.lists(st.sampled_from(OTHER_CARDS), max_size=4, unique=True), st.integers(1, 60))
def test_R_TAKE_4_cheapest_cover_matches_the_engine(money, others, shortfall):
    """Fewest money cards, then least total, then lowest ids; -1 when all of them fall short."""
    hand = sorted(money + others)
    out = np.full(WORDS, -1, np.int64)
    total = shipment.cheapest_cover(TAB, arr(hand), shortfall, out)
    if sum(int(CAT.money[c]) for c in money) < shortfall:
        assert total == -1 and not out.any()
        return
    expected = _cheapest_cover(CAT, hand, shortfall)
    assert ids_of(out) == tuple(expected)
    assert total == sum(int(CAT.money[c]) for c in expected)


def test_R_TAKE_4_cheapest_cover_on_a_custom_catalogue(custom):
    """Money values of a fuzzed catalogue, all hands of up to 8 of its money cards drawn at random."""
    rng = random.Random(9)
    for name in NAMES:
        cat = custom[name]
        tab = tables.table(cat)
        money = [int(c) for c in np.flatnonzero(cat.kind == cards.MONEY)]
        for _ in range(100):
            hand = sorted(rng.sample(money, rng.randint(1, 8)))
            shortfall = rng.randint(1, sum(int(cat.money[c]) for c in hand))
            out = np.zeros(WORDS, np.int64)
            total = shipment.cheapest_cover(tab, arr(hand), shortfall, out)
            expected = _cheapest_cover(cat, hand, shortfall)
            assert ids_of(out) == tuple(expected) and total == int(cat.money[expected].sum())
