"""Moved modules' old import paths (``packetrow_env.deprecation.MOVED``) still import, for one minor version: each
gives the new module itself after a DeprecationWarning attributed to the importing line, and the changelog lists
every one."""

import subprocess
import sys
from pathlib import Path

import pytest

from packetrow_env.deprecation import MOVED, REMOVED_IN

CHANGELOG = (Path(__file__).resolve().parent.parent / "docs" / "changelog.md").read_text()


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_gives_the_new_module(old):
    code = (f"import importlib, warnings\nwarnings.simplefilter('error', DeprecationWarning)\n"
            f"new = importlib.import_module({MOVED[old]!r})\n"
            f"try:\n    import {old}\nexcept DeprecationWarning as warning:\n    print(warning)\n"
            f"warnings.simplefilter('ignore')\nimport {old} as again\nassert again is new, again")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"{old} moved to {MOVED[old]}; the old name stops working in packetrow {REMOVED_IN}"


def test_the_warning_is_shown_by_default_in_a_users_script(tmp_path):
    script = tmp_path / "old.py"
    script.write_text("from packetrow_arena.tournament import run_tournament\n"
                      "from packetrow_train.tournament import run_tournament as old\nassert old is run_tournament\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    expected = f"{script}:2: DeprecationWarning: packetrow_train.tournament moved to packetrow_arena.tournament"
    assert expected in run.stderr


@pytest.mark.parametrize("old", sorted(MOVED))
def test_the_changelog_lists_every_moved_module(old):
    assert f"`{old}` -> `{MOVED[old]}`" in CHANGELOG
