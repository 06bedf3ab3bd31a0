"""Packet Row's Gymnasium id: ``gymnasium.make`` and ``gymnasium.make_vec`` as Gymnasium's users expect them
(packetrow_env.gymnasium_ids, packetrow_agents.gymnasium_envs; docs/other_libraries.md)."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import DtypeObservation, NormalizeObservation

import packetrow_env  # noqa: F401 - registers the id
from packetrow_agents import HeuristicAgent, PolicyAgent, RandomAgent
from packetrow_env import actions
from packetrow_env.compact_observation import encoder_for
from packetrow_env.game_info import GAME_TYPE
from packetrow_env.observation import encoder
from packetrow_env.vector.gymnasium_env import PacketRowVectorEnv
from packetrow_env.single_agent_env import SingleAgentEnv
from tests.test_vector_env import next_step_play

ID = "packetrow/SingleAgent-v2"


def test_the_id_is_the_games_and_names_both_envs():
    assert GAME_TYPE.gymnasium_id == ID
    spec = gymnasium.spec(ID)
    assert (spec.namespace, spec.name, spec.version) == ("packetrow", "SingleAgent", GAME_TYPE.env_version)
    assert spec.entry_point == "packetrow_agents.gymnasium_envs:single_agent_env"
    assert spec.vector_entry_point == "packetrow_agents.gymnasium_envs:vector_env"


@pytest.mark.parametrize("code", [
    "import packetrow_env\nimport sys\nassert 'gymnasium' not in sys.modules\nimport gymnasium",  # the hook registers
    "import gymnasium\nimport packetrow_env",  # registered at once
    "import gymnasium",  # the id names the module to import
])
def test_the_id_is_found_whichever_is_imported_first(code):
    make = "packetrow_env:" + ID if code == "import gymnasium" else ID
    check = f"{code}\nenv = gymnasium.make({make!r})\nprint(env.unwrapped.spec.id)"
    run = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [ID]


def test_importing_the_package_again_registers_once():
    run = subprocess.run([sys.executable, "-W", "error", "-c",
                          "import importlib, gymnasium, packetrow_env, packetrow_env.gymnasium_ids as ids\n"
                          "ids.register(); ids.register_with_gymnasium(); importlib.reload(packetrow_env)"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr  # Gymnasium warns when an id is registered twice


def test_make_gives_the_single_agent_env():
    env = gymnasium.make(ID, num_players=[2, 3], opponents="heuristic", reward_mode="vp")
    raw = env.unwrapped
    assert isinstance(raw, SingleAgentEnv) and isinstance(raw.opponents, HeuristicAgent)
    assert raw.spec.id == ID and raw.reward_mode == "vp"
    assert env.observation_space == raw.observation_space and env.observation_space.shape == (encoder().size,)
    assert env.action_space == gymnasium.spaces.Discrete(actions.NUM_ACTIONS)
    observation, info = env.reset(seed=0)
    terminated = False
    while not terminated:
        assert env.observation_space.contains(observation)
        masks = env.get_wrapper_attr("action_masks")()  # how SB3's MaskablePPO reads them through the wrappers
        assert np.array_equal(masks, info["action_mask"])
        observation, reward, terminated, truncated, info = env.step(int(np.flatnonzero(masks)[0]))
        assert not truncated
    assert info["num_players"] in (2, 3) and len(info["scores"]) == info["num_players"]


def test_make_defaults_to_random_opponents():
    assert isinstance(gymnasium.make(ID).unwrapped.opponents, RandomAgent)


def test_make_vec_gives_the_batched_vector_env():
    env = gymnasium.make_vec(ID, num_envs=3, num_players=[2, 4], opponents="ppo,heuristic,random", seed=0,
                             observation_encoding="compact")
    assert isinstance(env, PacketRowVectorEnv) and env.num_envs == 3 and env.spec.id == ID
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    size = encoder_for("compact").size_of("tracked")
    assert env.single_observation_space.shape == (size,) and env.observation_space.shape == (3, size)
    assert env.action_space.shape == (3,)
    agents = env.games.opponents.agents
    assert [type(a) for a in agents] == [PolicyAgent, HeuristicAgent, RandomAgent]


def test_make_vec_can_still_vectorize_the_single_env():
    env = gymnasium.make_vec(ID, num_envs=2, vectorization_mode="sync", num_players=2)
    assert isinstance(env, SyncVectorEnv) and isinstance(env.envs[0].unwrapped, SingleAgentEnv)
    observations, infos = env.reset(seed=0)
    env.step(np.array([np.flatnonzero(m)[0] for m in infos["action_mask"]]))


@pytest.mark.parametrize("opponents", ["heuristic", "ppo"])
def test_a_vector_observation_wrapper_steps_through_episode_ends(opponents):
    """Gymnasium's stateful observation wrappers take NEXT_STEP only: wrapped, the env steps across game ends, each
    ending step followed by a step that deals a new game (``next_step_play`` checks the contract)."""
    base = gymnasium.make_vec(ID, num_envs=6, num_players=[2, 3], opponents=opponents, seed=1)
    env = DtypeObservation(NormalizeObservation(base), np.float64)
    ends = 0
    for observations, rewards, terminated, infos in next_step_play(env, 200, seed=2):
        assert observations.dtype == np.float64 and np.isfinite(observations).all()
        ends += int(terminated.sum())
    assert ends > 0
    with pytest.raises(ValueError, match="NEXT_STEP"):
        NormalizeObservation(gymnasium.make_vec(ID, num_envs=2, autoreset_mode="SameStep"))


@pytest.mark.parametrize("kwargs, match", [
    ({"players": 3}, r"no option 'players'; its options: .*num_players"),
    ({"opponents": "heuristc"}, r"unknown agent 'heuristc'; known agents: .*heuristic"),
    ({"opponents": "ismcts:iterations=5,depth=2"}, r"unknown option 'depth' for agent 'ismcts'"),
    ({"num_players": 6}, r"num_players must be"),
])
def test_bad_arguments_are_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gymnasium.make(ID, **kwargs)
    with pytest.raises(ValueError, match=match):
        gymnasium.make_vec(ID, num_envs=2, **kwargs)


def test_options_of_one_env_only_are_refused_by_the_other():
    with pytest.raises(ValueError, match=r"\(SingleAgentEnv\) has no option 'autoreset_mode'"):
        gymnasium.make(ID, autoreset_mode="SameStep")
    with pytest.raises(ValueError, match=r"\(PacketRowVectorEnv\) has no option 'seat'"):
        gymnasium.make_vec(ID, num_envs=2, seat=0)
