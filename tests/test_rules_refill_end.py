"""Rule tests: refilling at the end of a round (R-REFILL-1..4, R-VAR-2) and the game end (R-END-1..2)."""

import numpy as np
import pytest

from packetrow_env import actions
from packetrow_env.engine import Game
from packetrow_env.state import END_THRESHOLD
from packetrow_env.cards import BANK, DOCKS, GUILDHALL, MARKET
from tests.positions import Position, place

PASS = actions.PASS
FUTURE = actions.TAKE_FUTURE


def take(slot):
    return actions.TAKE + slot


def market_position(n=4, seed=0, deck=(95, 102, 81, 89, 96), current=(80, 87, 94), future=(101, 88)):
    """The market with known supplies and a known deck (top first); the rest of its deck is on its discard pile."""
    pos = Position(n, seed=seed)
    pos.supply(MARKET, current=list(current), future=list(future))
    return pos.deck(MARKET, list(deck))


def board(game, b):
    return game.to_dict()["boards"][b]


# ---------------------------------------------------------------- R-REFILL-1
def test_R_REFILL_1_discard_leftovers_move_future_draw_current_then_future():
    """R-REFILL-1: leftovers to the discard pile; future cards to current slots 0, 1; a draw fills the rest; 2 new
    future cards."""
    game = market_position().game()
    discard_before = board(game, MARKET)["discard"]
    game.step(MARKET)
    game.step(take(1))  # seat 1 takes 87
    game.step(PASS)
    game.step(PASS)
    game.step(take(0))  # the HM takes 80: the round ends
    market = board(game, MARKET)
    assert market["current"] == [101, 88, 95]
    assert market["future"] == [102, 81]
    assert market["deck"] == [89, 96]
    assert market["discard"] == sorted(discard_before + [94])
    assert not market["exhausted"]
    assert place(game, 87) == ("hand", 1) and place(game, 80) == ("hand", 0)


def test_R_REFILL_1_chosen_boards_refilled_in_board_order_each_from_its_own_deck():
    """R-REFILL-1: every chosen board is refilled (here bank then guildhall were chosen), each from its own deck."""
    pos = Position(3, seed=1)
    pos.supply(BANK, current=[146, 147], future=[122, 123]).deck(BANK, [124, 125, 126, 127])
    pos.supply(GUILDHALL, current=[0, 1], future=[2, 3]).deck(GUILDHALL, [4, 5, 6, 7])
    game = pos.game()
    for a in (BANK, PASS, PASS, PASS, GUILDHALL, PASS, PASS, take(1)):  # the HM takes contract 1
        game.step(a)
    assert game.state.round == 2
    assert board(game, BANK)["current"] == [122, 123] and board(game, BANK)["future"] == [124, 125]
    assert board(game, GUILDHALL)["current"] == [2, 3] and board(game, GUILDHALL)["future"] == [4, 5]
    assert place(game, 146) == ("discard", BANK) and place(game, 0) == ("discard", GUILDHALL)


def test_R_REFILL_1_empty_current_slots_are_last():
    """R-REFILL-1: with a short deck the filled slots come first, the empty ones last."""
    game = market_position(deck=()).game()  # 4 players: 3 slots, 2 future cards, no deck
    game.step(MARKET)
    for a in (PASS, PASS, PASS, PASS):
        game.step(a)
    game.step(GUILDHALL)
    game.step(take(0))  # seat 1 takes on the guildhall
    for a in (PASS, PASS, take(1)):
        game.step(a)
    market = board(game, MARKET)
    assert market["current"] == [101, 88, None]
    assert market["future"] == [None, None]


# ------------------------------------------------------------------ R-VAR-2
def test_R_VAR_2_assistant_emptied_future_slot_extra_draw():
    """R-VAR-2 / R-REFILL-1: an assistant took future slot 0: the remaining future card goes to current slot 0 and two
    cards are drawn so the current supply is full again."""
    pos = market_position()
    pos.hand(1, 24)
    game = pos.game()
    game.step(MARKET)
    game.step(FUTURE + 0)  # seat 1 takes 101 from the future supply
    assert board(game, MARKET)["future"] == [None, 88]
    game.step(PASS)  # seat 2
    game.step(PASS)  # seat 3
    game.step(PASS)  # the HM passes, then everybody passes everywhere else
    for b in (GUILDHALL, DOCKS, BANK):
        game.step(b)
        game.step(PASS)
        game.step(PASS)
        game.step(PASS)
    assert game.state.round == 2
    market = board(game, MARKET)
    assert market["current"] == [88, 95, 102]
    assert market["future"] == [81, 89]
    assert place(game, 101) == ("hand", 1) and place(game, 24) == ("discard", GUILDHALL)
    assert {80, 87, 94} <= set(market["discard"])


def test_R_VAR_2_both_future_slots_emptied_five_players():
    """R-VAR-2: two assistants emptied both future slots: the current supply (4 slots) is drawn from the deck."""
    pos = market_position(n=5, deck=(95, 102, 81, 89, 96, 103, 82), current=(80, 87, 94, 90))
    pos.hand(1, 24).hand(2, 25)
    game = pos.game()
    game.step(MARKET)
    game.step(FUTURE + 1)  # seat 1 takes 88
    game.step(FUTURE + 0)  # seat 2 takes 101
    game.step(PASS)
    game.step(PASS)
    game.step(take(3))  # the HM takes 90: the round ends
    market = board(game, MARKET)
    assert market["current"] == [95, 102, 81, 89]
    assert market["future"] == [96, 103]
    assert sorted(set(market["discard"]) & {80, 87, 94}) == [80, 87, 94]


# ---------------------------------------------------------------- R-REFILL-2
def test_R_REFILL_2_future_supply_short_is_not_exhausted():
    """R-REFILL-2: current supply full (2 future + 1 drawn) but the future supply empty: not exhausted."""
    game = market_position(deck=(95,)).game()
    for a in (MARKET, PASS, PASS, PASS, take(0)):
        game.step(a)
    market = board(game, MARKET)
    assert market["current"] == [101, 88, 95] and market["future"] == [None, None]
    assert not market["exhausted"]
    assert not game.is_over


def test_R_REFILL_2_current_short_is_exhausted_and_stays_exhausted_discards_never_reshuffled():
    """R-REFILL-2: current supply short after a refill: exhausted; chosen again later it stays exhausted; the discard
    pile is never shuffled back (5 players: one exhausted board does not end the game)."""
    game = market_position(n=5, deck=(95,), current=(80, 87, 94, 90)).game()
    for a in (MARKET, PASS, PASS, PASS, PASS, take(0)):
        game.step(a)
    market = board(game, MARKET)
    assert market["current"] == [101, 88, 95, None]
    assert market["exhausted"] and market["deck"] == [] and len(market["discard"]) > 20
    assert not game.is_over and game.state.round == 2
    discard = market["discard"]
    # round 2: seat 1 chooses the market again; the leftovers are discarded, nothing comes back from the discard pile
    for a in (MARKET, take(0), PASS, PASS, PASS, take(1)):
        game.step(a)
    market = board(game, MARKET)
    assert market["exhausted"]
    assert market["current"] == [None, None, None, None] and market["future"] == [None, None]
    assert market["discard"] == sorted(discard + [95])
    assert game.state.round == 3
    # round 3: the market cannot be chosen any more; it stays exhausted while other boards are played
    assert MARKET not in game.legal_actions()
    for a in (DOCKS, PASS, PASS, PASS, PASS, PASS, GUILDHALL, PASS, PASS, PASS, PASS, PASS, BANK, PASS, PASS, PASS,
              PASS, PASS):
        game.step(a)
    assert game.state.round == 4
    assert board(game, MARKET)["exhausted"]
    assert sum(b["exhausted"] for b in game.to_dict()["boards"]) == 1


# ---------------------------------------------------------------- R-REFILL-3
def test_R_REFILL_3_boards_not_chosen_are_untouched():
    """R-REFILL-3: only the chosen boards are refilled; the others keep supply, deck and discard pile."""
    game = Game.new(4, seed=3)
    before = game.to_dict()["boards"]
    for a in (DOCKS, PASS, PASS, PASS, take(0)):
        game.step(a)
    after = game.to_dict()["boards"]
    for b in (GUILDHALL, MARKET, BANK):
        assert after[b] == before[b]
    assert after[DOCKS] != before[DOCKS]


def test_R_REFILL_1_chosen_board_where_everybody_passed_is_refilled():
    """R-REFILL-1/3: a board chosen where everybody passed is refilled all the same (leftovers discarded)."""
    game = Game.new(3, seed=4)
    current = board(game, GUILDHALL)["current"]
    future = board(game, GUILDHALL)["future"]
    for a in (GUILDHALL, PASS, PASS, PASS, DOCKS, PASS, PASS, take(0)):
        game.step(a)
    guildhall = board(game, GUILDHALL)
    assert guildhall["current"] == future
    assert set(current) <= set(guildhall["discard"])


# ---------------------------------------------------------------- R-REFILL-4
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_R_REFILL_4_harbour_master_moves_left(n):
    """R-REFILL-4: after each round the HM token passes to seat HM+1 (wrapping), who chooses next."""
    pos = Position(n, seed=5)
    for p in range(n):
        pos.cash(p, 900 // n)  # plenty, within what a game can hand out
    game = pos.game()
    seen = []
    for _ in range(n + 1):
        hm = game.state.harbour_master
        seen.append(hm)
        game.step(game.legal_actions()[0])  # choose a board
        while game.current_player != hm:
            game.step(PASS)
        game.step(next(a for a in game.legal_actions() if actions.TAKE <= a < actions.PASS))  # the HM takes
        assert game.phase == "choose_board" and game.current_player == (hm + 1) % n
    assert seen == [i % n for i in range(n + 1)]
    assert game.state.round == n + 2


# ------------------------------------------------------------------- R-END-1
@pytest.mark.parametrize("n,already", [(n, k) for n in (2, 3, 4, 5) for k in (0, 1, 2)
                                       if k < {2: 1, 3: 1, 4: 2, 5: 3}[n]])  # more would have ended the game
def test_R_END_1_game_ends_when_exhausted_boards_reach_the_threshold(n, already):
    """R-END-1: thresholds 2->1, 3->1, 4->2, 5->3 exhausted boards, counted after the refills."""
    pos = Position(n, seed=6)
    for b in (GUILDHALL, DOCKS)[:already]:
        pos.exhausted(b)
    pos.supply(BANK, future=[None, None]).deck(BANK, [])  # the bank exhausts at this round's refill
    hm = 0
    pos.turn("take", board=BANK, chosen=[BANK], taken=[p for p in range(n) if p != hm])
    game = pos.game()
    game.step(PASS)
    assert board(game, BANK)["exhausted"]
    ends = already + 1 >= {2: 1, 3: 1, 4: 2, 5: 3}[n]
    assert END_THRESHOLD[n] == {2: 1, 3: 1, 4: 2, 5: 3}[n]
    assert game.is_over == ends
    if ends:
        assert game.phase == "over" and game.current_player is None
        assert not game.legal_action_mask().any()
        assert sum(row["winner"] for row in game.scores()) >= 1
    else:
        assert game.phase == "choose_board" and game.state.round == 2 and game.current_player == 1


def test_R_END_1_all_chosen_boards_refilled_before_the_end():
    """R-END-1: the game ends after the refills: the docks (chosen later, refilled after the exhausted guildhall) are
    refilled too, and the final scoring happens."""
    pos = Position(2, seed=7)
    pos.supply(GUILDHALL, future=[None, None]).deck(GUILDHALL, [])
    pos.supply(DOCKS, current=[56, 57], future=[58, 59]).deck(DOCKS, [60, 61, 62])
    game = pos.game()
    for a in (DOCKS, PASS, PASS, GUILDHALL, PASS):
        game.step(a)
    assert game.current_player == 0
    game.step(PASS)  # the HM passes; market and bank remain, so he chooses again
    game.step(MARKET)
    game.step(take(0))  # seat 1 takes: now everyone else has taken
    game.step(PASS)  # the HM passes: the round ends, the guildhall is exhausted, the game ends
    assert game.is_over
    assert board(game, GUILDHALL)["exhausted"]
    assert board(game, DOCKS)["current"] == [58, 59] and board(game, DOCKS)["future"] == [60, 61]
    assert board(game, BANK)["exhausted"] is False


def test_R_END_1_money_cards_cashed_and_scored_at_the_end():
    """R-END-1 + R-SCORE-1: the ended game is scored at once: money cards are cashed into cash."""
    pos = Position(3, seed=8).hand(2, 142, 122).last_round()
    game = pos.game()
    game.step(PASS)
    assert game.is_over
    assert game.state.cash[2] == 32
    assert place(game, 142) == ("discard", BANK) and place(game, 122) == ("discard", BANK)


# ------------------------------------------------------------------- R-END-2
def measure(game):
    boards = game.to_dict()["boards"]
    count = lambda row: sum(c is not None for c in row)  # noqa: E731
    return sum(3 * len(b["deck"]) + 2 * count(b["future"]) + count(b["current"]) for b in boards)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("random_start", [False, True])
def test_R_END_2_random_play_always_ends(n, random_start):
    """R-END-2: random play (shipping included) always ends, and is scored.

    Every round chooses a board holding a card and refills it, so the measure 3 * deck cards + 2 * future cards
    + current cards (over all boards) falls every round: leftovers leave, future cards move down, draws leave the deck.
    """
    for seed in range(3):
        game = Game.new(n, seed=100 * n + seed, random_start=random_start)
        rng = np.random.default_rng(seed)
        round_ = game.state.round
        potential = measure(game)
        steps = 0
        while not game.is_over:
            legal = game.legal_actions()
            assert legal, "a live game must offer a legal action"
            game.step(int(rng.choice(legal)))
            steps += 1
            assert steps < 5000
            if game.state.round != round_ and not game.is_over:
                left = measure(game)
                assert left < potential
                round_, potential = game.state.round, left
        exhausted = sum(b["exhausted"] for b in game.to_dict()["boards"])
        assert exhausted >= END_THRESHOLD[n]
        assert game.state.round <= 172
        scores = game.scores()
        assert len(scores) == n and any(row["winner"] for row in scores)
        assert all(place(game, c)[0] != "hand" for c in range(122, 146))  # money cards all cashed
