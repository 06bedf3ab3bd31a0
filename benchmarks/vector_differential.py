"""The long differential run: VectorGame against the single engine over a million game steps.

Batches of random seeds (2-5 players mixed) are played with random legal actions that stage and ship
contracts often; every step compares each game's mask, player to act and tracked observation with
``Game`` and the AEC env's encoder, and every finished game's ``to_dict`` and scores. Prints the number of
steps, games and mismatches (the tests run the same comparison on a few games; this is the long run).

    python benchmarks/vector_differential.py                 # a million steps, about ten minutes
    python benchmarks/vector_differential.py --steps 100000
"""

from __future__ import annotations

import argparse
import datetime
import sys

import numpy as np

from packetrow_env import actions
from packetrow_env.engine import Game
from packetrow_env.observation import encoder
from packetrow_env.vector import VectorGame

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    tqdm = None


def choose(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per game, staging and shipping contracts often."""
    weight = rng.random(mask.shape)
    weight[:, actions.ADD_CONTRACT:] += 0.5
    return np.where(mask, weight, -1.0).argmax(axis=1)


def run(total_steps: int, batch: int, seed: int, progress) -> dict:
    """Play until ``total_steps`` game steps were compared; counts of steps, games, pays, pages turned and
    mismatches."""
    rng = np.random.default_rng(seed)
    enc = encoder()
    counts = rng.integers(2, 6, size=batch)
    seeds = list(range(seed * 10_000_000, seed * 10_000_000 + batch))
    vg = VectorGame(counts, seeds=seeds)
    games = [Game.new(int(n), seed=s) for n, s in zip(counts, seeds)]
    next_seed = seeds[-1] + 1
    tally = {"steps": 0, "games": 0, "pays": 0, "pages": 0, "mismatches": 0}
    first = []

    def mismatch(what):
        tally["mismatches"] += 1
        if len(first) < 5:
            first.append(what)

    while tally["steps"] < total_steps:
        mask = vg.legal_action_mask()
        player = vg.current_player
        obs = vg.observe("tracked")
        for i, g in enumerate(games):
            if not np.array_equal(mask[i], g.legal_action_mask()) or player[i] != g.current_player:
                mismatch(f"game seed {vg.seeds[i]}: mask or player differs at step {len(g.state.history)}")
            elif not np.array_equal(obs[i], enc.encode(g, g.current_player, "tracked")):
                mismatch(f"game seed {vg.seeds[i]}: observation differs at step {len(g.state.history)}")
        acts = choose(mask, rng)
        tally["pays"] += int(((acts >= actions.PAY) & (acts < actions.MORE)).sum())
        tally["pages"] += int((acts == actions.MORE).sum())
        vg.step(acts)
        for i, g in enumerate(games):
            g.step(int(acts[i]))
        tally["steps"] += batch
        if progress is not None:
            progress.update(batch)
        over = np.flatnonzero(vg.is_over)
        if len(over):
            vp, cash = vg.scores()
            for i in over.tolist():
                g = games[i]
                if vg.game(i).to_dict() != g.to_dict() or vp[i, :g.num_players].tolist() != \
                        [row["vp"] for row in g.scores()]:
                    mismatch(f"game seed {vg.seeds[i]}: final position or scores differ")
                tally["games"] += 1
            new_counts = rng.integers(2, 6, size=len(over))
            new_seeds = list(range(next_seed, next_seed + len(over)))
            next_seed += len(over)
            vg.reset(over, seeds=new_seeds, num_players=new_counts)
            for i, n, s in zip(over.tolist(), new_counts.tolist(), new_seeds):
                games[i] = Game.new(n, seed=s)
    tally["first"] = first
    return tally


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="game steps to compare (default 1,000,000)")
    parser.add_argument("--batch", type=int, default=256, help="games per batch (default 256)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and actions (default 0)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch < 1 or args.seed < 0:
        parser.error("--steps and --batch must be positive and --seed non-negative")
    bar = tqdm(total=args.steps, unit="step", desc="differential", file=sys.stderr) if tqdm else None
    tally = run(args.steps, args.batch, args.seed, bar)
    if bar:
        bar.close()
    print(f"{datetime.date.today()}: {tally['steps']:,} game steps compared, {tally['games']:,} finished games, "
          f"{tally['pays']:,} payment choices, {tally['pages']:,} pages turned ('more'), {tally['mismatches']} mismatches")
    for line in tally["first"]:
        print("  " + line)
    return 1 if tally["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
