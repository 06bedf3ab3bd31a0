"""docs/rule_map.md, the rule-to-code map: up to date, complete, and naming only code that exists."""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = importlib.util.spec_from_file_location("rule_map", ROOT / "docs" / "rule_map.py")
rule_map = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(rule_map)


def defined_ids() -> list[str]:
    return re.findall(r"^\*\*(R-[A-Z]+-\d+)\.\*\*", (ROOT / "docs" / "rules.md").read_text(), flags=re.MULTILINE)


def table() -> dict[str, dict[str, list[str]]]:
    """The page's main table: rule -> engine and batch names."""
    rows = {}
    for line in (ROOT / "docs" / "rule_map.md").read_text().split("\n## ")[0].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if re.fullmatch(r"R-[A-Z]+-\d+", cells[0]):
            rows[cells[0]] = {side: re.findall(r"`([^`]+)`", cell) for side, cell in zip(rule_map.SIDES, cells[2:])}
    return rows


def resolve(name: str):
    """The object a dotted name of the map stands for: a module, then attributes of it."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module("packetrow_env." + ".".join(parts[:k]))
        except ModuleNotFoundError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise AssertionError(f"{name} names no module of packetrow_env")


def test_the_page_is_up_to_date():
    result = subprocess.run([sys.executable, "docs/rule_map.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (ROOT / "docs" / "rule_map.md").read_text().startswith("# Rule-to-code map\n")


def test_check_fails_on_a_stale_page(tmp_path, monkeypatch, capsys):
    page = tmp_path / "rule_map.md"
    monkeypatch.setattr(rule_map, "PAGE", page)
    monkeypatch.setattr(rule_map, "ROOT", tmp_path)
    assert rule_map.main(["--check"]) == 1  # missing
    assert rule_map.main([]) == 0 and rule_map.main(["--check"]) == 0
    page.write_text(page.read_text().replace("`engine.Game.new`", "`engine.Game.old`"))
    assert rule_map.main(["--check"]) == 1
    assert "rule_map.md is stale: run python docs/rule_map.py" in capsys.readouterr().err


def test_every_rule_of_the_rules_document_is_in_the_map_once_in_order():
    assert list(table()) == defined_ids()
    assert [rule for rule, _ in rule_map.rules((ROOT / "docs" / "rules.md").read_text())] == defined_ids()


def test_every_location_named_exists():
    rows = table()
    names = {(name, side) for sides in rows.values() for side, found in sides.items() for name in found}
    assert len(names) > 80
    for name, side in sorted(names):
        assert name.startswith("vector") == (side == "batch"), name
        assert resolve(name) is not None


def test_every_play_rule_has_an_engine_and_a_batch_location_unless_listed_with_a_reason():
    rows = table()
    for rule, sides in rows.items():
        listed = rule in rule_map.ONE_SIDE or rule in rule_map.NOT_IN_CODE
        if rule.rsplit("-", 1)[0] in rule_map.PLAY_GROUPS and not listed:
            assert sides["engine"] and sides["batch"], rule
        if rule not in rule_map.NOT_IN_CODE:
            assert sides["engine"] or sides["batch"], f"{rule}: no code names it and NOT_IN_CODE does not list it"
    for rule in rule_map.NOT_IN_CODE:  # the lists stay honest: a listed rule really lacks what it says
        assert rows[rule] == {"engine": [], "batch": []}, rule
    for rule in rule_map.ONE_SIDE:
        assert rule.rsplit("-", 1)[0] in rule_map.PLAY_GROUPS and not all(rows[rule].values()), rule
    assert all(reason for reason in {**rule_map.ONE_SIDE, **rule_map.NOT_IN_CODE}.values())


def test_the_map_knows_the_engine_and_the_kernels_of_a_rule():
    rows = table()
    assert "engine.Game.new" in rows["R-SETUP-2"]["engine"] and "vector.rules.deal" in rows["R-SETUP-2"]["batch"]
    assert rows["R-REFILL-1"]["engine"][0] == "engine.refill" and "vector.rules._refill" in rows["R-REFILL-1"]["batch"]


def test_ranges_of_ids_are_expanded():
    assert rule_map.cited("(R-SHIP-2..4, R-END-1) and R-SETUP-7") == ["R-SHIP-2", "R-SHIP-3", "R-SHIP-4", "R-END-1",
                                                                       "R-SETUP-7"]
    assert rule_map.cited("R-REFILL and R-INFO") == []


def test_an_id_belongs_to_the_definition_it_sits_in(tmp_path):
    source = tmp_path / "example.py"
    source.write_text(textwrap.dedent('''\
        """Module docstring (R-COMP-1)."""
        LIMIT = 3  # R-END-1

        # R-SETUP-4: the supply sizes
        SIZES = {2: 2}


        class Game:
            """A game (R-SCORE-4)."""

            @staticmethod
            def new():
                def inner():
                    return 1  # R-SETUP-2
                return inner()  # R-SETUP-5
        '''))
    assert rule_map.locations(source, "example") == {
        "R-COMP-1": ["example"], "R-END-1": ["example.LIMIT"], "R-SETUP-4": ["example.SIZES"],
        "R-SCORE-4": ["example.Game"], "R-SETUP-2": ["example.Game.new"], "R-SETUP-5": ["example.Game.new"]}


@pytest.mark.parametrize("text, title", [
    ("**R-COMP-1.** There are four **boards**. More.\n", "There are four boards"),
    ("**R-COMP-1.** Bankers. With 2 or 3 players. More.\n", "Bankers. With 2 or 3 players"),
    ("**R-COMP-1.** " + "word " * 40 + "\n", ("word " * 18).strip() + " ..."),  # cut at a word within 90 characters
])
def test_a_title_is_the_rules_first_sentence(text, title):
    assert rule_map.rules(text) == [("R-COMP-1", title)]
