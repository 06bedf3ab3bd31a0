"""Terminal rewards: ``final_rewards`` (R-SCORE-4 order) and their delivery to the right agent through the AEC env."""

from __future__ import annotations

import numpy as np
import pytest

import packetrow_env
from packetrow_env.engine import Game
from packetrow_env.env import REWARD_MODES, final_rewards


def rows(*scores) -> list[dict]:
    """Score rows from (vp, cash) pairs, winners marked by R-SCORE-4 (most VP, then most cash)."""
    best = max(scores)
    return [{"vp": vp, "cash": cash, "winner": (vp, cash) == best} for vp, cash in scores]


# --------------------------------------------------------------------------- final_rewards on known scores
@pytest.mark.parametrize("scores, expected", [
    ([(10, 5), (3, 40)], [1.0, -1.0]),
    ([(3, 40), (10, 5)], [-1.0, 1.0]),
    ([(7, 20), (7, 30)], [-1.0, 1.0]),  # R-SCORE-4: cash breaks a VP tie
    ([(7, 30), (7, 30)], [0.0, 0.0]),
    ([(1, 0), (9, 0), (5, 0)], [-1.0, 1.0, 0.0]),
    ([(10, 5), (8, 30), (8, 20), (2, 0)], [1.0, 1 / 3, -1 / 3, -1.0]),
    ([(8, 20), (10, 5), (8, 20), (2, 0)], [0.0, 1.0, 0.0, -1.0]),  # places 2 and 3 shared
    ([(4, 4), (4, 4), (4, 4), (9, 0)], [-1 / 3, -1 / 3, -1 / 3, 1.0]),  # places 2, 3, 4 shared
    ([(5, 50), (5, 50), (1, 0), (1, 0)], [2 / 3, 2 / 3, -2 / 3, -2 / 3]),
    ([(5, 1), (4, 1), (3, 1), (2, 1), (1, 1)], [1.0, 0.5, 0.0, -0.5, -1.0]),
    ([(1, 1), (2, 1), (3, 1), (4, 1), (5, 1)], [-1.0, -0.5, 0.0, 0.5, 1.0]),
    ([(3, 3)] * 5, [0.0] * 5),
    ([(9, 9), (3, 3), (9, 9), (3, 3), (0, 0)], [0.75, -0.25, 0.75, -0.25, -1.0]),
])
def test_rank_rewards(scores, expected):
    """Rank mode: +1 first .. -1 last, linear in between; tied seats share the mean of their places; zero-sum."""
    rewards = final_rewards(rows(*scores), "rank")
    assert rewards == pytest.approx(expected)
    assert sum(rewards) == pytest.approx(0.0)


def test_rank_is_the_default_reward_mode():
    assert packetrow_env.env().unwrapped.reward_mode == "rank"
    assert REWARD_MODES == ("rank", "win", "vp")


@pytest.mark.parametrize("scores, expected", [
    ([(10, 5), (3, 40)], [1.0, 0.0]),
    ([(7, 20), (7, 30)], [0.0, 1.0]),
    ([(7, 30), (7, 30)], [1.0, 1.0]),  # a shared win
    ([(8, 20), (10, 5), (10, 5), (2, 0)], [0.0, 1.0, 1.0, 0.0]),
    ([(3, 3)] * 5, [1.0] * 5),
])
def test_win_rewards(scores, expected):
    """Win mode: +1 for each winner (R-SCORE-4, shared wins), 0 otherwise."""
    assert final_rewards(rows(*scores), "win") == pytest.approx(expected)


@pytest.mark.parametrize("scores, expected", [
    ([(10, 5), (3, 40)], [7.0, -7.0]),
    ([(10, 0), (6, 0), (2, 0)], [6.0, 0.0, -6.0]),
    ([(8, 0), (4, 0), (4, 0), (0, 0)], [16 / 3, 0.0, 0.0, -16 / 3]),
    ([(3, 3)] * 5, [0.0] * 5),
    ([(5, 0), (0, 0), (0, 0), (0, 0), (0, 0)], [5.0, -1.25, -1.25, -1.25, -1.25]),
])
def test_vp_rewards(scores, expected):
    """VP mode: own VP minus the mean VP of the others (cash does not count)."""
    rewards = final_rewards(rows(*scores), "vp")
    assert rewards == pytest.approx(expected)
    assert sum(rewards) == pytest.approx(0.0)


def test_final_rewards_rejects_an_unknown_mode():
    """Errors for bad input say what was wrong and what is allowed (docs/design.md "The environment")."""
    with pytest.raises(ValueError, match="rank"):
        final_rewards(rows((1, 0), (0, 0)), "score")


def test_final_rewards_uses_winner_flags_of_real_scores():
    game = Game.new(3, seed=0)
    rng = np.random.default_rng(0)
    while not game.is_over:
        game.step(int(rng.choice(game.legal_actions())))
    scores = game.scores()
    assert final_rewards(scores, "win") == [1.0 if row["winner"] else 0.0 for row in scores]
    rank = final_rewards(scores, "rank")
    best = max(range(3), key=lambda p: (scores[p]["vp"], scores[p]["cash"]))
    assert rank[best] == max(rank)


# --------------------------------------------------------------------------- rewards through the env
def play_out(env, seed: int) -> dict[str, float]:
    """Random legal play to the end; the reward each agent sees from ``last()`` on its turn after the end."""
    rng = np.random.default_rng(seed)
    final = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        assert not truncated
        if terminated:
            assert agent not in final
            final[agent] = reward
            env.step(None)
        else:
            assert reward == 0.0  # zero until the end
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return final


@pytest.mark.parametrize("reward_mode", REWARD_MODES)
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_rewards_of_full_games_reach_their_own_seat(n, reward_mode):
    for seed in (n, 100 + n):
        env = packetrow_env.env(num_players=n, reward_mode=reward_mode)
        env.reset(seed=seed)
        game = env.unwrapped.game
        final = play_out(env, seed)
        assert game.is_over
        expected = final_rewards(game.scores(), reward_mode)
        assert set(final) == set(env.possible_agents)  # every agent was terminated and saw its reward
        for seat, agent in enumerate(env.possible_agents):
            assert final[agent] == pytest.approx(expected[seat]), (agent, final, expected)
        if reward_mode in ("rank", "vp"):
            assert sum(final.values()) == pytest.approx(0.0)
        if reward_mode == "win":
            assert sum(final.values()) >= 1.0


def test_rewards_are_not_the_same_for_every_seat():
    """Guard against a vacuous check above: real games give different seats different rewards."""
    env = packetrow_env.env(num_players=4)
    env.reset(seed=4)
    final = play_out(env, 4)
    assert len(set(final.values())) > 1


def near_end(n: int, winner: int, last_mover: int) -> dict:
    """A position where ``last_mover`` (harbour master) ends the game by taking a card, and ``winner`` is richest.

    The guildhall's deck and future supply are empty: whoever takes its last current cards exhausts it
    at the refill, which ends a 2- or 3-player game (R-END-1).
    """
    d = Game.new(n, seed=0).to_dict()
    guildhall = d["boards"][0]
    for slot, card in enumerate(guildhall["future"]):
        if card is not None:
            guildhall["discard"].append(card)
            guildhall["future"][slot] = None
    guildhall["discard"] = sorted(guildhall["discard"] + guildhall["deck"])
    guildhall["deck"] = []
    d["harbour_master"] = d["current_player"] = last_mover
    for p, player in enumerate(d["players"]):
        player["cash"] = 95 if p == winner else 25
    return d


@pytest.mark.parametrize("n, winner, last_mover", [(2, 1, 0), (2, 0, 0), (3, 2, 0), (3, 0, 1), (3, 1, 2)])
def test_terminal_reward_goes_to_the_winner_not_the_last_mover(n, winner, last_mover):
    """The reward of seat i is seat i's own, also when another seat made the game-ending move."""
    for reward_mode in REWARD_MODES:
        env = packetrow_env.env(num_players=n, reward_mode=reward_mode)
        env.reset(options={"state": near_end(n, winner, last_mover)})
        env.step(0)  # the harbour master chooses the guildhall
        while env.agent_selection != f"player_{last_mover}":
            env.step(10)  # the others pass
        env.step(4)  # the harbour master takes: round over, guildhall exhausted, game over
        game = env.unwrapped.game
        assert game.is_over
        scores = game.scores()
        assert [row["winner"] for row in scores] == [p == winner for p in range(n)]
        expected = final_rewards(scores, reward_mode)
        assert env.rewards == {f"player_{p}": pytest.approx(expected[p]) for p in range(n)}
        final = {}
        for agent in env.agent_iter():
            _, reward, terminated, _, _ = env.last()
            assert terminated
            final[agent] = reward
            env.step(None)
        assert final == {f"player_{p}": pytest.approx(expected[p]) for p in range(n)}
        if reward_mode == "rank":
            assert final[f"player_{winner}"] == 1.0
        if reward_mode == "win":
            assert final[f"player_{winner}"] == 1.0 and sum(final.values()) == 1.0
