"""Packet Row's Gymnasium id, registered when ``packetrow_env`` is imported.

``GAME_TYPE.gymnasium_id``, ``packetrow/SingleAgent-v2`` (Gymnasium's ``namespace/Name-vN``; the version is the env's,
as in the PettingZoo id ``packetrow_v2``), names one learner seat against opponents: ``gymnasium.make`` builds the
single-agent env (``single_agent_env.SingleAgentEnv``), ``gymnasium.make_vec`` the batched vector env
(``vector.gymnasium_env.PacketRowVectorEnv``) through the id's ``vector_entry_point``. Both are built by
``packetrow_agents.gymnasium_envs``, which resolves opponents named by agent spec (``opponents="heuristic"``): only
the agents' layer knows agents by name (docs/design.md "The layers"), so this module names the builders as strings,
which Gymnasium imports when an env is made, and imports nothing above ``packetrow_env``.

Importing ``packetrow_env`` never loads Gymnasium (the rules import without the RL stack, tests/test_imports.py), so
``register_with_gymnasium`` registers the id at once where Gymnasium is loaded, and otherwise the moment it loads
(a one-shot hook on ``sys.meta_path``): ``import packetrow_env`` then ``gymnasium.make(...)`` works in either order.
Gymnasium 1.x has no plugin discovery (the ``gymnasium.envs`` entry-point group went with 1.0), so an import is how
its users find an env: ``gymnasium.make("packetrow_env:packetrow/SingleAgent-v2")`` imports the package itself.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

BUILDERS = "packetrow_agents.gymnasium_envs"  # the module whose functions build the id's envs


def register_with_gymnasium() -> None:
    """Register the id now if Gymnasium is loaded, else as soon as it is imported (``packetrow_env`` calls this)."""
    if "gymnasium" in sys.modules:
        register()
    elif not any(isinstance(finder, _RegisterWhenLoaded) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterWhenLoaded())


def register() -> None:
    """Register the id with Gymnasium, once (a later call changes nothing)."""
    import gymnasium

    from .game_info import GAME_TYPE  # read here: the description loads the encoders, which the import should not

    if GAME_TYPE.gymnasium_id not in gymnasium.registry:
        gymnasium.register(GAME_TYPE.gymnasium_id, entry_point=f"{BUILDERS}:single_agent_env",
                           vector_entry_point=f"{BUILDERS}:vector_env")


class _RegisterWhenLoaded(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on the first import of Gymnasium it leaves the import system, lets the usual finders find
    Gymnasium, and has that loader register the id once the package has run."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module  # this spec's own loader: the finders build one per spec

            def run_then_register(module):
                run(module)
                register()

            spec.loader.exec_module = run_then_register
        return spec
