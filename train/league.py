"""A league: exploiters of the main agent, trained with the exploit stack, join its opponent pool.

With ``league.every`` set, every ``league.every`` learner steps the run pauses the main agent and trains an
exploiter: a best response to the main agent as it is then (``exploit.exploit_config``: the main agent's export at
every other seat of ``league.num_players``-player games, from the base config ``league.config``), for
``league.steps`` of its own learner steps (or ``league.minutes``, whichever ends first), from scratch or from the
main agent's weights (``league.start``). It then joins the pool as ``exploiter@STEP``, drawn through the mixture's
source ``exploiters`` uniformly or by PFSP (``league.draw``, ``train/pool.py``); at most ``league.max_exploiters``
are kept, the oldest dropped. Each exploiter is made afresh, so a new one is AlphaStar's reset of an exploiter.

Its files are in the run folder, ``exploiters/step_N/`` (``run_dir.py``), and a resumed run reloads the
exploiters made up to its checkpoint. The exploiter's training draws from the global random generators that SB3
seeds; they are put back afterwards, so the main run continues as its own seed says.
"""

from __future__ import annotations

import contextlib
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from packetrow_agents.policy import NumpyPolicy

from .config import ConfigError, TrainConfig, check_config
from .exploit import exploit_config
from .run_dir import exploiter_folder, export_model, resume_exploiters, save_policy
from .selfplay import TrainResult
from .selfplay import train as train_selfplay


class League:
    """The exploiters of a config's ``league`` section; ``selfplay.train`` calls it every ``league.every`` steps
    (``train_exploiter``) and on a resume (``resume``)."""

    def __init__(self, config: TrainConfig):
        self.config = config
        try:  # the exploiters' base config is read and checked before the run starts, not at its first exploiter
            self.exploiter_config("random", 0, None)
        except ConfigError as error:
            raise ConfigError(f"league.config: {error}") from None

    def exploiter_config(self, spec: str, step: int, start: NumpyPolicy | None) -> TrainConfig:
        """The training config of the exploiter made at ``step`` against the agent ``spec`` (the main agent's
        export), from the ``start`` policy or from scratch."""
        league = self.config.league
        config = exploit_config(spec, league.num_players, self.config.seed + step, league.config, start)
        config.name, config.total_timesteps = "exploiter", league.steps
        if not league.minutes:
            config.eval.every = 0  # the evaluations of exploit_config are where the clock is checked
        return check_config(config, f"{league.config} (for an exploiter)")

    def train_exploiter(self, model, vec_env, out: Path) -> None:
        """Train an exploiter against ``model`` as it is now and add it to ``vec_env``'s opponent pool."""
        league, step = self.config.league, int(model.num_timesteps)
        folder = exploiter_folder(out, step)
        main = export_model(model, self.config)
        start = main if league.start == "main" else None
        config = self.exploiter_config(f"ppo:path={save_policy(main, folder / 'main.npz')}", step, start)
        budget = f"{league.steps:,} steps" + (f" or {league.minutes:g} min" if league.minutes else "")
        print(f"[league at {step} steps] training an exploiter of the main agent for {budget} ({folder})",
              file=sys.stderr, flush=True)
        started = time.perf_counter()
        stop = (lambda rows: time.perf_counter() - started >= 60 * league.minutes) if league.minutes else None
        with kept_global_state():
            result = train_selfplay(config, out=folder, overwrite=True, progress_bar=False, stop=stop, start=start)
        vec_env.env_method("add_exploiter", NumpyPolicy.load_npz(result.npz_path), step)
        print(f"[league] exploiter@{step} joins the pool after {result.model.num_timesteps:,} steps "
              f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)

    def resume(self, vec_env, checkpoint: Path, step: int) -> None:
        """Add the exploiters the run of ``checkpoint`` made up to ``step`` (the newest kept) to the pool."""
        found = resume_exploiters(checkpoint, step, self.config.league.max_exploiters)
        for made, path in found:
            vec_env.env_method("add_exploiter", NumpyPolicy.load_npz(path), made)
        if found:
            print(f"resume: the league's exploiters of steps {', '.join(str(made) for made, _ in found)} rejoin the "
                  f"pool", file=sys.stderr, flush=True)


@contextlib.contextmanager
def kept_global_state():
    """Put back Python's, numpy's and torch's global generators and torch's thread count after the block."""
    states = random.getstate(), np.random.get_state(), torch.get_rng_state(), torch.get_num_threads()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])
        torch.set_num_threads(states[3])


def train(config: TrainConfig, **kwargs) -> TrainResult:
    """``selfplay.train`` (its keyword arguments) with the exploiters of the config's league, if it has one."""
    return train_selfplay(config, league=League(config) if config.league.every else None, **kwargs)
