"""The README's generated parts match the code."""

from pathlib import Path

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
