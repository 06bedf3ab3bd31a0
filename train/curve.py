"""The training curve of a run as a PNG: the learner's win rate in training games and in evaluations.

Left panel: the win rate over the last 500 training episodes per player count, from the run's
TensorBoard scalars (``selfplay/win_rate_Np``; the opponents are the pool's mixture). Right panel:
the periodic and final evaluations of ``eval.csv`` (win rate with its 95% interval per opponent and
player count, and the fair share 1/N). Given an ``eval.csv`` file instead of a run directory (e.g. the
shipped agent's ``models/ppo_packetrow_eval.csv``; its TensorBoard logs are not shipped), it draws the
evaluations alone.
"""

from __future__ import annotations

import csv
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from packetrow_env.user_files import check_output_file

PLOTTED = {"timesteps", "opponent", "num_players", "win_rate", "win_low", "win_high"}  # eval.csv columns drawn


def training_win_rates(run: Path) -> dict[int, tuple[list[int], list[float]]]:
    """{player count: (steps, win rates)} from the run's TensorBoard logs (empty if it has none)."""
    curves: dict[int, dict[int, float]] = {}
    for directory in sorted((run / "tb").glob("*")):  # a resumed run logs into a new directory
        events = EventAccumulator(str(directory), size_guidance={"scalars": 0})
        events.Reload()
        for tag in events.Tags()["scalars"]:
            if tag.startswith("selfplay/win_rate_") and tag.endswith("p"):
                n = int(tag.removeprefix("selfplay/win_rate_")[:-1])
                curves.setdefault(n, {}).update({e.step: e.value for e in events.Scalars(tag)})
    return {n: (sorted(points), [points[s] for s in sorted(points)]) for n, points in sorted(curves.items())}


def evaluation_rows(run: Path) -> list[dict]:
    """The rows of the run's eval.csv (or of ``run`` itself, an eval.csv file), numbers converted (empty if none)."""
    path = run if run.is_file() else run / "eval.csv"
    if not path.exists():
        return []
    try:
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
        for row in rows:
            if not PLOTTED <= set(row):
                raise KeyError(PLOTTED - set(row))
            for key, value in row.items():
                if key not in ("stage", "opponent"):
                    row[key] = float(value) if value or key in PLOTTED else None  # an unplotted column may be empty
    except (UnicodeDecodeError, csv.Error, KeyError, TypeError, ValueError):
        raise ValueError(f"{path} is not an eval.csv written by packetrow train") from None
    return rows


def image_path(run: Path, out=None) -> Path:
    """Where ``plot_run`` writes: ``out`` (a .png file, or a folder: FOLDER/curve.png), by default RUN/curve.png
    (for an eval.csv alone, curve.png here); a ValueError if it names another kind of file or cannot be written."""
    if out is None:
        out = Path("curve.png") if run.is_file() else run / "curve.png"
    out = Path(out)
    if out.is_dir():
        out = out / "curve.png"
    elif out.suffix.lower() != ".png":
        raise ValueError(f"--out must name a .png file or a folder (then FOLDER/curve.png), got {str(out)!r}")
    check_output_file(out, ValueError, "--out")
    return out


def plot_run(run, out=None) -> Path:
    """Draw the run's training curve and evaluations into ``image_path(run, out)``; returns the path written."""
    import matplotlib  # here, not at the top: the file backend is chosen for this plot, not for every importer

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = Path(run)
    if run.is_file():  # an eval.csv alone: the evaluations panel
        out = image_path(run, out)
        training, rows = {}, evaluation_rows(run)
        if not rows:
            raise ValueError(f"{run} holds no evaluations")
    elif run.is_dir():
        out = image_path(run, out)
        training, rows = training_win_rates(run), evaluation_rows(run)
        if not training and not rows:
            raise FileNotFoundError(f"{run} has neither TensorBoard logs (tb/) nor eval.csv to plot")
    else:
        raise FileNotFoundError(f"no run directory or eval.csv at {run} (expected the --out directory of "
                                "packetrow train, or an eval.csv such as models/ppo_packetrow_eval.csv)")
    if run.is_file():
        fig, right = plt.subplots(1, 1, figsize=(6, 4))
        left = None
    else:
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for n, (steps, rates) in training.items():
        left.plot([s / 1e6 for s in steps], rates, label=f"{n} players", linewidth=1)
        left.axhline(1 / n, linestyle=":", linewidth=0.8, color=left.lines[-1].get_color())
    if left is not None:
        left.set(title="training games (last 500 episodes, pool opponents)", xlabel="learner steps (millions)",
                 ylabel="learner win rate")
    else:
        right.set(ylabel="learner win rate")
    for (opponent, n) in sorted({(r["opponent"], int(r["num_players"])) for r in rows}):
        mine = sorted((r for r in rows if r["opponent"] == opponent and int(r["num_players"]) == n),
                      key=lambda r: r["timesteps"])
        x = [r["timesteps"] / 1e6 for r in mine]
        y = [r["win_rate"] for r in mine]
        # at least 0: eval.csv files from before the Wilson rounding fix hold 1 - 1e-16 as the top of 100%
        errors = [[max(0.0, r["win_rate"] - r["win_low"]) for r in mine],
                  [max(0.0, r["win_high"] - r["win_rate"]) for r in mine]]
        line = right.errorbar(x, y, yerr=errors, marker="o", markersize=3, capsize=2, linewidth=1,
                              label=f"vs {opponent}, {n} players")
        right.axhline(1 / n, linestyle=":", linewidth=0.8, color=line.lines[0].get_color())
    right.set(title="evaluations (seat-rotated, 95% intervals; dotted: 1/N)", xlabel="learner steps (millions)")
    for axis in filter(None, (left, right)):
        axis.set_ylim(0, 1)
        axis.grid(alpha=0.3)
        if axis.lines:
            axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _run_curve_command(args) -> int:
    try:
        path = plot_run(args.run_dir, args.out)
    except (OSError, ValueError) as error:
        args.parser.error(str(error))
    print(f"Wrote {path}")
    return 0


def add_arguments(parser) -> None:
    """Add the arguments of ``packetrow curve`` to its parser."""
    parser.description = ("Plot a run of packetrow train: the learner's win rate per player count in training games "
                          "(TensorBoard logs) and its evaluations against fixed bots (eval.csv), as a PNG.")
    parser.add_argument("run_dir", metavar="RUN_DIR",
                        help="the run's output directory, e.g. runs/quick; or an eval.csv alone (its evaluations "
                             "only), e.g. models/ppo_packetrow_eval.csv")
    parser.add_argument("--out", metavar="PNG", help="the image to write, a .png file or a folder (then "
                                                     "FOLDER/curve.png); default RUN_DIR/curve.png, for an eval.csv "
                                                     "curve.png in the current directory")
    parser.set_defaults(run=_run_curve_command, parser=parser)

