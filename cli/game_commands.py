"""The subcommands about the game itself, needing only the environment: ``demo``, ``layout`` and ``info``."""

from __future__ import annotations

import argparse
import json

import numpy as np

from packetrow_env.compact_observation import encoder as compact_encoder
from packetrow_env.engine import Game
from packetrow_env.game_info import GAME_TYPE, describe
from packetrow_env.knowledge import MODES
from packetrow_env.observation import layout_table
from packetrow_env.render import describe_action, render


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


def _seed(text: str) -> int:
    """An ``argparse`` type: a seed, a non-negative integer (numpy's generators take no other)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed is a non-negative integer, got {text!r}")
    return value


def add_demo_arguments(parser) -> None:
    """``packetrow demo``: one full game between random players, every move and the scores printed."""
    parser.add_argument("--players", type=int, default=4, choices=range(2, 6), help="number of players (default 4)")
    parser.add_argument("--seed", type=_seed, default=0, help="seed of the deal and the players, a non-negative "
                                                             "integer (default 0)")
    parser.add_argument("--quiet", action="store_true", help="print only the final table")
    parser.set_defaults(run=_demo)


def _layout(args) -> int:
    print(layout_table(args.mode) if args.encoding == "onehot" else compact_encoder().layout_table(args.mode))
    return 0


def add_layout_arguments(parser) -> None:
    """``packetrow layout``: the observation vector's pieces (name, offset, shape, meaning)."""
    parser.add_argument("--mode", default="tracked", choices=MODES,
                        help="observation mode (online and full append deck_contents; default tracked)")
    parser.add_argument("--encoding", default="onehot", choices=("onehot", "compact"),
                        help="observation encoding (default onehot, the AEC env's default)")
    parser.set_defaults(run=_layout)


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


def add_info_arguments(parser) -> None:
    """``packetrow info``: the game's description (``packetrow_env.game_info``, after OpenSpiel's GameType and
    GameInfo): env id, player counts, utility per reward mode, actions, the longest-game bound, observation sizes."""
    parser.description = ("Print the game's description (packetrow_env.game_info, after OpenSpiel's GameType and "
                          "GameInfo): env id, player counts, utility per reward mode, actions, the longest-game "
                          "bound and its pieces, observation sizes.")
    parser.add_argument("--players", type=int, default=4,
                        choices=range(GAME_TYPE.min_num_players, GAME_TYPE.max_num_players + 1),
                        help="the player count the sizes are for (default 4)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=_info)
