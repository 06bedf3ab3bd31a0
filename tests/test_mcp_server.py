"""The MCP server: the games it holds (packetrow_mcp.games), and ``packetrow mcp`` played through the official SDK's
own client over stdio, whole games of random legal moves, with every kind of bad input refused and changing
nothing."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from packetrow_mcp.games import GameError, Games


def snapshot(games: Games) -> dict:
    """Every game's position, to check that a refused call changed nothing."""
    return {game_id: game.game.to_dict() for game_id, game in games.games.items()}


def play_out(new, legal_moves, play, result, rng: random.Random) -> tuple[dict, int]:
    """Play a game to its end with random legal moves (from legal_moves) through the four calls given."""
    game_id = new["game_id"]
    moves = 0
    while True:
        turn = legal_moves(game_id)
        if turn["game_over"]:
            return result(game_id), moves
        assert turn["your_turn"] and turn["legal_moves"]
        answer = rng.choice([rng.choice(turn["legal_moves"]), str(rng.randrange(len(turn["legal_moves"])) + 1)])
        played = play(game_id, answer)
        moves += 1
        assert played["played"] in turn["legal_moves"]


@pytest.mark.parametrize("players, opponents, seat", [(2, "heuristic", 0), (3, "random,heuristic", 2),
                                                      (5, "random", 1)])
def test_whole_games_of_random_legal_moves(players, opponents, seat):
    games = Games()
    new = games.new_game(players, opponents, seed=players, seat=seat)
    assert new["seat"] == seat and [o["seat"] for o in new["opponents"]] == [p for p in range(players) if p != seat]
    final, moves = play_out(new, games.legal_moves, games.play, games.result, random.Random(players))
    assert moves > 10 and final["game_over"] and len(final["scores"]) == players
    assert final["you_won"] == final["scores"][seat]["winner"]
    assert games.games[new["game_id"]].game.scores() == [
        {k: v for k, v in row.items() if k not in ("seat", "player")} for row in final["scores"]]


def test_the_bots_before_the_client_move_at_once_and_every_move_is_narrated():
    games = Games()
    new = games.new_game(3, "heuristic", seed=0, seat=2)
    assert new["your_turn"] and len(new["events"]) == 2 and new["events"][0].startswith("player 0 (heuristic)")
    played = games.play(new["game_id"], "1")
    assert played["played"] == new["legal_moves"][0] and played["events"][0].startswith("You ")
    seen = games.observe(new["game_id"])
    assert seen["text"].startswith("Round ") and seen["json"]["seat"] == 2


@pytest.mark.parametrize("call, message", [
    (lambda g, i: g.observe("no-such-game"), "unknown game id 'no-such-game'"),
    (lambda g, i: g.play(i, "take slot 9 of the moon"), "could not read a legal move from 'take slot 9 of the moon'"),
    (lambda g, i: g.play(i, "99"), "there is no move 99"),
    (lambda g, i: g.play(i, ""), "the reply is empty"),
    (lambda g, i: g.play(i, None), "move must be a move string or its number"),
    (lambda g, i: g.play(i, "ship"), "'ship' is not a legal move now"),
    (lambda g, i: g.new_game(players=1), "players must be an integer from 2 to 5, got 1"),
    (lambda g, i: g.new_game(players=6), "players must be an integer from 2 to 5, got 6"),
    (lambda g, i: g.new_game(players=True), "players must be an integer"),
    (lambda g, i: g.new_game(seat=2), "seat must be an integer from 0 to 1, got 2"),
    (lambda g, i: g.new_game(seed=-1), "seed must be an integer from 0 to"),
    (lambda g, i: g.new_game(seed="7"), "seed must be an integer"),
    (lambda g, i: g.new_game(opponents="nobody"), "unknown agent 'nobody'"),
    (lambda g, i: g.new_game(opponents="ismcts:iter=5"), "unknown option 'iter' for agent 'ismcts'"),
    (lambda g, i: g.new_game(3, opponents="random,random,random"), "lists 3 agents for a 3-player game"),
    (lambda g, i: g.new_game(opponents="heuristic,,random"), "empty agent spec"),
    (lambda g, i: g.new_game(opponents=[]), "opponents must be agent specs"),
    (lambda g, i: g.new_game(opponents="llm:model=m,base_url=http://example.com/v1"), "takes no llm agents"),
    (lambda g, i: g.new_game(opponents="ppo:path=elsewhere.npz"), "no model files"),
    (lambda g, i: g.new_game(opponents="mixture:/etc/passwd"), "no model files")])  # a file it would read
def test_bad_input_is_a_clear_error_and_changes_nothing(call, message):
    games = Games()
    game_id = games.new_game(2, "heuristic", seed=3)["game_id"]
    before = snapshot(games)
    with pytest.raises(GameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(games, game_id)
    assert snapshot(games) == before


def test_a_finished_game_refuses_moves_and_the_oldest_game_goes_first():
    games = Games(max_games=2)
    first = games.new_game(2, "random", seed=1)
    play_out(first, games.legal_moves, games.play, games.result, random.Random(0))
    with pytest.raises(GameError, match="the game is over"):
        games.play(first["game_id"], "1")
    second = games.new_game(2, "random", seed=2)["game_id"]
    games.legal_moves(first["game_id"])  # used last: the second game is the least recently used
    games.new_game(2, "random", seed=3)
    assert second not in games.games and first["game_id"] in games.games


def test_without_the_extra_the_command_names_it():
    code = "import sys\nsys.modules['mcp'] = None\nfrom packetrow_cli.main import main\nsys.exit(main(['mcp']))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "install the [mcp] extra: pip install 'packetrow[mcp]'" in run.stderr


# ------------------------------------------------------------------------------------- over stdio, the SDK's client
async def call(session, tool: str, **arguments):
    """A tool's answer as JSON, or ("error", message) where the server refused the call."""
    answer = await session.call_tool(tool, arguments)
    text = answer.content[0].text
    return ("error", text) if answer.is_error else json.loads(text)


def test_packetrow_mcp_plays_whole_games_through_the_sdks_client_over_stdio(tmp_path):
    """``python -m packetrow_cli mcp`` spawned by the SDK's stdio client: the five tools listed, two whole games of
    random legal moves (strings and numbers), and bad input refused with its message while the game goes on
    unchanged."""
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = StdioServerParameters(command=sys.executable, args=["-m", "packetrow_cli", "mcp"], cwd=str(tmp_path),
                                   env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")})

    async def session_run():
        with open(tmp_path / "server.log", "w") as log:
            async with stdio_client(server, errlog=log) as (read, write), ClientSession(read, write) as session:
                info = await session.initialize()
                assert info.server_info.name == "packetrow" and "Packet Row" in info.instructions
                tools = {tool.name for tool in (await session.list_tools()).tools}
                assert tools == {"new_game", "observe", "legal_moves", "play", "result"}
                finals = []
                for players, opponents in ((2, "heuristic"), (4, "random,heuristic,random")):
                    new = await call(session, "new_game", players=players, opponents=opponents, seed=players)
                    game_id = new["game_id"]
                    turn = await call(session, "legal_moves", game_id=game_id)
                    seen = await call(session, "observe", game_id=game_id)
                    refusals = [await call(session, "play", game_id=game_id, move="take slot 9 of the moon"),
                                await call(session, "play", game_id="nope", move="1"),
                                await call(session, "new_game", players=9),
                                await call(session, "new_game", opponents="llm:model=m"),
                                await call(session, "new_game", seed=-5)]
                    assert await call(session, "observe", game_id=game_id) == seen  # nothing changed
                    assert [r[0] for r in refusals] == ["error"] * 5
                    assert "could not read a legal move" in refusals[0][1] and turn["legal_moves"][0] in refusals[0][1]
                    assert "unknown game id 'nope'" in refusals[1][1]
                    assert "players must be an integer from 2 to 5, got 9" in refusals[2][1]
                    rng = random.Random(players)
                    moves = 0
                    while not turn["game_over"]:
                        legal = turn["legal_moves"]
                        move = rng.choice([rng.choice(legal), rng.randrange(len(legal)) + 1])
                        turn = await call(session, "play", game_id=game_id, move=move)  # a string, or its number
                        moves += 1
                    final = await call(session, "result", game_id=game_id)
                    assert final["game_over"] and len(final["scores"]) == players and moves > 10
                    finals.append(final)
                return finals

    finals = anyio.run(session_run)
    assert [len(final["scores"]) for final in finals] == [2, 4]
