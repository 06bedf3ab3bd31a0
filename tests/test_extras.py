"""Every third-party import of the library is declared: in the core dependencies, or in each extra its module is
installed with (pyproject.toml). Imports are read from the source at every level, so one deferred into a function
counts too; a missing declaration is what breaks a fresh install while an editable one with tools installed by
hand passes."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest

from tests.test_import_graph import MODULES

PROJECT = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
# the extras a module is used with, each of which must bring what it imports beyond the core (longest prefix wins)
EXTRAS_OF = {
    "packetrow_env": (),
    "packetrow_env.openspiel_game": ("openspiel",),
    "packetrow_agents": (),
    "packetrow_agents.openspiel_bot": ("openspiel",),
    "packetrow_arena": ("cli", "train"),
    "packetrow_cli": (),
    "packetrow_models": (),
    "packetrow_configs": (),
    "packetrow_arena.ray_cluster": ("ray",),
    "packetrow_train": ("train",),
    "packetrow_train.rllib_env": ("ray",),
    "packetrow_train.rllib_selfplay": ("ray",),
    "packetrow_train.rllib_vector_env": ("ray",),
    "packetrow_web": ("web",),
    "packetrow_mcp": ("mcp",),
}
# import names that differ from their distribution's name
DISTRIBUTION = {"yaml": "pyyaml", "stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib",
                "pyspiel": "open_spiel"}


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement)[0].lower()


CORE = {_name(r) for r in PROJECT["dependencies"]}
EXTRAS = {extra: {_name(r) for r in requirements} for extra, requirements in PROJECT["optional-dependencies"].items()}


def third_party_imports(module: str) -> set[str]:
    """The distributions ``module`` imports anywhere in its source (not the standard library, not packetrow)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module.split(".")[0])
    found -= set(sys.stdlib_module_names) | {"__future__"}
    return {DISTRIBUTION.get(name, name) for name in found if not name.startswith("packetrow")}


def extras_of(module: str) -> tuple[str, ...]:
    prefixes = [p for p in EXTRAS_OF if module == p or module.startswith(p + ".")]
    assert prefixes, f"{module} belongs to no package of EXTRAS_OF"
    return EXTRAS_OF[max(prefixes, key=len)]


def test_every_assigned_extra_exists():
    assert {extra for extras in EXTRAS_OF.values() for extra in extras} <= set(EXTRAS)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_import_is_declared_in_the_core_or_in_each_extra_of_its_module(module):
    imported = third_party_imports(module)
    for extra in extras_of(module) or ("the core",):
        declared = CORE | EXTRAS.get(extra, set())
        assert imported <= declared, f"{module} imports {sorted(imported - declared)}, not declared in {extra}"


def test_the_detector_sees_a_deferred_import(tmp_path, monkeypatch):
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    import scipy.stats\n    from yaml import safe_load\n")
    monkeypatch.setitem(MODULES, "packetrow_train.planted", planted)
    assert third_party_imports("packetrow_train.planted") == {"scipy", "pyyaml"}
