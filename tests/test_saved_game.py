"""Saved games: the to_dict() schema (docs/design.md "Saved games", version 3; versions 1 and 2 still load) and
from_dict()'s validation.

Every rejection test starts from a valid position, breaks exactly one thing,
and checks that from_dict raises a ValueError whose message names the problem
and leaves the input dict as it was.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from packetrow_env import actions
from packetrow_env.cards import NUM_CARDS, SHIP, START, load
from packetrow_env.engine import Game, IllegalActionError
from packetrow_env.state import SUPPLY_SIZE

CARDS = load()
TOP_KEYS = {"version", "num_players", "round", "harbour_master", "current_player", "phase", "current_board",
            "chosen_boards", "boards", "removed", "players", "pending_shipment", "rng", "history", "resume_phase",
            "payment_page"}
BOARD_KEYS = {"deck", "discard", "current", "future", "exhausted"}
PLAYER_KEYS = {"cash", "hand", "ships", "has_piece", "starting_contract"}
PHASES = {"choose_board", "take", "must_take", "over", "pay"}


# ------------------------------------------------------------------ helpers

def random_positions(num_players, seed, random_start=False):
    """Every position of one random game, with the game after each step (the last one is over)."""
    game = Game.new(num_players, seed=seed, random_start=random_start)
    rng = np.random.default_rng(seed + 1000)
    yield game
    while not game.is_over:
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
        yield game


def finished(num_players=3, seed=5) -> Game:
    for game in random_positions(num_players, seed):
        pass
    return game


def first(game: Game, low: int, high: int) -> int:
    """The lowest legal action in low..high-1."""
    found = [a for a in game.legal_actions() if low <= a < high]
    assert found, f"no legal action in {low}..{high - 1}: {game.legal_actions()}"
    return found[0]


def take_position() -> dict:
    """3 players, round 1: seat 0 chose a board, seat 1 took, seat 2 is asked (phase take)."""
    game = Game.new(3, seed=11)
    game.step(first(game, actions.CHOOSE_BOARD, actions.TAKE))
    game.step(first(game, actions.TAKE, actions.PASS))
    assert game.phase == "take" and game.current_player == 2
    return game.to_dict()


def must_take_position() -> dict:
    """2 players: seat 1 took, the harbour master (seat 0) chose a second board (R-ROUND-5)."""
    game = Game.new(2, seed=3)
    game.step(first(game, actions.CHOOSE_BOARD, actions.TAKE))
    game.step(first(game, actions.TAKE, actions.PASS))
    game.step(first(game, actions.CHOOSE_BOARD, actions.TAKE))
    assert game.phase == "must_take" and game.current_player == 0
    return game.to_dict()


def piles(d: dict):
    """Every list of card ids in a saved game, with a name."""
    for b, board in enumerate(d["boards"]):
        for key in ("deck", "discard", "current", "future"):
            yield f"boards[{b}].{key}", board[key]
    yield "removed", d["removed"]
    for p, player in enumerate(d["players"]):
        yield f"players[{p}].hand", player["hand"]
        yield f"players[{p}].ships", player["ships"]


def take_out(d: dict, card: int) -> str:
    """Remove a card from wherever it is listed (a supply slot becomes null); return where it was."""
    for name, pile in piles(d):
        if card in pile:
            if name.endswith(("current", "future")):
                pile[pile.index(card)] = None
            else:
                pile.remove(card)
            return name
    raise AssertionError(f"card {card} is nowhere")


def move(d: dict, card: int, pile: list) -> None:
    take_out(d, card)
    pile.append(card)


def in_deck(d: dict, board: int, kind: int | None = None) -> int:
    """The bottom card of a board's deck (of a kind, if given)."""
    cards = [c for c in d["boards"][board]["deck"] if kind is None or CARDS.kind[c] == kind]
    return cards[-1]


def accepts(d: dict) -> Game:
    snapshot = copy.deepcopy(d)
    game = Game.from_dict(d)
    assert d == snapshot, "from_dict changed its input"
    return game


def rejects(d: dict, match: str) -> ValueError:
    """from_dict raises a ValueError matching `match` and leaves the dict as it was."""
    snapshot = copy.deepcopy(d)
    with pytest.raises(ValueError, match=match) as info:
        Game.from_dict(d)
    assert not isinstance(info.value, IllegalActionError)
    assert d == snapshot, "from_dict changed the dict it rejected"
    return info.value


def assert_json_plain(value, where="d"):
    """Only dict (str keys), list, str, int, float, bool and None: no numpy types, no tuples."""
    if type(value) is dict:
        for key, item in value.items():
            assert type(key) is str, f"{where} has a non-string key {key!r}"
            assert_json_plain(item, f"{where}[{key!r}]")
    elif type(value) is list:
        for i, item in enumerate(value):
            assert_json_plain(item, f"{where}[{i}]")
    else:
        assert value is None or type(value) in (str, int, float, bool), f"{where} is a {type(value).__name__}"


def is_int(value) -> bool:
    return type(value) is int


def ids(values) -> bool:
    return type(values) is list and all(is_int(c) and 0 <= c < NUM_CARDS for c in values)


def check_schema(d: dict, game: Game) -> None:
    """to_dict() follows the version 3 schema of docs/design.md "Saved games" exactly."""
    assert_json_plain(d)
    json.dumps(d)  # no default= needed
    assert set(d) == TOP_KEYS
    n = d["num_players"]
    assert d["version"] == 3 and is_int(d["version"])
    assert is_int(n) and 2 <= n <= 5 and n == game.num_players
    assert is_int(d["round"]) and d["round"] >= 1
    assert is_int(d["harbour_master"]) and 0 <= d["harbour_master"] < n
    assert d["phase"] in PHASES and d["phase"] == game.phase
    if d["phase"] == "pay":
        assert d["resume_phase"] in ("choose_board", "take", "must_take") and d["pending_shipment"]
        assert is_int(d["payment_page"]) and d["payment_page"] == game.payment_page >= 0
    else:
        assert d["resume_phase"] is None and d["payment_page"] is None
    if d["phase"] == "over":
        assert d["current_player"] is None and d["current_board"] is None
    else:
        assert is_int(d["current_player"]) and d["current_player"] == game.current_player
        assert d["current_board"] is None or (is_int(d["current_board"]) and 0 <= d["current_board"] < 4)
    assert type(d["chosen_boards"]) is list and all(is_int(b) and 0 <= b < 4 for b in d["chosen_boards"])
    assert type(d["boards"]) is list and len(d["boards"]) == 4
    for b, board in enumerate(d["boards"]):
        assert set(board) == BOARD_KEYS
        assert ids(board["deck"]) and ids(board["discard"])
        assert board["discard"] == sorted(board["discard"])
        assert type(board["current"]) is list and len(board["current"]) == SUPPLY_SIZE[n]
        assert type(board["future"]) is list and len(board["future"]) == 2
        for slot in board["current"] + board["future"]:
            assert slot is None or (is_int(slot) and 0 <= slot < NUM_CARDS)
        assert type(board["exhausted"]) is bool
        supply = game.state.current[b][:SUPPLY_SIZE[n]].tolist()
        assert board["current"] == [None if c < 0 else c for c in supply]
        assert board["deck"] == game.state.deck_cards(b).tolist()
    assert ids(d["removed"])
    assert type(d["players"]) is list and len(d["players"]) == n
    for p, player in enumerate(d["players"]):
        assert set(player) == PLAYER_KEYS
        assert is_int(player["cash"]) and player["cash"] >= 0
        assert ids(player["hand"]) and player["hand"] == game.hand(p)
        assert ids(player["ships"]) and player["ships"] == game.ships(p)
        assert type(player["has_piece"]) is bool
        assert is_int(player["starting_contract"]) and CARDS.board[player["starting_contract"]] == START
    assert ids(d["pending_shipment"])
    assert type(d["rng"]) is dict and d["rng"]["bit_generator"] == "PCG64"
    assert type(d["history"]) is list and all(is_int(a) and 0 <= a < actions.NUM_ACTIONS for a in d["history"])


# ------------------------------------------------------------------ schema

@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_to_dict_follows_the_schema_and_round_trips_at_every_step(num_players):
    for i, game in enumerate(random_positions(num_players, seed=100 + num_players, random_start=True)):
        d = game.to_dict()
        check_schema(d, game)
        assert len(d["history"]) == i
        loaded = accepts(json.loads(json.dumps(d)))
        assert loaded.to_dict() == d
        assert json.dumps(loaded.to_dict()) == json.dumps(d)
        assert np.array_equal(loaded.legal_action_mask(), game.legal_action_mask())
        assert loaded.scores() == game.scores()
    assert game.is_over


def test_to_dict_of_a_new_game():
    d = Game.new(2, seed=0).to_dict()
    assert (d["version"], d["num_players"], d["round"], d["harbour_master"], d["current_player"], d["phase"],
            d["current_board"], d["chosen_boards"], d["pending_shipment"], d["history"], d["payment_page"]) == \
        (3, 2, 1, 0, 0, "choose_board", None, [], [], [], None)
    # R-SETUP-3/5: 6 cards per deck and the 10 undealt starting contracts are removed
    assert len(d["removed"]) == 4 * 6 + 10
    assert all(board["discard"] == [] and board["exhausted"] is False for board in d["boards"])
    assert [len(board["deck"]) for board in d["boards"]] == [38 - 10, 42 - 10, 42 - 10, 38 - 10]
    for p, player in enumerate(d["players"]):
        assert player == {"cash": 25, "hand": [player["starting_contract"]], "ships": [], "has_piece": True,
                          "starting_contract": player["starting_contract"]}


def test_decks_are_listed_top_first():
    """After a refill, the supplies hold what was at the front of the deck list (R-REFILL-1)."""
    game = Game.new(4, seed=21)
    old = game.to_dict()["boards"]
    game.step(actions.CHOOSE_BOARD + 0)
    for _ in range(3):
        game.step(actions.PASS)
    assert game.current_player == 0
    game.step(actions.TAKE + 0)  # the harbour master takes: the round ends, the guildhall is refilled
    new = game.to_dict()["boards"]
    deck = old[0]["deck"]
    assert new[0]["current"] == old[0]["future"] + deck[:1]
    assert new[0]["future"] == deck[1:3]
    assert new[0]["deck"] == deck[3:]
    assert set(old[0]["current"][1:]) <= set(new[0]["discard"])
    assert new[1:] == old[1:]


def test_to_dict_is_a_copy_and_from_dict_keeps_no_reference_to_its_input():
    game = Game.new(3, seed=2)
    d = game.to_dict()
    expected = json.dumps(d)
    d["players"][0]["hand"].append(99)
    d["chosen_boards"].append(1)
    d["boards"][0]["deck"].clear()
    d["history"].append(3)
    assert json.dumps(game.to_dict()) == expected

    d = json.loads(expected)
    loaded = Game.from_dict(d)
    d["players"][0]["hand"].clear()
    d["pending_shipment"].append(0)
    d["boards"][1]["current"][0] = None
    d["history"].append(1)
    d["rng"]["state"]["state"] = 1
    assert json.dumps(loaded.to_dict()) == expected


def test_rng_state_round_trips():
    """The saved generator state is a real numpy state, and it survives save and load unchanged."""
    game = Game.new(4, seed=8)
    d = json.loads(json.dumps(game.to_dict()))
    bit_generator = np.random.PCG64()
    bit_generator.state = d["rng"]  # accepted by numpy as it is
    assert Game.from_dict(d).to_dict()["rng"] == game.to_dict()["rng"] == bit_generator.state
    assert Game.new(4, seed=9).to_dict()["rng"] != d["rng"]


def test_a_finished_game_round_trips_with_its_scores():
    game = finished()
    d = game.to_dict()
    loaded = accepts(json.loads(json.dumps(d)))
    assert loaded.is_over and loaded.current_player is None and not loaded.legal_action_mask().any()
    assert loaded.to_dict() == d and loaded.scores() == game.scores()


def test_history_is_informational():
    game = Game.new(3, seed=4)
    for _ in range(5):
        game.step(game.legal_actions()[0])
    d = game.to_dict()
    d["history"] = []
    loaded = accepts(d)
    assert loaded.to_dict()["history"] == []
    assert {k: v for k, v in loaded.to_dict().items() if k != "history"} == \
        {k: v for k, v in game.to_dict().items() if k != "history"}


# --------------------------------------------------- valid hand-made positions

def pending_position(contract: int = 2) -> dict:
    """3 players, seat 0 to choose a board, holding 2 grain for Netherlands (contract 2), grain_3 and a ship."""
    d = Game.new(3, seed=1).to_dict()
    hand, ships = d["players"][0]["hand"], d["players"][0]["ships"]
    move(d, contract, hand)
    move(d, 85, hand)  # grain_3
    move(d, 44, ships)  # ship to the Netherlands
    hand.sort()
    return d


def test_hand_made_positions_are_accepted():
    d = pending_position()
    game = accepts(d)
    assert game.legal_action_mask()[actions.ADD_CONTRACT + 2]
    d["pending_shipment"] = [2]
    game = accepts(d)
    assert game.legal_actions()[-1] == actions.SHIP
    assert not game.legal_action_mask()[:actions.ADD_CONTRACT].any()
    game.step(actions.SHIP)
    assert game.to_dict()["players"][0]["cash"] == 25 + 15

    d = Game.new(3, seed=1).to_dict()  # a shipped starting contract lies in the guildhall discard pile
    move(d, d["players"][1]["starting_contract"], d["boards"][0]["discard"])
    accepts(d)
    accepts(take_position())
    accepts(must_take_position())


# -------------------------------------------------------------- rejections

@pytest.fixture
def d() -> dict:
    """A valid position: 3 players, round 1, the harbour master (seat 0) to choose a board."""
    position = Game.new(3, seed=1).to_dict()
    accepts(position)
    return position


def test_rejects_a_card_listed_twice(d):
    card = in_deck(d, 1)
    d["removed"].append(card)
    rejects(d, rf"card {card} is listed twice")


def test_rejects_a_card_listed_twice_in_one_pile(d):
    card = d["players"][0]["hand"][0]
    d["players"][0]["hand"].append(card)
    rejects(d, rf"card {card} is listed twice")


def test_rejects_a_missing_card(d):
    card = in_deck(d, 2)
    d["boards"][2]["deck"].remove(card)
    rejects(d, rf"missing: \[{card}\]")


@pytest.mark.parametrize("card", [172, -1, 10**6])
def test_rejects_card_ids_out_of_range(d, card):
    d["removed"].append(card)
    rejects(d, rf"card id .* 0 to 171, got {card}")


@pytest.mark.parametrize("card", ["5", 5.0, True, None, [5]])
def test_rejects_card_ids_that_are_not_integers(d, card):
    d["boards"][0]["discard"].append(card)
    rejects(d, "must be an integer")


@pytest.mark.parametrize("target", ["deck", "discard", "current"])
def test_rejects_a_card_on_another_boards_pile(d, target):
    card = in_deck(d, 1)  # a docks card
    take_out(d, card)
    if target == "current":  # swap it with a guildhall supply card
        displaced = d["boards"][0]["current"][0]
        d["boards"][0]["current"][0] = card
        d["boards"][0]["deck"].append(displaced)
    else:
        d["boards"][0][target].append(card)
    rejects(d, rf"card {card} .*belongs to the docks board")


def test_rejects_a_starting_contract_on_a_discard_pile_other_than_the_guildhall(d):
    card = next(c for c in d["removed"] if CARDS.board[c] == START)
    move(d, card, d["boards"][1]["discard"])
    rejects(d, rf"card {card} .*belongs to the starting contracts")


def test_rejects_a_ship_in_a_hand(d):
    card = in_deck(d, 1, SHIP)
    move(d, card, d["players"][1]["hand"])
    rejects(d, rf"card {card} is a ship in player 1's hand")


@pytest.mark.parametrize("board", [0, 2])
def test_rejects_a_non_ship_in_ships(d, board):
    card = in_deck(d, board)
    move(d, card, d["players"][2]["ships"])
    rejects(d, rf"card {card} .*player 2's ships but is not a ship")


@pytest.mark.parametrize("key,change,match", [
    ("current", "append_none", r"boards\[0\]\.current .*must have 2 slots .*got 3"),
    ("current", "drop", r"boards\[0\]\.current .*must have 2 slots .*got 1"),
    ("future", "append_none", r"boards\[0\]\.future .*must have 2 slots .*got 3"),
    ("future", "drop", r"boards\[0\]\.future .*must have 2 slots .*got 1"),
    ("future", "empty", r"boards\[0\]\.future .*must have 2 slots .*got 0"),
])
def test_rejects_wrong_supply_lengths(d, key, change, match):
    row = d["boards"][0][key]
    if change == "append_none":
        row.append(None)
    elif change == "drop":
        d["boards"][0]["deck"].insert(0, row.pop())
    else:
        d["boards"][0]["deck"][:0] = [c for c in row if c is not None]
        row.clear()
    rejects(d, match)


def test_rejects_supply_lengths_of_another_player_count():
    d = Game.new(4, seed=6).to_dict()  # supply size 3
    d["num_players"] = 5  # supply size 4, and a missing player
    rejects(d, r"must have 4 slots for 5 players")


def test_rejects_negative_cash(d):
    d["players"][1]["cash"] = -1
    rejects(d, r"players\[1\]\.cash must be from 0")


@pytest.mark.parametrize("cash", ["25", 25.0, True, None])
def test_rejects_cash_that_is_not_an_integer(d, cash):
    d["players"][1]["cash"] = cash
    rejects(d, r"players\[1\]\.cash must be an integer")


def test_rejects_cash_too_large_to_store(d):
    d["players"][1]["cash"] = 2**31
    rejects(d, r"players\[1\]\.cash")


@pytest.mark.parametrize("phase", ["bidding", "Take", "", None, 1])
def test_rejects_a_bad_phase_name(d, phase):
    d["phase"] = phase
    rejects(d, r"phase must be one of choose_board, take, must_take, over")


def test_rejects_choose_board_with_someone_else_than_the_harbour_master_to_act(d):
    d["current_player"] = 1
    rejects(d, r"in phase choose_board the harbour master \(player 0\) acts, not player 1")


def test_rejects_choose_board_with_a_current_board(d):
    d["current_board"] = 0
    rejects(d, r"current_board must be null in phase choose_board")


def test_rejects_take_with_a_player_who_already_took():
    d = take_position()
    d["current_player"] = 1
    rejects(d, r"player 1 is asked but has already taken a card")


def test_rejects_take_without_a_current_board():
    d = take_position()
    d["current_board"] = None
    rejects(d, r"current_board must be an integer")


def test_rejects_take_on_a_board_that_was_not_chosen_last():
    d = take_position()
    d["current_board"] = (d["current_board"] + 1) % 4
    rejects(d, r"current_board must be the last of chosen_boards")


def test_rejects_take_with_no_board_chosen():
    d = take_position()
    d["chosen_boards"] = []
    rejects(d, r"current_board must be the last of chosen_boards")


def test_rejects_a_harbour_master_who_already_took():
    d = take_position()
    d["players"][0]["has_piece"] = False
    rejects(d, r"harbour master still holds his piece")


def test_rejects_must_take_before_everyone_else_took():
    d = must_take_position()
    d["players"][1]["has_piece"] = True
    rejects(d, r"must_take needs every other player to have taken \(R-ROUND-5\)")


def test_rejects_must_take_for_someone_else_than_the_harbour_master():
    d = must_take_position()
    d["players"][1]["has_piece"] = True
    d["current_player"] = 1
    rejects(d, r"in phase must_take the harbour master acts")


def test_rejects_over_with_a_player_to_act():
    d = finished().to_dict()
    d["current_player"] = 0
    rejects(d, r"finished game has current_player and current_board null")


def test_rejects_a_running_game_without_a_player_to_act(d):
    d["current_player"] = None
    rejects(d, r"current_player must be an integer")


def test_rejects_choose_board_when_everyone_else_has_taken():
    d = take_position()
    d["players"][2]["has_piece"] = False  # seat 2 took too
    d["phase"], d["current_player"], d["current_board"] = "choose_board", 0, None
    rejects(d, r"R-ROUND-5|choose_board")


def test_rejects_a_running_game_that_should_have_ended(d):
    d["boards"][2]["exhausted"] = True  # 3 players: one exhausted board ends the game
    rejects(d, r"exhausted|R-END-1")


def test_rejects_a_position_where_the_player_to_act_has_no_legal_action(d):
    for board in d["boards"]:  # empty every supply: no board can be chosen (R-ROUND-1)
        for key in ("current", "future"):
            board["discard"] += [c for c in board[key] if c is not None]
            board[key] = [None] * len(board[key])
    rejects(d, r"no legal action|not exhausted, so its current supply is full")


def test_rejects_a_pending_contract_not_in_the_current_players_hand():
    d = pending_position()
    d["pending_shipment"] = [5]
    rejects(d, r"pending contract 5 is not a contract in the current player's \(player 0\) hand")


def test_rejects_a_pending_contract_in_another_players_hand():
    d = pending_position()
    d["pending_shipment"] = [d["players"][1]["starting_contract"]]
    rejects(d, r"is not a contract in the current player's \(player 0\) hand")


def test_rejects_a_pending_card_that_is_not_a_contract():
    d = pending_position()
    d["pending_shipment"] = [85]
    rejects(d, r"pending contract 85 is not a contract")


def test_rejects_a_pending_shipment_that_cannot_be_fulfilled():
    d = pending_position()
    start = d["players"][0]["starting_contract"]
    d["pending_shipment"] = [2, start]  # the starting contract needs goods or a ship he lacks
    rejects(d, rf"pending_shipment \[2, {start}\] cannot be fulfilled")


def test_rejects_a_pending_shipment_repeating_a_contract():
    d = pending_position()
    d["pending_shipment"] = [2, 2]
    rejects(d, r"pending_shipment repeats a contract")


def test_rejects_a_pending_shipment_in_a_finished_game():
    d = finished().to_dict()
    d["pending_shipment"] = [0]
    rejects(d, r"pending_shipment must be empty when the game is over")


@pytest.mark.parametrize("version", [
    4, 0, "1", "2", "3", None, 1.5,
    pytest.param(True),
])
def test_rejects_a_wrong_version(d, version):
    d["version"] = version
    rejects(d, r"version must be one of 1, 2, 3")


@pytest.mark.parametrize("where", ["top", "board", "player"])
def test_rejects_unknown_keys(d, where):
    target = {"top": d, "board": d["boards"][1], "player": d["players"][2]}[where]
    target["colour"] = "red"
    rejects(d, r"unknown keys \['colour'\]")


@pytest.mark.parametrize("where,key", [("top", "history"), ("top", "rng"), ("top", "version"),
                                       ("board", "exhausted"), ("player", "starting_contract")])
def test_rejects_missing_keys(d, where, key):
    target = {"top": d, "board": d["boards"][1], "player": d["players"][2]}[where]
    del target[key]
    rejects(d, rf"missing keys \['{key}'\]")


@pytest.mark.parametrize("data", [None, [], "saved game", 3])
def test_rejects_something_that_is_not_an_object(data):
    with pytest.raises(ValueError, match="must be an object"):
        Game.from_dict(data)


@pytest.mark.parametrize("change", ["board", "player"])
def test_rejects_a_board_or_player_that_is_not_an_object(d, change):
    if change == "board":
        d["boards"][3] = list(d["boards"][3].values())
    else:
        d["players"][1] = None
    rejects(d, r"must be an object")


@pytest.mark.parametrize("rng,match", [
    (None, r"rng must be a numpy bit generator state"),
    ({}, r"rng must be a numpy bit generator state"),
    ({"bit_generator": "Mersenne"}, r"rng\.bit_generator must be one of"),
    ({"bit_generator": "PCG64"}, r"rng is not a valid PCG64 state"),
    ({"bit_generator": "PCG64", "state": {"state": "x", "inc": 1}, "has_uint32": 0, "uinteger": 0},
     r"rng is not a valid PCG64 state"),
    ({"bit_generator": "PCG64", "state": {"inc": 1}, "has_uint32": 0, "uinteger": 0},
     r"rng is not a valid PCG64 state"),
    pytest.param({"bit_generator": "PCG64", "state": {"state": -1, "inc": 1}, "has_uint32": 0, "uinteger": 0},
                 r"rng"),
    pytest.param({"bit_generator": "MT19937", "state": {"key": [1, 2], "pos": 0}},
                 r"rng"),
])
def test_rejects_a_bad_rng_state(d, rng, match):
    d["rng"] = rng
    rejects(d, match)


def test_rejects_a_starting_contract_that_is_not_a_starting_card(d):
    d["players"][1]["starting_contract"] = 0
    rejects(d, r"players\[1\]\.starting_contract 0 is not a starting contract")


@pytest.mark.parametrize("value", [172, -1, "160", None])
def test_rejects_a_starting_contract_that_is_not_a_card_id(d, value):
    d["players"][1]["starting_contract"] = value
    rejects(d, r"players\[1\]\.starting_contract")


def test_rejects_a_starting_contract_in_someone_elses_hand(d):
    card = d["players"][0]["starting_contract"]
    move(d, card, d["players"][2]["hand"])
    rejects(d, rf"player 0's starting contract {card} must be in his hand")


def test_rejects_a_starting_contract_that_left_the_game(d):
    card = d["players"][2]["starting_contract"]
    move(d, card, d["removed"])
    rejects(d, rf"player 2's starting contract {card} must be in his hand")


def test_rejects_an_undealt_starting_contract_in_a_hand(d):
    card = next(c for c in d["removed"] if CARDS.board[c] == START)
    move(d, card, d["players"][1]["hand"])
    rejects(d, rf"starting contract {card} is in player 1's hand but was not dealt to him")


def test_rejects_two_players_with_one_starting_contract(d):
    card = d["players"][0]["starting_contract"]
    move(d, card, d["boards"][0]["discard"])  # shipped
    move(d, d["players"][1]["starting_contract"], d["removed"])
    d["players"][1]["starting_contract"] = card
    rejects(d, r"players share a starting contract")


def test_rejects_an_undealt_starting_contract_on_the_discard_pile(d):
    card = next(c for c in d["removed"] if CARDS.board[c] == START)
    move(d, card, d["boards"][0]["discard"])
    rejects(d, rf"starting contract|{card}")


@pytest.mark.parametrize("num_players", [1, 6, 0, -3, "3", 3.0, True, None])
def test_rejects_num_players_out_of_range(d, num_players):
    d["num_players"] = num_players
    rejects(d, r"num_players must be")


def test_rejects_a_players_list_of_the_wrong_length(d):
    d["players"].append(copy.deepcopy(d["players"][0]))
    rejects(d, r"players must have 3 entries")


def test_rejects_a_wrong_number_of_boards(d):
    d["boards"].pop()
    rejects(d, r"boards must list the 4 boards")


@pytest.mark.parametrize("chosen,match", [([1, 1], r"must not repeat a board"), ([4], r"chosen board"),
                                          (["docks"], r"chosen board must be an integer"), (None, r"must be a list")])
def test_rejects_bad_chosen_boards(d, chosen, match):
    d["chosen_boards"] = chosen
    rejects(d, match)


@pytest.mark.parametrize("key,value,match", [
    ("round", 0, r"round must be from 1 to 481"),
    ("round", 482, r"round must be from 1 to 481"),  # issue 11 item 4: no game lasts longer (state.MAX_ROUNDS)
    ("round", 10**400, r"round must be from 1 to 481"),
    ("round", 2**128, r"round must be from 1 to 481"),
    ("round", "1", r"round must be an integer"),
    ("harbour_master", 3, r"harbour_master must be from 0 to 2"),
    ("harbour_master", None, r"harbour_master must be an integer"),
    ("history", [0, actions.NUM_ACTIONS], rf"action in history must be from 0 to {actions.NUM_ACTIONS - 1}"),
    ("history", "0 1 2", r"history must be a list"),
    ("removed", {}, r"removed must be a list"),
    ("pending_shipment", None, r"pending_shipment must be a list"),
])
def test_rejects_bad_scalars_and_lists(d, key, value, match):
    d[key] = value
    rejects(d, match)


@pytest.mark.parametrize("where,key,value", [("board", "exhausted", 0), ("board", "exhausted", "no"),
                                             ("player", "has_piece", 1), ("player", "has_piece", None)])
def test_rejects_flags_that_are_not_booleans(d, where, key, value):
    target = d["boards"][2] if where == "board" else d["players"][1]
    target[key] = value
    rejects(d, rf"{key} must be true or false")


def test_json_round_trip_of_a_pending_shipment():
    d = pending_position()
    d["pending_shipment"] = [2]
    game = accepts(d)
    again = Game.from_dict(json.loads(json.dumps(game.to_dict())))
    assert again.to_dict() == game.to_dict() and again.to_dict()["pending_shipment"] == [2]
    assert again.legal_actions()[-1] == actions.SHIP


# ------------------------------------------------------------------ issue 11: what a user loads (items 1-5)

def finished_game(num_players=4, seed=3) -> Game:
    game = Game.new(num_players, seed=seed)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        game.step(int(rng.choice(game.legal_actions())))
    return game


def test_issue_11_1a_R_REFILL_2_emptied_boards_must_be_exhausted(d):
    """Issue 11 item 1a: boards emptied into their discard piles but not marked exhausted were accepted and
    reached a choose_board with no legal action ~100 steps later."""
    for b in (0, 1):
        board = d["boards"][b]
        board["discard"] = sorted(board["discard"] + board["deck"] + [c for c in board["current"] + board["future"]
                                                                       if c is not None])
        board["deck"], board["current"], board["future"] = [], [None] * 2, [None, None]
    rejects(d, r"boards\[0\] \(guildhall\) is not exhausted, so its current supply is full \(2 cards\).*R-REFILL-2")


@pytest.mark.parametrize("change,match", [
    (lambda b: b.update(future=[None, None]), r"the future supply is full \(2 cards\) while the deck holds cards"),
])
def test_R_REFILL_1_supplies_of_a_board_not_chosen_this_round_are_as_a_refill_left_them(d, change, match):
    board = d["boards"][2]
    before = [c for c in board["current"] + board["future"] if c is not None]
    change(board)
    board["deck"] += [c for c in before if c not in board["current"] + board["future"]]
    rejects(d, match)


def test_R_REFILL_1_a_refill_fills_the_first_slots():
    d = Game.new(5, seed=2).to_dict()  # 5 players: three exhausted boards end the game, two do not
    board = d["boards"][1]
    board["discard"] = sorted(board["deck"] + board["future"] + board["current"][:1] + board["current"][2:])
    board.update(deck=[], future=[None, None], current=[None, board["current"][1], None, None], exhausted=True)
    rejects(d, r"boards\[1\] \(docks\): a refill fills current slots 0, 1, \.\.\. in order")
    board["current"] = board["current"][1:] + [None]
    accepts(d)
    d["boards"][2]["exhausted"] = True  # with its deck and both supplies full
    rejects(d, r"boards\[2\] \(market\) is exhausted, so .* its deck and future supply are empty")


def test_issue_11_1b_R_ROUND_1_choose_board_needs_a_board_to_choose():
    """Issue 11 item 1b: chosen_boards [0, 1, 2, 3] in choose_board with a shippable contract was accepted; after
    add + ship no action was legal."""
    d = pending_position()
    d["chosen_boards"] = [0, 1, 2, 3]
    d["players"][1]["has_piece"] = False
    game_mask_before = accepts(pending_position()).legal_action_mask()
    assert game_mask_before[actions.ADD_CONTRACT + 2]  # the contract is shippable: the old check passed
    rejects(d, r"in phase choose_board a board not chosen this round must hold a card \(R-ROUND-1\)")


def test_R_ROUND_5_must_take_needs_a_card_the_harbour_master_can_take(d):
    d.update(phase="must_take", current_board=2, chosen_boards=[1, 2])
    for p in (1, 2):
        d["players"][p]["has_piece"] = False
    d["players"][0]["cash"] = 0
    market = d["boards"][2]
    costly = [c for c in market["deck"] if CARDS.cost[c] > 0][:SUPPLY_SIZE[3]]
    for slot, c in enumerate(costly):
        old = market["current"][slot]
        market["deck"].remove(c)
        market["deck"].append(old)
        market["current"][slot] = c
    rejects(d, r"in phase must_take the harbour master can take a card on the chosen board \(R-ROUND-5\)")


def test_issue_11_2_cash_is_bounded_by_what_a_game_hands_out(d):
    """Issue 11 item 2: cash up to 2**31 - 1 was accepted and shipping wrapped it to a negative int32."""
    from packetrow_env.state import most_cash
    most = most_cash(CARDS)
    assert most < 2**20  # far from wrapping an int32 whatever the game adds
    for cash in (2**31 - 1, most + 1):
        d["players"][1]["cash"] = cash
        rejects(d, rf"players\[1\]\.cash must be from 0 to {most}")
    d["players"][1]["cash"] = most
    d["players"][2]["cash"] = most
    rejects(d, r"the players' cash adds up to .* more than the \$\d+ a game can hand out")
    d["players"][2]["cash"] = 0
    accepts(d)


@pytest.mark.parametrize("name", ["MT19937", "Philox", "SFC64"])
def test_issue_11_3_only_generator_states_that_save_as_json(d, name):
    """Issue 11 item 3: MT19937, Philox and SFC64 states were accepted, then json.dumps(to_dict()) failed."""
    d["rng"] = json.loads(json.dumps(getattr(np.random, name)(1).state, default=lambda a: a.tolist()))
    rejects(d, r"rng\.bit_generator must be one of PCG64, PCG64DXSM")


def test_a_pcg64dxsm_state_loads_and_saves_as_json(d):
    d["rng"] = np.random.PCG64DXSM(5).state
    game = accepts(json.loads(json.dumps(d)))
    assert json.loads(json.dumps(game.to_dict()))["rng"] == json.loads(json.dumps(d["rng"]))


def test_issue_11_4_history_is_bounded(d):
    from packetrow_env.saved_game import MAX_HISTORY
    d["history"] = [0] * (MAX_HISTORY + 1)
    rejects(d, rf"history holds at most {MAX_HISTORY} actions")


def test_issue_11_5_R_SCORE_1_a_finished_game_has_no_money_cards_in_hand():
    """Issue 11 item 5: a finished game with money cards in a hand loaded and scored without cashing them."""
    d = finished_game().to_dict()
    accepts(d)
    money = next(c for c in d["boards"][3]["discard"] if CARDS.kind[c] == 8)
    move(d, money, d["players"][1]["hand"])
    d["players"][1]["hand"].sort()
    rejects(d, rf"player 1 still holds money cards \[{money}\] in a finished game.*R-SCORE-1")


def test_R_END_1_a_finished_game_has_enough_exhausted_boards():
    d = finished_game().to_dict()
    for board in d["boards"]:
        board["exhausted"] = False
    rejects(d, r"R-END-1|R-REFILL-2")
    d = finished_game().to_dict()
    d["chosen_boards"] = [b for b in d["chosen_boards"] if not d["boards"][b]["exhausted"]]
    rejects(d, r"chosen_boards of a finished game holds an exhausted board")


def test_issue_11_6_R_SCORE_1_a_loaded_hand_of_25_contracts_ends_the_game():
    """Issue 11 item 6: a loaded game whose last step scores a hand of 25 contracts and every shipment card (one
    step took 277 s); the final fulfilment pays the most such a hand can (benchmarks/best_fulfilment.py times it)."""
    from packetrow_env import cards, shipping
    from tests.positions import Position

    pos = Position(4, seed=3)
    seat = pos.data["players"][0]
    contracts = [int(c) for c in np.flatnonzero(CARDS.kind == cards.CONTRACT) if CARDS.board[c] != START]
    shipment = [int(c) for c in np.flatnonzero(np.isin(CARDS.kind, (SHIP, cards.CAPTAIN, cards.GOLD,
                                                                     cards.GOODS_KIND, cards.TRADER)))]
    supplies = {c for board in pos.data["boards"] for key in ("current", "future") for c in board[key]}
    cards_in = [c for c in contracts + shipment if c not in supplies]
    pos.hand(0, *[c for c in cards_in if CARDS.kind[c] != SHIP]).ships(0, *[c for c in cards_in if CARDS.kind[c] == SHIP])
    pos.harbour_master(1).last_round()
    game = pos.game()
    held = [c for c in game.hand(0) if CARDS.kind[c] == cards.CONTRACT]
    assert len(held) >= 20
    best, paid = shipping.best_fulfilment(CARDS, game.hand(0) + game.ships(0), held)
    cash = game.to_dict()["players"][0]["cash"]
    game.step(actions.PASS)
    assert game.is_over
    d = game.to_dict()
    assert d["players"][0]["cash"] == cash + int(CARDS.reward[list(best)].sum())
    assert not set(best) & set(d["players"][0]["hand"]) and set(best) <= set(d["boards"][0]["discard"])
    json.dumps(d)
    Game.from_dict(d)
