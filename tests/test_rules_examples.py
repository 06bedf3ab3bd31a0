"""Worked examples in the spirit of the rulebook's, built as positions and checked move by move.

Seats: Anna 0, Ben 1, Cedric 2, David 3 (and Eve 4 with five players). Anna is harbour master unless said otherwise.
"""

from packetrow_env import actions
from packetrow_env.cards import BANK, DOCKS, GUILDHALL, MARKET
from tests.positions import Position, place, add, take

ANNA, BEN, CEDRIC, DAVID, EVE = range(5)
PASS = actions.PASS
SHIP = actions.SHIP
FUTURE = actions.TAKE_FUTURE



def board(game, b):
    return game.to_dict()["boards"][b]


def test_example_1_a_four_player_round():
    """R-ROUND-1..6, R-REFILL: Anna chooses the market; Ben takes, Cedric passes, David takes, Anna passes and chooses
    the docks where Cedric takes; now everyone else has taken: Anna chooses the bank and must take there."""
    pos = Position(4, seed=21)
    pos.supply(MARKET, current=[80, 90, 99], future=[101, 106]).deck(MARKET, [81, 88, 95, 102])
    pos.supply(DOCKS, current=[44, 56, 61], future=[39, 57]).deck(DOCKS, [62, 40, 58, 63])
    pos.supply(BANK, current=[146, 122, 158], future=[128, 136]).deck(BANK, [123, 147, 129, 137])
    game = pos.game()
    guildhall_before = board(game, GUILDHALL)

    assert game.current_player == ANNA and game.legal_actions() == [GUILDHALL, DOCKS, MARKET, BANK]
    game.step(MARKET)  # Anna chooses the market
    assert game.current_player == BEN
    game.step(take(1))  # Ben takes 2 cotton for $6
    assert 90 in game.hand(BEN)
    assert game.state.cash[BEN] == 19
    assert game.current_player == CEDRIC
    game.step(PASS)  # Cedric passes
    assert game.current_player == DAVID
    game.step(take(2))  # David takes 3 fur for $10
    assert game.state.cash[DAVID] == 15
    assert game.current_player == ANNA
    assert game.legal_actions() == [take(0), PASS]  # Cedric still holds his piece: no board choice yet
    game.step(PASS)  # Anna passes ...
    assert game.phase == "choose_board" and game.current_player == ANNA
    assert game.legal_actions() == [GUILDHALL, DOCKS, BANK]
    game.step(DOCKS)  # ... and chooses the docks: Ben has taken, so Cedric is asked
    assert game.current_player == CEDRIC
    game.step(take(0))  # Cedric takes the ship to the Netherlands: it lies face up in front of him
    assert game.ships(CEDRIC) == [44] and 44 not in game.hand(CEDRIC)
    assert game.current_player == ANNA  # David has taken already: skipped

    # everyone else has taken (R-ROUND-5): take here, pass (ends the round), or choose a board and take there
    assert game.phase == "take"
    assert game.legal_actions() == [GUILDHALL, BANK, take(1), take(2), PASS]
    game.step(BANK)
    assert game.phase == "must_take"
    assert game.legal_actions() == [take(0), take(1), take(2)]
    game.step(take(0))  # Anna takes the banker: the round ends

    assert game.hand(ANNA) == sorted([146, game.to_dict()["players"][ANNA]["starting_contract"]])
    assert game.state.round == 2 and game.state.harbour_master == BEN and game.current_player == BEN
    # refills of the three chosen boards, in board order; the guildhall is untouched
    assert board(game, MARKET)["current"] == [101, 106, 81]
    assert board(game, MARKET)["future"] == [88, 95]
    assert place(game, 80) == ("discard", MARKET)
    assert board(game, DOCKS)["current"] == [39, 57, 62]
    assert board(game, DOCKS)["future"] == [40, 58]
    assert place(game, 56) == ("discard", DOCKS) and place(game, 61) == ("discard", DOCKS)
    assert board(game, BANK)["current"] == [128, 136, 123]
    assert place(game, 122) == ("discard", BANK) and place(game, 158) == ("discard", BANK)
    assert board(game, GUILDHALL) == guildhall_before
    assert all(row["has_piece"] for row in game.to_dict()["players"])


def test_example_2_annas_35_dollar_contract():
    """R-SHIP-1, R-SHIP-6: Anna's contract for 4 grain to France ($35) is met with 3 grain + 1 grain and a ship to
    France; she ships at the start of her turn and then still chooses a board."""
    pos = Position(4, seed=22).starting_contract(ANNA, 166)  # 2 fur to Sweden: not fulfillable here
    pos.hand(ANNA, 1, 85, 80).ships(ANNA, 41)
    game = pos.game()
    assert game.legal_actions() == [GUILDHALL, DOCKS, MARKET, BANK, add(1)]
    game.step(add(1))
    assert game.legal_actions() == [SHIP]
    game.step(SHIP)
    assert game.state.cash[ANNA] == 25 + 35
    assert place(game, 1) == ("discard", GUILDHALL)
    assert place(game, 85) == ("discard", MARKET) and place(game, 80) == ("discard", MARKET)
    assert place(game, 41) == ("discard", DOCKS)
    assert game.hand(ANNA) == [166] and game.ships(ANNA) == []
    assert game.phase == "choose_board" and game.current_player == ANNA
    assert game.legal_actions() == [GUILDHALL, DOCKS, MARKET, BANK]


def test_example_3_david_ships_three_contracts_for_65():
    """R-SHIP-2, R-SHIP-6: David ships 4 cotton to Great Britain ($35), his starting contract 2 tobacco to France ($15)
    and 2 tobacco to the Netherlands ($15) at once: the 3-tobacco card is split between the two tobacco contracts,
    one cotton unit of 3 + 2 cotton is lost; three ships for three destinations. Then he takes a card."""
    pos = Position(4, seed=23).starting_contract(DAVID, 170)
    pos.hand(DAVID, 6, 20, 106, 101, 92, 90).ships(DAVID, 38, 41, 44)
    pos.turn("take", player=DAVID, chosen=[MARKET])  # Ben and Cedric passed on the market
    game = pos.game()
    assert [a for a in game.legal_actions() if a >= actions.ADD_CONTRACT] == [add(6), add(20), add(170)]
    game.step(add(6))
    assert game.legal_actions() == [add(20), add(170), SHIP]
    game.step(add(170))
    assert game.legal_actions() == [add(20), SHIP]
    game.step(add(20))
    assert game.legal_actions() == [SHIP]
    assert game.to_dict()["pending_shipment"] == [6, 170, 20]
    game.step(SHIP)
    assert game.state.cash[DAVID] == 25 + 65
    for card in (6, 20, 170):
        assert place(game, card) == ("discard", GUILDHALL)
    for card in (106, 101, 92, 90):
        assert place(game, card) == ("discard", MARKET)
    for card in (38, 41, 44):
        assert place(game, card) == ("discard", DOCKS)
    assert game.hand(DAVID) == [] and game.ships(DAVID) == []
    assert game.current_player == DAVID and game.phase == "take"
    game.step(take(0))
    assert game.current_player == ANNA


def test_example_4_the_assistant():
    """R-TAKE-2, R-VAR-2: Ben uses his assistant to take 3 tobacco from the market's future supply; the assistant goes
    to the guildhall discard pile. At the refill the remaining future card moves to slot 0 and two cards are drawn."""
    pos = Position(4, seed=24)
    pos.supply(MARKET, current=[80, 87, 94], future=[106, 99]).deck(MARKET, [81, 88, 95, 102, 83])
    pos.hand(BEN, 25)
    game = pos.game()
    game.step(MARKET)
    assert game.current_player == BEN
    assert game.legal_actions() == [take(0), take(1), take(2), FUTURE, FUTURE + 1, PASS]
    game.step(FUTURE)  # 3 tobacco for $10
    assert 106 in game.hand(BEN) and 25 not in game.hand(BEN)
    assert place(game, 25) == ("discard", GUILDHALL)
    assert game.state.cash[BEN] == 15
    assert board(game, MARKET)["future"] == [None, 99]
    assert board(game, MARKET)["current"] == [80, 87, 94]
    assert FUTURE not in game.legal_actions()  # Cedric has no assistant
    game.step(take(0))  # Cedric
    game.step(PASS)  # David
    game.step(take(2))  # Anna takes: the round ends
    market = board(game, MARKET)
    assert market["current"] == [99, 81, 88]  # one future card + two drawn (one extra for the emptied future slot)
    assert market["future"] == [95, 102]
    assert market["deck"] == [83]
    assert place(game, 87) == ("discard", MARKET)
    assert not market["exhausted"]


def final_scores(cash, bankers):
    """Scores of a game that ends now with the given cash and numbers of bankers."""
    pos = Position(len(cash), seed=25)
    free = [146, 147, 148, 149, 150]
    for seat, amount in enumerate(cash):
        pos.cash(seat, amount).hand(seat, *[free.pop(0) for _ in range(bankers[seat])])
    game = pos.last_round().game()
    game.step(PASS)
    assert game.is_over
    return game.scores()


def test_example_5_bankers_two_and_three_players():
    """R-SCORE-3: with 2-3 players only the richest (all tied) score 2 VP per banker."""
    rows = final_scores([42, 42, 30], [1, 2, 2])  # Anna and Ben tie for the most; Cedric's bankers are worthless
    assert [r["banker_vp"] for r in rows] == [2, 4, 0]
    assert [r["vp"] for r in rows] == [6, 8, 3]
    assert [r["winner"] for r in rows] == [False, True, False]
    rows = final_scores([30, 31], [2, 0])  # Ben is richest but has no banker; Anna, second, scores nothing
    assert [r["banker_vp"] for r in rows] == [0, 0]
    assert [r["winner"] for r in rows] == [False, True]


def test_example_5_bankers_four_and_five_players():
    """R-SCORE-3: with 4-5 players the richest score 3 VP per banker; a sole richest leaves 1 VP per banker to every
    player tied for second; a tie for richest leaves nothing for second."""
    rows = final_scores([50, 40, 40, 30, 20], [1, 2, 1, 1, 0])  # Anna richest; Ben and Cedric tie for second
    assert [r["banker_vp"] for r in rows] == [3, 2, 1, 0, 0]
    assert [r["vp"] for r in rows] == [8, 6, 5, 3, 2]
    rows = final_scores([45, 45, 40, 10], [1, 2, 1, 1])  # Anna and Ben tie for richest: Cedric gets nothing
    assert [r["banker_vp"] for r in rows] == [3, 6, 0, 0]
    assert [r["vp"] for r in rows] == [7, 10, 4, 1]
    assert [r["winner"] for r in rows] == [False, True, False, False]
