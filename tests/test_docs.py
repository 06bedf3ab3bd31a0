"""The README and the docs pages: their generated parts match the code, their links resolve, every ```python
block in them runs as written, and every ``packetrow`` command they show parses."""

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from packetrow_cli.main import build_parser
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
    assert len(text.splitlines()) <= 200
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


def fenced_blocks(text: str) -> list[tuple[str, str, str]]:
    """Every fenced block of a Markdown page, at any indentation, with ``` or ~~~: (its opening line, its info
    string, its code)."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = re.match(r"^[ \t]*(`{3,}|~{3,})(.*)$", lines[i])
        if not opening:
            i += 1
            continue
        fence = opening.group(1)
        end = next((j for j in range(i + 1, len(lines))
                    if re.match(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", lines[j])), len(lines))
        blocks.append((lines[i], opening.group(2).strip(), "\n".join(lines[i + 1:end])))
        i = end + 1
    return blocks


# what a fence's info string names Python as: python, py, python3, pycon, ipython; or a MyST directive's argument
PYTHON_INFO = re.compile(r"^(\{[\w-]+\}\s*)?(python\d?|py|pycon|ipython\d?)\b", re.IGNORECASE)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_python_block_of_a_page_is_one_the_suite_runs(page):
    """A Python block that ``python_blocks`` would not collect (indented, another fence or spelling, reST's
    code-block) would never run: every one must be a plain ```python block."""
    text = page.read_text()
    python = [opening for opening, info, _ in fenced_blocks(text) if PYTHON_INFO.match(info)]
    assert [opening for opening in python if opening != "```python"] == [], "write it as a ```python block"
    assert len(python) == sum(1 for name, _, _ in python_blocks() if name == page.name)
    assert not re.search(r"^\s*\.\. (code-block|code|sourcecode)::\s*python", text, flags=re.MULTILINE)


def packetrow_commands() -> list[tuple[str, list[str]]]:
    """Every ``packetrow`` command of the README and the docs pages: the lines of their ```bash blocks and the
    ``$ ``-prompted lines of their other blocks (transcripts), as (page, its words after ``packetrow``)."""
    commands = []
    for page in PAGES:
        for _, info, code in fenced_blocks(page.read_text()):
            if PYTHON_INFO.match(info):
                continue
            for line in code.replace("\\\n", " ").splitlines():
                if info != "bash":
                    if not line.startswith("$ "):
                        continue
                    line = line[2:]
                for part in line.split("&&"):  # "pip install ... && packetrow train ..."
                    words = shlex.split(part, comments=True)
                    if words[:1] == ["packetrow"]:
                        commands.append((page.name, words[1:]))
    return commands


def test_the_readme_and_the_docs_show_packetrow_commands():
    pages = [page for page, _ in packetrow_commands()]
    assert pages.count("README.md") >= 5 and {"agents.md", "model_card.md", "evaluation.md"} <= set(pages)


@pytest.mark.parametrize("page, words", packetrow_commands(), ids=lambda value: str(value)[:40])
def test_every_packetrow_command_of_the_docs_parses(page, words, capsys):
    """Each command shown parses with the ``packetrow`` parser: its subcommand and options exist and take those
    values. Parsed, not run: the pages' commands are long jobs (training, 1,000-game tournaments, a Ray cluster)
    or interactive (the terminal, the browser)."""
    try:
        build_parser(words[0]).parse_args(words)
    except SystemExit:
        pytest.fail(f"{page}: packetrow {shlex.join(words)}\n{capsys.readouterr().err}")


# a block that needs an extra says so on its first line, naming the module it needs: '# needs the [mcp] extra: mcp'
NEEDS_EXTRA = re.compile(r"# needs the \[(\w+)\] extra: (\w+)")


@pytest.mark.parametrize("page, number, code", python_blocks(), ids=lambda value: str(value)[:20])
def test_every_python_block_runs_as_written(page, number, code, tmp_path):
    """Each block runs in a fresh interpreter in a copy of the checkout root (links to its files): what a block
    writes, such as my_cards.csv, lands in the copy. A block that needs an extra not installed here is skipped."""
    needs = NEEDS_EXTRA.match(code)
    if needs and importlib.util.find_spec(needs[2]) is None:
        pytest.skip(f"{page} python block {number} needs the [{needs[1]}] extra")
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{page} python block {number} failed:\n{run.stderr}"
