"""The learner seats of a batched engine as RLlib's vector env (NEXT_STEP autoreset, masking dict), without Ray."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("stable_baselines3")

from packetrow_train.policy_export import export_policy  # noqa: E402
from packetrow_env.vector.learner import Ended, random_legal  # noqa: E402
from packetrow_train.pool import OpponentPool  # noqa: E402
from packetrow_train.rllib_vector_env import LearnerVectorEnv, learner_win_shares  # noqa: E402
from packetrow_arena.stats import win_shares  # noqa: E402

MIXTURE = {"heuristic": 0.5, "random": 0.5}


def make_env(num_envs=6, mixture=MIXTURE, seed=3, num_players=(2, 3), reward_mode="win"):
    return LearnerVectorEnv(num_envs, OpponentPool(mixture), list(num_players), reward_mode=reward_mode, seed=seed)


def play(env, steps, seed=0):
    """Reset ``env`` and play ``steps`` random legal learner moves; every step's results."""
    rng = np.random.default_rng(seed)
    observations, _ = env.reset()
    steps_seen = []
    for _ in range(steps):
        # rows showing a finished game have no legal action: any action is ignored there, 0 is sent
        result = env.step(random_legal(observations["action_mask"].astype(bool), rng))
        steps_seen.append(result)
        observations = result[0]
    return steps_seen


def test_a_finished_game_shows_once_then_a_new_game_is_dealt_next_step():
    """NEXT_STEP autoreset, as RLlib's SingleAgentEnvRunner expects: the ending step shows the learner's view of the
    finished game (no legal action) with his reward; the next step ignores the row's action and deals a new game."""
    env = make_env()
    results = play(env, 120)
    endings = 0
    for (_, _, dones, _, _), (following, rewards, next_dones, truncated, infos) in zip(results, results[1:]):
        for row in np.flatnonzero(dones):
            endings += 1
            assert following["action_mask"][row].any(), "the step after the end deals a new game"
            assert rewards[row] == 0 and not next_dones[row] and not truncated[row]
    assert endings >= 6
    for observations, rewards, dones, _, infos in results:
        assert observations["observations"].shape == (6, env.single_observation_space["observations"].shape[0])
        assert observations["observations"].dtype == np.float32 and observations["action_mask"].dtype == np.float32
        assert not observations["action_mask"][dones].any()
        assert observations["action_mask"][~dones].any(axis=1).all()
        assert env.observation_space.contains(observations)
        if dones.any():
            # win reward: 1 for each winner; the learner's share of the win splits it among the k winners
            assert set(infos) == {"win_share", "_win_share"} and (infos["_win_share"] == dones).all()
            assert ((infos["win_share"][dones] > 0) == (rewards[dones] == 1)).all()
        else:
            assert infos == {} and not rewards.any()


def test_an_ignored_row_takes_any_action_and_a_moving_row_refuses_an_illegal_one():
    from packetrow_env.engine import IllegalActionError

    env = make_env(num_envs=4)
    results = play(env, 200)
    observations, _, dones, _, _ = results[-1]
    while not dones.any():
        observations, _, dones, _, _ = env.step(random_legal(observations["action_mask"].astype(bool),
                                                             np.random.default_rng(1)))
    actions = random_legal(np.where(dones[:, None], True, observations["action_mask"].astype(bool)),
                           np.random.default_rng(2))
    actions[dones] = 60  # never legal at a game's first move; ignored on the row that shows a finished game
    env.step(actions)
    masks = env.games.action_masks()
    illegal = np.where(masks.all(axis=1), 0, np.argmin(masks, axis=1))
    with pytest.raises(IllegalActionError):
        env.step(illegal)


def test_the_same_seed_deals_the_same_games_and_opponents():
    first, second = (play(make_env(seed=11), 80) for _ in range(2))
    other = play(make_env(seed=12), 80)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a[0]["observations"], b[0]["observations"])
        np.testing.assert_array_equal(a[1], b[1])
    assert any(not np.array_equal(a[0]["observations"], c[0]["observations"]) for a, c in zip(first, other))
    dealt, _ = make_env(seed=11).reset()
    # reset(seed=...) as RLlib seeds each runner's env: the constructor's seed no longer matters
    reseeded, _ = make_env(seed=99).reset(seed=11)
    np.testing.assert_array_equal(dealt["observations"], reseeded["observations"])
    np.testing.assert_array_equal(dealt["action_mask"], reseeded["action_mask"])


def test_snapshots_join_the_pool_and_play_as_opponents():
    from sb3_contrib import MaskablePPO

    env = make_env(mixture={"latest": 1.0})
    with pytest.raises(RuntimeError, match="no snapshot or exploiter yet"):
        env.reset()
    from packetrow_train.vec_selfplay import SelfPlayVecEnv

    model = MaskablePPO("MlpPolicy", SelfPlayVecEnv(2, OpponentPool({"random": 1.0}), num_players=2, seed=0),
                        policy_kwargs={"net_arch": [8]}, n_steps=8, batch_size=8, seed=0)
    env.add_snapshot(export_policy(model.policy, "tracked"), 1)
    play(env, 30)
    assert {entry[1] for entry in env.games.opponents.entries} == {"snapshot@1"}


@settings(derandomize=True, deadline=None, max_examples=60, database=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=2, max_size=5), min_size=1,
                max_size=6), st.data())
def test_r_score_4_learner_win_shares_agree_with_the_tournaments_count(games, data):
    """The env's win_share (scoring's batched order) equals stats.win_shares of the engine's winners (R-SCORE-4:
    most VP, then most cash; players still tied share the win)."""
    vp = np.zeros((len(games), 5), np.int64)
    cash = np.zeros((len(games), 5), np.int64)
    seats, counts, expected = [], [], []
    for g, rows in enumerate(games):
        for p, (v, c) in enumerate(rows):
            vp[g, p], cash[g, p] = v, c
        best = max(rows)
        seat = data.draw(st.integers(0, len(rows) - 1))
        seats.append(seat)
        counts.append(len(rows))
        expected.append(win_shares([{"winner": row == best} for row in rows])[seat])
    ended = Ended(np.arange(len(games)), np.array(seats), np.array(counts), vp, cash, None, None)
    np.testing.assert_allclose(learner_win_shares(ended), expected)
