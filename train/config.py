"""Training configs: the SB3 trainer's schema, reading YAML-shaped data into checked dataclasses, and its reference.

A config is a dataclass of top-level values plus sections (each a dataclass); every key is optional
(the dataclass default), an unknown key is an error that lists the allowed ones, and a value is
converted to its default's type or refused. Each key's meaning is kept with its field (``option``), from
which ``config_reference`` writes the Markdown table of the docs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import yaml

from packetrow_agents.registry import parse_spec
from packetrow_arena.records import records_bytes
from packetrow_env.actions import NUM_ACTIONS
from packetrow_env.compact_observation import ENCODINGS, encoder_for
from packetrow_env.env import REWARD_MODES
from packetrow_env.memory import check_fits
from packetrow_env.observation import MODES
from packetrow_env.user_files import read_text
from packetrow_env.vector import bytes_per_game

from .mmd import check_coefficients, load_magnet
from .pool import EXPLOITER_DRAWS, EXPLOITERS, PFSP_WEIGHTINGS, check_mixture, check_mixtures_by_players

# a run's name is a directory name under runs/: no path separators, no "..", nothing hidden
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
VEC_ENVS = ("batched", "dummy", "subproc")
ACTIVATIONS = ("tanh", "relu")
LR_SCHEDULES = ("constant", "linear")
LEAGUE_STARTS = ("scratch", "main")
TRAINERS = ("sb3", "rllib")  # rllib: rllib_selfplay.py, needs the [ray] extra
MAX_THREADS = 256  # torch threads: far more than any machine's cores, far below what torch fails on (a million)
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16")
AUTO = "auto"  # a key whose default is AUTO may take an integer too
SEED_LIMIT = 2**32  # numpy's legacy seeding, which SB3 uses, takes 32 bits


class ConfigError(ValueError):
    """A training config with an unknown key or a bad value."""


def option(meaning: str, default=dataclasses.MISSING, factory=dataclasses.MISSING):
    """A config field with its default (or ``factory`` for a list, mapping or section) and its meaning for the docs."""
    return dataclasses.field(default=default, default_factory=factory, metadata={"meaning": meaning})


def field_names(cls) -> list[str]:
    """The keys a config dataclass accepts."""
    return [f.name for f in dataclasses.fields(cls)]


def sections_of(cls) -> dict:
    """The sections of a config dataclass: {name: section dataclass}, its fields whose defaults are dataclasses."""
    defaults = cls()
    return {f.name: type(getattr(defaults, f.name)) for f in dataclasses.fields(cls)
            if dataclasses.is_dataclass(getattr(defaults, f.name))}


def convert(where: str, value, default):
    """``value`` converted to the type of ``default``, or a ConfigError naming ``where``."""
    def fail(expected):
        raise ConfigError(f"{where} must be {expected}, got {value!r}")

    if isinstance(default, bool):
        return value if isinstance(value, bool) else fail("true or false")
    if isinstance(default, int):
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else fail("an integer")
    if isinstance(default, float):
        if isinstance(value, str):  # YAML 1.1 reads 3e-4 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                fail("a number")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail("a number")
        try:
            value = float(value)
        except OverflowError:  # an integer past float's range
            fail("a finite number")
        return value if math.isfinite(value) else fail("a finite number")
    if isinstance(default, str):
        if default == AUTO and isinstance(value, int) and not isinstance(value, bool):
            return value  # "auto" or a count (workers); a key that takes no count refuses it in check_config
        return value if isinstance(value, str) else fail("a string")
    if isinstance(default, list):
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            value = [value]  # a single value is a list of one (num_players: 4)
        return list(value) if isinstance(value, (list, tuple)) else fail("a list")
    if isinstance(default, dict):
        return dict(value) if isinstance(value, dict) else fail("a mapping")
    raise AssertionError(default)


def section(cls, name: str, data, source: str):
    """The section ``name`` of a config as a ``cls`` dataclass; unknown keys raise ConfigError."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: section {name!r} must be a mapping of keys to values, got {data!r}")
    allowed = field_names(cls)
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise ConfigError(f"{source}: unknown key{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(f'{name}.{k}' for k in unknown)}; allowed keys in {name}: {', '.join(allowed)}")
    defaults = cls()
    values = {k: convert(f"{source}: {name}.{k}", v, getattr(defaults, k)) for k, v in data.items()}
    return cls(**values)


def load_sections(cls, data, source: str):
    """A ``cls`` config from plain data: its top-level keys plus one dataclass per section (``sections_of``)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a training config is a mapping of keys to values, got {type(data).__name__}")
    sections = sections_of(cls)
    top = [name for name in field_names(cls) if name not in sections]
    allowed = top + list(sections)
    unknown = [k for k in data if k not in allowed]
    if unknown:
        listed = "; ".join(f"{name}: {', '.join(field_names(section_cls))}" for name, section_cls in sections.items())
        raise ConfigError(f"{source}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(str, unknown))}; "
                          f"allowed top-level keys: {', '.join(allowed)} (sections: {listed})")
    defaults = cls()
    values = {k: convert(f"{source}: {k}", data[k], getattr(defaults, k)) for k in top if k in data}
    parts = {name: section(section_cls, name, data.get(name), source) for name, section_cls in sections.items()}
    return cls(**values, **parts)


def check_positive(where: str, value, zero_ok: bool = False) -> None:
    """A ConfigError naming ``where`` unless ``value`` > 0 (>= 0 with ``zero_ok``)."""
    if not (value > 0 or (zero_ok and value == 0)):  # written so that nan is refused too
        raise ConfigError(f"{where} must be {'>= 0' if zero_ok else '> 0'}, got {value!r}")


def check_choice(where: str, value, allowed) -> None:
    """A ConfigError naming ``where`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ConfigError(f"{where} must be one of {', '.join(map(str, allowed))}, got {value!r}")


def check_run_name(where: str, name: str) -> None:
    """A ConfigError naming ``where`` unless ``name`` is a plain name (it names the run's directory runs/<name>)."""
    if not NAME_PATTERN.fullmatch(name) or ".." in name:
        raise ConfigError(f"{where} must be a plain name (letters, digits, '.', '_', '-'; no path separators "
                          f"or '..'; it names the run's directory runs/<name>), got {name!r}")


def check_net_arch(where: str, widths) -> None:
    """A ConfigError naming ``where`` unless ``widths`` is a non-empty list of positive layer widths."""
    if not widths or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in widths):
        raise ConfigError(f"{where} must be a non-empty list of layer widths, got {widths!r}")


def check_agent_specs(where: str, specs) -> None:
    """A ConfigError naming ``where`` unless ``specs`` is a non-empty list of valid agent specs."""
    if not specs:
        raise ConfigError(f"{where} must list at least one agent spec (e.g. random, heuristic)")
    for spec in specs:
        try:
            parse_spec(str(spec))
        except ValueError as error:
            raise ConfigError(f"{where}: {error}") from None


# --------------------------------------------------------------------------- the SB3 trainer's config
@dataclass
class EnvConfig:
    """The training games."""

    num_players: list = option("player counts, one drawn uniformly per episode; repeat a count to weight it",
                               factory=lambda: [2, 3, 4, 5])
    observation_mode: str = option(f"what the learner observes: {' | '.join(MODES)}", "tracked")
    observation_encoding: str = option("onehot (2,536 floats) | compact (778: card types embedded, a faster "
                                       "network; needs vec_env batched)", "onehot")
    # measured: VP margin learns faster than rank, win rate included
    reward_mode: str = option("rank (+1 first .. -1 last) | win | vp (VP minus the others' mean)", "vp")
    n_envs: int = option("games stepped together", 4)
    vec_env: str = option("batched (one VectorGame, opponents moved batched; fastest) | dummy (one env per game "
                          "in one process) | subproc (one process per game)", "dummy")


@dataclass
class PoolConfig:
    """The opponent pool (see train/pool.py)."""

    snapshot_every: int = option("learner steps between snapshots of the learner", 5000)
    max_snapshots: int = option("snapshots kept; the oldest goes when there are more", 20)
    recent_decay: float = option("the source recent weighs a snapshot by recent_decay ** age (0 = newest)", 0.7)
    deterministic: bool = option("snapshot opponents play their argmax action (false: sample their policy)", False)
    # the heuristic needs real weight: 10% was not enough in the measurements of TRAINING.md
    mixture: dict = option("weight per opponent source (latest, uniform, recent, pfsp, exploiters, or an agent "
                           "spec), drawn per opponent seat and episode; normalised",
                           factory=lambda: {"latest": 0.2, "uniform": 0.05, "recent": 0.1, "heuristic": 0.4,
                                            "random": 0.25})
    mixture_by_players: dict = option("a mixture in place of mixture for the games of some player counts, "
                                      "{player count: {source: weight}} (e.g. 4: {heuristic: 1.0}); the other "
                                      "counts draw from mixture", factory=dict)
    pfsp_weighting: str = option("how the source pfsp (and league.draw pfsp) weighs an opponent the learner loses "
                                 "to at rate p: hard (p ** pfsp_exponent) | variance (p (1 - p))", "hard")
    pfsp_exponent: float = option("the exponent of the hard PFSP weighting", 2.0)
    pfsp_prior: float = option("PFSP's loss rate of an opponent not met yet, in [0, 1]", 0.5)
    pfsp_rate: float = option("the step of PFSP's moving estimates: each finished episode moves the loss rate "
                              "against each opponent met this much toward the learner's loss, in (0, 1]", 0.05)


@dataclass
class LeagueConfig:
    """Exploiters of the main agent that join its opponent pool (see train/league.py)."""

    every: int = option("learner steps between exploiters; each is trained against the main agent then, the main "
                        "agent waiting (0: no league)", 0)
    steps: int = option("an exploiter's training budget in its own learner steps", 100_000)
    minutes: float = option("also end an exploiter's training after this many minutes (0: steps only)", 0.0)
    start: str = option("an exploiter starts from scratch (the network of league.config) | main (the main "
                        "agent's weights and network)", "scratch")
    config: str = option("the exploiters' training config (a shipped name or a YAML path), changed as packetrow "
                         "exploit changes it", "quick")
    num_players: int = option("the player count of an exploiter's games, the main agent at every other seat", 2)
    max_exploiters: int = option("exploiters kept in the pool; the oldest goes when there are more", 3)
    draw: str = option("how the source exploiters draws among them: pfsp (the pool's PFSP weighting) | uniform",
                       "pfsp")


@dataclass
class PPOConfig:
    """MaskablePPO's hyperparameters (sb3-contrib names)."""

    learning_rate: float = option("Adam's learning rate (the start of a linear schedule)", 0.001)
    lr_schedule: str = option("constant | linear (down to 0 at total_timesteps)", "constant")
    n_steps: int = option("steps per env per rollout", 256)
    batch_size: int = option("minibatch size; at most n_steps x env.n_envs", 256)
    n_epochs: int = option("passes over each rollout", 8)
    gamma: float = option("discount factor, in (0, 1]", 0.995)
    gae_lambda: float = option("GAE's lambda, in (0, 1]", 0.95)
    clip_range: float = option("PPO's clipping of the probability ratio", 0.2)
    ent_coef: float = option("weight of the entropy bonus", 0.01)
    vf_coef: float = option("weight of the value loss", 0.5)
    max_grad_norm: float = option("gradient norm clipping", 0.5)
    net_arch: list = option("hidden layer widths of the policy and the value network (after extractor_layer)",
                            factory=lambda: [64, 64])
    activation: str = option(" | ".join(ACTIVATIONS), "tanh")
    extractor_layer: int = option("compact only: width of a first hidden layer inside the extractor (0: none)", 0)
    share_extractor: bool = option("the policy and value networks share the extractor (embedding, "
                                   "extractor_layer)", True)
    belief_head: float = option("weight of an auxiliary loss: a head on the policy's last hidden layer predicts the "
                                "opponents' hidden starting contracts (train/belief_head.py; 0: no head; needs "
                                "vec_env batched)", 0.0)


@dataclass
class MMDConfig:
    """Magnetic mirror descent: PPO's loss plus a KL toward a magnet policy and one toward the previous policy
    (train/mmd.py)."""

    enabled: bool = option("add MMD's two KL terms to the PPO update (needs no ppo.belief_head)", False)
    magnet: str = option("the policy the magnet term pulls toward: uniform (over each row's legal actions: an "
                         "entropy bonus) | a policy export as a ppo agent spec (ppo: the shipped policy; "
                         "ppo:path=runs/NAME/model.npz) trained on env.observation_mode and "
                         "env.observation_encoding", "uniform")
    magnet_coef: float = option("alpha: the weight of KL(policy || magnet) at the start of the run", 0.05)
    magnet_coef_end: float = option("the magnet's weight at the end of the run (magnet_schedule linear or "
                                    "geometric)", 0.0)
    magnet_schedule: str = option("how the magnet's weight goes from magnet_coef to magnet_coef_end over "
                                  "total_timesteps: constant (stays magnet_coef) | linear | geometric (both > 0)",
                                  "constant")
    kl_coef: float = option("1/eta: the weight of KL(policy || the policy that collected the rollout: the one "
                            "before the update, one update older with pipeline), estimated from the rollout's "
                            "stored log-probabilities", 0.05)


@dataclass
class EvalConfig:
    """Seat-rotated tournaments of the learner against fixed bots."""

    every: int = option("learner steps between evaluations (0: only the final one)", 25_000)
    games: int = option("games per opponent and player count, rounded up to whole seat rotations", 40)
    final_games: int = option("the same for the final evaluation (0: none)", 200)
    num_players: list = option("player counts of the evaluations", factory=lambda: [2, 4])
    opponents: list = option("agent specs the learner plays against, one at a time",
                             factory=lambda: ["random", "heuristic"])
    deterministic: bool = option("the learner plays its most likely action (false: samples)", True)
    workers: int = option("processes playing the evaluation games", 1)


@dataclass
class CheckpointConfig:
    """Periodic checkpoints."""

    every: int = option("learner steps between checkpoints (0: only the final model)", 25_000)


@dataclass
class LogConfig:
    """What the run reports."""

    tensorboard: bool = option("write TensorBoard logs to OUT/tb", True)
    progress_bar: bool = option("show SB3's progress bar (needs tqdm and rich)", True)
    verbose: int = option("SB3's verbosity (1: rollout tables on stdout)", 0)


@dataclass
class TrainConfig:
    """A whole training run."""

    trainer: str = option("sb3 (MaskablePPO, this config) | rllib (RLlib PPO, its own config; the [ray] extra)",
                          "sb3")
    name: str = option("the run's name: its directory runs/NAME and the model's metadata", "run")
    seed: int = option("seed of the games, the pool and the network", 0)
    total_timesteps: int = option("learner env steps (the learner's own moves; opponents' are not counted)",
                                  100_000)
    # measured: 1 is fastest on 2 cores
    torch_threads: int = option("torch threads while rollouts are collected", 1)
    update_threads: int = option("up to this many torch threads in PPO updates while measured faster "
                                 "(0: torch_threads)", 0)
    pipeline: bool = option("collect each rollout after the first on the other core (a forked process on Linux, "
                            "else a thread) during the PPO update before it (one update behind; needs env.vec_env "
                            "batched and update_threads 0)", False)
    workers: str | int = option("the pipeline's rollout processes, each stepping its own env.n_envs / workers "
                                "games (auto: the cores minus one for the update, at least 1; more than 1 needs "
                                "pipeline and env.n_envs at least workers, and runs in processes only where "
                                "there is fork: Linux; elsewhere the pipeline's one thread collects)", AUTO)
    device: str = option("the PPO update's torch device: auto (cuda where torch finds one, else cpu) | cpu | cuda; "
                         "the env and rollouts stay on the CPU", "auto")
    precision: str = option("the PPO update's arithmetic: fp32 | bf16 (the hidden layers' matrix products in "
                            "bfloat16 under torch's autocast; the weights, the policy and value heads, the losses "
                            "and Adam in float32) | auto (bf16 where the update's device computes bfloat16 "
                            "natively: a CPU with AVX512-BF16 or AMX, a CUDA GPU that supports it; else fp32); the "
                            "belief head's trainer is fp32 always",
                            "fp32")
    env: EnvConfig = option("the training games", factory=EnvConfig)
    pool: PoolConfig = option("the opponent pool", factory=PoolConfig)
    league: LeagueConfig = option("exploiters of the main agent in the pool", factory=LeagueConfig)
    ppo: PPOConfig = option("MaskablePPO's hyperparameters", factory=PPOConfig)
    mmd: MMDConfig = option("magnetic mirror descent (off unless enabled)", factory=MMDConfig)
    eval: EvalConfig = option("evaluations against fixed bots", factory=EvalConfig)
    checkpoint: CheckpointConfig = option("periodic checkpoints", factory=CheckpointConfig)
    log: LogConfig = option("what the run reports", factory=LogConfig)

    def to_dict(self) -> dict:
        """The config as plain data (what config.yaml holds)."""
        return dataclasses.asdict(self)


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
                                  ("ppo.belief_head", config.ppo.belief_head, True),
                                  ("eval.every", config.eval.every, True), ("eval.games", config.eval.games, False),
                                  ("eval.final_games", config.eval.final_games, True),
                                  ("eval.workers", config.eval.workers, False),
                                  ("checkpoint.every", config.checkpoint.every, True)]:
        check_positive(f"{source}: {where}", value, zero_ok)
    for where, value in [("torch_threads", config.torch_threads), ("update_threads", config.update_threads)]:
        if value > MAX_THREADS:
            raise ConfigError(f"{source}: {where} must be at most {MAX_THREADS} (this machine has {os.cpu_count()} "
                              f"cores), got {value!r}")
    if config.total_timesteps >= SEED_LIMIT or config.seed >= SEED_LIMIT - config.total_timesteps:
        raise ConfigError(f"{source}: seed + total_timesteps must be below 2**32 (numpy's seeding, which SB3 uses, "
                          f"takes 32 bits, and a resumed run reseeds with seed + its steps), got seed {config.seed} "
                          f"and total_timesteps {config.total_timesteps}")
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
    choice("device", config.device, DEVICES)
    choice("precision", config.precision, PRECISIONS)
    if config.precision == "bf16" and config.ppo.belief_head:
        raise ConfigError(f"{source}: precision 'bf16' needs ppo.belief_head 0 (got {config.ppo.belief_head}): the "
                          "belief head's trainer updates in float32; use fp32 or auto (fp32 there)")
    if config.workers != AUTO:
        if isinstance(config.workers, str) or config.workers < 1:
            raise ConfigError(f"{source}: workers must be auto or an integer >= 1, got {config.workers!r}")
        if config.workers > MAX_THREADS:
            raise ConfigError(f"{source}: workers must be auto or at most {MAX_THREADS} (this machine has "
                              f"{os.cpu_count()} cores), got {config.workers!r}")
        if config.workers > 1 and not config.pipeline:
            raise ConfigError(f"{source}: workers {config.workers} needs pipeline: true (the rollout processes "
                              "collect beside the update); use workers: 1 or auto without it")
        if config.workers > config.env.n_envs:
            raise ConfigError(f"{source}: workers ({config.workers}) must be at most env.n_envs "
                              f"({config.env.n_envs}): each worker steps its own games")
    choice("env.observation_mode", config.env.observation_mode, MODES)
    choice("env.observation_encoding", config.env.observation_encoding, ENCODINGS)
    choice("env.reward_mode", config.env.reward_mode, REWARD_MODES)
    choice("env.vec_env", config.env.vec_env, VEC_ENVS)
    if config.env.observation_encoding != "onehot" and config.env.vec_env != "batched":
        raise ConfigError(f"{source}: env.observation_encoding {config.env.observation_encoding!r} needs env.vec_env "
                          "'batched' (the one-game envs give the onehot encoding)")
    if config.ppo.extractor_layer and config.env.observation_encoding != "compact":
        raise ConfigError(f"{source}: ppo.extractor_layer ({config.ppo.extractor_layer}) needs "
                          "env.observation_encoding 'compact' (it is the compact extractor's layer); use 0 with "
                          "the onehot encoding")
    if config.pipeline and (config.env.vec_env != "batched" or config.ppo.belief_head
                            or config.update_threads not in (0, config.torch_threads)):
        raise ConfigError(f"{source}: pipeline needs env.vec_env 'batched' (got {config.env.vec_env!r}), no "
                          f"ppo.belief_head (got {config.ppo.belief_head}) and update_threads 0 (got "
                          f"{config.update_threads}): the update runs beside the next rollout, each on its own core")
    if config.ppo.belief_head and config.env.vec_env != "batched":
        raise ConfigError(f"{source}: ppo.belief_head ({config.ppo.belief_head}) needs env.vec_env 'batched' (its "
                          "labels come from the batched games); use 0 with dummy or subproc")
    choice("ppo.activation", config.ppo.activation, ACTIVATIONS)
    choice("ppo.lr_schedule", config.ppo.lr_schedule, LR_SCHEDULES)
    check_net_arch(f"{source}: ppo.net_arch", config.ppo.net_arch)
    try:
        config.pool.mixture = check_mixture(config.pool.mixture)
    except ValueError as error:
        raise ConfigError(f"{source}: pool.mixture: {error}") from None
    try:
        config.pool.mixture_by_players = check_mixtures_by_players(config.pool.mixture_by_players)
    except ValueError as error:
        raise ConfigError(f"{source}: pool.mixture_by_players: {error}") from None
    unplayed = sorted(set(config.pool.mixture_by_players) - set(config.env.num_players))
    if unplayed:
        raise ConfigError(f"{source}: pool.mixture_by_players gives a mixture to {unplayed} players, but "
                          f"env.num_players {config.env.num_players} never deals such a game: drop it or add the count")
    check_agent_specs(f"{source}: eval.opponents", config.eval.opponents)
    check_pfsp_and_league(config, source)
    check_mmd(config, source)
    check_memory(config, source)
    return config


def check_pfsp_and_league(config: TrainConfig, source: str = "config") -> None:
    """Check the pool's PFSP keys and the league section; ``check_config`` calls it."""
    pool, league = config.pool, config.league
    check_choice(f"{source}: pool.pfsp_weighting", pool.pfsp_weighting, PFSP_WEIGHTINGS)
    check_positive(f"{source}: pool.pfsp_exponent", pool.pfsp_exponent)
    if not 0 <= pool.pfsp_prior <= 1:
        raise ConfigError(f"{source}: pool.pfsp_prior must be in [0, 1], got {pool.pfsp_prior!r}")
    if not 0 < pool.pfsp_rate <= 1:
        raise ConfigError(f"{source}: pool.pfsp_rate must be in (0, 1], got {pool.pfsp_rate!r}")
    for where, value, zero_ok in [("every", league.every, True), ("steps", league.steps, False),
                                  ("minutes", league.minutes, True), ("max_exploiters", league.max_exploiters, False)]:
        check_positive(f"{source}: league.{where}", value, zero_ok)
    check_choice(f"{source}: league.start", league.start, LEAGUE_STARTS)
    check_choice(f"{source}: league.draw", league.draw, EXPLOITER_DRAWS)
    check_choice(f"{source}: league.num_players", league.num_players, range(2, 6))
    exploiters = any(m.get(EXPLOITERS, 0.0) > 0 for m in [pool.mixture, *pool.mixture_by_players.values()])
    if exploiters and not league.every:
        raise ConfigError(f"{source}: pool.mixture gives weight to exploiters, which only a league makes: set "
                          f"league.every (learner steps between exploiters) or drop exploiters from the mixture")
    if league.every and not exploiters:
        raise ConfigError(f"{source}: league.every is {league.every} but pool.mixture gives no weight to the source "
                          f"exploiters, so no exploiter would ever be met: add e.g. exploiters: 0.2 to the mixture")
    if league.every:
        try:
            resolve_config(league.config)
        except ConfigError as error:
            raise ConfigError(f"{source}: league.config: {error}") from None


def check_mmd(config: TrainConfig, source: str = "config") -> None:
    """A ConfigError naming the mmd key whose value is bad, or whose magnet cannot be read or reads other
    observations than the run's; with mmd.enabled false only the coefficients are checked."""
    mmd = config.mmd
    try:
        check_coefficients(mmd.magnet_coef, mmd.magnet_coef_end, mmd.magnet_schedule, mmd.kl_coef)
        if mmd.enabled:
            load_magnet(mmd.magnet, config.env.observation_mode, config.env.observation_encoding)
    except ValueError as error:
        raise ConfigError(f"{source}: mmd.{error}") from None
    if mmd.enabled and config.ppo.belief_head:
        raise ConfigError(f"{source}: mmd.enabled needs ppo.belief_head 0 (got {config.ppo.belief_head}): the "
                          "belief head's trainer has its own update")


def check_memory(config: TrainConfig, source: str = "config") -> None:
    """A ConfigError naming the keys whose arrays cannot fit in this machine's memory (``packetrow_env.memory``),
    raised before anything is allocated; ``check_config`` calls it last, on values checked otherwise. The
    estimates, each checked alone: the training games (the batched
    engine's bytes a game), SB3's rollout buffer (observation, action mask and 8 scalars a step, float32, copied
    once more for the update), the policy and value networks (weights, gradients and Adam's two moments, and a
    minibatch's activations) and one evaluation's game records."""
    observation = encoder_for(config.env.observation_encoding).size_of(config.env.observation_mode)
    rollout = config.ppo.n_steps * config.env.n_envs
    widths = [config.ppo.extractor_layer] * bool(config.ppo.extractor_layer) + list(config.ppo.net_arch)
    weights = sum((fan_in + 1) * fan_out for fan_in, fan_out in zip([observation] + widths, widths + [NUM_ACTIONS]))
    activations = config.ppo.batch_size * (observation + sum(widths))
    games = max(config.eval.games, config.eval.final_games)
    parts = [(f"env.n_envs = {config.env.n_envs:,} games", config.env.n_envs * bytes_per_game(), "env.n_envs"),
             (f"the rollout buffer of ppo.n_steps x env.n_envs = {rollout:,} steps",
              2 * 4 * rollout * (observation + NUM_ACTIONS + 8), "ppo.n_steps or env.n_envs"),
             (f"the networks of ppo.net_arch {config.ppo.net_arch}" + (
                 f" after ppo.extractor_layer {config.ppo.extractor_layer}" if config.ppo.extractor_layer else ""),
              2 * 4 * (4 * weights + 2 * activations), "ppo.net_arch or ppo.extractor_layer"),
             (f"{games:,} evaluation games (eval.games, eval.final_games)",
              records_bytes(games, max(config.eval.num_players)), "eval.games or eval.final_games")]
    for what, nbytes, keys in parts:
        check_fits(f"{source}: {what}", nbytes, ConfigError, f"; lower {keys}")


def config_from_dict(data: dict, source: str = "config") -> TrainConfig:
    """A checked TrainConfig from plain data (a parsed YAML file); unknown keys raise ConfigError."""
    return check_config(load_sections(TrainConfig, data, source), source)


# --------------------------------------------------------------------------- config files
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
    """The resolved path and the parsed YAML data of a config (not yet checked); a file with no keys at all (empty,
    or only comments) is refused rather than read as the defaults."""
    path = resolve_config(path)
    try:
        data = yaml.safe_load(read_text(path, ConfigError, "a YAML training config"))
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({error})") from None
    if data is None:
        raise ConfigError(f"{path}: the config file is empty; give at least the keys that differ from the defaults "
                          "(e.g. name: my_run), or start from a shipped config (--config quick)")
    return path, data


def load_config(path) -> TrainConfig:
    """Read and check a YAML training config."""
    path, data = read_config(path)
    return config_from_dict(data, str(path))


# --------------------------------------------------------------------------- the reference
TYPE_NAMES = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "mapping"}


def config_reference(cls=TrainConfig) -> str:
    """A Markdown table of every key of a config dataclass (section.key, type, default, meaning), from its fields."""
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    defaults = cls()
    sections = sections_of(cls)
    rows = [(f.name, f, getattr(defaults, f.name)) for f in dataclasses.fields(cls) if f.name not in sections]
    for name, section_cls in sections.items():
        values = getattr(defaults, name)
        rows += [(f"{name}.{f.name}", f, getattr(values, f.name)) for f in dataclasses.fields(section_cls)]
    for key, f, default in rows:
        meaning = f.metadata["meaning"].replace("|", "\\|")  # a pipe would end the Markdown cell
        lines.append(f"| `{key}` | {TYPE_NAMES[type(default)]} | `{json.dumps(default)}` | {meaning} |")
    return "\n".join(lines)
