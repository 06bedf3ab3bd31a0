"""The ``packetrow`` command: one table of subcommands, each loaded only when it runs.

``COMMANDS`` names every subcommand, its one-line help and the function that adds its arguments
(``module:function``, called with the subcommand's ``argparse`` parser). ``packetrow --help`` and an unknown
subcommand need only the table, so they import no subcommand's module: no torch, no Flask, no numba kernels.
A subcommand's own ``--help`` and its run import its module alone. The command sits above every layer: it is the
one module that reaches the env, the agents, the arena, training and the web app.

Every subcommand's function sets ``run`` (called with the parsed arguments, returns the exit status) with
``parser.set_defaults``; ``parser``, the subcommand's parser, is set for it (for usage errors raised while running).
A usage error is the subcommand's own (``packetrow SUB: error: ...``, exit status 2), unknown arguments included.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import version

# name: (the function that adds its arguments, one-line help shown by packetrow --help)
COMMANDS = {
    "demo": ("packetrow_cli.game_commands:add_demo_arguments", "play and print one full game between random players"),
    "layout": ("packetrow_cli.game_commands:add_layout_arguments",
               "print the observation layout as a Markdown table"),
    "info": ("packetrow_cli.game_commands:add_info_arguments",
             "print the game's description: players, actions, longest game, sizes"),
    "play": ("packetrow_agents.terminal:add_arguments", "play a game in the terminal against bots"),
    "tournament": ("packetrow_arena.tournament:add_tournament_arguments",
                   "play agents against each other and print win rates, VP, ranks and ratings"),
    "replay": ("packetrow_arena.tournament:add_replay_arguments",
               "replay a recorded tournament or ladder game move by move"),
    "ladder": ("packetrow_arena.ladder:add_arguments",
               "place an agent on the anchored reference ladder (or rebuild the ladder)"),
    "population": ("packetrow_arena.population:add_arguments",
                   "payoff matrix and Nash averaging of the agents of a record file"),
    "exploit": ("packetrow_train.exploit:add_arguments",
                "estimate how exploitable an agent is: train a best response to it, report its win rate"),
    "imitate": ("packetrow_train.imitation:add_arguments",
                "fine-tune a policy to play as an agent played in record files (an opponent model)"),
    "train": ("packetrow_train.train_command:add_arguments",
              "self-play training from a YAML config (SB3 MaskablePPO, or RLlib PPO with trainer: rllib)"),
    "compile": ("packetrow_train.compile_command:add_arguments",
                "compile the engine's numba kernels on every core, once after an install (then cached)"),
    "curve": ("packetrow_train.curve:add_arguments",
              "plot a training run's win rates (training games and evaluations) to a PNG"),
    "serve": ("packetrow_web.app:add_arguments", "play and watch games in the browser (needs the [web] extra)"),
    "mcp": ("packetrow_mcp.command:add_arguments", "let an LLM play over MCP (stdio; needs the [mcp] extra)"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``packetrow`` parser; ``command``'s arguments added (its module imported), the others' left out."""
    parser = argparse.ArgumentParser(prog="packetrow", description="Packet Row: environment, agents and training.")
    parser.add_argument("--version", action="version", version=f"packetrow {version('packetrow')}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for name, (target, help_text) in COMMANDS.items():
        subparser = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        subparser.set_defaults(parser=subparser)
        if name == command:
            module, function = target.split(":")
            getattr(importlib.import_module(module), function)(subparser)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``packetrow`` command."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((word for word in argv if not word.startswith("-")), None)
    args, unknown = build_parser(command if command in COMMANDS else None).parse_known_args(argv)
    if unknown:  # argparse would report them as the top command's: they are the subcommand's usage error
        args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args.run(args)
