"""Time to strength: wall time and learner steps until a training run's agent passes win-rate targets.

Each config trains from scratch with a seat-rotated evaluation against the heuristic every
``--eval-every`` learner steps (``--games`` games per player count; in 4-player games one agent sits
against three heuristics) and stops once every target is passed, or at ``--max-steps``. The time is the
run's training wall time up to that evaluation (eval.csv's ``train_seconds``: setup, rollouts and PPO
updates, evaluations left out). Default: the old stack (``configs/ppo_packetrow_v0.yaml``: one game per
env, one-hot observations) against the new one (``configs/ppo_packetrow.yaml``: one VectorGame, the
compact observation), with the training issue's targets (90% in 2-player games, 65% in 4-player games).
Prints a Markdown table for the README.

    python benchmarks/time_to_strength.py                                  # hours: both stacks
    python benchmarks/time_to_strength.py --configs quick --max-steps 2000000 --eval-every 100000
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile

import numpy as np

from packetrow_train.config import TrainConfig, load_config
from packetrow_train.selfplay import train
from packetrow_arena.tournament import positive_int as positive


def target(text: str) -> tuple[int, float]:
    """'4:0.65' -> (4, 0.65): a player count and the win rate to pass."""
    try:
        players, rate = text.split(":")
        players, rate = int(players), float(rate)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a target is PLAYERS:WIN_RATE, e.g. 2:0.9, got {text!r}") from None
    if players not in range(2, 6) or not 0 < rate <= 1:
        raise argparse.ArgumentTypeError(f"a target needs 2-5 players and a win rate in (0, 1], got {text!r}")
    return players, rate


def benchmark_config(config: TrainConfig, max_steps: int, eval_every: int, games: int, players: list[int]
                     ) -> TrainConfig:
    """``config`` set up for the measurement: evaluations against the heuristic only, nothing else written."""
    config.total_timesteps = max_steps
    config.eval.every, config.eval.games, config.eval.final_games = eval_every, games, 0
    config.eval.num_players, config.eval.opponents = players, ["heuristic"]
    config.checkpoint.every = 0
    config.log.tensorboard, config.log.progress_bar = False, True  # each evaluation is printed as it ends
    return config


def time_to_targets(config: TrainConfig, targets: dict[int, float]) -> dict:
    """Train ``config`` until every target is passed; per player count (steps, seconds) of the first pass."""
    passed: dict[int, tuple[int, float]] = {}
    evaluations = []

    def stop(rows) -> bool:
        evaluations.append(rows)
        for row in rows:
            n = row["num_players"]
            if n in targets and n not in passed and row["win_rate"] >= targets[n]:
                passed[n] = (row["timesteps"], row["train_seconds"])
        return len(passed) == len(targets)

    with tempfile.TemporaryDirectory() as out:
        result = train(config, out=out, stop=stop)
    return {"passed": passed, "steps": result.model.num_timesteps, "last": evaluations[-1] if evaluations else []}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", default=["ppo_packetrow_v0", "ppo_packetrow"], metavar="CONFIG",
                        help="training configs (shipped names or YAML paths; default: ppo_packetrow_v0 ppo_packetrow)")
    parser.add_argument("--targets", nargs="+", type=target, default=[(2, 0.9), (4, 0.65)], metavar="N:RATE",
                        help="win rates against the heuristic to pass (default 2:0.9 4:0.65)")
    parser.add_argument("--max-steps", type=positive, default=5_000_000, help="learner steps at most (default 5M)")
    parser.add_argument("--eval-every", type=positive, default=100_000, help="learner steps between evaluations "
                        "(default 100000)")
    parser.add_argument("--games", type=positive, default=200, help="games per evaluation and player count "
                        "(default 200)")
    args = parser.parse_args(argv)
    targets = dict(args.targets)
    print(f"{datetime.date.today()}: Python {platform.python_version()}, numpy {np.__version__}, "
          f"{os.cpu_count()} cores; evaluations every {args.eval_every:,} learner steps, {args.games} games each "
          f"against the heuristic; at most {args.max_steps:,} steps\n")
    header = " | ".join(f"{n} players >= {100 * rate:.0f}%" for n, rate in targets.items())
    print(f"| config | stack | {header} | learner steps/s |\n|---|---|" + "---:|" * (len(targets) + 1))
    for name in args.configs:
        config = benchmark_config(load_config(name), args.max_steps, args.eval_every, args.games, sorted(targets))
        found = time_to_targets(config, targets)
        cells = []
        for n in targets:
            if n in found["passed"]:
                steps, seconds = found["passed"][n]
                cells.append(f"{steps:,.0f} steps, {seconds / 60:.1f} min")
            else:
                cells.append(f"not within {found['steps']:,} steps")
        last = found["last"]
        rate = last[0]["timesteps"] / last[0]["train_seconds"] if last else float("nan")
        stack = f"{config.env.vec_env}, {config.env.observation_encoding}"
        print(f"| {config.name} | {stack} | {' | '.join(cells)} | {rate:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
