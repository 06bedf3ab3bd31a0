"""Long runs lose nothing (issue #47): whole files, resume, no orphaned rollout process, divergence stops a run.

- Every file a run writes is whole under its final name: a write killed half-way (a real SIGKILL, in a subprocess,
  at a chosen byte) leaves the old file or none, and a temporary file that resume reports and ignores.
- Resuming drops eval.csv's rows newer than the checkpoint and a torn last row, so no step appears twice.
- A trainer killed with SIGKILL, or stopped with Ctrl-C, leaves no rollout process behind (checked in /proc).
- An infinite learning rate stops the run with one line and writes no model; nothing writes or loads a policy whose
  weights are not finite.

The tests that start ``packetrow train`` in a subprocess take 10-30 s each (tiny budgets; numba's kernels are cached
after the first run of the suite).
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")

from packetrow_agents.policy import ModelFormatError, NumpyPolicy  # noqa: E402
from packetrow_cli.main import main  # noqa: E402
from packetrow_train.atomic_files import atomic_write, leftovers, write_text  # noqa: E402
from packetrow_train.curve import evaluation_rows  # noqa: E402
from packetrow_train.config import ConfigError  # noqa: E402
from packetrow_train.run_dir import EVAL_COLUMNS, append_eval_rows, prepare_out, prepare_resume  # noqa: E402
from tests.test_training import small_policy, tiny  # noqa: E402

LINUX = sys.platform.startswith("linux")


def write_config(path: Path, **changes) -> Path:
    """A tiny quick.yaml (pipeline on) with ``changes`` (dotted keys for sections: eval__every=512), as a file."""
    data = tiny(**{k: v for k, v in changes.items() if "__" not in k})
    for key, value in changes.items():
        if "__" in key:
            section, name = key.split("__")
            data[section][name] = value
    data["eval"].update(num_players=[2], opponents=["random"], final_games=0)
    data["log"].update(tensorboard=False)
    path.write_text(yaml.safe_dump(data))
    return path


# --------------------------------------------------------------------------- atomic files
def test_an_error_inside_an_atomic_write_leaves_the_old_file(tmp_path):
    path = write_text(tmp_path / "config.yaml", "old\n")
    with pytest.raises(OSError, match="disk full"):
        with atomic_write(path) as file:
            file.write(b"new, half")
            raise OSError("disk full")
    assert path.read_text() == "old\n" and leftovers(tmp_path) == []
    with atomic_write(path) as file:
        file.write(b"new\n")
    assert path.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_kill_in_the_middle_of_a_write_leaves_no_torn_file(tmp_path):
    """A process SIGKILLed half-way through a 4 MB write (at a chosen byte: deterministic): the final name holds
    the old file, the half-written bytes are a temporary file that resume reports."""
    path = write_text(tmp_path / "checkpoints" / "step_0000001024.zip", "the old checkpoint")
    script = textwrap.dedent(f"""
        import os, signal
        from packetrow_train.atomic_files import atomic_write
        with atomic_write({str(path)!r}) as file:
            file.write(bytes(2 << 20))
            file.flush()
            os.kill(os.getpid(), signal.SIGKILL)
            file.write(bytes(2 << 20))
    """)
    finished = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert finished.returncode == -signal.SIGKILL
    assert path.read_text() == "the old checkpoint"
    (leftover,) = leftovers(tmp_path)
    assert leftover.parent == path.parent and leftover.name.startswith(".step_0000001024.zip.")
    assert leftover.stat().st_size == 2 << 20
    (line,) = prepare_resume(tmp_path, 1024)
    assert line.startswith("ignoring 1 temporary file(s)") and leftover.name in line and leftover.exists()


def test_overwrite_deletes_the_temporary_files_of_an_old_run(tmp_path):
    leftover = tmp_path / "checkpoints" / ".step_0000001024.zip.x1y2.partial"
    write_text(leftover, "half a checkpoint")
    write_text(tmp_path / ".eval.csv.x3y4.partial", "half a row")
    with pytest.raises(ConfigError, match="already holds files"):
        prepare_out(tmp_path, fresh=True, overwrite=False)
    prepare_out(tmp_path, fresh=True, overwrite=True)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- eval.csv on resume
def eval_row(step: int, stage: str = "periodic") -> dict:
    return dict.fromkeys(EVAL_COLUMNS, 1) | {"timesteps": step, "stage": stage, "opponent": "random",
                                             "num_players": 2, "win_rate": 0.5}


def test_resume_drops_a_torn_row_and_the_rows_newer_than_its_checkpoint(tmp_path):
    path = tmp_path / "eval.csv"
    append_eval_rows(path, [eval_row(512), eval_row(1024)])
    append_eval_rows(path, [eval_row(1536)])
    whole = path.read_bytes()
    path.write_bytes(whole + b"2048,periodic,ran")  # a kill in the middle of a row (a writer before #47's)
    lines = prepare_resume(tmp_path, 1024)
    assert lines == [f"{path}: dropped 1 row(s) newer than the checkpoint's step 1024 and a torn last row"]
    append_eval_rows(path, [eval_row(1536), eval_row(2048, "final")])  # the resumed run's rows, not glued on
    rows = evaluation_rows(path)  # packetrow curve reads it
    assert [(r["timesteps"], r["stage"]) for r in rows] == [(512, "periodic"), (1024, "periodic"),
                                                            (1536, "periodic"), (2048, "final")]
    assert prepare_resume(tmp_path, 2048) == []  # nothing to do: nothing reported, nothing rewritten


def test_appending_to_a_torn_file_drops_the_torn_row(tmp_path):
    path = tmp_path / "eval.csv"
    append_eval_rows(path, [eval_row(512)])
    path.write_bytes(path.read_bytes() + b"1024,peri")
    append_eval_rows(path, [eval_row(1024)])
    with path.open(newline="") as f:
        assert [r["timesteps"] for r in csv.DictReader(f)] == ["512", "1024"]


# --------------------------------------------------------------------------- a kill during a checkpoint
KILL_IN_CHECKPOINT = """
import os, signal, sys
from packetrow_cli.main import main
from packetrow_train.rollout import RolloutPPO

save = RolloutPPO.save

def save_then_die(self, file, *args, **kwargs):
    # the checkpoint of step {step}: half an archive on disk, then the kill
    if self.num_timesteps >= {step}:
        file.write(b"PK\\x03\\x04" + bytes(1 << 20))
        file.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    return save(self, file, *args, **kwargs)

RolloutPPO.save = save_then_die
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_kill_during_a_checkpoint_leaves_whole_files_and_resumes(tmp_path, capsys):
    """A run SIGKILLed while its second checkpoint is written: every file under a final name is whole, and the
    resume from the first checkpoint reports the leftover, drops the later evaluation and evaluates it again."""
    config = write_config(tmp_path / "tiny.yaml", total_timesteps=2048, eval__every=512, checkpoint__every=1024)
    out = tmp_path / "run"
    killed = subprocess.run([sys.executable, "-c", KILL_IN_CHECKPOINT.replace("{step}", "2048"), "train",
                             "--config", str(config), "--out", str(out), "--no-progress"],
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    checkpoints = out / "checkpoints"
    assert not (checkpoints / "step_0000002048.zip").exists() and (checkpoints / "step_0000001024.zip").exists()
    for path in out.rglob("*.zip"):  # whole archives only under final names
        with zipfile.ZipFile(path) as archive:
            assert archive.testzip() is None
    for path in out.rglob("*.npz"):
        NumpyPolicy.load_npz(path)
    (leftover,) = leftovers(out)
    assert leftover.parent == checkpoints and leftover.name.startswith(".step_0000002048.zip.")
    assert [r["timesteps"] for r in evaluation_rows(out / "eval.csv")] == [512, 1024, 1536]

    assert main(["train", "--config", str(config), "--out", str(out), "--resume", str(checkpoints /
                 "step_0000001024.zip"), "--trust-checkpoint", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"resume: ignoring 1 temporary file(s) that an interrupted run left in {out}" in err
    assert "dropped 1 row(s) newer than the checkpoint's step 1024" in err
    assert [r["timesteps"] for r in evaluation_rows(out / "eval.csv")] == [512, 1024, 1536, 2048]  # each step once
    assert (checkpoints / "step_0000002048.zip").is_file() and leftover.exists()  # ignored, not read


# --------------------------------------------------------------------------- the rollout process ends with its trainer
def children(pid: int, name: str = "pr-rollout") -> list[int]:
    """The live processes whose parent is ``pid`` and whose name is ``name`` (from /proc; a zombie holds nothing and
    counts as gone): by default rollout processes, not the compilers that ``compile_ahead`` forks before them."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and alive(int(entry.name)):
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status and status.startswith(f"Name:\t{name}\n"):
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


START_TRAINER = """
import sys
from packetrow_cli.main import main
from packetrow_train import rollout_process

if sys.argv.pop(1) == "pipe-only":  # the parent-death signal off: the closed pipe ends must suffice alone
    rollout_process.die_with_parent = lambda parent: False
sys.exit(main(sys.argv[1:]))
"""


def start_trainer(tmp_path: Path, mode: str, **changes) -> tuple[subprocess.Popen, int]:
    """A long tiny ``packetrow train`` with the pipeline, in its own session; (the process, its rollout process's
    pid) once the rollout process runs."""
    config = write_config(tmp_path / "long.yaml", total_timesteps=10**7, eval__every=0, **changes)
    trainer = subprocess.Popen([sys.executable, "-c", START_TRAINER, mode, "train", "--config", str(config),
                                "--out", str(tmp_path / "run"), "--no-progress"], start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait_for(lambda: children(trainer.pid) or trainer.poll() is not None, 120):
        stop(trainer, [])
        pytest.fail("the trainer started no rollout process within 120 s")
    assert trainer.poll() is None, trainer.communicate()
    (worker,) = children(trainer.pid)
    return trainer, worker


def stop(trainer: subprocess.Popen, workers: list[int]) -> None:
    """Kill what a failed test left running: the trainer's process group (its session, which the test started)
    and the rollout process by its pid."""
    for pid in workers:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    if trainer.poll() is None:
        os.killpg(trainer.pid, signal.SIGKILL)
    trainer.communicate()


@pytest.mark.skipif(not LINUX, reason="the pipeline's rollout process is Linux's (fork); /proc")
@pytest.mark.parametrize("mode", ["pdeathsig", "pipe-only"])
def test_a_sigkilled_trainer_leaves_no_rollout_process(tmp_path, mode):
    """SLOW (about 15 s): a pipelined run SIGKILLed (only the trainer, as the out-of-memory killer does): its
    rollout process is gone within seconds, by the parent-death signal, or, without it, by the pipe's end."""
    trainer, worker = start_trainer(tmp_path, mode)
    try:
        os.kill(trainer.pid, signal.SIGKILL)
        trainer.wait(timeout=30)
        assert wait_for(lambda: not alive(worker), 10), f"the rollout process {worker} outlived its trainer"
    finally:
        stop(trainer, [worker])


@pytest.mark.skipif(not LINUX, reason="the pipeline's rollout process is Linux's (fork); /proc")
def test_ctrl_c_ends_a_run_with_one_line_and_no_process(tmp_path):
    """SLOW (about 15 s): Ctrl-C (SIGINT to the terminal's process group) ends a pipelined run with one line naming
    the checkpoint to resume from, exit status 130, no traceback, no rollout process left."""
    trainer, worker = start_trainer(tmp_path, "pdeathsig", checkpoint__every=256)
    checkpoints = tmp_path / "run" / "checkpoints"
    try:
        assert wait_for(lambda: any(checkpoints.glob("step_*.zip")), 60)
        os.killpg(trainer.pid, signal.SIGINT)
        _, err = trainer.communicate(timeout=60)
        assert trainer.returncode == 130, err
        assert "Traceback" not in err
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"packetrow train: interrupted; resume it with --resume {checkpoints}") and \
            last.endswith(".zip --trust-checkpoint")
        assert wait_for(lambda: not alive(worker), 10)
    finally:
        stop(trainer, [worker])


# --------------------------------------------------------------------------- divergence
def test_an_infinite_learning_rate_stops_the_run_and_writes_no_model(tmp_path, capsys):
    config = write_config(tmp_path / "inf.yaml", total_timesteps=2048, eval__every=512, checkpoint__every=512)
    data = yaml.safe_load(config.read_text())
    data["ppo"]["learning_rate"] = 1e300  # finite (the config check refuses an infinite one) but far too high
    config.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("packetrow train: error: training diverged at learner step 256: ")
    assert "the weights (" in err[0] and "lower ppo.learning_rate (now 1e+300)" in err[0]
    assert not (out / "model.npz").exists() and not (out / "model.zip").exists()
    assert not any(out.rglob("step_*.zip")) and not (out / "eval.csv").exists()
    for path in out.rglob("*.npz"):  # the snapshot of the initial policy, taken before any update
        NumpyPolicy.load_npz(path)


def test_the_divergence_check_names_what_is_not_finite_and_no_more():
    torch = pytest.importorskip("torch")
    from types import SimpleNamespace

    from packetrow_train.divergence import non_finite_parts

    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    model = SimpleNamespace(policy=net, logger=SimpleNamespace(name_to_value={"train/loss": 0.5}))
    assert non_finite_parts(model) == []
    with torch.no_grad():
        net[0].weight.fill_(3e38)  # finite, though the tensor's sum overflows float32: not a divergence
    assert non_finite_parts(model) == []
    net[1].bias.grad = torch.tensor([float("nan")])
    with torch.no_grad():
        net[1].weight[0, 1] = float("-inf")
    assert non_finite_parts(model) == ["the gradients (1 of 4 tensors)", "the weights (1 of 4 tensors, 1.weight first)"]


def test_no_policy_with_non_finite_weights_is_written_or_loaded(tmp_path):
    policy = small_policy(0)
    path = policy.save(tmp_path / "good.npz")
    policy.action_bias[3] = np.nan
    assert policy.non_finite() == ["action_bias"]
    with pytest.raises(ModelFormatError, match=r"not finite \(NaN or infinite in action_bias\)"):
        policy.save(tmp_path / "bad.npz")
    assert not (tmp_path / "bad.npz").exists()
    # a file written elsewhere: the same arrays with an infinity
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    arrays["layer_0_weight"][0, 0] = np.inf
    np.savez(tmp_path / "crafted.npz", **arrays)
    with pytest.raises(ModelFormatError, match=r"crafted.npz: its weights are not finite \(NaN or infinite in "
                                               r"layer_0_weight\).*lower ppo.learning_rate"):
        NumpyPolicy.load_npz(tmp_path / "crafted.npz")


def test_the_export_refuses_a_network_with_non_finite_weights():
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from packetrow_env.observation import encoder
    from packetrow_train.policy_export import export_policy
    from gymnasium import spaces

    size = encoder().size
    network = MaskableActorCriticPolicy(spaces.Box(0, 1, (size,), np.float32), spaces.Discrete(61),
                                        lambda _: 1e-3, net_arch=[8])
    export_policy(network)
    with torch.no_grad():
        network.action_net.weight[0, 0] = float("nan")
    with pytest.raises(ModelFormatError, match=r"cannot export a network whose weights are not finite .*action_weight"):
        export_policy(network)
