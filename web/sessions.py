"""The games the server holds: one PlaySession per game a person plays, one Replay per file being watched.

A session is reached only through its random id; each has its own lock, so games in several tabs never
wait on each other or interfere. Every request is checked before anything changes (WebError, a ValueError
with an HTTP status); a bad one leaves the session exactly as it was.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

from packetrow_agents.play import (SAVE_FORMAT, PlayError, Session, narrate, opponent_specs, parse_save, read_save,
                                   save_error_text, write_save)
from packetrow_arena.records import RecordError, parse_records
from packetrow_agents.registry import split_specs
from packetrow_arena.replay import ReplayError, replay_moves
from packetrow_env.engine import Game
from packetrow_env.render import describe_action, seat_label
from packetrow_env.seat_view import SeatView
from packetrow_env.state import MAX_PLAYERS, MIN_PLAYERS

from .opponents import DEFAULT_OPPONENT, OFFERED, OpponentRule, SpecRefused
from .views import end_hands, table_json

# Held in memory at most (the least recently used go first); every game is autosaved after each move and is let go
# only once its latest position is in its file, from which it reopens when its id is asked for again.
MAX_GAMES = 64
MAX_WATCHES = 8  # files being watched; each holds its records (actions packed) and the positions of 2 games
WATCH_BYTES = 48 * 1024 * 1024  # and the files' texts add up to at most this (the largest upload is 16 MiB)
WATCHED_GAMES = 2
IDLE_SECONDS = 30 * 60  # a game or watched file untouched this long is let go (a game: once it is on disk)
AUTOSAVE_RETRY_SECONDS = 60  # a game whose autosave failed is tried again this often while it waits to be let go
SAVE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,80}")  # fullmatch: no trailing newline slips through
KEY = re.compile(r"[A-Za-z0-9_-]{16}")  # secrets.token_urlsafe(12)
AUTOSAVE = re.compile(r"game-([A-Za-z0-9_-]{16})\.json")
ACTION_LIMIT = 256  # a watched record's action ids fit a byte (the legal ones are checked by the replay)


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
        self.log_moves: list[int | None] = []  # per log line: the move it opens (numbered on the page), or None
        self.key: str | None = None  # its id, given by Sessions.add (its autosave is game-<key>.json)
        self.autosave_error: str | None = None  # None: its latest position is in its autosave
        self.autosave_failed_at = 0.0  # when the last autosave failed (the Sessions' clock)
        self.let_go = False  # the server let it go (set under its lock): a request must reopen it from its file

    @classmethod
    def new(cls, options: dict, rule: OpponentRule = OpponentRule()) -> "PlaySession":
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
            raise WebError(f"opponents must be a list of agent specs (e.g. {[o.spec for o in OFFERED]}), "
                           f"got {specs!r}")
        try:
            specs = opponent_specs([x.strip() for x in specs], players)
        except PlayError as error:
            raise WebError(str(error)) from None
        return cls(Game.new(players, seed=seed), seat, _allowed(specs, rule), seed)

    @classmethod
    def load(cls, data, name: str = "the file", rule: OpponentRule = OpponentRule()) -> "PlaySession":
        """A session from a saved game (the terminal's save format, as parsed JSON)."""
        if isinstance(data, dict) and data.get("format") != SAVE_FORMAT:
            raise WebError(f"{name} is not a saved game to resume (it has no 'format': {SAVE_FORMAT!r}); a bare "
                           "position or a games.jsonl can be watched in the Watch tab")
        return _resume(_read_save_data(data, name), rule)

    # --------------------------------------------------------------------------------- reading
    def view(self) -> dict:
        """The table as the person's seat knows it (tracked), who plays, the log and whose move it is."""
        game = self.game
        out = table_json(SeatView(game, self.seat, "tracked"), self.names)
        p = game.current_player
        out.update(kind="play", move=len(game.state.history), opponents=self.opponents, log=list(self.log),
                   log_moves=list(self.log_moves), autosave_error=self.autosave_error,
                   waiting_for=None if game.is_over or p == self.seat else seat_label(p, self.seat, self.names))
        return out

    def hands(self) -> dict:
        """After the game only: every player's hand face up, hidden starting contracts included (409 before)."""
        if not self.game.is_over:
            raise WebError("the hands are shown when the game is over", 409)
        return end_hands(SeatView(self.game, self.seat, "full"), self.names)

    # --------------------------------------------------------------------------------- moves
    def check_move_number(self, move) -> None:
        """Refuse (409) a request chosen at another move than the game's: a stale view or a resent request."""
        if move is None:
            return
        if isinstance(move, bool) or not isinstance(move, int):
            raise WebError(f"move must be the view's move number (an integer), got {move!r}")
        now = len(self.game.state.history)
        if move != now:
            raise WebError(f"this request was made at move {move}, but the game is at move {now} (another tab or a "
                           "resent request moved it); reload the game", 409)

    def act(self, action, move=None) -> None:
        """Play the person's move; an illegal or stale one raises WebError and changes nothing."""
        game = self.game
        self.check_move_number(move)
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

    def advance(self, move=None) -> None:
        """Let the bot to act make one move (the page asks once per bot move, showing who is thinking)."""
        game = self.game
        self.check_move_number(move)
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
        lines = narrate(before, action, self.game, self.seat, self.names)
        self.log.extend(lines)
        self.log_moves.extend([len(self.game.state.history)] + [None] * (len(lines) - 1) if lines else [])


def _allowed(specs: list[str], rule: OpponentRule) -> list[str]:
    try:
        return [rule.check(spec) for spec in specs]
    except SpecRefused as error:
        raise WebError(str(error)) from None


def _read_save_data(data, name: str = "the file") -> dict:
    """The checks of ``packetrow play --load`` on a parsed saved game; it must name the person's seat."""
    try:
        saved = parse_save(data, name)
    except PlayError as error:
        raise WebError(str(error)) from None
    if saved["seat"] is None:
        raise WebError(f"{name} holds a bare position without a seat: watch it in the Watch tab")
    return saved


def _resume(saved: dict, rule: OpponentRule) -> "PlaySession":
    seed = saved["seed"] if saved["seed"] is not None else int(np.random.default_rng().integers(2**31))
    session = PlaySession(saved["game"], saved["seat"], _allowed(saved["opponents"], rule), seed)
    if session.game.state.history:
        session.log.append(f"--- Resumed in round {session.game.state.round}.")
        session.log_moves.append(None)
    return session


class Replay:
    """A file being watched: the games of a tournament's games.jsonl, or one saved game."""

    def __init__(self, records: list[dict], source: str, size: int = 0):
        self.size = size  # the length of the file's text: what the server's watch budget counts
        self.records = records  # each: index, num_players, agents, and either seed+actions or a position
        self._by_index: dict[int, dict] = {}
        for record in records:
            self._by_index.setdefault(record["index"], record)  # the first of a repeated index, as before
        self.source = source
        self.lock = threading.Lock()
        # the positions of the games viewed last (each a few hundred clones): the older ones are replayed again
        self._positions: OrderedDict[int, list[tuple[Game, int | None, int | None]]] = OrderedDict()

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
            return cls([_saved_record(data, name)], name, len(text))
        records = []
        shared: dict[tuple, tuple] = {}  # one copy of each agents list: a file repeats few of them
        for number, record in _game_lines(text, name):
            record = _tournament_record(record, name, number)
            record["agents"] = shared.setdefault(tuple(record["agents"]), tuple(record["agents"]))
            records.append(record)
        if not records:
            raise WebError(f"{name} holds no games")
        return cls(records, name, len(text))

    def games(self) -> list[dict]:
        """The games in the file: index, players, agents, recorded scores."""
        return [{"index": r["index"], "num_players": r["num_players"], "agents": r["agents"],
                 "moves": len(r["actions"]) if r.get("actions") is not None else len(r.get("history", [])),
                 "scores": _scores(r)} for r in self.records]

    def record(self, index) -> dict:
        """The record of game ``index`` (a WebError 404 naming the indices if there is none)."""
        record = self._by_index.get(index)
        if record is not None:
            return dict(record, scores=_scores(record))
        known = ", ".join(str(r["index"]) for r in self.records[:20])
        raise WebError(f"no game {index!r} in {self.source}; games: {known}", 404)

    def positions(self, index) -> list[tuple[Game, int | None, int | None]]:
        """Per move: (the game before it, the seat that moved, the action); the last entry is the final game."""
        if index not in self._positions:
            self._positions[index] = _positions(self.record(index))
            while len(self._positions) > WATCHED_GAMES:
                self._positions.popitem(last=False)
        self._positions.move_to_end(index)
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
            history.append(f"round {g.state.round}, {seat_label(p, None, names)}: {describe_action(g, a)}")
        # history[m] is move m + 1, numbered by the page
        out.update(kind="watch", index=index, move=move, moves=len(steps) - 1, viewer=seat, history=history,
                   next=None if action is None else f"{seat_label(player, None, names)}: "
                                                   f"{describe_action(game, action)}",
                   recorded_scores=record.get("scores"), source=self.source)
        return out


def _game_lines(text: str, name: str):
    """(line number, game) of a record file (``packetrow_arena.records``: its header checked) or of a headerless
    games.jsonl."""
    first = next((line for line in io.StringIO(text) if line.strip()), "")
    try:
        header = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        header = None
    if isinstance(header, dict) and "format" in header:
        try:
            parsed = parse_records(io.StringIO(text), name)
        except RecordError as error:
            raise WebError(str(error)) from None
        yield from zip(parsed.lines, parsed.games)
        return
    for number, line in enumerate((line for line in io.StringIO(text) if line.strip()), start=1):
        try:
            yield number, json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise WebError(f"{name}, line {number}: not a JSON game record (expected a records.jsonl or games.jsonl "
                           "written by 'packetrow tournament --out', or a saved game)") from None


def _tournament_record(record, name: str, number: int) -> dict:
    """A games.jsonl line checked and kept compact: the fields Watch uses, the actions as a small-int array."""
    def refuse(what: str):
        raise WebError(f"{name}, line {number}: {what}")

    if not isinstance(record, dict):
        refuse("a game record must be a JSON object")
    missing = [k for k in ("num_players", "seed", "actions", "scores") if k not in record]
    if missing:
        refuse(f"the game record lacks {', '.join(missing)} (expected a games.jsonl written by "
               "'packetrow tournament --out')")
    n = record["num_players"]
    if not _is_int(n) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        refuse(f"num_players must be {MIN_PLAYERS}-{MAX_PLAYERS}, got {n!r}")
    seed = record["seed"]
    if not _is_int(seed) or not 0 <= seed < 2**64:
        refuse(f"seed must be an integer from 0 to 2**64 - 1, got {_short(seed)}")
    actions = record["actions"]
    if not isinstance(actions, list) or not all(_is_int(a) and 0 <= a < ACTION_LIMIT for a in actions):
        refuse("actions must be a list of action ids")
    scores = record["scores"]
    if not (isinstance(scores, list) and all(
            isinstance(row, dict) and all(_is_int(v) or isinstance(v, bool) for v in row.values()) for row in scores)):
        refuse("scores must be a list of score rows (objects of integers, one per seat, as 'packetrow tournament' "
               "writes)")
    agents = record.get("agents")
    if not (isinstance(agents, list) and len(agents) == n and all(isinstance(a, str) for a in agents)):
        agents = ["unnamed agent"] * n
    index = record.get("index", number - 1)
    if not _is_int(index) or not 0 <= index < 2**31:
        refuse(f"index must be a game number (an integer from 0), got {_short(index)}")
    # packed: a file of thousands of games is held as bytes of actions and one short text of scores each
    return {"index": index, "num_players": n, "agents": agents, "seed": seed,
            "actions": np.asarray(actions, dtype=np.uint8), "packed_scores": json.dumps(scores, separators=(",", ":"))}


def _scores(record: dict):
    """A record's recorded scores (unpacked), or None."""
    packed = record.get("packed_scores")
    return json.loads(packed) if packed is not None else record.get("scores")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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


def _short_text(error: Exception, limit: int = 2000) -> str:
    text = str(error)
    return text if len(text) <= limit else text[:limit] + "..."


def _positions(record: dict) -> list:
    """Every position of a record, replayed through the engine (a tournament record's scores are checked)."""
    if record.get("actions") is not None:
        steps = []
        try:
            for game, seat, action in replay_moves(record):
                steps.append((game.clone(), seat, action))
                last = game
        except (ReplayError, ValueError) as error:
            raise WebError(f"game {record['index']} cannot be replayed: {_short_text(error)}", 422) from None
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
    """The server's games and watched files by id, each behind its own lock; the registry has one too.

    Bounded: at most ``max_games`` games and ``max_watches`` files (of ``watch_bytes`` in all) in memory, none
    idle longer than ``idle_seconds``. Every game is autosaved to ``save_dir/game-<id>.json`` when it starts
    and after each move, so a game let go (or lost by a server restart) reopens from its file when its id is
    asked for. A game is let go only when its latest position is in that file and no request is using it: one
    whose autosave failed stays in memory (its autosave is tried again when it would be let go), and a new game
    is refused (507) rather than held beyond ``max_games`` while it cannot be saved.
    """

    def __init__(self, save_dir: str | os.PathLike = "packetrow-saves", rule: OpponentRule = OpponentRule(),
                 max_games: int = MAX_GAMES, max_watches: int = MAX_WATCHES, watch_bytes: int = WATCH_BYTES,
                 idle_seconds: float = IDLE_SECONDS, clock=time.monotonic):
        self.save_dir = Path(save_dir)
        self.rule = rule
        self.max_games, self.max_watches, self.watch_bytes = max_games, max_watches, watch_bytes
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._items: OrderedDict[str, object] = OrderedDict()  # least recently used first
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()
        self._reopening = threading.Lock()

    def add(self, item, key: str | None = None, on_disk: bool = False) -> str:
        """Register a game or a watched file; its id (new and random if not given). A game is autosaved first,
        unless ``on_disk`` (reopened from its autosave, which holds it already).

        A game that cannot be autosaved while ``max_games`` games are held already is refused (WebError 507)."""
        key = key or secrets.token_urlsafe(12)
        if isinstance(item, PlaySession):
            item.key = key
            if not on_disk:
                self.autosave(item)
        with self._lock:
            self._items[key] = item
            self._items.move_to_end(key)
            self._used[key] = self._clock()
            self._let_go()
            if isinstance(item, PlaySession) and item.autosave_error and self._games_held() > self.max_games:
                self._forget(key)  # never held by a request: no one else has its id yet
                raise WebError(f"{item.autosave_error}; the server already holds {self.max_games} games in memory, "
                               "some of them unsaved, so it starts no more until its save folder can be written",
                               507)
        return key

    def _games_held(self) -> int:
        return sum(isinstance(item, PlaySession) for item in self._items.values())

    def _let_go(self) -> None:
        """Let go of the idle, then of the least recently used beyond the limits; a game only once it is on disk
        and not in use (``_release``)."""
        now = self._clock()
        for key in [k for k, used in self._used.items() if now - used > self.idle_seconds]:
            self._release(key)
        games = [k for k, item in self._items.items() if isinstance(item, PlaySession)]
        excess = len(games) - self.max_games
        for key in games[:-1]:  # never the game just added or asked for: it is the one in use
            if excess <= 0:
                break
            excess -= self._release(key)
        watches = [(k, item.size) for k, item in self._items.items() if isinstance(item, Replay)]
        size = sum(s for _, s in watches)
        for number, (key, held) in enumerate(watches):
            if len(watches) - number <= self.max_watches and size <= self.watch_bytes:
                break
            self._forget(key)
            size -= held

    def _release(self, key: str) -> bool:
        """Let go of ``key`` if it may go now; whether it went. A game goes only when no request holds its lock and
        its latest position is in its autosave (a failed autosave is tried again here, at most once a minute:
        every request comes here, and a full disk fails every write); it is marked
        ``let_go`` under its lock, so a request that fetched it before waits, then reopens it from the file."""
        item = self._items.get(key)
        if isinstance(item, PlaySession):
            if not item.lock.acquire(blocking=False):  # a request is using it
                return False
            try:
                if item.autosave_error and self._clock() - item.autosave_failed_at >= AUTOSAVE_RETRY_SECONDS:
                    self.autosave(item)
                if item.autosave_error:  # not on disk: letting it go would lose it
                    return False
                item.let_go = True
            finally:
                item.lock.release()
        self._forget(key)
        return True

    def _forget(self, key: str) -> None:
        self._items.pop(key, None)
        self._used.pop(key, None)

    def _held(self, key, kind):
        with self._lock:
            self._let_go()
            item = self._items.get(key) if isinstance(key, str) else None
            if isinstance(item, kind):
                self._items.move_to_end(key)
                self._used[key] = self._clock()
                return item
        return None

    def get(self, key, kind):
        """The game or watched file ``key`` of class ``kind``; a game not in memory reopens from its autosave."""
        item = self._held(key, kind)
        if item is not None:
            return item
        if kind is PlaySession and isinstance(key, str) and KEY.fullmatch(key):
            # one reopening at a time: two requests for a game let go must not make two copies of it
            with self._reopening:
                item = self._held(key, kind)
                if item is not None:
                    return item
                path = self.save_dir / f"game-{key}.json"
                if path.is_file():
                    item = self._read(path, path.name)
                    self.add(item, key, on_disk=True)
                    return item
        if kind is PlaySession:
            raise WebError(f"no game {_short(key)} on the server, and no autosave of it in {self.save_dir}: it was "
                           "deleted, or saved in another folder; resume a saved game or start a new one", 404)
        raise WebError(f"no watched file {_short(key)} (files are let go after {self.idle_seconds / 60:g} idle "
                       "minutes or when others are opened): open it again", 404)

    @contextlib.contextmanager
    def playing(self, key):
        """The game ``key`` under its lock, for one request (``get``; reopened from its autosave if the server let
        it go after it was fetched, so that no move is made on a copy the server no longer holds)."""
        while True:
            session = self.get(key, PlaySession)
            with session.lock:
                if not session.let_go:
                    yield session
                    return

    def counts(self) -> dict:
        """How many games and watched files are in memory."""
        with self._lock:
            items = list(self._items.values())
        return {"games": sum(isinstance(x, PlaySession) for x in items),
                "watches": sum(isinstance(x, Replay) for x in items)}

    # --------------------------------------------------------------------------------- saved games on disk
    def autosave(self, session: PlaySession) -> None:
        """Write the game to its own file, ``game-<id>.json``; a failure is kept on the session for the page."""
        try:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            write_save(str(self.save_dir / f"game-{session.key}.json"), session.saved())
            session.autosave_error = None
        except (OSError, ValueError, TypeError) as error:
            session.autosave_error = f"cannot autosave to {self.save_dir}: {save_error_text(error)}"
            session.autosave_failed_at = self._clock()

    def save(self, session: PlaySession, name, overwrite=False) -> str:
        """Save ``session``: to its own autosave file (no ``name``), or as ``name`` (+ .json); the file name.

        A name another file already has is refused (409) unless ``overwrite``: one game never replaces another's
        file by accident, even when two are saved under one name at the same moment (``write_save``).
        """
        if name is None:
            self.autosave(session)
            if session.autosave_error:
                raise WebError(session.autosave_error, 507)
            return f"game-{session.key}.json"
        if not isinstance(name, str) or not SAVE_NAME.fullmatch(name):
            raise WebError("a save name is 1-80 letters, digits, '-', '_' or '.', starting with a letter or digit; "
                           f"got {_short(name)}")
        if not isinstance(overwrite, bool):
            raise WebError(f"overwrite must be true or false, got {_short(overwrite)}")
        if not name.endswith(".json"):
            name += ".json"
        if AUTOSAVE.fullmatch(name) and name != f"game-{session.key}.json":
            raise WebError(f"{name} is the name of another game's autosave: choose another name", 409)
        try:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            # without overwrite the name is taken in one step, so of two games saved under it at once one is refused
            write_save(str(self.save_dir / name), session.saved(), replace=overwrite)
        except FileExistsError:
            raise WebError(f"a saved game named {name} already exists in {self.save_dir}: choose another name, or "
                           "send overwrite: true to replace it", 409) from None
        except (OSError, ValueError, TypeError) as error:
            raise WebError(f"cannot save {name}: {save_error_text(error)}", 507) from None
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
            except (OSError, ValueError, KeyError, TypeError, RecursionError):
                continue  # not a saved game: not listed
        return out

    def load_saved(self, name) -> str:
        """Open the saved game ``name`` of the save folder; its id (a game's own autosave reopens that game)."""
        if not isinstance(name, str) or not SAVE_NAME.fullmatch(name):
            raise WebError(f"no saved game {_short(name)}")
        own = AUTOSAVE.fullmatch(name)
        if own:
            self.get(own.group(1), PlaySession)  # in memory already, or reopened from this very file
            return own.group(1)
        path = self.save_dir / name
        if not path.is_file():
            raise WebError(f"no saved game {name!r} in {self.save_dir}", 404)
        return self.add(self._read(path, name))

    def _read(self, path: Path, name: str) -> PlaySession:
        try:
            saved = read_save(str(path))
        except PlayError as error:
            raise WebError(str(error).replace(str(path), name)) from None
        if saved["seat"] is None:
            raise WebError(f"{name} holds a bare position without a seat: watch it in the Watch tab")
        return _resume(saved, self.rule)
