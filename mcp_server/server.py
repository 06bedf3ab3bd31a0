"""The MCP server (the official ``mcp`` SDK, stdio): any MCP client, an LLM's chat app or agent, plays Packet Row
against the project's agents through five tools over ``packetrow_mcp.games``.

- ``new_game(players, opponents, seed, seat)`` -> the ``game_id``, the bots' first moves, the client's legal moves
- ``observe(game_id)`` -> the table as the client's seat knows it, as ``text`` and as ``json``
- ``legal_moves(game_id)`` -> the move strings (the client answers with one, its number from 1, or a close variant)
- ``play(game_id, move)`` -> the move played, then the bots' moves until the client's turn or the end
- ``result(game_id)`` -> whether the game is over, and the scores

A bad call (an unknown game id, a move that cannot be read or is not legal, bad parameters) is a tool error whose
message says what was wrong and what is allowed, and changes nothing.
"""

from __future__ import annotations

import inspect

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from packetrow_agents.llm import prompt
from packetrow_env import __version__

from .games import GameError, Games

# how to play through the tools, then the rules in short (the llm agent's, packetrow_agents/prompts/rules.txt)
INSTRUCTIONS = """Play Packet Row against bots. Start with new_game, read the table with observe, and answer with
play: a move exactly as legal_moves lists it, or its number in that list (counting from 1). The bots move after
you, and play tells you what they did. When play says game_over, result gives the scores.

""" + prompt("rules")


def build_server(games: Games | None = None) -> MCPServer:
    """The MCP server of ``games`` (a new table of games by default), its tools registered."""
    games = Games() if games is None else games
    # WARNING: a refused call is the client's to read, not a line for the server's log
    server = MCPServer(name="packetrow", title="Packet Row", version=__version__, instructions=INSTRUCTIONS,
                       log_level="WARNING")

    def checked(call, *args):
        try:
            return call(*args)
        except GameError as error:  # the client reads the message; nothing changed
            raise ToolError(str(error)) from None

    def tool(function):
        server.add_tool(function, description=inspect.cleandoc(function.__doc__))  # the docstring, dedented
        return function

    @tool
    def new_game(players: int = 2, opponents: str = "heuristic", seed: int | None = None, seat: int = 0) -> dict:
        """Start a game of `players` (2-5) with you at `seat` (0 to players-1; seat 0 is the first harbour master)
        against `opponents`: agent specs, one for every opponent or one each, comma-separated ('heuristic',
        'random', 'ppo' (the shipped trained agent), 'ismcts:iters=200', 'search:seconds=1'). `seed` deals the cards
        (a non-negative integer; none: a random deal). Returns the game_id, the bots' moves before yours and your
        legal moves."""
        return checked(games.new_game, players, opponents, seed, seat)

    @tool
    def observe(game_id: str) -> dict:
        """The table as your seat knows it: `text` (boards, your hand, what you know of the others, your legal moves
        numbered) and `json` (the same as values)."""
        return checked(games.observe, game_id)

    @tool
    def legal_moves(game_id: str) -> dict:
        """Your legal moves as strings, in order; play takes one of them, or its number counting from 1."""
        return checked(games.legal_moves, game_id)

    @tool
    def play(game_id: str, move: str | int) -> dict:
        """Play your `move`: one of legal_moves as written, its number in that list (from 1), or a close variant.
        The bots then move until it is your turn again or the game is over; their moves are in `events`. A move
        that cannot be read, or is not legal, is refused and changes nothing."""
        return checked(games.play, game_id, move)

    @tool
    def result(game_id: str) -> dict:
        """Whether the game is over, and every seat's score (VP and its parts, cash, winner); during the game, the
        table's standing."""
        return checked(games.result, game_id)

    return server


def serve() -> None:
    """Serve one table of games over stdio until the client closes it."""
    build_server().run("stdio")
