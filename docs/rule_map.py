"""Generate docs/rule_map.md: every rule id of docs/rules.md and the code that implements it.

The code names the rules it implements in its comments and docstrings (``# R-SETUP-2``, ``(R-SHIP-2..4)``); this
script reads those ids with ``ast`` and ``tokenize`` and names the definition each one sits in, as
``module.function`` (``engine.Game.new``, ``vector.rules.deal``). The readable engine is ``packetrow_env/*.py``,
the batch kernels ``packetrow_env/vector/*.py``. A rule that no code implements, or that only one side needs,
is listed below with the reason.

    python docs/rule_map.py          # rewrite docs/rule_map.md
    python docs/rule_map.py --check  # exit 1 if docs/rule_map.md is stale
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "docs" / "rules.md"
PAGE = ROOT / "docs" / "rule_map.md"
PACKAGE = ROOT / "packetrow_env"
SIDES = ("engine", "batch")

# The rule groups that say how the game is played: the engine and the batch must both implement each of them.
PLAY_GROUPS = ("R-SETUP", "R-ROUND", "R-TAKE", "R-REFILL", "R-END", "R-SHIP", "R-SCORE")

# Rules no code implements, and why.
NOT_IN_CODE = {
    "R-COMP-4": "the general supply is unbounded: no code counts money out of it, and cash is public by being "
                "in the state (R-INFO-1)",
}
# Play rules one side implements alone, and why.
ONE_SIDE = {
    "R-END-2": "a property, not an action: state.MAX_ROUNDS bounds a game's length by it, and the batch sizes "
               "nothing by rounds",
}

_ID = re.compile(r"\b(R-[A-Z]+)-(\d+)(?:\.\.(\d+))?")
_RULE = re.compile(r"^\*\*(R-[A-Z]+-\d+)\.\*\*\s*(.*?)(?=^\*\*R-|^#|\Z)", re.MULTILINE | re.DOTALL)
_TITLE_LENGTH = 90


def rules(text: str) -> list[tuple[str, str]]:
    """(rule id, title) of every rule of the rules document, in its order; the title is the rule's first sentence
    (two when the first is a heading word), cut at a word to at most 90 characters."""
    out = []
    for rule, body in _RULE.findall(text):
        paragraph = body.split("\n\n")[0]  # a table may follow
        plain = " ".join(paragraph.replace("**", "").replace("`", "").split())
        sentences = re.split(r"(?<=[.;])\s", plain)
        sentence = sentences[0]
        if len(sentence.split()) < 3 and len(sentences) > 1:  # a heading such as "Bankers." says too little alone
            sentence += " " + sentences[1]
        sentence = sentence.rstrip(".;:")
        if len(sentence) > _TITLE_LENGTH:
            sentence = sentence[:_TITLE_LENGTH].rsplit(" ", 1)[0] + " ..."
        out.append((rule, sentence))
    return out


def cited(text: str) -> list[str]:
    """The rule ids a comment or docstring names, ranges such as R-SHIP-2..4 expanded."""
    out = []
    for group, first, last in _ID.findall(text):
        out += [f"{group}-{k}" for k in range(int(first), int(last or first) + 1)]
    return out


def _definitions(tree: ast.Module, module: str) -> list[tuple[int, int, str, ast.AST]]:
    """(first line, last line, dotted name, node) of every class, function, method and module-level assignment
    (a function's nested definitions belong to it)."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out.append((first, child.end_lineno, f"{prefix}.{child.name}", child))
                if isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}.{child.name}")
            elif node is tree and isinstance(child, (ast.Assign, ast.AnnAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                names = [t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)]
                if names:
                    out.append((child.lineno, child.end_lineno, f"{prefix}.{names[0]}", child))
    visit(tree, module)
    return out


def _owner(definitions, line: int, own_line: bool, module: str) -> str:
    """The innermost definition holding ``line``; a comment alone on its line between definitions belongs to the
    next module-level one (it introduces it)."""
    holding = [(first, name) for first, last, name, _ in definitions if first <= line <= last]
    if holding:
        return max(holding)[1]
    if own_line:
        depth = module.count(".") + 1
        after = [(first, name) for first, _, name, _ in definitions if first > line and name.count(".") == depth]
        if after:
            return min(after)[1]
    return module


def locations(path: Path, module: str) -> dict[str, list[str]]:
    """Rule id -> the definitions of one source file that name it in a comment or docstring, in file order."""
    source = path.read_text()
    tree = ast.parse(source)
    definitions = _definitions(tree, module)
    found: dict[str, list[str]] = {}

    def add(text, name):
        for rule in cited(text):
            if name not in found.setdefault(rule, []):
                found[rule].append(name)

    docstring = ast.get_docstring(tree, clean=False)
    if docstring:
        add(docstring, module)
    for _, _, name, node in definitions:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                add(docstring, name)
    lines = source.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            line = token.start[0]
            own_line = not lines[line - 1][:token.start[1]].strip()
            add(token.string, _owner(definitions, line, own_line, module))
    return found


def code_map() -> dict[str, dict[str, list[str]]]:
    """Rule id -> side (engine, batch) -> the definitions naming it, modules in name order."""
    out: dict[str, dict[str, list[str]]] = {}
    for side, folder, prefix in (("engine", PACKAGE, ""), ("batch", PACKAGE / "vector", "vector.")):
        for path in sorted(folder.glob("*.py")):
            module = prefix + path.stem if path.stem != "__init__" else prefix.rstrip(".")
            for rule, names in locations(path, module).items():
                out.setdefault(rule, {s: [] for s in SIDES})[side] += names
    return out


def _cell(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "-"


def render() -> str:
    """The page: a table of every rule with its engine and batch locations, then the rules listed with reasons."""
    found = code_map()
    lines = [
        "# Rule-to-code map",
        "",
        "Where each rule of [the rules document](rules.md) is implemented: in the readable engine",
        "(`packetrow_env/*.py`, names relative to `packetrow_env`) and in the batch kernels",
        "(`packetrow_env/vector/*.py`), which tests/test_vector.py plays side by side with the engine.",
        "Generated by `python docs/rule_map.py` from the rule ids in the code's comments and docstrings; do not",
        "edit it by hand. tests/test_rule_map.py checks that it is up to date and that every name in it exists.",
        "",
        "| rule | title | engine | batch |",
        "|---|---|---|---|",
    ]
    for rule, title in rules(RULES.read_text()):
        sides = found.get(rule, {s: [] for s in SIDES})
        lines.append(f"| {rule} | {title.replace('|', '/')} | {_cell(sides['engine'])} | {_cell(sides['batch'])} |")
    lines += ["", "## Rules no code implements", "", "| rule | why |", "|---|---|"]
    lines += [f"| {rule} | {why} |" for rule, why in NOT_IN_CODE.items()]
    lines += ["", "## Play rules on one side only", "", "| rule | why |", "|---|---|"]
    lines += [f"| {rule} | {why} |" for rule, why in ONE_SIDE.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the page, or with --check say whether it is up to date (exit status 1 if not)."""
    parser = argparse.ArgumentParser(description="Generate docs/rule_map.md from docs/rules.md and the code.")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/rule_map.md is not up to date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE.relative_to(ROOT)} is stale: run python docs/rule_map.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
