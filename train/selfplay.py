"""Self-play training with SB3: MaskablePPO on the single-agent view against an opponent pool, with evaluations.

One network learns every player count. Each episode the learner takes a random seat in a game whose
player count is drawn from ``env.num_players``; the other seats are drawn from the opponent pool
(``train/pool.py``: snapshots of the learner run in numpy, heuristic, random), and the learner's
reward is its own terminal reward (``SingleAgentEnv``). Every ``pool.snapshot_every`` learner steps
the policy is exported to numpy and added to every env's pool; every ``checkpoint.every`` steps the
model is saved; every ``eval.every`` steps it plays seat-rotated tournaments against fixed bots
(``evaluation.py``). With PFSP in the pool's mixture the episodes' results go to the pools too; with a
``league`` section every ``league.every`` steps an exploiter of the learner is trained and joins them
(``league.py``). What a run writes is listed in ``run_dir.py``; the config's keys in ``config.py``.

A fresh run refuses an ``out`` that already holds files unless ``overwrite`` is given (then what an
earlier run wrote there is deleted first, so eval.csv and the TensorBoard logs hold one run).

Resuming loads an SB3 checkpoint, which unpickles parts of the file: a crafted checkpoint runs any code it
carries. So ``--resume`` needs ``--trust-checkpoint`` (``train(..., trust_checkpoint=True)``), the user's
statement that the file is one his own run wrote. Nothing else here loads a checkpoint: agent specs in
``eval.opponents`` and ``pool.mixture`` play only ``.npz`` exports (``packetrow_agents.policy``).
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import sys
import time
from collections import Counter, deque, namedtuple
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from packetrow_agents.policy import NumpyPolicy
from packetrow_arena.stats import win_shares
from packetrow_env import cards
from packetrow_env.env import final_rewards
from packetrow_env.single_agent_env import SingleAgentEnv

from .belief_head import BeliefPPO, BeliefPolicy
from .compact_extractor import compact_policy_kwargs
from . import sparse_input
from .compile_ahead import compile_ahead
from .config import ConfigError, TrainConfig, check_config
from .divergence import check_update
from .evaluation import evaluate_model
from .fast_tanh import FastTanh
from .machine import rollout_workers, update_device, update_dtype
from .mmd import mmd_of
from .policy_export import import_policy
from .pool import PFSP, OpponentPool
from .rollout import RolloutPPO
from .run_dir import (append_eval_rows, environment_versions, export_model, model_metadata, out_dir, prepare_out,
                      prepare_resume, resume_snapshots, save_model, save_policy, snapshot_path, step_name, write_yaml)
from .update_threads import UpdateThreads, single_threaded_openblas
from .vec_selfplay import SelfPlayVecEnv

TRUST_HINT = ("resuming loads an SB3 checkpoint, which unpickles it: a crafted file runs any code it carries. "
              "Resume only from a checkpoint your own run wrote, and say so with --trust-checkpoint")


# one finished training episode as the learner saw it; expected_reward = final_rewards(scores)[seat]
Episode = namedtuple("Episode", "num_players seat reward win expected_reward opponents")


# --------------------------------------------------------------------------- environments
class TrainingEnv(SingleAgentEnv):
    """SingleAgentEnv whose opponents come from its own OpponentPool, with snapshots added by the trainer."""

    def add_snapshot(self, policy, step: int) -> None:
        """Add a snapshot to this env's pool (called through VecEnv.env_method, so it reaches subprocesses)."""
        self.opponents.add(policy, step)

    def add_exploiter(self, policy, step: int) -> None:
        """Add a league's exploiter to this env's pool (through VecEnv.env_method, as ``add_snapshot``)."""
        self.opponents.add_exploiter(policy, step)

    def record_results(self, results) -> None:
        """Update this env's pool's loss-rate estimates (``OpponentPool.record_results``)."""
        self.opponents.record_results(results)

    def step(self, action):
        """SingleAgentEnv.step; a finished episode's info also names the opponents faced."""
        observation, reward, terminated, truncated, info = super().step(action)
        if terminated:
            info["opponents"] = [getattr(o, "name", type(o).__name__) for o in self.seated if o is not None]
        return observation, reward, terminated, truncated, info


def make_pool(config: TrainConfig) -> OpponentPool:
    """An empty opponent pool as the config describes it."""
    pool, league = config.pool, config.league
    pfsp = PFSP(pool.pfsp_weighting, pool.pfsp_exponent, pool.pfsp_prior, pool.pfsp_rate)
    return OpponentPool(pool.mixture, pool.max_snapshots, pool.recent_decay, pool.deterministic, pfsp,
                        league.max_exploiters, league.draw, pool.mixture_by_players)


def _make_env(config: TrainConfig):
    env = TrainingEnv(config.env.num_players, opponents=make_pool(config),
                      observation_mode=config.env.observation_mode, reward_mode=config.env.reward_mode)
    return Monitor(env)  # episode reward/length for SB3's rollout/ep_rew_mean (the learner's own reward)


def make_vec_env(config: TrainConfig):
    """The training VecEnv: one batched SelfPlayVecEnv of ``env.n_envs`` games, or ``env.n_envs`` Monitor-wrapped
    TrainingEnvs each with its own pool; seeded."""
    if config.env.vec_env == "batched":
        vec_env = SelfPlayVecEnv(config.env.n_envs, make_pool(config), config.env.num_players,
                                 config.env.observation_mode, config.env.reward_mode,
                                 observation_encoding=config.env.observation_encoding)
        vec_env.seed(config.seed)
        return vec_env

    factories = [partial(_make_env, config) for _ in range(config.env.n_envs)]
    if config.env.vec_env == "dummy":
        vec_env = DummyVecEnv(factories)
    else:
        # fork (where there is one) needs no __main__ guard in the caller's script and starts fast; the
        # workers step games and numpy snapshots only, never torch, so forking a torch process is safe here
        start = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        vec_env = SubprocVecEnv(factories, start_method=start)
    vec_env.seed(config.seed)
    return vec_env


# --------------------------------------------------------------------------- the callback
class SelfPlayCallback(BaseCallback):
    """Snapshots into the pools, checkpoints, periodic evaluations, the learner's episode statistics, PFSP's
    results to the pools and a league's exploiters (``league``: a ``packetrow_train.league.League`` or None)."""

    def __init__(self, config: TrainConfig, out: Path, keep_episodes: int = 1000, stop=None, on_evaluation=None,
                 league=None):
        super().__init__()
        self.config = config
        self.out = out
        self.stop = stop
        self.on_evaluation = on_evaluation
        self.league = league
        self._pfsp = make_pool(config).uses_results  # only then do the pools need the episodes' results
        # the learner's last finished episodes (Episode: reward from Monitor, expected from the scores)
        self.episodes = deque(maxlen=keep_episodes)
        self._window = deque(maxlen=500)
        self.evaluations: list[dict] = []
        self._started = time.perf_counter()
        self._eval_seconds = 0.0  # evaluations' wall time, left out of train_seconds
        self._update_threads = UpdateThreads(config.torch_threads, config.update_threads)

    def _schedule(self, every: int) -> int | None:
        return (self.num_timesteps // every + 1) * every if every else None

    def _on_training_start(self) -> None:
        self._started = time.perf_counter()
        self._next_snapshot = self._schedule(self.config.pool.snapshot_every)
        self._next_checkpoint = self._schedule(self.config.checkpoint.every)
        self._next_eval = self._schedule(self.config.eval.every)
        self._next_exploiter = self._schedule(self.config.league.every) if self.league is not None else None

    def _on_step(self) -> bool:
        results = []
        for info in self.locals["infos"]:
            if "episode" in info:
                episode = self._record(info)
                # each opponent met once, however many seats it held: (its name, the learner's loss)
                results += [(name, 1.0 - episode.win) for name in dict.fromkeys(episode.opponents)]
        if results and self._pfsp:
            self.training_env.env_method("record_results", results)
        step = self.num_timesteps
        if self._next_snapshot is not None and step >= self._next_snapshot:
            add_snapshot(self.model, self.training_env, self.out, self.config)
            self._next_snapshot = self._schedule(self.config.pool.snapshot_every)
        if self._next_exploiter is not None and self.config.total_timesteps > step >= self._next_exploiter:
            self.league.train_exploiter(self.model, self.training_env, self.out)
            self._next_exploiter = self._schedule(self.config.league.every)
        if self._next_checkpoint is not None and step >= self._next_checkpoint:
            save_model(self.model, self.out / "checkpoints" / step_name(step), self.config)
            self._next_checkpoint = self._schedule(self.config.checkpoint.every)
        if self._next_eval is not None and step >= self._next_eval:
            rows = self.evaluate("periodic", self.config.eval.games)
            self._next_eval = self._schedule(self.config.eval.every)
            if self.on_evaluation is not None:
                self.on_evaluation(rows, self.model)
            if self.stop is not None and self.stop(rows):
                return False
        return True

    def _record(self, info: dict) -> Episode:
        seat, scores = info["seat"], info["scores"]
        win = win_shares(scores)[seat]
        expected = final_rewards(scores, self.config.env.reward_mode)[seat]
        record = Episode(info["num_players"], seat, float(info["episode"]["r"]), win, expected,
                         tuple(info.get("opponents", ())))
        self.episodes.append(record)
        self._window.append(record)
        return record

    def _on_rollout_start(self) -> None:
        self._update_threads.after_update()  # the update between two rollouts has ended
        torch.set_num_threads(self.config.torch_threads)
        # before this rollout's steps snapshot, checkpoint or evaluate the updated weights
        check_update(self.model, self.num_timesteps, self.config.ppo.learning_rate)

    def _on_training_end(self) -> None:
        check_update(self.model, self.num_timesteps, self.config.ppo.learning_rate)  # the last update's

    def _on_rollout_end(self) -> None:
        # the PPO update comes next: nothing else of the run works then (update_threads.py)
        threads = self._update_threads.before_update()
        torch.set_num_threads(threads)
        self.logger.record("time/update_threads", threads)
        if not self._window:
            return
        window = list(self._window)
        self.logger.record("selfplay/win_rate", float(np.mean([e.win for e in window])))
        for n in sorted({e.num_players for e in window}):
            self.logger.record(f"selfplay/win_rate_{n}p",
                               float(np.mean([e.win for e in window if e.num_players == n])))
        kinds = Counter(name.partition("@")[0] if name.startswith(("snapshot@", "exploiter@")) else name
                        for e in window for name in e.opponents)
        total = sum(kinds.values())
        for kind, count in sorted(kinds.items()):
            self.logger.record(f"selfplay/opponent_share_{kind}", count / total)

    def evaluate(self, stage: str, games: int) -> list[dict]:
        """Evaluate the current policy, log it and append it to eval.csv."""
        started = time.perf_counter()
        trained = started - self._started - self._eval_seconds
        rows = evaluate_model(self.model, self.config, games)
        step = self.num_timesteps
        for row in rows:
            row.update(timesteps=step, stage=stage, train_seconds=round(trained, 1))
            key = f"eval/{row['opponent']}_{row['num_players']}p"
            for metric in ("win_rate", "mean_rank", "mean_vp"):
                self.logger.record(f"{key}/{metric}", row[metric])
        if stage == "periodic":
            self.logger.dump(step)
            summary = ", ".join(f"{r['opponent']} {r['num_players']}p {100 * r['win_rate']:.0f}%" for r in rows)
            print(f"[eval at {step} steps] learner win rate vs {summary}", file=sys.stderr, flush=True)
        append_eval_rows(self.out / "eval.csv", rows)
        self.evaluations += rows
        self._eval_seconds += time.perf_counter() - started
        return rows


def make_callback(config: TrainConfig, out: Path, keep_episodes: int = 1000, stop=None,
                  on_evaluation=None, league=None) -> SelfPlayCallback:
    """The training callback: snapshots, checkpoints, evaluations, the learner's episode statistics and a league's
    exploiters; ``stop`` (rows -> bool) ends training after a periodic evaluation whose rows it accepts;
    ``on_evaluation`` (rows, model) sees the model after each periodic evaluation, before ``stop``."""
    return SelfPlayCallback(config, out, keep_episodes, stop, on_evaluation, league)


# --------------------------------------------------------------------------- the trainer
def add_snapshot(model, vec_env, out: Path, config: TrainConfig) -> None:
    """Export the current policy, save it under snapshots/ and add it to every env's pool."""
    policy = export_model(model, config)
    step = int(model.num_timesteps)
    save_policy(policy, snapshot_path(out, step))
    vec_env.env_method("add_snapshot", policy, step)


def _policy_kwargs(config: TrainConfig) -> dict:
    activation = {"tanh": FastTanh, "relu": torch.nn.ReLU}[config.ppo.activation]
    kwargs = {"net_arch": list(config.ppo.net_arch), "activation_fn": activation}
    if config.env.observation_encoding == "compact":
        kwargs = compact_policy_kwargs(hidden=config.ppo.extractor_layer, **kwargs)
    if not config.ppo.share_extractor:  # only then: checkpoints of runs before the key keep loading
        kwargs["share_features_extractor"] = False
    if config.ppo.belief_head:
        kwargs.update(belief_weight=config.ppo.belief_head, belief_classes=len(cards.load().start_contracts))
    return kwargs


def ppo_class(config: TrainConfig):
    """MaskablePPO with the lean collector (train/rollout.py), or BeliefPPO (train/belief_head.py) with
    ``ppo.belief_head``; and its policy."""
    if config.ppo.belief_head:
        return BeliefPPO, BeliefPolicy
    return RolloutPPO, "MlpPolicy"


def _ppo_kwargs(config: TrainConfig) -> dict:
    ppo = config.ppo
    kwargs = {k: getattr(ppo, k) for k in ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma",
                                           "gae_lambda", "clip_range", "ent_coef", "vf_coef", "max_grad_norm")}
    if ppo.lr_schedule == "linear":
        kwargs["learning_rate"] = LinearSchedule(ppo.learning_rate)
    return kwargs


class LinearSchedule:
    """A learning rate falling linearly from ``start`` to 0 over the run (SB3 passes the progress remaining, 1 -> 0)."""

    def __init__(self, start: float):
        self.start = start

    def __call__(self, progress_remaining: float) -> float:
        return self.start * progress_remaining


def _has_progress_bar_packages() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("tqdm", "rich"))


@dataclass
class TrainResult:
    """What a run produced."""

    model: object
    out: Path
    model_path: Path
    npz_path: Path
    evaluation: list[dict]
    callback: object
    wall_seconds: float
    start_timesteps: int = 0  # the step count the run started from (a resumed checkpoint's)

    @property
    def session_timesteps(self) -> int:
        """The learner steps trained in this call (on a resume, not counting the checkpoint's)."""
        return int(self.model.num_timesteps) - self.start_timesteps


def train(config: TrainConfig, out=None, resume=None, progress_bar: bool | None = None, overwrite: bool = False,
          trust_checkpoint: bool = False, stop=None, start=None, on_evaluation=None, league=None) -> TrainResult:
    """Run (or resume from a checkpoint) a self-play training run; returns the model and where it was saved.

    ``overwrite``: a fresh run may replace an earlier run's files in ``out``. ``trust_checkpoint``: required
    with ``resume``, whose SB3 checkpoint is unpickled (module docstring). ``stop``: called with each periodic
    evaluation's rows (eval.csv's, as dicts); training ends early when it returns True. ``start``: a NumpyPolicy
    whose weights a fresh run's policy (and its value network's hidden layers) start from (``import_policy``).
    ``on_evaluation``: called with each periodic evaluation's rows and the model, before ``stop`` (e.g. to export
    the policy at a budget).
    ``league``: the ``packetrow_train.league.League`` that trains a config's exploiters, required with
    ``league.every`` (``packetrow_train.league.train`` passes it).
    """
    started = time.perf_counter()
    check_config(config)  # a TrainConfig built in code gets the same checks (the name above all)
    if resume is not None and start is not None:
        raise ConfigError("give a checkpoint to resume or a policy to start from, not both")
    if config.league.every and league is None:
        raise ConfigError("a config with league.every trains through packetrow_train.league.train (as packetrow "
                          "train does), which trains its exploiters")
    if resume is not None:
        resume = Path(resume)
        if not trust_checkpoint:
            raise ConfigError(f"--resume {resume}: {TRUST_HINT}")
        if not resume.is_file():
            raise ConfigError(f"no checkpoint at {resume} (expected an SB3 .zip written by packetrow train)")
    device = update_device(config.device)
    out = out_dir(config, out)
    prepare_out(out, fresh=resume is None, overwrite=overwrite)
    write_yaml(out / "config.yaml", config.to_dict())
    write_yaml(out / "versions.yaml", environment_versions())
    torch.set_num_threads(config.torch_threads)
    start_timesteps = 0
    vec_env = make_vec_env(config)
    tensorboard = str(out / "tb") if config.log.tensorboard else None
    # torch's distribution argument checks cost about 5% of the learner's time (measured) and check what
    # masked logits always are; they are switched back on after the run
    validate = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    algorithm, policy_class = ppo_class(config)
    try:
        if resume is None:
            model = algorithm(policy_class, vec_env, policy_kwargs=_policy_kwargs(config), tensorboard_log=tensorboard,
                              seed=config.seed, device=device, verbose=config.log.verbose, **_ppo_kwargs(config))
            model.packetrow_meta = model_metadata(config)
            if start is not None:
                import_policy(model, start)
            add_snapshot(model, vec_env, out, config)  # the initial policy: snapshot sources have one from the start
        else:
            try:
                model = algorithm.load(resume, env=vec_env, device=device, tensorboard_log=tensorboard,
                                       verbose=config.log.verbose, policy_kwargs=_policy_kwargs(config),
                                       **_ppo_kwargs(config))
            except Exception as error:  # SB3 raises assorted errors for files that are not matching checkpoints
                if "policy kwargs" in str(error):
                    raise ConfigError(f"the checkpoint {resume} has another network than the config's ppo.net_arch "
                                      f"{config.ppo.net_arch} / ppo.activation {config.ppo.activation!r} / "
                                      f"ppo.belief_head {config.ppo.belief_head}") from None
                raise ConfigError(f"cannot resume from {resume}: {type(error).__name__}: {error}") from None
            trained_on = (getattr(model, "packetrow_meta", None) or {}).get("observation_mode", "tracked")
            if trained_on != config.env.observation_mode:
                raise ConfigError(f"the checkpoint {resume} was trained on {trained_on!r} observations, the config "
                                  f"says env.observation_mode {config.env.observation_mode!r}")
            model.packetrow_meta = model_metadata(config)
            start_timesteps = int(model.num_timesteps)
            # fresh episodes, not a replay of the run's first ones
            model.set_random_seed(config.seed + model.num_timesteps)
            snapshots = resume_snapshots(resume, model.num_timesteps, config.pool.max_snapshots)
            for step, path in snapshots:
                vec_env.env_method("add_snapshot", NumpyPolicy.load_npz(path), step)
            if not snapshots:
                add_snapshot(model, vec_env, out, config)
            if league is not None:
                league.resume(vec_env, resume, model.num_timesteps)
        model.pipeline = config.pipeline
        model.mmd = mmd_of(config)
        # a belief head's trainer (MaskablePPO's own update) is float32 whatever the precision
        model.update_dtype = None if config.ppo.belief_head else update_dtype(config.precision, device)
        model.workers = rollout_workers(config)
        if isinstance(vec_env, SelfPlayVecEnv):  # before the first deal: the kernels on every core
            compile_ahead(vec_env.compile_jobs() + sparse_input.compile_jobs())
        remaining = config.total_timesteps - model.num_timesteps
        if remaining <= 0:
            raise ConfigError(f"the checkpoint has already trained {model.num_timesteps} steps and total_timesteps is "
                              f"{config.total_timesteps}: raise total_timesteps (or --total-timesteps) to train more")
        if resume is not None:
            for line in prepare_resume(out, start_timesteps):
                print(f"resume: {line}", file=sys.stderr, flush=True)
        callback = make_callback(config, out, stop=stop, on_evaluation=on_evaluation, league=league)
        show_bar = config.log.progress_bar if progress_bar is None else progress_bar
        if show_bar and not _has_progress_bar_packages():
            print("(no progress bar: SB3's needs the packages tqdm and rich)", file=sys.stderr)
            show_bar = False
        with single_threaded_openblas():
            model.learn(total_timesteps=remaining, callback=callback, reset_num_timesteps=resume is None,
                        progress_bar=show_bar, tb_log_name="ppo")
        torch.set_num_threads(config.torch_threads)
        model_path, npz_path = save_model(model, out / "model", config)
        evaluation = []
        if config.eval.final_games:
            evaluation = callback.evaluate("final", config.eval.final_games)
            callback.logger.dump(model.num_timesteps)
    finally:
        vec_env.close()
        torch.distributions.Distribution.set_default_validate_args(validate)
    return TrainResult(model, out, model_path, npz_path, evaluation, callback, time.perf_counter() - started,
                       start_timesteps)
