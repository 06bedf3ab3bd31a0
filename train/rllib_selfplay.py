"""Self-play training with RLlib's PPO (new API stack) and action masking, locally or on a Ray cluster.

League. A trainable module ``main`` plays one seat of every game (a different seat each episode); the
other seats are drawn per episode from the league's frozen opponents: ``random`` (a uniformly random
legal action) at first, then frozen copies ``main_v1``, ``main_v2``, ... of ``main``. A copy is added
whenever ``main`` has won at least ``league.win_rate_threshold`` of its recent games against the league
(RLlib's self-play pattern: ``Algorithm.add_module`` and a new agent-to-module mapping). From then on
the newest copies are drawn most often (``league.recent_share`` of the seats), the rest uniformly.

At the end ``main`` is exported to the project's numpy ``.npz`` (``model.npz``), which plays anywhere an
agent is accepted (``ppo:path=runs/NAME/model.npz``) without Ray or torch, and is evaluated with
seat-rotated games against the config's opponents, as ``packetrow train`` does for SB3.

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

import numpy as np

from packetrow_agents.policy import ModelFormatError, NumpyPolicy, PolicyAgent
from packetrow_env.env import REWARD_MODES
from packetrow_env.observation import MODES

from .config import (ACTIVATIONS, ConfigError, check_agent_specs, check_choice, check_net_arch, check_positive,
                     check_run_name, load_sections, option)
from .evaluation import EVAL_SEED_OFFSET, evaluate
from .ray_cluster import import_ray, ray_session
from .run_dir import RLLIB_RUN_FILES, prepare_out, write_yaml
from .stats import win_shares

MAIN, RANDOM = "main", "random"


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
    train_batch_size: int = option("env steps of all seats per iteration", 4000)
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
    num_envs_per_env_runner: int = option("games each runner steps together", 4)
    num_cpus: int = option("CPUs of a local Ray instance (ignored on a cluster)", 2)


@dataclass
class LeagueConfig:
    """When main is frozen into the league, and how often the newest copy plays."""

    win_rate_threshold: float = option("main's recent win rate (a shared win counts 1/k) that freezes a new copy "
                                       "of it, in [0, 1]", 0.7)
    window: int = option("games that win rate is taken over", 100)
    recent_share: float = option("share of opponent seats given to the newest copy, in [0, 1]", 0.5)


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
    seed: int = option("seed of the games and the network", 0)
    ray_address: str = option('"" starts a local Ray instance; "auto" or "host:port" joins that cluster', "")
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
    for where, value, zero_ok in [("seed", config.seed, True), ("ppo.iterations", config.ppo.iterations, False),
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
                                  ("eval.games", config.eval.games, True)]:
        check_positive(f"{source}: {where}", value, zero_ok)
    for where, value in [("ppo.gamma", config.ppo.gamma), ("ppo.lambda_", config.ppo.lambda_),
                         ("league.win_rate_threshold", config.league.win_rate_threshold),
                         ("league.recent_share", config.league.recent_share)]:
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
    check_agent_specs(f"{source}: eval.opponents", config.eval.opponents)
    return config


# --------------------------------------------------------------------------- the league
class League:
    """Who sits where: ``main`` at one seat per episode, frozen opponents at the others."""

    def __init__(self, num_players: int, recent_share: float):
        self.num_players = num_players
        self.recent_share = recent_share
        self.versions = 0  # frozen copies of main so far

    def opponents(self) -> list[str]:
        """The module ids opponents are drawn from: random until the first copy, then the copies."""
        return [f"main_v{v}" for v in range(1, self.versions + 1)] or [RANDOM]

    def mapping_fn(self):
        """An agent-to-module mapping: per episode, main at one seat, drawn opponents at the others."""
        opponents = self.opponents()
        share, n = self.recent_share, self.num_players

        def agent_to_module(agent_id, episode, **kwargs):
            # seeded by the episode id, so every seat of an episode agrees on where main sits
            rng = np.random.default_rng(abs(hash(episode.id_)) % 2**63)
            main_seat = int(rng.integers(n))
            seat = agent_seat(agent_id)
            if seat == main_seat:
                return MAIN
            draws = np.random.default_rng([abs(hash(episode.id_)) % 2**63, seat])
            if len(opponents) > 1 and draws.random() < share:
                return opponents[-1]
            return opponents[int(draws.integers(len(opponents)))]

        return agent_to_module


def agent_seat(agent_id) -> int:
    """The seat of an RLlib agent id (``player_3`` -> 3, as ``rllib_env.agent_name`` names them)."""
    return int(str(agent_id).rsplit("_", 1)[1])


def main_win_share(episode) -> float | None:
    """main's share of the win in a finished episode (1/k of a win shared by k), None if main did not play.

    ``episode``: RLlib's MultiAgentEpisode, whose last infos carry the final scores (``rllib_env``).
    """
    for agent, info in episode.get_infos(-1).items():
        if episode.module_for(agent) == MAIN:
            return win_shares(info["scores"])[agent_seat(agent)]
    return None


def _league_callback(league: League, threshold: float, window: int):
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

    class LeagueCallback(RLlibCallback):
        """Logs main's wins; freezes a copy of main into the league when it wins often enough."""

        def on_episode_end(self, *, episode, metrics_logger, **kwargs):
            share = main_win_share(episode)
            if share is not None:
                metrics_logger.log_value("main_win_rate", share, reduce="mean", window=window)

        def on_train_result(self, *, algorithm, result, **kwargs):
            win_rate = result.get(ENV_RUNNER_RESULTS, {}).get("main_win_rate", 0.0)
            if win_rate >= threshold:
                league.versions += 1
                module_id = f"main_v{league.versions}"
                main = algorithm.get_module(MAIN)
                algorithm.add_module(module_id=module_id, module_spec=RLModuleSpec.from_module(main),
                                     new_agent_to_module_mapping_fn=league.mapping_fn())
                # the copy starts from main's current weights and is never trained
                algorithm.set_state({"learner_group": {"learner": {"rl_module": {module_id: main.get_state()}}}})
                algorithm.env_runner_group.sync_weights(policies=[module_id])
            result["league_size"] = len(league.opponents()) + 1
            result["main_win_rate"] = win_rate

    return LeagueCallback


def build_algorithm(config: RLlibConfig):
    """The RLlib PPO algorithm of ``config`` (Ray must be initialised)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from .rllib_env import MaskedPPOTorchRLModule, PacketRowMultiAgentEnv, RandomLegalRLModule

    register_env("packetrow", lambda env_config: PacketRowMultiAgentEnv(env_config))
    league = League(config.env.num_players, config.league.recent_share)
    ppo = config.ppo
    algo_config = (
        PPOConfig()
        # RLlib's env check steps random unmasked actions, which the env refuses as illegal (it never
        # swaps an illegal action for a legal one); the tests check the env's API instead
        .environment("packetrow", env_config={**dataclasses.asdict(config.env), "seed": config.seed},
                     disable_env_checking=True)
        .env_runners(num_env_runners=config.runners.num_env_runners,
                     num_envs_per_env_runner=config.runners.num_envs_per_env_runner)
        .training(train_batch_size_per_learner=ppo.train_batch_size, minibatch_size=ppo.minibatch_size,
                  num_epochs=ppo.num_epochs, lr=ppo.lr, gamma=ppo.gamma, lambda_=ppo.lambda_,
                  clip_param=ppo.clip_param, entropy_coeff=ppo.entropy_coeff, vf_loss_coeff=ppo.vf_loss_coeff)
        .multi_agent(policies={MAIN, RANDOM}, policy_mapping_fn=league.mapping_fn(), policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MAIN: RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=DefaultModelConfig(
                fcnet_hiddens=list(ppo.net_arch), fcnet_activation=ppo.activation, vf_share_layers=False)),
            RANDOM: RLModuleSpec(module_class=RandomLegalRLModule)}))
        .callbacks(_league_callback(league, config.league.win_rate_threshold, config.league.window))
        .fault_tolerance(restart_failed_env_runners=False)  # a broken runner stops the run, loudly
        .debugging(seed=config.seed)
    )
    return algo_config.build_algo(), league


def export_main(algorithm, config: RLlibConfig, metadata: dict | None = None):
    """``main``'s policy network as the project's NumpyPolicy (plays with numpy alone)."""
    import torch  # the [ray] extra

    module = algorithm.get_module(MAIN)
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
    from tqdm import tqdm  # the [ray] extra

    import_ray()  # before anything is written: without the extra, only a one-line error
    started = time.perf_counter()
    out = Path(out) if out is not None else Path("runs") / config.name
    prepare_out(out, fresh=True, overwrite=overwrite, files=RLLIB_RUN_FILES, folders=())
    write_yaml(out / "config.yaml", dataclasses.asdict(config))
    address = ray_address if ray_address is not None else (config.ray_address or None)
    rows = []
    with ray_session(address, num_cpus=config.runners.num_cpus):
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
                                                     "league_size": len(league.opponents()) + 1})
        finally:
            algorithm.stop()
    npz_path = policy.save(out / "model.npz")
    (out / "iterations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    evaluation = []
    if config.eval.games:
        agent = PolicyAgent(policy=policy, deterministic=True)
        evaluation = evaluate(agent, config.eval.opponents, config.eval.num_players, config.eval.games,
                              config.seed + EVAL_SEED_OFFSET, 1, config.env.observation_mode)
    return RLlibResult(out, npz_path, rows, evaluation, time.perf_counter() - started,
                       rows[-1]["env_steps"] if rows else 0)


def _iteration_row(result: dict, wall: float) -> dict:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    runners = result.get(ENV_RUNNER_RESULTS, {})
    return {"iteration": int(result.get("training_iteration", 0)),
            "env_steps": int(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)),
            "main_win_rate": float(result.get("main_win_rate", 0.0)),
            "league_size": int(result.get("league_size", 2)), "wall_seconds": round(wall, 2)}
