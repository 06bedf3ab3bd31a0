"""Game records: one versioned JSON-lines format that tournaments and the ladder write and replays read.

A record file is JSON lines. Line 1 is the header: ``format`` ("packetrow-records"), ``version`` (1), the
``package_version`` and ``env_id`` that played it, the ``catalogue`` hash (sha256 of the card columns), the
``source`` ("tournament" or "ladder"), ``num_players``, the entries' ``agents`` (names) and ``specs``, the
tournament ``seed``, its seat ``schedule`` ("rotation", or "duplicate-rotations" / "duplicate-permutations")
and the ``observation_mode``; a tournament whose agents read model files adds ``models``, each file's name
(``registry.model_files``) and sha256 (``file_hash``), so that a run resumed later can tell a retrained model.
Every further line is one game: its ``index``, ``deal``, deal ``seed``, the
``num_players``, the ``agent_seeds`` and ``entries`` (entry index) of its seats, their ``agents`` and ``specs``, the ``actions``
in order and the final ``scores`` (``Game.scores()``) and ``ranks``; a game in which an agent noted its moves
(``agent_protocol.move_note``: the llm agent's raw replies) adds ``notes``, one ``{"move", "seat", "note"}`` per noted
move in move order (optional, so version 1 stands: a game without them is written as before they existed, and a
reader that ignores them replays the game all the same). ``Game.new(num_players, seed)`` and the actions replay a
game exactly, and the replay must give the recorded scores. The JSON Schema of both kinds of line ships in the
package (``schema()``, file ``schemas/records-v1.schema.json``).

Readers (``packetrow replay``, the browser's Watch view) call ``read_records(path)`` (or ``parse_records`` of a
text's lines) for the header and the games, then ``replay_record(records, index)`` or ``iter_replay(records, index)`` for the positions; every
error is a ``RecordError`` naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from packetrow_env import __version__
from packetrow_env.cards import resolve
from packetrow_env.engine import Game
from packetrow_env.game_info import GAME_TYPE
from packetrow_env.user_files import read_text, text_lines

from .replay import ReplayError, replay_moves

FORMAT = "packetrow-records"
VERSION = 1
SCHEMA_FILE = "records-v1.schema.json"
_EXPECTED = "a records.jsonl written by a tournament or the ladder"  # what a reader's errors say it expected
# the columns that define the cards' play: names are cosmetic, but a renamed card must not pass unnoticed either
_CATALOGUE_COLUMNS = ("board", "kind", "good", "quantity", "destination", "reward", "cost", "vp", "money", "value")


class RecordError(ValueError):
    """A record file is not one this version reads, or does not replay to what it records."""


def catalogue_hash(cards=None) -> str:
    """'sha256:...' of a catalogue's card names and columns (the default catalogue when ``cards`` is None)."""
    catalogue = resolve(cards)
    digest = hashlib.sha256("\n".join(catalogue.names).encode())
    for column in _CATALOGUE_COLUMNS:
        digest.update(getattr(catalogue, column).astype("<i8").tobytes())
    return "sha256:" + digest.hexdigest()


def schema() -> dict:
    """The JSON Schema of a record file's lines (``$defs``: header and game)."""
    return json.loads(files("packetrow_arena").joinpath("schemas", SCHEMA_FILE).read_text())


def validate_file(path) -> int:
    """Validate every line of a record file against the shipped schema (needs jsonschema); returns the lines."""
    import jsonschema  # the [dev] extra: validation is for tests and tools, reading needs none of it
    full = schema()
    lines = [json.loads(text) for text in Path(path).read_text().splitlines() if text.strip()]
    for number, line in enumerate(lines):
        kind = "header" if number == 0 else "game"
        jsonschema.validate(line, {**full, "oneOf": [{"$ref": f"#/$defs/{kind}"}]})
    return len(lines)


def make_header(source: str, num_players: int, agents: list[str], specs: list[str], seed: int, schedule: str,
                observation_mode: str, models: dict | None = None) -> dict:
    """A header line for games played now, with this package's versions and the default catalogue's hash
    (``models``: the model files the agents read, name -> ``file_hash``, where there are any)."""
    header = {"format": FORMAT, "version": VERSION, "package_version": __version__, "env_id": GAME_TYPE.env_id,
              "catalogue": catalogue_hash(), "source": source, "num_players": num_players, "agents": list(agents),
              "specs": list(specs), "seed": seed, "schedule": schedule, "observation_mode": observation_mode}
    return dict(header, models=dict(models)) if models else header


def file_hash(path) -> str:
    """'sha256:...' of a file's bytes."""
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_records(path, header: dict, games: Iterable[dict], overwrite: bool = False) -> Path:
    """Write a record file (header line, then one game a line); refuses an existing file unless ``overwrite``.
    The file is written beside and renamed into place, so an interruption leaves the old file or the new."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass overwrite (--overwrite) to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w") as f:
        for line in [header, *games]:
            f.write(_line(line))
    os.replace(partial, path)
    return path


def append_records(path, games: Iterable[dict]) -> None:
    """Append game lines to a record file and flush them to disk (a tournament's games as they finish)."""
    with Path(path).open("a") as f:
        f.writelines(_line(game) for game in games)
        f.flush()
        os.fsync(f.fileno())


def read_interrupted(path) -> tuple[Records, bool]:
    """``read_records`` of a file that an interrupted writer may have left with a torn last line (one without
    its newline: only whole lines are appended), which is left out; also says whether one was."""
    path = Path(path)
    # the last item is "" after a whole last line, else the torn one
    lines = read_text(path, RecordError, _EXPECTED).split("\n")
    return parse_records(lines[:-1], path), lines[-1] != ""


def records_bytes(games: int, num_players: int) -> int:
    """About the memory ``games`` records of ``num_players``-player games hold in a running tournament, which keeps
    every record for its results (their actions as lists, scores, seeds; measured: docs/reliability.md)."""
    return games * (14_000 + 3_400 * num_players)


def _line(line: dict) -> str:
    return json.dumps(line, separators=(",", ":")) + "\n"


@dataclass
class Records:
    """A record file read: its header, its games in file order, and each game's line number."""

    path: Path
    header: dict
    games: list[dict]
    lines: list[int]

    def game(self, index: int) -> dict:
        """The game whose ``index`` is ``index``."""
        for game in self.games:
            if game["index"] == index:
                return game
        indices = sorted(g["index"] for g in self.games)
        allowed = f"{indices[0]} to {indices[-1]}" if indices else "none: the file has no games"
        raise RecordError(f"{self.path}: no game {index}; games recorded: {allowed}")

    def line_of(self, index: int) -> int:
        """The line number of game ``index`` in the file."""
        return self.lines[self.games.index(self.game(index))]


_GAME_KEYS = ("index", "deal", "num_players", "seed", "agent_seeds", "entries", "agents", "specs", "actions", "scores", "ranks")


def read_records(path) -> Records:
    """Read a record file, checking its format, version and catalogue; a RecordError names the file and line (or
    says that it cannot be read, or is not text)."""
    path = Path(path)
    return parse_records(text_lines(path, RecordError, _EXPECTED), path)


def parse_records(lines: Iterable[str], source) -> Records:
    """``read_records`` of a file's lines (e.g. an upload's text split into lines), ``source`` naming it in errors."""
    header, games, numbers = None, [], []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise RecordError(f"{source}, line {number}: not a JSON line") from None
        if not isinstance(line, dict):
            raise RecordError(f"{source}, line {number}: a line must be a JSON object")
        if header is None:
            header = _check_header(line, source, number)
            continue
        _check_game(line, header["num_players"], source, number)
        games.append(line)
        numbers.append(number)
    if header is None:
        raise RecordError(f"{source}, line 1: the file is empty; expected a {FORMAT} header")
    return Records(Path(str(source)), header, games, numbers)


def _check_header(line: dict, path, number: int) -> dict:
    if line.get("format") != FORMAT:
        hint = (" (a games.jsonl of game lines with no header: read the records.jsonl written beside it)"
                if "actions" in line else "")
        raise RecordError(f"{path}, line {number}: not a {FORMAT} header: format is {line.get('format')!r}{hint}")
    if line.get("version") != VERSION:
        raise RecordError(f"{path}, line {number}: record format version {line.get('version')!r}; "
                          f"this packetrow ({__version__}) reads version {VERSION}")
    if line.get("catalogue") != catalogue_hash():
        raise RecordError(f"{path}, line {number}: catalogue hash {line.get('catalogue')!r} does not match this "
                          f"packetrow's catalogue {catalogue_hash()}: the games were dealt from other cards")
    n = line.get("num_players")
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 5:
        raise RecordError(f"{path}, line {number}: num_players must be 2-5, got {n!r}")
    return line


def _check_game(line: dict, num_players: int, path, number: int) -> None:
    missing = [key for key in _GAME_KEYS if key not in line]
    if missing:
        raise RecordError(f"{path}, line {number}: the game lacks {', '.join(missing)}")
    if line["num_players"] != num_players:
        raise RecordError(f"{path}, line {number}: a {line['num_players']}-player game in a file of "
                          f"{num_players}-player games")
    if not isinstance(line["actions"], list) or not all(isinstance(a, int) and not isinstance(a, bool)
                                                        for a in line["actions"]):
        raise RecordError(f"{path}, line {number}: actions must be a list of action ids")
    if "notes" in line and not _notes_fit(line["notes"], len(line["actions"]), num_players):
        raise RecordError(f"{path}, line {number}: notes must be a list of {{\"move\", \"seat\", \"note\"}} objects, "
                          "one per noted move in move order, each move a number in the game's actions and each note "
                          "an object")


def _notes_fit(notes, moves: int, num_players: int) -> bool:
    if not isinstance(notes, list):
        return False
    numbers = [note.get("move") if isinstance(note, dict) else None for note in notes]
    return (all(isinstance(note, dict) and set(note) == {"move", "seat", "note"} and _whole(note["move"], moves)
                and _whole(note["seat"], num_players) and isinstance(note["note"], dict) for note in notes)
            and numbers == sorted(set(numbers)))  # one note a move at most, in move order


def _whole(value, limit: int) -> bool:
    """``value`` is an integer from 0 to ``limit`` - 1."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < limit


def iter_replay(records: Records, index: int) -> Iterator[tuple[Game, int, int]]:
    """Step game ``index`` from its seed: yields (game before the move, seat, action), then checks its scores."""
    game = records.game(index)
    try:
        yield from replay_moves(game)
    except ValueError as error:  # ReplayError, or an illegal recorded action
        raise RecordError(f"{records.path}, line {records.line_of(index)}: {error}") from None


def replay_record(records: Records, index: int) -> Game:
    """The finished game ``index``, replayed; a RecordError naming file and line if it does not reproduce."""
    last = None
    for last, _, _ in iter_replay(records, index):
        pass
    if last is None:
        raise RecordError(f"{records.path}, line {records.line_of(index)}: game {index} records no moves")
    return last


__all__ = ["FORMAT", "VERSION", "RecordError", "Records", "ReplayError", "catalogue_hash", "file_hash",
           "iter_replay", "make_header", "parse_records", "read_records", "records_bytes", "replay_record", "schema",
           "validate_file", "write_records"]
