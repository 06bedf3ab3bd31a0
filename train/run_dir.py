"""A training run's directory: preparing it, the versions it trained with, eval.csv, and the model files.

    config.yaml                the resolved config of the run
    versions.yaml              Python's and the packages' versions this run trained with (a table quotes them)
    model.zip, model.npz       the final SB3 checkpoint and its numpy export (play: ppo:path=.../model.npz)
    checkpoints/step_N.zip     periodic checkpoints (+ .npz exports); resume with --resume ... --trust-checkpoint
    snapshots/step_N.npz       the pool's snapshots, reloaded on resume
    tb/                        TensorBoard logs (tensorboard --logdir DIR/tb)
    eval.csv                   every evaluation: steps, opponent, players, games, win rate [95% CI], rank, VP,
                               train_seconds (wall time of this run or resume so far, evaluations left out)
"""

from __future__ import annotations

import csv
import shutil
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import yaml

from .config import ConfigError, TrainConfig
from .policy_export import export_policy

# what packetrow train writes into its output directory (deleted by --overwrite before a fresh run)
RUN_FILES = ("config.yaml", "versions.yaml", "model.zip", "model.npz", "eval.csv", "curve.png")
RUN_FOLDERS = ("checkpoints", "snapshots", "tb")
RLLIB_RUN_FILES = ("config.yaml", "model.npz", "iterations.jsonl")  # what an RLlib run writes (rllib_selfplay.py)
VERSIONED = ("packetrow", "numpy", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "pettingzoo")
EVAL_COLUMNS = ("timesteps", "stage", "opponent", "num_players", "games", "win_rate", "win_low", "win_high",
                "fair_share", "mean_rank", "rank_low", "rank_high", "mean_vp", "vp_low", "vp_high", "train_seconds")


def environment_versions() -> dict[str, str]:
    """Python's version and the installed versions of the packages a training run depends on."""
    found = {"python": sys.version.split()[0]}
    for name in VERSIONED:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def prepare_out(out: Path, fresh: bool, overwrite: bool, files=RUN_FILES, folders=RUN_FOLDERS) -> None:
    """Create the output directory; a fresh run into one holding files needs ``overwrite`` (then clears the old run).

    ``files`` and ``folders``: what a run of this trainer writes there, the only things ``overwrite`` deletes.
    """
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a directory")
    if fresh and out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise ConfigError(f"--out {out} already holds files (an earlier run?); choose another --out, resume "
                              f"that run with --resume, or pass --overwrite to delete what packetrow train "
                              f"wrote there")
        # an earlier run's files only: its evaluations, checkpoints, snapshots and logs would mix with this run's
        for name in files:
            (out / name).unlink(missing_ok=True)
        for name in folders:
            if (out / name).is_dir():
                shutil.rmtree(out / name)
    out.mkdir(parents=True, exist_ok=True)


def write_yaml(path: Path, data: dict) -> None:
    """Write plain data as YAML, keys in their order (config.yaml, versions.yaml)."""
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def append_eval_rows(path: Path, rows: list[dict]) -> None:
    """Append evaluation rows to eval.csv (written with a header if new)."""
    new = not path.exists()
    columns = EVAL_COLUMNS
    if not new:  # a resumed run keeps its file's columns (an older version's file lacks train_seconds)
        with path.open(newline="") as f:
            columns = next(csv.reader(f), None) or EVAL_COLUMNS
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerows(rows)


def step_name(step: int) -> str:
    """The file stem of a checkpoint or snapshot taken at learner step ``step``."""
    return f"step_{step:010d}"


def snapshot_path(out: Path, step: int) -> Path:
    """Where the snapshot of learner step ``step`` is saved."""
    return out / "snapshots" / f"{step_name(step)}.npz"


def resume_snapshots(resume: Path, step: int, keep: int) -> list[tuple[int, Path]]:
    """The last ``keep`` snapshots (at most ``step``) of the run that wrote the checkpoint ``resume``, oldest first."""
    for directory in (resume.parent / "snapshots", resume.parent.parent / "snapshots"):
        if directory.is_dir():
            found = []
            for path in directory.glob("step_*.npz"):
                try:
                    s = int(path.stem.removeprefix("step_"))
                except ValueError:
                    continue
                if s <= step:
                    found.append((s, path))
            return sorted(found)[-keep:]
    return []


def model_metadata(config: TrainConfig) -> dict:
    """What a model of this run records about its training (the checkpoint's packetrow_meta, the export's metadata)."""
    return {"observation_mode": config.env.observation_mode, "config_name": config.name, "seed": config.seed,
            "reward_mode": config.env.reward_mode}


def export_model(model, config: TrainConfig):
    """The model's policy as a NumpyPolicy with the run's metadata."""
    return export_policy(model, config.env.observation_mode, model_metadata(config))


def save_model(model, stem: Path, config: TrainConfig) -> tuple[Path, Path]:
    """Save ``stem``.zip (SB3 checkpoint) and ``stem``.npz (numpy export); returns both paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    zip_path, npz_path = stem.with_suffix(".zip"), stem.with_suffix(".npz")
    model.save(zip_path)
    export_model(model, config).save(npz_path)
    return zip_path, npz_path
