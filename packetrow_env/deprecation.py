"""Old import paths of moved modules: each keeps working for one minor version, with a ``DeprecationWarning``.

``MOVED`` is the one list (old module -> new module); ``docs/changelog.md`` says when each moved. The file left at
an old path calls ``alias_module(__name__)``: importing it gives the new module itself (the same object with every
name, so ``isinstance`` checks and pickles agree) after warning the importer once.

The alias is a name in a table, not a static import: an old path in a lower layer (``packetrow_agents.records``)
may name a module in a higher one (``packetrow_arena.records``) without the lower package depending on it.
"""

from __future__ import annotations

import importlib
import sys
import warnings

REMOVED_IN = "0.5.0"
MOVED = {
    "packetrow_agents.records": "packetrow_arena.records",
    "packetrow_agents.replay": "packetrow_arena.replay",
    "packetrow_env.compact": "packetrow_env.render_compact",
    "packetrow_env.wrappers": "packetrow_env.single_agent_env",
    "packetrow_train.cli": "packetrow_cli.main",
    "packetrow_train.duplicate": "packetrow_arena.duplicate_deals",
    "packetrow_train.ladder": "packetrow_arena.ladder",
    "packetrow_train.population": "packetrow_arena.population",
    "packetrow_train.ray_cluster": "packetrow_arena.ray_cluster",
    "packetrow_train.stats": "packetrow_arena.stats",
    "packetrow_train.tournament": "packetrow_arena.tournament",
}


def moved_message(old: str) -> str:
    """What the warning for importing ``old`` says: where it went and when the old name stops working."""
    return f"{old} moved to {MOVED[old]}; the old name stops working in packetrow {REMOVED_IN}"


def alias_module(old: str) -> None:
    """Make the module being imported as ``old`` the module it moved to, warning the code that imported it."""
    # stacklevel 3: past this function and the file at the old path to the importing line (warnings skips the
    # import machinery's frames), so Python's default filter shows it when that line is in the user's __main__
    warnings.warn(moved_message(old), DeprecationWarning, stacklevel=3)
    sys.modules[old] = importlib.import_module(MOVED[old])
