"""A worker process that dies mid-run (killed, crashed) stops the run with a clear error, never a hang; with an
output directory the finished games are kept and resume completes the run to the same files."""

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from packetrow_agents import registry
from packetrow_arena import records as game_records
from packetrow_arena.tournament import game_seeds, run_tournament
from packetrow_arena.worker_pool import WorkerDied, WorkerPool, describe_exit, describe_games
from packetrow_cli.main import main
from tests import dying_agent
from tests.dying_agent import DyingAgent, fails_if_hung


@pytest.fixture(autouse=True)
def deadline():
    """A hang fails the test after 60 s instead of blocking the suite (the runs take seconds)."""
    with fails_if_hung(60):
        yield


def dies_at(monkeypatch, games, num_players: int, seed: int, how: str = "kill") -> None:
    """Make a DyingAgent's worker die when it is dealt into one of ``games`` of a rotation tournament."""
    seeds = {s for game in games for s in game_seeds(game, num_players, seed)[1]}
    monkeypatch.setattr(dying_agent, "DYING_SEEDS", frozenset(seeds))
    monkeypatch.setattr(dying_agent, "HOW", how)


def files(directory) -> dict:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def game_workers() -> list:
    """The worker processes of game pools still running in this process."""
    return [p for p in multiprocessing.active_children() if p.name.startswith("packetrow-games")]


def kept_indices(directory) -> list[int]:
    records, torn = game_records.read_interrupted(directory / "records.jsonl")
    assert not torn  # whole chunks are appended: a killed worker tears no line
    return sorted(game["index"] for game in records.games)


def test_a_killed_worker_stops_the_run_naming_it_and_resume_completes_it(tmp_path, monkeypatch):
    setup = dict(num_players=2, games=12, seed=3, workers=2, chunk_size=2, progress=False)
    dies_at(monkeypatch, [7], 2, 3)
    with pytest.raises(WorkerDied) as stopped:
        run_tournament([DyingAgent(), "random"], **setup, out=tmp_path / "run")
    error = stopped.value
    assert error.exitcode == -signal.SIGKILL and error.games == [6, 7] and error.pid != os.getpid()
    assert str(error) == f"a worker process (pid {error.pid}) died (killed by SIGKILL) while playing games 6-7"
    kept = kept_indices(tmp_path / "run")
    assert error.__notes__ == [f"{len(kept)} finished games are kept in {tmp_path / 'run' / 'records.jsonl'}: "
                               "resume (--resume) plays the others"]
    assert 6 not in kept and 7 not in kept
    assert len(kept) >= 4 and all(index ^ 1 in kept for index in kept)  # whole chunks, two at least came back first
    assert not (tmp_path / "run" / "table.csv").exists()
    assert game_workers() == []  # the other worker was stopped too

    monkeypatch.setattr(dying_agent, "DYING_SEEDS", frozenset())
    resumed = run_tournament([DyingAgent(), "random"], **setup, out=tmp_path / "run", resume=True)
    whole = run_tournament([DyingAgent(), "random"], **setup, out=tmp_path / "whole")
    assert resumed.records == whole.records and resumed.table == whole.table
    assert files(tmp_path / "run") == files(tmp_path / "whole")


def test_a_worker_that_exits_is_named_by_its_exit_status(monkeypatch):
    dies_at(monkeypatch, [2], 2, 0, how="exit")
    with pytest.raises(WorkerDied, match=r"died \(exit status 3\) while playing game 2$") as stopped:
        run_tournament([DyingAgent(), "heuristic"], 2, games=6, workers=2, chunk_size=1, progress=False)
    assert not hasattr(stopped.value, "__notes__")  # nothing was recorded, so nothing is said to be kept


class Failing:
    """Raises in its first move of a game it is seeded with one of ``fail_seeds``: an agent's bug, not a dead
    worker."""

    name = "failing"

    def __init__(self, fail_seeds):
        self.fail_seeds, self.seed = fail_seeds, None

    def reset(self, seed: int) -> None:
        self.seed = seed

    def act(self, view) -> int:
        if self.seed in self.fail_seeds:
            raise ValueError("an agent's bug")
        return int(view.action_mask.nonzero()[0][0])


def test_an_agents_exception_in_a_worker_is_raised_with_its_notes():
    agent = Failing(set(game_seeds(4, 2, 0)[1]))
    with pytest.raises(ValueError, match="an agent's bug") as raised:
        run_tournament([agent, "random"], 2, games=6, workers=2, chunk_size=1, progress=False)
    notes = "\n".join(raised.value.__notes__)
    assert "in tournament game 4" in notes and "raised in worker process" in notes and "Traceback" in notes
    assert game_workers() == []


def test_cli_a_killed_worker_is_a_one_line_error_and_resume_completes_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(registry.AGENTS, "dying", ("tests.dying_agent", "DyingAgent"))
    argv = ["tournament", "--agents", "dying,heuristic", "--players", "2", "--games", "10", "--seed", "4",
            "--workers", "2", "--chunk-size", "1", "--no-progress", "--out"]
    dies_at(monkeypatch, [5], 2, 4)
    assert main(argv + [str(tmp_path / "run")]) == 1
    printed = capsys.readouterr()
    kept = kept_indices(tmp_path / "run")
    lines = printed.err.splitlines()
    assert len(lines) == 1 and "Traceback" not in printed.err, printed.err
    assert lines[0].startswith("packetrow tournament: error: a worker process (pid ")
    assert lines[0].endswith(f"died (killed by SIGKILL) while playing game 5; {len(kept)} finished games are kept "
                             f"in {tmp_path / 'run' / 'records.jsonl'}: resume (--resume) plays the others")
    assert 5 not in kept and printed.out == ""

    monkeypatch.setattr(dying_agent, "DYING_SEEDS", frozenset())
    assert main(argv + [str(tmp_path / "run"), "--resume"]) == 0
    assert f"{len(kept)} games kept; {10 - len(kept)} to play" in capsys.readouterr().err
    assert main(argv + [str(tmp_path / "whole")]) == 0
    assert files(tmp_path / "run") == files(tmp_path / "whole")


class Numbers:
    """A runner whose games are their index, each taking a moment: time for the test to kill a worker."""

    def play_chunk(self, indices):
        time.sleep(0.05)
        return [{"index": index} for index in indices]


def test_a_worker_killed_from_outside_between_or_during_chunks_is_noticed():
    got = []
    with pytest.raises(WorkerDied) as stopped:
        with WorkerPool(Numbers(), 2) as pool:
            victim = pool.workers[0].process.pid

            def on_chunk(chunk):
                if not got:  # the first chunk back: kill a worker, busy or about to be handed the next chunk
                    os.kill(victim, signal.SIGKILL)
                got.extend(chunk)

            pool.play([[i] for i in range(40)], on_chunk)
    assert stopped.value.pid == victim and stopped.value.exitcode == -signal.SIGKILL
    assert game_workers() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal and /proc are Linux's")
@pytest.mark.parametrize("mode, chunk_seconds", [("pdeathsig", 60.0), ("pipe-only", 0.2)])
def test_workers_end_when_their_parent_is_killed(mode, chunk_seconds):
    """No orphan: a parent killed by SIGKILL takes its workers with it, in the middle of a long game too (the
    parent-death signal); without that signal, its closed pipe ends them after the chunk they are playing."""
    script = textwrap.dedent(f"""
        import sys, time
        from packetrow_arena import worker_pool
        from packetrow_arena.worker_pool import WorkerPool

        if {mode!r} == "pipe-only":
            worker_pool.die_with_parent = lambda parent: False

        class Slow:
            def play_chunk(self, indices):
                time.sleep({chunk_seconds})
                return [{{"index": i}} for i in indices]

        with WorkerPool(Slow(), 2) as pool:
            print(" ".join(str(w.process.pid) for w in pool.workers), flush=True)
            pool.play([[i] for i in range(1000)], lambda chunk: None)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(workers) == 2
    def named() -> bool:  # as ps and top show them, once they have started
        return [Path(f"/proc/{pid}/comm").read_text().strip() for pid in workers] == ["pr-games"] * 2

    assert within(10, named)
    parent.kill()
    parent.wait()
    # the signal is at once; a chunk of 0.2 s; 10 s for a slow machine, and short of the 60 s chunk
    assert within(10, lambda: not any(_running(pid) for pid in workers))


def within(seconds: float, condition) -> bool:
    """Whether ``condition()`` is true within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (an ended process its new parent has not reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("games, text", [([7], "game 7"), ([40, 41, 42], "games 40-42"),
                                         ([8, 3, 4, 5, 10, 11], "games 3-5, 8, 10-11")])
def test_games_are_named_in_runs(games, text):
    assert describe_games(games) == text


def test_exits_are_named():
    assert describe_exit(-signal.SIGKILL) == "killed by SIGKILL" and describe_exit(-9999) == "killed by signal 9999"
    assert describe_exit(3) == "exit status 3" and describe_exit(None) == "its exit status unknown"


@pytest.mark.parametrize("command, target", [("train", "packetrow_train.league.train"),
                                             ("exploit", "packetrow_train.exploit.exploit")])
def test_train_and_exploit_end_with_one_line_when_a_worker_dies(command, target, monkeypatch, capsys):
    def dies(*args, **kwargs):
        raise WorkerDied(4321, -9, range(6, 8))

    monkeypatch.setattr(target, dies)
    argv = {"train": ["train", "--config", "quick", "--no-progress"],
            "exploit": ["exploit", "--agent", "heuristic", "--minutes", "0.1", "--no-progress"]}[command]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.strip() == (f"packetrow {command}: error: a worker process (pid 4321) died (killed by SIGKILL) while "
                           "playing games 6-7")
    assert "Traceback" not in err


class _IdleRunner:
    def play_chunk(self, chunk):
        return []


def test_ctrl_c_while_the_workers_fork_stops_the_pool(ctrl_c_at_next_fork):
    """A Ctrl-C that comes while the pool forks (in Python's after-fork hooks, where it would be lost) is raised
    once the workers have started, and stops them."""
    with pytest.raises(KeyboardInterrupt):
        with WorkerPool(_IdleRunner(), 2):
            pytest.fail("the pool started though Ctrl-C came while it forked")
    assert game_workers() == []


def test_a_plain_fork_loses_that_ctrl_c(ctrl_c_at_next_fork, monkeypatch):
    """Why the pool holds Ctrl-C back while it forks: without it, Python hands the KeyboardInterrupt raised in the
    after-fork hook to ``sys.unraisablehook`` ("Exception ignored") and goes on as if no key had been pressed."""
    ignored = []
    monkeypatch.setattr(sys, "unraisablehook", ignored.append)
    process = multiprocessing.get_context("fork").Process(target=int)
    process.start()  # no KeyboardInterrupt
    process.join()
    assert process.exitcode == 0 and [type(error.exc_value) for error in ignored] == [KeyboardInterrupt]
