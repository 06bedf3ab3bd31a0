"""Rule tests: components (R-COMP) and setup (R-SETUP) of docs/rules.md, and the engine's handling of bad actions."""

import json
from collections import Counter

import numpy as np
import pytest

from packetrow_env import actions, cards
from packetrow_env.engine import Game, IllegalActionError
from packetrow_env.state import CURRENT, DECK, FUTURE, HAND, REMOVED
from packetrow_env.cards import MARKET
from tests.positions import CARDS, Position, place

SUPPLY = {2: 2, 3: 2, 4: 3, 5: 4}
BOARD_SIZES = {"guildhall": 38, "docks": 42, "market": 42, "bank": 38}


def board_cards(d, b):
    """Every card a saved game shows on board b (deck, discard, supplies)."""
    board = d["boards"][b]
    return board["deck"] + board["discard"] + [c for c in board["current"] + board["future"] if c is not None]


# ------------------------------------------------------------------ R-COMP
def test_R_COMP_1_four_boards_in_fixed_order_each_with_deck_discard_and_supplies():
    """R-COMP-1: guildhall, docks, market, bank (0-3); each has a deck, a discard pile, a current and a 2-slot
    future supply."""
    assert cards.BOARDS == ("guildhall", "docks", "market", "bank")
    assert [actions.NAMES[b] for b in range(4)] == ["choose:guildhall", "choose:docks", "choose:market", "choose:bank"]
    d = Game.new(4, seed=3).to_dict()
    assert len(d["boards"]) == 4
    for b, board in enumerate(d["boards"]):
        assert set(board) >= {"deck", "discard", "current", "future", "exhausted"}
        assert len(board["future"]) == 2
        assert all(CARDS.board[c] == b for c in board_cards(d, b))
    # choosing board 2 plays the market: its current supply holds market cards
    game = Game.new(4, seed=3)
    game.step(2)
    assert game.state.current_board == 2
    assert all(CARDS.board[c] == 2 for c in game.state.current[2] if c >= 0)


def test_R_COMP_2_deck_contents():
    """R-COMP-2: 172 cards; per board the counts of each kind; 12 starting contracts never in a deck."""
    assert len(CARDS.kind) == 172
    expected = {
        "guildhall": {"contract": 24, "assistant": 5, "building": 9},
        "docks": {"ship": 18, "captain": 5, "gold": 10, "building": 9},
        "market": {"goods": 28, "trader": 5, "building": 9},
        "bank": {"money": 24, "banker": 5, "building": 9},
        "start": {"contract": 12},
    }
    for code, name in enumerate(cards.BOARD_CODES):
        on = np.flatnonzero(CARDS.board == code)
        assert Counter(cards.KINDS[k] for k in CARDS.kind[on]) == expected[name]
        if name in BOARD_SIZES:
            assert len(on) == BOARD_SIZES[name]
    ships = CARDS.kind == cards.SHIP
    assert Counter(CARDS.destination[ships].tolist()) == {d: 3 for d in range(6)}
    gold = CARDS.kind == cards.GOLD
    assert Counter(CARDS.quantity[gold].tolist()) == {1: 5, 2: 5}
    goods = CARDS.kind == cards.GOODS_KIND
    assert Counter(CARDS.good[goods].tolist()) == {g: 7 for g in range(4)}
    starts = CARDS.board == cards.START
    assert Counter(CARDS.good[starts].tolist()) == {g: 3 for g in range(4)}
    # in a dealt game every deck holds only its own board's cards, and no starting contract
    for n in range(2, 6):
        game = Game.new(n, seed=n)
        loc = game.state.location
        for b in range(4):
            in_deck = np.flatnonzero(loc == DECK + b)
            assert (CARDS.board[in_deck] == b).all()
        assert not np.isin(loc[CARDS.start_contracts], [DECK + b for b in range(4)]).any()
        d = game.to_dict()
        everything = sorted(sum((board_cards(d, b) for b in range(4)), []) + d["removed"]
                            + sum((p["hand"] + p["ships"] for p in d["players"]), []))
        assert everything == list(range(172))


def test_R_COMP_3_goods_and_destinations_order():
    """R-COMP-3: goods grain, cotton, fur, tobacco (0-3); six destinations in their fixed order (0-5)."""
    assert cards.GOODS == ("grain", "cotton", "fur", "tobacco")
    assert cards.DESTINATIONS == ("great_britain", "france", "netherlands", "sweden", "spain",
                                  "german_confederation")
    # the catalogue uses those indices: card 0 is 3 grain to Great Britain, card 23 is 2 tobacco to the Confederation
    assert (CARDS.good[0], CARDS.destination[0]) == (0, 0)
    assert (CARDS.good[23], CARDS.destination[23]) == (3, 5)
    assert CARDS.good[[80, 87, 94, 101]].tolist() == [0, 1, 2, 3]
    assert CARDS.destination[[38, 41, 44, 47, 50, 53]].tolist() == [0, 1, 2, 3, 4, 5]


def test_R_COMP_4_money_is_unlimited_and_cash_is_public():
    """R-COMP-4: rewards come from an unlimited general supply (nobody else pays); every player's cash is public."""
    pos = Position(3, seed=1).cash(0, 900).cash(1, 7).cash(2, 0)
    pos.starting_contract(0, 170)  # 2 tobacco to France, $15
    pos.hand(0, 104).ships(0, 41)
    game = pos.game()
    game.step(actions.ADD_CONTRACT + 24 + (170 - 160))
    game.step(actions.SHIP)
    d = game.to_dict()
    assert [p["cash"] for p in d["players"]] == [915, 7, 0]
    assert [row["cash"] for row in game.scores()] == [915, 7, 0]
    # a cost is paid to the general supply: nobody receives it
    game = Position(3, seed=1).supply(MARKET, current=[106, None]).turn("take", player=1, chosen=[MARKET]).game()
    game.step(actions.TAKE + 0)  # 3 tobacco for $10
    assert [p["cash"] for p in game.to_dict()["players"]] == [25, 15, 25]


# ----------------------------------------------------------------- R-SETUP
@pytest.mark.parametrize("bad", [0, 1, 6, 10, -2, 2.0, 4.5, "4", None, True])
def test_R_SETUP_1_player_count_outside_2_to_5_is_a_configuration_error(bad):
    """R-SETUP-1: any count but 2-5 (or a non-integer) raises a ValueError."""
    with pytest.raises(ValueError):
        Game.new(bad, seed=0)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_R_SETUP_1_seats_0_to_n_minus_1(n):
    """R-SETUP-1: seats 0..n-1, one row per seat."""
    game = Game.new(np.int64(n), seed=0)
    assert game.num_players == n
    assert len(game.to_dict()["players"]) == n
    assert game.current_player in range(n)


def test_R_SETUP_2_decks_are_shuffled_by_the_seeded_generator():
    """R-SETUP-2: the same seed deals the same game; different seeds deal different decks; decks are not in id order."""
    a = Game.new(4, seed=11).to_dict()
    b = Game.new(4, seed=11).to_dict()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    orders = {tuple(board_cards(Game.new(4, seed=s).to_dict(), 1)) for s in range(10)}
    assert len(orders) == 10
    for b in range(4):
        shown = board_cards(a, b)
        assert shown != sorted(shown)


def test_R_SETUP_3_two_players_remove_six_cards_per_deck_unseen():
    """R-SETUP-3: with two players the top 6 cards of each deck leave the game unseen; not so with 3-5."""
    for seed in range(5):
        d = Game.new(2, seed=seed).to_dict()
        removed = d["removed"]
        per_board = Counter(int(CARDS.board[c]) for c in removed)
        assert per_board == {0: 6, 1: 6, 2: 6, 3: 6, cards.START: 10}
        for b, name in enumerate(cards.BOARDS):
            board = d["boards"][b]
            assert len(board["deck"]) == BOARD_SIZES[name] - 6 - 2 - 2
            assert not set(removed) & set(board_cards(d, b))
    for n in (3, 4, 5):
        d = Game.new(n, seed=0).to_dict()
        assert all(CARDS.board[c] == cards.START for c in d["removed"])


def test_R_SETUP_3_removed_cards_stay_out_for_the_whole_game():
    """R-SETUP-3: the removed cards never reappear anywhere during a two-player game."""
    game = Game.new(2, seed=5)
    removed = np.flatnonzero(game.state.location == REMOVED)
    rng = np.random.default_rng(5)
    while not game.is_over:
        game.step(int(rng.choice(game.legal_actions())))
        assert (game.state.location[removed] == REMOVED).all()
    assert len(game.to_dict()["removed"]) == 6 * 4 + 10


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_R_SETUP_4_current_supply_size_by_player_count_and_two_future_cards(n):
    """R-SETUP-4: current supply 2/2/3/4 cards for 2/3/4/5 players, 2 future cards, on every board."""
    game = Game.new(n, seed=7)
    d = game.to_dict()
    for b, name in enumerate(cards.BOARDS):
        board = d["boards"][b]
        assert len(board["current"]) == SUPPLY[n]
        assert None not in board["current"] and None not in board["future"]
        assert len(board["future"]) == 2
        assert not board["exhausted"]
        removed = 6 if n == 2 else 0
        assert len(board["deck"]) == BOARD_SIZES[name] - removed - SUPPLY[n] - 2
        assert (game.state.location[board["current"]] == CURRENT + b).all()
        assert (game.state.location[board["future"]] == FUTURE + b).all()
        assert board["discard"] == []


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_R_SETUP_5_one_starting_contract_each_rest_removed(n):
    """R-SETUP-5: each player holds exactly his one starting contract; the other 12-n leave the game unseen."""
    game = Game.new(n, seed=n + 20)
    d = game.to_dict()
    starts = [p["starting_contract"] for p in d["players"]]
    assert len(set(starts)) == n
    for p, row in enumerate(d["players"]):
        assert row["hand"] == [row["starting_contract"]]
        assert CARDS.board[row["starting_contract"]] == cards.START
        assert game.hand(p) == [row["starting_contract"]]
        assert row["ships"] == []
    removed_starts = [c for c in d["removed"] if CARDS.board[c] == cards.START]
    assert sorted(removed_starts + starts) == list(range(160, 172))
    # the deal is shuffled: seat 0's starting contract varies with the seed
    assert len({Game.new(n, seed=s).to_dict()["players"][0]["starting_contract"] for s in range(30)}) > 3


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_R_SETUP_6_everyone_starts_with_25_cash(n):
    """R-SETUP-6: $25 each."""
    game = Game.new(n, seed=0)
    assert [p["cash"] for p in game.to_dict()["players"]] == [25] * n
    assert game.state.cash[:n].tolist() == [25] * n


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_R_SETUP_7_harbour_master_is_seat_0_unless_random_start(n):
    """R-SETUP-7: seat 0 is harbour master of round 1 by default; random_start draws him from the seed."""
    for seed in range(10):
        game = Game.new(n, seed=seed)
        assert game.state.harbour_master == 0
        assert game.current_player == 0 and game.phase == "choose_board"
        assert game.state.round == 1
    drawn = []
    for seed in range(40):
        game = Game.new(n, seed=seed, random_start=True)
        again = Game.new(n, seed=seed, random_start=True)
        hm = game.state.harbour_master
        assert hm == again.state.harbour_master  # reproducible from the seed
        assert game.current_player == hm and game.phase == "choose_board"
        assert game.legal_actions() == [0, 1, 2, 3]
        drawn.append(hm)
    assert set(drawn) == set(range(n))


# ------------------------------------------------------ bad actions (docs/design.md "The engine")
@pytest.mark.parametrize("action", [4, 10, 47, 11, actions.PAY, actions.NUM_ACTIONS - 1, actions.NUM_ACTIONS, 100, -1])
def test_step_illegal_or_out_of_range_action_raises_and_changes_nothing(action):
    """step raises IllegalActionError (a ValueError) naming the action and listing the legal ones; nothing changes."""
    game = Game.new(4, seed=2)
    before = json.dumps(game.to_dict(), sort_keys=True)
    with pytest.raises(IllegalActionError) as info:
        game.step(action)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    named = f"action {action} ({actions.NAMES[action]})" if 0 <= action < actions.NUM_ACTIONS else f"action {action} "
    assert named in message
    assert "legal" in message
    for a in game.legal_actions():
        assert f"{a} ({actions.NAMES[a]})" in message
    assert json.dumps(game.to_dict(), sort_keys=True) == before
    game.step(0)  # and the game goes on
    assert game.phase == "take"


def test_step_illegal_in_the_middle_of_a_round_changes_nothing():
    """An illegal action in phase take (a board choice, an empty slot, a future slot without assistant) changes
    nothing."""
    game = Game.new(4, seed=2)
    game.step(2)
    game.step(actions.TAKE + 1)  # seat 1 takes market slot 1
    before = json.dumps(game.to_dict(), sort_keys=True)
    for action in (0, 3, actions.TAKE + 1, actions.TAKE + 3, actions.TAKE_FUTURE, actions.SHIP):
        with pytest.raises(IllegalActionError, match=rf"action {action} \({actions.NAMES[action]}\)"):
            game.step(action)
        assert json.dumps(game.to_dict(), sort_keys=True) == before


@pytest.mark.parametrize("action", [1.5, "3", None, [4]])
def test_step_non_integer_action_raises_and_changes_nothing(action):
    """A non-integer action raises IllegalActionError naming it; the position is unchanged."""
    game = Game.new(3, seed=4)
    before = json.dumps(game.to_dict(), sort_keys=True)
    with pytest.raises(IllegalActionError) as info:
        game.step(action)
    assert repr(action) in str(info.value)
    assert json.dumps(game.to_dict(), sort_keys=True) == before


def test_step_non_integer_action_message_lists_the_legal_actions():
    """docs/design.md "The engine": the error names the action and the legal ones, for a non-integer action too."""
    game = Game.new(3, seed=4)
    with pytest.raises(IllegalActionError) as info:
        game.step(2.5)
    for a in game.legal_actions():
        assert f"{a} ({actions.NAMES[a]})" in str(info.value)


def test_step_accepts_numpy_integers():
    """A numpy integer is an action like any int."""
    game = Game.new(4, seed=2)
    game.step(np.int64(1))
    assert game.phase == "take" and game.state.current_board == 1


def test_step_after_the_game_is_over_raises():
    """When the game is over there is no legal action and step raises, changing nothing."""
    game = Position(2, seed=0).last_round().game()
    game.step(actions.PASS)
    assert game.is_over and game.current_player is None
    assert not game.legal_action_mask().any()
    before = json.dumps(game.to_dict(), sort_keys=True)
    with pytest.raises(IllegalActionError, match="over"):
        game.step(actions.PASS)
    assert json.dumps(game.to_dict(), sort_keys=True) == before


def test_legal_action_mask_is_read_only():
    """The mask is a read-only bool[NUM_ACTIONS]."""
    mask = Game.new(4, seed=0).legal_action_mask()
    assert mask.dtype == bool and mask.shape == (actions.NUM_ACTIONS,)
    with pytest.raises(ValueError):
        mask[5] = True


def test_place_helper_finds_dealt_cards():
    """The position helper agrees with the state's location codes."""
    game = Game.new(4, seed=9)
    d = game.to_dict()
    c = d["boards"][2]["current"][1]
    assert place(game, c) == ("current", 2, 1)
    assert place(game, d["players"][3]["starting_contract"]) == ("hand", 3)
    assert game.state.location[d["players"][3]["starting_contract"]] == HAND + 3


def test_step_rejects_a_bool_action():
    """A bool is not an action id (True would otherwise be read as action 1)."""
    game = Game.new(3, seed=4)
    before = game.to_dict()
    with pytest.raises(IllegalActionError, match="must be an integer"):
        game.step(True)
    assert game.to_dict() == before
