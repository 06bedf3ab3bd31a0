"""The ``packetrow`` command line: one subcommand per job."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import packetrow_env
from packetrow_agents.terminal import add_parser as add_play_parser
from packetrow_env.compact_observation import encoder as compact_encoder
from packetrow_env.engine import Game
from packetrow_env.game_info import GAME_TYPE, describe
from packetrow_env.knowledge import MODES
from packetrow_env.observation import layout_table
from packetrow_env.render import describe_action, render
from packetrow_web.app import add_command as add_serve_command
from . import rllib_selfplay, selfplay
from .config import TRAINERS, ConfigError, check_choice, check_config, config_from_dict, read_config
from .curve import add_command as add_curve_command
from .evaluation import format_evaluation
from .ray_cluster import RayUnavailableError
from .run_dir import environment_versions
from .exploit import add_command as add_exploit_command
from .imitation import add_command as add_imitate_command
from .ladder import add_command as add_ladder_command
from .population import add_command as add_population_command
from .tournament import add_commands as add_tournament_commands


def _demo(args) -> int:
    game = Game.new(args.players, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    while not game.is_over:
        p = game.current_player
        action = int(rng.choice(game.legal_actions()))
        if not args.quiet:
            print(f"round {game.state.round:2d}  player {p}: {describe_action(game, action)}")
        game.step(action)
    print(render(game, seat=0, names=["random"] * args.players))  # every seat a bot: none is "you"
    return 0


def _layout(args) -> int:
    print(layout_table(args.mode) if args.encoding == "onehot" else compact_encoder().layout_table(args.mode))
    return 0


def _info(args) -> int:
    description = describe(args.players)
    if args.json:
        print(json.dumps(description, indent=2))
        return 0
    rows = _flatten("", description)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        shown = f"{value:,}" if isinstance(value, int) else value  # the longest-game bound has 12 digits
        print(f"{name:<{width}}  {shown}")
    return 0


def _flatten(prefix: str, value) -> list[tuple[str, object]]:
    """(dotted name, value) rows of nested dicts, e.g. ('observation_sizes.tracked.onehot', 2536)."""
    if not isinstance(value, dict):
        return [(prefix, value)]
    return [row for name, item in value.items() for row in _flatten(f"{prefix}.{name}" if prefix else name, item)]


# --------------------------------------------------------------------------- packetrow train
def _train(args) -> int:
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
    except ConfigError as error:
        args.parser.error(str(error))
    try:
        result = selfplay.train(config, out=args.out, resume=args.resume,
                                progress_bar=False if args.no_progress else None, overwrite=args.overwrite,
                                trust_checkpoint=args.trust_checkpoint)
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


def _train_rllib(args, data: dict) -> int:
    try:
        config = rllib_selfplay.config_from_dict(data, str(args.config))
        if args.resume or args.total_timesteps is not None:
            raise ConfigError("--resume and --total-timesteps apply to SB3 configs; an RLlib run's length is "
                              "ppo.iterations")
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


def add_train_command(subparsers) -> None:
    """Register the ``train`` subcommand on the ``packetrow`` parser's subparsers."""
    parser = subparsers.add_parser(
        "train", help="self-play training from a YAML config (SB3 MaskablePPO, or RLlib PPO with trainer: rllib)",
        description="Train one policy for every player count with MaskablePPO: the learner takes a random seat, "
                    "the other seats come from a pool of its own snapshots and scripted bots. Saves checkpoints, "
                    "a numpy export, TensorBoard logs and periodic evaluations against fixed bots.")
    parser.add_argument("--config", required=True, metavar="YAML",
                        help="training config: a YAML file, or the name of a shipped one (quick, ppo_packetrow, ...)")
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
    parser.set_defaults(run=_train, parser=parser)


# --------------------------------------------------------------------------- the parser
def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``packetrow`` command."""
    parser = argparse.ArgumentParser(prog="packetrow", description="Packet Row: environment, agents and training.")
    parser.add_argument("--version", action="version", version=f"packetrow {packetrow_env.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play and print one full game between random players",
                          description="Play one full game between random players and print every move and the scores.")
    demo.add_argument("--players", type=int, default=4, choices=range(2, 6), help="number of players (default 4)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the deal and the players (default 0)")
    demo.add_argument("--quiet", action="store_true", help="print only the final table")
    demo.set_defaults(run=_demo)
    layout = sub.add_parser("layout", help="print the observation layout as a Markdown table",
                            description="Print the observation vector's pieces (name, offset, shape, meaning).")
    layout.add_argument("--mode", default="tracked", choices=MODES,
                        help="observation mode (online and full append deck_contents; default tracked)")
    layout.add_argument("--encoding", default="onehot", choices=("onehot", "compact"),
                        help="observation encoding (default onehot, the AEC env's default)")
    layout.set_defaults(run=_layout)
    info = sub.add_parser("info", help="print the game's description: players, actions, longest game, sizes",
                          description="Print the game's description (packetrow_env.game_info, after OpenSpiel's "
                                      "GameType and GameInfo): env id, player counts, utility per reward mode, "
                                      "actions, the longest-game bound and its pieces, observation sizes.")
    info.add_argument("--players", type=int, default=4,
                      choices=range(GAME_TYPE.min_num_players, GAME_TYPE.max_num_players + 1),
                      help="the player count the sizes are for (default 4)")
    info.add_argument("--json", action="store_true", help="print JSON instead of a table")
    info.set_defaults(run=_info)
    add_play_parser(sub)
    add_tournament_commands(sub)
    add_ladder_command(sub)
    add_population_command(sub)
    add_exploit_command(sub)
    add_imitate_command(sub)
    add_train_command(sub)
    add_curve_command(sub)
    add_serve_command(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``packetrow`` command."""
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
