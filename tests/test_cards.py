"""The card catalogue (CARDS.md): the default file, custom files, and validation errors.

Catalogue rows are numbered as in a spreadsheet: row 1 is the header, card id c is row c + 2.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter

import numpy as np
import pytest

from packetrow_env import actions, cards
from packetrow_env.cards import BOARD_CODES, COLUMNS, DESTINATIONS, GOODS, KINDS, NUM_CARDS, load
from packetrow_env.engine import Game

R_COMP_2 = {  # docs/rules.md R-COMP-2
    "guildhall": {"contract": 24, "assistant": 5, "building": 9},
    "docks": {"ship": 18, "captain": 5, "gold": 10, "building": 9},
    "market": {"goods": 28, "trader": 5, "building": 9},
    "bank": {"money": 24, "banker": 5, "building": 9},
    "start": {"contract": 12},
}


def default_rows() -> list[dict]:
    with open(cards.DEFAULT_PATH, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write(tmp_path, rows, columns=COLUMNS, name="cards.csv"):
    path = tmp_path / name
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def row_of(card: int) -> int:
    return card + 2


def bad(tmp_path, rows, match, columns=COLUMNS):
    path = write(tmp_path, rows, columns)
    with pytest.raises(ValueError, match=match) as info:
        load(path)
    return str(info.value)


# ------------------------------------------------------------ the default

def test_default_catalogue_loads_172_cards():
    cat = load()
    assert load(None) is cat and load(cards.DEFAULT_PATH) is not cat  # a path is loaded afresh
    assert len(cat.names) == NUM_CARDS
    for column in ("board", "kind", "good", "quantity", "destination", "reward", "cost", "vp", "money", "value"):
        assert getattr(cat, column).shape == (NUM_CARDS,)
        assert not getattr(cat, column).flags.writeable


def test_R_COMP_2_counts_per_board_and_kind():
    cat = load()
    found = Counter((BOARD_CODES[b], KINDS[k]) for b, k in zip(cat.board, cat.kind))
    expected = Counter({(board, kind): n for board, kinds in R_COMP_2.items() for kind, n in kinds.items()})
    assert found == expected
    assert [len(cat.board_cards[b]) for b in range(4)] == [38, 42, 42, 38]


def test_R_COMP_2_ships_gold_goods_and_starting_contracts():
    cat = load()
    ship, gold, goods = KINDS.index("ship"), KINDS.index("gold"), KINDS.index("goods")
    assert Counter(cat.destination[cat.kind == ship].tolist()) == {d: 3 for d in range(len(DESTINATIONS))}
    assert Counter(cat.quantity[cat.kind == gold].tolist()) == {1: 5, 2: 5}
    assert Counter(cat.good[cat.kind == goods].tolist()) == {g: 7 for g in range(len(GOODS))}
    start = cat.board == BOARD_CODES.index("start")
    assert Counter(cat.good[start].tolist()) == {g: 3 for g in range(len(GOODS))}


def test_R_COMP_2_contract_numbers():
    """Contract number k: ids 0-23 (guildhall) then 160-171 (starting contracts), as the action layout uses."""
    cat = load()
    expected = list(range(24)) + list(range(160, 172))
    assert cat.contract_ids.tolist() == expected
    assert len(expected) == cards.NUM_CONTRACTS == actions.SHIP - actions.ADD_CONTRACT
    for k, c in enumerate(expected):
        assert cat.contract_number[c] == k
    assert (np.delete(cat.contract_number, expected) == -1).all()
    assert cat.start_contracts.tolist() == list(range(160, 172))


def test_printed_values_of_the_rulebook():
    """The values CARDS.md reproduces from the rulebook."""
    cat = load()
    by_name = {}
    for c, name in enumerate(cat.names):
        by_name.setdefault(name, []).append(c)

    def one(name):
        return by_name[name][0]

    assert (cat.cost[one("university")], cat.vp[one("university")]) == (18, 4)
    assert cat.cost[one("library")] == 15
    assert cat.cost[one("tobacco_1")] == 2 and cat.cost[one("tobacco_3")] == 10 and cat.cost[one("fur_2")] == 6
    assert cat.cost[one("gold_single")] == 4 and cat.cost[one("gold_double")] == 9
    assert 4 in cat.money.tolist()
    assert cat.reward[one("contract_3_cotton_netherlands")] == 25
    contracts = cat.contract_ids
    assert cat.reward[contracts].min() == 15 and cat.reward[contracts].max() == 35
    assert "start_3_fur_spain" in by_name
    shipment = np.isin(cat.kind, [KINDS.index(k) for k in ("ship", "captain", "gold", "goods", "trader")])
    assert (cat.value[shipment] >= 1).all()  # R-SHIP-7 needs positive values


# ------------------------------------------------------ a custom catalogue

def test_a_custom_catalogue_loads_and_the_game_uses_it(tmp_path):
    rows = default_rows()
    for row in rows:  # every market card that has a price (R-TAKE-3) now costs more than a player's starting $25
        if row["board"] == "market" and row["kind"] in ("goods", "building"):
            row["cost"] = "26"
    rows[36]["vp"] = "9"  # a university worth 9 VP
    path = write(tmp_path, rows)
    cat = load(path)
    priced = (cat.board == 2) & (cat.kind != cards.TRADER)
    assert cat.vp[36] == 9 and (cat.cost[priced] == 26).all() and (cat.cost[cat.board == 2][~priced[cat.board == 2]] == 0).all()

    game = Game.new(3, seed=4, cards=path)
    assert game.cards.vp[36] == 9
    game.step(actions.CHOOSE_BOARD + 2)  # the market
    mask = game.legal_action_mask()
    supply = game.to_dict()["boards"][2]
    for slot, c in enumerate(supply["current"]):
        assert mask[actions.TAKE + slot] == (c is not None and cat.kind[c] == cards.TRADER), "a $26 card was takeable"
    assert mask[actions.PASS]

    default = Game.new(3, seed=4)  # the default catalogue is untouched
    assert default.cards.vp[36] == 4
    default.step(actions.CHOOSE_BOARD + 2)
    assert default.legal_action_mask()[actions.TAKE:actions.TAKE + 2].any()

    again = Game.from_dict(json.loads(json.dumps(game.to_dict())), cards=path)
    assert again.cards.vp[36] == 9 and np.array_equal(again.legal_action_mask(), mask)
    assert Game.new(3, seed=4, cards=cat).cards is cat


def test_from_dict_validates_against_the_catalogue_it_is_given(tmp_path):
    """Swap the kinds of card 38 (a ship) and 56 (a captain): a valid catalogue where 56 is a ship."""
    rows = default_rows()
    rows[38].update(kind="captain", name="captain", destination="", value="3")
    rows[56].update(kind="ship", name="ship_great_britain", destination="great_britain", value="1")
    path = write(tmp_path, rows)
    d = Game.new(3, seed=1, cards=path).to_dict()
    for pile in [board[key] for board in d["boards"] for key in ("deck", "discard")] + [d["removed"]]:
        if 56 in pile:
            pile.remove(56)
    for board in d["boards"]:
        for key in ("current", "future"):
            if 56 in board[key]:
                board[key][board[key].index(56)] = None
    d["players"][1]["ships"].append(56)
    assert Game.from_dict(d, cards=path).ships(1) == [56]
    with pytest.raises(ValueError, match=r"card 56 \(captain\) is listed in player 1's ships but is not a ship"):
        Game.from_dict(d)


def test_whitespace_around_values_is_accepted(tmp_path):
    rows = default_rows()
    rows[0]["good"] = " grain "
    rows[29]["cost"] = " 6"
    assert load(write(tmp_path, rows)).cost[29] == 6


def test_a_bad_catalogue_is_rejected_by_game_new(tmp_path):
    rows = default_rows()
    rows[24]["kind"] = "wizard"
    with pytest.raises(ValueError, match=r"row 26, column 'kind'"):
        Game.new(3, seed=0, cards=write(tmp_path, rows))


# ------------------------------------------------------------- bad files

def test_unknown_kind(tmp_path):
    rows = default_rows()
    rows[24]["kind"] = "wizard"
    bad(tmp_path, rows, r"row 26, column 'kind': unknown value 'wizard'")


def test_unknown_board(tmp_path):
    rows = default_rows()
    rows[40]["board"] = "harbour"
    bad(tmp_path, rows, r"row 42, column 'board': unknown value 'harbour'")


def test_unknown_good(tmp_path):
    rows = default_rows()
    rows[80]["good"] = "coffee"
    bad(tmp_path, rows, r"row 82, column 'good': unknown value 'coffee'")


def test_unknown_destination(tmp_path):
    rows = default_rows()
    rows[40]["destination"] = "atlantis"
    bad(tmp_path, rows, r"row 42, column 'destination': unknown value 'atlantis'")


def test_contract_without_destination(tmp_path):
    rows = default_rows()
    rows[5]["destination"] = ""
    bad(tmp_path, rows, r"row 7, column 'destination': a contract needs a destination")


def test_starting_contract_without_good(tmp_path):
    rows = default_rows()
    rows[165]["good"] = ""
    bad(tmp_path, rows, r"row 167, column 'good': a contract needs a good")


def test_contract_with_zero_quantity(tmp_path):
    rows = default_rows()
    rows[3]["quantity"] = "0"
    bad(tmp_path, rows, r"row 5, column 'quantity'")


def test_ship_without_destination(tmp_path):
    rows = default_rows()
    rows[50]["destination"] = ""
    bad(tmp_path, rows, r"row 52, column 'destination': a ship needs a destination")


def test_gold_with_a_bad_quantity(tmp_path):
    rows = default_rows()
    rows[66]["quantity"] = "3"
    bad(tmp_path, rows, r"row 68, column 'quantity'")


def test_money_card_worth_nothing(tmp_path):
    rows = default_rows()
    rows[122]["money"] = "0"
    bad(tmp_path, rows, r"row 124, column 'money'")


@pytest.mark.parametrize("text", ["six", "6.5", "1e2", "6$"])
def test_non_integer_number(tmp_path, text):
    rows = default_rows()
    rows[29]["cost"] = text
    bad(tmp_path, rows, rf"row 31, column 'cost': expected a whole number, found '{re.escape(text)}'")


@pytest.mark.parametrize("column", ["cost", "vp", "reward", "quantity", "money", "value"])
def test_negative_number(tmp_path, column):
    rows = default_rows()
    rows[29][column] = "-6"
    bad(tmp_path, rows, rf"row 31, column '{column}': must not be negative")


@pytest.mark.parametrize("card,kind", [(38, "ship"), (56, "captain"), (61, "gold"), (80, "goods"),
                                       (108, "trader")])
@pytest.mark.parametrize("value", ["0", ""])
def test_zero_value_on_a_shipment_card(tmp_path, card, kind, value):
    rows = default_rows()
    rows[card]["value"] = value
    bad(tmp_path, rows, rf"row {row_of(card)}, column 'value': a {kind} card can pay for a shipment")


def test_zero_value_is_fine_on_other_cards(tmp_path):
    rows = default_rows()
    for c in (24, 29, 122, 146):  # assistant, building, money, banker
        rows[c]["value"] = "0"
    assert load(write(tmp_path, rows)).value[29] == 0


def test_wrong_id_order(tmp_path):
    rows = default_rows()
    rows[1]["id"], rows[2]["id"] = rows[2]["id"], rows[1]["id"]
    bad(tmp_path, rows, r"row 3, column 'id': expected id 1")


def test_non_numeric_id(tmp_path):
    rows = default_rows()
    rows[0]["id"] = "zero"
    bad(tmp_path, rows, r"row 2, column 'id'")


def test_missing_column(tmp_path):
    columns = [c for c in COLUMNS if c != "value"]
    message = bad(tmp_path, default_rows(), r"row 1", columns=columns)
    assert "missing: ['value']" in message


def test_extra_column(tmp_path):
    rows = default_rows()
    for row in rows:
        row["colour"] = "red"
    message = bad(tmp_path, rows, r"row 1", columns=list(COLUMNS) + ["colour"])
    assert "unknown: ['colour']" in message


def test_duplicated_column(tmp_path):
    path = tmp_path / "cards.csv"
    lines = cards.DEFAULT_PATH.read_text(encoding="utf-8").splitlines()
    lines = [line + "," + line.split(",")[-1] for line in lines]  # repeat the value column
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"row 1"):
        load(path)


def test_a_row_with_an_extra_cell(tmp_path):
    path = tmp_path / "cards.csv"
    lines = cards.DEFAULT_PATH.read_text(encoding="utf-8").splitlines()
    lines[30] += ",7"  # card 29, row 31
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"row 31"):
        load(path)


def test_a_row_with_a_missing_cell(tmp_path):
    path = tmp_path / "cards.csv"
    lines = cards.DEFAULT_PATH.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].rsplit(",", 1)[0]  # card 1, row 3: drop its value cell
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"row 3"):
        load(path)


@pytest.mark.parametrize("count", [171, 173])
def test_wrong_number_of_rows(tmp_path, count):
    rows = default_rows()
    rows = rows[:count] if count < NUM_CARDS else rows + [dict(rows[-1], id=str(NUM_CARDS))]
    bad(tmp_path, rows, rf"exactly 172 card rows .*found {count}")


def test_an_empty_file(tmp_path):
    path = tmp_path / "cards.csv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"row 1"):
        load(path)


@pytest.mark.parametrize("card,board", [
    (38, "guildhall"),  # a ship: the guildhall may hold no ships
    pytest.param(71, "guildhall"),  # a docks church: 10 guildhall buildings, 8 on the docks
    pytest.param(56, "start"),  # a captain among the starting contracts: 4 captains left
    (130, "market"),  # a money card: the market may hold none
])
def test_R_COMP_2_a_card_moved_to_another_board_names_its_row(tmp_path, card, board):
    rows = default_rows()
    rows[card]["board"] = board
    bad(tmp_path, rows, rf"row {row_of(card)}, column '(board|kind)'")


def test_R_COMP_2_a_building_moved_to_another_board(tmp_path):
    rows = default_rows()
    rows[71]["board"] = "guildhall"
    bad(tmp_path, rows, r"board 'guildhall' must hold 9 building cards \(R-COMP-2\), found 10")


def test_R_COMP_2_an_assistant_turned_into_a_building(tmp_path):
    rows = default_rows()
    rows[24].update(kind="building", cost="6", vp="1")
    bad(tmp_path, rows, r"R-COMP-2.*found 4|R-COMP-2.*found 10")


def test_R_COMP_2_another_split_of_the_18_ships_loads_and_plays(tmp_path):
    """R-COMP-2: 18 ships are printed, the split by destination is not: a user's other split loads."""
    rows = default_rows()
    ship_rows = [r for r in rows if r["kind"] == "ship"]
    for r, dest in zip(ship_rows, ["france"] * 6 + ["spain"] * 5 + ["sweden"] * 4 + ["netherlands"] * 2 + ["great_britain"]):
        r["destination"] = dest
    cat = load(write(tmp_path, rows))
    ships = cat.destination[cat.kind == cards.SHIP]
    assert Counter(ships.tolist()) == {1: 6, 4: 5, 3: 4, 2: 2, 0: 1}
    game = Game.new(4, seed=1, cards=cat)
    while not game.is_over:
        game.step(game.legal_actions()[-1])
    assert Game.from_dict(game.to_dict(), cards=cat).is_over


def test_R_COMP_2_the_docks_hold_18_ships(tmp_path):
    rows = default_rows()
    rows[38].update(kind="captain", destination="", name="captain")  # 17 ships, 6 captains
    bad(tmp_path, rows, r"column 'board': board 'docks' must hold 5 captain cards \(R-COMP-2\), found 6")
    rows[38].update(kind="trader")  # 17 ships and a trader on the docks
    bad(tmp_path, rows, r"row 40, column 'kind': board 'docks' holds no 'trader' cards")


def test_R_COMP_2_single_and_double_gold(tmp_path):
    rows = default_rows()
    rows[61].update(quantity="2", name="gold_double")
    bad(tmp_path, rows, r"row 72, column 'quantity': there must be 5 double gold nuggets \(R-COMP-2\), found 6")


def test_R_COMP_2_goods_per_good(tmp_path):
    rows = default_rows()
    rows[80]["good"] = "cotton"
    bad(tmp_path, rows, r"row 95, column 'good': there must be 7 cotton goods cards \(R-COMP-2\), found 8")


def test_R_COMP_2_starting_contracts_per_good(tmp_path):
    rows = default_rows()
    rows[160]["good"] = "cotton"
    bad(tmp_path, rows, r"row 167, column 'good': there must be 3 cotton starting contracts \(R-COMP-2\), found 4")


# ------------------------------------------------------------ issue 11: every column checked against the kind

@pytest.mark.parametrize("card,column,value", [
    (0, "money", "20"),  # item 7 (money 200): money on a contract counted toward the budget, then could not be paid
    (0, "cost", "5"),  # R-TAKE-3: contracts are free
    (38, "vp", "3"),  # only buildings score
    (29, "reward", "10"),  # only contracts pay
    (24, "quantity", "2"),  # an assistant has no units
    (80, "destination", "france"),  # goods have no destination
    (38, "good", "fur"),  # ships carry no good
])
def test_issue_11_7_columns_only_on_the_kinds_they_belong_to(tmp_path, card, column, value):
    rows = default_rows()
    rows[card][column] = value
    bad(tmp_path, rows, rf"row {row_of(card)}, column '{column}': a {rows[card]['kind']} card has no {column}")


def test_a_contract_pays_a_reward(tmp_path):
    rows = default_rows()
    rows[3]["reward"] = "0"
    bad(tmp_path, rows, r"row 5, column 'reward': a contract pays a reward of at least 1")


@pytest.mark.parametrize("column,text,match", [
    ("cost", "40000", r"must be at most 100, found 40000"),  # item 8: was OverflowError (int16)
    ("cost", "9" * 30, r"expected a whole number, found '9{30}'"),  # item 8: was OverflowError (C long)
    ("vp", "21", r"must be at most 20"),
    ("cost", "１２", r"expected a whole number"),  # digits of another script
    ("cost", "+6", r"expected a whole number"),
    ("cost", "6_0", r"expected a whole number"),
])
def test_issue_11_8_numbers_out_of_range_are_value_errors(tmp_path, column, text, match):
    rows = default_rows()
    rows[29][column] = text
    message = bad(tmp_path, rows, rf"row 31, column '{column}': {match}")
    assert len(message) < 400


def test_issue_11_8_a_huge_cell_is_a_value_error_naming_row_and_column(tmp_path):
    """Issue 11 item 8: a 200,000-character cell raised _csv.Error: field larger than field limit."""
    rows = default_rows()
    rows[29]["name"] = "x" * 200_000
    message = bad(tmp_path, rows, r"row 31, column 'name': a cell of 200000 characters")
    assert len(message) < 400


@pytest.mark.parametrize("content,match", [
    (b"id,board\xff\n", r"row 1: not UTF-8 text"),
    (b'id,board,kind\n"' + b"a\n" * 100_000, r"not a readable CSV file|row"),
    (b"x" * (2 << 20), r"at most 1048576 bytes"),
    (b"\x00\x00\x00\n", r"row 1"),
])
def test_unreadable_files_are_value_errors(tmp_path, content, match):
    path = tmp_path / "cards.csv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        load(path)


def test_a_long_name_is_refused(tmp_path):
    rows = default_rows()
    rows[29]["name"] = "y" * 101
    bad(tmp_path, rows, r"row 31, column 'name': a name has at most 100 characters")
