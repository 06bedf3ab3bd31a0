"""Determinization (docs/design.md "The engine", docs/rules.md R-INFO-1..3):
``Game.sample_determinization(observer, rng)``.

A sample is a full game that agrees with everything the observer knows (R-INFO-1, R-INFO-3) and
re-deals the rest uniformly: each board's deck order and, with two players, which of its cards were
removed unseen (R-SETUP-3); the starting contracts opponents still hold together with the ones left
out of the game (R-SETUP-5).
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packetrow_env import cards
from packetrow_env.engine import Game
from packetrow_env.cards import DOCKS, GUILDHALL, MARKET
from tests.positions import CARDS, Position, random_play

PUBLIC_KEYS = ("version", "num_players", "round", "harbour_master", "current_player", "phase", "current_board",
               "chosen_boards", "pending_shipment", "history")
ALPHA_CRITICAL_P = 0.001


# ---------------------------------------------------------------- helpers

def _sample(game: Game, observer, rng, mode: str = "tracked") -> Game:
    return game.sample_determinization(observer, rng, mode)


def position(n: int, seed: int, steps: int) -> Game:
    return random_play(Game.new(n, seed=seed), steps, seed + 1000)


def hidden_seats(d: dict, observer: int) -> list[int]:
    """Opponents whose starting contract the observer cannot see: still in hand and not staged for shipping."""
    return [p for p, row in enumerate(d["players"]) if p != observer and row["starting_contract"] in row["hand"]
            and row["starting_contract"] not in d["pending_shipment"]]


def removed_of(d: dict, board: int) -> list[int]:
    """The removed cards of a board (board 4: the starting contracts)."""
    return sorted(c for c in d["removed"] if CARDS.board[c] == board)


def assert_consistent(original: Game, determinized: Game, observer: int):
    """The sample agrees with everything ``observer`` knows and differs only where he cannot see (R-INFO)."""
    d0, d1 = original.to_dict(), determinized.to_dict()
    for key in PUBLIC_KEYS:
        assert d1[key] == d0[key], key
    for b in range(4):
        b0, b1 = d0["boards"][b], d1["boards"][b]
        for key in ("discard", "current", "future", "exhausted"):  # R-INFO-1: public
            assert b1[key] == b0[key], (b, key)
        assert len(b1["deck"]) == len(b0["deck"]), b  # deck sizes are known
        assert len(removed_of(d1, b)) == len(removed_of(d0, b)), b  # and so is the number removed (R-SETUP-3)
        assert sorted(b1["deck"] + removed_of(d1, b)) == sorted(b0["deck"] + removed_of(d0, b)), b
        assert all(CARDS.board[c] == b for c in b1["deck"])  # R-COMP-2: own board only
    hidden = hidden_seats(d0, observer)
    assert hidden_seats(d1, observer) == hidden
    pool0 = sorted([d0["players"][p]["starting_contract"] for p in hidden] + removed_of(d0, cards.START))
    pool1 = sorted([d1["players"][p]["starting_contract"] for p in hidden] + removed_of(d1, cards.START))
    assert pool1 == pool0
    assert len(removed_of(d1, cards.START)) == len(removed_of(d0, cards.START))
    for p, (r0, r1) in enumerate(zip(d0["players"], d1["players"])):
        for key in ("cash", "ships", "has_piece"):
            assert r1[key] == r0[key], (p, key)
        if p in hidden:  # R-INFO-3: the hand is known but for the starting contract
            assert r1["starting_contract"] in r1["hand"]
            assert CARDS.board[r1["starting_contract"]] == cards.START
            assert set(r1["hand"]) - {r1["starting_contract"]} == set(r0["hand"]) - {r0["starting_contract"]}
        else:  # his own hand, or an opponent whose starting contract was shipped or is being shipped
            assert r1["hand"] == r0["hand"], p
            assert r1["starting_contract"] == r0["starting_contract"], p
    assert d1["rng"] != d0["rng"]  # a fresh generator: the true one decides shuffles (hidden)
    rebuilt = Game.from_dict(d1)  # every card exactly once, everything validated
    assert rebuilt.to_dict() == d1
    return rebuilt


def play_out_in_lockstep(determinized: Game, rebuilt: Game, seed: int):
    """Play the sample to the end; its cached masks and hands match a game rebuilt from scratch at every step."""
    rng = np.random.default_rng(seed)
    while not determinized.is_over:
        assert np.array_equal(determinized.legal_action_mask(), rebuilt.legal_action_mask())
        p = determinized.current_player
        assert determinized.hand(p) == rebuilt.hand(p)
        action = int(rng.choice(determinized.legal_actions()))
        determinized.step(action)
        rebuilt.step(action)
    assert rebuilt.is_over
    assert determinized.scores() == rebuilt.scores()


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with ``df`` degrees of freedom (series of the lower incomplete gamma)."""
    a, z = df / 2.0, x / 2.0
    term = total = 1.0 / a
    k = 0
    while term > total * 1e-15:
        k += 1
        term *= z / (a + k)
        total += term
    lower = math.exp(a * math.log(z) - z - math.lgamma(a)) * total
    return max(0.0, 1.0 - lower)


def chi2_statistic(observed: Counter, expected: dict) -> float:
    assert set(observed) <= set(expected), set(observed) - set(expected)
    return sum((observed.get(k, 0) - e) ** 2 / e for k, e in expected.items())


def assert_uniform(observed: Counter, probabilities: dict):
    """A chi-square goodness-of-fit test at alpha = 0.001 (fixed seeds make it deterministic)."""
    total = sum(observed.values())
    expected = {k: p * total for k, p in probabilities.items()}
    assert min(expected.values()) >= 5, "too few samples for a chi-square test"
    statistic = chi2_statistic(observed, expected)
    p_value = chi2_sf(statistic, len(expected) - 1)
    assert p_value > ALPHA_CRITICAL_P, f"chi-square {statistic:.1f} with {len(expected) - 1} df, p = {p_value:.2g}"


# ---------------------------------------------------------------- consistency

@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("steps", [0, 7, 40, 110, 10_000])
def test_R_INFO_sample_agrees_with_what_the_observer_knows_and_plays_to_the_end(n, steps):
    """R-INFO-1..3: public state, own hand, opponents' hands but the starting contracts are kept; the sample is a
    valid saved game (every card once) and plays on to the end with caches matching a rebuilt game."""
    original = position(n, seed=10 * n + steps % 97, steps=steps)
    before = original.to_dict()
    rng = np.random.default_rng(steps + n)
    for observer in range(n):
        determinized = original.sample_determinization(observer, rng)
        rebuilt = assert_consistent(original, determinized, observer)
        play_out_in_lockstep(determinized, rebuilt, seed=observer)
    assert original.to_dict() == before


@settings(max_examples=40, deadline=None, derandomize=True)
@given(n=st.integers(2, 5), seed=st.integers(0, 10_000), steps=st.integers(0, 200), observer=st.integers(0, 4),
       sample_seed=st.integers(0, 2 ** 32 - 1))
def test_R_INFO_sample_is_consistent_in_random_positions(n, seed, steps, observer, sample_seed):
    """R-INFO-3, property: any position, any seat: a consistent, valid sample; the original untouched."""
    observer %= n
    original = position(n, seed, steps)
    original.legal_action_mask()  # fill the caches the sample copies
    before = original.to_dict()
    determinized = _sample(original, observer, np.random.default_rng(sample_seed))
    assert_consistent(original, determinized, observer)
    assert original.to_dict() == before


def test_R_INFO_3_a_shipped_starting_contract_is_known():
    """R-INFO-1: a starting contract shipped lies face up in the guildhall discard pile: never re-dealt."""
    pos = Position(4, seed=5)
    shipped = pos.data["players"][2]["starting_contract"]
    pos.discard(GUILDHALL, shipped)
    original = pos.game()
    rng = np.random.default_rng(0)
    seen = Counter()
    for _ in range(200):
        determinized = original.sample_determinization(0, rng)
        assert_consistent(original, determinized, 0)
        d = determinized.to_dict()
        assert d["players"][2]["starting_contract"] == shipped
        assert shipped in d["boards"][GUILDHALL]["discard"]
        seen[d["players"][1]["starting_contract"]] += 1
    assert shipped not in seen and len(seen) > 5


def test_R_INFO_1_a_starting_contract_in_the_pending_shipment_is_known():
    """R-INFO-1: the contracts an opponent stages for shipping are named by his actions: his starting contract
    in the pending shipment stays his, and the pending shipment stays valid."""
    pos = Position(4, seed=6)
    start = pos.data["players"][1]["starting_contract"]
    good, destination = int(CARDS.good[start]), int(CARDS.destination[start])
    goods = [int(c) for c in np.flatnonzero((CARDS.kind == cards.GOODS_KIND) & (CARDS.good == good))]
    ship = int(np.flatnonzero((CARDS.kind == cards.SHIP) & (CARDS.destination == destination))[0])
    pos.hand(1, *goods).ships(1, ship)
    pos.turn("take", player=1, board=MARKET, chosen=[MARKET])
    pos.data["pending_shipment"] = [start]
    original = pos.game()
    rng = np.random.default_rng(1)
    others = Counter()
    for i in range(200):
        determinized = original.sample_determinization(0, rng)
        rebuilt = assert_consistent(original, determinized, 0)
        assert determinized.state.starting_contract[1] == start
        others[int(determinized.state.starting_contract[2])] += 1
        if i < 20:
            play_out_in_lockstep(determinized, rebuilt, seed=i)
    assert len(others) > 5 and start not in others


# ---------------------------------------------------------------- what varies and what does not

def test_R_INFO_2_hidden_cards_vary_and_known_cards_never_move():
    """R-INFO-2: deck orders, the cards removed in a two-player game and opponents' starting contracts vary
    between samples; the observer's own hand and starting contract never do."""
    for n, steps in ((2, 30), (4, 25)):
        original = position(n, seed=3, steps=steps)
        d0 = original.to_dict()
        rng = np.random.default_rng(7)
        decks = [set() for _ in range(4)]
        removed = set()
        starts = [set() for _ in range(n)]
        for _ in range(300):
            d = original.sample_determinization(0, rng).to_dict()
            for b in range(4):
                decks[b].add(tuple(d["boards"][b]["deck"]))
            removed.add(tuple(d["removed"]))
            for p in range(n):
                starts[p].add(d["players"][p]["starting_contract"])
            assert d["players"][0]["hand"] == d0["players"][0]["hand"]
        for b in range(4):
            if len(d0["boards"][b]["deck"]) > 1:
                assert len(decks[b]) > 250, (n, b)  # near 300: deck orders rarely repeat
        assert len(removed) > 100  # n = 4: 8 of 11 starting contracts, 165 possible sets
        assert starts[0] == {d0["players"][0]["starting_contract"]}
        hidden = hidden_seats(d0, 0)
        pool = {d0["players"][p]["starting_contract"] for p in hidden} | set(removed_of(d0, cards.START))
        for p in hidden:
            assert starts[p] == pool  # each unseen starting contract turns up in every hidden seat


def test_R_SETUP_3_two_player_removed_cards_are_redealt_within_their_board():
    """R-SETUP-3, R-COMP-2: in a two-player game each board's six removed cards come back as six of that board."""
    original = position(2, seed=11, steps=0)
    rng = np.random.default_rng(3)
    moved_out = Counter()
    for _ in range(200):
        d = original.sample_determinization(1, rng).to_dict()
        for b in range(4):
            assert len(removed_of(d, b)) == 6
        for c in d["removed"]:
            moved_out[c] += 1
    dealt_now = {c for b in original.to_dict()["boards"] for c in b["deck"]}
    assert any(c in dealt_now for c in moved_out)  # deck cards can be the removed ones in a sample


# ---------------------------------------------------------------- uniformity

def test_chi2_sf_matches_tables():
    """The chi-square tail used below, against tabulated critical values at alpha = 0.001 and 0.05."""
    for df, critical, alpha in ((1, 10.828, 0.001), (10, 29.588, 0.001), (23, 49.728, 0.001), (32, 62.487, 0.001),
                                (3, 7.815, 0.05), (40, 55.758, 0.05)):
        assert chi2_sf(critical, df) == pytest.approx(alpha, rel=2e-3)


def test_uniform_starting_contracts_among_opponents_and_the_removed():
    """R-SETUP-5 re-dealt: which hidden contract seat 1 holds is uniform over the 11 unseen ones, and seat 2's true
    contract lands with seat 1, 2, 3 or out of the game with probabilities 1/11, 1/11, 1/11, 8/11."""
    original = Game.new(4, seed=21)
    d0 = original.to_dict()
    pool = [d0["players"][p]["starting_contract"] for p in (1, 2, 3)] + removed_of(d0, cards.START)
    tracked = d0["players"][2]["starting_contract"]
    rng = np.random.default_rng(2024)
    held_by_1, where = Counter(), Counter()
    for _ in range(4400):
        starting = _sample(original, 0, rng).state.starting_contract[:4].tolist()
        held_by_1[starting[1]] += 1
        where[starting.index(tracked) if tracked in starting else "removed"] += 1
    assert_uniform(held_by_1, {c: 1 / 11 for c in pool})
    assert_uniform(where, {1: 1 / 11, 2: 1 / 11, 3: 1 / 11, "removed": 8 / 11})


def test_uniform_deck_position_with_two_player_removal():
    """R-SETUP-3 re-dealt: the docks' top card lands on each deck position with probability 1/38 and among the
    removed cards with probability 6/38 (32 deck positions + 6 removed slots)."""
    original = Game.new(2, seed=4)
    deck = original.to_dict()["boards"][DOCKS]["deck"]
    size = len(deck)
    assert size == 42 - 6 - 2 - 2
    tracked = deck[0]
    rng = np.random.default_rng(99)
    where = Counter()
    for _ in range(3800):
        s = _sample(original, 1, rng).state
        row = s.deck[DOCKS, s.deck_top[DOCKS]:s.deck_end[DOCKS]].tolist()
        where[row.index(tracked) if tracked in row else "removed"] += 1
    probabilities = {k: 1 / (size + 6) for k in range(size)}
    probabilities["removed"] = 6 / (size + 6)
    assert_uniform(where, probabilities)


def test_uniform_joint_deck_order():
    """The permutation itself is uniform, not just each card's position: all 24 orders of a 4-card deck."""
    pos = Position(4, seed=8)
    pool = pos.data["boards"][MARKET]["deck"][:4]
    pos.deck(MARKET, pool)
    original = pos.game()
    rng = np.random.default_rng(5)
    orders = Counter()
    for _ in range(2400):
        s = _sample(original, 2, rng).state
        orders[tuple(s.deck[MARKET, s.deck_top[MARKET]:s.deck_end[MARKET]].tolist())] += 1
    assert_uniform(orders, {order: 1 / 24 for order in permutations(pool)})


# ---------------------------------------------------------------- determinism, independence, errors

def test_same_rng_state_same_sample_and_different_states_differ():
    """Deterministic for a given generator state; different states give different samples."""
    original = position(3, seed=2, steps=20)
    a = _sample(original, 1, np.random.default_rng(42)).to_dict()
    b = _sample(original, 1, np.random.default_rng(42)).to_dict()
    assert a == b
    samples = [_sample(original, 1, np.random.default_rng(seed)).to_dict() for seed in range(20)]
    decks = {tuple(tuple(board["deck"]) for board in d["boards"]) for d in samples}
    assert len(decks) == 20
    assert len({str(d["rng"]) for d in samples}) == 20
    rng = np.random.default_rng(0)
    first, second = _sample(original, 1, rng).to_dict(), _sample(original, 1, rng).to_dict()
    assert first != second  # the generator moves on


def test_original_game_untouched_and_samples_independent():
    """The original (its state, generator and caches) is unchanged; samples share no state with it or each other."""
    original = position(4, seed=9, steps=33)
    mask = original.legal_action_mask().copy()
    hands = [list(original.hand(p)) for p in range(4)]
    before = original.to_dict()
    rng = np.random.default_rng(1)
    first = original.sample_determinization(0, rng)
    second = original.sample_determinization(0, rng)
    assert original.to_dict() == before
    assert np.array_equal(original.legal_action_mask(), mask)
    assert [original.hand(p) for p in range(4)] == hands
    for game in (first, second):
        assert game.state.buffer is not original.state.buffer
        assert not np.shares_memory(game.state.buffer, original.state.buffer)
        assert game.state.rng_state != original.state.rng_state
        assert game.state.history is not original.state.history
    assert first.state.rng_state != second.state.rng_state
    first.step(first.legal_actions()[0])
    assert original.to_dict() == before
    assert second.to_dict()["history"] == before["history"]


@pytest.mark.parametrize("observer", [-1, 4, 7, 1.0, "0", True, None, [0]])
def test_invalid_observer_raises_value_error(observer):
    """The observer must be a seat 0..n-1; anything else is a ValueError naming what is allowed."""
    game = Game.new(4, seed=0)
    with pytest.raises(ValueError, match="observer must be a seat number"):
        game.sample_determinization(observer, np.random.default_rng(0))


def test_numpy_integer_observer_accepted():
    game = Game.new(3, seed=0)
    d = game.sample_determinization(np.int64(2), np.random.default_rng(0)).to_dict()
    assert d["players"][2]["hand"] == game.to_dict()["players"][2]["hand"]


def test_R_INFO_2_same_rng_same_sample_on_hidden_twins():
    """R-INFO-2: the sample depends only on what the observer knows, not on the true deck order or hidden contracts."""
    from tests.test_leaks import random_position, twins

    rng = np.random.default_rng(3)
    checked = 0
    for n in (2, 3, 4, 5):
        for seed in range(3):
            data = random_position(n, seed, steps=20 + 15 * seed)
            if data["phase"] == "over":
                continue
            seat = data["current_player"]
            expected = Game.from_dict(data).sample_determinization(seat, np.random.default_rng(7)).to_dict()
            for name, twin in twins(data, seat, rng):
                sample = Game.from_dict(twin).sample_determinization(seat, np.random.default_rng(7)).to_dict()
                assert sample == expected, name
                checked += 1
    assert checked >= 12


# ---------------------------------------------------------------- online mode (R-INFO-4)

@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(n=st.integers(2, 5), seed=st.integers(0, 2**31 - 1), steps=st.integers(0, 250), sample_seed=st.integers(0, 99))
def test_R_INFO_4_online_sample_keeps_each_decks_contents(n, seed, steps, sample_seed):
    """R-INFO-4: an online sample is consistent with the tracked knowledge, and each deck keeps its contents and each
    board its removed cards; only deck order and hidden starting contracts are re-dealt."""
    original = position(n, seed, steps)
    before = original.to_dict()
    observer = seed % n
    determinized = _sample(original, observer, np.random.default_rng(sample_seed), "online")
    assert original.to_dict() == before
    rebuilt = assert_consistent(original, determinized, observer)
    d0, d1 = before, rebuilt.to_dict()
    for b in range(4):
        assert sorted(d1["boards"][b]["deck"]) == sorted(d0["boards"][b]["deck"]), b
        assert removed_of(d1, b) == removed_of(d0, b), b


def test_R_INFO_4_online_sample_varies_the_deck_order():
    """R-INFO-4: online samples shuffle each deck (its order is unknown) and deal the hidden starting contracts."""
    original = position(2, 5, 12)
    decks, starts = set(), set()
    rng = np.random.default_rng(0)
    for _ in range(30):
        d = _sample(original, 0, rng, "online").to_dict()
        decks.add(tuple(tuple(b["deck"]) for b in d["boards"]))
        starts.add(d["players"][1]["starting_contract"])
        assert [sorted(b["deck"]) for b in d["boards"]] == [sorted(b["deck"]) for b in original.to_dict()["boards"]]
    assert len(decks) == 30
    assert len(starts) > 3  # one of the 11 starting contracts the observer has not seen


def test_R_INFO_4_online_and_tracked_samples_differ_only_in_what_online_knows():
    """With 2 players a tracked sample re-deals removed cards into the decks; an online one never does."""
    original = position(2, 9, 30)
    removed = [removed_of(original.to_dict(), b) for b in range(4)]
    rng = np.random.default_rng(1)
    tracked = [_sample(original, 1, rng).to_dict() for _ in range(10)]
    online = [_sample(original, 1, rng, "online").to_dict() for _ in range(10)]
    assert any(removed_of(d, b) != removed[b] for d in tracked for b in range(4))
    assert all(removed_of(d, b) == removed[b] for d in online for b in range(4))


def test_uniform_deck_order_online():
    """Online: the first card of a deck is uniform over the deck's cards (chi-square)."""
    original = position(2, 4, 0)
    deck = original.to_dict()["boards"][2]["deck"]
    rng = np.random.default_rng(11)
    observed = Counter(int(_sample(original, 0, rng, "online").state.deck_cards(2)[0]) for _ in range(60 * len(deck)))
    assert_uniform(observed, {c: 1 / len(deck) for c in deck})


def test_R_INFO_4_same_rng_same_online_sample_on_hidden_twins():
    """The online sample depends only on what the online observer knows (deck order, hidden starts: not)."""
    from tests.test_leaks import random_position, twins

    rng = np.random.default_rng(5)
    checked = 0
    for n in (2, 3, 4, 5):
        for seed in range(2):
            data = random_position(n, seed, steps=25 + 20 * seed)
            if data["phase"] == "over":
                continue
            seat = data["current_player"]
            expected = Game.from_dict(data).sample_determinization(seat, np.random.default_rng(7), "online").to_dict()
            for name, twin in twins(data, seat, rng, "online"):
                got = Game.from_dict(twin).sample_determinization(seat, np.random.default_rng(7), "online").to_dict()
                assert got == expected, name
                checked += 1
    assert checked >= 8


def test_full_mode_sample_is_the_position_and_table_mode_is_refused():
    original = position(3, 2, 40)
    d = _sample(original, 0, np.random.default_rng(0), "full").to_dict()
    d0 = original.to_dict()
    assert d["rng"] != d0["rng"]
    assert {k: v for k, v in d.items() if k != "rng"} == {k: v for k, v in d0.items() if k != "rng"}
    with pytest.raises(ValueError, match="table mode"):
        original.sample_determinization(0, np.random.default_rng(0), "table")
    with pytest.raises(ValueError, match="unknown observation mode"):
        original.sample_determinization(0, np.random.default_rng(0), "psychic")
