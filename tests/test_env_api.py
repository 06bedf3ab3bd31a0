"""The PettingZoo AEC surface of ``packetrow_env.env`` / ``raw_env`` (docs/design.md "The environment")."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test, state_test

import packetrow_env
from packetrow_env.env import final_rewards
from packetrow_env import IllegalActionError, actions, raw_env
from packetrow_env.compact_observation import ENCODINGS
from packetrow_env.engine import Game
from packetrow_env.game_info import GAME_TYPE, game_info
from packetrow_env.knowledge import MODES
from packetrow_env.observation import encoder

PLAYER_COUNTS = (2, 3, 4, 5)
SIZE = encoder().size


@pytest.fixture(autouse=True)
def _quiet_pettingzoo_warnings():
    # api_test warns that Dict observation spaces are unusual and passes an unknown reset option on purpose.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning)
        yield


def random_steps(env, count: int, seed: int) -> None:
    """Play up to ``count`` uniformly random legal actions (stops at the end of the game)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        agent = env.agent_selection
        if env.terminations[agent]:
            return
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))


# --------------------------------------------------------------------------- PettingZoo's own tests
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_pettingzoo_api_test(n, mode):
    api_test(packetrow_env.env(num_players=n, observation_mode=mode), num_cycles=100)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_pettingzoo_api_test_raw_env(n):
    api_test(raw_env(num_players=n), num_cycles=100)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_pettingzoo_seed_test(n, mode):
    seed_test(lambda: packetrow_env.env(num_players=n, observation_mode=mode), num_cycles=100)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_pettingzoo_state_test(n):
    # state_test samples actions without the mask, so illegal ones end the game (penalize) instead of raising; its
    # last part asks a parallel env for its state after reset: Packet Row is turn-based and has no parallel API
    # (is_parallelizable False), so the AEC env answers it
    env = packetrow_env.env(num_players=n, illegal_action="penalize")
    state_test(env, env, num_cycles=100)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_the_state_lies_in_its_space_through_whole_games(n):
    """state_test's random actions end a game at its first illegal one; legal play reaches every phase and the end."""
    env = packetrow_env.env(num_players=n, observation_mode="table", observation_encoding="compact")
    env.reset(seed=n)
    space = env.unwrapped.state_space
    assert space.shape == (game_info(n).observation_sizes["full", "onehot"],)
    rng = np.random.default_rng(n)
    while not env.terminations[env.agent_selection]:
        assert space.contains(env.state())
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    assert space.contains(env.state())


def test_pettingzoo_seed_test_other_modes():
    seed_test(lambda: packetrow_env.env(num_players=3, observation_mode="table", reward_mode="vp"), num_cycles=100)
    seed_test(lambda: raw_env(num_players=2, observation_mode="full"), num_cycles=100)


def test_same_seed_same_game_different_seed_different_game():
    a, b = packetrow_env.env(num_players=4), packetrow_env.env(num_players=4)
    a.reset(seed=123)
    b.reset(seed=123)
    assert a.unwrapped.game.to_dict() == b.unwrapped.game.to_dict()
    b.reset(seed=124)
    assert a.unwrapped.game.to_dict() != b.unwrapped.game.to_dict()


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("option, bad, allowed", [
    ("num_players", 6, ["2", "3", "4", "5"]),
    ("num_players", 1, ["2", "5"]),
    ("num_players", True, ["2", "5"]),
    ("num_players", "4", ["2", "5"]),
    ("observation_mode", "partial", ["tracked", "table", "full"]),
    ("reward_mode", "score", ["rank", "win", "vp"]),
    ("illegal_action", "ignore", ["raise", "penalize"]),
    ("render_mode", "rgb_array", ["ansi", "human"]),
])
@pytest.mark.parametrize("factory", [packetrow_env.env, raw_env])
def test_unknown_option_values_raise_listing_the_allowed_ones(factory, option, bad, allowed):
    with pytest.raises(ValueError) as error:
        factory(**{option: bad})
    message = str(error.value)
    assert option in message
    assert repr(bad) in message or str(bad) in message
    for value in allowed:
        assert value in message


def test_defaults():
    env = packetrow_env.env()
    raw = env.unwrapped
    assert isinstance(raw, raw_env)
    assert (raw.num_players, raw.observation_mode, raw.reward_mode, raw.illegal_action, raw.render_mode) == \
        (4, "tracked", "rank", "raise", None)
    assert env.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    assert env.metadata["render_modes"] == ["ansi", "human"]
    assert env.metadata["is_parallelizable"] is False


# --------------------------------------------------------------------------- spaces and observations
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_the_metadata_and_spaces_are_game_infos(n):
    info = game_info(n)
    for mode in MODES:
        for encoding in ENCODINGS:
            env = raw_env(num_players=n, observation_mode=mode, observation_encoding=encoding)
            assert env.metadata["name"] == GAME_TYPE.env_id == "packetrow_v2"
            for agent in env.possible_agents:
                space = env.observation_space(agent)
                assert space["observation"].shape == (info.observation_sizes[mode, encoding],)
                assert float(space["observation"].high.max()) == info.observation_high[encoding]
                assert space["action_mask"].shape == (info.num_distinct_actions,)
                assert env.action_space(agent).n == info.num_distinct_actions
            env.reset(seed=n)
            observation = env.observe(env.agent_selection)
            assert observation["observation"].shape == (info.observation_sizes[mode, encoding],)
            assert observation["action_mask"].shape == (info.num_distinct_actions,)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_spaces_are_the_same_objects_on_every_call(n):
    env = packetrow_env.env(num_players=n)
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        assert env.action_space(agent).n == actions.NUM_ACTIONS == 48 + actions.MAX_PAYMENT_OPTIONS + 1
        space = env.observation_space(agent)
        assert space["observation"].shape == (SIZE,) and space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (actions.NUM_ACTIONS,) and space["action_mask"].dtype == np.int8
    env.reset(seed=0)
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_masks_and_observations_through_a_whole_game(n, mode):
    """Obs dict layout; the mask is info['action_mask']; zeros for everybody but the agent to act, never all zero
    for him; equal to the engine's legal actions."""
    env = packetrow_env.env(num_players=n, observation_mode=mode)
    env.reset(seed=n)
    rng = np.random.default_rng(n)
    game = env.unwrapped.game
    steps = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        assert set(obs) == {"observation", "action_mask"}
        assert obs["observation"].dtype == np.float32 and obs["observation"].shape == (encoder().size_of(mode),)
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].shape == (actions.NUM_ACTIONS,)
        assert np.array_equal(obs["action_mask"], info["action_mask"])
        assert not truncated
        if terminated:
            assert not obs["action_mask"].any()
            env.step(None)
            continue
        assert game is env.unwrapped.game
        assert agent == f"player_{game.current_player}"
        mask = obs["action_mask"]
        assert mask.any()
        assert np.array_equal(mask.astype(bool), game.legal_action_mask())
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any(), other
                assert not env.infos[other]["action_mask"].any(), other
        if steps % 25 == 0:
            for other in env.agents:
                assert env.observation_space(other).contains(env.observe(other)), other
        env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    assert game.is_over and steps > 50
    assert env.agents == []


def test_reset_from_a_saved_position():
    for n in PLAYER_COUNTS:
        game = Game.new(n, seed=30 + n)
        rng = np.random.default_rng(n)
        for _ in range(17 * n):
            game.step(int(rng.choice(game.legal_actions())))
        data = game.to_dict()
        for mode in MODES:
            env = packetrow_env.env(num_players=n, observation_mode=mode)
            saved = copy.deepcopy(data)
            env.reset(options={"state": data})
            assert data == saved  # the caller's dict is not touched
            assert isinstance(env.unwrapped.game, Game)
            assert env.unwrapped.game.to_dict() == data
            assert env.agent_selection == f"player_{game.current_player}"
            for seat, agent in enumerate(env.possible_agents):
                expected = encoder().encode(Game.from_dict(data), seat, mode)
                assert env.observe(agent)["observation"].tobytes() == expected.tobytes()
            mask = env.observe(env.agent_selection)["action_mask"]
            assert np.array_equal(mask.astype(bool), game.legal_action_mask())
            # the game goes on from there exactly as the engine's does
            action = int(np.flatnonzero(mask)[0])
            env.step(action)
            twin = Game.from_dict(data)
            twin.step(action)
            assert env.unwrapped.game.to_dict() == twin.to_dict()


def test_reset_from_a_position_of_another_player_count_fails():
    env = packetrow_env.env(num_players=3)
    with pytest.raises(ValueError, match="players"):
        env.reset(options={"state": Game.new(4, seed=0).to_dict()})


def test_reset_from_a_broken_position_fails_clearly():
    data = Game.new(3, seed=0).to_dict()
    data["players"][0]["cash"] = -5
    env = packetrow_env.env(num_players=3)
    with pytest.raises(ValueError, match="cash"):
        env.reset(options={"state": data})


def test_reset_from_a_finished_game_terminates_everyone():
    game = Game.new(2, seed=1)
    rng = np.random.default_rng(1)
    while not game.is_over:
        game.step(int(rng.choice(game.legal_actions())))
    env = packetrow_env.env(num_players=2)
    env.reset(options={"state": game.to_dict()})
    assert all(env.terminations.values())
    expected = final_rewards(game.scores(), "rank")
    for agent in env.agent_iter():
        obs, reward, terminated, _, _ = env.last()
        assert terminated and not obs["action_mask"].any()
        assert reward == expected[int(agent.split("_")[1])]  # the saved game's final rewards
        env.step(None)
    assert env.agents == []


def test_reset_warns_about_unknown_options():
    env = packetrow_env.env(num_players=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="state"):
            env.reset(seed=0, options={"stat": {}})


def test_state_is_a_global_vector():
    env = packetrow_env.env(num_players=3)
    env.reset(seed=5)
    state = env.unwrapped.state()
    assert isinstance(state, np.ndarray) and state.dtype == np.float32 and state.shape == (encoder().size_of("full"),)
    assert np.array_equal(state, encoder().encode(env.unwrapped.game, 0, "full"))
    assert np.array_equal(env.state(), state)


# --------------------------------------------------------------------------- action text
def test_action_strings_round_trip_for_every_id():
    env = packetrow_env.env(num_players=4)
    raw = env.unwrapped
    for a in range(actions.NUM_ACTIONS):  # before reset: just the name
        assert raw.string_to_action(raw.action_to_string(a)) == a
        assert raw.string_to_action(str(a)) == a
    env.reset(seed=3)
    random_steps(env, 5, seed=3)
    for a in range(actions.NUM_ACTIONS):
        described = raw.action_to_string(a)
        assert described.startswith(actions.NAMES[a])
        assert raw.string_to_action(described) == a
        assert raw_env.string_to_action(actions.NAMES[a]) == a
    with pytest.raises(ValueError):
        raw.string_to_action("fly to the moon")


def test_action_to_string_describes_the_action_now():
    env = packetrow_env.env(num_players=4)
    env.reset(seed=0)
    raw = env.unwrapped
    assert raw.action_to_string(2) == "choose:market: choose the market"
    env.step(2)
    card = int(raw.game.state.current[2, 0])
    text = raw.action_to_string(actions.TAKE)
    assert text.startswith("take:0: take ") and "market" in text
    assert raw.game.cards.describe(card) in text


# --------------------------------------------------------------------------- rendering
def test_render_ansi_returns_readable_text():
    env = packetrow_env.env(num_players=3, render_mode="ansi")
    env.reset(seed=2)
    out = env.render()
    assert isinstance(out, str)
    for word in ("Guildhall", "Docks", "Market", "Bank", "player 0 (you)", "player 1", "player 2", "legal actions"):
        assert word in out, word
    assert out == env.unwrapped.render_text("player_0")


def test_render_human_prints(capsys):
    env = packetrow_env.env(num_players=2, render_mode="human")
    env.reset(seed=2)
    capsys.readouterr()
    assert env.render() is None
    assert "Guildhall" in capsys.readouterr().out
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert "Guildhall" in capsys.readouterr().out  # human mode renders after every step


def test_render_without_render_mode_is_a_clear_error():
    env = packetrow_env.env(num_players=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="render_mode"):
        env.render()


def test_render_text_of_a_finished_game_shows_the_scores():
    env = packetrow_env.env(num_players=2)
    env.reset(seed=4)
    random_steps(env, 10_000, seed=4)
    out = env.unwrapped.render_text("player_1")
    assert "VP" in out and "WINNER" in out


# --------------------------------------------------------------------------- illegal actions
@pytest.mark.parametrize("bad", ["illegal", actions.NUM_ACTIONS, -1, 2.5, None])
def test_illegal_action_raises_and_changes_nothing(bad):
    env = packetrow_env.env(num_players=3)
    env.reset(seed=7)
    random_steps(env, 9, seed=7)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    if bad == "illegal":
        bad = int(np.flatnonzero(mask == 0)[0])
    before = (env.unwrapped.game.to_dict(), agent, dict(env.rewards), dict(env._cumulative_rewards),
              dict(env.terminations), env.observe(agent)["observation"].copy(), mask.copy())
    with pytest.raises(ValueError) as error:
        env.step(bad)
    assert isinstance(error.value, IllegalActionError)
    assert str(bad) in str(error.value)  # the message names the action it refused
    after = (env.unwrapped.game.to_dict(), env.agent_selection, dict(env.rewards), dict(env._cumulative_rewards),
             dict(env.terminations), env.observe(agent)["observation"], env.observe(agent)["action_mask"])
    assert before[:5] == after[:5]
    assert np.array_equal(before[5], after[5]) and np.array_equal(before[6], after[6])
    env.step(int(np.flatnonzero(mask)[0]))  # the env still works


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_illegal_action_penalize_ends_the_game(n):
    env = packetrow_env.env(num_players=n, illegal_action="penalize")
    env.reset(seed=n)
    random_steps(env, 3 * n, seed=n)
    offender = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(offender)["action_mask"] == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    assert not any(env.truncations.values())
    assert env.rewards == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
    seen = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        assert terminated and not obs["action_mask"].any()
        seen[agent] = reward
        env.step(None)
    assert seen == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
    assert env.agents == []


def test_penalize_mode_plays_legal_actions_normally():
    a = packetrow_env.env(num_players=3, illegal_action="penalize")
    b = packetrow_env.env(num_players=3)
    a.reset(seed=11)
    b.reset(seed=11)
    random_steps(a, 40, seed=1)
    random_steps(b, 40, seed=1)
    assert a.unwrapped.game.to_dict() == b.unwrapped.game.to_dict()
    assert not any(a.terminations.values())


def test_numpy_integer_actions_are_accepted():
    """Learners hand back numpy integers (SB3: np.int64, 0-d arrays); they are actions like ints."""
    for action in (np.int64(2), np.int32(2), np.array(2)):
        env = packetrow_env.env(num_players=2)
        env.reset(seed=0)
        env.step(action)
        assert env.unwrapped.game.state.history == [2]


def test_dead_agents_accept_only_none():
    env = packetrow_env.env(num_players=2, illegal_action="penalize")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0]))
    with pytest.raises(ValueError):
        env.step(0)


# --------------------------------------------------------------------------- order enforcement
def test_calls_before_reset_fail_clearly():
    env = packetrow_env.env(num_players=3)
    with pytest.raises(Exception, match="reset"):
        env.step(0)
    with pytest.raises(Exception, match="reset"):
        env.observe("player_0")
    with pytest.raises(Exception, match="reset"):
        env.state()
    with pytest.raises(Exception, match="reset"):
        env.render()
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos", "num_agents"):
        with pytest.raises(AttributeError, match="reset"):
            getattr(env, name)
    with pytest.raises(AttributeError):
        env.last()
    env.reset(seed=0)
    assert env.agents == env.possible_agents
    assert env.num_agents == 3


def test_agents_list_shrinks_only_after_the_end():
    env = packetrow_env.env(num_players=3)
    env.reset(seed=8)
    random_steps(env, 10_000, seed=8)
    assert env.agents == env.possible_agents  # everybody is terminated but still listed
    assert all(env.terminations.values())
    for agent in env.agent_iter():
        env.step(None)
    assert env.agents == [] and env.num_agents == 0
    env.reset(seed=9)  # a new game after the end
    assert env.agents == env.possible_agents and not any(env.terminations.values())


@pytest.mark.parametrize("mode", MODES)
def test_compact_encoding_passes_api_test_and_matches_its_encoder(mode):
    """observation_encoding='compact': PettingZoo's api_test, and every observation is CompactEncoder.encode's."""
    from packetrow_env.compact_observation import encoder as compact_encoder

    api_test(packetrow_env.env(num_players=3, observation_mode=mode, observation_encoding="compact"), num_cycles=50)
    env = packetrow_env.env(num_players=3, observation_mode=mode, observation_encoding="compact")
    env.reset(seed=4)
    assert env.observation_space("player_0")["observation"].shape == (compact_encoder().size_of(mode),)
    for _ in range(40):
        agent = env.agent_selection
        seat = int(agent.split("_")[1])
        expected = compact_encoder().encode(env.unwrapped.game, seat, mode)
        assert np.array_equal(env.observe(agent)["observation"], expected)
        random_steps(env, 1, seed=len(env.unwrapped.game.state.history))


def test_unknown_encoding_is_refused():
    with pytest.raises(ValueError, match="observation_encoding must be one of 'onehot', 'compact'"):
        packetrow_env.env(observation_encoding="dense")
