"""Legal moves as strings (packetrow_env.move_text) and the reader of replies (packetrow_env.move_reader): every
string unique and read back as its move, and the recorded reply styles of language models read (at least 95% of
the readable ones, none misread) or refused with their reason."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from packetrow_env import Game, actions
from packetrow_env.move_reader import read_move
from packetrow_env.move_text import LegalMoves, move_text
from packetrow_env.seat_view import SeatView
from packetrow_env.view_formats import MOVES_HEADING, view_json, view_text

REPLIES = json.loads((Path(__file__).parent / "data" / "llm_replies.json").read_text())


def position(name: str) -> Game:
    """A recorded position of the reply styles' file."""
    recorded = REPLIES["positions"][name]
    game = Game.new(recorded["players"], seed=recorded["seed"])
    for action in recorded["actions"]:
        game.step(action)
    return game


def random_positions(games: int, seed: int = 0):
    """The positions of random games of 2-5 players (every kind of decision comes up)."""
    rng = np.random.default_rng(seed)
    for index in range(games):
        game = Game.new(2 + index % 4, seed=index)
        while not game.is_over:
            yield game
            game.step(int(rng.choice(game.legal_actions())))


def test_every_legal_move_has_a_unique_string_read_back_as_that_move():
    seen = set()
    for game in random_positions(4):
        moves = LegalMoves(SeatView(game))
        assert moves.actions == game.legal_actions()
        assert len(set(moves.texts)) == len(moves.texts)
        keys = [text.partition(": ")[0] for text in moves.texts]
        assert len(set(keys)) == len(keys)
        for index, (action, text) in enumerate(zip(moves.actions, moves.texts)):
            seen.add(actions.name(action).split(":")[0])
            assert move_text(game, action) == text  # a Game and its seat's view give the same string
            for reply in (text, keys[index], str(index + 1), f"Move: {text.upper()}"):
                assert moves.read(reply).index == index, (reply, moves.texts)
    assert {"choose", "take", "pass", "contract", "ship", "pay"} <= seen


def test_the_move_strings_say_what_each_move_does():
    take = LegalMoves(SeatView(position("take"))).texts
    assert take[:2] == ["take slot 0 of the market: church (1 VP) ($6)", "take slot 1 of the market: 3 fur ($10)"]
    assert "add contract 23: 2 tobacco to the German Confederation for $15" in take
    pay = LegalMoves(SeatView(position("pay"))).texts
    assert pay[0] == "pay with option 1: 1 grain, 1 tobacco, captain, ship to the Netherlands, trader"
    choose = LegalMoves(SeatView(position("choose"))).texts
    assert choose[0] == "choose the guildhall: its refill at the end of this round ends the game"


def test_a_page_of_payment_options_numbers_them_among_all_and_more_says_which_come_next():
    """Option numbers count over all the pages (from 1); 'more' names the next page's."""
    for game in random_positions(200, seed=1):
        if game.phase == "pay" and game.legal_action_mask()[actions.MORE]:
            break
    else:
        pytest.skip("no shipment with a second page of payment options in these games")
    total = len(game.payment_options())
    assert move_text(game, actions.MORE) == f"show more payment options: 13-{min(24, total)} of {total}"
    game.step(actions.MORE)
    assert move_text(game, actions.PAY).startswith("pay with option 13: ")


def test_the_recorded_reply_styles_are_read_or_refused_with_their_reason():
    """The acceptance of issue 48: at least 50 styles; at least 95% of the readable ones read, none misread, and
    every reply that names no single legal move refused with its reason."""
    moves = {name: LegalMoves(SeatView(position(name))) for name in REPLIES["positions"]}
    readable = [r for r in REPLIES["replies"] if r["expect"] is not None]
    refused = [r for r in REPLIES["replies"] if r["expect"] is None]
    assert len(REPLIES["replies"]) >= 50 and len(refused) >= 15
    read = misread = 0
    for reply in readable:
        listed = moves[reply["position"]]
        reading = listed.read(reply["reply"])
        if reading.index is None:
            assert reading.error, reply  # a reply it cannot read is refused with its reason
            continue
        key = listed.texts[reading.index].partition(": ")[0]
        read += key == reply["expect"]
        misread += key != reply["expect"]
    assert misread == 0
    assert read / len(readable) >= 0.95, f"read {read} of {len(readable)} readable replies"
    for reply in refused:
        reading = moves[reply["position"]].read(reply["reply"])
        assert reading.index is None and reply["reason"] in reading.error, (reply, reading)


@pytest.mark.parametrize("reply, rule", [
    ("take slot 1 of the market: 3 fur ($10)", "string"), ("take slot 1 of the market", "key"), ("2", "number"),
    ("3 fur", "detail"), ("take:1", "name"), ("take slot 1", "prefix"), ("I take slot 1 of the market now", "inside"),
    ("take slot 1 of markt", "fuzzy")])
def test_each_rule_names_itself(reply, rule):
    reading = LegalMoves(SeatView(position("take"))).read(reply)
    assert reading == (1, rule, "")


def test_the_most_telling_reason_is_given():
    texts = LegalMoves(SeatView(position("take"))).texts
    assert read_move("Move: 12\nI think pass is bad", texts).error == "there is no move 12: the moves are numbered 1-5"
    assert "closest is 'take slot 1 of the market: 3 fur ($10)'" in read_move("tkae slt 1 of teh mrkt", texts).error
    with pytest.raises(ValueError, match="no moves"):
        read_move("pass", [])


def test_a_long_reply_is_read_from_its_end():
    texts = LegalMoves(SeatView(position("take"))).texts
    assert read_move("thinking... " * 5000 + "\nMove: pass", texts).index == 3


def test_the_view_as_text_lists_the_moves_numbered_and_as_json_holds_them():
    view = SeatView(position("take"))
    text = view_text(view)
    assert f"{MOVES_HEADING}\n1. take slot 0 of the market: church (1 VP) ($6)" in text
    assert "legal actions:" not in text  # action ids would be mistaken for the list's numbers
    data = view_json(view)
    assert json.loads(json.dumps(data)) == data
    assert data["legal_moves"] == LegalMoves(view).texts and data["to_act"] == view.seat
    assert [board["name"] for board in data["boards"]] == ["guildhall", "docks", "market", "bank"]
    others = [player for player in data["players"] if player["seat"] != view.seat]
    assert "hand" in data["players"][view.seat] and all("hand" not in player for player in others)


def test_the_views_of_a_seat_not_to_act_list_no_moves_and_a_finished_game_has_its_scores():
    game = position("take")
    other = (game.current_player + 1) % game.num_players
    assert MOVES_HEADING not in view_text(SeatView(game, other))
    assert "legal_moves" not in view_json(SeatView(game, other))
    rng = np.random.default_rng(0)
    while not game.is_over:
        game.step(int(rng.choice(game.legal_actions())))
    data = view_json(SeatView(game, 0))
    assert data["game_over"] and [row["vp"] for row in data["scores"]] == [row["vp"] for row in game.scores()]
