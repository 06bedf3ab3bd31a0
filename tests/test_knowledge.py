"""What a seat knows (packetrow_env.knowledge, R-INFO-1..4, R-VAR-1) and the scoring facts (packetrow_env.scoring)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packetrow_env import knowledge, scoring
from packetrow_env.cards import START, load
from packetrow_env.engine import Game
from packetrow_env.knowledge import MODES, UNKNOWN
from packetrow_env.state import DECK, HAND, REMOVED
from tests.positions import random_play

CARDS = load()
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None)


def play(n: int, seed: int, steps: int) -> Game:
    return random_play(Game.new(n, seed=seed), steps, seed)


positions = st.tuples(st.integers(2, 5), st.integers(0, 2**31 - 1), st.integers(0, 250))


@SETTINGS
@given(positions)
def test_R_INFO_known_locations_are_true_or_unknown(position):
    """In every mode a located card is where the observer thinks it is; full locates every card."""
    game = play(*position)
    s = game.state
    for observer in range(s.num_players):
        for mode in MODES:
            known = knowledge.known_locations(s, CARDS, observer, mode)
            located = known != UNKNOWN
            assert np.array_equal(known[located], s.location[located]), mode
            assert np.array_equal(np.flatnonzero(~located), knowledge.unseen(s, CARDS, observer, mode))
            own = s.location == HAND + observer
            assert located[own].all(), mode  # R-INFO-2: his own hand he knows
        assert (knowledge.known_locations(s, CARDS, observer, "full") == s.location).all()


@SETTINGS
@given(positions)
def test_R_INFO_4_online_is_tracked_plus_each_decks_contents(position):
    """R-INFO-4: online locates exactly what tracked does plus the deck cards and the removed board cards."""
    game = play(*position)
    s = game.state
    for observer in range(s.num_players):
        tracked = knowledge.known_locations(s, CARDS, observer, "tracked")
        online = knowledge.known_locations(s, CARDS, observer, "online")
        gained = np.flatnonzero(tracked != online)
        assert (tracked[gained] == UNKNOWN).all()
        in_deck = (s.location >= DECK) & (s.location < DECK + 4)
        removed_board = (s.location == REMOVED) & (CARDS.board != START)
        assert np.array_equal(gained, np.flatnonzero(in_deck | removed_board))
        assert (online[CARDS.start_contracts[s.location[CARDS.start_contracts] == REMOVED]] == UNKNOWN).all()
        contents = knowledge.deck_contents(s, "online")
        assert [sorted(c) for c in contents] == [sorted(s.deck_cards(b).tolist()) for b in range(4)]
        assert contents == knowledge.deck_contents(s, "full")
        assert knowledge.deck_contents(s, "tracked") is None and knowledge.deck_contents(s, "table") is None


@SETTINGS
@given(positions)
def test_R_VAR_1_online_hands_are_every_hand_but_the_starting_contract(position):
    """R-VAR-1: the online edition shows every player's hand except his (unshipped) starting contract; tracked knows
    the same hands; table none of the opponents'; full all."""
    game = play(*position)
    s = game.state
    n = s.num_players
    for observer in range(n):
        online = knowledge.known_hands(s, CARDS, observer, "online")
        assert online == knowledge.known_hands(s, CARDS, observer, "tracked")
        assert knowledge.known_hands(s, CARDS, observer, "full") == [game.hand(q) for q in range(n)]
        table = knowledge.known_hands(s, CARDS, observer, "table")
        for q in range(n):
            start = int(s.starting_contract[q])
            if q == observer:
                assert online[q] == table[q] == game.hand(q)
                continue
            assert table[q] is None
            staged = start in s.pending
            expected = [c for c in game.hand(q) if c != start or staged]
            assert online[q] == expected
        holds = knowledge.holds_starting_contract(s, CARDS, observer, "online")
        assert holds == [int(s.location[s.starting_contract[q]] == HAND + q) for q in range(n)]
        assert knowledge.holds_starting_contract(s, CARDS, observer, "table")[observer] == holds[observer]


def test_bad_mode_and_observer_are_value_errors():
    s = Game.new(3, seed=0).state
    with pytest.raises(ValueError, match="allowed: tracked, online, table, full"):
        knowledge.known_locations(s, CARDS, 0, "open")
    for bad in (3, -1, True, "1", None):
        with pytest.raises(ValueError, match="observer must be a seat number"):
            knowledge.known_locations(s, CARDS, bad, "tracked")


# ---------------------------------------------------------------- scoring facts
@pytest.mark.parametrize("cash, expected", [
    ([10, 10], [2, 2]), ([10, 3, 10], [2, 0, 2]), ([9, 10, 8], [0, 2, 0]),
    ([5, 9, 9, 1], [0, 3, 3, 0]), ([5, 9, 7, 1], [0, 3, 1, 0]), ([5, 9, 5, 5, 1], [1, 3, 1, 1, 0]),
])
def test_R_SCORE_3_banker_points(cash, expected):
    assert scoring.banker_points(cash) == expected


def test_R_SCORE_3_leader_banker_points():
    assert [scoring.leader_banker_points(n) for n in range(2, 6)] == [2, 2, 3, 3]


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3)), min_size=2, max_size=5))
def test_R_SCORE_4_rank_reward_is_the_mean_pairwise_result(keys):
    """The rank reward (+1 first .. -1 last, ties share) equals the mean over opponents of +1 / 0 / -1."""
    scores = [{"vp": vp, "cash": cash, "winner": False} for vp, cash in keys]
    n = len(keys)
    pairwise = [sum((keys[p] > keys[q]) - (keys[p] < keys[q]) for q in range(n) if q != p) / (n - 1)
                for p in range(n)]
    assert scoring.rank_rewards(scores) == pytest.approx(pairwise)
    assert scoring.final_rewards(scores, "rank") == scoring.rank_rewards(scores)
    assert sum(scoring.rank_rewards(scores)) == pytest.approx(0.0)


def test_clock_runs_from_one_to_zero():
    game = Game.new(4, seed=0)
    assert scoring.deck_left(game.state, game.cards) == pytest.approx(1.0 - 5 / 42, abs=0.2)
    assert scoring.time_left(game.state, game.cards, floor=0.1) == 1.0
    game = play(4, 0, 10_000)
    assert game.is_over and scoring.deck_left(game.state, game.cards) == 0.0
    assert scoring.time_left(game.state, game.cards, floor=0.15) == 0.15


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.integers(2, 5), st.integers(0, 2**31 - 1), st.integers(0, 400)), min_size=1, max_size=6),
       st.sampled_from([0.0, 0.15, 0.5]))
def test_the_batch_clock_equals_the_clock(positions, floor):
    """deck_left_batch and time_left_batch give deck_left's and time_left's float64 values, game by game."""
    games = [random_play(Game.new(n, seed=seed), steps, seed) for n, seed, steps in positions]
    top = np.array([g.state.deck_top for g in games], dtype=np.int16)
    end = np.array([g.state.deck_end for g in games], dtype=np.int16)
    counts = np.array([g.num_players for g in games], dtype=np.int8)
    cards = games[0].cards
    assert scoring.deck_left_batch(top, end, counts, cards).tolist() == [scoring.deck_left(g.state, cards)
                                                                         for g in games]
    assert scoring.time_left_batch(top, end, counts, cards, floor).tolist() == [
        scoring.time_left(g.state, cards, floor) for g in games]
