"""The single-agent Gymnasium view (SingleAgentEnv): check_env, the learner's own reward, opponents' turns."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from packetrow_agents import RandomAgent
from packetrow_env.env import final_rewards
from packetrow_env.observation import encoder
from packetrow_env.single_agent_env import SingleAgentEnv
from packetrow_env.seat_view import SeatView


def play(env, seed, rng):
    obs, info = env.reset(seed=seed)
    while True:
        assert env.game.current_player == env.seat
        assert env.observation_space.contains(obs)
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert not truncated
        if terminated:
            return reward, info


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_check_env(num_players):
    check_env(SingleAgentEnv(num_players, opponents=RandomAgent(0), illegal_action="penalize"), skip_render_check=True)


@pytest.mark.parametrize("mode", ["tracked", "online", "table", "full"])
def test_every_observation_mode_has_its_own_space(mode):
    """R-INFO-4: online (and full) vectors carry deck_contents; the space and the observations agree."""
    env = SingleAgentEnv(2, opponents=RandomAgent(0), observation_mode=mode, illegal_action="penalize")
    check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (encoder().size_of(mode),)
    play(env, 3, np.random.default_rng(0))


def test_learner_gets_its_own_reward_whatever_its_seat():
    """The terminal reward is final_rewards()[learner seat], for every seat and player count (R-SCORE-4)."""
    env = SingleAgentEnv([2, 3, 4, 5], opponents=RandomAgent(3))
    rng = np.random.default_rng(0)
    seen = set()
    for episode in range(40):
        reward, info = play(env, episode, rng)
        seat, scores = info["seat"], info["scores"]
        seen.add((info["num_players"], seat))
        assert reward == final_rewards(scores, "rank")[seat]
        if scores[seat]["winner"] and sum(s["winner"] for s in scores) == 1:
            assert reward == 1.0
    assert len({seat for _, seat in seen}) >= 4  # the learner really moved around the table


class RecordingAgent(RandomAgent):
    """A random agent that checks it is only ever asked on its own turn."""

    def __init__(self, seed=0):
        super().__init__(seed)
        self.turns = 0

    def act(self, view):
        assert isinstance(view, SeatView) and view.has_game and not view.is_over
        assert view.current_player == view.seat
        assert view.action_mask.any() and not view.action_mask.flags.writeable
        self.turns += 1
        return super().act(view)


def test_opponents_never_act_out_of_turn():
    agents = [RecordingAgent(s) for s in range(3)]
    env = SingleAgentEnv(4, opponents=agents, seat=2)
    reward, info = play(env, 7, np.random.default_rng(1))
    assert all(agent.turns > 0 for agent in agents)
    assert [env.seated[p] is None for p in range(4)] == [False, False, True, False]


def test_same_seed_same_episode():
    env = SingleAgentEnv([2, 4], opponents=RandomAgent(0))
    reward, info = play(env, 11, np.random.default_rng(5))
    trace = env.game.to_dict()
    again, info_again = play(env, 11, np.random.default_rng(5))
    assert (reward, info["seat"], info["scores"]) == (again, info_again["seat"], info_again["scores"])
    assert env.game.to_dict() == trace


def test_opponent_sampler_is_called_each_episode():
    class Pool:
        calls = []

        def sample(self, rng, count):
            self.calls.append(count)
            return [RandomAgent(int(rng.integers(100))) for _ in range(count)]

    pool = Pool()
    env = SingleAgentEnv([3, 5], opponents=pool)
    for seed in range(4):
        env.reset(seed=seed)
    assert len(pool.calls) == 4 and set(pool.calls) <= {2, 4}


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="num_players"):
        SingleAgentEnv(6, opponents=RandomAgent())
    with pytest.raises(ValueError, match="seat"):
        SingleAgentEnv(3, opponents=RandomAgent(), seat=3)
    with pytest.raises(ValueError, match="opponents"):
        SingleAgentEnv(3)
    with pytest.raises(ValueError, match="observation_mode"):
        SingleAgentEnv(3, opponents=RandomAgent(), observation_mode="x")
    with pytest.raises(ValueError, match="opponents are needed"):
        SingleAgentEnv(4, opponents=[RandomAgent()]).reset(seed=0)


def test_illegal_action_raises_by_default_and_penalizes_on_request():
    env = SingleAgentEnv(3, opponents=RandomAgent(0))
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.game.to_dict()
    with pytest.raises(ValueError, match="not legal"):
        env.step(illegal)
    assert env.game.to_dict() == before
    env = SingleAgentEnv(3, opponents=RandomAgent(0), illegal_action="penalize")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)
    assert not env.action_masks().any()
