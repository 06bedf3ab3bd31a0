"""The main job's training speed against another checkout's (0.3.0 by default), runs alternated in one script.

Each run trains ``configs/quick.yaml`` of its own checkout for ``--steps`` learner steps with evaluations,
checkpoints and logs off, in a fresh Python process of that checkout's interpreter; the rate is the learner
steps over ``train()``'s wall time (setup, forks and updates included). The two sides take turns, run by run,
so that a shared machine's drift falls on both; the ratios are given run by run. A short warm-up run of each
side first (numba's compiling and the first imports are not measured). Prints a Markdown table.

    python benchmarks/training_ab.py --help
    python benchmarks/training_ab.py --base /work/wt-base --base-python /work/venv-base/bin/python --rounds 3
    python benchmarks/training_ab.py --ours --ours workers=2        # quick.yaml as it is and with 2 workers
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from tqdm import tqdm

HERE = Path(__file__).resolve().parent.parent

# run in each checkout with its own interpreter: only what 0.3.0's training API has too
DRIVER = """
import json, sys, tempfile
from pathlib import Path
import yaml
import packetrow_train
from packetrow_train.config import config_from_dict
from packetrow_train.selfplay import train
data = yaml.safe_load(Path("configs/quick.yaml").read_text())
data.update(json.loads(sys.argv[1]))
data["eval"].update(every=0, final_games=0)
data["checkpoint"]["every"] = 0
data["log"].update(tensorboard=False, progress_bar=False)
with tempfile.TemporaryDirectory() as out:
    result = train(config_from_dict(data, "ab"), out=out, progress_bar=False)
print(json.dumps({"rate": result.model.num_timesteps / result.wall_seconds, "module": packetrow_train.__file__}))
"""


def overrides(pairs: list[str]) -> dict:
    """{"key": value} from KEY=VALUE words, each value read as YAML (workers=2, pipeline=false, device=cpu)."""
    import yaml

    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"training_ab.py: --ours/--base-set take KEY=VALUE words, got {pair!r}")
        result[key] = yaml.safe_load(value)
    return result


def run(python: str, checkout: Path, settings: dict) -> dict:
    """One training run in ``checkout`` with ``python``; {"rate": learner steps/s, "module": where it trained}."""
    done = subprocess.run([python, "-c", DRIVER, json.dumps(settings)], cwd=checkout, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"training_ab.py: the run in {checkout} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def versions(python: str) -> str:
    code = ("import numpy, numba, torch, platform; print(f'Python {platform.python_version()}, numpy "
            "{numpy.__version__}, numba {numba.__version__}, torch {torch.__version__}')")
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, default=Path("/work/wt-base"),
                        help="the other checkout (default /work/wt-base, 0.3.0 = commit edac4e8)")
    parser.add_argument("--base-python", default="/work/venv-base/bin/python",
                        help="the interpreter whose packetrow is that checkout (default /work/venv-base/bin/python)")
    parser.add_argument("--steps", type=int, default=500_000, help="learner steps per run (default 500000)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side, alternated (default 3)")
    parser.add_argument("--ours", action="append", nargs="*", metavar="KEY=VALUE",
                        help="one setting of this checkout's quick.yaml to measure (top-level keys; repeat "
                             "--ours for several; --ours alone: quick.yaml as it is); default: quick.yaml as it is")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")
    if not (args.base / "configs" / "quick.yaml").is_file():
        parser.error(f"--base {args.base}: no configs/quick.yaml there")
    sides = [("base", args.base_python, args.base, {})]
    sides += [(" ".join(words) or "ours", sys.executable, HERE, overrides(words)) for words in (args.ours or [[]])]
    commits = {path: subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True).stdout.strip() for _, _, path, _ in sides}
    print(f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {platform.node()}, {os.cpu_count()} cores; "
          f"{args.steps:,} learner steps per run of quick.yaml; base {args.base} ({commits[args.base]}, "
          f"{versions(args.base_python)}), ours {HERE} ({commits[HERE]}, {versions(sys.executable)})\n")
    for name, python, checkout, settings in sides:  # warm-up
        run(python, checkout, {**settings, "total_timesteps": 16_384})
    rates = {name: [] for name, *_ in sides}
    for _ in tqdm(range(args.rounds), desc="rounds"):
        for name, python, checkout, settings in sides:
            rates[name].append(run(python, checkout, {**settings, "total_timesteps": args.steps})["rate"])
    print("| run | " + " | ".join(f"{name} (steps/s)" for name in rates) + " | " +
          " | ".join(f"{name} / base" for name in list(rates)[1:]) + " |")
    print("|---:|" + "---:|" * (2 * len(rates) - 1))
    for k in range(args.rounds):
        base = rates["base"][k]
        print(f"| {k + 1} | " + " | ".join(f"{r[k]:,.0f}" for r in rates.values()) + " | " +
              " | ".join(f"{r[k] / base:.2f}" for name, r in rates.items() if name != "base") + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
