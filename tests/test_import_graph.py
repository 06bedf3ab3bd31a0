"""The packages' imports: every module imports alone (no other packetrow module imported first), and the static
import graph has no cycle and keeps the layers.

Layers (docs/design.md): packetrow_env imports no other packetrow package; packetrow_agents only packetrow_env;
packetrow_arena only those two; packetrow_web and packetrow_train the layers below them, not each other; the
command (packetrow_cli) names its subcommands' modules in a table and imports one only when it runs. The graph is read
from the source (module-level and function-level imports alike), so an import deferred into a function cannot
hide a cycle.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES = ("packetrow_env", "packetrow_agents", "packetrow_arena", "packetrow_train", "packetrow_web",
            "packetrow_mcp", "packetrow_cli", "packetrow_models", "packetrow_configs")
# which packetrow packages each package may import (its own always)
LAYERS = {"packetrow_env": set(), "packetrow_agents": {"packetrow_env"},
          "packetrow_arena": {"packetrow_env", "packetrow_agents"},
          "packetrow_web": {"packetrow_env", "packetrow_agents", "packetrow_arena"},
          "packetrow_mcp": {"packetrow_env", "packetrow_agents"},
          "packetrow_train": {"packetrow_env", "packetrow_agents", "packetrow_arena", "packetrow_models",
                              "packetrow_configs"},
          "packetrow_cli": {"packetrow_env"},  # its subcommands' modules load by name, when one runs
          "packetrow_models": set(), "packetrow_configs": set()}


def package_files(package: str) -> dict[str, Path]:
    """{module name: source file} of every module of an installed packetrow package."""
    root = Path(importlib.util.find_spec(package).submodule_search_locations[0])
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join((package, *parts))] = path
    return found


MODULES = {name: path for package in PACKAGES for name, path in package_files(package).items()}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def resolve_import(module: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module a from-import in ``module`` imports from (relative imports resolved)."""
    if not node.level:
        return node.module
    base = module if _is_package(module) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{node.module}" if node.module else base


def imports_of(module: str) -> set[str]:
    """The packetrow modules ``module`` imports anywhere in its source (a from-import of a submodule names it)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            target = resolve_import(module, node)
            submodules = {f"{target}.{alias.name}" for alias in node.names} & set(MODULES)
            found |= submodules or {target}
    return {name for name in found if name.split(".")[0] in PACKAGES}


GRAPH = {module: imports_of(module) for module in MODULES}


def test_the_graph_covers_every_package_and_knows_every_import():
    assert {m.split(".")[0] for m in MODULES} == set(PACKAGES)
    assert "packetrow_train.config" in GRAPH["packetrow_train.selfplay"]
    unknown = {(m, t) for m, targets in GRAPH.items() for t in targets if t not in MODULES}
    assert not unknown, f"imports of packetrow modules that do not exist: {sorted(unknown)}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module (or a self-import)."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node):  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_import_cycle():
    # a package importing its own submodules (packetrow_env -> packetrow_env.engine) is not a cycle: only the
    # submodules' imports of one another, and of a package's __init__ from outside it, are edges here
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_layers_hold():
    crossing = sorted((module, target) for module, targets in GRAPH.items() for target in targets
                      if target.split(".")[0] not in LAYERS[module.split(".")[0]] | {module.split(".")[0]})
    assert crossing == [], "imports across the layers (env <- agents <- arena <- web, train; the command on top)"


# Imports each module it is sent (one name a line) in a child forked from itself, a process that has imported only
# third-party libraries, and answers one JSON line: the child's exit code and traceback. A fresh interpreter per
# module would import torch and SB3 again each time (2-4 s a module, about 127 modules).
IMPORT_SERVER = r"""
import importlib, json, os, sys, traceback

for library in ("numpy", "numba", "yaml", "gymnasium", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib"):
    try:
        importlib.import_module(library)
    except ImportError:  # an optional library: the modules that need it are skipped
        pass
for line in sys.stdin:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.dup2(2, 1)  # what a module prints must not reach the answers' pipe
        code = 0
        try:
            importlib.import_module(line.strip())
        except BaseException:
            os.write(write, traceback.format_exc().encode())
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        text = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"code": os.waitstatus_to_exitcode(status), "traceback": text}), flush=True)
"""


@pytest.fixture(scope="module")
def import_server():
    server = subprocess.Popen([sys.executable, "-c", IMPORT_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    yield server
    server.stdin.close()
    server.wait(timeout=60)


def import_alone(server, module: str) -> dict:
    """{"code", "traceback"} of importing ``module`` in a child of ``server`` (no packetrow module imported before)."""
    server.stdin.write(module + "\n")
    server.stdin.flush()
    ready, _, _ = select.select([server.stdout], [], [], 300)
    assert ready, f"importing {module} took over 300 s"
    return json.loads(server.stdout.readline())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the import server forks a child per module")
@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_imports_alone(module, import_server):
    run = import_alone(import_server, module)
    missing = re.search(r"ModuleNotFoundError: No module named '([^']+)'", run["traceback"])
    if run["code"] and missing and missing[1].split(".")[0] not in PACKAGES:
        pytest.skip(f"{module} needs {missing[1]}, which is not installed here (an optional dependency)")
    assert run["code"] == 0, run["traceback"]


def test_the_import_server_reports_a_module_that_fails(import_server):
    run = import_alone(import_server, "packetrow_env.no_such_module")
    assert run["code"] == 1 and "No module named 'packetrow_env.no_such_module'" in run["traceback"]
    assert import_alone(import_server, "packetrow_env")["code"] == 0  # and serves on
