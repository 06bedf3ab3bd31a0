"""Self-play training: MaskablePPO on the single-agent view against an opponent pool, with evaluations.

One network learns every player count. Each episode the learner takes a random seat in a game whose
player count is drawn from ``env.num_players``; the other seats are drawn from the opponent pool
(``train/pool.py``: snapshots of the learner run in numpy, heuristic, random), and the learner's
reward is its own terminal reward (``SingleAgentEnv``). Every ``pool.snapshot_every`` learner steps
the policy is exported to numpy and added to every env's pool; every ``checkpoint.every`` steps the
model is saved; every ``eval.every`` steps it plays seat-rotated tournaments against fixed bots.

Output directory (``--out``, default ``runs/<name>``):

    config.yaml                the resolved config of the run
    versions.yaml              Python's and the packages' versions this run trained with (a table quotes them)
    model.zip, model.npz       the final SB3 checkpoint and its numpy export (play: ppo:path=.../model.npz)
    checkpoints/step_N.zip     periodic checkpoints (+ .npz exports); resume with --resume ... --trust-checkpoint
    snapshots/step_N.npz       the pool's snapshots, reloaded on resume
    tb/                        TensorBoard logs (tensorboard --logdir DIR/tb)
    eval.csv                   every evaluation: steps, opponent, players, games, win rate [95% CI], rank, VP,
                               train_seconds (wall time of this run or resume so far, evaluations left out)

A fresh run refuses an ``--out`` that already holds files unless ``--overwrite`` is given (then what an
earlier run wrote there is deleted first, so eval.csv and the TensorBoard logs hold one run).

Resuming loads an SB3 checkpoint, which unpickles parts of the file: a crafted checkpoint runs any code it
carries. So ``--resume`` needs ``--trust-checkpoint`` (``train(..., trust_checkpoint=True)``), the user's
statement that the file is one his own run wrote. Nothing else here loads a checkpoint: agent specs in
``eval.opponents`` and ``pool.mixture`` play only ``.npz`` exports (``packetrow_agents.policy``).

Every hyperparameter is in the YAML config; the dataclasses below list the keys and their defaults
(the defaults are configs/quick.yaml).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import shutil
import sys
import time
from collections import Counter, deque, namedtuple
from dataclasses import dataclass, field
from functools import partial
from importlib.resources import files
from pathlib import Path

import numpy as np

from packetrow_env.env import REWARD_MODES, final_rewards
from packetrow_env.compact_observation import ENCODINGS
from packetrow_env.observation import MODES
from packetrow_env.wrappers import SingleAgentEnv

from .config import (ConfigError, check_agent_specs, check_choice, check_net_arch, check_positive, check_run_name,
                     load_sections)
from .pool import OpponentPool, check_mixture
from .update_threads import UpdateThreads

VEC_ENVS = ("batched", "dummy", "subproc")
ACTIVATIONS = ("tanh", "relu")
LR_SCHEDULES = ("constant", "linear")
TRAINERS = ("sb3", "rllib")  # rllib: rllib_selfplay.py, needs the [ray] extra
LEARNER = "learner"  # the learner's entry name in evaluation tournaments
TRUST_HINT = ("resuming loads an SB3 checkpoint, which unpickles it: a crafted file runs any code it carries. "
              "Resume only from a checkpoint your own run wrote, and say so with --trust-checkpoint")
EVAL_COLUMNS = ("timesteps", "stage", "opponent", "num_players", "games", "win_rate", "win_low", "win_high",
                "fair_share", "mean_rank", "rank_low", "rank_high", "mean_vp", "vp_low", "vp_high", "train_seconds")


# one finished training episode as the learner saw it; expected_reward = final_rewards(scores)[seat]
Episode = namedtuple("Episode", "num_players seat reward win expected_reward opponents")


# --------------------------------------------------------------------------- config
@dataclass
class EnvConfig:
    """The training games."""

    num_players: list = field(default_factory=lambda: [2, 3, 4, 5])  # drawn uniformly per episode; repeat to weight
    observation_mode: str = "tracked"
    observation_encoding: str = "onehot"  # onehot | compact (about 700 floats, card types embedded: a faster network)
    reward_mode: str = "vp"  # measured: VP margin learns faster than rank, win rate included
    n_envs: int = 4
    # batched: one VectorGame, opponents moved batched (vec_selfplay.py; fastest); dummy: one SingleAgentEnv per
    # slot in one process; subproc: one process per slot
    vec_env: str = "dummy"


@dataclass
class PoolConfig:
    """The opponent pool (see train/pool.py)."""

    snapshot_every: int = 5000  # learner steps between snapshots
    max_snapshots: int = 20
    recent_decay: float = 0.7
    deterministic: bool = False  # snapshot opponents sample from their policy; true: argmax
    # the heuristic needs real weight: 10% was not enough in the measurements of TRAINING.md
    mixture: dict = field(default_factory=lambda: {"latest": 0.2, "uniform": 0.05, "recent": 0.1,
                                                   "heuristic": 0.4, "random": 0.25})


@dataclass
class PPOConfig:
    """MaskablePPO's hyperparameters (sb3-contrib names)."""

    learning_rate: float = 0.001
    lr_schedule: str = "constant"  # constant, or linear: down to 0 at total_timesteps
    n_steps: int = 256  # per env per rollout
    batch_size: int = 256
    n_epochs: int = 8
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list = field(default_factory=lambda: [64, 64])  # hidden layers of both the policy and value nets
    activation: str = "tanh"
    extractor_layer: int = 0  # compact only: width of the first hidden layer, computed in the extractor (0: none)
    share_extractor: bool = True  # the policy and value networks share the extractor (embedding, extractor_layer)


@dataclass
class EvalConfig:
    """Seat-rotated tournaments of the learner against fixed bots."""

    every: int = 25_000  # learner steps between evaluations; 0: only the final one
    games: int = 40  # per opponent and player count (rounded up to a multiple of the player count)
    final_games: int = 200  # the same at the end of the run; 0: none
    num_players: list = field(default_factory=lambda: [2, 4])
    opponents: list = field(default_factory=lambda: ["random", "heuristic"])  # agent specs
    deterministic: bool = True  # the learner plays its argmax action
    workers: int = 1


@dataclass
class CheckpointConfig:
    """Periodic checkpoints."""

    every: int = 25_000  # learner steps between checkpoints; 0: only the final model


@dataclass
class LogConfig:
    """What the run reports."""

    tensorboard: bool = True
    progress_bar: bool = True
    verbose: int = 0  # SB3's verbosity (1: rollout tables on stdout)


@dataclass
class TrainConfig:
    """A whole training run."""

    trainer: str = "sb3"  # sb3 (this module) | rllib (rllib_selfplay.py, the [ray] extra)
    name: str = "run"
    seed: int = 0
    total_timesteps: int = 100_000
    torch_threads: int = 1  # torch threads while rollouts are collected (measured: 1 is fastest on 2 cores)
    update_threads: int = 0  # up to this many torch threads in PPO updates, if measured faster (update_threads.py)
    env: EnvConfig = field(default_factory=EnvConfig)
    pool: PoolConfig = field(default_factory=PoolConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    log: LogConfig = field(default_factory=LogConfig)

    def to_dict(self) -> dict:
        """The config as plain data (what config.yaml holds)."""
        return dataclasses.asdict(self)


CONFIG_SECTIONS = {"env": EnvConfig, "pool": PoolConfig, "ppo": PPOConfig, "eval": EvalConfig,
                   "checkpoint": CheckpointConfig, "log": LogConfig}


def _player_counts(where: str, value) -> list[int]:
    counts = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(counts, list) or not counts or any(
            isinstance(c, bool) or not isinstance(c, int) or c not in range(2, 6) for c in counts):
        raise ConfigError(f"{where} must be a player count 2-5 or a non-empty list of them, got {value!r}")
    return list(counts)


def check_config(config: TrainConfig, source: str = "config") -> TrainConfig:
    """Check the values' ranges and choices; raises ConfigError naming the key."""
    def choice(where, value, allowed):
        check_choice(f"{source}: {where}", value, allowed)

    check_run_name(f"{source}: name", config.name)
    for where, value, zero_ok in [("seed", config.seed, True), ("total_timesteps", config.total_timesteps, False),
                                  ("torch_threads", config.torch_threads, False),
                                  ("update_threads", config.update_threads, True),
                                  ("env.n_envs", config.env.n_envs, False),
                                  ("pool.snapshot_every", config.pool.snapshot_every, False),
                                  ("pool.max_snapshots", config.pool.max_snapshots, False),
                                  ("ppo.learning_rate", config.ppo.learning_rate, False),
                                  ("ppo.n_steps", config.ppo.n_steps, False),
                                  ("ppo.batch_size", config.ppo.batch_size, False),
                                  ("ppo.n_epochs", config.ppo.n_epochs, False),
                                  ("ppo.clip_range", config.ppo.clip_range, False),
                                  ("ppo.ent_coef", config.ppo.ent_coef, True),
                                  ("ppo.vf_coef", config.ppo.vf_coef, True),
                                  ("ppo.max_grad_norm", config.ppo.max_grad_norm, False),
                                  ("ppo.extractor_layer", config.ppo.extractor_layer, True),
                                  ("eval.every", config.eval.every, True), ("eval.games", config.eval.games, False),
                                  ("eval.final_games", config.eval.final_games, True),
                                  ("eval.workers", config.eval.workers, False),
                                  ("checkpoint.every", config.checkpoint.every, True)]:
        check_positive(f"{source}: {where}", value, zero_ok)
    for where, value in [("ppo.gamma", config.ppo.gamma), ("ppo.gae_lambda", config.ppo.gae_lambda),
                         ("pool.recent_decay", config.pool.recent_decay)]:
        if not 0 < value <= 1:
            raise ConfigError(f"{source}: {where} must be in (0, 1], got {value!r}")
    rollout = config.ppo.n_steps * config.env.n_envs
    if config.ppo.batch_size > rollout:
        raise ConfigError(f"{source}: ppo.batch_size ({config.ppo.batch_size}) must be at most one rollout, "
                          f"ppo.n_steps x env.n_envs = {rollout}")
    config.env.num_players = _player_counts(f"{source}: env.num_players", config.env.num_players)
    config.eval.num_players = _player_counts(f"{source}: eval.num_players", config.eval.num_players)
    choice("trainer", config.trainer, ("sb3",))
    choice("env.observation_mode", config.env.observation_mode, MODES)
    choice("env.observation_encoding", config.env.observation_encoding, ENCODINGS)
    choice("env.reward_mode", config.env.reward_mode, REWARD_MODES)
    choice("env.vec_env", config.env.vec_env, VEC_ENVS)
    if config.env.observation_encoding != "onehot" and config.env.vec_env != "batched":
        raise ConfigError(f"{source}: env.observation_encoding {config.env.observation_encoding!r} needs env.vec_env "
                          "'batched' (the one-game envs give the onehot encoding)")
    if config.ppo.extractor_layer and config.env.observation_encoding != "compact":
        raise ConfigError(f"{source}: ppo.extractor_layer ({config.ppo.extractor_layer}) needs env.observation_encoding "
                          "'compact' (it is the compact extractor's layer); use 0 with the onehot encoding")
    choice("ppo.activation", config.ppo.activation, ACTIVATIONS)
    choice("ppo.lr_schedule", config.ppo.lr_schedule, LR_SCHEDULES)
    check_net_arch(f"{source}: ppo.net_arch", config.ppo.net_arch)
    try:
        config.pool.mixture = check_mixture(config.pool.mixture)
    except ValueError as error:
        raise ConfigError(f"{source}: pool.mixture: {error}") from None
    check_agent_specs(f"{source}: eval.opponents", config.eval.opponents)
    return config


def config_from_dict(data: dict, source: str = "config") -> TrainConfig:
    """A checked TrainConfig from plain data (a parsed YAML file); unknown keys raise ConfigError."""
    return check_config(load_sections(TrainConfig, CONFIG_SECTIONS, data, source), source)


def shipped_configs() -> dict[str, Path]:
    """The configs installed with packetrow (the repository's configs/), by name."""
    folder = Path(str(files("packetrow_configs")))
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def resolve_config(path) -> Path:
    """A config file: ``path`` if it exists, else the shipped config it names (``quick``, ``configs/quick.yaml``)."""
    path = Path(path)
    if path.is_file():
        return path
    shipped = shipped_configs()
    if path.suffix in ("", ".yaml") and path.parent in (Path("."), Path("configs")) and path.stem in shipped:
        return shipped[path.stem]
    raise ConfigError(f"no config file at {path}; the shipped configs are {', '.join(shipped)} "
                      f"(name one, e.g. --config quick or --config configs/quick.yaml)")


def read_config(path) -> tuple[Path, object]:
    """The resolved path and the parsed YAML data of a config (not yet checked)."""
    import yaml

    path = resolve_config(path)
    try:
        return path, yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({error})") from None


def load_config(path) -> TrainConfig:
    """Read and check a YAML training config."""
    path, data = read_config(path)
    return config_from_dict(data, str(path))


# --------------------------------------------------------------------------- environments
class TrainingEnv(SingleAgentEnv):
    """SingleAgentEnv whose opponents come from its own OpponentPool, with snapshots added by the trainer."""

    def add_snapshot(self, policy, step: int) -> None:
        """Add a snapshot to this env's pool (called through VecEnv.env_method, so it reaches subprocesses)."""
        self.opponents.add(policy, step)

    def step(self, action):
        """SingleAgentEnv.step; a finished episode's info also names the opponents faced."""
        observation, reward, terminated, truncated, info = super().step(action)
        if terminated:
            info["opponents"] = [getattr(o, "name", type(o).__name__) for o in self.seated if o is not None]
        return observation, reward, terminated, truncated, info


def make_pool(config: TrainConfig) -> OpponentPool:
    """An empty opponent pool as the config describes it."""
    pool = config.pool
    return OpponentPool(pool.mixture, pool.max_snapshots, pool.recent_decay, pool.deterministic)


def _make_env(config: TrainConfig):
    from stable_baselines3.common.monitor import Monitor

    env = TrainingEnv(config.env.num_players, opponents=make_pool(config),
                      observation_mode=config.env.observation_mode, reward_mode=config.env.reward_mode)
    return Monitor(env)  # episode reward/length for SB3's rollout/ep_rew_mean (the learner's own reward)


def make_vec_env(config: TrainConfig):
    """The training VecEnv: one batched SelfPlayVecEnv of ``env.n_envs`` games, or ``env.n_envs`` Monitor-wrapped
    TrainingEnvs each with its own pool; seeded."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if config.env.vec_env == "batched":
        from .vec_selfplay import SelfPlayVecEnv
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
        import multiprocessing
        start = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        vec_env = SubprocVecEnv(factories, start_method=start)
    vec_env.seed(config.seed)
    return vec_env


# --------------------------------------------------------------------------- evaluation
def evaluate(agent, opponents=("random", "heuristic"), player_counts=(2, 4), games: int = 40, seed: int = 0,
             workers: int = 1, observation_mode: str = "tracked") -> list[dict]:
    """The learner ``agent`` against n-1 copies of each opponent spec per player count: one row each."""
    from .tournament import run_tournament

    agent.name = LEARNER
    rows = []
    for opponent in opponents:
        for n in player_counts:
            count = math.ceil(games / n) * n  # whole rotations: the learner plays every seat equally often
            result = run_tournament([agent] + [opponent] * (n - 1), n, count, seed, workers, progress=False,
                                    observation_mode=observation_mode)
            row = result.row(LEARNER)
            rows.append({"opponent": str(opponent), "num_players": n, "games": row["games"],
                         **{k: row[k] for k in ("win_rate", "win_low", "win_high", "fair_share", "mean_rank",
                                                "rank_low", "rank_high", "mean_vp", "vp_low", "vp_high")}})
    return rows


def format_evaluation(rows: list[dict]) -> str:
    """Evaluation rows as an aligned table."""
    header = ["opponents", "players", "games", "win rate [95% CI]", "fair share", "mean rank [95% CI]",
              "mean VP [95% CI]"]
    lines = [header]
    for r in rows:
        lines.append([r["opponent"], str(r["num_players"]), str(r["games"]),
                      f"{100 * r['win_rate']:.1f}% [{100 * r['win_low']:.1f}, {100 * r['win_high']:.1f}]",
                      f"{100 * r['fair_share']:.1f}%",
                      f"{r['mean_rank']:.2f} [{r['rank_low']:.2f}, {r['rank_high']:.2f}]",
                      f"{r['mean_vp']:.1f} [{r['vp_low']:.1f}, {r['vp_high']:.1f}]"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
            for line in lines]
    text.insert(1, "  ".join("-" * w for w in widths))
    text.append("The learner holds one seat, every other seat plays the opponent; seats rotate. "
                "Rank 1 = best; a shared win counts 1/k.")
    return "\n".join(text)


def _append_csv(path: Path, rows: list[dict]) -> None:
    new = not path.exists()
    columns = EVAL_COLUMNS
    if not new:  # a resumed run keeps its file's columns (an older version's file lacks train_seconds)
        with path.open(newline="") as f:
            columns = next(csv.reader(f), None) or EVAL_COLUMNS
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerows(rows)


# --------------------------------------------------------------------------- the callback
def _step_name(step: int) -> str:
    return f"step_{step:010d}"


def make_callback(config: TrainConfig, out: Path, keep_episodes: int = 1000, stop=None):
    """The training callback: snapshots, checkpoints, evaluations and the learner's episode statistics; ``stop``
    (rows -> bool) ends training after a periodic evaluation whose rows it accepts."""
    return _callback_class()(config, out, keep_episodes, stop)


def _callback_class():
    # defined on first use so that importing this module (for the CLI) does not import SB3 and torch
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    class _SelfPlayCallback(BaseCallback):
        """Snapshots into the pools, checkpoints, periodic evaluations, and the learner's episode statistics."""

        def __init__(self, config: TrainConfig, out: Path, keep_episodes: int = 1000, stop=None):
            super().__init__()
            self.config = config
            self.out = out
            self.stop = stop
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

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self._record(info)
            step = self.num_timesteps
            if self._next_snapshot is not None and step >= self._next_snapshot:
                add_snapshot(self.model, self.training_env, self.out, self.config)
                self._next_snapshot = self._schedule(self.config.pool.snapshot_every)
            if self._next_checkpoint is not None and step >= self._next_checkpoint:
                save_model(self.model, self.out / "checkpoints" / _step_name(step), self.config)
                self._next_checkpoint = self._schedule(self.config.checkpoint.every)
            if self._next_eval is not None and step >= self._next_eval:
                rows = self.evaluate("periodic", self.config.eval.games)
                self._next_eval = self._schedule(self.config.eval.every)
                if self.stop is not None and self.stop(rows):
                    return False
            return True

        def _record(self, info: dict) -> None:
            seat, scores = info["seat"], info["scores"]
            winners = sum(row["winner"] for row in scores)
            win = 1.0 / winners if scores[seat]["winner"] else 0.0
            expected = final_rewards(scores, self.config.env.reward_mode)[seat]
            record = Episode(info["num_players"], seat, float(info["episode"]["r"]), win, expected,
                             tuple(info.get("opponents", ())))
            self.episodes.append(record)
            self._window.append(record)

        def _on_rollout_start(self) -> None:
            self._update_threads.after_update()  # the update between two rollouts has ended
            torch.set_num_threads(self.config.torch_threads)

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
            kinds = Counter("snapshot" if name.startswith("snapshot@") else name
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
            _append_csv(self.out / "eval.csv", rows)
            self.evaluations += rows
            self._eval_seconds += time.perf_counter() - started
            return rows

    return _SelfPlayCallback


# --------------------------------------------------------------------------- models
def _meta(config: TrainConfig) -> dict:
    return {"observation_mode": config.env.observation_mode, "config_name": config.name, "seed": config.seed,
            "reward_mode": config.env.reward_mode}


def export_model(model, config: TrainConfig):
    """The model's policy as a NumpyPolicy with the run's metadata."""
    from packetrow_agents.policy import export_policy

    return export_policy(model, config.env.observation_mode, _meta(config))


def save_model(model, stem: Path, config: TrainConfig) -> tuple[Path, Path]:
    """Save ``stem``.zip (SB3 checkpoint) and ``stem``.npz (numpy export); returns both paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    zip_path, npz_path = stem.with_suffix(".zip"), stem.with_suffix(".npz")
    model.save(zip_path)
    export_model(model, config).save(npz_path)
    return zip_path, npz_path


def add_snapshot(model, vec_env, out: Path, config: TrainConfig) -> None:
    """Export the current policy, save it under snapshots/ and add it to every env's pool."""
    policy = export_model(model, config)
    step = int(model.num_timesteps)
    policy.save(out / "snapshots" / f"{_step_name(step)}.npz")
    vec_env.env_method("add_snapshot", policy, step)


def evaluate_model(model, config: TrainConfig, games: int) -> list[dict]:
    """Evaluate the model's current policy as the config's eval section says."""
    from packetrow_agents.policy import PolicyAgent

    agent = PolicyAgent(policy=export_model(model, config), deterministic=config.eval.deterministic)
    return evaluate(agent, config.eval.opponents, config.eval.num_players, games, config.seed + 1_000_003,
                    config.eval.workers, config.env.observation_mode)


def _policy_kwargs(config: TrainConfig) -> dict:
    import torch

    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[config.ppo.activation]
    kwargs = {"net_arch": list(config.ppo.net_arch), "activation_fn": activation}
    if config.env.observation_encoding == "compact":
        from .compact_extractor import compact_policy_kwargs
        kwargs = compact_policy_kwargs(hidden=config.ppo.extractor_layer, **kwargs)
    if not config.ppo.share_extractor:  # only then: checkpoints of runs before the key keep loading
        kwargs["share_features_extractor"] = False
    return kwargs


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


def _resume_snapshots(resume: Path, step: int, config: TrainConfig) -> list[tuple[int, Path]]:
    """The snapshot files of the run that wrote ``resume`` (at most ``step``), oldest first."""
    for directory in (resume.parent / "snapshots", resume.parent.parent / "snapshots"):
        if directory.is_dir():
            found = []
            for path in directory.glob("step_*.npz"):
                try:
                    s = int(path.stem.removeprefix("step_"))
                except ValueError:
                    continue
                if s <= step:
                    found.append((s, path))
            return sorted(found)[-config.pool.max_snapshots:]
    return []


def _has_progress_bar_packages() -> bool:
    import importlib.util
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


# what packetrow train writes into its output directory (deleted by --overwrite before a fresh run)
RUN_FILES = ("config.yaml", "versions.yaml", "model.zip", "model.npz", "eval.csv", "curve.png")
VERSIONED = ("packetrow", "numpy", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "pettingzoo")


def environment_versions() -> dict[str, str]:
    """Python's version and the installed versions of the packages a training run depends on."""
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": sys.version.split()[0]}
    for name in VERSIONED:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found
RUN_FOLDERS = ("checkpoints", "snapshots", "tb")


def prepare_out(out: Path, fresh: bool, overwrite: bool, files=RUN_FILES, folders=RUN_FOLDERS) -> None:
    """Create the output directory; a fresh run into one holding files needs ``overwrite`` (then clears the old run).

    ``files`` and ``folders``: what a run of this trainer writes there, the only things ``overwrite`` deletes.
    """
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a directory")
    if fresh and out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise ConfigError(f"--out {out} already holds files (an earlier run?); choose another --out, resume "
                              f"that run with --resume, or pass --overwrite to delete what packetrow train "
                              f"wrote there")
        # an earlier run's files only: its evaluations, checkpoints, snapshots and logs would mix with this run's
        for name in files:
            (out / name).unlink(missing_ok=True)
        for name in folders:
            if (out / name).is_dir():
                shutil.rmtree(out / name)
    out.mkdir(parents=True, exist_ok=True)


def train(config: TrainConfig, out=None, resume=None, progress_bar: bool | None = None, overwrite: bool = False,
          trust_checkpoint: bool = False, stop=None) -> TrainResult:
    """Run (or resume from a checkpoint) a self-play training run; returns the model and where it was saved.

    ``overwrite``: a fresh run may replace an earlier run's files in ``out``. ``trust_checkpoint``: required
    with ``resume``, whose SB3 checkpoint is unpickled (module docstring). ``stop``: called with each periodic
    evaluation's rows (eval.csv's, as dicts); training ends early when it returns True.
    """
    import torch
    import yaml
    from sb3_contrib import MaskablePPO

    from packetrow_agents.policy import NumpyPolicy

    started = time.perf_counter()
    check_config(config)  # a TrainConfig built in code gets the same checks (the name above all)
    if resume is not None:
        resume = Path(resume)
        if not trust_checkpoint:
            raise ConfigError(f"--resume {resume}: {TRUST_HINT}")
        if not resume.is_file():
            raise ConfigError(f"no checkpoint at {resume} (expected an SB3 .zip written by packetrow train)")
    out = Path(out) if out is not None else Path("runs") / config.name
    prepare_out(out, fresh=resume is None, overwrite=overwrite)
    (out / "config.yaml").write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))
    (out / "versions.yaml").write_text(yaml.safe_dump(environment_versions(), sort_keys=False))
    torch.set_num_threads(config.torch_threads)
    start_timesteps = 0
    vec_env = make_vec_env(config)
    tensorboard = str(out / "tb") if config.log.tensorboard else None
    # torch's distribution argument checks cost about 5% of the learner's time (measured) and check what
    # masked logits always are; they are switched back on after the run
    validate = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        if resume is None:
            model = MaskablePPO("MlpPolicy", vec_env, policy_kwargs=_policy_kwargs(config), tensorboard_log=tensorboard,
                                seed=config.seed, device="cpu", verbose=config.log.verbose, **_ppo_kwargs(config))
            model.packetrow_meta = _meta(config)
            add_snapshot(model, vec_env, out, config)  # the initial policy: snapshot sources have one from the start
        else:
            try:
                model = MaskablePPO.load(resume, env=vec_env, device="cpu", tensorboard_log=tensorboard,
                                         verbose=config.log.verbose, policy_kwargs=_policy_kwargs(config),
                                         **_ppo_kwargs(config))
            except Exception as error:  # SB3 raises assorted errors for files that are not matching checkpoints
                if "policy kwargs" in str(error):
                    raise ConfigError(f"the checkpoint {resume} has another network than the config's ppo.net_arch "
                                      f"{config.ppo.net_arch} / ppo.activation {config.ppo.activation!r}") from None
                raise ConfigError(f"cannot resume from {resume}: {type(error).__name__}: {error}") from None
            trained_on = (getattr(model, "packetrow_meta", None) or {}).get("observation_mode", "tracked")
            if trained_on != config.env.observation_mode:
                raise ConfigError(f"the checkpoint {resume} was trained on {trained_on!r} observations, the config "
                                  f"says env.observation_mode {config.env.observation_mode!r}")
            model.packetrow_meta = _meta(config)
            start_timesteps = int(model.num_timesteps)
            # fresh episodes, not a replay of the run's first ones
            model.set_random_seed(config.seed + model.num_timesteps)
            snapshots = _resume_snapshots(resume, model.num_timesteps, config)
            for step, path in snapshots:
                vec_env.env_method("add_snapshot", NumpyPolicy.load_npz(path), step)
            if not snapshots:
                add_snapshot(model, vec_env, out, config)
        remaining = config.total_timesteps - model.num_timesteps
        if remaining <= 0:
            raise ConfigError(f"the checkpoint has already trained {model.num_timesteps} steps and total_timesteps is "
                              f"{config.total_timesteps}: raise total_timesteps (or --total-timesteps) to train more")
        callback = make_callback(config, out, stop=stop)
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


def single_threaded_openblas():
    """A context in which numpy's OpenBLAS (if that is its BLAS) uses one thread.

    Measured: the snapshot opponents' small numpy products leave OpenBLAS's second thread spinning, which took
    the core that a two-thread PPO update (``update_threads: 2``) needs; one BLAS thread costs the env nothing.
    """
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(internal_api="openblas").limit(limits=1)


# --------------------------------------------------------------------------- command line
def _run_train_command(args) -> int:
    try:
        path, data = read_config(args.config)
        trainer = data.get("trainer", "sb3") if isinstance(data, dict) else "sb3"
        check_choice(f"{path}: trainer", trainer, TRAINERS)
        if trainer == "rllib":
            from .rllib_selfplay import run_command
            return run_command(args, data)
        if args.ray is not None:
            raise ConfigError("--ray applies to RLlib configs (trainer: rllib, e.g. configs/rllib_quick.yaml); "
                              f"{path} trains with SB3 on this machine")
        config = config_from_dict(data, str(path))
        if args.total_timesteps is not None:
            config.total_timesteps = args.total_timesteps
            check_config(config, args.config)
    except ConfigError as error:
        args.parser.error(str(error))
    try:
        result = train(config, out=args.out, resume=args.resume, progress_bar=False if args.no_progress else None,
                       overwrite=args.overwrite, trust_checkpoint=args.trust_checkpoint)
    except ConfigError as error:
        args.parser.error(str(error))
    minutes, seconds = divmod(result.wall_seconds, 60)
    resumed = (f", resumed at step {result.start_timesteps}: {result.model.num_timesteps} steps in all"
               if args.resume else "")
    print(f"\nTrained {result.session_timesteps} steps in {int(minutes)} min {seconds:.0f} s "
          f"(config {args.config}, seed {config.seed}{resumed}).")
    print("Versions:    " + ", ".join(f"{k} {v}" for k, v in environment_versions().items())
          + f" (saved in {result.out / 'versions.yaml'})")
    if result.evaluation:
        print(f"\nFinal evaluation ({config.eval.final_games} games per line, learner "
              f"{'argmax' if config.eval.deterministic else 'sampling'}):")
        print(format_evaluation(result.evaluation))
    print(f"\nModel:       {result.model_path} (SB3 checkpoint; resume with --resume {result.model_path} "
          f"--trust-checkpoint)")
    print(f"Numpy model: {result.npz_path} (play it: packetrow tournament --agents ppo:path={result.npz_path},"
          f"heuristic --players 2)")
    print(f"Checkpoints: {result.out / 'checkpoints'}    snapshots: {result.out / 'snapshots'}")
    print(f"Evaluations: {result.out / 'eval.csv'}")
    if config.log.tensorboard:
        print(f"Logs:        tensorboard --logdir {result.out / 'tb'}")
    return 0


def add_command(subparsers) -> None:
    """Register the ``train`` subcommand on the ``packetrow`` parser's subparsers."""
    parser = subparsers.add_parser(
        "train", help="self-play training from a YAML config (SB3 MaskablePPO, or RLlib PPO with trainer: rllib)",
        description="Train one policy for every player count with MaskablePPO: the learner takes a random seat, "
                    "the other seats come from a pool of its own snapshots and scripted bots. Saves checkpoints, "
                    "a numpy export, TensorBoard logs and periodic evaluations against fixed bots.")
    parser.add_argument("--config", required=True, metavar="YAML", help="training config: a YAML file, or the name of a shipped one (quick, ppo_packetrow, ...)")
    parser.add_argument("--resume", metavar="CHECKPOINT",
                        help="continue from an SB3 checkpoint (.zip) your own run wrote; the step count continues "
                             "up to total_timesteps. Needs --trust-checkpoint")
    parser.add_argument("--trust-checkpoint", action="store_true",
                        help="confirm the --resume checkpoint is your own: loading an SB3 checkpoint unpickles it, "
                             "which runs any code a crafted file carries")
    parser.add_argument("--out", metavar="DIR", help="output directory (default runs/<config name>); a fresh run "
                                                     "refuses one that already holds files unless --overwrite")
    parser.add_argument("--overwrite", action="store_true",
                        help="a fresh run may delete an earlier run's files in --out (eval.csv, checkpoints, "
                             "snapshots, TensorBoard logs, model)")
    parser.add_argument("--total-timesteps", type=int, metavar="N", help="override the config's total_timesteps")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="RLlib configs only: train on the Ray cluster at ADDRESS (e.g. auto or 10.0.0.1:6379) "
                             "instead of the config's ray_address (default: a local Ray instance)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run_train_command, parser=parser)
