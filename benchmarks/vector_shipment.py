"""Per-call time of the compiled shipment kernels (packetrow_env/vector/shipment.py) against the Python reference
they answer for (shipping.py, payment.py, engine._cheapest_cover), and their first-call (compile) cost.

The queries are the ones a game asks: from random 4-player games, each distinct seat's hand and ships with
its contracts (``fulfillable``: engine._fulfillable_contracts; ``best_fulfilment``: R-SCORE-1 as if the game
ended there), every staged shipment when ``ship`` is played (``feasible``, ``payment_options``,
``cheapest_payment``), and each take that cashes money (``cheapest_cover``, R-TAKE-4). Kernels are timed
called from a compiled loop (as the batched engine calls them) and one by one from Python; the reference
with its caches cleared before every call (a new hand) and with them warm (the same hand asked again).
The compile cost is measured in fresh processes: once with an empty numba cache, once with it filled.
Prints a Markdown table with the date.

    python benchmarks/vector_shipment.py              # about a minute
    python benchmarks/vector_shipment.py --games 10
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from numba import njit

from packetrow_env import actions, cards, payment, shipping
from packetrow_env.engine import Game, _cheapest_cover
from packetrow_env.vector import shipment, tables
from packetrow_env.vector.batch import WORDS

K = actions.MAX_PAYMENT_OPTIONS


def collect(games: int, seed: int):
    """Queries from random play: hands (res, contracts), shipments (res, pending), covers (hand, shortfall)."""
    cat = cards.load()
    rng = np.random.default_rng(seed)
    hands, shipments, covers, seen = [], [], [], set()
    for g in range(games):
        game = Game.new(4, seed=seed * 1000 + g)
        while not game.is_over:
            p = game.current_player
            for q in range(4):
                res = game.hand(q) + game.ships(q)
                con = [c for c in game.hand(q) if cat.kind[c] == cards.CONTRACT]
                if con and game.ships(q) and tuple(res) not in seen:
                    seen.add(tuple(res))
                    hands.append((sorted(res), con))
            action = int(rng.choice(game.legal_actions()))
            if action == actions.SHIP:
                shipments.append((sorted(game.hand(p) + game.ships(p)), sorted(game.state.pending)))
            if actions.TAKE <= action < actions.PASS:
                board = game.state.current_board
                supply = game.state.future if action >= actions.TAKE_FUTURE else game.state.current
                slot = action - (actions.TAKE_FUTURE if action >= actions.TAKE_FUTURE else actions.TAKE)
                short = int(cat.cost[supply[board, slot]]) - int(game.state.cash[p])
                if short > 0:
                    covers.append((game.hand(p), short))
            game.step(action)
    return cat, hands, shipments, covers


def padded(rows):
    """Ragged int lists as (int64[Q, L] padded with -1, lengths)."""
    width = max(1, max(len(r) for r in rows))
    out = np.full((len(rows), width), -1, np.int64)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out, np.array([len(r) for r in rows], np.int64)


@njit
def loop_feasible(tab, res, nres, con, ncon):
    found = 0
    for i in range(res.shape[0]):
        found += shipment.feasible(tab, res[i, :nres[i]], con[i, :ncon[i]])
    return found


@njit
def loop_fulfillable(tab, res, nres, con, ncon):
    out = np.empty(con.shape[1], np.int64)
    found = 0
    for i in range(res.shape[0]):
        found += shipment.fulfillable(tab, res[i, :nres[i]], con[i, :ncon[i]], out)
    return found


@njit
def loop_options(tab, res, nres, con, ncon):
    out = np.empty((K, WORDS), np.int64)
    found = 0
    for i in range(res.shape[0]):
        found += shipment.payment_options(tab, res[i, :nres[i]], con[i, :ncon[i]], out, 0)
    return found


@njit
def loop_cheapest(tab, res, nres, con, ncon):
    out = np.empty(WORDS, np.int64)
    found = 0
    for i in range(res.shape[0]):
        found += shipment.cheapest_payment(tab, res[i, :nres[i]], con[i, :ncon[i]], out)
    return found


@njit
def loop_best(tab, res, nres, con, ncon):
    a = np.empty(WORDS, np.int64)
    b = np.empty(WORDS, np.int64)
    found = 0
    for i in range(res.shape[0]):
        found += shipment.best_fulfilment(tab, res[i, :nres[i]], con[i, :ncon[i]], a, b)
    return found


@njit
def loop_cover(tab, hand, nhand, short):
    out = np.empty(WORDS, np.int64)
    found = 0
    for i in range(hand.shape[0]):
        found += shipment.cheapest_cover(tab, hand[i, :nhand[i]], short[i], out)
    return found


def per_call(fn, count, repeat=3):
    """Best of `repeat` runs of fn(), in microseconds per query."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best / max(count, 1) * 1e6


def clear_reference():
    shipping._feasible.cache_clear()
    shipping._payment.cache_clear()
    shipping._goods_payment.cache_clear()
    shipping._goods_payment_by_units.cache_clear()
    payment._options.cache_clear()


def reference(calls, cold):
    """The reference over the queries, its caches cleared before each call when cold."""
    def run():
        for call in calls:
            if cold:
                clear_reference()
            call()
    return run


COMPILE = """
import time
import numpy as np
start = time.perf_counter()
from packetrow_env import cards
from packetrow_env.vector import shipment, tables
from packetrow_env.vector.batch import WORDS
tab = tables.table(cards.load())
imported = time.perf_counter()
res = np.array([40, 41, 56, 60, 80, 84, 100, 102], np.int64)
con = np.array([0, 1], np.int64)
times = {}
for name, call in (("feasible", lambda: shipment.feasible(tab, res, con)),
                   ("fulfillable", lambda: shipment.fulfillable(tab, res, con, np.empty(2, np.int64))),
                   ("payment_options", lambda: shipment.payment_options(tab, res, con, np.empty((12, WORDS), np.int64), 0)),
                   ("cheapest_payment", lambda: shipment.cheapest_payment(tab, res, con, np.empty(WORDS, np.int64))),
                   ("best_fulfilment", lambda: shipment.best_fulfilment(tab, res, con, np.empty(WORDS, np.int64),
                                                                        np.empty(WORDS, np.int64))),
                   ("cheapest_cover", lambda: shipment.cheapest_cover(tab, np.array([130, 131], np.int64), 3,
                                                                      np.empty(WORDS, np.int64)))):
    t = time.perf_counter()
    call()
    times[name] = time.perf_counter() - t
print(repr((imported - start, times)))
"""


def compile_cost():
    """(import seconds, {kernel: first-call seconds}) in a fresh process: with an empty cache, then a filled one."""
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, NUMBA_CACHE_DIR=folder)
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True, check=True)
            runs.append(eval(out.stdout.strip().splitlines()[-1]))
        return runs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    cat, hands, shipments, covers = collect(args.games, args.seed)
    tab = tables.table(cat)
    h_res, h_nres = padded([r for r, _ in hands])
    h_con, h_ncon = padded([c for _, c in hands])
    s_res, s_nres = padded([r for r, _ in shipments])
    s_con, s_ncon = padded([c for _, c in shipments])
    c_hand, c_nhand = padded([h for h, _ in covers])
    c_short = np.array([s for _, s in covers], np.int64)
    arrays = [(np.array(r, np.int64), np.array(c, np.int64)) for r, c in hands]
    ship_arrays = [(np.array(r, np.int64), np.array(c, np.int64)) for r, c in shipments]
    out_opts, out_bits, out_b = np.empty((K, WORDS), np.int64), np.empty(WORDS, np.int64), np.empty(WORDS, np.int64)
    out_con = np.empty(40, np.int64)

    rows = [
        ("feasible (a staged shipment)", len(shipments), lambda: loop_feasible(tab, s_res, s_nres, s_con, s_ncon),
         lambda: [shipment.feasible(tab, r, c) for r, c in ship_arrays],
         [lambda r=r, c=c: shipping.can_fulfil(cat, r, c) for r, c in shipments]),
        ("fulfillable (a hand's contracts)", len(hands), lambda: loop_fulfillable(tab, h_res, h_nres, h_con, h_ncon),
         lambda: [shipment.fulfillable(tab, r, c, out_con) for r, c in arrays],
         [lambda r=r, c=c: [x for x in c if shipping.can_fulfil(cat, r, (x,))] for r, c in hands]),
        ("payment_options (a staged shipment)", len(shipments), lambda: loop_options(tab, s_res, s_nres, s_con, s_ncon),
         lambda: [shipment.payment_options(tab, r, c, out_opts, 0) for r, c in ship_arrays],
         [lambda r=r, c=c: payment.payment_options(cat, r, c)[:K] for r, c in shipments]),
        ("cheapest_payment (a staged shipment)", len(shipments),
         lambda: loop_cheapest(tab, s_res, s_nres, s_con, s_ncon),
         lambda: [shipment.cheapest_payment(tab, r, c, out_bits) for r, c in ship_arrays],
         [lambda r=r, c=c: shipping.payment(cat, r, c) for r, c in shipments]),
        ("best_fulfilment (a hand's contracts)", len(hands), lambda: loop_best(tab, h_res, h_nres, h_con, h_ncon),
         lambda: [shipment.best_fulfilment(tab, r, c, out_bits, out_b) for r, c in arrays],
         [lambda r=r, c=c: shipping.best_fulfilment(cat, r, c) for r, c in hands]),
        ("cheapest_cover (a take cashing money)", len(covers), lambda: loop_cover(tab, c_hand, c_nhand, c_short),
         lambda: [shipment.cheapest_cover(tab, h, s, out_bits) for h, s in
                  [(np.array(h, np.int64), s) for h, s in covers]],
         [lambda h=h, s=s: _cheapest_cover(cat, h, s) for h, s in covers]),
    ]
    print(f"Shipment kernels, {datetime.date.today()}: queries from {args.games} random 4-player games "
          f"({len(hands)} hands with contracts and ships, {len(shipments)} shipments, {len(covers)} covers); "
          "microseconds per call, best of 3.\n")
    print("| query | calls | kernel, compiled loop | kernel, from Python | reference, caches cleared "
          "| reference, caches warm |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, count, compiled, from_python, calls in rows:
        compiled()  # compile the loop first
        cold = per_call(reference(calls, True), count, repeat=1)
        warm = per_call(reference(calls, False), count)
        print(f"| {name} | {count} | {per_call(compiled, count):.2f} | {per_call(from_python, count):.2f} "
              f"| {cold:.1f} | {warm:.1f} |")
    gave_up = sum(shipment.best_fulfilment(tab, r, c, out_bits, out_b) == shipment.GAVE_UP for r, c in arrays)
    print(f"\nbest_fulfilment gave up (GAVE_UP: left to shipping.best_fulfilment) on {gave_up} of {len(arrays)} hands.")
    (imp0, cold), (imp1, warm) = compile_cost()
    print("\nFirst call in a fresh process, seconds (import of the module and the card table: "
          f"{imp0:.2f} with an empty cache, {imp1:.2f} with it filled):\n")
    print("| kernel | empty numba cache (compiles) | filled cache |")
    print("|---|---:|---:|")
    for name in cold:
        print(f"| {name} | {cold[name]:.2f} | {warm[name]:.3f} |")
    print(f"| all | {sum(cold.values()):.2f} | {sum(warm.values()):.3f} |")


if __name__ == "__main__":
    main()
