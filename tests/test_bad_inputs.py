"""Every bad input to a ``packetrow`` subcommand is one clear line before anything starts (issue #47, item 6).

One table, every subcommand: files that are missing, folders, binary, empty or unreadable; outputs that cannot be
written; numbers out of range, not finite or too large for the machine's memory. Each case runs the command as a
user would (``packetrow_cli.main.main``; ``serve`` in a subprocess, since a case it failed to refuse would serve
forever) and must end with status 2 (a usage error), exactly one stderr line ``packetrow SUB: error: ...``
holding the case's words (what was wrong and what is allowed), no traceback, and nothing written anywhere.
"""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
from pathlib import Path

import pytest

from packetrow_cli.main import COMMANDS, main

HUGE = str(10**12)
SEED_24 = "1" + "0" * 23
LINUX_PROC = Path("/proc/self/mem").exists()  # Linux: a file no one can read, and a folder no one can write in

# YAML training configs, each one key from the defaults away from a config the checks refuse
CONFIGS = {
    "lr_nan.yaml": "ppo:\n  learning_rate: .nan\n",
    "lr_inf.yaml": "ppo:\n  learning_rate: .inf\n",
    "lr_zero.yaml": "ppo:\n  learning_rate: 0\n",
    "threads.yaml": "torch_threads: 1000000\n",
    "threads_e.yaml": "torch_threads: 1e6\n",
    "n_envs.yaml": "env:\n  n_envs: 1000000\n",
    "n_steps.yaml": f"ppo:\n  n_steps: {10**9}\n",
    "net_arch.yaml": f"ppo:\n  net_arch: [{10**9}]\n",
    "extractor.yaml": ("env:\n  observation_encoding: compact\n  vec_env: batched\n"
                       f"ppo:\n  extractor_layer: {10**9}\n"),
    "eval_games.yaml": f"eval:\n  games: {HUGE}\n",
    "seed.yaml": f"seed: {SEED_24}\n",
    "comments.yaml": "# only a comment: no keys\n",
    "empty.yaml": "",
    "not_a_mapping.yaml": "- a list\n- not keys\n",
}

# (subcommand and arguments, words the error line must hold); {d} is the folder of the files above
CASES = [
    (["demo", "--seed", "-5"], "non-negative integer"),
    (["demo", "--seed", "many"], "non-negative integer"),
    (["demo", "--players", "9"], "choose from 2, 3, 4, 5"),
    (["layout", "--mode", "secret"], "choose from"),
    (["layout", "--encoding", "zip"], "choose from 'onehot', 'compact'"),
    (["info", "--players", "7"], "choose from 2, 3, 4, 5"),
    (["play", "--seed", "-5"], "non-negative integer"),
    (["play", "--seat", "7"], "0 to 2"),
    (["play", "--save", "{d}/folder"], "is a folder; name a file"),
    (["play", "--save", "{d}/file.txt/game.json"], "file.txt is a file, not a folder"),
    (["play", "--save", "{d}/nowhere/game.json"], "nowhere does not exist"),
    (["play", "--load", "{d}/binary.bin"], "not a text file"),
    (["play", "--load", "{d}/folder"], "Is a directory"),
    (["tournament", "--agents", "random,random", "--players", "2", "--games", HUGE], "give fewer games"),
    (["tournament", "--agents", "random,random", "--players", "2", "--out", "{d}/file.txt/run"],
     "file.txt is a file, not a folder"),
    (["tournament", "--agents", "random,random", "--players", "2", "--seed", "-1"], "non-negative integer"),
    (["tournament", "--agents", "random,random", "--players", "2", "--games", "0"], "positive integer"),
    (["tournament", "--agents", "random,nobody", "--players", "2"], "nobody"),
    (["replay", "{d}/binary.bin", "--game", "0"], "not UTF-8 text"),
    (["replay", "{d}/folder", "--game", "0"], "a folder, not a file"),
    (["replay", "{d}/empty.jsonl", "--game", "0"], "the file is empty"),
    (["replay", "{d}/nowhere.jsonl", "--game", "0"], "no such file"),
    (["replay", "{d}/records.jsonl", "--game", "0", "--seat", "9"], "a seat from 0 to 1"),
    (["replay", "{d}/records.jsonl", "--game", SEED_24], "games recorded: 0 to 1"),
    (["ladder", "--agent", "random", "--reference", "{d}/binary.bin"], "not UTF-8 text"),
    (["ladder", "--agent", "random", "--reference", "{d}/empty.jsonl"], "not JSON"),
    (["ladder", "--agent", "random", "--reference", "{d}/folder"], "no reference ladder there"),
    (["ladder", "--agent", "random", "--games", HUGE], "give fewer games"),
    (["ladder", "--agent", "random", "--games", "3"], "multiple of 2"),
    (["ladder", "--agent", "random", "--games", "2", "--out", "{d}/file.txt/ladder"],
     "file.txt is a file, not a folder"),
    (["population", "{d}/binary.bin"], "not UTF-8 text"),
    (["population", "{d}/empty.jsonl"], "the file is empty"),
    (["population", "{d}/records.jsonl", "--out", "{d}/file.txt/population"], "file.txt is a file, not a folder"),
    (["exploit", "--agent", "random", "--config", "{d}/binary.bin"], "not UTF-8 text"),
    (["exploit", "--agent", "random", "--config", "{d}/empty.yaml"], "the config file is empty"),
    (["exploit", "--agent", "random", "--games", HUGE], "give fewer games"),
    (["exploit", "--agent", "random", "--seed", SEED_24], "below 2**32"),
    (["exploit", "--agent", "random", "--minutes", "nan"], "positive number of minutes"),
    (["exploit", "--agent", "random", "--out", "{d}/file.txt/run"], "file.txt is a file, not a folder"),
    (["imitate", "{d}/binary.bin", "--agent", "random#1", "--out", "{d}/model.npz"], "not UTF-8 text"),
    (["imitate", "{d}/folder", "--agent", "random#1", "--out", "{d}/model.npz"], "a folder, not a file"),
    (["imitate", "{d}/records.jsonl", "--agent", "random#1", "--out", "{d}/file.txt/model.npz"],
     "file.txt is a file, not a folder"),
    (["imitate", "{d}/records.jsonl", "--agent", "random#1", "--out", "{d}/model.txt"], "a .npz file"),
    (["imitate", "{d}/records.jsonl", "--agent", "random#1", "--out", "{d}/model.npz", "--lr", "nan"],
     "between 0 and 1"),
    (["imitate", "{d}/records.jsonl", "--agent", "random#1", "--out", "{d}/model.npz", "--policy",
      "{d}/binary.npz"], "not a policy export"),
    (["imitate", "{d}/records.jsonl", "--agent", "random#1", "--out", "{d}/model.npz", "--policy",
      "{d}/binary.bin"], "allowed: .npz"),
    (["train", "--config", "{d}/binary.bin"], "not UTF-8 text"),
    (["train", "--config", "{d}/folder"], "no config file at"),
    (["train", "--config", "{d}/empty.yaml"], "the config file is empty"),
    (["train", "--config", "{d}/comments.yaml"], "the config file is empty"),
    (["train", "--config", "{d}/not_a_mapping.yaml"], "a mapping of keys to values"),
    (["train", "--config", "{d}/lr_nan.yaml"], "ppo.learning_rate must be a finite number"),
    (["train", "--config", "{d}/lr_inf.yaml"], "ppo.learning_rate must be a finite number"),
    (["train", "--config", "{d}/lr_zero.yaml"], "ppo.learning_rate must be > 0"),
    (["train", "--config", "{d}/threads.yaml"], "torch_threads must be at most 256"),
    (["train", "--config", "{d}/threads_e.yaml"], "torch_threads must be an integer"),
    (["train", "--config", "{d}/n_envs.yaml"], "lower ppo.n_steps or env.n_envs"),
    (["train", "--config", "{d}/n_steps.yaml"], "lower ppo.n_steps or env.n_envs"),
    (["train", "--config", "{d}/net_arch.yaml"], "lower ppo.net_arch or ppo.extractor_layer"),
    (["train", "--config", "{d}/extractor.yaml"], "lower ppo.net_arch or ppo.extractor_layer"),
    (["train", "--config", "{d}/eval_games.yaml"], "lower eval.games or eval.final_games"),
    (["train", "--config", "{d}/seed.yaml"], "below 2**32"),
    (["train", "--config", "quick", "--out", "{d}/file.txt/run"], "file.txt is a file, not a folder"),
    (["train", "--config", "quick", "--total-timesteps", "-5"], "total_timesteps must be > 0"),
    (["compile", "--config", "{d}/nowhere.yaml"], "no config file at"),
    (["compile", "--config", "{d}/empty.yaml"], "the config file is empty"),
    (["compile", "--config", "{d}/not_a_mapping.yaml"], "a mapping of keys to values"),
    (["compile", "--config", "{d}/lr_nan.yaml"], "ppo.learning_rate must be a finite number"),
    (["compile", "--config", "rllib_quick"], "packetrow compile compiles the kernels of an SB3 run"),
    (["curve", "{d}/nowhere"], "no run directory or eval.csv"),
    (["curve", "{d}/binary.bin"], "not an eval.csv"),
    (["curve", "{d}/eval.csv", "--out", "{d}/curve.txt"], "a .png file or a folder"),
    (["curve", "{d}/eval.csv", "--out", "{d}/file.txt/curve.png"], "file.txt is a file, not a folder"),
    (["serve", "--save-dir", "{d}/file.txt", "--port", "0"], "file.txt is a file, not a folder"),
    (["serve", "--save-dir", "{d}/file.txt/saves", "--port", "0"], "file.txt is a file, not a folder"),
    (["serve", "--port", "99999"], "from 0 to 65535"),
    (["mcp", "--port", "8000"], "unrecognized arguments: --port 8000"),
    (["mcp", "stdio"], "unrecognized arguments: stdio"),
    (["demo", "--sead", "1"], "unrecognized arguments: --sead 1"),
]
# a file the test's user cannot read (root reads any file: those cases are skipped as root)
UNREADABLE = [
    (["replay", "{d}/unreadable.jsonl", "--game", "0"], "Permission denied"),
    (["population", "{d}/unreadable.jsonl"], "Permission denied"),
    (["ladder", "--agent", "random", "--reference", "{d}/unreadable.jsonl"], "Permission denied"),
    (["imitate", "{d}/unreadable.jsonl", "--agent", "random#1", "--out", "{d}/model.npz"], "Permission denied"),
    (["train", "--config", "{d}/unreadable.jsonl"], "Permission denied"),
]
# Linux's /proc, which even root can neither read (its own memory from address 0) nor create files in
PROC = [
    (["replay", "/proc/self/mem", "--game", "0"], "cannot read it"),
    (["train", "--config", "/proc/self/mem"], "cannot read it"),
    (["tournament", "--agents", "random,random", "--players", "2", "--out", "/proc/packetrow-test/run"],
     "cannot create files in /proc"),
    (["train", "--config", "quick", "--out", "/proc/packetrow-test/run"], "cannot create files in /proc"),
    (["serve", "--save-dir", "/proc/packetrow-test", "--port", "0"], "cannot create files in /proc"),
]


def _cases():
    for argv, words in CASES:
        yield pytest.param(argv, words, id=" ".join(argv))
    for argv, words in UNREADABLE:
        yield pytest.param(argv, words, id=" ".join(argv), marks=pytest.mark.skipif(
            os.geteuid() == 0, reason="root reads a file of any permissions"))
    for argv, words in PROC:
        yield pytest.param(argv, words, id=" ".join(argv), marks=pytest.mark.skipif(
            not LINUX_PROC, reason="needs Linux's /proc"))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """The inputs the cases name: bad files, a folder, a plain file, a records.jsonl of two games, an eval.csv."""
    folder = tmp_path_factory.mktemp("inputs")
    for name in ("binary.bin", "binary.npz"):
        (folder / name).write_bytes(b"\x80\x81\xfe\xff\x00PK\x03\x04 not text")
    (folder / "folder").mkdir()
    (folder / "file.txt").write_text("a plain file\n")
    (folder / "empty.jsonl").write_text("")
    (folder / "unreadable.jsonl").write_text("{}\n")
    (folder / "unreadable.jsonl").chmod(0)
    for name, text in CONFIGS.items():
        (folder / name).write_text(text)
    assert main(["tournament", "--agents", "random,random", "--players", "2", "--games", "2", "--no-progress",
                 "--out", str(folder / "run")]) == 0
    (folder / "run" / "records.jsonl").rename(folder / "records.jsonl")
    (folder / "eval.csv").write_text((Path(__file__).resolve().parent.parent / "models" / "ppo_packetrow_eval.csv")
                                     .read_text())
    return folder


def test_the_table_covers_every_subcommand():
    assert {argv[0] for argv, _ in CASES} == set(COMMANDS)
    assert len(CASES) + len(UNREADABLE) + len(PROC) >= 40


@pytest.mark.parametrize("argv, words", _cases())
def test_a_bad_input_is_one_line_before_anything_starts(argv, words, files, tmp_path, monkeypatch, capsys):
    argv = [word.format(d=files) for word in argv]
    before = sorted(files.rglob("*"))
    monkeypatch.chdir(tmp_path)  # where a default output (runs/, curve.png) would appear
    if argv[0] == "serve":
        status, err = _serve(argv)
    else:
        def started(prompt=""):
            raise AssertionError(f"the game started and asked for a move: {prompt!r}")

        monkeypatch.setattr(builtins, "input", started)
        try:
            status = main(argv)
        except SystemExit as stop:
            status = stop.code
        err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith(f"packetrow {argv[0]}: error: ")]
    assert len(lines) == 1, err
    assert words in lines[0], lines[0]
    assert sorted(files.rglob("*")) == before and not any(tmp_path.iterdir()), "something was written"


def _serve(argv: list[str]) -> tuple[int, str]:
    run = subprocess.run([sys.executable, "-m", "packetrow_cli", *argv], capture_output=True, text=True, timeout=60)
    return run.returncode, run.stderr
