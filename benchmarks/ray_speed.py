"""Ray's speed on this machine: tournament games/s on Ray against the local run, and RLlib training throughput.

    python benchmarks/ray_speed.py                  # both tables (a few minutes)
    python benchmarks/ray_speed.py --games 400 --iterations 4

Needs the [ray] extra. The tournament plays heuristic against random in 2-player games with the same seed
everywhere (the tables must agree; the script checks it). RLlib's figure is env steps of all seats per
second over the iterations after the first (which builds the runners and compiles), with the quick
config's network and batch, for 1 and 2 env runners; main's own steps are 1/n of them in n-player games.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import time

from packetrow_train.ray_cluster import ray_session
from packetrow_train.rllib_selfplay import build_algorithm, config_from_dict
from packetrow_train.config import resolve_config
from packetrow_train.tournament import run_tournament


def tournament_rows(games: int) -> list[tuple[str, float]]:
    """(how, games/s) for the local run with 1 and 2 workers and the Ray run on a local 2-CPU instance."""
    specs = ["heuristic", "random"]
    rows, tables = [], []
    for how, kwargs in [("local, 1 worker", {"workers": 1}), ("local, 2 workers", {"workers": 2}),
                        ("Ray, local 2-CPU instance", {"ray": True})]:
        started = time.perf_counter()
        result = run_tournament(specs, num_players=2, games=games, seed=0, progress=False, **kwargs)
        rows.append((how, games / (time.perf_counter() - started)))
        tables.append(result.format_table())
    if len(set(tables)) != 1:
        raise SystemExit("the Ray tournament's table differs from the local one")
    return rows


def rllib_rows(iterations: int) -> list[tuple[int, float]]:
    """(env runners, env steps/s) of the quick RLlib config."""
    import yaml

    data = yaml.safe_load(resolve_config("rllib_quick").read_text())
    rows = []
    for runners in (1, 2):
        data["runners"]["num_env_runners"] = runners
        config = config_from_dict(data, "rllib_quick")
        algorithm, _ = build_algorithm(config)
        try:
            algorithm.train()  # warm-up: actors, first weights sync
            started, steps = time.perf_counter(), 0
            for _ in range(iterations):
                result = algorithm.train()
                steps += int(result["env_runners"]["num_env_steps_sampled"])
            rows.append((runners, steps / (time.perf_counter() - started)))
        finally:
            algorithm.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="tournament games per line (default 200)")
    parser.add_argument("--iterations", type=int, default=3, help="timed RLlib iterations per line (default 3)")
    args = parser.parse_args()
    import ray

    print(f"{datetime.date.today()}, {platform.machine()} with {__import__('os').cpu_count()} CPUs, "
          f"Python {platform.python_version()}, Ray {ray.__version__}")
    with ray_session(num_cpus=2):
        print("\n| tournament (2p, heuristic vs random) | games/s |\n|---|---:|")
        for how, rate in tournament_rows(args.games):
            print(f"| {how} | {rate:.1f} |")
        print("\n| RLlib PPO, configs/rllib_quick.yaml | env steps/s (all seats) |\n|---|---:|")
        for runners, rate in rllib_rows(args.iterations):
            print(f"| {runners} env runner{'s' if runners > 1 else ''} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
