"""Replaying a recorded game (one game line of a record file) through the engine, checking its recorded scores.

Used by ``packetrow replay`` (``packetrow_arena.tournament``), by ``packetrow_arena.records`` (which adds the
file and line to its errors) and by the browser's Watch tab.
"""

from __future__ import annotations

from collections.abc import Iterator

from packetrow_env.engine import Game


class ReplayError(ValueError):
    """A recorded game does not replay to its recorded result."""


def replay_moves(record: dict) -> Iterator[tuple[Game, int, int]]:
    """Step a recorded game from its seed: yields (game before the move, seat, action), then checks the scores."""
    game = Game.new(int(record["num_players"]), seed=int(record["seed"]))
    for move, action in enumerate(record["actions"]):
        if game.is_over:
            raise ReplayError(f"game {record.get('index')}: the game ended after {move} moves but "
                              f"{len(record['actions'])} are recorded")
        seat = game.current_player
        yield game, seat, int(action)
        game.step(int(action))
    if not game.is_over:
        raise ReplayError(f"game {record.get('index')}: the {len(record['actions'])} recorded moves do not finish "
                          "the game")
    replayed = game.scores()
    recorded = [dict(row) for row in record["scores"]]
    if replayed != recorded:
        raise ReplayError(f"game {record.get('index')}: replaying seed {record['seed']} and the recorded moves gives "
                          f"scores {replayed}, but the file records {recorded}")


def replay_game(record: dict) -> Game:
    """The finished game of a record, replayed through the engine; raises ReplayError if the scores differ."""
    game = None
    for game, _, _ in replay_moves(record):
        pass
    if game is None:
        raise ReplayError(f"game {record.get('index')}: no moves recorded")
    return game
