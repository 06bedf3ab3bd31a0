"""The final fulfilment (R-SCORE-1) on the worst hands a saved game can hold: the time of a loaded game's last step.

Each position is a real game played at random to one step before its end; then every contract the player may
hold (all guild contracts, his own starting contract) and a chosen set of shipment cards are moved into one
seat's hand and ship row from wherever the rules let a saved game hold them (decks, discard piles, other
hands; supplies are left as they are). ``Game.from_dict`` validates the position, and the last step (which
scores every player, R-SCORE-1) is timed. A second table times ``shipping.best_fulfilment`` alone on random
hands of many contracts, and on the largest hands the subset search still handles (``shipping._SMALL``).
Times are CPU times of the process (``time.process_time``): on a shared machine the wall time adds what
other processes take.

    python benchmarks/best_fulfilment.py            # about a minute
    python benchmarks/best_fulfilment.py --random 200
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time

import numpy as np

from packetrow_env import cards, shipping
from packetrow_env.engine import Game

SHIPMENT = (cards.SHIP, cards.CAPTAIN, cards.GOLD, cards.GOODS_KIND, cards.TRADER)


def resource_sets(cat) -> dict[str, list[int]]:
    """Named sets of shipment cards to give the seat (the hardest mixes found while writing the search)."""
    def of(*kinds):
        return [int(c) for c in np.flatnonzero(np.isin(cat.kind, kinds))]
    every = of(*SHIPMENT)
    goods = of(cards.GOODS_KIND)
    return {
        "every shipment card": every,
        "every card but gold": [c for c in every if cat.kind[c] != cards.GOLD],
        "half the goods, all gold and traders, 3 ships": goods[::2] + of(cards.GOLD, cards.TRADER, cards.CAPTAIN)
        + of(cards.SHIP)[:3],
        "two goods only, gold, traders, ships": [c for c in goods if cat.good[c] < 2]
        + of(cards.GOLD, cards.TRADER, cards.SHIP, cards.CAPTAIN),
    }


def last_step_position(num_players: int, seed: int, resources: list[int]) -> tuple[dict, int]:
    """A saved game one step before its end, with seat 0 holding every contract he may and `resources`."""
    game = Game.new(num_players, seed=seed)
    rng = np.random.default_rng(seed)
    while True:
        action = int(rng.choice(game.legal_actions()))
        after = game.clone()
        after.step(action)
        if after.is_over:
            break
        game.step(action)
    d = game.to_dict()
    cat = game.cards
    seat = d["players"][0]
    wanted = [c for c in np.flatnonzero(cat.kind == cards.CONTRACT).tolist() if cat.board[c] != cards.START]
    wanted += [seat["starting_contract"]] + resources
    for c in wanted:
        piles = [board[key] for board in d["boards"] for key in ("deck", "discard")] + [d["removed"]]
        piles += [row[key] for row in d["players"][1:] for key in ("hand", "ships")]
        for pile in piles:
            if c in pile:
                pile.remove(c)
                (seat["ships"] if cat.kind[c] == cards.SHIP else seat["hand"]).append(c)
    seat["hand"].sort()
    seat["ships"].sort()
    return d, action


def time_last_step(d: dict, action: int) -> tuple[float, int, int]:
    """CPU seconds of the last step of a loaded game; contracts in seat 0's hand; contracts he fulfilled."""
    game = Game.from_dict(d)
    contracts = sum(1 for c in game.hand(0) if game.cards.kind[c] == cards.CONTRACT)
    start = time.process_time()  # CPU time: the step's own cost, whatever else the machine runs
    game.step(action)
    elapsed = time.process_time() - start
    assert game.is_over
    left = sum(1 for c in game.hand(0) if game.cards.kind[c] == cards.CONTRACT)
    return elapsed, contracts, contracts - left


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=100, help="random many-contract hands to time (default 100)")
    parser.add_argument("--seeds", type=int, default=3, help="games per player count for the loaded positions")
    args = parser.parse_args(argv)
    cat = cards.load()
    print(f"Python {sys.version.split()[0]}, numpy {np.__version__}, {platform.machine()}\n")

    print("| players | seat 0 holds | contracts in hand | fulfilled | last step (CPU ms), worst of seeds |")
    print("|---:|---|---:|---:|---:|")
    worst = 0.0
    for n in (2, 3, 4, 5):
        for name, resources in resource_sets(cat).items():
            times, held, done = [], 0, 0
            for seed in range(args.seeds):
                d, action = last_step_position(n, seed, resources)
                try:
                    elapsed, held, done = time_last_step(d, action)
                except ValueError as error:  # a position the validation refuses is not a valid position
                    print(f"(seed {seed}: refused: {error})", file=sys.stderr)
                    continue
                times.append(elapsed)
            if times:
                worst = max(worst, max(times))
                print(f"| {n} | {name} | {held} | {done} | {max(times) * 1000:.0f} |")
    print(f"\nworst last step: {worst * 1000:.0f} ms of CPU time\n")

    rng = random.Random(0)
    contracts = np.flatnonzero(cat.kind == cards.CONTRACT).tolist()
    guild = [c for c in contracts if cat.board[c] != cards.START]
    pool = np.flatnonzero(np.isin(cat.kind, SHIPMENT)).tolist()
    print("| best_fulfilment on | hands | mean CPU ms | worst CPU ms |")
    print("|---|---:|---:|---:|")
    for label, sizes in ((f"{shipping._SMALL} contracts (subset search), rich hands", (shipping._SMALL, shipping._SMALL)),
                         (f"{shipping._SMALL + 1}-25 contracts (search over units)", (shipping._SMALL + 1, 25))):
        times = []
        for _ in range(args.random):
            con = rng.sample(guild, min(rng.randint(*sizes), len(guild) - 1)) + [contracts[-1]]
            hand = rng.sample(pool, rng.randint(len(pool) // 2, len(pool)))
            shipping._feasible.cache_clear()
            shipping._payment.cache_clear()
            shipping._goods_payment.cache_clear()
            start = time.process_time()
            shipping.best_fulfilment(cat, hand, con)
            times.append(time.process_time() - start)
        print(f"| {label} | {len(times)} | {np.mean(times) * 1000:.1f} | {max(times) * 1000:.1f} |")


if __name__ == "__main__":
    main()
