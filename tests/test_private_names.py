"""No module of the packetrow packages uses another module's private names.

A private name has a leading underscore and is not a dunder (``__version__`` and ``__file__`` are public). It
belongs to the module that defines it; what another module needs of it is that module's documented internal API
(a public name), or lives in a module both use. Read from the source of every module (the modules of
tests/test_import_graph.py), a use across modules is
- ``from x import _name``, x another packetrow module (relative imports resolved: a package's ``__init__`` that
  runs ``from . import _name`` imports from itself, which is not across), and
- ``x._name``, x a name that an import binds to another packetrow module (``from packetrow_env import engine``,
  ``import packetrow_env.engine as engine``, ``import packetrow_env`` then ``packetrow_env.engine._name``).
A private attribute of an object (``game._summary()``) is out of reach: its owner is known only from types.
"""

from __future__ import annotations

import ast

from tests.test_import_graph import MODULES, resolve_import



def is_private(name: str) -> bool:
    """Whether ``name`` is private: a leading underscore, not a dunder."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None for anything but names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def private_uses(module: str, source: str) -> set[str]:
    """The private names of other packetrow modules that ``module``'s source uses, as ``owner._name``."""
    tree = ast.parse(source)
    bound = {}  # a name the source binds by an import -> the module it names
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:  # import a.b.c binds a
                    top = alias.name.split(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom):
            owner = resolve_import(module, node)
            for alias in node.names:
                if is_private(alias.name) and owner in MODULES and owner != module:
                    found.add(f"{owner}.{alias.name}")
                if f"{owner}.{alias.name}" in MODULES:
                    bound[alias.asname or alias.name] = f"{owner}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            parts = _dotted(node.value)
            if parts and parts[0] in bound:
                owner = ".".join([bound[parts[0]], *parts[1:]])
                if owner in MODULES and owner != module:
                    found.add(f"{owner}.{node.attr}")
    return found


USES = {module: private_uses(module, path.read_text()) for module, path in MODULES.items()}


def test_no_module_uses_another_modules_private_names():
    across = sorted(f"{module} uses {name}" for module, names in USES.items() for name in names)
    assert across == [], "make what another module needs a documented public name of its owner (docs/design.md)"


def test_the_finder_finds_planted_uses_and_only_those():
    source = """
from ..observation import _BLOCK_ROWS, encoder
from .. import engine as rules_engine
from . import tables
import packetrow_env.scoring
import packetrow_agents.policy_batch as stack
from numpy import _private_of_numpy
from .observe import _own_private

a = rules_engine._refill, packetrow_env.scoring._CLOCK_DECK, tables._table_cache, stack._logits
b = rules_engine.__name__, packetrow_env.__version__, encoder._cache, self._own, tables.table
"""
    assert private_uses("packetrow_env.vector.observe", source) == {
        "packetrow_env.observation._BLOCK_ROWS", "packetrow_env.engine._refill", "packetrow_env.scoring._CLOCK_DECK",
        "packetrow_env.vector.tables._table_cache", "packetrow_agents.policy_batch._logits"}
    # a package importing its own private names, and a module naming its own, use nothing across
    assert private_uses("packetrow_env", "from . import _private\nimport packetrow_env\npacketrow_env._x") == set()
