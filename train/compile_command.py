"""``packetrow compile``: the numba kernels of a training run compiled on every core, before a run needs them.

After an install or an update (a fresh clone, a Docker image being built, CI), the batched engine's and the
compiled opponents' kernels are not in numba's disk cache yet, and the first run that calls them compiles them:
about a minute and a half on two cores (docs/benchmarks.md, "Compiling the kernels ahead"). This command pays
that once, ahead: it trains one short rollout of two games on a config's settings (default: the main job's,
``quick``) in a temporary folder, without evaluation or checkpoints, so the kernels are compiled as a real run
compiles them (``compile_ahead`` on every usable core, then whatever its first steps call) and with the types its
calls pass. A second call only loads them from the cache (seconds). The cache lives beside the installed package's
files (``__pycache__``), so a read-only install cannot keep it (numba then compiles in every process; set
``NUMBA_CACHE_DIR`` to a writable folder).
"""

from __future__ import annotations

import sys
import tempfile
import time

from .config import ConfigError, TrainConfig, config_from_dict, read_config

# the run that compiles: two games, one rollout of 128 steps each, nothing written that outlives it
WARM_UP = {"total_timesteps": 256, "env": {"n_envs": 2}, "ppo": {"n_steps": 128, "batch_size": 128},
           "eval": {"every": 0, "final_games": 0}, "checkpoint": {"every": 0}, "league": {"every": 0},
           "log": {"tensorboard": False, "progress_bar": False}}


def warm_up_config(config="quick") -> TrainConfig:
    """The run that compiles the kernels of ``config``'s runs (a YAML file or a shipped config's name): its
    settings (players, observation, opponents, network) with ``WARM_UP``'s budget, games and logging.
    ConfigError for a config that is not an SB3 training config."""
    path, data = read_config(config)
    if not isinstance(data, dict):
        return config_from_dict(data, str(path))  # which says what a config is
    if data.get("trainer", "sb3") != "sb3":
        raise ConfigError(f"{path} trains with {data['trainer']}: packetrow compile compiles the kernels of an SB3 "
                          "run (trainer: sb3, e.g. --config quick)")
    data = {key: dict(value) if isinstance(value, dict) else value for key, value in data.items()}
    for key, value in WARM_UP.items():
        if not isinstance(value, dict):
            data[key] = value
        elif isinstance(data.setdefault(key, {}), dict):  # a section that is not a mapping: config_from_dict says so
            data[key].update(value)
    return config_from_dict(data, str(path))


def compile_kernels(config="quick") -> float:
    """Compile (or load from numba's cache) the kernels that runs of ``config`` call, by training its
    ``warm_up_config`` in a temporary folder; the seconds it took."""
    return _train_warm_up(warm_up_config(config))


def _train_warm_up(run: TrainConfig) -> float:
    from .selfplay import train  # torch and SB3: only when compiling, not for --help

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="packetrow-compile-") as out:
        train(run, out=out, progress_bar=False)
    return time.perf_counter() - started


def _run(args) -> int:
    try:
        run = warm_up_config(args.config)  # a bad config is a usage error, before torch is imported
    except ConfigError as error:
        args.parser.error(str(error))
    try:
        seconds = _train_warm_up(run)
    except KeyboardInterrupt:
        print("packetrow compile: interrupted", file=sys.stderr)
        return 130
    print(f"Compiled the kernels of {args.config}'s runs in {seconds:.1f} s (numba's cache: the next runs load "
          "them).")
    return 0


def add_arguments(parser) -> None:
    """``packetrow compile``'s arguments."""
    parser.add_argument("--config", default="quick", metavar="YAML",
                        help="the training config whose runs' kernels to compile: a YAML file, or the name of a "
                             "shipped one (default: quick, the main job's)")
    parser.set_defaults(run=_run)
