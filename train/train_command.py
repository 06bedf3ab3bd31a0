"""``packetrow train``: self-play training from a YAML config, SB3's MaskablePPO or RLlib's PPO (``trainer: rllib``)."""

from __future__ import annotations

import sys

from packetrow_agents.policy import ModelFormatError, ModelNotFoundError, NumpyPolicy
from packetrow_arena.ray_cluster import RayUnavailableError
from packetrow_arena.worker_pool import WorkerDied
from . import league, rllib_selfplay
from .config import (TRAINERS, ConfigError, TrainConfig, check_choice, check_config, config_from_dict,
                     read_config)
from .divergence import TrainingDivergedError
from .evaluation import format_evaluation
from .policy_export import load_start, network_of
from .run_dir import environment_versions, latest_checkpoint, out_dir

INTERRUPTED = 130  # the exit status of a run ended by Ctrl-C (128 + SIGINT, as a shell reports it)


def _train(args) -> int:
    """Run ``packetrow train``; Ctrl-C ends it with one line, not a traceback."""
    try:
        return _train_config(args)
    except KeyboardInterrupt:
        print("packetrow train: interrupted", file=sys.stderr)
        return INTERRUPTED


def _train_config(args) -> int:
    try:
        path, data = read_config(args.config)
        trainer = data.get("trainer", "sb3") if isinstance(data, dict) else "sb3"
        check_choice(f"{path}: trainer", trainer, TRAINERS)
        if trainer == "rllib":
            return _train_rllib(args, data)
        if args.ray is not None:
            raise ConfigError("--ray applies to RLlib configs (trainer: rllib, e.g. configs/rllib_quick.yaml); "
                              f"{path} trains with SB3 on this machine")
        config = config_from_dict(data, str(path))
        if args.total_timesteps is not None:
            config.total_timesteps = args.total_timesteps
            check_config(config, args.config)
        start = start_policy(args.start, config)
    except ConfigError as error:
        args.parser.error(str(error))
    try:
        result = league.train(config, out=args.out, resume=args.resume,
                              progress_bar=False if args.no_progress else None, overwrite=args.overwrite,
                              trust_checkpoint=args.trust_checkpoint, start=start)
    except (TrainingDivergedError, WorkerDied) as error:  # not usage errors: the config was read, the run went wrong
        print(f"packetrow train: error: {error}", file=sys.stderr)
        return 1
    except ConfigError as error:
        args.parser.error(str(error))
    except KeyboardInterrupt:
        checkpoint = latest_checkpoint(out_dir(config, args.out))
        then = (f"resume it with --resume {checkpoint} --trust-checkpoint" if checkpoint is not None
                else "it had written no checkpoint yet")
        print(f"packetrow train: interrupted; {then}", file=sys.stderr)
        return INTERRUPTED
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


def start_policy(start: str | None, config: TrainConfig) -> NumpyPolicy | None:
    """The policy export ``--start`` names (``ppo``: the shipped policy), checked against ``config`` before anything
    is written: the run's learner must have the policy's observation and network (``network_of``)."""
    if start is None:
        return None
    try:
        policy = load_start(start)
    except (ModelFormatError, ModelNotFoundError) as error:
        raise ConfigError(f"--start: {error}") from None
    differ = {key: value for key, value in network_of(policy).items()
              if getattr(getattr(config, key.split(".")[0]), key.split(".")[1]) != value}
    if differ:
        raise ConfigError(f"--start {start}: the config's learner differs from the policy's; set "
                          + ", ".join(f"{key}: {value}" for key, value in differ.items())
                          + " in the config to start from it")
    return policy


def _train_rllib(args, data: dict) -> int:
    try:
        config = rllib_selfplay.config_from_dict(data, str(args.config))
        if args.resume or args.start or args.total_timesteps is not None:
            raise ConfigError("--resume, --start and --total-timesteps apply to SB3 configs; an RLlib run starts "
                              "afresh and its length is ppo.iterations")
        result = rllib_selfplay.train(config, out=args.out, ray_address=args.ray, progress=not args.no_progress,
                                      overwrite=args.overwrite)
    except (ConfigError, RayUnavailableError) as error:
        args.parser.error(str(error))
    minutes, seconds = divmod(result.wall_seconds, 60)
    last = result.iterations[-1] if result.iterations else {}
    print(f"\nTrained {len(result.iterations)} RLlib iterations ({result.env_steps} of main's env steps) in "
          f"{int(minutes)} min {seconds:.0f} s; main froze {last.get('league_size', 2) - 1} copies of itself "
          "into the opponent pool.")
    if result.evaluation:
        print(f"\nFinal evaluation ({config.eval.games} games per line, main's numpy export, argmax):")
        print(format_evaluation(result.evaluation))
    print(f"\nWrote {result.npz_path} (play it: --agents ppo:path={result.npz_path}), "
          f"{result.out / 'iterations.jsonl'} and {result.out / 'config.yaml'}.")
    return 0


def add_arguments(parser) -> None:
    """Add ``packetrow train``'s arguments to its parser."""
    parser.description = ("Train one policy for every player count with MaskablePPO: the learner takes a random seat, "
                          "the other seats come from a pool of its own snapshots and scripted bots. Saves "
                          "checkpoints, a numpy export, TensorBoard logs and periodic evaluations against fixed bots.")
    parser.add_argument("--config", required=True, metavar="YAML",
                        help="training config: a YAML file, or the name of a shipped one (quick, ppo_packetrow, ...)")
    parser.add_argument("--resume", metavar="CHECKPOINT",
                        help="continue from an SB3 checkpoint (.zip) your own run wrote; the step count continues "
                             "up to total_timesteps. Needs --trust-checkpoint")
    parser.add_argument("--start", metavar="POLICY",
                        help="start a fresh run from a policy export (.npz) or a shipped policy's name ('ppo', ...): its weights "
                             "for the learner's policy and the value network's hidden layers; the config must give "
                             "the policy's observation and network. Not with --resume")
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
    parser.set_defaults(run=_train, parser=parser)

