"""The rules import without the RL stack: PettingZoo and Gymnasium load only with the environment."""

import subprocess
import sys

import pytest

RL_STACK = ("pettingzoo", "gymnasium")


def _loaded_after(code: str) -> list[str]:
    check = f"{code}\nimport sys\nprint(' '.join(m for m in {RL_STACK!r} if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


@pytest.mark.parametrize("code", ["import packetrow_env.engine", "import packetrow_env",
                                  "from packetrow_env import Game; Game.new(2, seed=0).to_dict()",
                                  "import packetrow_env.observation, packetrow_env.render, packetrow_env.saved_game",
                                  "import packetrow_agents; packetrow_agents.make_agent('heuristic')"])
def test_the_rules_and_agents_import_without_pettingzoo_or_gymnasium(code):
    assert _loaded_after(code) == []


@pytest.mark.parametrize("code", ["import packetrow_env; packetrow_env.env(num_players=2)",
                                  "from packetrow_env import raw_env; raw_env(num_players=2)",
                                  "from packetrow_env.env import final_rewards\nimport packetrow_env\n"
                                  "assert callable(packetrow_env.env) and not isinstance(packetrow_env.env, "
                                  "type(packetrow_env))"])
def test_the_environment_still_loads_on_first_use(code):
    assert _loaded_after(code) == list(RL_STACK)
