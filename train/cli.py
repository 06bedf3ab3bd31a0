"""The ``packetrow`` command line: one subcommand per job."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from packetrow_agents.terminal import add_parser as add_play_parser
from packetrow_env.knowledge import MODES
from packetrow_web.app import add_command as add_serve_command
from .curve import add_command as add_curve_command
from .selfplay import add_command as add_train_command
from .tournament import add_commands as add_tournament_commands


def _demo(args) -> int:
    from packetrow_env.engine import Game
    from packetrow_env.render import describe_action, render

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
    from packetrow_env.compact_observation import encoder
    from packetrow_env.observation import layout_table

    print(layout_table(args.mode) if args.encoding == "onehot" else encoder().layout_table(args.mode))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``packetrow`` command."""
    parser = argparse.ArgumentParser(prog="packetrow", description="Packet Row: environment, agents and training.")
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
    add_play_parser(sub)
    add_tournament_commands(sub)
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
