"""Self-play training with RLlib's PPO (new API stack) and action masking, locally or on a Ray cluster.

Every env runner steps one batched engine: ``runners.num_envs_per_env_runner`` games in one ``VectorGame``
(``rllib_vector_env.LearnerVectorEnv``), the trainable module playing one seat of each (a seat drawn per game),
its observations and masks handed to RLlib as one vectorised batch. The other seats are drawn per game and
seat from an ``OpponentPool`` (``league.mixture``: frozen copies of main, the compiled heuristic, random) and
moved batched inside the env, as in the SB3 stack (``vec_selfplay.PoolOpponents``).

League. main's initial weights are the first frozen copy; another is frozen whenever main has won at least
``league.win_rate_threshold`` of its recent games (RLlib's self-play pattern). A copy reaches every env
runner as weights (a numpy export of main, sent with ``foreach_env_runner``), never as a file.

Every random draw follows ``seed``: the network (RLlib's ``debugging(seed=...)``), each runner's games, seats and
opponents (RLlib seeds runner i's env with seed + i), and the evaluation.

At the end ``main`` is exported to the project's numpy ``.npz`` (``model.npz``), which plays anywhere an
agent is accepted (``ppo:path=runs/NAME/model.npz``) without Ray or torch, and is evaluated with
seat-rotated games against the config's opponents, as ``packetrow train`` does for SB3.

Ray (the ``[ray]`` extra) is imported by the functions that train, not at the top: the config, its checks and the
league's decision load without it (the config reference, the tests of the core install).

    packetrow train --config configs/rllib_quick.yaml               # a local Ray instance
    packetrow train --config configs/rllib_quick.yaml --ray auto    # the running cluster
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from packetrow_agents.policy import ModelFormatError, NumpyPolicy, PolicyAgent
from packetrow_arena.ray_cluster import import_ray, ray_session
from packetrow_env.env import REWARD_MODES
from packetrow_env.observation import MODES

from .atomic_files import write_text
from .config import (ACTIVATIONS, ConfigError, check_agent_specs, check_choice, check_net_arch, check_positive,
                     check_run_name, load_sections, option)
from .evaluation import EVAL_SEED_OFFSET, evaluate
from .pool import EXPLOITERS, OpponentPool, check_mixture
from .rllib_vector_env import LearnerVectorEnv
from .run_dir import RLLIB_RUN_FILES, prepare_out, save_policy, write_yaml
from .update_threads import single_threaded_openblas


@dataclass
class RLlibEnvConfig:
    """The training games."""

    num_players: int = option("the player count of every game (2-5)", 2)
    observation_mode: str = option(f"what every seat observes: {' | '.join(MODES)}", "tracked")
    reward_mode: str = option(f"{' | '.join(REWARD_MODES)} (the final reward of every seat)", "rank")


@dataclass
class RLlibPPOConfig:
    """RLlib PPO's hyperparameters (RLlib names)."""

    iterations: int = option("training iterations (one sampling round and one update each)", 20)
    train_batch_size: int = option("main's env steps (its own moves) per iteration", 4000)
    minibatch_size: int = option("minibatch size; at most train_batch_size", 500)
    num_epochs: int = option("passes over each iteration's batch", 4)
    lr: float = option("the learning rate", 0.0003)
    gamma: float = option("discount factor, in [0, 1]", 0.995)
    lambda_: float = option("GAE's lambda, in [0, 1]", 0.95)
    clip_param: float = option("PPO's clipping of the probability ratio", 0.2)
    entropy_coeff: float = option("weight of the entropy bonus", 0.01)
    vf_loss_coeff: float = option("weight of the value loss", 0.5)
    net_arch: list = option("hidden layer widths of main's policy and value networks", factory=lambda: [128, 128])
    activation: str = option(" | ".join(ACTIVATIONS), "tanh")


@dataclass
class RLlibRunnersConfig:
    """Who samples the games."""

    num_env_runners: int = option("Ray actors sampling games (0: the driver samples)", 1)
    num_envs_per_env_runner: int = option("games each runner steps together in one batched engine", 64)
    num_cpus: int = option("CPUs of a local Ray instance (ignored on a cluster)", 2)


@dataclass
class LeagueConfig:
    """When main is frozen into the opponent pool, and who the opponents are."""

    win_rate_threshold: float = option("main's recent win rate (a shared win counts 1/k) that freezes a new copy "
                                       "of it into the pool, in [0, 1]", 0.7)
    window: int = option("games that win rate is taken over", 100)
    mixture: dict = option("weight per opponent source (latest, uniform, recent: frozen copies of main; or an agent "
                           "spec), drawn per opponent seat and game; normalised",
                           factory=lambda: {"latest": 0.3, "uniform": 0.05, "recent": 0.2, "heuristic": 0.3,
                                            "random": 0.15})
    max_snapshots: int = option("frozen copies kept in the pool; the oldest goes when there are more", 20)
    recent_decay: float = option("the source recent weighs a copy by recent_decay ** age (0 = newest), in (0, 1]",
                                 0.7)


@dataclass
class RLlibEvalConfig:
    """The final evaluation of main's numpy export (argmax) against fixed bots."""

    games: int = option("seat-rotated games per opponent and player count (0: none)", 200)
    num_players: list = option("player counts of the evaluation", factory=lambda: [2])
    opponents: list = option("agent specs main plays against, one at a time",
                             factory=lambda: ["random", "heuristic"])


@dataclass
class RLlibConfig:
    """A whole RLlib training run."""

    trainer: str = option("rllib (this config; the [ray] extra)", "rllib")
    name: str = option("the run's name: its directory runs/NAME and the model's metadata", "rllib_quick")
    seed: int = option("seed of every random draw: the network, each env runner's games, seats and opponents "
                       "(runner i: seed + i), the evaluation", 0)
    ray_address: str = option('"" starts a local Ray instance; "auto" or "host:port" joins that cluster', "")
    torch_threads: int = option("torch threads of the driver (its learner, and its sampling with 0 env runners)", 1)
    env: RLlibEnvConfig = option("the training games", factory=RLlibEnvConfig)
    ppo: RLlibPPOConfig = option("RLlib PPO's hyperparameters", factory=RLlibPPOConfig)
    runners: RLlibRunnersConfig = option("who samples the games", factory=RLlibRunnersConfig)
    league: LeagueConfig = option("the league of frozen copies of main", factory=LeagueConfig)
    eval: RLlibEvalConfig = option("the final evaluation", factory=RLlibEvalConfig)


def config_from_dict(data, source: str = "config") -> RLlibConfig:
    """A checked RLlibConfig from plain data (a parsed YAML file); unknown keys raise ConfigError."""
    config = load_sections(RLlibConfig, data, source)
    if config.trainer != "rllib":
        raise ConfigError(f"{source}: trainer must be rllib for an RLlib config, got {config.trainer!r}")
    check_run_name(f"{source}: name", config.name)
    for where, value, zero_ok in [("seed", config.seed, True), ("torch_threads", config.torch_threads, False),
                                  ("ppo.iterations", config.ppo.iterations, False),
                                  ("ppo.train_batch_size", config.ppo.train_batch_size, False),
                                  ("ppo.minibatch_size", config.ppo.minibatch_size, False),
                                  ("ppo.num_epochs", config.ppo.num_epochs, False), ("ppo.lr", config.ppo.lr, False),
                                  ("ppo.clip_param", config.ppo.clip_param, False),
                                  ("ppo.entropy_coeff", config.ppo.entropy_coeff, True),
                                  ("ppo.vf_loss_coeff", config.ppo.vf_loss_coeff, True),
                                  ("runners.num_env_runners", config.runners.num_env_runners, True),
                                  ("runners.num_envs_per_env_runner", config.runners.num_envs_per_env_runner, False),
                                  ("runners.num_cpus", config.runners.num_cpus, False),
                                  ("league.window", config.league.window, False),
                                  ("league.max_snapshots", config.league.max_snapshots, False),
                                  ("eval.games", config.eval.games, True)]:
        check_positive(f"{source}: {where}", value, zero_ok)
    for where, value in [("ppo.gamma", config.ppo.gamma), ("ppo.lambda_", config.ppo.lambda_),
                         ("league.win_rate_threshold", config.league.win_rate_threshold),
                         ("league.recent_decay", config.league.recent_decay)]:
        if not 0 <= value <= 1:
            raise ConfigError(f"{source}: {where} must be in [0, 1], got {value!r}")
    if config.ppo.minibatch_size > config.ppo.train_batch_size:
        raise ConfigError(f"{source}: ppo.minibatch_size ({config.ppo.minibatch_size}) must be at most "
                          f"ppo.train_batch_size ({config.ppo.train_batch_size})")
    if isinstance(config.env.num_players, bool) or config.env.num_players not in range(2, 6):
        raise ConfigError(f"{source}: env.num_players must be one of 2, 3, 4, 5, got {config.env.num_players!r}")
    check_choice(f"{source}: env.observation_mode", config.env.observation_mode, MODES)
    check_choice(f"{source}: env.reward_mode", config.env.reward_mode, REWARD_MODES)
    check_choice(f"{source}: ppo.activation", config.ppo.activation, ACTIVATIONS)
    check_net_arch(f"{source}: ppo.net_arch", config.ppo.net_arch)
    if config.league.recent_decay == 0:
        raise ConfigError(f"{source}: league.recent_decay must be in (0, 1], got 0")
    try:
        config.league.mixture = check_mixture(config.league.mixture)
    except ValueError as error:
        raise ConfigError(f"{source}: league.mixture: {error}") from None
    sb3_only = [s for s in ("pfsp", EXPLOITERS) if s in config.league.mixture]
    if sb3_only:
        raise ConfigError(f"{source}: league.mixture: {', '.join(sb3_only)} are sources of the SB3 trainer's pool "
                          "(trainer: sb3), which records results and trains exploiters; RLlib's draws from latest, "
                          "uniform, recent and agent specs")
    check_agent_specs(f"{source}: eval.opponents", config.eval.opponents)
    return config


# --------------------------------------------------------------------------- the league
class League:
    """How many copies of main are frozen, and when the next one is: main's recent win rate at the threshold."""

    def __init__(self, win_rate_threshold: float):
        self.win_rate_threshold = win_rate_threshold
        self.versions = 0  # frozen copies of main so far (its initial weights are the first)

    def freeze(self, win_rate: float | None) -> bool:
        """Whether main, at ``win_rate`` (None: no game finished yet), is frozen now; counts the new copy."""
        if self.versions and (win_rate is None or win_rate < self.win_rate_threshold):
            return False
        self.versions += 1
        return True


def send_snapshot(algorithm, policy: NumpyPolicy, version: int) -> None:
    """Add a frozen copy of main to the opponent pool of every env runner (the weights travel with the call)."""

    def add(runner):
        if runner.env is not None:  # the driver's runner has no env when remote runners sample
            runner.env.unwrapped.add_snapshot(policy, version)

    algorithm.env_runner_group.foreach_env_runner(add, local_env_runner=True)


def _league_callback(league: League, config: "RLlibConfig"):
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

    window = config.league.window

    class LeagueCallback(RLlibCallback):
        """Logs main's wins; freezes a copy of main into the pool when it wins often enough."""

        def on_episode_end(self, *, episode, metrics_logger, **kwargs):
            metrics_logger.log_value("main_win_rate", episode.get_infos(-1)["win_share"], reduce="mean",
                                     window=window)

        def on_train_result(self, *, algorithm, result, **kwargs):
            win_rate = result.get(ENV_RUNNER_RESULTS, {}).get("main_win_rate")
            if league.freeze(win_rate):
                send_snapshot(algorithm, export_main(algorithm, config), league.versions)
            result["league_size"] = league.versions + 1
            result["main_win_rate"] = win_rate or 0.0

    return LeagueCallback


def make_env(env_config: dict):
    """The env of one RLlib env runner: ``env_config["num_envs"]`` games of ``LearnerVectorEnv``, its own pool."""
    # for the rest of this runner's process: the snapshot opponents' small numpy products ran 10x slower with
    # OpenBLAS's threads spinning against the learner's on 2 cores (measured, docs/ray.md)
    single_threaded_openblas()
    pool = OpponentPool(env_config["mixture"], env_config["max_snapshots"], env_config["recent_decay"])
    return LearnerVectorEnv(env_config["num_envs"], pool, env_config["num_players"],
                            env_config["observation_mode"], env_config["reward_mode"])


def build_algorithm(config: RLlibConfig):
    """The RLlib PPO algorithm of ``config`` with main's initial weights in every runner's pool (Ray must be
    initialised); (algorithm, league)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from .rllib_env import MaskedPPOTorchRLModule

    # measured on 2 shared cores: a second thread made every forward pass and update 5x slower (docs/ray.md)
    torch.set_num_threads(config.torch_threads)
    register_env("packetrow_learners", make_env)
    league = League(config.league.win_rate_threshold)
    ppo = config.ppo
    env_config = {**dataclasses.asdict(config.env), "mixture": config.league.mixture,
                  "max_snapshots": config.league.max_snapshots, "recent_decay": config.league.recent_decay}
    algo_config = (
        PPOConfig()
        # RLlib's env check steps random unmasked actions, which the env refuses as illegal (it never
        # swaps an illegal action for a legal one); the tests check the env's API instead
        .environment("packetrow_learners", env_config=env_config, disable_env_checking=True)
        # the env is a whole batch of games: RLlib asks its vector entry point, not one env per game
        .env_runners(num_env_runners=config.runners.num_env_runners,
                     num_envs_per_env_runner=config.runners.num_envs_per_env_runner,
                     gym_env_vectorize_mode="vector_entry_point")
        .training(train_batch_size_per_learner=ppo.train_batch_size, minibatch_size=ppo.minibatch_size,
                  num_epochs=ppo.num_epochs, lr=ppo.lr, gamma=ppo.gamma, lambda_=ppo.lambda_,
                  clip_param=ppo.clip_param, entropy_coeff=ppo.entropy_coeff, vf_loss_coeff=ppo.vf_loss_coeff)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=DefaultModelConfig(
            fcnet_hiddens=list(ppo.net_arch), fcnet_activation=ppo.activation, vf_share_layers=False)))
        .callbacks(_league_callback(league, config))
        .fault_tolerance(restart_failed_env_runners=False)  # a broken runner stops the run, loudly
        .debugging(seed=config.seed)
    )
    algorithm = algo_config.build_algo()
    league.freeze(None)
    send_snapshot(algorithm, export_main(algorithm, config), league.versions)
    return algorithm, league


def export_main(algorithm, config: RLlibConfig, metadata: dict | None = None):
    """``main``'s policy network as the project's NumpyPolicy (plays with numpy alone)."""
    module = algorithm.get_module()
    encoder = getattr(module.encoder, "actor_encoder", None) or module.encoder.encoder
    layers = list(encoder.net.mlp) + list(module.pi.net.mlp)
    linear = [layer for layer in layers if isinstance(layer, torch.nn.Linear)]
    others = {type(layer).__name__ for layer in layers if not isinstance(layer, torch.nn.Linear)}
    if others - {"Tanh", "ReLU"}:
        raise ModelFormatError(f"cannot export layers {sorted(others)}; the numpy policy runs Linear + tanh/relu")
    arrays = [(layer.weight.detach().cpu().numpy().T.copy(), layer.bias.detach().cpu().numpy().copy())
              for layer in linear]
    meta = {"trainer": "rllib", "config": config.name, "seed": config.seed, **(metadata or {})}
    return NumpyPolicy([w for w, _ in arrays[:-1]], [b for _, b in arrays[:-1]], arrays[-1][0], arrays[-1][1],
                       config.ppo.activation, config.env.observation_mode, meta)


@dataclass
class RLlibResult:
    """What an RLlib run produced."""

    out: Path
    npz_path: Path
    iterations: list[dict]
    evaluation: list[dict]
    wall_seconds: float
    env_steps: int


def train(config: RLlibConfig, out=None, ray_address: str | None = None, progress: bool = True,
          overwrite: bool = False) -> RLlibResult:
    """Run an RLlib self-play training run on a local Ray instance or the cluster at ``ray_address``.

    ``overwrite``: the run may replace an earlier run's files in ``out`` (refused otherwise).
    """
    import_ray()  # before anything is written: without the extra, only a one-line error
    started = time.perf_counter()
    out = Path(out) if out is not None else Path("runs") / config.name
    address = ray_address if ray_address is not None else (config.ray_address or None)
    rows = []
    # connected first: an address nobody answers is an error before anything in ``out`` changes
    with ray_session(address, num_cpus=config.runners.num_cpus):
        prepare_out(out, fresh=True, overwrite=overwrite, files=RLLIB_RUN_FILES, folders=())
        write_yaml(out / "config.yaml", dataclasses.asdict(config))
        algorithm, league = build_algorithm(config)
        try:
            bar = tqdm(range(config.ppo.iterations), desc="iterations", unit="it", file=sys.stderr,
                       disable=not progress)
            for _ in bar:
                result = algorithm.train()
                row = _iteration_row(result, time.perf_counter() - started)
                rows.append(row)
                bar.set_postfix(win=f"{row['main_win_rate']:.2f}", league=row["league_size"],
                                steps=row["env_steps"])
            policy = export_main(algorithm, config, {"env_steps": rows[-1]["env_steps"] if rows else 0,
                                                     "league_size": league.versions + 1})
        finally:
            algorithm.stop()
    npz_path = save_policy(policy, out / "model.npz")
    write_text(out / "iterations.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    evaluation = []
    if config.eval.games:
        agent = PolicyAgent(policy=policy, deterministic=True)
        evaluation = evaluate(agent, config.eval.opponents, config.eval.num_players, config.eval.games,
                              config.seed + EVAL_SEED_OFFSET, 1, config.env.observation_mode)
    return RLlibResult(out, npz_path, rows, evaluation, time.perf_counter() - started,
                       rows[-1]["env_steps"] if rows else 0)


def _iteration_row(result: dict, wall: float) -> dict:
    from ray.rllib.core import DEFAULT_MODULE_ID
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, LEARNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    runners = result.get(ENV_RUNNER_RESULTS, {})
    learner = result.get(LEARNER_RESULTS, {}).get(DEFAULT_MODULE_ID, {})
    return {"iteration": int(result.get("training_iteration", 0)),
            "policy_loss": float(learner.get("policy_loss", float("nan"))),
            "entropy": float(learner.get("entropy", float("nan"))),
            "env_steps": int(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)),
            "main_win_rate": float(result.get("main_win_rate", 0.0)),
            "league_size": int(result.get("league_size", 2)), "wall_seconds": round(wall, 2)}
