"""docs/rules.md is the project's rules document: it defines every rule id the code and tests cite, once each."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "docs" / "rules.md"
RULE_ID = re.compile(r"R-[A-Z]+(?:-\d+)?")


def defined_ids() -> list[str]:
    return re.findall(r"^\*\*(R-[A-Z]+-\d+)\.\*\*", RULES.read_text(), flags=re.MULTILINE)


def test_each_rule_is_defined_once_and_numbered_without_gaps():
    ids = defined_ids()
    assert len(ids) == len(set(ids)) and len(ids) >= 40
    groups: dict[str, list[int]] = {}
    for rule in ids:
        group, number = rule.rsplit("-", 1)
        groups.setdefault(group, []).append(int(number))
    assert {g: n for g, n in groups.items() if n != list(range(1, len(n) + 1))} == {}
    assert set(groups) == {"R-COMP", "R-SETUP", "R-ROUND", "R-TAKE", "R-REFILL", "R-END", "R-SHIP", "R-SCORE",
                           "R-INFO", "R-VAR"}
    assert {"R-SHIP-7", "R-SHIP-8", "R-INFO-4", "R-VAR-1", "R-VAR-2"} <= set(ids)  # the rules of version 1


def test_every_rule_id_cited_in_the_project_is_defined():
    ids = set(defined_ids())
    groups = {rule.rsplit("-", 1)[0] for rule in ids}
    files = [ROOT / "README.md", *(ROOT / "tests").glob("*.py")]
    for folder in ("packetrow_env", "agents", "train"):
        files += (ROOT / folder).glob("*.py")
    cited = {(path.name, rule) for path in files for rule in RULE_ID.findall(path.read_text())}
    assert cited, "the tests cite rule ids"
    unknown = sorted((name, rule) for name, rule in cited if rule not in ids and rule not in groups)
    assert unknown == []


def test_the_readme_and_the_terminal_help_link_the_rules_document():
    from packetrow_agents.terminal import help_text
    from packetrow_env.engine import Game

    assert "(docs/rules.md)" in (ROOT / "README.md").read_text()
    assert "docs/rules.md" in help_text(Game.new(3, seed=0))
    files = [ROOT / "README.md", *(ROOT / "tests").glob("*.py"), *(ROOT / "notebooks").glob("*.ipynb")]
    for folder in ("packetrow_env", "agents", "train"):
        files += (ROOT / folder).glob("*.py")
    old_name = "RULES" + ".md"  # spelled apart, so this file does not cite it
    assert [path.name for path in files if old_name in path.read_text()] == []
