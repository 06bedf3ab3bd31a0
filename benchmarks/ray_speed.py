"""Ray's speed on this machine: tournament games/s on Ray against the local run, and RLlib's sampling against SB3's.

    python benchmarks/ray_speed.py                       # both tables (about 5 minutes on 2 cores)
    python benchmarks/ray_speed.py --games 400 --iterations 6 --sb3-steps 100000

Needs the [ray] extra, and the [train] extra for the SB3 line (sb3-contrib). The tournament plays heuristic
against random in 2-player games with the same seed everywhere (the tables must agree; the script checks it).
The training table, in one run: the SB3 stack's learner steps/s (``training_speed.training_rate``: quick.yaml's
batched stack in 2-player games, PPO updates included), then ``configs/rllib_quick.yaml`` (2-player games) with
the driver sampling, 1 and 2 env runners on a local 2-CPU instance, and 2 env runners on a two-node cluster
started on this machine (two one-CPU nodes on 127.0.0.1, as tests/ray do). RLlib's env steps are main's own
moves, as SB3's learner steps are. Per line: env steps/s of each env runner while it samples (timed inside the
runner, all runners at once), and the env steps/s of whole iterations (sampling and PPO updates), both after one
warm-up iteration (which builds the runners and compiles).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import numpy as np
import yaml
from tqdm import tqdm

from packetrow_train.config import resolve_config
from packetrow_arena.ray_cluster import ray_session
from packetrow_train.rllib_selfplay import build_algorithm, config_from_dict
from packetrow_arena.tournament import positive_int as positive
from packetrow_arena.tournament import run_tournament


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


def rllib_rates(runners: int, iterations: int) -> tuple[float, float]:
    """(env steps/s per env runner while sampling, env steps/s of whole iterations) of the quick RLlib config
    with ``runners`` env runners (0: the driver samples), on the Ray session already started."""
    data = yaml.safe_load(resolve_config("rllib_quick").read_text())
    data["runners"]["num_env_runners"] = runners
    config = config_from_dict(data, "rllib_quick")
    algorithm, _ = build_algorithm(config)
    try:
        algorithm.train()  # warm-up: actors, compiling, the first weights sync
        started, steps = time.perf_counter(), 0
        for _ in range(iterations):
            steps += int(algorithm.train()["env_runners"]["num_env_steps_sampled"])
        whole = steps / (time.perf_counter() - started)
        # each runner samples an iteration's share, timed inside the runner (RLlib's own timers are smoothed
        # from the first, compiling iteration on)
        share = config.ppo.train_batch_size // max(runners, 1)
        timed = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: _timed_sample(runner, share * iterations), local_env_runner=runners == 0)
        return float(np.mean([count / seconds for count, seconds in timed])), whole
    finally:
        algorithm.stop()


def _timed_sample(runner, steps: int) -> tuple[int, float]:
    """(env steps, seconds) of one runner sampling ``steps`` env steps."""
    started = time.perf_counter()
    episodes = runner.sample(num_timesteps=steps)
    return sum(len(episode) for episode in episodes), time.perf_counter() - started


def two_node_cluster_rates(iterations: int) -> tuple[float, float]:
    """``rllib_rates`` with 2 env runners on a two-node cluster (two one-CPU nodes on 127.0.0.1)."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        with ray_session(cluster.address):
            if len([node for node in ray.nodes() if node["Alive"]]) != 2:
                raise SystemExit("the two-node cluster did not start both nodes")
            return rllib_rates(2, iterations)
    finally:
        cluster.shutdown()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=positive, default=200, help="tournament games per line (default 200)")
    parser.add_argument("--iterations", type=positive, default=4,
                        help="timed RLlib iterations per line, after one warm-up (default 4)")
    parser.add_argument("--sb3-steps", type=positive, default=100_000,
                        help="learner steps of the SB3 line (default 100000)")
    parser.add_argument("--skip-tournament", action="store_true", help="only the training table")
    args = parser.parse_args(argv)
    import ray
    import torch

    from training_speed import training_rate  # a sibling script: the SB3 stack's own measurement

    print(f"{datetime.date.today()}, {platform.machine()} with {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, Ray {ray.__version__}, torch {torch.__version__}, numpy {np.__version__}")
    if not args.skip_tournament:
        with ray_session(num_cpus=2):
            print("\n| tournament (2p, heuristic vs random) | games/s |\n|---|---:|")
            for how, rate in tournament_rows(args.games):
                print(f"| {how} | {rate:.1f} |", flush=True)
    lines = ["SB3 stack", "RLlib, the driver samples", "RLlib, 1 env runner", "RLlib, 2 env runners",
             "RLlib, 2 env runners on a two-node cluster"]
    rates = {}
    with tqdm(total=len(lines), desc="training lines") as bar:
        training_rate({"random": 1.0}, 2048, "batched", [2])  # warm-up: compiling, torch's start
        sb3 = training_rate(None, args.sb3_steps, "batched", [2])
        bar.update()
        with ray_session(num_cpus=2):
            for runners, line in zip((0, 1, 2), lines[1:4]):
                rates[line] = rllib_rates(runners, args.iterations)
                bar.update()
        rates[lines[4]] = two_node_cluster_rates(args.iterations)
        bar.update()
    print(f"\n| 2-player games | env steps/s per env runner, sampling | env steps/s, whole run | per runner / SB3 |\n"
          f"|---|---:|---:|---:|\n| SB3 stack (quick.yaml, batched), learner steps/s | | {sb3:,.0f} | |")
    for line, (per_runner, whole) in rates.items():
        print(f"| {line} | {per_runner:,.0f} | {whole:,.0f} | {per_runner / sb3:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
