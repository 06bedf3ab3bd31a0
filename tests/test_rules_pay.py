"""Rule tests: the player chooses how to pay (R-SHIP-7) and what a shipment pays (R-SHIP-8), through the engine,
its saved games, the observation and the agents."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from packetrow_agents.heuristic import HeuristicAgent, choose_payment
from packetrow_agents.policy import NumpyPolicy, PolicyAgent
from packetrow_env import actions, payment
from packetrow_env.engine import Game, IllegalActionError
from packetrow_env.observation import OPTION_FEATURES, ROUND_SCALE_V0, encoder
from packetrow_env.seat_view import SeatView
from packetrow_env.state import DISCARD
from packetrow_env.cards import DOCKS, MARKET
from tests.positions import CARDS, Position, place
from tests.test_shipping import captain, contract, gold, goods_card, ship

COTTON_FRANCE = contract("cotton", 2, "france")
FUR_GB = contract("fur", 2, "great_britain")
GB, SPAIN, CAPTAIN, COTTON_2 = ship("great_britain"), ship("spain"), captain(), goods_card("cotton", 2)
START_GRAIN_SWEDEN = CARDS.names.index("start_2_grain_sweden")
GB_OPTION = tuple(sorted((GB, CAPTAIN, COTTON_2)))
SPAIN_OPTION = tuple(sorted((SPAIN, CAPTAIN, COTTON_2)))


def add(contract_id: int) -> int:
    return actions.ADD_CONTRACT + int(CARDS.contract_number[contract_id])


def issue_position(phase: str = "choose_board") -> Position:
    """The position of issue 12: seat 0 holds 2 cotton to France and 2 fur to Great Britain, one cotton_2 and
    one captain, with ships to Great Britain and Spain."""
    pos = Position(4, seed=0)
    pos.starting_contract(0, START_GRAIN_SWEDEN)  # the deal's fur to Spain would make the Spain ship worth more
    pos.hand(0, COTTON_FRANCE, FUR_GB, COTTON_2, CAPTAIN).ships(0, GB, SPAIN)
    if phase == "take":
        pos.turn("take", player=0, chosen=[MARKET], taken=[1, 2, 3])
    elif phase == "must_take":
        pos.turn("must_take", player=0, chosen=[DOCKS, MARKET], taken=[1, 2, 3])
    return pos


def staged_and_shipped(phase: str = "choose_board") -> Game:
    game = issue_position(phase).game()
    game.step(add(COTTON_FRANCE))
    game.step(actions.SHIP)
    return game


def test_R_SHIP_7_the_reproduced_position_keeps_the_great_britain_ship():
    """Shipping the cotton contract offers both ships; paying with Spain + captain keeps the fur contract alive."""
    game = staged_and_shipped()
    assert game.phase == "pay" and game.current_player == 0
    assert game.payment_options() == sorted([GB_OPTION, SPAIN_OPTION])
    k = game.payment_options().index(SPAIN_OPTION)
    assert game.legal_actions() == [actions.PAY, actions.PAY + 1]
    cash = int(game.state.cash[0])
    game.step(actions.PAY + k)
    assert game.phase == "choose_board" and game.current_player == 0 and game.payment_options() == []
    assert place(game, GB) == ("ships", 0) and place(game, SPAIN) == ("discard", DOCKS)
    assert int(game.state.cash[0]) == cash + int(CARDS.reward[COTTON_FRANCE])  # R-SHIP-8
    for c in (COTTON_FRANCE, CAPTAIN, COTTON_2):
        assert int(game.state.location[c]) == DISCARD + (0 if CARDS.board[c] > 3 else int(CARDS.board[c]))
    # the fur contract still has its ship: with 2 fur it could be shipped
    assert payment.payment_options(CARDS, game.hand(0) + game.ships(0) + [goods_card("fur", 2)], [FUR_GB])


def test_R_SHIP_7_the_other_option_spends_the_great_britain_ship():
    game = staged_and_shipped()
    game.step(actions.PAY + game.payment_options().index(GB_OPTION))
    assert place(game, SPAIN) == ("ships", 0) and place(game, GB) == ("discard", DOCKS)


def test_R_SHIP_7_a_shipment_with_one_option_is_paid_at_once():
    """Without the Spain ship there is one option: ship pays at once, no pay phase."""
    pos = Position(4, seed=0)
    pos.hand(0, COTTON_FRANCE, COTTON_2, CAPTAIN).ships(0, GB)
    game = pos.game()
    game.step(add(COTTON_FRANCE))
    cash = int(game.state.cash[0])
    game.step(actions.SHIP)
    assert game.phase == "choose_board" and game.payment_options() == []
    assert int(game.state.cash[0]) == cash + int(CARDS.reward[COTTON_FRANCE])
    assert all(place(game, c)[0] == "discard" for c in (COTTON_FRANCE, COTTON_2, CAPTAIN, GB))
    assert not game.legal_action_mask()[actions.PAY:].any()


def test_R_SHIP_7_options_are_distinct_ordered_and_match_the_mask():
    pos = Position(4, seed=0)
    con = contract("cotton", 2, "france")
    hand = [con, goods_card("cotton", 1), goods_card("cotton", 1, 1), gold(1), goods_card("cotton", 2), CAPTAIN]
    pos.hand(0, *hand).ships(0, ship("france"), SPAIN)
    game = pos.game()
    game.step(add(con))
    game.step(actions.SHIP)
    options = game.payment_options()
    assert options == payment.payment_options(CARDS, game.hand(0) + game.ships(0), [con])
    assert len(options) == len(set(options)) >= 4
    keys = [(sum(int(CARDS.value[c]) for c in o), o) for o in options]
    assert keys == sorted(keys)
    assert game.legal_actions() == [actions.PAY + k for k in range(len(options))]
    assert [actions.parse(f"pay:{k}") for k in range(len(options))] == game.legal_actions()


@pytest.mark.parametrize("bad", ["beyond", actions.SHIP, actions.PASS, 0, actions.NUM_ACTIONS])
def test_R_SHIP_7_an_illegal_pay_action_changes_nothing(bad):
    game = staged_and_shipped()
    if bad == "beyond":
        bad = actions.PAY + len(game.payment_options())
    before = json.dumps(game.to_dict())
    with pytest.raises(IllegalActionError, match="phase pay"if bad < actions.NUM_ACTIONS else "out of range"):
        game.step(bad)
    assert json.dumps(game.to_dict()) == before
    game.step(actions.PAY)  # and the game goes on


@pytest.mark.parametrize("phase", ["choose_board", "take", "must_take"])
def test_R_SHIP_7_paying_resumes_the_phase_of_the_decision(phase):
    """A shipment never uses up the decision (R-SHIP-6): after paying, the same player is in the same phase."""
    game = staged_and_shipped(phase)
    assert game.to_dict()["resume_phase"] == phase
    mask_before = issue_position(phase).game()
    game.step(actions.PAY)
    assert game.phase == phase and game.current_player == mask_before.current_player
    assert game.state.current_board == mask_before.state.current_board


def test_R_SHIP_7_the_pay_phase_survives_save_and_load():
    game = staged_and_shipped("must_take")
    saved = json.loads(json.dumps(game.to_dict()))
    assert saved["version"] == 3 and saved["phase"] == "pay" and saved["resume_phase"] == "must_take"
    assert saved["payment_page"] == 0
    loaded = Game.from_dict(saved)
    assert loaded.payment_options() == game.payment_options()
    assert np.array_equal(loaded.legal_action_mask(), game.legal_action_mask())
    assert loaded.to_dict() == saved
    for g in (game, loaded):
        g.step(actions.PAY + 1)
    assert loaded.to_dict() == game.to_dict() and loaded.phase == "must_take"


def test_R_SHIP_7_saved_pay_phases_are_validated():
    saved = staged_and_shipped().to_dict()
    for key, value, match in (("resume_phase", None, "resume_phase must be one of"),
                              ("resume_phase", "over", "resume_phase must be one of"),
                              ("pending_shipment", [], "phase pay needs the pending_shipment")):
        bad = copy.deepcopy(saved)
        bad[key] = value
        with pytest.raises(ValueError, match=match):
            Game.from_dict(bad)
    bad = copy.deepcopy(saved)
    bad["phase"] = "choose_board"
    with pytest.raises(ValueError, match="resume_phase must be null outside phase pay"):
        Game.from_dict(bad)
    one = Position(4, seed=0)
    one.hand(0, COTTON_FRANCE, COTTON_2, CAPTAIN).ships(0, GB)
    d = one.data
    d["pending_shipment"], d["phase"], d["resume_phase"] = [COTTON_FRANCE], "pay", "choose_board"
    with pytest.raises(ValueError, match="one payment option, so it is paid at once"):
        Game.from_dict(copy.deepcopy(d))


def test_version_1_saved_games_load_as_the_same_position():
    game = Game.new(3, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(60):
        if game.phase != "pay":
            v3 = game.to_dict()
            v1 = {k: v for k, v in v3.items() if k not in ("resume_phase", "payment_page")}
            v1["version"] = 1
            assert Game.from_dict(v1).to_dict() == v3
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    v1 = dict(staged_and_shipped().to_dict(), version=1)
    with pytest.raises(ValueError, match="unknown keys \\['resume_phase', 'payment_page'\\]"):
        Game.from_dict(v1)


def test_R_SHIP_7_the_observation_shows_what_each_option_discards():
    game = staged_and_shipped("take")
    enc = encoder()
    obs = enc.split(enc.encode(game, 0))
    assert obs["paying"][0] == 1
    assert obs["phase"].tolist() == [0, 1, 0, 0]  # the phase that goes on after paying
    rows = obs["payment_options"]
    names = list(OPTION_FEATURES)
    for k, option in enumerate(game.payment_options()):
        assert rows[k, names.index("present")] == 1 and rows[k, names.index("cotton_units")] == 2
        assert rows[k, names.index("captains")] == 1
        assert rows[k, names.index("ship_great_britain")] == (GB in option)
        assert rows[k, names.index("ship_spain")] == (SPAIN in option)
        assert rows[k, names.index("value")] == pytest.approx(sum(int(CARDS.value[c]) for c in option) / 10)
    assert not rows[len(game.payment_options()):].any()
    game.step(actions.PAY)
    after = enc.split(enc.encode(game, 0))
    assert after["paying"][0] == 0 and not after["payment_options"].any()


def test_observation_round_stays_in_0_1_and_v0_prefix_reads_as_before():
    game = issue_position().game()
    game.state.round = 31
    enc = encoder()
    vector = enc.encode(game, 0)
    assert 0 <= enc.split(vector)["round"][0] < 1
    old = enc.v0_observation(vector)
    assert old.shape == (enc.v0_size,) and old[enc.pieces[1].offset] == pytest.approx(31 / ROUND_SCALE_V0)
    assert np.array_equal(np.delete(old, enc.pieces[1].offset), np.delete(vector[:enc.v0_size], enc.pieces[1].offset))


def test_R_SHIP_7_the_heuristic_keeps_the_ship_its_other_contract_needs():
    game = staged_and_shipped()
    assert game.payment_options()[choose_payment(game)] == SPAIN_OPTION
    action = HeuristicAgent(seed=0).act(SeatView(game))
    assert action == actions.PAY + game.payment_options().index(SPAIN_OPTION)


def v0_policy(seed: int = 0) -> NumpyPolicy:
    """A policy of the v0 layout (48 outputs, the v0 observation), as models trained before rules v1 are."""
    rng = np.random.default_rng(seed)
    return NumpyPolicy([rng.normal(size=(encoder().v0_size, 16)).astype(np.float32)], [np.zeros(16, np.float32)],
                       rng.normal(size=(16, actions.NUM_ACTIONS_V0)).astype(np.float32),
                       np.zeros(actions.NUM_ACTIONS_V0, np.float32))


def test_a_v0_policy_pays_as_the_heuristic_and_otherwise_reads_the_v0_observation():
    """A policy of 48 outputs reading the v0 observation (trained under rules v0) plays v1 games to the end."""
    agent = PolicyAgent(policy=v0_policy())
    assert agent.policy.num_actions == actions.NUM_ACTIONS_V0 and agent.policy.observation_size == encoder().v0_size
    game = staged_and_shipped()
    enc = encoder()
    assert agent.act(SeatView(game)) == actions.PAY + choose_payment(SeatView(game)) == actions.PAY + choose_payment(game)
    # a view of an observation alone (no game): the first option
    assert agent.act(SeatView.of_observation(enc.encode(game, 0), game.legal_action_mask())) == actions.PAY
    game = Game.new(2, seed=3)
    while not game.is_over:
        p = game.current_player
        vector = enc.encode(game, p)
        action = agent.act(SeatView(game))
        if game.phase != "pay":
            mask = game.legal_action_mask()[:actions.NUM_ACTIONS_V0]
            assert action == agent.policy.action(enc.v0_observation(vector), mask)
        game.step(action)


def test_R_SHIP_7_ismcts_searches_the_pay_decision():
    """ISMCTS treats pay:k like any other action: it searches them and returns one of them."""
    from packetrow_agents import ISMCTSAgent
    game = staged_and_shipped()
    agent = ISMCTSAgent(iterations=60, rollout="heuristic", seed=0)
    action = agent.act(SeatView(game))
    assert action in (actions.PAY, actions.PAY + 1)
    assert game.phase == "pay"  # the search left the real game alone
