"""Rule tests: a round (R-ROUND-1..6 of docs/rules.md)."""

import pytest

from packetrow_env import actions
from packetrow_env.engine import Game, IllegalActionError
from packetrow_env.cards import BANK, DOCKS, GUILDHALL, MARKET
from tests.positions import Position, place

PASS = actions.PASS


def take(slot):
    return actions.TAKE + slot


def choose_actions(game):
    return [a for a in game.legal_actions() if a < 4]


def play(game, *moves):
    """Apply moves; return the seat asked after each one (None once the game is over)."""
    seats = []
    for a in moves:
        game.step(a)
        seats.append(game.current_player)
    return seats


def empty_board(pos, board):
    """A board with nothing left: no deck, no supply (an exhausted board)."""
    n = len(pos.data["boards"][board]["current"])
    pos.supply(board, current=[None] * n, future=[None, None])
    return pos.deck(board, []).exhausted(board)


# ------------------------------------------------------------------ R-ROUND-1
def test_R_ROUND_1_hm_chooses_an_unchosen_board():
    """R-ROUND-1: the HM chooses; a board chosen this round cannot be chosen again."""
    game = Game.new(4, seed=1)
    assert game.phase == "choose_board" and game.current_player == 0
    assert game.legal_actions() == [0, 1, 2, 3]
    game.step(2)
    assert game.phase == "take" and game.state.current_board == 2
    assert game.to_dict()["chosen_boards"] == [2]
    play(game, PASS, PASS, PASS, PASS)  # everyone passes, the HM last
    assert game.phase == "choose_board" and game.current_player == 0
    assert choose_actions(game) == [0, 1, 3]
    with pytest.raises(IllegalActionError):
        game.step(2)
    game.step(0)
    assert game.to_dict()["chosen_boards"] == [2, 0]
    play(game, PASS, PASS, PASS, PASS)
    assert choose_actions(game) == [1, 3]


def test_R_ROUND_1_only_boards_with_a_card_in_current_or_future_supply():
    """R-ROUND-1: a board whose current and future supplies are empty cannot be chosen; one card suffices."""
    pos = Position(5, seed=2)
    empty_board(pos, GUILDHALL)
    pos.supply(MARKET, current=[108, None, None, None])  # one current card left on an exhausted board
    pos.exhausted(MARKET)
    game = pos.game()
    assert choose_actions(game) == [DOCKS, MARKET, BANK]
    with pytest.raises(IllegalActionError):
        game.step(GUILDHALL)
    game.step(MARKET)  # chosen although it holds a single card
    assert game.phase == "take" and game.state.current_board == MARKET


# ------------------------------------------------------------------ R-ROUND-2
def test_R_ROUND_2_players_asked_clockwise_from_left_of_hm_hm_last():
    """R-ROUND-2: with the HM at seat 2 of 4, seats 3, 0, 1 are asked, then the HM."""
    game = Position(4, seed=3).harbour_master(2).game()
    assert game.current_player == 2
    seats = play(game, MARKET, PASS, PASS, PASS)
    assert seats == [3, 0, 1, 2]
    assert game.phase == "take"  # the HM has his word too
    assert PASS in game.legal_actions()


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_R_ROUND_2_order_for_every_player_count_and_hm(n):
    """R-ROUND-2: for every HM seat, the order is HM+1, HM+2, ..., HM."""
    for hm in range(n):
        game = Position(n, seed=n).harbour_master(hm).game()
        seats = play(game, DOCKS, *[PASS] * (n - 1))
        assert [game.state.harbour_master] + seats[:-1] == [hm] + [(hm + i) % n for i in range(1, n)]
        assert seats[-1] == hm


def test_R_ROUND_2_players_who_took_are_skipped_on_later_boards():
    """R-ROUND-2: on the next board only players still holding their piece are asked (then the HM)."""
    pos = Position(5, seed=4).harbour_master(1)
    pos.supply(MARKET, current=[80, 87, 94, 101])  # four 1-unit goods, $2 each
    game = pos.game()
    seats = play(game, MARKET, take(0), PASS, take(1), PASS)
    # seat 2 takes, 3 passes, 4 takes, 0 passes, then the HM (1)
    assert seats == [2, 3, 4, 0, 1]
    game.step(PASS)  # the HM passes: he chooses again
    assert game.phase == "choose_board" and game.current_player == 1
    seats = play(game, DOCKS, PASS, PASS)
    assert seats == [3, 0, 1]  # 2 and 4 are skipped
    assert place(game, 80) == ("hand", 2) and place(game, 87) == ("hand", 4)


def test_R_ROUND_2_an_asked_player_may_take_or_pass_only():
    """R-ROUND-2: an asked player (not the HM) may take a card of the chosen board or pass; he never chooses a board."""
    game = Game.new(4, seed=5)
    game.step(BANK)
    legal = game.legal_actions()
    assert PASS in legal
    assert not any(a < 4 for a in legal)
    assert [a for a in legal if actions.TAKE <= a < actions.TAKE_FUTURE] == [take(0), take(1), take(2)]


# ------------------------------------------------------------------ R-ROUND-3
def test_R_ROUND_3_hm_taking_ends_the_round_at_once():
    """R-ROUND-3: the HM takes while others still hold their pieces: the round ends, no one else gets a card."""
    pos = Position(3, seed=6)
    pos.supply(MARKET, current=[80, 87])
    game = pos.game()
    hands = [game.hand(p) for p in range(3)]
    play(game, MARKET, PASS, PASS)
    assert game.current_player == 0
    game.step(take(1))
    assert place(game, 87) == ("hand", 0)
    assert game.state.round == 2
    assert game.phase == "choose_board"
    assert game.state.harbour_master == 1 and game.current_player == 1
    assert game.to_dict()["chosen_boards"] == []
    assert [game.hand(p) for p in (1, 2)] == hands[1:]
    assert all(row["has_piece"] for row in game.to_dict()["players"])


def test_R_ROUND_3_hm_taking_on_a_later_board_ends_the_round():
    """R-ROUND-3: also on the second board of the round."""
    game = Position(4, seed=7).game()
    play(game, GUILDHALL, take(0), PASS, PASS, PASS, DOCKS, PASS, PASS)
    assert game.current_player == 0 and game.phase == "take"
    game.step(take(2))
    assert game.state.round == 2 and game.state.harbour_master == 1


# ------------------------------------------------------------------ R-ROUND-4
def test_R_ROUND_4_hm_pass_leads_to_choosing_another_board():
    """R-ROUND-4: when the HM passes (others still hold pieces) he chooses another unchosen board."""
    game = Game.new(4, seed=8)
    play(game, DOCKS, PASS, take(0), PASS)
    assert game.current_player == 0
    assert not any(a < 4 for a in game.legal_actions())  # not the R-ROUND-5 case: no board choice yet
    game.step(PASS)
    assert game.phase == "choose_board" and game.current_player == 0
    assert game.state.round == 1
    assert game.legal_actions() == [GUILDHALL, MARKET, BANK]
    assert game.to_dict()["current_board"] is None


def test_R_ROUND_4_round_ends_when_no_board_can_be_chosen():
    """R-ROUND-4: the HM passes and no unchosen board holds a card: the round ends."""
    pos = Position(5, seed=9)
    empty_board(pos, GUILDHALL)
    empty_board(pos, DOCKS)  # two exhausted boards, below the 5-player threshold of 3
    game = pos.game()
    play(game, MARKET, PASS, PASS, PASS, PASS, PASS)
    assert game.legal_actions() == [BANK]
    play(game, BANK, PASS, PASS, PASS, PASS)
    assert game.current_player == 0 and PASS in game.legal_actions()
    game.step(PASS)
    assert not game.is_over
    assert game.state.round == 2 and game.state.harbour_master == 1
    assert game.phase == "choose_board"


def test_R_ROUND_4_pass_on_the_last_board_with_choosable_boards_left():
    """R-ROUND-4: passing on a third board still leads to choosing the fourth."""
    game = Game.new(3, seed=10)
    play(game, GUILDHALL, PASS, PASS, PASS, DOCKS, PASS, PASS, PASS, MARKET, PASS, PASS, PASS)
    assert game.phase == "choose_board" and game.legal_actions() == [BANK]
    play(game, BANK, PASS, PASS, PASS)
    assert game.state.round == 2 and game.state.harbour_master == 1


# ------------------------------------------------------------------ R-ROUND-5
def r_round_5_position(assistant=False, money=()):
    """4 players, the HM (seat 0) asked on the market after seats 1-3 all took a card this round.

    guildhall: an $18 university, a contract and an assistant (free); docks: buildings of $11-$18 and free
    future cards (a captain, a ship); market: two $10 goods; bank: only buildings of $11-$18. The HM has $10 cash.
    """
    pos = Position(4, seed=11)
    pos.supply(GUILDHALL, current=[36, 2, 25], future=[3, 26])
    pos.supply(DOCKS, current=[74, 76, 78], future=[56, 39])
    pos.supply(MARKET, current=[85, None, 86], future=[80, 118])
    pos.supply(BANK, current=[158, 156, 159], future=[157, 155])
    pos.cash(0, 10)
    if assistant:
        pos.hand(0, 24)
    pos.hand(0, *money)
    return pos.turn("take", chosen=[MARKET], taken=[1, 2, 3])


def test_R_ROUND_5_hm_options_when_everyone_else_has_taken():
    """R-ROUND-5: take here, pass, or choose an unchosen board where he can take a card (not docks: only its
    future cards are affordable and he has no assistant; not bank: nothing affordable)."""
    game = r_round_5_position().game()
    assert game.current_player == 0 and game.phase == "take"
    assert game.legal_actions() == [GUILDHALL, take(0), take(2), PASS]


def test_R_ROUND_5_assistant_and_money_cards_count_for_the_board_choice():
    """R-ROUND-5: with an assistant the docks (affordable future cards only) may be chosen; money cards make the
    bank affordable."""
    game = r_round_5_position(assistant=True).game()
    assert choose_actions(game) == [GUILDHALL, DOCKS]
    game = r_round_5_position(money=(142,)).game()  # $10 cash + a $5 money card covers the $15 libraries
    assert choose_actions(game) == [GUILDHALL, DOCKS, BANK]


def test_R_ROUND_5_pass_ends_the_round():
    """R-ROUND-5: the HM passes: the round ends although boards could still be chosen."""
    game = r_round_5_position().game()
    hand = game.hand(0)
    game.step(PASS)
    assert game.state.round == 2 and game.state.harbour_master == 1
    assert game.phase == "choose_board" and game.current_player == 1
    assert game.hand(0) == hand


def test_R_ROUND_5_hm_may_choose_board_and_must_take():
    """R-ROUND-5: choosing a board leads to phase must_take on it, where passing is illegal."""
    game = r_round_5_position().game()
    game.step(GUILDHALL)
    assert game.phase == "must_take" and game.current_player == 0
    assert game.state.current_board == GUILDHALL
    assert game.to_dict()["chosen_boards"] == [MARKET, GUILDHALL]
    assert game.legal_actions() == [take(1), take(2)]
    for illegal in (PASS, DOCKS, BANK, take(0), actions.TAKE_FUTURE):
        with pytest.raises(IllegalActionError):
            game.step(illegal)
    assert game.phase == "must_take"
    game.step(take(1))
    assert place(game, 2) == ("hand", 0)
    assert game.state.round == 2 and game.state.harbour_master == 1
    # both chosen boards were refilled: the market's leftovers and the guildhall's are discarded
    assert place(game, 85) == ("discard", MARKET)
    assert place(game, 25) == ("discard", GUILDHALL)


def test_R_ROUND_5_must_take_with_an_assistant_from_the_future_supply():
    """R-ROUND-5 + R-TAKE-2: after choosing the docks (only its future cards affordable) the HM must take a
    future card."""
    game = r_round_5_position(assistant=True).game()
    game.step(DOCKS)
    assert game.phase == "must_take"
    assert game.legal_actions() == [actions.TAKE_FUTURE, actions.TAKE_FUTURE + 1]
    game.step(actions.TAKE_FUTURE + 1)
    assert place(game, 39) == ("ships", 0)
    assert place(game, 24) == ("discard", GUILDHALL)
    assert game.state.round == 2


def test_R_ROUND_5_reached_by_play():
    """R-ROUND-5 in play: 2 players, seat 1 takes, the HM then sees the board choices."""
    game = Game.new(2, seed=12)
    play(game, BANK, take(0))
    assert game.current_player == 0 and game.phase == "take"
    assert {GUILDHALL, DOCKS, MARKET} & set(game.legal_actions())  # he can take on some other board
    assert BANK not in game.legal_actions()


# ------------------------------------------------------------------ R-ROUND-6
def test_R_ROUND_6_one_card_per_round_and_passers_get_nothing():
    """R-ROUND-6: a player who took is not asked again this round; players who passed everywhere get nothing."""
    pos = Position(4, seed=13)
    pos.supply(MARKET, current=[80, 87, 94])
    game = pos.game()
    before = [game.hand(p) + game.ships(p) for p in range(4)]
    seats = play(game, MARKET, take(0), PASS, PASS, PASS)
    assert seats == [1, 2, 3, 0, 0]
    assert not game.to_dict()["players"][1]["has_piece"]
    seats = play(game, DOCKS, PASS, PASS, PASS, GUILDHALL, PASS, PASS, PASS, BANK, PASS, PASS)
    assert 1 not in seats[:-1]  # seat 1 is never asked again
    assert seats[-1] == 0
    game.step(PASS)  # no board left: the round ends
    assert game.state.round == 2
    after = [game.hand(p) + game.ships(p) for p in range(4)]
    assert after[1] == sorted(before[1] + [80])
    assert after[0] == before[0] and after[2] == before[2] and after[3] == before[3]


def test_R_ROUND_6_piece_stays_on_the_slot_taken_from():
    """R-ROUND-6, docs/design.md "The engine": a taken slot stays empty for the rest of the round, the other slots
    keep their cards."""
    pos = Position(5, seed=14)
    pos.supply(MARKET, current=[80, 87, 94, 101])
    game = pos.game()
    play(game, MARKET, take(2), take(0))
    assert game.to_dict()["boards"][MARKET]["current"] == [None, 87, None, 101]
    assert [p["has_piece"] for p in game.to_dict()["players"]] == [True, False, False, True, True]
    assert game.legal_actions() == [take(1), take(3), PASS]
