"""Reading a move from a free-form reply (a language model's or a person's): the move's string, its number in the
listed moves, or a close variant; where no move can be read, the reason.

``read_move(reply, moves)`` takes the listed move strings (``move_text``: a key, then ``": "`` and a detail) and
returns a ``Reading``: the index of the move read and the rule that read it, or the reason none was read.

Where the answer is looked for, in this order; the first place that names exactly one move is the answer:

1. the reply as JSON (code fences allowed, or the first ``{...}`` in it): a string or a number, or an object's
   ``move``, ``action``, ``answer``, ``choice``, ``index`` or ``number``;
2. ``<answer>`` (``<move>``, ``<action>``, ``<choice>``) tags and ``\\boxed{...}``;
3. the last line marked ``Move:``, ``Answer:``, ``Final answer:``, ``Action:`` or ``Choice:`` (``=`` too);
4. the rest of the last line after "I choose", "I pick", "I select", "I play" or "I (will) go with";
5. the last code block;
6. the last sentence, then the last line, then the first line (an answer, then its reasons);
7. quoted text, the last quote first.

A reply of several lines is never searched as a whole: a move it mentions on the way is no answer.

How a place is read (the ``rule`` of the reading); case, whitespace, markdown emphasis and punctuation are
ignored, ``$`` is kept:

- ``number``: a number alone (``3``, ``#3``, ``3.``, ``(3)``, ``move 3``): the move listed at that number, from 1;
- ``string``, ``key``, ``detail``, ``name``: a move string; its key; its detail, or its detail without the price
  (``3 fur``), where no other move has it; an action's short name (``take:1``, ``pass``); the same after a list
  number (``3. take slot 1 of the market``);
- ``prefix``, ``suffix``: the start of exactly one move string, or the end of exactly one key, in whole words
  (``take slot 1``, ``ship``; ``option 2``, ``the docks``);
- ``inside``: exactly one move named inside it (its string, key, or unique detail or card), as in a sentence; a
  name inside another move's name counts as that other (a ``pass`` inside a detail is no pass);
- ``fuzzy``: ``difflib`` similarity at least ``FUZZY`` to one move's string, key or unique detail, ahead of every
  other move's by ``MARGIN``, with the same numbers (``slot 2`` is never ``slot 1``) and every word like one of the
  move's (a typo: ``markt`` is the market, the ``bank`` is never the market).

A reply longer than ``MAX_REPLY`` characters is read from its end (where a long reasoning puts its answer).

The reasons none is read: a number out of the list's range, or a short name of an action that is not legal now (an
answer, a wrong one: the places after it are not tried); else, most telling first, several moves named where one
was wanted, or no move named (with the closest one, where one is near).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

MAX_REPLY = 20_000
FUZZY = 0.8
MARGIN = 0.05
NEAR = 0.6  # a refusal names the closest move from this similarity on

_JSON_FIELDS = ("move", "action", "answer", "choice", "index", "number")
_FENCE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)```", re.DOTALL)
_TAGS = (re.compile(r"<(answer|move|action|choice)>(.*?)</\1>", re.DOTALL | re.IGNORECASE),
         re.compile(r"\\boxed\{()([^{}]*)\}"))
_MARKED = re.compile(r"(?:final answer|answer|move|action|choice)\s*(?:is)?\s*[:=]\s*(.+)", re.IGNORECASE)
_CHOSEN = re.compile(r"\bi\s+(?:will\s+|'ll\s+|would\s+|'d\s+)?(?:choose|pick|select|play|go\s+with)\s+(.+)",
                     re.IGNORECASE)
_QUOTED = re.compile(r"\"([^\"\n]+)\"|'([^'\n]+)'|`([^`\n]+)`|\u201c([^\u201d\n]+)\u201d|\u2018([^\u2019\n]+)\u2019")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NUMBER = re.compile(r"(?:move\s*|number\s*|no\.?\s*)?#?(-?\d+)\.?", re.IGNORECASE)
_LIST_NUMBER = re.compile(r"^\s*[(#]?\d+[.):]\s+")
_PRICE = re.compile(r"\s*\(\$\d+\)$")
_DIGITS = re.compile(r"\d+")
_FILLER = {"a", "an", "the", "of", "from", "at", "in", "on", "to", "with", "i", "will", "ll", "want", "please"}
_WORD_LIKE = 0.75  # a fuzzy match: each word of the reply is this like a word of the move (a typo, not another word)

# the reasons, most telling first (a reading keeps the most telling of its places' reasons)
_OUT_OF_RANGE, _NOT_LEGAL, _SEVERAL, _NONE = range(4)


class Reading(NamedTuple):
    """What ``read_move`` read: ``index`` of the move and the ``rule`` that read it, or ``error``, the reason none
    was read (``index`` None)."""

    index: int | None
    rule: str = ""
    error: str = ""


def loose(text: str) -> str:
    """``text`` as the reader compares it: lower case, every run of characters but letters, digits and ``$`` one
    space."""
    return " ".join(re.sub(r"[^a-z0-9$]+", " ", text.lower()).split())


def _unique(forms: list[str]) -> list[str]:
    """Each form where no other move has it, else ""."""
    return [f if f and forms.count(f) == 1 else "" for f in forms]


class _Moves:
    """The listed moves in the reader's forms: strings, keys, the details and cards no other move has, names."""

    def __init__(self, moves: Sequence[str], names: dict[str, int], known_names: Iterable[str]):
        self.texts = list(moves)
        self.full = [loose(m) for m in moves]
        self.keys = [loose(m.partition(": ")[0]) for m in moves]
        details = [m.partition(": ")[2] for m in moves]
        self.details = _unique([loose(d) for d in details])
        self.cards = _unique([loose(_PRICE.sub("", d)) if _PRICE.search(d) else "" for d in details])
        self.names = {loose(n): i for n, i in names.items()}
        self.known = {loose(n) for n in known_names}
        self.longest = max(len(f) for f in self.full)

    def forms(self, i: int) -> list[str]:
        return [f for f in (self.full[i], self.keys[i], self.details[i], self.cards[i]) if f]

    def named(self, text: str) -> Reading | None:
        """The move whose string, key, unique detail or card, or short name ``text`` is exactly."""
        for table, rule in ((self.full, "string"), (self.keys, "key"), (self.details, "detail"),
                            (self.cards, "detail")):
            if text in table:
                return Reading(table.index(text), rule)
        return Reading(self.names[text], "name") if text in self.names else None


def _places(reply: str) -> list[str]:
    """Where the answer may stand, in the order they are tried (module docstring)."""
    text = reply.replace("*", "")  # markdown emphasis: **Move:** take ...
    places = _json_answers(text)
    for tag in _TAGS:
        places += [found[1] for found in tag.findall(text)[-1:]]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for pattern in (_MARKED, _CHOSEN):
        places += [m.group(1) for line in lines if (m := pattern.search(line))][-1:]
    places += _FENCE.findall(text)[-1:]
    places += [_SENTENCE_END.split(line)[-1] for line in lines[-1:]] + lines[-1:] + lines[:1]
    return places + [next(filter(None, groups)) for groups in reversed(_QUOTED.findall(text))]


def _json_answers(text: str) -> list[str]:
    """The answer of a reply that is JSON (fenced or not, or the first object in it), as text; none if it is not."""
    found = re.search(r"\{.*\}", text, re.DOTALL)
    for candidate in (text.strip(), *_FENCE.findall(text), found.group(0) if found else ""):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            fields = {str(k).lower(): v for k, v in value.items()}
            value = next((fields[f] for f in _JSON_FIELDS if f in fields), None)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return [str(value)]
    return []


def _read_place(place: str, moves: _Moves) -> Reading | tuple[int, str]:
    """The move one place names (a Reading), or (how telling, reason) where it names none."""
    number = _NUMBER.fullmatch(place.strip().strip("\"'`()[]{}<>:").strip())
    if number:
        n = int(number.group(1))
        if 1 <= n <= len(moves.texts):
            return Reading(n - 1, "number")
        return _OUT_OF_RANGE, f"there is no move {n}: the moves are numbered 1-{len(moves.texts)}"
    text = loose(place)
    for candidate in (text, loose(_LIST_NUMBER.sub("", place))):
        named = moves.named(candidate)
        if named:
            return named
    if text in moves.known:
        return _NOT_LEGAL, f"{place.strip()!r} is not a legal move now"
    for rule, found in (("prefix", [i for i, full in enumerate(moves.full) if (full + " ").startswith(text + " ")]),
                        ("suffix", [i for i, key in enumerate(moves.keys) if (" " + key).endswith(" " + text)]),
                        ("inside", _named_inside(text, moves))):
        if len(found) == 1:
            return Reading(found[0], rule)
        if len(found) > 1:
            several = "; ".join(repr(moves.texts[i]) for i in found)
            return _SEVERAL, f"it names several moves ({several}); answer with one"
    return _fuzzy(text, moves)


def _named_inside(text: str, moves: _Moves) -> list[int]:
    """The moves named inside ``text`` in whole words, a name inside another move's name left out."""
    spans = []
    for i in range(len(moves.texts)):
        for form in moves.forms(i):
            pattern = rf"(?<![a-z0-9$]){re.escape(form)}(?![a-z0-9$])"
            spans += [(m.start(), m.end(), i) for m in re.finditer(pattern, text)]
    outer = {i for start, end, i in spans
             if not any(s <= start and end <= e and (s, e) != (start, end) for s, e, _ in spans)}
    return sorted(outer)


def _fuzzy(text: str, moves: _Moves) -> Reading | tuple[int, str]:
    if len(text) > 2 * moves.longest:  # a text this long is no variant of a move string
        return _NONE, "it names none of the legal moves"
    similar = [[(difflib.SequenceMatcher(None, text, form).ratio(), _alike(text, form)) for form in moves.forms(i)]
               for i in range(len(moves.texts))]
    scores = [max((ratio for ratio, alike in pairs if alike), default=0.0) for pairs in similar]
    ranked = sorted(range(len(scores)), key=lambda i: -scores[i])
    runner_up = scores[ranked[1]] if len(ranked) > 1 else 0.0
    if scores[ranked[0]] >= FUZZY and scores[ranked[0]] - runner_up >= MARGIN:
        return Reading(ranked[0], "fuzzy")
    closest = max(range(len(similar)), key=lambda i: max(ratio for ratio, _ in similar[i]))
    near = max(ratio for ratio, _ in similar[closest]) >= NEAR
    return _NONE, "it names none of the legal moves" + (
        f" (the closest is {moves.texts[closest]!r}, not close enough)" if near else "")


def _alike(text: str, form: str) -> bool:
    """Whether ``text`` could be ``form`` mistyped: the same numbers, and every word but fillers like a word of it."""
    if _DIGITS.findall(text) != _DIGITS.findall(form):
        return False
    words = form.split()
    return all(max(difflib.SequenceMatcher(None, word, other).ratio() for other in words) >= _WORD_LIKE
               for word in text.split() if word not in _FILLER)


def read_move(reply, moves: Sequence[str], names: dict[str, int] | None = None,
              known_names: Iterable[str] = ()) -> Reading:
    """Read the move ``reply`` names among ``moves`` (the listed move strings, numbered from 1 for the reply).

    ``names`` maps other names of the moves (the actions' short names, ``take:1``) to their index; a name of
    ``known_names`` that is not among them is refused as not legal now. See the module docstring for the places
    and the rules.
    """
    if not moves:
        raise ValueError("there are no moves to read a reply against")
    if not isinstance(reply, str) or not reply.strip():
        return Reading(None, error="the reply is empty")
    table = _Moves(moves, names or {}, known_names)
    reasons = []
    for place in filter(loose, _places(reply[-MAX_REPLY:])):
        read = _read_place(place, table)
        if isinstance(read, Reading):
            return read
        if read[0] <= _NOT_LEGAL:  # an answer, a wrong one: no other place is a second chance
            return Reading(None, error=read[1])
        reasons.append(read)
    return Reading(None, error=min(reasons)[1] if reasons else "the reply holds no word and no number")
