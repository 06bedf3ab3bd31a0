"""The games the server holds: one PlaySession per game a person plays, one Replay per file being watched.

A session is reached only through its random id; each has its own lock, so games in several tabs never
wait on each other or interfere. Every request is checked before anything changes (WebError, a ValueError
with an HTTP status); a bad one leaves the session exactly as it was.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from packetrow_agents.play import (SAVE_FORMAT, PlayError, Session, narrate, opponent_specs, parse_save, read_save,
                                   write_save)
from packetrow_agents.registry import split_specs
from packetrow_agents.replay import ReplayError, replay_moves
from packetrow_env.engine import Game
from packetrow_env.render import describe_action, seat_label
from packetrow_env.seat_view import SeatView
from packetrow_env.state import MAX_PLAYERS, MIN_PLAYERS

from .views import table_json

DEFAULT_OPPONENT = "ppo"  # the shipped trained agent
SUGGESTED_OPPONENTS = ("ppo", "heuristic", "random", "ismcts:seconds=1")
MAX_SESSIONS = 200  # the oldest idle sessions are forgotten beyond this (a local server, but never unbounded)
SAVE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")


class WebError(ValueError):
    """A request the server refuses; ``status`` is its HTTP status, the message says what is allowed."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _integer(value, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise WebError(f"{what} must be an integer from {low} to {high}, got {value!r}")
    return value


class PlaySession(Session):
    """A person at ``seat`` against bots (one agent spec per other seat, in seat order) in one game."""

    def __init__(self, game: Game, seat: int, opponents: list[str], seed: int):
        try:
            super().__init__(game, seat, opponents, seed)
        except PlayError as error:
            raise WebError(str(error)) from None
        self.lock = threading.Lock()
        self.log: list[str] = []  # what happened, as the person's seat saw it (narrate)

    @classmethod
    def new(cls, options: dict) -> "PlaySession":
        """A new game from the page's options: players (2-5), seat, opponents (agent specs), seed (optional)."""
        if not isinstance(options, dict):
            raise WebError("the options must be a JSON object")
        unknown = sorted(set(options) - {"players", "seat", "opponents", "seed"})
        if unknown:
            raise WebError(f"unknown option {unknown[0]!r}; options: players, seat, opponents, seed")
        players = _integer(options.get("players", 2), "players", MIN_PLAYERS, MAX_PLAYERS)
        seat = _integer(options.get("seat", 0), "seat", 0, players - 1)
        seed = options.get("seed")
        seed = int(np.random.default_rng().integers(2**31)) if seed is None else _integer(seed, "seed", 0, 2**63 - 1)
        specs = options.get("opponents", [DEFAULT_OPPONENT])
        if isinstance(specs, str):
            try:
                specs = split_specs(specs)
            except ValueError as error:
                raise WebError(f"opponents: {error}") from None
        if not isinstance(specs, list) or not specs or not all(isinstance(x, str) and x.strip() for x in specs):
            raise WebError(f"opponents must be a list of agent specs (e.g. {list(SUGGESTED_OPPONENTS)}), "
                           f"got {specs!r}")
        try:
            specs = opponent_specs([x.strip() for x in specs], players)
        except PlayError as error:
            raise WebError(str(error)) from None
        return cls(Game.new(players, seed=seed), seat, specs, seed)

    @classmethod
    def load(cls, data, name: str = "the file") -> "PlaySession":
        """A session from a saved game (the terminal's save format, as parsed JSON)."""
        if isinstance(data, dict) and data.get("format") != SAVE_FORMAT:
            raise WebError(f"{name} is not a saved game to resume (it has no 'format': {SAVE_FORMAT!r}); a bare "
                           "position or a games.jsonl can be watched in the Watch tab")
        return _resume(_read_save_data(data, name))

    # --------------------------------------------------------------------------------- reading
    def view(self) -> dict:
        """The table as the person's seat knows it (tracked), who plays, the log and whose move it is."""
        game = self.game
        out = table_json(SeatView(game, self.seat, "tracked"), self.names)
        p = game.current_player
        out.update(kind="play", opponents=self.opponents, log=list(self.log),
                   waiting_for=None if game.is_over or p == self.seat else seat_label(p, self.seat, self.names))
        return out

    # --------------------------------------------------------------------------------- moves
    def act(self, action) -> None:
        """Play the person's move; an illegal one raises WebError and changes nothing."""
        game = self.game
        if game.is_over:
            raise WebError("the game is over: start a new one", 409)
        if game.current_player != self.seat:
            raise WebError(f"it is not your move: {seat_label(game.current_player, self.seat, self.names)} is to act",
                           409)
        if isinstance(action, bool) or not isinstance(action, int):
            raise WebError(f"action must be an action id (an integer), got {action!r}")
        if not 0 <= action < game.legal_action_mask().size or not game.legal_action_mask()[action]:
            legal = ", ".join(str(a) for a in game.legal_actions())
            raise WebError(f"action {action} is not legal now; legal actions: {legal}", 409)
        self._step(action)

    def advance(self) -> None:
        """Let the bot to act make one move (the page asks once per bot move, showing who is thinking)."""
        game = self.game
        if game.is_over:
            raise WebError("the game is over: no bot is to move", 409)
        p = game.current_player
        if p == self.seat:
            raise WebError("it is your move, not a bot's", 409)
        action = self.bot_move(p)
        if not game.legal_action_mask()[action]:
            raise RuntimeError(f"{seat_label(p, self.seat, self.names)} chose the illegal action {action}")
        self._step(action)

    def _step(self, action: int) -> None:
        before = self.game.clone()
        self.game.step(action)
        self.log.extend(narrate(before, action, self.game, self.seat, self.names))


def _read_save_data(data, name: str = "the file") -> dict:
    """The checks of ``packetrow play --load`` on a parsed saved game; it must name the person's seat."""
    try:
        saved = parse_save(data, name)
    except PlayError as error:
        raise WebError(str(error)) from None
    if saved["seat"] is None:
        raise WebError(f"{name} holds a bare position without a seat: watch it in the Watch tab")
    return saved


def _resume(saved: dict) -> "PlaySession":
    seed = saved["seed"] if saved["seed"] is not None else int(np.random.default_rng().integers(2**31))
    session = PlaySession(saved["game"], saved["seat"], saved["opponents"], seed)
    if session.game.state.history:
        session.log.append(f"--- Resumed in round {session.game.state.round}.")
    return session


class Replay:
    """A file being watched: the games of a tournament's games.jsonl, or one saved game."""

    def __init__(self, records: list[dict], source: str):
        self.records = records  # each: index, num_players, agents, and either seed+actions or a position
        self.source = source
        self.lock = threading.Lock()
        self._positions: dict[int, list[tuple[Game, int | None, int | None]]] = {}

    @classmethod
    def parse(cls, text, name: str = "file") -> "Replay":
        """A Replay from a file's text: JSON lines of tournament records, or a saved game / position."""
        if not isinstance(text, str) or not text.strip():
            raise WebError("send the file's text as 'text' (a games.jsonl or a saved game)")
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        except RecursionError:
            raise WebError(f"{name}: its JSON is nested too deeply") from None
        if isinstance(data, dict) and ("game" in data or "boards" in data) and "actions" not in data:
            return cls([_saved_record(data, name)], name)
        lines = [line for line in text.splitlines() if line.strip()]
        records = []
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                raise WebError(f"{name}, line {number}: not a JSON game record (expected a games.jsonl written by "
                               "'packetrow tournament --out', or a saved game)") from None
            records.append(_tournament_record(record, name, number))
        if not records:
            raise WebError(f"{name} holds no games")
        return cls(records, name)

    def games(self) -> list[dict]:
        """The games in the file: index, players, agents, recorded scores."""
        return [{"index": r["index"], "num_players": r["num_players"], "agents": r["agents"],
                 "moves": len(r["actions"]) if r.get("actions") is not None else len(r.get("history", [])),
                 "scores": r.get("scores")} for r in self.records]

    def record(self, index) -> dict:
        """The record of game ``index`` (a WebError 404 naming the indices if there is none)."""
        for record in self.records:
            if record["index"] == index:
                return record
        known = ", ".join(str(r["index"]) for r in self.records[:20])
        raise WebError(f"no game {index!r} in {self.source}; games: {known}", 404)

    def positions(self, index) -> list[tuple[Game, int | None, int | None]]:
        """Per move: (the game before it, the seat that moved, the action); the last entry is the final game."""
        if index not in self._positions:
            self._positions[index] = _positions(self.record(index))
        return self._positions[index]

    def view(self, index, move, seat) -> dict:
        """The table before move ``move`` of game ``index`` from ``seat``'s view (None: the full view)."""
        record = self.record(index)
        steps = self.positions(index)
        n = record["num_players"]
        if isinstance(move, bool) or not isinstance(move, int) or not 0 <= move < len(steps):
            raise WebError(f"move must be from 0 to {len(steps) - 1} in game {index}, got {move!r}")
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n):
            raise WebError(f"seat must be from 0 to {n - 1} (or 'full'), got {seat!r}")
        names = record["agents"]
        game, player, action = steps[move]
        # seats are labelled by agent, like 'packetrow replay': nobody watching is "you", and no move is offered
        out = table_json(SeatView(game, 0 if seat is None else seat, "full" if seat is None else "tracked"), names,
                         you=False)
        history = []
        for m in range(move):
            g, p, a = steps[m]
            history.append(f"{m:3d}. round {g.state.round}, {seat_label(p, None, names)}: {describe_action(g, a)}")
        out.update(kind="watch", index=index, move=move, moves=len(steps) - 1, viewer=seat, history=history,
                   next=None if action is None else f"{seat_label(player, None, names)}: "
                                                   f"{describe_action(game, action)}",
                   recorded_scores=record.get("scores"), source=self.source)
        return out


def _tournament_record(record, name: str, number: int) -> dict:
    if not isinstance(record, dict):
        raise WebError(f"{name}, line {number}: a game record must be a JSON object")
    missing = [k for k in ("num_players", "seed", "actions", "scores") if k not in record]
    if missing:
        raise WebError(f"{name}, line {number}: the game record lacks {', '.join(missing)} (expected a games.jsonl "
                       "written by 'packetrow tournament --out')")
    n = record["num_players"]
    if isinstance(n, bool) or not isinstance(n, int) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise WebError(f"{name}, line {number}: num_players must be {MIN_PLAYERS}-{MAX_PLAYERS}, got {n!r}")
    if not isinstance(record["actions"], list) or not all(isinstance(a, int) for a in record["actions"]):
        raise WebError(f"{name}, line {number}: actions must be a list of action ids")
    agents = record.get("agents")
    if not (isinstance(agents, list) and len(agents) == n and all(isinstance(a, str) for a in agents)):
        agents = ["unnamed agent"] * n
    index = record.get("index", number - 1)
    return dict(record, index=index, agents=agents)


def _saved_record(data: dict, name: str) -> dict:
    """A saved game (or bare position) as a record: its seed and history replay to it when they can."""
    if data.get("format") == SAVE_FORMAT:
        saved = _read_save_data(data, name)
        agents = ["unnamed agent"] * saved["game"].num_players
        others = [p for p in range(len(agents)) if p != saved["seat"]]
        for p, spec in zip(others, saved["opponents"]):
            agents[p] = spec
        agents[saved["seat"]] = "person"
        return {"index": 0, "num_players": saved["game"].num_players, "agents": agents, "seed": saved["seed"],
                "actions": None, "position": saved["game"], "history": list(saved["game"].state.history)}
    try:
        game = Game.from_dict(data)
    except (ValueError, TypeError, KeyError) as error:
        raise WebError(f"{name}: the position is not valid: {error}") from None
    return {"index": 0, "num_players": game.num_players, "agents": ["unnamed agent"] * game.num_players,
            "seed": None, "actions": None, "position": game, "history": list(game.state.history)}


def _positions(record: dict) -> list:
    """Every position of a record, replayed through the engine (a tournament record's scores are checked)."""
    if record.get("actions") is not None:
        steps = []
        try:
            for game, seat, action in replay_moves(record):
                steps.append((game.clone(), seat, action))
                last = game
        except (ReplayError, ValueError) as error:
            raise WebError(f"game {record['index']} cannot be replayed: {error}", 422) from None
        steps.append((last.clone(), None, None))  # the generator stepped the last move before it stopped
        return steps
    final = record["position"]
    if record["seed"] is not None and record["history"]:  # a saved game: replay its deal and moves when they match
        try:
            game = Game.new(final.num_players, seed=record["seed"])
            steps = []
            for action in record["history"]:
                steps.append((game.clone(), game.current_player, int(action)))
                game.step(int(action))
            if game.to_dict() == final.to_dict():
                return steps + [(final, None, None)]
        except ValueError:
            pass
    return [(final, None, None)]


class Sessions:
    """The server's sessions by id (play and watch), each behind its own lock; the registry has one too."""

    def __init__(self, save_dir: str | os.PathLike = "packetrow-saves"):
        self.save_dir = Path(save_dir)
        self._items: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, item) -> str:
        """Register a session; its new random id."""
        key = secrets.token_urlsafe(12)
        with self._lock:
            self._items[key] = item
            while len(self._items) > MAX_SESSIONS:
                self._items.popitem(last=False)
        return key

    def get(self, key, kind):
        """The session ``key`` of class ``kind``, or a WebError 404."""
        with self._lock:
            item = self._items.get(key) if isinstance(key, str) else None
            if isinstance(item, kind):
                self._items.move_to_end(key)
                return item
        what = "game" if kind is PlaySession else "file"
        raise WebError(f"no {what} with id {key!r} (the server may have restarted: start a new one)", 404)

    # --------------------------------------------------------------------------------- saved games on disk
    def save(self, session: PlaySession, name) -> str:
        """Write ``session`` to the save folder as ``name`` (+ .json); the file name written."""
        if name is None:
            name = f"game-{session.game.num_players}p-round{session.game.state.round}"
        if not isinstance(name, str) or not SAVE_NAME.match(name):
            raise WebError("a save name is 1-80 letters, digits, '-', '_' or '.', starting with a letter or digit; "
                           f"got {name!r}")
        if not name.endswith(".json"):
            name += ".json"
        self.save_dir.mkdir(parents=True, exist_ok=True)
        write_save(str(self.save_dir / name), session.saved())
        return name

    def saves(self) -> list[dict]:
        """The saved games in the save folder, newest first: name, players, round, over."""
        if not self.save_dir.is_dir():
            return []
        out = []
        for path in sorted(self.save_dir.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                game = data["game"]
                out.append({"name": path.name, "players": int(game["num_players"]), "round": int(game["round"]),
                            "over": game["phase"] == "over"})
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not a saved game: not listed
        return out

    def load_saved(self, name) -> PlaySession:
        """The saved game ``name`` of the save folder as a new session."""
        if not isinstance(name, str) or not SAVE_NAME.match(name):
            raise WebError(f"no saved game {name!r}")
        path = self.save_dir / name
        if not path.is_file():
            raise WebError(f"no saved game {name!r} in {self.save_dir}", 404)
        try:
            saved = read_save(str(path))
        except PlayError as error:
            raise WebError(str(error)) from None
        if saved["seat"] is None:
            raise WebError(f"{name} holds a bare position without a seat: watch it in the Watch tab")
        return _resume(saved)
