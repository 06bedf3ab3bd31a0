"""Every payment choosable (R-SHIP-7, issue 25): the options come in pages of MAX_PAYMENT_OPTIONS, ``more`` turns
to the next page, and every option of the two hands of the issue (16 and 22 options) is reached through the
actions, checked against the exhaustive enumeration of tests/test_payment.py; the batch, saved games, the agents
and the browser follow."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from packetrow_agents.base import Turns
from packetrow_agents.heuristic import HeuristicAgent
from packetrow_agents.heuristic_batch import heuristic_actions
from packetrow_agents.policy import NumpyPolicy, PolicyAgent
from packetrow_env import actions
from packetrow_env.compact_observation import ENCODINGS, encoder_for
from packetrow_env.engine import Game, IllegalActionError
from packetrow_env.knowledge import MODES
from packetrow_env.observation import encoder
from packetrow_env.render import describe_action
from packetrow_env.seat_view import SeatView
from packetrow_env.vector import VectorGame
from tests.positions import CARDS, Position, add
from tests.test_payment import brute_options
from tests.test_policy_versions import V1_MODEL
from tests.test_shipping import captain, contract, gold, goods_card, ship, trader
from tests.test_vector import same_observations

K, MORE, PAY = actions.MAX_PAYMENT_OPTIONS, actions.MORE, actions.PAY
FUR_4_NL = contract("fur", 4, "netherlands")
SHIPS = (ship("netherlands"), ship("france"))
# The issue's hand: 4 fur to the Netherlands with fur 1, 2 and 3, a single and a double nugget, a trader, cotton 2
# and a captain, ships to the Netherlands and France: 22 options. Without the cotton and with a second fur 2: 16.
HAND_22 = (goods_card("fur", 1), goods_card("fur", 2), goods_card("fur", 3), gold(1), gold(2), trader(),
           goods_card("cotton", 2), captain())
HAND_16 = (goods_card("fur", 1), goods_card("fur", 2), goods_card("fur", 2, 1), goods_card("fur", 3), gold(1), gold(2),
           trader(), captain())


def paying(hand) -> Game:
    """Seat 0 has staged and shipped 4 fur to the Netherlands holding ``hand`` and the two ships: phase pay."""
    pos = Position(4, seed=0)
    pos.hand(0, FUR_4_NL, *hand).ships(0, *SHIPS)
    game = pos.game()
    game.step(add(FUR_4_NL))
    game.step(actions.SHIP)
    assert game.phase == "pay" and game.current_player == 0 and game.payment_page == 0
    return game


def on_page(game: Game, page: int) -> Game:
    game = game.clone()
    for _ in range(page):
        game.step(MORE)
    return game


def check_page(game: Game) -> None:
    """The page shown is options K*page .. of the whole list; pay:k for each, and more while options follow."""
    options, page = game.payment_options(), game.payment_page
    shown = game.payment_page_options()
    assert shown == options[K * page:K * page + K] and shown
    more = K * page + K < len(options)
    assert game.legal_actions() == [PAY + k for k in range(len(shown))] + ([MORE] if more else [])


@pytest.mark.parametrize("hand,count", [(HAND_16, 16), (HAND_22, 22)])
def test_R_SHIP_7_every_option_of_the_issues_hands_is_reached_through_the_actions(hand, count):
    """Each option j: ``more`` j // K times, then pay:(j % K) discards exactly that option; all of them, in order,
    are the exhaustive enumeration's."""
    game = paying(hand)
    expected = brute_options(CARDS, list(hand) + list(SHIPS), [FUR_4_NL])
    assert len(expected) == count and game.payment_options() == expected
    reached = []
    for j in range(count):
        g = game.clone()
        for _ in range(j // K):
            check_page(g)
            g.step(MORE)
        check_page(g)
        assert g.payment_page == j // K
        held = set(g.hand(0) + g.ships(0))
        cash = int(g.state.cash[0])
        g.step(PAY + j % K)
        assert g.phase == "choose_board" and g.payment_page == 0 and g.payment_options() == []
        assert int(g.state.cash[0]) == cash + int(CARDS.reward[FUR_4_NL])
        reached.append(tuple(sorted(held - set(g.hand(0) + g.ships(0)) - {FUR_4_NL})))
    assert reached == expected


def test_R_SHIP_7_the_options_that_keep_all_the_fur_are_choosable():
    """Every option keeping all the fur (for a second fur contract) lay beyond the first 12, cut before issue 25;
    the one of them that also keeps the France ship and the single nugget is reached with more, then pay:3."""
    furs = {goods_card("fur", 1), goods_card("fur", 2), goods_card("fur", 3)}
    game = paying(HAND_22)
    options = game.payment_options()
    keeping = [j for j, option in enumerate(options) if not furs & set(option)]
    assert len(keeping) == 2 and min(keeping) >= K
    best = [j for j in keeping if not {ship("france"), gold(1)} & set(options[j])]
    assert best == [K + 3]
    game.step(MORE)
    game.step(PAY + 3)
    assert furs | {gold(1)} <= set(game.hand(0)) and game.ships(0) == [ship("france")]


@pytest.mark.parametrize("where,bad", [("last page", MORE), ("last page", PAY + 22 - K), ("last page", 0),
                                       ("first page", actions.SHIP), ("first page", actions.NUM_ACTIONS)])
def test_R_SHIP_7_an_illegal_pay_or_more_action_changes_nothing(where, bad):
    game = on_page(paying(HAND_22), 1 if where == "last page" else 0)
    before = json.dumps(game.to_dict())
    legal = ", ".join(f"{a} ({actions.NAMES[a]})" for a in game.legal_actions())
    match = "out of range" if bad >= actions.NUM_ACTIONS else f"not legal for player 0 in phase pay; legal actions: {legal}$"
    with pytest.raises(IllegalActionError, match=match.replace("(", r"\(").replace(")", r"\)")):
        game.step(bad)
    assert json.dumps(game.to_dict()) == before
    game.step(PAY)  # and the game goes on


def test_more_is_illegal_outside_phase_pay():
    game = Position(4, seed=0).game()
    with pytest.raises(IllegalActionError, match=r"action 60 \(more\) is not legal for player 0 in phase choose_board"):
        game.step(MORE)
    assert actions.name(MORE) == "more" and actions.parse("more") == MORE == actions.NUM_ACTIONS - 1


@pytest.mark.parametrize("page", [0, 1])
def test_R_SHIP_7_a_pay_decision_on_any_page_saves_and_loads(page):
    game = on_page(paying(HAND_22), page)
    saved = json.loads(json.dumps(game.to_dict()))
    assert saved["version"] == 3 and saved["phase"] == "pay" and saved["payment_page"] == page
    loaded = Game.from_dict(saved)
    assert loaded.payment_page == page and loaded.payment_page_options() == game.payment_page_options()
    assert np.array_equal(loaded.legal_action_mask(), game.legal_action_mask())
    assert loaded.to_dict() == saved
    for g in (game, loaded):
        g.step(PAY + 3)
    assert loaded.to_dict() == game.to_dict()


def test_version_2_saved_pay_decisions_load_on_the_first_page():
    saved = on_page(paying(HAND_22), 1).to_dict()
    v2 = {k: v for k, v in saved.items() if k != "payment_page"}
    v2["version"] = 2
    assert Game.from_dict(v2).to_dict() == dict(saved, payment_page=0)


@pytest.mark.parametrize("value,match", [
    (2, r"in phase pay, payment_page must be from 0 to 1, got 2"),
    (-1, r"in phase pay, payment_page must be from 0 to 1, got -1"),
    ("1", r"in phase pay, payment_page must be an integer, got '1'"),
    (None, r"in phase pay, payment_page must be an integer, got None"),
])
def test_saved_payment_pages_are_validated(value, match):
    saved = paying(HAND_22).to_dict()
    saved["payment_page"] = value
    kept = copy.deepcopy(saved)
    with pytest.raises(ValueError, match=match):
        Game.from_dict(saved)
    assert saved == kept


def test_a_payment_page_outside_phase_pay_is_rejected():
    saved = Position(4, seed=0).game().to_dict()
    saved["payment_page"] = 0
    with pytest.raises(ValueError, match=r"payment_page must be null outside phase pay, got 0"):
        Game.from_dict(saved)


def test_the_batch_pages_as_the_game_does():
    """VectorGame from pay decisions of 16 and 22 options, played on at random with ``more`` pressed often: masks,
    pages, options, observations and positions equal the single engine's at every step."""
    games = [paying(HAND_22), paying(HAND_16), on_page(paying(HAND_22), 1), on_page(paying(HAND_16), 1)]
    vg = VectorGame.from_games([g.clone() for g in games])
    rng = np.random.default_rng(25)
    pressed = 0
    for _ in range(40):
        mask = vg.legal_action_mask()
        for i, g in enumerate(games):
            assert np.array_equal(mask[i], g.legal_action_mask()), i
            assert vg.payment_page_options(i) == g.payment_page_options()
            assert vg.payment_options(i) == g.payment_options()
            assert vg.batch.payment_page[i] == g.payment_page
        same_observations(vg, games)
        weight = np.where(mask, rng.random(mask.shape), -1.0)
        weight[:, MORE] += 2.0 * mask[:, MORE]
        acts = weight.argmax(axis=1)
        pressed += int((acts == MORE).sum())
        vg.step(acts)
        for i, g in enumerate(games):
            if not g.is_over:
                g.step(int(acts[i]))
    assert pressed >= 2  # the two games on their first page turned it
    for i, g in enumerate(games):
        assert vg.game(i).to_dict() == g.to_dict()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_observation_shows_the_page_and_whether_more_follow(encoding):
    """``payment_page``: [more options follow, page p as p / (p + 1)], seen where the options are (the payer, and
    every seat but in table mode); the batch kernel writes the same floats, and the compact vector expands to it."""
    coder = encoder_for(encoding)
    games = [paying(HAND_22), on_page(paying(HAND_22), 1), paying(HAND_16), on_page(paying(HAND_16), 1)]
    shown = [[1.0, 0.0], [0.0, 0.5], [1.0, 0.0], [0.0, 0.5]]
    vg = VectorGame.from_games(games)
    for mode in MODES:
        for seat in (0, 1):
            batched = vg.observe(mode, seats=np.full(len(games), seat), encoding=encoding)
            for i, game in enumerate(games):
                vector = coder.encode(game, seat, mode)
                assert batched[i].tobytes() == vector.tobytes(), (mode, seat, i)
                piece = coder.split(vector)["payment_page"].tolist()
                assert piece == (shown[i] if seat == 0 or mode != "table" else [0.0, 0.0]), (mode, seat, i)
                if encoding == "compact":
                    assert encoder().split(coder.expand(vector))["payment_page"].tolist() == piece


def test_the_heuristic_chooses_on_the_page_shown_in_both_forms():
    games = [on_page(paying(hand), page) for hand in (HAND_16, HAND_22) for page in (0, 1)]
    vg = VectorGame.from_games(games)
    got = heuristic_actions(vg, np.arange(len(games)), "tracked", np.random.default_rng(0))
    for i, game in enumerate(games):
        action = HeuristicAgent().act(SeatView(game))
        assert got[i] == action and PAY <= action < PAY + len(game.payment_page_options())


def test_a_policy_of_the_v1_layout_plays_on_through_its_prefix():
    """A policy exported for 60 actions (no ``more``) pays on the page shown, alone and batched with others."""
    rng = np.random.default_rng(0)
    size = encoder().size_of("tracked")
    policy = NumpyPolicy([rng.normal(size=(size, 8)).astype(np.float32)], [np.zeros(8, np.float32)],
                         rng.normal(size=(8, actions.NUM_ACTIONS_V1)).astype(np.float32),
                         np.zeros(actions.NUM_ACTIONS_V1, np.float32))
    agent = PolicyAgent(policy=policy)
    for game in (paying(HAND_22), on_page(paying(HAND_22), 1)):
        action = agent.act(SeatView(game))
        assert game.legal_action_mask()[action] and PAY <= action < MORE
    shipped = PolicyAgent.load(V1_MODEL)  # the agent shipped until env v2's
    assert shipped.policy.num_actions == actions.NUM_ACTIONS_V1
    action = shipped.act(SeatView(on_page(paying(HAND_16), 1)))
    assert PAY <= action < PAY + 16 - K
    vg = VectorGame.from_games([paying(HAND_22), on_page(paying(HAND_16), 1), Game.new(3, seed=1)])
    rows = np.arange(3)
    turns = Turns(vg, rows, vg.current_player[rows], np.array([0, 1, 0]), vg.legal_action_mask(), "tracked",
                  "compact", np.random.default_rng(0))
    got = PolicyAgent.act_batch([shipped, agent], turns)
    assert got.tolist() == [[shipped, agent][p].act(turns.view(k)) for k, p in enumerate(turns.player.tolist())]
    assert turns.masks[rows, got].all() and (got < MORE).all()


def test_the_texts_and_the_browser_offer_more():
    pytest.importorskip("flask")
    from packetrow_web.views import action_json

    game = paying(HAND_22)
    assert describe_action(game, MORE) == "show the next payment options (13-22 of 22)"
    view = SeatView(game)
    more = action_json(view, MORE)
    assert more["group"] == "more" and more["name"] == "more"
    game.step(MORE)
    view = SeatView(game)
    pays = [action_json(view, a) for a in game.legal_actions()]
    assert [p["group"] for p in pays] == ["pay"] * 10 and [p["option"] for p in pays] == list(range(12, 22))
    assert [[c["name"] for c in p["payment"]] for p in pays] == \
        [[CARDS.describe(c) for c in option] for option in game.payment_options()[K:]]
    assert describe_action(game, MORE) == "show more payment options (there are no more now)"
