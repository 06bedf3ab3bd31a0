"""Rule tests: taking a card (R-TAKE-1..5 of docs/rules.md)."""

import pytest

from packetrow_env import actions
from packetrow_env.engine import IllegalActionError
from packetrow_env.state import HAND, SHIPS
from packetrow_env.cards import BANK, DOCKS, GUILDHALL, MARKET
from tests.positions import CARDS, Position, place

PASS = actions.PASS
FUTURE = actions.TAKE_FUTURE


def take(slot):
    return actions.TAKE + slot


def asked_on(board, n=5, seat=1, seed=0, current=None, future=None, cash=None, hand=()):
    """A position where `seat` (not the HM) is asked on `board`; optional supplies, cash and extra hand cards."""
    pos = Position(n, seed=seed)
    pos.supply(board, current=current, future=future)
    if cash is not None:
        pos.cash(seat, cash)
    pos.hand(seat, *hand)
    return pos.turn("take", player=seat, chosen=[board], taken=range(1, seat))


# ------------------------------------------------------------------ R-TAKE-1
def test_R_TAKE_1_take_any_slot_of_the_current_supply():
    """R-TAKE-1: exactly one card from any slot; the slot is left empty, the others keep their places."""
    game = asked_on(MARKET, current=[80, 87, 94, 101]).game()
    assert [a for a in game.legal_actions() if a != PASS] == [take(0), take(1), take(2), take(3)]
    game.step(take(3))
    assert place(game, 101) == ("hand", 1)
    assert game.to_dict()["boards"][MARKET]["current"] == [80, 87, 94, None]
    assert game.current_player == 2
    with pytest.raises(IllegalActionError):
        game.step(take(3))  # an empty slot
    game.step(take(0))
    assert place(game, 80) == ("hand", 2)
    assert game.to_dict()["boards"][MARKET]["current"] == [None, 87, 94, None]


def test_R_TAKE_1_slots_beyond_the_supply_size_are_never_legal():
    """R-TAKE-1: with 2-3 players the current supply has 2 slots: take:2 and take:3 are never legal."""
    game = asked_on(MARKET, n=3, current=[80, 87]).game()
    assert game.legal_actions() == [take(0), take(1), PASS]


def test_R_TAKE_1_take_is_from_the_chosen_board_only():
    """R-TAKE-1: take:s means slot s of the chosen board; other boards' supplies are untouched."""
    pos = asked_on(DOCKS, current=[56, 57, 58, 59])
    pos.supply(MARKET, current=[80, 87, 94, 101])
    game = pos.game()
    game.step(take(1))
    assert place(game, 57) == ("hand", 1)
    assert game.to_dict()["boards"][MARKET]["current"] == [80, 87, 94, 101]


# ------------------------------------------------------------------ R-TAKE-2
def test_R_TAKE_2_future_supply_needs_an_assistant():
    """R-TAKE-2: without an assistant, assistant:0/1 are illegal."""
    game = asked_on(MARKET, current=[80, 87, 94, 101], future=[88, 95]).game()
    assert FUTURE not in game.legal_actions() and FUTURE + 1 not in game.legal_actions()
    with pytest.raises(IllegalActionError):
        game.step(FUTURE)


def test_R_TAKE_2_assistant_takes_a_future_card_and_the_lowest_assistant_is_discarded():
    """R-TAKE-2: with assistants 26 and 24, taking future slot 1 spends 24 (lowest id) to the guildhall discard."""
    game = asked_on(MARKET, current=[80, 87, 94, 101], future=[88, 95], hand=(26, 24)).game()
    assert {FUTURE, FUTURE + 1} <= set(game.legal_actions())
    game.step(FUTURE + 1)
    assert place(game, 95) == ("hand", 1)
    assert place(game, 24) == ("discard", GUILDHALL)
    assert place(game, 26) == ("hand", 1)
    board = game.to_dict()["boards"][MARKET]
    assert board["future"] == [88, None]
    assert board["current"] == [80, 87, 94, 101]
    assert game.current_player == 2


def test_R_TAKE_2_assistant_does_nothing_else():
    """R-TAKE-2: a normal take keeps the assistant; an assistant does not pay; empty future slots stay illegal."""
    game = asked_on(MARKET, current=[80, 87, 94, 101], future=[None, 95], cash=1, hand=(27,)).game()
    legal = game.legal_actions()
    assert FUTURE not in legal  # empty future slot
    assert FUTURE + 1 not in legal  # $2 fur, but only $1 cash: the assistant pays nothing
    assert take(0) not in legal
    game = asked_on(MARKET, current=[80, 87, 94, 101], future=[88, 95], hand=(27,)).game()
    game.step(take(0))
    assert place(game, 27) == ("hand", 1)
    assert game.state.cash[1] == 23


def test_R_TAKE_2_future_card_costs_its_price():
    """R-TAKE-2 + R-TAKE-3: a future card costs what it costs."""
    game = asked_on(MARKET, current=[80, 87, 94, 101], future=[85, 120], cash=12, hand=(24,)).game()
    legal = game.legal_actions()
    assert FUTURE in legal and FUTURE + 1 not in legal  # $10 grain yes, $18 university no
    game.step(FUTURE)
    assert game.state.cash[1] == 2


# ------------------------------------------------------------------ R-TAKE-3
# costs as printed in CARDS.md (not read from the catalogue)
COSTS = {
    0: 0, 24: 0, 29: 6, 32: 11, 34: 15, 36: 18,  # guildhall: contract, assistant, buildings
    38: 0, 56: 0, 61: 4, 66: 9, 71: 6, 74: 11, 76: 15, 78: 18,  # docks: ship, captain, gold, buildings
    80: 2, 83: 6, 85: 10, 94: 2, 99: 10, 104: 6, 108: 0, 113: 6, 116: 11, 118: 15, 120: 18,  # market
    122: 0, 142: 0, 146: 0, 151: 6, 154: 11, 156: 15, 158: 18,  # bank: money, banker, buildings
}


@pytest.mark.parametrize("card", sorted(COSTS))
def test_R_TAKE_3_cost_is_paid_to_the_general_supply(card):
    """R-TAKE-3: goods, gold and buildings cost their price; every other card is free. Nobody else is paid."""
    board = int(CARDS.board[card])
    game = asked_on(board, current=[card, None, None, None]).game()
    game.step(take(0))
    cash = game.state.cash[:5].tolist()
    assert cash[1] == 25 - COSTS[card]
    assert cash[:1] + cash[2:] == [25, 25, 25, 25]


# ------------------------------------------------------------------ R-TAKE-4
def test_R_TAKE_4_cash_plus_money_cards_must_cover_the_cost():
    """R-TAKE-4: $5 cash + a $4 money card pays $9 but not $10."""
    game = asked_on(MARKET, current=[85, 83, None, None], cash=5, hand=(136,)).game()
    assert game.legal_actions() == [take(1), PASS]
    with pytest.raises(IllegalActionError):
        game.step(take(0))
    game = asked_on(DOCKS, current=[66, None, None, None], cash=5, hand=(136,)).game()
    assert game.legal_actions() == [take(0), PASS]
    game.step(take(0))
    assert game.state.cash[1] == 0
    assert place(game, 136) == ("discard", BANK)


def test_R_TAKE_4_no_cashing_when_cash_suffices():
    """R-TAKE-4: money cards are cashed only if cash alone is short."""
    game = asked_on(MARKET, current=[85, None, None, None], cash=10, hand=(122, 142)).game()
    game.step(take(0))
    assert game.state.cash[1] == 0
    assert place(game, 122) == ("hand", 1) and place(game, 142) == ("hand", 1)


@pytest.mark.parametrize("cash, money, cost_card, cashed, cash_after", [
    # fewest cards first: $2+$5 (2 cards) rather than $2+$2+$2 (3 cards, exact); change $1 stays in cash
    (0, (122, 123, 124, 142), 83, (122, 142), 1),
    # among the fewest, the smallest total: shortfall $3 -> the $4 card, not the $5 one
    (3, (142, 136), 83, (136,), 1),
    # remaining ties by the sorted ids: {122,141} before {128,129} (both two cards, $6)
    (0, (128, 129, 141, 122), 83, (122, 141), 0),
    # equal values: the lowest ids
    (0, (137, 123, 136, 122), 83, (122, 136), 0),
    # one card enough: the smallest that covers ($3 for a $3 shortfall)
    (7, (142, 128, 136), 85, (128,), 0),
    # everything: $1 cash + $2 + $3 for $6
    (1, (122, 128), 83, (122, 128), 0),
])
def test_R_TAKE_4_money_cards_cashed_fewest_then_smallest_then_ids(cash, money, cost_card, cashed, cash_after):
    """R-TAKE-4: fewest cards covering the shortfall, then the smallest total, then sorted ids; cashed cards go to the
    bank discard pile, the change stays in cash."""
    game = asked_on(MARKET, current=[cost_card, None, None, None], cash=cash, hand=money).game()
    game.step(take(0))
    assert game.state.cash[1] == cash_after
    for c in money:
        assert place(game, c) == (("discard", BANK) if c in cashed else ("hand", 1)), c
    assert place(game, cost_card) == ("hand", 1)


def test_R_TAKE_4_cashing_for_an_assistant_take():
    """R-TAKE-4 with R-TAKE-2: paying for a future card cashes money cards the same way."""
    game = asked_on(MARKET, current=[80, None, None, None], future=[None, 85], cash=4, hand=(24, 142, 143, 136)).game()
    game.step(FUTURE + 1)
    # shortfall $6: no single card; two cards: 4+5=9 (136,142), (136,143) and 5+5=10 -> {136,142}
    assert game.state.cash[1] == 3
    assert place(game, 136) == ("discard", BANK) and place(game, 142) == ("discard", BANK)
    assert place(game, 143) == ("hand", 1)
    assert place(game, 24) == ("discard", GUILDHALL)


# ------------------------------------------------------------------ R-TAKE-5
def test_R_TAKE_5_ship_goes_face_up_other_cards_to_the_hand():
    """R-TAKE-5: a merchant ship lies in front of its owner (ships), every other card goes to the hidden hand."""
    game = asked_on(DOCKS, current=[44, 56, 61, None]).game()
    game.step(take(0))  # seat 1 takes the ship
    game.step(take(1))  # seat 2 takes the captain
    game.step(take(2))  # seat 3 takes the gold nugget
    assert game.ships(1) == [44] and 44 not in game.hand(1)
    assert game.state.location[44] == SHIPS + 1
    assert game.to_dict()["players"][1]["ships"] == [44]
    assert 56 in game.hand(2) and game.ships(2) == []
    assert game.state.location[56] == HAND + 2
    assert 61 in game.hand(3) and game.ships(3) == []
