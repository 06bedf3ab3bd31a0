"""The README and the docs pages: their generated parts match the code, their links resolve, and every
```python block in them runs as written."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from packetrow_env.compact_observation import encoder as compact_encoder
from packetrow_env.observation import added_pieces_table, layout_table
from packetrow_train.config import config_reference
from packetrow_train.rllib_selfplay import RLlibConfig

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]


def generated(text: str, marker: str) -> str:
    """What stands between ``<!-- marker -->`` and ``<!-- /marker -->``."""
    start = text.index(f"<!-- {marker} -->") + len(f"<!-- {marker} -->")
    return text[start:text.index(f"<!-- /{marker} -->")].strip()


def test_the_observation_tables_are_generated_from_the_layouts():
    text = (DOCS / "environment.md").read_text()
    assert generated(text, "observation-layout") == layout_table().strip(), "regenerate it with `packetrow layout`"
    assert generated(text, "observation-layout-online") == added_pieces_table("online").strip(), \
        "regenerate it with added_pieces_table('online')"
    assert generated(text, "compact-observation-layout") == compact_encoder().layout_table("online").strip(), \
        "regenerate it with compact_observation.encoder().layout_table('online')"


def test_the_config_references_are_generated_from_the_schemas():
    assert generated((DOCS / "training.md").read_text(), "config-reference") == config_reference(), \
        "regenerate it with packetrow_train.config.config_reference()"
    assert generated((DOCS / "ray.md").read_text(), "rllib-config-reference") == config_reference(RLlibConfig), \
        "regenerate it with config_reference(RLlibConfig)"


CI = (ROOT / ".ci" / "run").read_text()
# how .ci/run finds the README's test command, and runs it
README_TEST_COMMAND = "grep -m1 -E '^pip install .*python -m pytest' README.md"


def test_ci_runs_the_readmes_test_command_in_a_fresh_environment():
    commands = [line for line in README.read_text().splitlines() if re.match(r"pip install .*python -m pytest", line)]
    assert len(commands) == 1, commands  # the one line .ci/run takes
    assert f"test_command=$({README_TEST_COMMAND})" in CI and 'eval "$test_command"' in CI
    fresh = CI.index("fresh_venv .ci/venv-test")
    assert fresh < CI.index("source .ci/venv-test/bin/activate") < CI.index('eval "$test_command"')


def test_ci_builds_the_docs_with_warnings_as_errors():
    assert "sphinx-build -q -W --keep-going -b html docs docs/_build/html" in CI
    assert CI.index("sphinx-build") < CI.index('eval "$test_command"')


def test_ci_smokes_the_wheel_installed_non_editable_from_an_empty_directory():
    assert '.ci/venv-wheel/bin/pip install -q "$wheel[train,web,cli]"' in CI
    assert 'cd "$smoke_dir" && "$root/.ci/venv-wheel/bin/python" "$root/.ci/wheel_smoke.py"' in CI


def test_the_readme_is_an_entry_point():
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    assert "(docs/rules.md)" in text and "(docs/index.md)" in text


def test_every_page_of_the_docs_is_linked_from_the_readme_or_the_index():
    linked = set(re.findall(r"\]\(docs/(\w+)\.md\)", README.read_text()))
    linked |= set(re.findall(r"^(\w+)$", (DOCS / "index.md").read_text(), flags=re.MULTILINE))
    assert {page.stem for page in DOCS.glob("*.md")} - {"index"} <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_resolves(page):
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text())
    missing = [t for t in targets if "://" not in t and not (page.parent / t).exists()]
    assert missing == []


def python_blocks() -> list[tuple[str, int, str]]:
    """Every ```python block of the README and the docs pages: (page, its number on the page, code)."""
    blocks = []
    for page in PAGES:
        found = re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.MULTILINE | re.DOTALL)
        blocks += [(page.name, number, code) for number, code in enumerate(found, start=1)]
    return blocks


def test_the_readme_and_the_docs_have_python_examples():
    pages = [page for page, _, _ in python_blocks()]
    assert pages.count("README.md") >= 5
    assert {"engine.md", "environment.md", "vector.md", "catalogue.md"} <= set(pages)


@pytest.mark.parametrize("page, number, code", python_blocks(), ids=lambda value: str(value)[:20])
def test_every_python_block_runs_as_written(page, number, code, tmp_path):
    """Each block runs in a fresh interpreter in a copy of the checkout root (links to its files): what a block
    writes, such as my_cards.csv, lands in the copy."""
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{page} python block {number} failed:\n{run.stderr}"
