"""Game records: the schema every written record file follows, exact replays, the reader's one-line errors, and the
notes agents attach to their moves."""

import json
import re

import jsonschema
import numpy as np
import pytest

from packetrow_agents.registry import make_agent
from packetrow_arena import records
from packetrow_arena.records import (RecordError, iter_replay, read_records, replay_record, validate_file,
                                     write_records)
from packetrow_cli.main import main
from packetrow_arena.tournament import run_tournament


class Counting:
    """Plays the first legal move and notes how many moves it chose from, where it had a choice (no base class: the
    agent protocol's ``move_note`` is optional for any agent)."""

    name = "counting"

    def act(self, view) -> int:
        legal = np.flatnonzero(view.action_mask)
        self.choices = len(legal)
        return int(legal[0])

    def move_note(self):
        return {"choices": self.choices} if self.choices > 1 else None


class Quiet:
    """The heuristic, with a ``move_note`` that notes nothing."""

    name = "heuristic"

    def __init__(self, seed: int):
        self.agent = make_agent("heuristic", seed)

    def act(self, view) -> int:
        return self.agent.act(view)

    def move_note(self):
        return None


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Record files as the project writes them: a plain tournament, a duplicate one, and one with notes."""
    out = tmp_path_factory.mktemp("records")
    plain = run_tournament(["heuristic", "random", "random"], 3, games=4, seed=1, progress=False)
    plain.write(out / "plain")
    duplicate = run_tournament(["heuristic", "random"], 2, games=4, seed=2, progress=False, duplicate=True)
    duplicate.write(out / "duplicate")
    noted = run_tournament([lambda seed: Counting(), "random"], 2, games=2, seed=3, progress=False)
    noted.write(out / "noted")
    return {kind: (out / kind / "records.jsonl", result)
            for kind, result in [("plain", plain), ("duplicate", duplicate), ("noted", noted)]}


@pytest.mark.parametrize("kind", ["plain", "duplicate", "noted"])
def test_every_written_record_file_follows_the_shipped_schema(written, kind):
    path, result = written[kind]
    jsonschema.Draft202012Validator.check_schema(records.schema())
    assert validate_file(path) == 1 + len(result.records)


@pytest.mark.parametrize("kind", ["plain", "duplicate", "noted"])
def test_records_replay_exactly(written, kind):
    path, result = written[kind]
    read = read_records(path)
    assert read.header["format"] == records.FORMAT and read.header["version"] == records.VERSION
    assert read.header["agents"] == result.names and read.header["seed"] == result.seed
    assert read.header["schedule"] == result.schedule and read.header["catalogue"] == records.catalogue_hash()
    assert read.games == json.loads(json.dumps(result.records))
    for game in read.games:
        assert replay_record(read, game["index"]).scores() == game["scores"]


def test_the_schema_refuses_what_the_reader_refuses():
    schema = records.schema()
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"format": "packetrow-records", "version": 2}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"index": 0, "actions": [1, 2]}, schema)


def test_an_agents_notes_are_kept_with_its_moves(written):
    path, result = written["noted"]
    read = read_records(path)
    for game in read.games:
        seat = game["agents"].index("counting")
        choices = [(move, len(position.legal_actions())) for move, (position, mover, _)
                   in enumerate(iter_replay(read, game["index"])) if mover == seat]
        assert [(note["move"], note["note"]["choices"]) for note in game["notes"]] == [
            (move, count) for move, count in choices if count > 1]
        assert {note["seat"] for note in game["notes"]} == {seat}
    again = run_tournament([lambda seed: Counting(), "random"], 2, games=2, seed=3, progress=False, workers=2,
                           chunk_size=1)
    assert again.records == result.records  # the same notes whichever process played the games


def test_games_without_notes_are_written_as_before_notes_existed(written, tmp_path):
    path, result = written["plain"]
    keys = ["index", "deal", "seed", "agent_seeds", "num_players", "entries", "agents", "specs", "actions", "scores",
            "ranks"]
    assert all(list(json.loads(line)) == keys for line in path.read_text().splitlines()[1:])
    # an agent whose move_note says nothing writes the bytes of one without move_note
    run_tournament(["heuristic", "random"], 2, games=2, seed=4, progress=False, out=tmp_path / "plain")
    run_tournament([lambda seed: Quiet(seed), "random"], 2, games=2, seed=4, progress=False, out=tmp_path / "quiet")
    assert (tmp_path / "quiet" / "records.jsonl").read_bytes() == (tmp_path / "plain" / "records.jsonl").read_bytes()


@pytest.mark.parametrize("note, message", [
    ("a note", "counting's move_note() returned str; it must return a dict"),
    ({"choices": float("nan")}, "counting's move_note() returned a dict that is not plain JSON"),
    ({"choices": {1, 2}}, "counting's move_note() returned a dict that is not plain JSON"),
])
def test_a_note_that_is_no_json_object_stops_the_game_naming_the_agent(note, message):
    class Bad(Counting):
        def move_note(self):
            return note

    with pytest.raises(ValueError, match=re.escape(message)) as error:
        run_tournament([lambda seed: Bad(), "random"], 2, games=1, seed=0, progress=False)
    assert any("by seat" in line and "(counting)" in line for line in error.value.__notes__)


def test_the_catalogue_hash_follows_the_cards(tmp_path):
    from importlib.resources import files
    text = files("packetrow_env").joinpath("data", "cards.csv").read_text()
    (tmp_path / "same.csv").write_text(text)
    assert records.catalogue_hash(str(tmp_path / "same.csv")) == records.catalogue_hash()
    lines = text.splitlines()
    cells = lines[1].split(",")
    cells[7] = str(int(cells[7]) + 1)  # the first contract's reward, one dollar more
    (tmp_path / "other.csv").write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    assert records.catalogue_hash(str(tmp_path / "other.csv")) != records.catalogue_hash()


def _rewrite(source, target, line: int, change) -> None:
    lines = source.read_text().splitlines()
    data = json.loads(lines[line - 1])
    change(data)
    lines[line - 1] = json.dumps(data)
    target.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("line, change, message", [
    (1, lambda h: h.update(format="someone-elses"), "line 1: not a packetrow-records header"),
    (1, lambda h: h.update(version=7), "line 1: record format version 7; this packetrow"),
    (1, lambda h: h.update(catalogue="sha256:" + "0" * 64), "line 1: catalogue hash 'sha256:000"),
    (3, lambda g: g.pop("actions"), "line 3: the game lacks actions"),
    (3, lambda g: g.update(num_players=4), "line 3: a 4-player game in a file of 3-player games"),
    (3, lambda g: g.update(notes={"move": 0}), "line 3: notes must be a list"),
    (3, lambda g: g.update(notes=[{"move": 999, "seat": 0, "note": {}}]), "line 3: notes must be a list"),
    (3, lambda g: g.update(notes=[{"move": 1, "seat": 0, "note": {}}, {"move": 0, "seat": 1, "note": {}}]),
     "line 3: notes must be a list"),
    (3, lambda g: g.update(notes=[{"move": 0, "seat": 0, "note": "raw text"}]), "line 3: notes must be a list"),
])
def test_bad_record_files_are_one_line_errors_naming_file_and_line(written, tmp_path, line, change, message):
    path, _ = written["plain"]
    bad = tmp_path / "bad.jsonl"
    _rewrite(path, bad, line, change)
    with pytest.raises(RecordError) as error:
        read_records(bad)
    assert str(error.value).startswith(f"{bad}, {message}") and "\n" not in str(error.value)


def test_a_record_that_does_not_replay_to_its_scores_names_file_and_line(written, tmp_path):
    path, _ = written["plain"]
    bad = tmp_path / "tampered.jsonl"
    _rewrite(path, bad, 4, lambda g: g["scores"][0].update(vp=g["scores"][0]["vp"] + 1))
    read = read_records(bad)
    replay_record(read, 0)
    with pytest.raises(RecordError, match=rf"^{bad}, line 4: game 2: replaying seed"):
        replay_record(read, 2)
    with pytest.raises(RecordError, match="no game 9; games recorded: 0 to 3"):
        read.game(9)


def test_a_headerless_games_file_is_refused_with_a_pointer(written):
    path, _ = written["plain"]
    with pytest.raises(RecordError, match="no header: read the records.jsonl written beside it"):
        read_records(path.parent / "games.jsonl")


def test_nothing_is_written_over_a_record_file_without_overwrite(written, tmp_path):
    path, result = written["plain"]
    target = tmp_path / "r.jsonl"
    write_records(target, result.header(), result.records[:1])
    before = target.read_text()
    with pytest.raises(FileExistsError, match="overwrite"):
        write_records(target, result.header(), result.records)
    with pytest.raises(FileExistsError, match="overwrite"):
        result.write(path.parent)
    assert target.read_text() == before
    write_records(target, result.header(), result.records, overwrite=True)
    assert len(read_records(target).games) == len(result.records)


def test_replay_command_reads_record_files(written, capsys):
    path, _ = written["duplicate"]
    assert main(["replay", str(path), "--game", "3"]) == 0
    assert "Replayed scores match" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", str(path.parent / "games.jsonl"), "--game", "0"])
    assert exit_info.value.code == 2
    assert f"{path.parent / 'games.jsonl'}, line 1: not a packetrow-records header" in capsys.readouterr().err
