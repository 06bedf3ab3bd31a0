"""`ladder --out` records games as they finish, and `--resume` continues an interrupted ladder or placement to
the same ratings and files as one uninterrupted run."""

import json

import pytest

from packetrow_agents import registry
from packetrow_arena import records as game_records
from packetrow_arena.ladder import LadderError, build_ladder, match_seed, place_agent
from packetrow_arena.tournament import RecordLog, game_seeds
from packetrow_arena.worker_pool import WorkerDied
from packetrow_cli.main import main
from tests import dying_agent
from tests.dying_agent import fails_if_hung

SMALL = (("random", "random"), ("heuristic", "heuristic"), ("dying", "dying"))  # fast agents: seconds a ladder


@pytest.fixture(autouse=True)
def dying(monkeypatch):
    """The 'dying' spec (tests.dying_agent) in the registry, and a hang failing the test after 60 s."""
    monkeypatch.setitem(registry.AGENTS, "dying", ("tests.dying_agent", "DyingAgent"))
    with fails_if_hung(60):
        yield


def dies_in(monkeypatch, seed: int, match: int, game: int, num_players: int = 2, half: int = 0) -> None:
    """Make the worker that deals the dying agent into ``game`` of a match's half die (duplicate rotations)."""
    _, agents = game_seeds(game, num_players, match_seed(seed, match, half), game // num_players)
    monkeypatch.setattr(dying_agent, "DYING_SEEDS", frozenset(agents))


def files(directory) -> dict:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def kept_indices(directory) -> tuple[list[int], bool]:
    """The games of a record file an interrupted run left, and whether its last line was torn."""
    records, torn = game_records.read_interrupted(directory / "records.jsonl")
    return sorted(game["index"] for game in records.games), torn


@pytest.mark.parametrize("num_players, games", [(2, 4), (3, 6)])
def test_an_interrupted_ladder_keeps_its_games_and_resumes_to_the_same_ladder(tmp_path, monkeypatch, num_players,
                                                                            games):
    setup = dict(num_players=num_players, games=games, seed=3, workers=2, progress=False, reference=SMALL)
    dies_in(monkeypatch, 3, match=2, game=1, num_players=num_players)  # heuristic against dying, its second game
    with pytest.raises(WorkerDied, match="while playing game 1") as stopped:
        build_ladder(**setup, out=tmp_path / "run")
    kept, torn = kept_indices(tmp_path / "run")
    assert not torn  # whole chunks are appended: a killed worker tears no line
    assert set(kept) >= set(range(2 * games)) and 2 * games + 1 not in kept  # two whole matches, as they finished
    assert stopped.value.__notes__ == [f"{len(kept)} finished games are kept in {tmp_path / 'run' / 'records.jsonl'}"
                                       ": resume (--resume) plays the others"]
    assert game_records.validate_file(tmp_path / "run" / "records.jsonl") == 1 + len(kept)
    assert not (tmp_path / "run" / f"ladder-{num_players}p.json").exists()

    monkeypatch.setattr(dying_agent, "DYING_SEEDS", frozenset())
    resumed = build_ladder(**setup, out=tmp_path / "run", resume=True)
    whole = build_ladder(**setup, out=tmp_path / "whole")
    assert resumed.to_dict() == whole.to_dict() and resumed.header_and_records() == whole.header_and_records()
    assert files(tmp_path / "run") == files(tmp_path / "whole")


def test_records_are_written_as_games_finish(tmp_path, monkeypatch):
    """Each finished chunk is on disk before the next is played."""
    on_disk = []
    append = RecordLog.append

    def append_and_look(log, records):
        append(log, records)
        on_disk.append(len(game_records.read_records(log.path).games))

    monkeypatch.setattr(RecordLog, "append", append_and_look)
    build_ladder(2, games=4, seed=1, workers=2, progress=False, reference=SMALL, out=tmp_path)
    assert on_disk == list(range(1, 13))  # 4 games a match handed out one at a time over 2 workers


@pytest.mark.parametrize("change, message", [
    (dict(seed=4), "was played with seed 3, this run has 4"),
    (dict(games=8), "records game 4 dealt otherwise than this set-up deals it"),
    (dict(games=2), "records game 10, and this set-up plays 6 \\(3 matches of 2 games\\)"),
    (dict(reference=SMALL[:2]), "was played with agents"),
    (dict(overwrite=True), "give one of them"),
])
def test_resuming_another_set_up_is_refused_and_changes_nothing(tmp_path, change, message):
    setup = dict(num_players=2, games=4, seed=3, progress=False, reference=SMALL, out=tmp_path)
    build_ladder(**setup)
    (tmp_path / "records.jsonl").write_bytes((tmp_path / "records.jsonl").read_bytes()[:-30])  # a torn last line
    before = files(tmp_path)
    with pytest.raises(LadderError, match=message):
        build_ladder(**{**setup, **change, "resume": True})
    assert files(tmp_path) == before


def test_a_torn_last_line_is_left_out_and_its_game_played_again(tmp_path):
    setup = dict(num_players=2, games=2, seed=5, progress=False, reference=SMALL[:2])
    whole = build_ladder(**setup, out=tmp_path / "whole")
    (tmp_path / "run").mkdir()
    torn = (tmp_path / "whole" / "records.jsonl").read_bytes()[:-25]  # the last game's line cut before its newline
    (tmp_path / "run" / "records.jsonl").write_bytes(torn)
    assert kept_indices(tmp_path / "run") == ([0], True)
    resumed = build_ladder(**setup, out=tmp_path / "run", resume=True)
    assert resumed.to_dict() == whole.to_dict() and files(tmp_path / "run") == files(tmp_path / "whole")


def test_resume_needs_an_output_and_an_output_is_not_replaced_silently(tmp_path):
    with pytest.raises(LadderError, match="give out as well"):
        build_ladder(2, games=2, progress=False, reference=SMALL[:2], resume=True)
    build_ladder(2, games=2, progress=False, reference=SMALL[:2], out=tmp_path)
    with pytest.raises(FileExistsError, match="resume"):
        build_ladder(2, games=2, progress=False, reference=SMALL[:2], out=tmp_path)


@pytest.fixture
def reference_file(tmp_path):
    path = tmp_path / "ladder.json"
    path.write_text(json.dumps(build_ladder(2, games=2, seed=0, progress=False, reference=SMALL[:2]).to_dict()))
    return path


def test_cli_an_interrupted_placement_is_a_one_line_error_and_resumes(tmp_path, monkeypatch, capsys,
                                                                       reference_file):
    argv = ["ladder", "--agent", "dying", "--games", "4", "--seed", "2", "--reference", str(reference_file),
            "--workers", "2", "--no-progress", "--out"]
    dies_in(monkeypatch, 2, match=1, game=2)  # against the heuristic, its third game
    assert main(argv + [str(tmp_path / "run")]) == 1
    printed = capsys.readouterr()
    kept, torn = kept_indices(tmp_path / "run")
    assert not torn  # whole chunks are appended: a killed worker tears no line
    lines = printed.err.splitlines()
    assert len(lines) == 1 and "Traceback" not in printed.err and printed.out == "", printed.err
    assert lines[0].startswith("packetrow ladder: error: a worker process (pid ")
    assert lines[0].endswith(f"died (killed by SIGKILL) while playing game 2; {len(kept)} finished games are kept "
                             f"in {tmp_path / 'run' / 'records.jsonl'}: resume (--resume) plays the others")

    monkeypatch.setattr(dying_agent, "DYING_SEEDS", frozenset())
    assert main(argv + [str(tmp_path / "run"), "--resume"]) == 0
    assert main(argv + [str(tmp_path / "whole")]) == 0
    assert files(tmp_path / "run") == files(tmp_path / "whole")
    placed = place_agent("dying", 2, games=4, seed=2, progress=False, reference=reference_file)
    assert capsys.readouterr().out.count(placed.format_table()) == 2

    with pytest.raises(SystemExit) as exit_info:
        main(argv[:-1] + ["--resume"])
    assert exit_info.value.code == 2 and "argument --resume: give --out DIR" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(argv + [str(tmp_path / "run"), "--resume", "--seed", "5"])
    assert exit_info.value.code == 2 and "was played with seed 2, this run has 5" in capsys.readouterr().err
