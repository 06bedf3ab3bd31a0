"""OpenSpiel's Python ISMCTS against the project's agents: 2-player seat-rotated matches with 95% intervals.

    python benchmarks/openspiel_ismcts.py --simulations 5 --games 100 --opponents heuristic,ppo
    python benchmarks/openspiel_ismcts.py --simulations 5,10 --time 4    # seconds a game, no records

ISMCTS is ``packetrow_agents.openspiel_bot.ISMCTSBot`` (OpenSpiel's bot, random rollouts to the end of the game,
UCT c = 2) seated in the project's tournament through ``OpenSpielAgent``: it acts on a world dealt from the seat's
view, never the true game. Each match is a ``packetrow tournament --out`` directory under ``--out`` (one per
opponent, its ``records.jsonl`` written a game at a time, so ``--resume`` plays only the games still missing).
The budget is work (simulations a move), so the games are the same on any machine; the time they take is not:
``--time`` measures it first (CPU time, which a shared machine does not inflate), to size a run.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from importlib.metadata import version
from pathlib import Path

from packetrow_agents.openspiel_bot import ismcts_agent
from packetrow_arena.tournament import play_game, run_tournament

OUT = Path(__file__).parent / "records" / "openspiel_ismcts"
SEEDS = {"heuristic": 6000, "ppo": 7000}  # each opponent's match has its own deals; others start at 8000


def seconds_a_game(simulations: int, opponent: str, games: int) -> float:
    """The mean CPU time of ``games`` games of ISMCTS against ``opponent``, seats alternating (CPU, not wall: the
    machine may be shared)."""
    from packetrow_agents import make_agent

    started = time.process_time()
    for g in range(games):
        agents = [ismcts_agent(simulations, seed=g), make_agent(opponent, g)]
        play_game(agents[::-1] if g % 2 else agents, deal_seed=g)
    return (time.process_time() - started) / games


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--simulations", default="5", help="ISMCTS simulations a move, comma-separated (default 5)")
    parser.add_argument("--opponents", default="heuristic,ppo", help="agent specs, one match each (default "
                                                                    "heuristic,ppo)")
    parser.add_argument("--games", type=int, default=100, help="games a match (default 100)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"records directory (default {OUT})")
    parser.add_argument("--resume", action="store_true", help="keep the games recorded in --out, play the others")
    parser.add_argument("--time", type=int, metavar="GAMES", help="only measure seconds a game over GAMES games")
    args = parser.parse_args(argv)
    budgets = [int(s) for s in args.simulations.split(",")]
    opponents = [s.strip() for s in args.opponents.split(",")]
    print(f"{datetime.date.today()}, packetrow {version('packetrow')}, open_spiel {version('open_spiel')}, Python "
          f"{platform.python_version()}, {platform.machine()} with {os.cpu_count()} cores, one process\n")
    if args.time:
        print("| simulations a move | opponent | CPU seconds a game |\n|---:|---|---:|")
        for simulations in budgets:
            for opponent in opponents:
                print(f"| {simulations} | `{opponent}` | {seconds_a_game(simulations, opponent, args.time):.1f} |",
                      flush=True)
        return 0
    print("| simulations a move | opponent | games | ISMCTS's wins [95% CI] | mean VP, ISMCTS / opponent | CPU time |\n"
          "|---:|---|---:|---|---|---:|")
    for simulations in budgets:
        for opponent in opponents:
            started = time.process_time()
            seed = SEEDS.get(opponent, 8000)
            result = run_tournament([lambda s: ismcts_agent(simulations, seed=s), opponent], num_players=2,
                                    games=args.games, seed=seed, out=args.out / f"{simulations}_vs_{opponent}",
                                    resume=args.resume, chunk_size=1)
            ours, theirs = result.table
            print(f"| {simulations} | `{opponent}` | {ours['games']} | {ours['wins']:g}, "
                  f"{100 * ours['win_rate']:.1f}% [{100 * ours['win_low']:.1f}, {100 * ours['win_high']:.1f}] | "
                  f"{ours['mean_vp']:.2f} / {theirs['mean_vp']:.2f} | {(time.process_time() - started) / 60:.1f} min |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
