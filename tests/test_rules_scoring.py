"""Rule tests: shipping at the engine level (R-SHIP-6) and the final scoring (R-SCORE-1..4)."""

import pytest

from packetrow_env import actions
from packetrow_env.engine import IllegalActionError
from packetrow_env.cards import BANK, DOCKS, GUILDHALL, MARKET
from tests.positions import Position, place, add, take

PASS = actions.PASS
SHIP = actions.SHIP



def contract_actions(game):
    return [a for a in game.legal_actions() if actions.ADD_CONTRACT <= a < SHIP]


# ---------------------------------------------------------------- R-SHIP-6
def tobacco_position(seat=0, **turn):
    """Seat `seat` holds contract 20 (2 tobacco to the Netherlands, $15), a 2-tobacco card and a Netherlands ship."""
    pos = Position(4, seed=1)
    pos.starting_contract(seat, 160)  # 2 grain to Sweden: not fulfillable here
    pos.hand(seat, 20, 104).ships(seat, 44)
    return pos.turn(**turn) if turn else pos


def test_R_SHIP_6_add_contract_then_only_add_or_ship():
    """R-SHIP-6: in phase choose_board the HM may stage a feasible contract; while pending only add/ship are legal."""
    game = tobacco_position().game()
    assert game.legal_actions() == [0, 1, 2, 3, add(20)]
    assert SHIP not in game.legal_actions()  # nothing pending, nothing to ship
    game.step(add(20))
    assert game.to_dict()["pending_shipment"] == [20]
    assert game.legal_actions() == [SHIP]
    for illegal in (0, 3, PASS, add(20), add(160)):
        with pytest.raises(IllegalActionError):
            game.step(illegal)


def test_R_SHIP_6_ship_pays_discards_and_keeps_the_decision():
    """R-SHIP-6 + R-SHIP-1: shipping pays the reward, discards contract, goods and ship to their own boards'
    discard piles, and the player still has his decision (same player, same phase)."""
    game = tobacco_position().game()
    game.step(add(20))
    game.step(SHIP)
    assert game.state.cash[0] == 40
    assert place(game, 20) == ("discard", GUILDHALL)
    assert place(game, 104) == ("discard", MARKET)
    assert place(game, 44) == ("discard", DOCKS)
    assert game.to_dict()["pending_shipment"] == []
    assert game.current_player == 0 and game.phase == "choose_board"
    assert game.legal_actions() == [0, 1, 2, 3]
    assert game.state.round == 1


def test_R_SHIP_6_ship_in_phase_take_before_taking():
    """R-SHIP-6: an asked player ships, then takes (the shipment did not use his decision)."""
    game = tobacco_position(seat=2, phase="take", player=2, chosen=[MARKET], taken=[1]).game()
    assert add(20) in game.legal_actions() and take(0) in game.legal_actions()
    game.step(add(20))
    game.step(SHIP)
    assert game.current_player == 2 and game.phase == "take"
    assert game.state.cash[2] == 40
    game.step(take(0))
    assert game.current_player == 3


def test_R_SHIP_6_ship_in_phase_must_take():
    """R-SHIP-6: the HM in phase must_take (R-ROUND-5) may ship first; he must still take."""
    pos = tobacco_position(seat=0).turn("take", chosen=[MARKET], taken=[1, 2, 3])
    game = pos.game()
    game.step(GUILDHALL)
    assert game.phase == "must_take"
    game.step(add(20))
    assert game.legal_actions() == [SHIP]
    game.step(SHIP)
    assert game.phase == "must_take" and game.current_player == 0
    assert PASS not in game.legal_actions()
    assert [a for a in game.legal_actions() if a < PASS] == [take(0), take(1), take(2)]


def test_R_SHIP_6_starting_contract_goes_to_the_guildhall_discard():
    """R-SHIP-6 / CARDS.md: a shipped starting contract goes to the guildhall discard pile."""
    pos = Position(3, seed=2).starting_contract(1, 170)  # 2 tobacco to France, $15
    pos.hand(1, 101, 102).ships(1, 41).turn("take", player=1, chosen=[BANK])
    game = pos.game()
    assert contract_actions(game) == [add(170)]
    game.step(add(170))
    game.step(SHIP)
    assert place(game, 170) == ("discard", GUILDHALL)
    assert place(game, 101) == ("discard", MARKET) and place(game, 102) == ("discard", MARKET)
    assert place(game, 41) == ("discard", DOCKS)
    assert game.state.cash[1] == 40
    assert game.to_dict()["players"][1]["starting_contract"] == 170
    assert game.current_player == 1 and game.phase == "take"


def test_R_SHIP_6_add_legal_only_if_feasible_with_the_pending_set():
    """R-SHIP-6: two contracts each feasible alone but not together: after adding one, the other is not legal."""
    pos = Position(4, seed=3).starting_contract(0, 160)
    pos.hand(0, 20, 23, 104, 0).ships(0, 44, 53)  # 2 tobacco to NL, 2 tobacco to the Confederation; only 2 tobacco
    game = pos.game()
    assert contract_actions(game) == [add(20), add(23)]  # contract 0 (3 grain to GB) has neither grain nor ship
    game.step(add(23))
    assert game.legal_actions() == [SHIP]
    # with 2 more tobacco both fit in one shipment
    pos.hand(0, 105)
    game = pos.game()
    game.step(add(23))
    assert game.legal_actions() == [add(20), SHIP]
    game.step(add(20))
    assert game.legal_actions() == [SHIP]
    game.step(SHIP)
    assert game.state.cash[0] == 55
    assert game.hand(0) == [0, 160]
    assert game.ships(0) == []


def test_R_SHIP_6_no_contract_action_without_a_ship():
    """R-SHIP-6: without a ship (or without the goods) no contract can be staged."""
    game = Position(4, seed=4).starting_contract(0, 160).hand(0, 20, 104).game()
    assert contract_actions(game) == []
    game = Position(4, seed=4).starting_contract(0, 160).hand(0, 20).ships(0, 44).game()
    assert contract_actions(game) == []


def test_R_SHIP_6_captain_trader_gold_go_to_their_boards_discards():
    """R-SHIP-6 + R-SHIP-1: a trader (market), a captain and a gold nugget (docks) used in a shipment are discarded."""
    pos = Position(4, seed=5).starting_contract(1, 160)
    # 3 fur to France ($25): 1 fur + a 2-grain card traded to fur; a Sweden ship with a captain
    pos.hand(1, 13, 94, 83, 108, 56).ships(1, 47)
    # 2 grain to the Netherlands ($15): 1 grain + a single gold nugget, a Netherlands ship
    pos.hand(1, 2, 80, 61).ships(1, 44)
    game = pos.turn("take", player=1, chosen=[DOCKS]).game()
    assert contract_actions(game) == [add(2), add(13), add(160)]  # 160: 2 grain to Sweden, also feasible
    game.step(add(13))
    game.step(add(2))
    game.step(SHIP)
    assert game.state.cash[1] == 25 + 25 + 15
    for card, pile in ((13, GUILDHALL), (2, GUILDHALL), (94, MARKET), (83, MARKET), (108, MARKET), (80, MARKET),
                       (56, DOCKS), (47, DOCKS), (61, DOCKS), (44, DOCKS)):
        assert place(game, card) == ("discard", pile), card
    assert game.hand(1) == [160] and game.ships(1) == []
    assert game.current_player == 1 and game.phase == "take"


# ---------------------------------------------------------------- R-SCORE-1
def test_R_SCORE_1_final_fulfilment_of_the_best_set():
    """R-SCORE-1: at the end the set paying most is fulfilled: 3+3 tobacco for $25 + $25, not 4 for $35."""
    pos = Position(3, seed=6).starting_contract(1, 160)
    pos.hand(1, 22, 21, 18, 106, 107).ships(1, 50, 47, 38)  # Spain $35 (4), Sweden $25 (3), GB $25 (3)
    game = pos.last_round().game()
    game.step(PASS)
    assert game.is_over
    assert game.state.cash[1] == 75
    assert game.hand(1) == [22, 160] and game.ships(1) == [50]
    for card, pile in ((21, GUILDHALL), (18, GUILDHALL), (106, MARKET), (107, MARKET), (47, DOCKS), (38, DOCKS)):
        assert place(game, card) == ("discard", pile), card
    assert game.scores()[1]["cash"] == 75


def test_R_SCORE_1_every_player_fulfils_and_cashes_money_cards():
    """R-SCORE-1: every player (not only the one to act) fulfils his contracts, then cashes all his money cards."""
    pos = Position(4, seed=7)
    for seat in range(4):
        pos.starting_contract(seat, 160 + seat)  # 160, 161 grain; 162 grain; 163 cotton: none fulfillable below
    pos.hand(2, 20, 104, 130, 145).ships(2, 44)  # $15 contract, $3 and $5 money
    pos.hand(3, 136)  # $4 money
    game = pos.last_round().game()
    game.step(PASS)
    assert game.state.cash[:4].tolist() == [25, 25, 25 + 15 + 3 + 5, 29]
    for card in (130, 145, 136):
        assert place(game, card) == ("discard", BANK)
    assert place(game, 20) == ("discard", GUILDHALL)
    assert [row["cash"] for row in game.scores()] == [25, 25, 48, 29]


# ---------------------------------------------------------------- R-SCORE-2
@pytest.mark.parametrize("cash, money_vp", [(0, 0), (9, 0), (10, 1), (39, 3), (40, 4), (125, 12)])
def test_R_SCORE_2_one_vp_per_full_ten_dollars(cash, money_vp):
    """R-SCORE-2: cash // 10."""
    game = Position(2, seed=8).cash(1, cash).cash(0, 200).last_round().game()
    game.step(PASS)
    row = game.scores()[1]
    assert row["money_vp"] == money_vp and row["vp"] == money_vp and row["cash"] == cash


def test_R_SCORE_2_vp_is_buildings_plus_cash_plus_bankers():
    """R-SCORE-2: printed building VP (1/2/3/4) + cash // 10 + banker VP."""
    pos = Position(3, seed=9).cash(1, 39).cash(0, 12).cash(2, 30)
    pos.hand(1, 29, 74, 118, 158, 151, 146)  # church 1, town hall 2, library 3, university 4, church 1; a banker
    game = pos.last_round().game()
    game.step(PASS)
    row = game.scores()[1]
    assert row == {"vp": 11 + 3 + 2, "cash": 39, "building_vp": 11, "money_vp": 3, "banker_vp": 2, "winner": True}


# ---------------------------------------------------------------- R-SCORE-3
BANKERS = (146, 147, 148, 149, 150)


def final_scores(cash, bankers, seed=10, extra=None):
    """Scores of a game that ends now, with the given cash and number of bankers per seat."""
    n = len(cash)
    pos = Position(n, seed=seed)
    free = list(BANKERS)
    for seat in range(n):
        pos.cash(seat, cash[seat])
        pos.hand(seat, *[free.pop() for _ in range(bankers[seat])])
    if extra:
        extra(pos)
    game = pos.last_round().game()
    game.step(PASS)
    assert game.is_over
    return game.scores()


@pytest.mark.parametrize("cash, bankers, banker_vp", [
    ([30, 20], [1, 2], [2, 0]),
    ([30, 30], [1, 2], [2, 4]),
    ([20, 30], [2, 0], [0, 0]),
    ([40, 40, 30], [1, 2, 2], [2, 4, 0]),
    ([10, 20, 30], [2, 2, 1], [0, 0, 2]),  # no VP for second place with 3 players
    ([25, 25, 25], [1, 1, 3], [2, 2, 6]),
])
def test_R_SCORE_3_bankers_two_or_three_players(cash, bankers, banker_vp):
    """R-SCORE-3: 2-3 players: every player tied for the most cash scores 2 VP per banker, nobody else."""
    rows = final_scores(cash, bankers)
    assert [row["banker_vp"] for row in rows] == banker_vp
    assert [row["vp"] for row in rows] == [c // 10 + b for c, b in zip(cash, banker_vp)]


@pytest.mark.parametrize("cash, bankers, banker_vp", [
    ([50, 40, 30, 20], [1, 1, 1, 1], [3, 1, 0, 0]),
    ([50, 40, 40, 20], [1, 2, 1, 1], [3, 2, 1, 0]),  # every player tied for second scores
    ([50, 40, 40, 40], [1, 1, 1, 2], [3, 1, 1, 2]),
    ([50, 50, 40, 20], [1, 1, 1, 1], [3, 3, 0, 0]),  # several tie for most: nobody scores for second
    ([30, 30, 30, 30], [1, 1, 1, 2], [3, 3, 3, 6]),
    ([0, 10, 20, 30], [2, 2, 1, 0], [0, 0, 1, 0]),  # the leader has no banker; second still scores
    ([50, 40, 40, 40, 10], [1, 1, 1, 1, 1], [3, 1, 1, 1, 0]),
    ([20, 60, 20, 60, 60], [2, 1, 0, 1, 1], [0, 3, 0, 3, 3]),
    ([10, 60, 59, 0, 59], [1, 0, 2, 1, 1], [0, 0, 2, 0, 1]),
    ([5, 5, 5, 5, 5], [1, 1, 1, 1, 1], [3, 3, 3, 3, 3]),
])
def test_R_SCORE_3_bankers_four_or_five_players(cash, bankers, banker_vp):
    """R-SCORE-3: 4-5 players: most cash 3 VP per banker (all tied); a sole leader leaves 1 VP per banker to every
    player tied for second; with a tie for most nobody scores for second."""
    rows = final_scores(cash, bankers)
    assert [row["banker_vp"] for row in rows] == banker_vp
    assert [row["vp"] for row in rows] == [c // 10 + b for c, b in zip(cash, banker_vp)]


def test_R_SCORE_3_bankers_count_final_cash_after_fulfilment_and_cashing():
    """R-SCORE-3 after R-SCORE-1: the cash ranking is taken after the final fulfilment and money cashing."""
    def extra(pos):
        pos.starting_contract(2, 160)
        pos.hand(2, 20, 104).ships(2, 44)  # +$15 at the end: 30 -> 45, the most
        pos.hand(1, 142)  # +$5 at the end: 38 -> 43, second
    rows = final_scores([40, 38, 30, 20], [1, 1, 1, 1], extra=extra)
    assert [row["cash"] for row in rows] == [40, 43, 45, 20]
    assert [row["banker_vp"] for row in rows] == [0, 1, 3, 0]


# ---------------------------------------------------------------- R-SCORE-4
def test_R_SCORE_4_most_vp_wins_even_with_less_cash():
    """R-SCORE-4: most VP wins (buildings beat cash here)."""
    def extra(pos):
        pos.hand(0, 36, 37)  # two universities: 8 VP
    rows = final_scores([10, 60, 30], [0, 0, 0], extra=extra)
    assert [row["vp"] for row in rows] == [9, 6, 3]
    assert [row["winner"] for row in rows] == [True, False, False]


def test_R_SCORE_4_tie_broken_by_cash():
    """R-SCORE-4: equal VP: the tied player with more cash wins."""
    def extra(pos):
        pos.hand(0, 36)  # 4 VP
    rows = final_scores([19, 59, 30, 50], [0, 0, 0, 0], extra=extra)
    assert [row["vp"] for row in rows] == [5, 5, 3, 5]
    assert [row["winner"] for row in rows] == [False, True, False, False]


def test_R_SCORE_4_still_tied_share_the_win():
    """R-SCORE-4: equal VP and equal cash: they share the win."""
    def extra(pos):
        pos.hand(0, 29)  # church, 1 VP
        pos.hand(2, 71)  # church, 1 VP
    rows = final_scores([45, 45, 45, 50, 30], [0, 0, 0, 0, 0], extra=extra)
    assert [row["vp"] for row in rows] == [5, 4, 5, 5, 3]
    assert [row["winner"] for row in rows] == [False, False, False, True, False]
    rows = final_scores([55, 45, 55, 50, 30], [0, 0, 0, 0, 0], extra=extra)
    assert [row["vp"] for row in rows] == [6, 4, 6, 5, 3]
    assert [row["winner"] for row in rows] == [True, False, True, False, False]


def test_R_SCORE_4_banker_vp_count_for_the_win():
    """R-SCORE-4 with R-SCORE-3: banker VP are part of the VP that decide the winner."""
    rows = final_scores([30, 29], [0, 1])
    assert [row["vp"] for row in rows] == [3, 2]
    rows = final_scores([30, 30], [0, 1])
    assert [row["vp"] for row in rows] == [3, 5]
    assert [row["winner"] for row in rows] == [False, True]
