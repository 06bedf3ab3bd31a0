"""Robust training's ablation (issue #49): plain self-play PPO, MMD and the league at equal training, one table.

Each config (``quick``, ``mmd``, ``league`` by default: the same network, PPO settings and mixture but for what
each adds) trains with ``packetrow train`` from the same seed for ``--steps`` learner steps in all: the league's
exploiters' steps count, so its main agent trains fewer (``league_main_steps``), and every run's wall time is
reported beside it. Each trained policy is then measured three ways, all duplicate deals with 95% intervals:

- its run's final evaluation against the heuristic (``eval.final_games`` 2- and 4-player games, ``eval.csv``);
- ``--ismcts-games`` 2-player games against ``ismcts:iterations=N,rollout=random`` (a fixed amount of work, so
  the figure does not move with the machine's load);
- its exploitability curve: ``packetrow exploit`` from the policy itself, best responses after each of
  ``--exploit-steps`` learner steps (steps, not minutes, for the same reason), ``--exploit-games`` games each.

Everything is written under ``--out`` (one folder per config and step), and the table as Markdown to stdout and
``--md``. Runs already finished in ``--out`` are read back, not repeated, and the games against ISMCTS resume
where they stopped, so an interrupted ablation resumes (with the same settings: other settings need another
``--out``).

    python benchmarks/robust_ablation.py --help
    python benchmarks/robust_ablation.py --out runs/ablation --md ablation.md        # about 40 minutes on 2 cores
    python benchmarks/robust_ablation.py --steps 200000 --exploit-steps 50000 --ismcts-games 10 --exploit-games 20
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch
from tqdm import tqdm

from packetrow_env import __version__
from packetrow_train.config import load_config
from packetrow_train.curve import evaluation_rows

CLI = [sys.executable, "-m", "packetrow_cli"]


def league_main_steps(total: int, every: int, steps: int) -> int:
    """The most learner steps of a league's main agent for which it and its exploiters (``steps`` each, one at
    every multiple of ``every`` it passes) train at most ``total`` steps together."""
    low, high = 1, total  # main + exploiters grows with main: the largest main that fits, by bisection
    while low < high:
        main = (low + high + 1) // 2
        if main + (main - 1) // every * steps <= total:
            low = main
        else:
            high = main - 1
    return low


def run(command: list[str], log: Path) -> float:
    """Run ``command`` with its output in ``log``; its wall seconds. A failure stops the ablation with the log's
    tail."""
    start = time.perf_counter()
    with log.open("w") as handle:
        done = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(f"robust_ablation.py: {' '.join(command[2:])} failed (exit {done.returncode}); its output "
                         f"ends:\n{log.read_text()[-2000:]}")
    return time.perf_counter() - start


def final_eval(run_dir: Path) -> dict[int, str]:
    """{players: 'win rate [low, high]'} of the run's final evaluation against the heuristic."""
    return {int(row["num_players"]): percent(row["win_rate"], row["win_low"], row["win_high"])
            for row in evaluation_rows(run_dir) if row["stage"] == "final" and row["opponent"] == "heuristic"}


def percent(rate, low, high) -> str:
    return f"{100 * float(rate):.1f}% [{100 * float(low):.1f}, {100 * float(high):.1f}]"


def measure(name: str, args, out: Path) -> dict:
    """Train config ``name`` (unless its run is in ``out``) and measure it; one row of the table."""
    config = load_config(name)
    steps = args.steps
    if config.league.every:
        steps = league_main_steps(args.steps, config.league.every, config.league.steps)
    run_dir, row = out / name, {"config": name, "main_steps": steps}
    timing = out / f"{name}.train.json"
    if not (run_dir / "model.npz").exists() or not timing.exists():
        seconds = run(CLI + ["train", "--config", name, "--out", str(run_dir), "--overwrite", "--no-progress",
                             "--total-timesteps", str(steps)], out / f"{name}.train.log")
        timing.write_text(json.dumps({"wall_seconds": seconds}))
    row["wall"] = json.loads(timing.read_text())["wall_seconds"]
    row.update({f"heuristic_{n}p": cell for n, cell in final_eval(run_dir).items()})
    model = str(run_dir / "model.npz")

    ismcts_dir = out / f"{name}-ismcts"
    if not (ismcts_dir / "table.csv").exists():
        ismcts = f"ismcts:iterations={args.ismcts_iterations},rollout=random"
        run(CLI + ["tournament", "--agents", f"ppo:path={model}", ismcts,
                   "--players", "2", "--games", str(args.ismcts_games), "--duplicate", "--workers", str(args.workers),
                   "--seed", str(args.seed), "--out", str(ismcts_dir), "--resume", "--chunk-size", "1",
                   "--no-progress"],
            out / f"{name}.ismcts.log")
    with (ismcts_dir / "table.csv").open() as handle:
        first = next(csv.DictReader(handle))
    row["ismcts"] = percent(first["win_rate"], first["win_low"], first["win_high"])

    exploit_dir = out / f"{name}-exploit"
    if not (exploit_dir / "exploit_curve.json").exists():
        run(CLI + ["exploit", "--agent", f"ppo:path={model}", "--start", model, "--players", "2",
                   "--steps", ",".join(map(str, args.exploit_steps)), "--games", str(args.exploit_games),
                   "--workers", str(args.workers), "--seed", str(args.seed), "--out", str(exploit_dir),
                   "--overwrite", "--no-progress"], out / f"{name}.exploit.log")
    curve = json.loads((exploit_dir / "exploit_curve.json").read_text())
    row["exploit"] = [percent(p["win_rate"], p["low"], p["high"]) for p in curve["points"]]
    return row


def table(rows: list[dict], args) -> str:
    budgets = " | ".join(f"best response after {s:,} steps" for s in args.exploit_steps)
    lines = [f"| config | main agent's learner steps | training wall time | vs heuristic, 2p | vs heuristic, 4p | "
             f"vs ismcts:iterations={args.ismcts_iterations},rollout=random, 2p | {budgets} |",
             "|---|---:|---:|---|---|---|" + "---|" * len(args.exploit_steps)]
    for row in rows:
        lines.append(f"| `{row['config']}` | {row['main_steps']:,} | {row['wall'] / 60:.1f} min | "
                     f"{row.get('heuristic_2p', '-')} | {row.get('heuristic_4p', '-')} | {row['ismcts']} | "
                     + " | ".join(row["exploit"]) + " |")
    lines.append("")
    lines.append(f"{datetime.date.today()}, {platform.node()}, Python {platform.python_version()}, torch "
                 f"{torch.__version__}, packetrow {__version__}; {args.steps:,} learner steps of training each "
                 f"(exploiters' included), seed {args.seed}; {args.ismcts_games} games against ISMCTS, "
                 f"{args.exploit_games} at each best response's budget, duplicate deals.")
    return "\n".join(lines)


def step_list(text: str) -> list[int]:
    """Learner steps from 'N,N,...' (argparse reports the ValueError of anything else)."""
    return [int(word) for word in text.split(",")]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["quick", "mmd", "league"],
                        help="shipped configs or YAML paths to compare (default: quick mmd league)")
    parser.add_argument("--steps", type=int, default=2_500_000,
                        help="learner steps of each training, a league's exploiters included (default 2,500,000)")
    parser.add_argument("--exploit-steps", type=step_list, default=[1_000_000, 3_000_000],
                        help="the best responses' budgets in learner steps, increasing (default 1000000,3000000)")
    parser.add_argument("--exploit-games", type=int, default=400, help="games at each budget (default 400)")
    parser.add_argument("--ismcts-games", type=int, default=40, help="games against ISMCTS (default 40)")
    parser.add_argument("--ismcts-iterations", type=int, default=345,
                        help="ISMCTS's iterations a move, random rollouts (default 345: about 0.07 s here)")
    parser.add_argument("--workers", type=int, default=2, help="processes playing games (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every run (default 0)")
    parser.add_argument("--out", type=Path, default=Path("runs/ablation"), help="folder of the runs")
    parser.add_argument("--md", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args(argv)
    for flag in ("steps", "exploit_games", "ismcts_games", "ismcts_iterations", "workers"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be a positive integer, got {getattr(args, flag)}")
    if any(b <= a for a, b in zip(args.exploit_steps, args.exploit_steps[1:])) or min(args.exploit_steps) < 1:
        parser.error(f"--exploit-steps must be positive and increasing, got {args.exploit_steps}")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in tqdm(args.configs, desc="configs trained and measured", unit="config"):
        rows.append(measure(name, args, args.out))
    text = table(rows, args)
    print(text)
    if args.md:
        args.md.write_text(text + "\n")


if __name__ == "__main__":
    main()
