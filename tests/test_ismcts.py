"""ISMCTSAgent: legal play, determinism, no use of hidden cards, the real game left alone, budget checks."""

from __future__ import annotations

import numpy as np
import pytest

import packetrow_agents.ismcts as ismcts
from packetrow_agents import ISMCTSAgent
from packetrow_agents.registry import make_agent
from packetrow_env.engine import Game
from packetrow_env.env import final_rewards
from packetrow_env.seat_view import SeatView
from tests.test_leaks import random_position, twins

FAST = dict(iterations=20, rollout="random")


def decision_positions(n: int, seeds, steps=(0, 25, 60, 110)) -> list[dict]:
    """Saved positions after random play where the player to act has more than one legal action."""
    out = []
    for seed in seeds:
        for k in steps:
            data = random_position(n, seed, k)
            game = Game.from_dict(data)
            if not game.is_over and len(game.legal_actions()) > 1:
                out.append(data)
    return out


def choose(data: dict, seed: int = 0, mode: str = "tracked", **options) -> int:
    """The action a fresh agent with this seed picks in a saved position, from the acting seat's view in ``mode``."""
    game = Game.from_dict(data)
    agent = ISMCTSAgent(seed=seed, **{**FAST, **options})
    return agent.act(SeatView(game, mode=mode))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_plays_only_legal_actions_through_whole_games(n):
    game = Game.new(n, seed=n)
    agents = [ISMCTSAgent(iterations=6, rollout="random", seed=p) for p in range(n)]
    while not game.is_over:
        mask = game.legal_action_mask()
        action = agents[game.current_player].act(SeatView(game, action_mask=mask))
        assert isinstance(action, int) and mask[action]
        game.step(action)
    assert len(final_rewards(game.scores(), "rank")) == n


def test_same_seed_same_actions():
    def actions(seed):
        game = Game.new(3, seed=7)
        agent = ISMCTSAgent(seed=seed, **FAST)
        out = []
        for _ in range(40):
            action = agent.act(SeatView(game))
            out.append(action)
            game.step(action)
        return out

    assert actions(11) == actions(11)


def test_reset_restores_the_seed():
    data = decision_positions(4, [3])[1]
    game = Game.from_dict(data)
    agent = ISMCTSAgent(seed=5, **FAST)
    first = [agent.act(SeatView(game)) for _ in range(3)]
    agent.reset(5)
    assert [agent.act(SeatView(game)) for _ in range(3)] == first


def test_different_seeds_can_choose_differently():
    positions = decision_positions(2, range(4))
    picks = {tuple(choose(data, seed, iterations=8) for seed in range(6)) for data in positions}
    assert any(len(set(row)) > 1 for row in picks)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_hidden_twins_get_the_same_action(n):
    """No cheating (R-INFO-2): what the acting seat cannot know never changes the action for a seed."""
    rng = np.random.default_rng(n)
    checked = 0
    for data in decision_positions(n, [n, 10 + n], steps=(1, 30, 80)):
        seat = data["current_player"]
        expected = choose(data, seed=3)
        for name, twin in twins(data, seat, rng):
            assert choose(twin, seed=3) == expected, name
            checked += 1
    assert checked >= 6


def test_R_INFO_4_online_views_search_online_determinisations():
    """With an online view the search deals online determinisations (each deck's contents kept): hidden online
    twins get the same action, and the search samples in the view's mode."""
    modes = []
    sample = Game.sample_determinization

    def spy(game, seat, rng, mode="tracked"):
        modes.append(mode)
        return sample(game, seat, rng, mode)

    rng = np.random.default_rng(4)
    checked = 0
    for data in decision_positions(2, [2, 12], steps=(1, 30, 80)):
        seat = data["current_player"]
        expected = choose(data, seed=3, mode="online")
        for name, twin in twins(data, seat, rng, "online"):
            assert choose(twin, seed=3, mode="online") == expected, name
            checked += 1
    assert checked >= 4
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Game, "sample_determinization", spy)
        choose(decision_positions(2, [2], steps=(30,))[0], seed=1, mode="online")
    assert modes and set(modes) == {"online"}


def test_twin_check_catches_a_cheating_search(monkeypatch):
    """Control: a search that samples the true game (it sees hidden cards) is caught by the twin check."""
    monkeypatch.setattr(Game, "sample_determinization", lambda game, seat, rng, mode="tracked": game.clone())
    rng = np.random.default_rng(0)
    differ = False
    for data in decision_positions(2, range(4), steps=(30, 80)):
        expected = choose(data, seed=3, iterations=30)
        differ = differ or any(choose(twin, seed=3, iterations=30) != expected
                               for _, twin in twins(data, data["current_player"], rng))
        if differ:
            break
    assert differ


def test_the_real_game_is_unchanged():
    for data in decision_positions(4, [1], steps=(0, 40)):
        game = Game.from_dict(data)
        before = game.to_dict()
        mask_before = game.legal_action_mask().copy()
        ISMCTSAgent(seed=0, **FAST).act(SeatView(game))
        assert game.to_dict() == before
        assert np.array_equal(game.legal_action_mask(), mask_before)


def test_a_single_legal_action_is_returned_at_once():
    game = Game.new(2, seed=0)
    rng = np.random.default_rng(0)
    while len(game.legal_actions()) != 1:
        game.step(int(rng.choice(game.legal_actions())))
    agent = ISMCTSAgent(seed=0, **FAST)
    assert agent.act(SeatView(game)) == game.legal_actions()[0]
    assert agent.last_iterations == 0


def test_a_time_budget_runs_the_same_search_as_its_iteration_count():
    """seconds_per_move only decides when to stop: replaying each move's iteration count gives the same moves."""
    game = Game.new(2, seed=1)
    timed = ISMCTSAgent(seconds_per_move=0.01, rollout="random", seed=4)
    counted = ISMCTSAgent(iterations=1, rollout="random", seed=4)
    searched = 0
    for _ in range(6):
        mask = game.legal_action_mask()
        action = timed.act(SeatView(game, action_mask=mask))
        assert mask[action]
        if mask.sum() > 1:
            searched += 1
            assert timed.last_iterations >= 1
            counted.iterations = timed.last_iterations
        assert counted.act(SeatView(game, action_mask=mask)) == action
        game.step(action)
    assert searched >= 3


def test_heuristic_rollouts_play_legal_actions():
    """Searches with heuristic rollouts pick legal actions, run their iterations, and repeat under a seed."""
    games = [Game.new(3, seed=2), Game.new(3, seed=2)]
    agents = [ISMCTSAgent(iterations=5, rollout="heuristic", rollout_rounds=1, seed=9) for _ in games]
    for _ in range(10):
        mask = games[0].legal_action_mask()
        chosen = [agent.act(SeatView(game)) for agent, game in zip(agents, games)]
        assert mask[chosen[0]] and chosen[0] == chosen[1]
        if mask.sum() > 1:
            assert agents[0].last_iterations == 5
        for game in games:
            game.step(chosen[0])


def test_registry_builds_it():
    agent = make_agent("ismcts:iters=20,rollout=random,rollout_rounds=2", seed=1)
    assert isinstance(agent, ISMCTSAgent) and agent.iterations == 20 and agent.rollout_rounds == 2


def test_act_needs_a_view_of_the_game():
    game = Game.new(2, seed=0)
    view = SeatView.of_observation(np.zeros(3, np.float32), game.legal_action_mask())
    with pytest.raises(ValueError, match="SeatView\\(game, seat\\)"):
        ISMCTSAgent(**FAST).act(view)


def test_an_empty_mask_is_an_error():
    with pytest.raises(ValueError, match="no legal action"):
        ISMCTSAgent(**FAST).act(SeatView(Game.new(2, seed=0), 1))  # not seat 1's turn: no legal action


@pytest.mark.parametrize("options, words", [
    (dict(iterations=10, seconds_per_move=1.0), "not both"),
    (dict(iterations=0), "iterations"),
    (dict(iterations=-3), "iterations"),
    (dict(iterations=2.5), "iterations"),
    (dict(iterations=True), "iterations"),
    (dict(seconds_per_move=0), "seconds_per_move"),
    (dict(seconds_per_move=-1.0), "seconds_per_move"),
    (dict(seconds_per_move=float("nan")), "seconds_per_move"),
    (dict(seconds_per_move=float("inf")), "seconds_per_move"),
    (dict(seconds_per_move="fast"), "seconds_per_move"),
    (dict(rollout="greedy"), "rollout"),
    (dict(rollout_rounds=-1), "rollout_rounds"),
    (dict(exploration=0), "exploration"),
    (dict(eval_scale=-2), "eval_scale"),
    (dict(partial_weight=2), "partial_weight"),
])
def test_bad_options_raise_clear_errors(options, words):
    with pytest.raises(ValueError, match=words):
        ISMCTSAgent(**{"rollout": "random", **options})


def test_default_budget_is_an_iteration_count():
    agent = ISMCTSAgent(rollout="random")
    assert agent.iterations == ismcts.DEFAULT_ITERATIONS and agent.seconds_per_move is None


def test_terminal_rewards_order_seats_like_the_rank_reward():
    for n in range(2, 6):
        game = Game.new(n, seed=n)
        rng = np.random.default_rng(n)
        while not game.is_over:
            game.step(int(rng.choice(game.legal_actions())))
        rank = final_rewards(game.scores(), "rank")
        mine = ismcts.terminal_rewards(game)
        for p in range(n):
            for q in range(n):
                if rank[p] > rank[q]:
                    assert mine[p] > mine[q]
        assert abs(sum(mine)) < 1e-9


def test_cutoff_rewards_are_zero_sum_and_in_range():
    game = Game.from_dict(random_position(4, 5, 60))
    rewards = ismcts.pairwise_rewards(ismcts.estimate_vp(game), 3.0)
    assert abs(sum(rewards)) < 1e-9 and all(-1 <= r <= 1 for r in rewards)
