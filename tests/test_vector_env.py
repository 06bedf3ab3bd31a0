"""The batched training envs: LearnerGames, the Gymnasium VectorEnv and the SB3 self-play VecEnv."""

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from packetrow_env import actions
from packetrow_env.observation import encoder
from packetrow_env.vector.gymnasium_env import PacketRowVectorEnv
from packetrow_env.vector.learner import LearnerGames, UniformRandom, random_legal
from packetrow_env.vector.opponents import OpponentTable


class Recording(UniformRandom):
    """A random opponent that checks every batch it is asked: only opponents' seats, each with its own observation."""

    def __init__(self, learner_games=None):
        super().__init__(1)
        self.owner = learner_games
        self.moves = 0

    @classmethod
    def act_batch(cls, agents, turns):
        games, rows, seats = turns.games, turns.rows, turns.seats
        assert (seats >= 0).all() and (seats == games.current_player[rows]).all()
        assert (seats != agents[0].owner.learner[rows]).all()  # never the learner's move
        observations = turns.observe()
        assert np.array_equal(observations, games.observe("tracked", rows=rows))
        for k, i in enumerate(rows.tolist()):
            game = games.game(i)
            assert game.current_player == seats[k]
            assert np.array_equal(observations[k], encoder().encode(game, int(seats[k]), "tracked"))
        agents[0].moves += len(rows)
        return super().act_batch(agents, turns)


def test_learner_games_wait_for_the_learner_and_reward_his_seat():
    """After every step each game waits for its learner; a finished game pays the learner his own final reward
    (R-SCORE-4) and is re-dealt at once."""
    opponents = Recording()
    lg = LearnerGames(6, num_players=[2, 3, 4, 5], opponents=None, seed=3, reward_mode="vp")
    opponents.owner = lg
    lg.opponents = OpponentTable(opponents, seed=1)
    lg.reset()
    rng = np.random.default_rng(0)
    ended_games = 0
    for _ in range(400):
        assert (lg.games.current_player == lg.learner).all()
        obs, rewards, dones, ended = lg.step(random_legal(lg.action_masks(), rng))
        assert obs.shape == (6, encoder().size)
        if ended is not None:
            ended_games += len(ended.rows)
            for k, i in enumerate(ended.rows.tolist()):
                n, seat = ended.num_players[k], ended.seats[k]
                vp = ended.vp[k, :n]
                expected = vp[seat] - (vp.sum() - vp[seat]) / (n - 1)
                assert rewards[i] == pytest.approx(expected)
        assert (rewards[~dones] == 0).all()
    assert ended_games > 0
    assert opponents.moves > 0


def over(observations: np.ndarray) -> np.ndarray:
    """bool[B]: which observations show a finished game (the phase piece's ``over``)."""
    return np.array([encoder().split(vector)["phase"][3] == 1 for vector in observations])


def next_step_play(env, steps: int, seed: int):
    """Random legal learner moves in a NEXT_STEP vector env (wrapped or not), checking the contract at every step: a
    game that ends leaves no legal action, and the step after it is not done, pays 0 and ignores its action (an
    illegal one is passed there); yields each step's (observations, rewards, terminated, infos)."""
    observations, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    finished = np.zeros(env.num_envs, bool)
    for _ in range(steps):
        acts = random_legal(infos["action_mask"], rng)
        acts[finished] = actions.SHIP  # ignored: in a game that moves, an illegal action would raise
        observations, rewards, terminated, truncated, infos = env.step(acts)
        assert not truncated.any() and not terminated[finished].any() and (rewards[finished] == 0).all()
        assert not infos["action_mask"][terminated].any() and infos["action_mask"][~terminated].any(axis=1).all()
        yield observations, rewards, terminated, infos
        finished = terminated


def test_gymnasium_vector_env_autoresets_next_step_by_default():
    """NEXT_STEP: the step a game ends shows the finished game (its reward, terminated, no legal action) and its
    learner's seat and player count; the next step shows a new game (``next_step_play``)."""
    env = PacketRowVectorEnv(num_envs=4, num_players=[2, 3], seed=0)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP == type(env).metadata["autoreset_mode"]
    finals = 0
    for obs, rewards, terminated, infos in next_step_play(env, 400, seed=1):
        assert env.observation_space.contains(obs)
        assert (over(obs) == terminated).all()
        assert np.array_equal(env.action_masks(), infos["action_mask"])
        if terminated.any():
            finals += int(terminated.sum())
            assert np.array_equal(infos["_learner_seat"], terminated)
            assert (infos["num_players"][terminated] >= 2).all()
            assert (infos["learner_seat"][terminated] < infos["num_players"][terminated]).all()
    assert finals > 0


def test_gymnasium_vector_env_steps_and_autoresets_same_step():
    """SAME_STEP, on request: the row of a game that ended shows the next game; final observations in infos."""
    env = PacketRowVectorEnv(num_envs=4, num_players=2, seed=0, autoreset_mode="SameStep")
    obs, infos = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert PacketRowVectorEnv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP  # the class keeps its default
    rng = np.random.default_rng(0)
    finals = 0
    for _ in range(300):
        acts = random_legal(infos["action_mask"], rng)
        assert env.action_space.contains(acts)
        obs, rewards, terminated, truncated, infos = env.step(acts)
        assert obs.shape == (4, env.single_observation_space.shape[0]) and not truncated.any()
        if terminated.any():
            finals += int(terminated.sum())
            assert np.array_equal(infos["_final_obs"], terminated)
            assert np.array_equal(infos["_final_info"], terminated)
            for i in np.flatnonzero(terminated):
                assert env.single_observation_space.contains(infos["final_obs"][i])
                assert over(infos["final_obs"][i][None])[0] and not over(obs[[i]])[0]
    assert finals > 0
    assert np.array_equal(env.action_masks(), infos["action_mask"])


def test_gymnasium_vector_env_is_reproducible():
    """The same seed gives the same observations and rewards."""
    def run(seed):
        env = PacketRowVectorEnv(num_envs=3, num_players=[2, 4], seed=seed)
        obs, infos = env.reset()
        rng = np.random.default_rng(5)
        out = [obs]
        for _ in range(50):
            obs, rewards, *_rest, infos = env.step(random_legal(infos["action_mask"], rng))
            out += [obs, rewards]
        return out
    assert all(np.array_equal(a, b) for a, b in zip(run(7), run(7)))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="num_envs"):
        PacketRowVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match=r"autoreset_mode must be one of .*NEXT_STEP.*SAME_STEP.*got 'Disabled'"):
        PacketRowVectorEnv(num_envs=2, autoreset_mode=AutoresetMode.DISABLED.value)
    with pytest.raises(ValueError, match="num_players"):
        LearnerGames(2, num_players=[2, 7])
    with pytest.raises(ValueError, match="reward_mode"):
        LearnerGames(2, reward_mode="score")
    env = PacketRowVectorEnv(num_envs=2, num_players=2, seed=0)
    env.reset()
    with pytest.raises(ValueError, match="not legal|out of range"):
        env.step(np.array([actions.SHIP, actions.SHIP]))
