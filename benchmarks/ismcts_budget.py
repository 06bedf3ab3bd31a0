"""How much work ISMCTS (iterations) or the search agent (rollouts) does per move at a time budget: the work budget
that stands for it.

A time budget makes a search weaker whenever the machine is busy; a work budget plays the same moves however
loaded the machine is. This plays games of the searcher (``seconds`` a move; 2 players unless ``--players``)
against heuristics and prints its work per move (mean and quartiles over the moves where it had a choice), so
that tournaments can use ``ismcts:iters=N,rollout=random`` or ``search:rollouts=N`` for "S seconds a move on this
machine". Measure on a quiet machine, both searchers in one run when they are to be compared.

    python benchmarks/ismcts_budget.py --seconds 1 --moves 40 --agents ismcts search
    python benchmarks/ismcts_budget.py --agents search ismcts --search-options opponents=models/ismcts_imitation.npz
    python benchmarks/ismcts_budget.py --agents search --players 4 --search-options opponents=heuristic
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform

import numpy as np
from tqdm import tqdm

import packetrow_env
from packetrow_agents import HeuristicAgent
from packetrow_agents.registry import make_agent
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from packetrow_arena.tournament import positive_int as positive

WORK = {"ismcts": ("last_iterations", "iterations"), "search": ("last_rollouts", "rollouts")}  # a decision's work


def work_per_move(spec: str, moves: int, seed: int = 0, players: int = 2) -> list[int]:
    """The work of each search (moves with a choice) in ``players``-player games against heuristics."""
    agent, heuristic = make_agent(spec, seed), HeuristicAgent(seed)
    attribute = WORK[spec.split(":")[0]][0]
    counts: list[int] = []
    game = None
    with tqdm(total=moves, desc=spec.split(":")[0] + " moves") as bar:
        while len(counts) < moves:
            if game is None or game.is_over:
                game, seat = Game.new(players, seed=seed + len(counts)), len(counts) % players
            view = SeatView(game, game.current_player)
            if game.current_player == seat and int(game.legal_action_mask().sum()) > 1:
                game.step(agent.act(view))
                counts.append(getattr(agent, attribute))
                bar.update()
            else:
                game.step(heuristic.act(view))
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time budget per move (default 1)")
    parser.add_argument("--agents", nargs="+", default=["ismcts"], choices=sorted(WORK),
                        help="searchers to time, one after the other (default ismcts)")
    parser.add_argument("--rollout", default="random", choices=("random", "heuristic"),
                        help="ISMCTS rollouts (default random)")
    parser.add_argument("--moves", type=positive, default=40, help="moves to time per searcher (default 40)")
    parser.add_argument("--players", type=int, default=2, choices=range(2, 6), metavar="{2..5}",
                        help="players a game, the searcher and heuristics (default 2)")
    parser.add_argument("--search-options", default="", metavar="OPTIONS",
                        help="more options of the search agent, e.g. opponents=models/ismcts_imitation.npz "
                             "(default none)")
    args = parser.parse_args(argv)
    if not 0 < args.seconds < 600:
        parser.error(f"--seconds must be between 0 and 600, got {args.seconds}")
    for name in args.agents:
        more = args.search_options if name == "search" else f"rollout={args.rollout}"
        spec = f"{name}:seconds={args.seconds}" + (f",{more}" if more else "")
        counts = np.array(work_per_move(spec, args.moves, players=args.players))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"{datetime.datetime.now():%Y-%m-%d %H:%M}: packetrow {packetrow_env.__version__}, Python "
              f"{platform.python_version()}, {os.cpu_count()} cores, load average {load:.2f}; {spec}, {len(counts)} "
              f"moves of {args.players}-player games against heuristics")
        quartiles = np.percentile(counts, [25, 50, 75])
        print(f"{WORK[name][1]} per move: mean {counts.mean():.0f}, quartiles {quartiles[0]:.0f} / "
              f"{quartiles[1]:.0f} / {quartiles[2]:.0f}, min {counts.min()}, max {counts.max()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
