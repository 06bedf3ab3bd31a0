"""The export and import of trained networks live with training (packetrow_train.policy_export): the agents layer
reads ``.npz`` policies only, and the old names in packetrow_agents.policy warn and hand over the moved objects."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

import packetrow_agents.policy as agents_policy
from packetrow_train import policy_export
from tests.test_import_graph import MODULES

MOVED = ("export_policy", "export_value", "import_policy")
# the training stack's modules: the agents layer names none of them
TRAINING_STACK = {"torch", "stable_baselines3", "sb3_contrib"}


@pytest.mark.parametrize("name", MOVED)
def test_the_old_name_warns_and_returns_the_moved_object(name):
    with pytest.warns(DeprecationWarning, match=rf"packetrow_agents\.policy\.{name} moved to "
                                                rf"packetrow_train\.policy_export\.{name}"):
        old = getattr(agents_policy, name)
    assert old is getattr(policy_export, name)


def test_the_old_import_statement_still_works():
    with pytest.warns(DeprecationWarning):
        from packetrow_agents.policy import export_policy
    assert export_policy is policy_export.export_policy


def test_other_missing_names_are_still_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'export_network'"):
        agents_policy.export_network  # noqa: B018


def test_a_network_of_another_features_extractor_is_refused():
    pytest.importorskip("stable_baselines3")
    model = SimpleNamespace(features_extractor=SimpleNamespace(), action_net=None,
                            mlp_extractor=SimpleNamespace(policy_net=[]))
    with pytest.raises(agents_policy.ModelFormatError, match="a SimpleNamespace features extractor"):
        policy_export.export_policy(model)


def training_class_names() -> set[str]:
    """The names of the classes defined in packetrow_train's modules."""
    return {node.name for module, path in MODULES.items() if module.split(".")[0] == "packetrow_train"
            for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)}


def test_the_agents_policy_module_names_no_training_stack_and_no_training_class():
    classes = training_class_names()
    assert {"CompactExtractor", "RolloutPPO"} <= classes
    words = set(re.findall(r"\w+", MODULES["packetrow_agents.policy"].read_text()))
    assert words & (TRAINING_STACK | classes) == set()


def test_the_agents_policy_module_loads_no_training():
    check = ("import sys, packetrow_agents.policy\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('packetrow_train', 'torch', "
             "'stable_baselines3', 'sb3_contrib')))")
    run = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
