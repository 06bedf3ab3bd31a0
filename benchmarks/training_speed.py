"""Self-play training throughput: learner steps per second of MaskablePPO against each kind of opponent.

Each line is a short ``train()`` run of ``configs/quick.yaml`` with evaluations, checkpoints and logs
off, against one opponent mixture (snapshot opponents run in numpy, as in real training), on one of two
stacks: ``batched`` (quick.yaml's own: one VectorGame, the compact observation, opponents moved batched)
or ``dummy`` (the one-game-per-env stack before it: SB3's DummyVecEnv of single-agent envs, the one-hot
observation, 8 envs). The time is the whole run's wall time, setup and PPO updates included, so it is
what a training run sees. Then the cost of one opponent move (observation included) for a snapshot
policy and the heuristic. Prints Markdown tables for the README.

    python benchmarks/training_speed.py                    # about 5 minutes on 2 cores
    python benchmarks/training_speed.py --steps 50000 --stacks batched --threads 1 2
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from tqdm import tqdm

from packetrow_agents import HeuristicAgent
from packetrow_agents.policy import PolicyAgent
from engine_speed import mid_game_positions
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from packetrow_train.config import config_from_dict
from packetrow_train.selfplay import train
from packetrow_arena.tournament import positive_int as positive

QUICK = Path(__file__).resolve().parent.parent / "configs" / "quick.yaml"
MIXTURES = {
    "quick.yaml mixture": None,  # the config's own
    "snapshots only": {"latest": 0.5, "recent": 0.5},
    "heuristic only": {"heuristic": 1.0},
    "random only": {"random": 1.0},
}


STACKS = ("batched", "dummy")


def training_rate(mixture: dict | None, steps: int, stack: str, num_players: list[int], threads: int = 1,
                  update_threads: int | None = None, pipeline: bool | None = None) -> float:
    """Learner steps per second of a short training run against ``mixture`` on ``stack`` (``pipeline``: each
    update beside the next rollout, None: quick.yaml's; ``update_threads``: a sequential run's update threads,
    None: quick.yaml's)."""
    data = yaml.safe_load(QUICK.read_text())
    data.update(total_timesteps=steps, torch_threads=threads)
    if pipeline is not None:
        data["pipeline"] = pipeline
    if update_threads is not None and not data["pipeline"]:
        data["update_threads"] = update_threads
    data["env"]["num_players"] = num_players
    if stack == "dummy":  # one-hot observations: quick.yaml's extractor layer becomes the MLP's first layer
        ppo = data["ppo"]
        ppo["net_arch"] = [ppo["extractor_layer"]] * bool(ppo["extractor_layer"]) + ppo["net_arch"]
        ppo.update(extractor_layer=0, share_extractor=True)
        data["env"].update(vec_env="dummy", observation_encoding="onehot", n_envs=8)
        data["pipeline"] = False
    envs = data["env"]["n_envs"]
    if mixture is not None:
        data["pool"]["mixture"] = mixture
    data["ppo"]["batch_size"] = min(data["ppo"]["batch_size"], data["ppo"]["n_steps"] * envs)
    data["eval"].update(every=0, final_games=0)
    data["checkpoint"]["every"] = 0
    data["log"].update(tensorboard=False, progress_bar=False)
    with tempfile.TemporaryDirectory() as out:
        result = train(config_from_dict(data, "benchmark"), out=out, progress_bar=False)
    return result.model.num_timesteps / result.wall_seconds


def move_cost_ms(agent, positions: list[Game]) -> float:
    """Mean milliseconds for ``agent`` to encode the acting seat's observation and pick a move."""
    start = time.perf_counter()
    for game in positions:
        agent.act(SeatView(game, game.current_player))  # its observation is encoded when the agent reads it
    return 1000 * (time.perf_counter() - start) / len(positions)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=positive, default=50_000, help="learner steps per run (default 50000)")
    parser.add_argument("--stacks", nargs="+", default=list(STACKS), choices=list(STACKS),
                        help="training stacks to measure (default: batched dummy)")
    parser.add_argument("--threads", type=positive, nargs="+", default=[1],
                        help="torch threads during rollouts (default 1)")
    parser.add_argument("--update-threads", type=positive, nargs="+", default=[2],
                        help="torch threads during the updates of runs without the pipeline (default 2)")
    parser.add_argument("--pipeline", nargs="+", default=["on"], choices=["on", "off"],
                        help="each update beside the next rollout (quick.yaml's: on), or rollouts and updates in turn "
                             "(off: one line per --update-threads; the dummy stack always); default on")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5], choices=range(2, 6),
                        help="player counts drawn per episode (default 2 3 4 5)")
    args = parser.parse_args(argv)
    print(f"{datetime.date.today()}: Python {platform.python_version()}, numpy {np.__version__}, torch "
          f"{torch.__version__}, {os.cpu_count()} cores; {args.steps} learner steps per run, players {args.players}\n")
    for stack in args.stacks:  # warm-up: first imports, compilation and torch initialisation are not measured
        training_rate({"random": 1.0}, 2048, stack, [2])
    print("| opponents | stack | torch threads (rollouts / updates) | learner steps/s |\n|---|---|---:|---:|")
    sequential = [(False, n) for n in args.update_threads]
    modes = {"batched": [(True, None)] * ("on" in args.pipeline) + sequential * ("off" in args.pipeline),
             "dummy": sequential}  # the pipeline needs the batched stack
    runs = [(name, stack, threads, mode) for name in MIXTURES for stack in args.stacks for threads in args.threads
            for mode in modes[stack]]
    for name, stack, threads, (pipeline, update) in tqdm(runs, desc="training runs"):
        rate = training_rate(MIXTURES[name], args.steps, stack, args.players, threads, update, pipeline)
        how = f"{threads} / {threads}, pipelined" if pipeline else f"{threads} / {update}"
        print(f"| {name} | {stack} | {how} | {rate:,.0f} |", flush=True)

    positions = mid_game_positions(4, seed=0, count=2000)
    agents = {"numpy snapshot (shipped model, sampling)": PolicyAgent.load(deterministic=False),
              "heuristic": HeuristicAgent(seed=0)}
    print("\n| opponent | ms per move (observation included) |\n|---|---:|")
    for name, agent in agents.items():
        print(f"| {name} | {move_cost_ms(agent, positions):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
