"""A training run's directory: preparing it, the versions it trained with, eval.csv, and the model files.

    config.yaml                the resolved config of the run
    versions.yaml              Python's and the packages' versions this run trained with (a table quotes them)
    model.zip, model.npz       the final SB3 checkpoint and its numpy export (play: ppo:path=.../model.npz)
    checkpoints/step_N.zip     periodic checkpoints (+ .npz exports); resume with --resume ... --trust-checkpoint
    snapshots/step_N.npz       the pool's snapshots, reloaded on resume
    exploiters/step_N/         a league's exploiter made at step N (train/league.py): main.npz, the main agent it
                               trained against, and its own run's files (model.npz: the exploiter, reloaded on
                               resume)
    tb/                        TensorBoard logs (tensorboard --logdir DIR/tb)
    eval.csv                   every evaluation: steps, opponent, players, games, win rate [95% CI], rank, VP,
                               train_seconds (wall time of this run or resume so far, evaluations left out)

Every file but TensorBoard's logs is written whole or not at all (``atomic_files``): a kill leaves the old file or
the new one, and at most a temporary ``.NAME.*.partial`` beside it, which a resume reports and ignores. A resume
also drops eval.csv's rows newer than its checkpoint (they are evaluated again) and a torn last row that a writer
before atomic files may have left (``prepare_resume``).
"""

from __future__ import annotations

import csv
import io
import shutil
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import yaml

from packetrow_env.user_files import check_output_folder

from .atomic_files import atomic_write, leftovers, write_text
from .config import ConfigError, TrainConfig
from .policy_export import export_policy

# what packetrow train writes into its output directory (deleted by --overwrite before a fresh run)
RUN_FILES = ("config.yaml", "versions.yaml", "model.zip", "model.npz", "eval.csv", "curve.png")
RUN_FOLDERS = ("checkpoints", "snapshots", "exploiters", "tb")
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
    A path that cannot be written (a file on the way, no permission) is a ConfigError before anything changes.

    ``files`` and ``folders``: what a run of this trainer writes there, the only things ``overwrite`` deletes
    (with the temporary files that interrupted writes left beside them, ``atomic_files.leftovers``).
    """
    check_output_folder(out, ConfigError, "--out")  # before anything in it changes
    if fresh and out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise ConfigError(f"--out {out} already holds files (an earlier run?); choose another --out, resume "
                              f"that run with --resume, or pass --overwrite to delete what packetrow train "
                              f"wrote there")
        # an earlier run's files only: its evaluations, checkpoints, snapshots and logs would mix with this run's
        for name in files:
            (out / name).unlink(missing_ok=True)
        for path in leftovers(out):
            path.unlink(missing_ok=True)
        for name in folders:
            if (out / name).is_dir():
                shutil.rmtree(out / name)
    out.mkdir(parents=True, exist_ok=True)


def out_dir(config: TrainConfig, out=None) -> Path:
    """The run's directory: ``out``, or runs/NAME by default."""
    return Path(out) if out is not None else Path("runs") / config.name


def write_yaml(path: Path, data: dict) -> None:
    """Write plain data as YAML, keys in their order (config.yaml, versions.yaml), atomically."""
    write_text(path, yaml.safe_dump(data, sort_keys=False))


def _eval_lines(path: Path) -> tuple[list[str], bool]:
    """eval.csv's whole lines, line ends kept (csv writes CR LF), and whether a torn last line (no line end: a
    writer before atomic files, killed mid-row) was left out."""
    text = path.read_bytes().decode("utf-8") if path.exists() else ""
    lines = text.splitlines(keepends=True)
    torn = bool(lines) and not lines[-1].endswith("\n")
    return (lines[:-1] if torn else lines), torn


def append_eval_rows(path: Path, rows: list[dict]) -> None:
    """Append evaluation rows to eval.csv (written with a header if new): the file is rewritten atomically, so a
    kill leaves it with or without the new rows, never with part of one."""
    lines, _ = _eval_lines(path)
    # a resumed run keeps its file's columns (an older version's file lacks train_seconds)
    columns = next(csv.reader(lines[:1]), None) or EVAL_COLUMNS
    added = io.StringIO(newline="")
    writer = csv.DictWriter(added, fieldnames=columns, extrasaction="ignore")
    if not lines:
        writer.writeheader()
    writer.writerows(rows)
    write_text(path, "".join(lines) + added.getvalue())


def prepare_resume(out: Path, step: int) -> list[str]:
    """Ready ``out`` for a run resumed from a checkpoint of learner step ``step``; one line per thing done to report.

    eval.csv loses its rows newer than ``step`` (the resumed run evaluates those steps again, so a step does not
    appear twice) and a torn last row; temporary files of interrupted writes are reported and left alone (nothing
    reads them)."""
    report = []
    found = [str(p.relative_to(out)) for p in leftovers(out)]
    if found:
        names = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        report.append(f"ignoring {len(found)} temporary file(s) that an interrupted run left in {out} (safe to "
                      f"delete): {names}")
    path = out / "eval.csv"
    lines, torn = _eval_lines(path)
    if not lines:
        return report
    header = next(csv.reader(lines[:1]))
    column = header.index("timesteps") if "timesteps" in header else None
    kept = [lines[0]] + [line for line in lines[1:] if column is None or not _newer(line, column, step)]
    dropped = len(lines) - len(kept)
    if dropped or torn:
        write_text(path, "".join(kept))
        parts = ([f"{dropped} row(s) newer than the checkpoint's step {step}"] if dropped else []) + \
                (["a torn last row"] if torn else [])
        report.append(f"{path}: dropped {' and '.join(parts)}")
    return report


def _newer(line: str, column: int, step: int) -> bool:
    """Whether an eval.csv line is of a learner step after ``step`` (a row it cannot read is kept, as it was)."""
    row = next(csv.reader([line]), [])
    try:
        return int(row[column]) > step
    except (IndexError, ValueError):
        return False


def step_name(step: int) -> str:
    """The file stem of a checkpoint or snapshot taken at learner step ``step``."""
    return f"step_{step:010d}"


def snapshot_path(out: Path, step: int) -> Path:
    """Where the snapshot of learner step ``step`` is saved."""
    return out / "snapshots" / f"{step_name(step)}.npz"


def latest_checkpoint(out: Path) -> Path | None:
    """The newest checkpoint of the run in ``out`` (checkpoints/step_N.zip), or None."""
    found = sorted((out / "checkpoints").glob("step_*.zip"))
    return found[-1] if found else None


def exploiter_folder(out: Path, step: int) -> Path:
    """The run folder of the league's exploiter made at the main agent's learner step ``step``."""
    return out / "exploiters" / step_name(step)


def resume_snapshots(resume: Path, step: int, keep: int) -> list[tuple[int, Path]]:
    """The last ``keep`` snapshots (at most ``step``) of the run that wrote the checkpoint ``resume``, oldest first."""
    return _saved_steps(resume, "snapshots", "step_*.npz", step, keep)


def resume_exploiters(resume: Path, step: int, keep: int) -> list[tuple[int, Path]]:
    """The last ``keep`` exploiters' exports (made at most at ``step``) of the run that wrote the checkpoint
    ``resume``, oldest first; an exploiter whose training did not finish has none and is left out."""
    return _saved_steps(resume, "exploiters", "step_*/model.npz", step, keep)


def _saved_steps(resume: Path, folder: str, pattern: str, step: int, keep: int) -> list[tuple[int, Path]]:
    # a checkpoint lies in the run folder (model.zip) or in its checkpoints/
    for directory in (resume.parent / folder, resume.parent.parent / folder):
        if directory.is_dir():
            found = []
            for path in directory.glob(pattern):
                try:
                    s = int(path.relative_to(directory).parts[0].removeprefix("step_").removesuffix(".npz"))
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


def save_policy(policy, path: Path) -> Path:
    """Write a NumpyPolicy's ``.npz`` atomically (snapshots, exports); returns ``path``."""
    with atomic_write(path) as file:
        policy.write(file)
    return path


def save_model(model, stem: Path, config: TrainConfig) -> tuple[Path, Path]:
    """Save ``stem``.zip (SB3 checkpoint) and ``stem``.npz (numpy export), each atomically; returns both paths.

    The export comes first, so a model whose weights are not finite writes neither file (``export_policy``
    refuses it), and the ``.npz`` is written before the ``.zip``, so a checkpoint that resume finds has its
    export beside it."""
    zip_path, npz_path = stem.with_suffix(".zip"), stem.with_suffix(".npz")
    save_policy(export_model(model, config), npz_path)
    with atomic_write(zip_path) as file:
        model.save(file)
    return zip_path, npz_path
