"""``packetrow_env.game_info``: the game's one description is read from the code it describes, and it holds.

The longest-game bound is checked piece by piece in random and heuristic games of every player count: rounds,
decisions a round, contracts added, shipments, pay decisions and their options, and the whole game's length.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from packetrow_agents import HeuristicAgent
from packetrow_env import actions, state
from packetrow_env.cards import BOARDS, CONTRACT, NUM_BOARDS, resolve
from packetrow_env.compact_observation import ENCODINGS, encoder_for
from packetrow_env.engine import Game
from packetrow_env.game_info import (GAME_TYPE, GENERAL_SUM, UTILITY, ZERO_SUM, describe, game_info,
                                     largest_antichain, longest_game, most_payment_options)
from packetrow_env.knowledge import MODES
from packetrow_env.scoring import REWARD_MODES, final_rewards
from packetrow_env.seat_view import SeatView
from packetrow_env.vector import VectorGame
from packetrow_cli.main import main

PLAYER_COUNTS = range(state.MIN_PLAYERS, state.MAX_PLAYERS + 1)
ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


# --------------------------------------------------------------------------- read from the code
def test_the_game_type_is_read_from_the_rules():
    assert (GAME_TYPE.min_num_players, GAME_TYPE.max_num_players) == (state.MIN_PLAYERS, state.MAX_PLAYERS)
    assert GAME_TYPE.env_id == "packetrow_v2" == f"{GAME_TYPE.short_name}_v{GAME_TYPE.env_version}"
    assert set(GAME_TYPE.utility) == set(REWARD_MODES)
    assert (GAME_TYPE.reward_model, GAME_TYPE.information, GAME_TYPE.chance_mode) == ("terminal", "imperfect",
                                                                                       "sampled")


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_the_sizes_are_read_from_the_actions_and_the_encoders(n):
    info = game_info(n)
    assert info.num_players == n
    assert info.num_distinct_actions == actions.NUM_ACTIONS == len(actions.NAMES)
    assert set(info.observation_sizes) == {(mode, encoding) for mode in MODES for encoding in ENCODINGS}
    for (mode, encoding), size in info.observation_sizes.items():
        assert size == encoder_for(encoding).size_of(mode)
    assert info.observation_high == {encoding: encoder_for(encoding).high for encoding in ENCODINGS}
    assert game_info(n) is game_info(n, resolve(None))  # cached per player count and catalogue


def test_the_bound_follows_the_constants_it_is_made_of(monkeypatch):
    cat = resolve(None)
    before = longest_game(4, cat)
    monkeypatch.setattr(state, "MAX_ROUNDS", state.MAX_ROUNDS + 10)
    monkeypatch.setattr(actions, "MAX_PAYMENT_OPTIONS", 2 * actions.MAX_PAYMENT_OPTIONS)
    after = longest_game(4, cat)
    assert after.rounds == before.rounds + 10
    assert after.page_size == 2 * before.page_size and after.pages == -(-before.payment_options // after.page_size)
    assert after.decisions == before.decisions + 10 * before.decisions_per_round \
        - before.contracts * (before.pages - after.pages)


def test_the_description_cannot_be_changed_by_a_reader():
    info = game_info(4)
    with pytest.raises(TypeError):
        info.observation_sizes["tracked", "onehot"] = 1
    with pytest.raises(TypeError):
        GAME_TYPE.utility["win"] = ZERO_SUM
    with pytest.raises(AttributeError):
        info.num_distinct_actions = 1


@pytest.mark.parametrize("bad", [1, 6, True, "4", None, 4.5])
def test_a_bad_player_count_is_refused_naming_the_allowed_ones(bad):
    with pytest.raises(ValueError, match=r"num_players must be one of 2, 3, 4, 5, got"):
        game_info(bad)


# --------------------------------------------------------------------------- the bound's pieces
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_the_bound_is_its_pieces(n):
    cat = resolve(None)
    lg = game_info(n).longest_game
    assert lg.rounds == state.MAX_ROUNDS
    assert lg.decisions_per_round == NUM_BOARDS * (1 + n)  # a choice of each board and an answer of each seat there
    # the guildhall's contracts and one starting contract per seat: every contract that can reach a hand
    assert lg.contracts == int((cat.kind == CONTRACT).sum()) - len(cat.start_contracts) + n
    assert lg.page_size == actions.MAX_PAYMENT_OPTIONS
    assert lg.pages == -(-lg.payment_options // lg.page_size)
    assert game_info(n).max_game_length == lg.decisions == \
        lg.rounds * lg.decisions_per_round + lg.contracts * (2 + lg.pages)


def _antichain_brute_force(lengths):
    """The largest antichain of the product of chains 0..k, by trying every subset (tiny products only)."""
    points = list(itertools.product(*(range(k + 1) for k in lengths)))
    below = {(a, b) for a in points for b in points if a != b and all(x <= y for x, y in zip(a, b))}
    for size in range(len(points), 0, -1):
        for subset in itertools.combinations(points, size):
            if not any((a, b) in below for a in subset for b in subset):
                return size
    return 0


@pytest.mark.parametrize("lengths", [[1], [3], [1, 1], [2, 1], [2, 2], [1, 1, 1], [3, 1, 1], [1, 1, 1, 1]])
def test_the_largest_antichain_is_the_largest_rank_level(lengths):
    assert largest_antichain(lengths) == _antichain_brute_force(lengths)


def test_the_payment_options_bound_counts_the_shipment_cards_classes():
    """Ships (6 destinations x 3) and captains (5); goods (12 names), single and double gold and traders."""
    cat = resolve(None)
    ships = largest_antichain([3] * 6 + [5])
    goods = largest_antichain([3, 2, 2] * 4 + [5, 5, 5])
    assert most_payment_options(cat) == ships * goods
    assert ships == 2920 and goods == 32_390_080


# --------------------------------------------------------------------------- the bound holds in play
def _play(game: Game, choose, lg, seen: Counter) -> None:
    """Play ``game`` to its end with ``choose(game, mask)``, checking every piece of the bound as it goes."""
    n = game.num_players
    per_round, choices, answers = Counter(), Counter(), Counter()
    adds = ships = pays = pages_turned = 0
    for step in itertools.count():
        if game.is_over:
            break
        s = game.state
        mask = game.legal_action_mask()
        action = int(choose(game, mask))
        if game.phase == "pay":  # one pay:k, after turning at most pages - 1 pages
            assert len(game.payment_options()) <= lg.payment_options
            if actions.PAY <= action < actions.PAY + lg.page_size:
                pays += 1
                pages_turned = 0
            else:
                pages_turned += 1
                assert pages_turned < lg.pages
        elif action >= actions.ADD_CONTRACT:
            adds += action < actions.SHIP
            ships += action == actions.SHIP
        else:  # a choice or an answer: per round, and an answer per board
            per_round[s.round] += 1
            if action < len(BOARDS):
                choices[s.round] += 1
            else:
                answers[s.round, s.current_board] += 1
        game.step(action)
    assert step == len(game.state.history) <= lg.decisions
    assert game.state.round <= lg.rounds
    assert max(per_round.values()) <= lg.decisions_per_round
    assert max(choices.values()) <= NUM_BOARDS and max(answers.values()) <= n
    assert pays <= ships <= adds <= lg.contracts
    seen["games"] += 1
    seen["shipments"] += ships
    seen["pays"] += pays


def _random_choice(rng):
    return lambda game, mask: rng.choice(np.flatnonzero(mask))


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_random_games_stay_within_the_bound(n):
    lg = game_info(n).longest_game
    seen = Counter()
    rng = np.random.default_rng(n)
    for seed in range(60):
        _play(Game.new(n, seed=seed), _random_choice(rng), lg, seen)
    assert seen["shipments"] > 0 and seen["pays"] > 0  # the shipping pieces were exercised


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_heuristic_games_stay_within_the_bound(n):
    lg = game_info(n).longest_game
    seen = Counter()
    agents = [HeuristicAgent(seed=p) for p in range(n)]
    for seed in range(3):
        _play(Game.new(n, seed=100 + seed),
              lambda game, mask: agents[game.current_player].act(SeatView(game, action_mask=mask)), lg, seen)
    assert seen["shipments"] > 0


def test_the_batch_reads_the_same_action_count():
    """VectorGame keeps no bound of its own (its history widens as needed); its masks are game_info's width."""
    vg = VectorGame(num_players=[2, 3, 4, 5])
    assert vg.legal_action_mask().shape == (4, game_info(4).num_distinct_actions)


# --------------------------------------------------------------------------- utility
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_zero_sum_reward_modes_sum_to_zero_and_win_counts_the_winners(n):
    rng = np.random.default_rng(10 + n)
    for seed in range(10):
        game = Game.new(n, seed=seed)
        while not game.is_over:
            game.step(int(rng.choice(game.legal_actions())))
        scores = game.scores()
        for mode, kind in UTILITY.items():
            total = sum(final_rewards(scores, mode))
            if kind == ZERO_SUM:
                assert total == pytest.approx(0.0, abs=1e-9), mode
            else:
                assert total == sum(row["winner"] for row in scores), mode


def test_win_is_general_sum_because_ties_share_the_win():
    tied = [{"vp": 10, "cash": 5, "winner": True}, {"vp": 10, "cash": 5, "winner": True},
            {"vp": 3, "cash": 0, "winner": False}]
    alone = [{"vp": 10, "cash": 5, "winner": True}, {"vp": 9, "cash": 5, "winner": False},
             {"vp": 3, "cash": 0, "winner": False}]
    assert UTILITY["win"] == GENERAL_SUM
    assert sum(final_rewards(tied, "win")) == 2.0 and sum(final_rewards(alone, "win")) == 1.0
    for rows in (tied, alone):
        assert sum(final_rewards(rows, "rank")) == pytest.approx(0.0)
        assert sum(final_rewards(rows, "vp")) == pytest.approx(0.0)


def test_chance_is_sampled_at_the_deal_only():
    """The seed decides the deal; after it every action has one outcome (no chance node to show)."""
    assert Game.new(3, seed=5).to_dict() == Game.new(3, seed=5).to_dict()
    game = Game.new(3, seed=5)
    rng = np.random.default_rng(0)
    while not game.is_over:
        twin = game.clone()
        action = int(rng.choice(game.legal_actions()))
        game.step(action)
        twin.step(action)
        assert twin.to_dict() == game.to_dict()


# --------------------------------------------------------------------------- printed and documented
def test_describe_is_plain_json_of_the_type_and_the_info():
    described = describe(3)
    assert json.loads(json.dumps(described)) == described
    info = game_info(3)
    assert described["env_id"] == GAME_TYPE.env_id and described["num_players"] == 3
    assert described["max_game_length"] == info.max_game_length
    assert described["longest_game"]["pages"] == info.longest_game.pages
    assert described["observation_sizes"]["online"]["compact"] == info.observation_sizes["online", "compact"]


def test_packetrow_info_prints_the_description(capsys):
    assert main(["info", "--players", "5"]) == 0
    out = capsys.readouterr().out
    info = game_info(5)
    assert re.search(rf"^env_id\s+{GAME_TYPE.env_id}$", out, re.M)
    assert re.search(rf"^num_distinct_actions\s+{info.num_distinct_actions}$", out, re.M)
    assert re.search(rf"^max_game_length\s+{info.max_game_length:,}$", out, re.M)
    assert re.search(r"^observation_sizes\.tracked\.onehot\s+" + f"{info.observation_sizes['tracked', 'onehot']:,}$",
                     out, re.M)
    assert main(["info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == describe(4)


def test_packetrow_info_refuses_a_bad_player_count(capsys):
    with pytest.raises(SystemExit):
        main(["info", "--players", "6"])
    assert "invalid choice: 6 (choose from 2, 3, 4, 5)" in capsys.readouterr().err


def _readme_row(label: str) -> str:
    row = re.search(rf"^\| {label} \| (.*) \|$", README.read_text(), re.M)
    assert row, f"README's At a glance table lost its {label!r} row"
    return row.group(1)


def test_the_readme_at_a_glance_rows_name_game_infos_values():
    info = game_info(4)
    sizes = info.observation_sizes
    assert f"`{GAME_TYPE.env_id}`" in _readme_row("Env id")
    assert _readme_row("Action shape").startswith(f"`Discrete({info.num_distinct_actions})`")
    shape = _readme_row("Observation shape")
    assert shape.startswith(f"`Dict(observation: Box({sizes['tracked', 'onehot']},), "
                            f"action_mask: Box({info.num_distinct_actions},))`")
    assert f"{sizes['online', 'onehot']} in `online`/`full` mode" in shape
    assert f"{sizes['tracked', 'compact']} / {sizes['online', 'compact']} compact" in shape
    assert f"n = {GAME_TYPE.min_num_players}-{GAME_TYPE.max_num_players}" in _readme_row("Agents")
    assert f"in [0, {info.observation_high['onehot']:g}]" in _readme_row("Observation values")


def _about(value: int, digits: int) -> str:
    """A number as the docs round it, e.g. 'about 9.5 × 10^10'."""
    exponent = math.floor(math.log10(value))
    return f"about {round(value / 10 ** exponent, digits - 1):g} × 10^{exponent}"


def test_the_environment_pages_bound_is_game_infos():
    text = " ".join((ROOT / "docs" / "environment.md").read_text().split())
    most = game_info(state.MAX_PLAYERS)
    lg = most.longest_game
    assert f"({_about(most.max_game_length, 1)} decisions)" in text
    assert f"{_about(lg.payment_options, 2)}." in text
    assert lg.rounds * lg.decisions_per_round + 3 * lg.contracts < 12_000 and "under 12,000" in text
