"""The README's generated parts match the code, and every Python example in it runs as written."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from packetrow_env.observation import added_pieces_table, layout_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_observation_table_is_generated_from_the_layout():
    text = README.read_text()
    start = text.index("<!-- observation-layout -->") + len("<!-- observation-layout -->")
    end = text.index("<!-- /observation-layout -->")
    assert text[start:end].strip() == layout_table().strip(), "regenerate it with `packetrow layout`"
    start = text.index("<!-- observation-layout-online -->") + len("<!-- observation-layout-online -->")
    end = text.index("<!-- /observation-layout-online -->")
    assert text[start:end].strip() == added_pieces_table("online").strip(), "regenerate it with added_pieces_table"


def test_readme_test_command_is_what_ci_runs():
    ci = (README.parent / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in README.read_text()


def python_blocks() -> list[str]:
    """The README's ```python blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.MULTILINE | re.DOTALL)


def test_the_readme_has_python_examples():
    assert len(python_blocks()) >= 5


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_every_python_block_of_the_readme_runs_as_written(index, tmp_path):
    """Each block runs in a fresh interpreter in a copy of the checkout root (links to its files): what a block
    writes, such as my_cards.csv, lands in the copy."""
    for entry in README.parent.iterdir():
        if not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    run = subprocess.run([sys.executable, "-c", python_blocks()[index]], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, f"README python block {index + 1} failed:\n{run.stderr}"
