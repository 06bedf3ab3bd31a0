"""The games an MCP server holds: its client at one seat against the project's agents, each game reached by its id.

What the tools of ``packetrow_mcp.server`` do, without the protocol: ``new_game``, ``observe``, ``legal_moves``,
``play`` and ``result``. A game is a ``packetrow_agents.play.Session`` (the terminal's and the browser's): the
bots are built from agent specs and move on their own seat's view; every move is narrated as the client's seat saw
it. After a move of the client's the bots move until it is the client's turn again or the game is over, so a game
waits only for its client.

Every input is checked before anything changes: an unknown game id, a move that cannot be read or is not legal, and
bad parameters raise ``GameError`` (a ValueError) saying what is wrong and what is allowed, and leave every game as
it was. An opponent spec must build an agent of the registry; ``llm`` agents and model files are refused, because the
client chooses the specs: an ``llm`` opponent would send a key from this machine's environment to an address the
client names, and a model option would read a file the client names.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

from packetrow_agents.play import PlayError, Session, narrate, opponent_specs
from packetrow_agents.registry import model_paths, parse_spec, split_specs
from packetrow_env.engine import Game
from packetrow_env.move_text import LegalMoves
from packetrow_env.render import scores_lines
from packetrow_env.seat_view import SeatView
from packetrow_env.state import MAX_PLAYERS, MIN_PLAYERS
from packetrow_env.view_formats import view_json, view_text

MAX_GAMES = 32  # held at once; a new game lets the least recently used one go
MAX_SEED = 2**63 - 1
REFUSED_AGENTS = ("llm",)


class GameError(ValueError):
    """A tool call that changes nothing: the message says what was wrong and what is allowed."""


def _integer(value, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise GameError(f"{what} must be an integer from {low} to {high}, got {value!r}")
    return value


def check_opponents(opponents, players: int) -> list[str]:
    """One agent spec per opponent seat from ``opponents`` (a comma-separated list or a list of specs, one for all
    or one per opponent), each one this server plays; a GameError says why not."""
    if isinstance(opponents, str):
        try:
            opponents = split_specs(opponents)
        except ValueError as error:
            raise GameError(f"opponents: {error}") from None
    if not isinstance(opponents, list) or not opponents or not all(isinstance(s, str) for s in opponents):
        raise GameError(f"opponents must be agent specs, e.g. 'heuristic' or 'heuristic,random,ismcts:iters=100', "
                        f"got {opponents!r}")
    try:
        specs = opponent_specs([spec.strip() for spec in opponents], players)
    except PlayError as error:
        raise GameError(f"opponents: {error}") from None
    for spec in specs:
        name, options = parse_spec(spec)
        if name in REFUSED_AGENTS or model_paths(name, options):
            raise GameError(f"opponent {spec!r} is not played by this server: it takes no {', '.join(REFUSED_AGENTS)} "
                            "agents and no model files (the shipped models, e.g. 'ppo' and 'search', are played)")
    return specs


class ClientGame(Session):
    """One game: the client at ``seat``, a bot at every other seat."""

    def __init__(self, game: Game, seat: int, opponents: list[str], seed: int):
        super().__init__(game, seat, opponents, seed)
        self.lock = threading.Lock()

    def step(self, action: int) -> list[str]:
        """Play ``action`` (legal), narrated as the client's seat saw it."""
        before = self.game.clone()
        self.game.step(action)
        return narrate(before, action, self.game, self.seat, self.names)

    def bots_move(self) -> list[str]:
        """The bots move until it is the client's turn or the game is over; their moves, narrated."""
        lines = []
        while not self.game.is_over and self.game.current_player != self.seat:
            lines += self.step(self.bot_move(self.game.current_player))
        return lines

    def view(self) -> SeatView:
        return SeatView(self.game, self.seat, "tracked")

    def turn(self) -> dict:
        """Whether the game is over, whether it is the client's turn, and then its legal moves."""
        over = self.game.is_over
        out = {"game_over": over, "your_turn": not over and self.game.current_player == self.seat}
        if out["your_turn"]:
            out["legal_moves"] = LegalMoves(self.view()).texts
        return out


class Games:
    """The games of one server, by id (at most ``max_games``; a new one lets the least recently used go)."""

    def __init__(self, max_games: int = MAX_GAMES):
        self.max_games = max_games
        self.games: OrderedDict[str, ClientGame] = OrderedDict()
        self.lock = threading.Lock()  # the table's; each game has its own for its moves

    def get(self, game_id) -> ClientGame:
        """The game of ``game_id``; a GameError where there is none."""
        with self.lock:
            if not isinstance(game_id, str) or game_id not in self.games:
                held = ", ".join(self.games) or "none"
                raise GameError(f"unknown game id {game_id!r}; the games held now: {held} (start one with new_game)")
            self.games.move_to_end(game_id)
            return self.games[game_id]

    def new_game(self, players=2, opponents="heuristic", seed=None, seat=0) -> dict:
        """A new game of ``players`` (2-5), the client at ``seat``, ``opponents`` at the other seats (agent specs:
        one for all or one per opponent), dealt from ``seed`` (None: a random one); the bots before the client
        move at once."""
        players = _integer(players, "players", MIN_PLAYERS, MAX_PLAYERS)
        seat = _integer(seat, "seat", 0, players - 1)
        seed = secrets.randbelow(2**31) if seed is None else _integer(seed, "seed", 0, MAX_SEED)
        specs = check_opponents(opponents, players)
        try:
            game = ClientGame(Game.new(players, seed=seed), seat, specs, seed)
        except PlayError as error:
            raise GameError(str(error)) from None
        with game.lock:
            events = game.bots_move()
        with self.lock:
            game_id = secrets.token_hex(4)
            self.games[game_id] = game
            while len(self.games) > self.max_games:
                self.games.popitem(last=False)
        return {"game_id": game_id, "players": players, "seat": seat, "seed": seed,
                "opponents": [{"seat": p, "agent": game.names[p]} for p in sorted(game.bots)], "events": events,
                **game.turn()}

    def observe(self, game_id) -> dict:
        """The table as the client's seat knows it, as text and as JSON."""
        game = self.get(game_id)
        with game.lock:
            view = game.view()
            return {"text": view_text(view, game.names), "json": view_json(view, game.names)}

    def legal_moves(self, game_id) -> dict:
        """The client's legal moves as move strings (a reply may give one, its number from 1, or a close variant)."""
        game = self.get(game_id)
        with game.lock:
            return game.turn()

    def play(self, game_id, move) -> dict:
        """Play the client's ``move`` (a move string, its number in the legal moves from 1, or a close variant),
        then the bots' moves until the client's turn or the end; a move that cannot be read changes nothing."""
        game = self.get(game_id)
        if isinstance(move, int) and not isinstance(move, bool):
            move = str(move)
        if not isinstance(move, str):
            raise GameError(f"move must be a move string or its number, got {move!r}")
        with game.lock:
            if game.game.is_over:
                raise GameError("the game is over: see result, or start a new game")
            moves = LegalMoves(game.view())
            reading = moves.read(move)
            if reading.index is None:
                raise GameError(f"could not read a legal move from {move!r}: {reading.error}. Nothing was played. "
                                "The legal moves:\n" + moves.numbered())
            events = game.step(moves.actions[reading.index])
            events += game.bots_move()
            return {"played": moves.texts[reading.index], "events": events, **game.turn()}

    def result(self, game_id) -> dict:
        """Whether the game is over, and the scores (final, or the table's standing during the game)."""
        game = self.get(game_id)
        with game.lock:
            over = game.game.is_over
            rows = [dict(row, seat=p, player=game.names[p]) for p, row in enumerate(game.game.scores())]
            out = {"game_over": over, "your_seat": game.seat, "scores": rows,
                   "table": "\n".join(scores_lines(game.game, game.seat, game.names))}
            if over:
                out["you_won"] = bool(rows[game.seat]["winner"])
            return out
