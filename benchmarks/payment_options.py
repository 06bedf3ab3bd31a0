"""How many payment options shipments have (R-SHIP-7), in random, heuristic and learned play.

This is the measurement behind ``actions.MAX_PAYMENT_OPTIONS`` (K), the options on one page: a shipment with
more than K options shows the rest on further pages (action ``more``), so K is chosen so that a second page
is very rare. Every ``ship`` action played is counted with all its options. Player counts cycle through 2-5; each game is played by one kind
of agent in every seat: ``random`` (uniform over legal actions), ``heuristic`` (the rule-based baseline)
and ``ppo`` (the shipped learned policy). Prints Markdown tables for the README, with the date.

    python benchmarks/payment_options.py                     # a few minutes
    python benchmarks/payment_options.py --games 40 --play random,heuristic
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections import Counter

import numpy as np

from packetrow_env import actions, payment
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView

PLAYS = ("random", "heuristic", "ppo")
BUCKETS = ((1, 1), (2, 2), (3, 3), (4, 4), (5, 6), (7, 8), (9, 12), (13, 16), (17, None))
CUTS = (4, 6, 8, 10, 12, 16)


def _agents(play: str, num_players: int, seed: int):
    """One agent per seat, or None for uniform random play."""
    if play == "random":
        return None
    if play == "heuristic":
        from packetrow_agents.heuristic import HeuristicAgent
        return [HeuristicAgent(seed=seed + p) for p in range(num_players)]
    from packetrow_agents.policy import PolicyAgent
    return [PolicyAgent.load(seed=seed + p) for p in range(num_players)]


def count_options(play: str, games: int, seed: int) -> tuple[Counter, int]:
    """Options per shipment over ``games`` games of ``play``; also the number of steps played."""
    counts = Counter()
    steps = 0
    rng = np.random.default_rng([seed, PLAYS.index(play)])
    for g in range(games):
        num_players = 2 + g % 4
        game = Game.new(num_players, seed=seed * 1_000_003 + g, random_start=True)
        agents = _agents(play, num_players, seed + 7 * g)
        while not game.is_over:
            mask = game.legal_action_mask()
            p = game.current_player
            if agents is None:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
            else:
                action = int(agents[p].act(SeatView(game, p)))
            if action == actions.SHIP:
                options = payment.payment_options(game.cards, game.hand(p) + game.ships(p), game.state.pending)
                counts[len(options)] += 1
            game.step(action)
            steps += 1
    return counts, steps


def _bucket(low: int, high: int | None) -> str:
    return f"{low}+" if high is None else (str(low) if low == high else f"{low}-{high}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400, help="games per kind of play (default 400)")
    parser.add_argument("--play", default=",".join(PLAYS), help=f"comma-separated, from {', '.join(PLAYS)}")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    plays = [p.strip() for p in args.play.split(",") if p.strip()]
    unknown = [p for p in plays if p not in PLAYS]
    if unknown or not plays:
        parser.error(f"--play takes {', '.join(PLAYS)}, got {args.play!r}")
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    results = {play: count_options(play, args.games, args.seed) for play in plays}

    print(f"Payment options per shipment, {datetime.date.today().isoformat()}: {args.games} games per kind of "
          f"play (2-5 players in turn), seed {args.seed}; K = actions.MAX_PAYMENT_OPTIONS = "
          f"{actions.MAX_PAYMENT_OPTIONS}.")
    print()
    print("| play | shipments | " + " | ".join(_bucket(lo, hi) for lo, hi in BUCKETS) + " | max | mean |")
    print("|---|---:|" + "---:|" * len(BUCKETS) + "---:|---:|")
    for play, (counts, _) in results.items():
        total = sum(counts.values())
        shares = []
        for low, high in BUCKETS:
            n = sum(v for k, v in counts.items() if k >= low and (high is None or k <= high))
            shares.append(f"{100 * n / total:.1f}%" if total else "-")
        mean = sum(k * v for k, v in counts.items()) / total if total else 0.0
        print(f"| {play} | {total} | " + " | ".join(shares) + f" | {max(counts, default=0)} | {mean:.2f} |")
    print()
    print("Share of shipments with a second page (more options than K), by K:")
    print()
    print("| play | " + " | ".join(f"K = {k}" for k in CUTS) + " |")
    print("|---|" + "---:|" * len(CUTS))
    for play, (counts, _) in results.items():
        total = sum(counts.values())
        cells = []
        for k in CUTS:
            cut = sum(v for n, v in counts.items() if n > k)
            cells.append(f"{cut} ({100 * cut / total:.2f}%)" if total else "-")
        print(f"| {play} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
