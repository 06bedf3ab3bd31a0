"""Tournaments that write their games as they finish and resume where an interrupted run stopped."""

import numpy as np
import pytest

from packetrow_arena import records as game_records
from packetrow_cli.main import main
from packetrow_arena.tournament import TournamentError, run_tournament


class Interrupted(Exception):
    pass


class StopsAfter:
    """Plays the lowest legal action; its reset before game ``games + 1`` raises, like a run stopped there."""

    name = "stops"

    def __init__(self, games: int):
        self.left = games

    def reset(self, seed: int) -> None:
        self.left -= 1
        if self.left < 0:
            raise Interrupted

    def act(self, view) -> int:
        return int(np.flatnonzero(view.action_mask)[0])


def files(directory) -> dict:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


@pytest.mark.parametrize("duplicate, workers", [(False, 1), (True, 2)])
def test_a_run_extended_by_resume_equals_one_run(tmp_path, duplicate, workers):
    specs = ["heuristic", "random"]
    run_tournament(specs, 2, games=4, seed=5, progress=False, duplicate=duplicate, out=tmp_path / "a")
    resumed = run_tournament(specs, 2, games=10, seed=5, progress=False, duplicate=duplicate, workers=workers,
                             out=tmp_path / "a", resume=True)
    whole = run_tournament(specs, 2, games=10, seed=5, progress=False, duplicate=duplicate, out=tmp_path / "b")
    assert resumed.records == whole.records and resumed.table == whole.table
    assert files(tmp_path / "a") == files(tmp_path / "b")


def test_an_interrupted_run_keeps_its_finished_games_and_resumes(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(Interrupted):
        run_tournament([StopsAfter(3), "random"], 2, games=6, seed=1, progress=False, chunk_size=1, out=out)
    kept, torn = game_records.read_interrupted(out / "records.jsonl")
    assert [game["index"] for game in kept.games] == [0, 1, 2] and not torn
    assert not (out / "table.csv").exists()
    resumed = run_tournament([StopsAfter(3), "random"], 2, games=6, seed=1, progress=False, out=out, resume=True)
    whole = run_tournament([StopsAfter(6), "random"], 2, games=6, seed=1, progress=False)
    assert resumed.records == whole.records and len(resumed.records) == 6


def test_a_torn_last_line_is_left_out_and_its_game_played_again(tmp_path):
    specs = ["heuristic", "random"]
    whole = run_tournament(specs, 2, games=6, seed=2, progress=False, out=tmp_path / "a")
    path = tmp_path / "a" / "records.jsonl"
    path.write_bytes(path.read_bytes()[:-40])  # the last game's line cut off before its newline
    records, torn = game_records.read_interrupted(path)
    assert torn and [game["index"] for game in records.games] == [0, 1, 2, 3, 4]
    resumed = run_tournament(specs, 2, games=6, seed=2, progress=False, out=tmp_path / "a", resume=True)
    assert resumed.records == whole.records


def test_resume_into_a_directory_without_records_starts_there(tmp_path):
    resumed = run_tournament(["heuristic", "random"], 2, games=2, seed=1, progress=False, out=tmp_path, resume=True)
    assert resumed.records == run_tournament(["heuristic", "random"], 2, games=2, seed=1, progress=False).records
    assert (tmp_path / "table.csv").is_file()


@pytest.mark.parametrize("change, message", [
    (dict(seed=4), "was played with seed 3, this run has 4"),
    (dict(specs=["heuristic", "heuristic"]), "was played with agents"),
    (dict(observation_mode="online"), "was played with observation_mode 'tracked'"),
    (dict(games=3), "records game 3; ask for at least 4 games"),
    (dict(overwrite=True), "give one of them"),
])
def test_resuming_another_set_up_is_refused_and_changes_nothing(tmp_path, change, message):
    setup = dict(specs=["heuristic", "random"], num_players=2, games=4, seed=3, progress=False, out=tmp_path)
    run_tournament(**setup)
    before = files(tmp_path)
    with pytest.raises(TournamentError, match=message):
        run_tournament(**{**setup, **change, "resume": True})
    assert files(tmp_path) == before


def test_resume_needs_an_output_and_an_output_is_not_replaced_silently(tmp_path):
    with pytest.raises(TournamentError, match="give out as well"):
        run_tournament(["heuristic", "random"], 2, games=2, progress=False, resume=True)
    run_tournament(["heuristic", "random"], 2, games=2, progress=False, out=tmp_path)
    with pytest.raises(FileExistsError, match="resume"):
        run_tournament(["heuristic", "random"], 2, games=2, progress=False, out=tmp_path)


def test_cli_resume(tmp_path, capsys):
    argv = ["tournament", "--agents", "heuristic,random", "--players", "2", "--seed", "6", "--no-progress",
            "--out", str(tmp_path / "a")]
    assert main(argv + ["--games", "2"]) == 0
    assert main(argv + ["--games", "6", "--resume"]) == 0
    printed = capsys.readouterr()
    assert "6 games of 2 players" in printed.out and "records.jsonl: 2 games kept; 4 to play" in printed.err
    assert main(argv[:-1] + [str(tmp_path / "b"), "--games", "6"]) == 0
    assert files(tmp_path / "a") == files(tmp_path / "b")
    for extra, message in ((["--games", "6", "--resume", "--overwrite"], "give one of them"),
                           (["--games", "6", "--seed", "7", "--resume"], "was played with seed 6"),
                           (["--games", "6"], "or resume (--resume) to keep their games")):
        with pytest.raises(SystemExit) as exit_info:
            main(argv + extra)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(argv[:-2] + ["--games", "2", "--resume"])
    assert "give --out DIR" in capsys.readouterr().err


def test_a_model_retrained_between_two_runs_is_told_apart(tmp_path):
    from packetrow_agents.policy import SHIPPED_MODEL

    model = tmp_path / "model.npz"
    model.write_bytes(SHIPPED_MODEL.read_bytes())
    specs = [f"ppo:{model}", "random"]
    run_tournament(specs, 2, games=2, seed=1, progress=False, out=tmp_path / "run")
    header = game_records.read_records(tmp_path / "run" / "records.jsonl").header
    assert header["models"][str(model)] == game_records.file_hash(model)
    assert set(header["models"]) == {str(model), "shipped policy", "shipped value"}
    game_records.validate_file(tmp_path / "run" / "records.jsonl")  # the schema knows the field
    arrays = dict(np.load(model))
    name = next(key for key, value in arrays.items() if value.dtype.kind == "f")
    arrays[name] = arrays[name] + 0.001
    np.savez(model, **arrays)  # "retrained": the same path, other weights
    before = files(tmp_path / "run")
    with pytest.raises(TournamentError, match=f"other model files than this run reads \\({model}: changed"):
        run_tournament(specs, 2, games=4, seed=1, progress=False, out=tmp_path / "run", resume=True)
    assert files(tmp_path / "run") == before
