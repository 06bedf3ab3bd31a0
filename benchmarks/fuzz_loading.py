"""The loading fuzzer of issue 11 run for minutes: mutated saved games and catalogues, and random play.

Each mutated input must be refused with a ValueError or load to a sound game (tests/fuzzing.py says what is
checked); anything else is a failure, printed with its input. ``--random-play`` also plays random legal games
from fresh deals with the same checks after every step. Prints a table of counts for the README.

    python benchmarks/fuzz_loading.py --minutes 10                 # 10 minutes of each kind
    python benchmarks/fuzz_loading.py --minutes 1 --kinds saved
    python benchmarks/fuzz_loading.py --minutes 0 --random-play 1000000
"""

from __future__ import annotations

import argparse
import datetime
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the fuzzer lives with the tests

from packetrow_env.engine import Game  # noqa: E402
from tests.fuzzing import check_game, fuzz_catalogues, fuzz_saved_games  # noqa: E402

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    tqdm = None


def non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return value


def bar(total_seconds: float, label: str):
    """A progress bar over time (seconds), or a no-op."""
    if tqdm is None:
        return None
    return tqdm(total=round(total_seconds), desc=label, unit="s", file=sys.stderr)


def run_kind(kind: str, minutes: float, seed: int) -> tuple[Counter, list, list]:
    stop_at = time.monotonic() + minutes * 60
    progress = bar(minutes * 60, kind)
    start = time.monotonic()
    last = [start]

    def tick(_):
        now = time.monotonic()
        if progress is not None and now - last[0] >= 1:
            progress.update(round(now - last[0]))
            last[0] = now

    slowest = [0.0]
    stats, failures = Counter(), []
    round_ = 0
    while time.monotonic() < stop_at:  # fresh corpora now and then: more variety than one long stream
        if kind == "saved games":
            more, bad = fuzz_saved_games(seed + round_, 10**9, stop_at=min(stop_at, time.monotonic() + 60),
                                         progress=tick, slowest=slowest)
        else:
            with tempfile.TemporaryDirectory() as folder:
                more, bad = fuzz_catalogues(seed + round_, 10**9, folder, stop_at=min(stop_at, time.monotonic() + 60),
                                            progress=tick, slowest=slowest)
        stats.update(more)
        failures += bad
        round_ += 1
    if progress is not None:
        progress.close()
    return stats, failures, slowest


def random_play(steps: int, seed: int) -> tuple[Counter, list, list]:
    """Random legal games from fresh deals (2-5 players) until `steps` steps, every step checked."""
    rng = random.Random(seed)
    stats, failures, slowest = Counter(), [], [0.0]
    progress = tqdm(total=steps, desc="random play", unit="step", file=sys.stderr) if tqdm else None
    while stats["steps"] < steps:
        game = Game.new(rng.randint(2, 5), seed=rng.randrange(10**9), random_start=rng.random() < 0.5)
        try:
            played = check_game(game, rng, slowest)
        except Exception as error:  # a failure of the engine itself
            failures.append((game.to_dict(), repr(error)))
            stats["failures"] += 1
            continue
        stats["steps"] += played
        stats["games"] += 1
        if progress is not None:
            progress.update(played)
    if progress is not None:
        progress.close()
    return stats, failures, slowest


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=non_negative, default=1.0, help="minutes per kind of input (default 1)")
    parser.add_argument("--kinds", default="saved,catalogues", help="saved, catalogues or both (default)")
    parser.add_argument("--random-play", type=int, default=0, metavar="STEPS",
                        help="also play random games from fresh deals for this many checked steps")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in ("saved", "catalogues")]
    if unknown:
        parser.error(f"--kinds takes saved and/or catalogues, got {unknown}")

    print(f"{datetime.date.today()}, Python {sys.version.split()[0]}\n")
    print("| input | minutes | inputs | refused (ValueError) | loaded and played out | steps played | "
          "other failures | slowest step (CPU ms) | the slowest step |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    all_failures = []
    for kind in kinds:
        name = "saved games" if kind == "saved" else "catalogues"
        start = time.monotonic()
        stats, failures, slowest = run_kind(name, args.minutes, args.seed)
        minutes = (time.monotonic() - start) / 60
        print(f"| {name} | {minutes:.1f} | {stats['inputs']:,} | {stats['refused']:,} | {stats['loaded']:,} | "
              f"{stats['steps']:,} | {stats['failures']:,} | {slowest[0] * 1000:.1f} | {slowest[1] if len(slowest) > 1 else ''} |",
              flush=True)
        all_failures += failures
    if args.random_play:
        start = time.monotonic()
        stats, failures, slowest = random_play(args.random_play, args.seed)
        minutes = (time.monotonic() - start) / 60
        print(f"| random play, fresh deals ({stats['games']:,} games) | {minutes:.1f} | - | - | - | "
              f"{stats['steps']:,} | {stats['failures']:,} | {slowest[0] * 1000:.1f} | {slowest[1] if len(slowest) > 1 else ''} |",
              flush=True)
        all_failures += failures
    for what, why in all_failures[:5]:
        print(f"\nFAILURE\ninput: {what}\n{why}")


if __name__ == "__main__":
    main()
