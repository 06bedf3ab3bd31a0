"""Human play against bots, shared by the terminal (``terminal``) and the browser (``packetrow_web``).

What both need besides their interface: the session (the game, the person's seat, the bots and their seeds),
saved games (the ``packetrow-play`` JSON format: write, read, check) and the narration of each move as the
person's seat saw it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import tempfile
from collections import Counter

import numpy as np

from packetrow_env import actions
from packetrow_env.cards import BOARDS, CONTRACT, MONEY, START
from packetrow_env.engine import Game
from packetrow_env.render import card_text, contract_text, future_supply, scores_lines, seat_label, shipment_text
from packetrow_env.seat_view import SeatView
from packetrow_env.state import END_THRESHOLD, NUM_BOARDS

from .registry import make_agent, parse_spec

SAVE_FORMAT = "packetrow-play"
SAVE_VERSION = 1


class PlayError(ValueError):
    """A bad option or saved-game file; the message says what was wrong and what is allowed."""


# what os.link raises where the file system has no hard links
NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS}
# what writing a save can raise: the OS (no such folder, a directory, no permission, a path too long), a path
# Python refuses (embedded null byte), and a position JSON cannot hold
SAVE_ERRORS = (OSError, ValueError, TypeError)


# ------------------------------------------------------------------------------------------ narration
def _counted(texts) -> str:
    counts = Counter(texts)
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(counts.items()))


def narrate(before, action: int, after, seat: int, names=None) -> list[str]:
    """What happened when the player to act in ``before`` played ``action`` (giving ``after``), as ``seat`` saw it."""
    s = before.state
    p = s.current_player
    you = p == seat
    who = "You" if you else seat_label(p, seat, names)

    def verb(second, third):
        return second if you else third

    lines = []
    cards = before.cards
    if action < actions.TAKE:
        board = BOARDS[action]
        extra = " to take a card there" if before.phase == "take" else ""
        lines.append(f"{who} {verb('choose', 'chooses')} the {board}{extra}.")
    elif action == actions.PASS:
        lines.append(f"{who} {verb('pass', 'passes')}.")
    elif action == actions.SHIP and after.phase == "pay":
        if you:
            lines.append(f"You {shipment_text(before, s.pending)} and now choose how to pay.")
    elif action == actions.MORE:
        if you:  # the page turned is public, but says nothing worth a line to the others
            lines.append("You look at the next payment options.")
    elif action == actions.SHIP or action >= actions.PAY:
        start = [c for c in s.pending if cards.board[c] == START]
        gone = set(before.hand(p) + before.ships(p)) - set(after.hand(p) + after.ships(p)) - set(s.pending)
        used = _counted(cards.describe(c) for c in gone) if not after.is_over else ""
        note = f" ({verb('your', 'his')} starting contract)" if start else ""
        lines.append(f"{who} {verb('ship', 'ships')}{shipment_text(before, s.pending)[4:]}{note}"
                     + (f", using {used}." if used else "."))
    elif action >= actions.ADD_CONTRACT:
        if you:
            card = int(cards.contract_ids[action - actions.ADD_CONTRACT])
            lines.append(f"You add the contract {contract_text(before, card)} to the shipment.")
    else:
        board = s.current_board
        future = action >= actions.TAKE_FUTURE
        supply = s.future if future else s.current
        card = int(supply[board, action - (actions.TAKE_FUTURE if future else actions.TAKE)])
        where = f"{future_supply(board)}, spending an assistant" if future else f"the {BOARDS[board]}"
        line = f"{who} {verb('take', 'takes')} the {card_text(before, card)} from {where}"
        if not after.is_over:
            cashed = [c for c in before.hand(p) if cards.kind[c] == MONEY and c not in after.hand(p)]
            if cashed:
                line += f" (cashing {_counted(cards.describe(c) for c in cashed)})"
        lines.append(line + ".")
    if after.state.round != s.round or after.is_over:
        lines.extend(_round_end(before, after, seat, names))
    return lines


def _round_end(before, after, seat: int, names) -> list[str]:
    s, t = before.state, after.state
    refilled = ", ".join(f"the {BOARDS[b]}" for b in sorted(s.chosen_order))
    lines = [f"--- Round {s.round} ends" + (f"; refilled: {refilled}" if refilled else "") + "."]
    for b in range(NUM_BOARDS):
        if t.exhausted[b] and not s.exhausted[b]:
            lines.append(f"The {BOARDS[b]} is now exhausted (its deck could not refill it).")
    if after.is_over:
        return lines + _game_end(before, after, seat, names)
    hm = t.harbour_master
    lines.append(f"--- Round {t.round} begins. Harbour master: "
                 + ("you." if hm == seat else f"{seat_label(hm, seat, names)}."))
    return lines


def _game_end(before, after, seat: int, names) -> list[str]:
    n = after.num_players
    count = int(after.state.exhausted.sum())
    lines = ["", f"The game is over: {count} board{'s are' if count > 1 else ' is'} exhausted "
             f"({END_THRESHOLD[n]} needed). Final shipments and cashing:"]
    cards = after.cards
    for p in range(n):
        who = "You" if p == seat else seat_label(p, seat, names)
        gone = [c for c in before.hand(p) if c not in set(after.hand(p))]
        shipped = [c for c in gone if cards.kind[c] == CONTRACT]
        cashed = [c for c in gone if cards.kind[c] == MONEY]
        parts = []
        if shipped:
            parts.append(shipment_text(after, shipped))
        if cashed:
            parts.append(f"cash money cards worth ${int(cards.money[cashed].sum())}")
        lines.append(f"  {who}: " + ("; ".join(parts) if parts else "nothing"))
    lines.append("")
    lines.append("Final scores:")
    lines.extend("  " + line for line in scores_lines(after, seat, names))
    winners = [p for p, row in enumerate(after.scores()) if row["winner"]]
    labels = ["you" if p == seat else seat_label(p, seat, names) for p in winners]
    if len(winners) == 1:
        lines.append("You win!" if winners[0] == seat else f"The winner is {labels[0]}.")
    else:
        lines.append("Shared win: " + ", ".join(labels) + ".")
    return lines


# ------------------------------------------------------------------------------------------ saved games
def save_data(game, seat: int, opponents: list[str], seed) -> dict:
    """A saved terminal game: the position (``game.to_dict()``), the opponents' specs in seat order, seat and seed."""
    return {"format": SAVE_FORMAT, "format_version": SAVE_VERSION, "seat": seat, "seed": seed,
            "opponents": list(opponents), "game": game.to_dict()}


def write_save(path: str, data: dict, replace: bool = True) -> None:
    """Write a saved game as JSON, atomically: a new temporary file beside ``path``, then moved to ``path``.

    ``replace``: the file takes the name whether or not another file has it. Else it takes the name only if no
    file has it, in one step (a hard link), and otherwise raises FileExistsError: of two saves under one name at
    once, exactly one succeeds. The temporary file's name is new (``tempfile``), so no existing file is touched but
    ``path``; on any failure it is removed, so a failed save leaves the folder as it was.
    """
    text = json.dumps(data)  # first: a position JSON cannot hold fails before any file exists
    folder = os.path.dirname(os.path.abspath(path))
    handle, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        if replace:
            os.replace(tmp, path)
        else:
            _take_new_name(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _take_new_name(tmp: str, path: str) -> None:
    """Give the written file ``tmp`` the name ``path`` if no file has it (FileExistsError if one has)."""
    try:
        os.link(tmp, path)  # the check and the naming are one step: no other save can come between them
    except OSError as error:
        if error.errno not in NO_HARD_LINKS:
            raise  # FileExistsError among them
        # a file system without hard links (FAT, some network shares): the name is reserved by an exclusive
        # create, then the written file replaces the empty one, so the name never holds a partial save
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
    else:
        os.unlink(tmp)


def save_error_text(error: Exception) -> str:
    """Why a save failed, on one line."""
    if isinstance(error, OSError):
        where = f" ({error.filename})" if error.filename else ""
        return f"{error.strerror or error}{where}"
    return str(error)


def read_save(path: str) -> dict:
    """Read and check a saved game file; a PlayError says what is wrong with it.

    Returns {"game": Game, "seat": int|None, "opponents": list|None, "seed": int|None}; a bare
    ``game.to_dict()`` position is accepted too (then seat, opponents and seed are None).
    """
    bad = f"{path} is not a saved Packet Row game"
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise PlayError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise PlayError(f"{bad} (it is not a text file)") from None
    except ValueError as error:  # a path Python cannot open, e.g. with a null byte
        raise PlayError(f"cannot read {path!r}: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise PlayError(f"{bad} (not valid JSON: {error})") from None
    except RecursionError:  # thousands of nested brackets
        raise PlayError(f"{bad} (its JSON is nested too deeply)") from None
    return parse_save(data, path)


def parse_save(data, path: str = "the saved game") -> dict:
    """Check a saved game already parsed from JSON (``path`` names it in errors); as ``read_save`` returns."""
    bad = f"{path} is not a saved Packet Row game"
    if not isinstance(data, dict):
        raise PlayError(f"{bad} (expected a JSON object written by 'packetrow play --save' or its 'save' command)")
    if data.get("format") == SAVE_FORMAT:
        if data.get("format_version") != SAVE_VERSION:
            raise PlayError(f"{path}: unsupported save format version {data.get('format_version')!r} "
                            f"(this version reads {SAVE_VERSION})")
        missing = [k for k in ("game", "seat", "opponents", "seed") if k not in data]
        if missing:
            raise PlayError(f"{path}: the saved game lacks {', '.join(missing)}")
        position, seat, opponents, seed = data["game"], data["seat"], data["opponents"], data["seed"]
        if not isinstance(opponents, list) or not all(isinstance(o, str) for o in opponents):
            raise PlayError(f"{path}: 'opponents' must be a list of agent specs, got {opponents!r}")
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise PlayError(f"{path}: 'seat' must be a seat number, got {seat!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise PlayError(f"{path}: 'seed' must be a non-negative integer or null, got {seed!r}")
    elif "boards" in data and "players" in data and "version" in data:
        position, seat, opponents, seed = data, None, None, None  # a bare position (Game.to_dict output)
    else:
        raise PlayError(f"{bad} (no 'format': {SAVE_FORMAT!r} key; expected a file written by "
                        "'packetrow play --save' or its 'save' command, or a Game.to_dict() position)")
    if not isinstance(position, dict):
        raise PlayError(f"{path}: 'game' must be a position object (Game.to_dict output)")
    try:
        game = Game.from_dict(position)
    except (ValueError, TypeError, KeyError) as error:
        raise PlayError(f"{path}: the saved position is not valid: {error}") from None
    if seat is not None and not 0 <= seat < game.num_players:
        raise PlayError(f"{path}: seat {seat} does not exist in a {game.num_players}-player game")
    if opponents is not None and len(opponents) != game.num_players - 1:
        raise PlayError(f"{path}: {len(opponents)} opponents saved for a {game.num_players}-player game "
                        f"(expected {game.num_players - 1})")
    return {"game": game, "seat": seat, "opponents": opponents, "seed": seed}


# ------------------------------------------------------------------------------------------ opponents
def opponent_specs(specs: list[str], players: int) -> list[str]:
    """One spec per opponent seat: the given list (players - 1 long) or one spec for every opponent."""
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise PlayError(f"--opponents lists {len(specs)} agents for a {players}-player game: give {players - 1} "
                        f"(one per opponent, comma-separated) or one for all")
    for spec in specs:
        try:
            parse_spec(spec)
        except ValueError as error:
            raise PlayError(str(error)) from None
    return specs


def agent_seed(seed: int, seat: int, moves: int) -> int:
    """The seed of the bot at ``seat`` when it is built after ``moves`` moves of the game ``seed`` dealt."""
    return int(np.random.SeedSequence([seed, seat, moves]).generate_state(1)[0])


@functools.lru_cache(maxsize=4)
def _policy(path: str, stamp: int):
    """A model file's policy, loaded once for every bot that plays it (``stamp``: the file's mtime; read-only)."""
    from .policy import load_policy
    return load_policy(path)


def build_bot(spec: str, seed: int):
    """An opponent from its spec (agents.registry.make_agent), or a PlayError saying why it cannot be built.

    Bots of one model share its weights (a server with many games at once holds one copy of the shipped agent).
    """
    try:
        name, options = parse_spec(spec)
        if name == "ppo":
            from .policy import SHIPPED_MODEL, PolicyAgent
            path = str(options.pop("path", SHIPPED_MODEL))
            try:
                stamp = os.stat(path).st_mtime_ns
            except (OSError, ValueError):
                return make_agent(spec, seed)  # its own error names what is wrong with the path
            return PolicyAgent(seed=seed, policy=_policy(path, stamp), name=spec.strip(), **options)
        return make_agent(spec, seed)
    except ImportError as error:
        raise PlayError(f"the agent {spec!r} is not available ({error}); try --opponents random") from None
    except ValueError as error:
        raise PlayError(str(error)) from None



# ------------------------------------------------------------------------------------------ the session
class Session:
    """A person at ``seat`` against bots (``opponents``: one spec per other seat, in seat order) in one game."""

    def __init__(self, game: Game, seat: int, opponents: list[str], seed: int):
        self.game = game
        self.seat = seat
        self.opponents = list(opponents)
        self.seed = seed
        others = [p for p in range(game.num_players) if p != seat]
        self.names = [None] * game.num_players
        self.names[seat] = "you"
        moves = len(game.state.history)
        self.bots = {}
        for p, spec in zip(others, self.opponents):
            self.names[p] = spec
            self.bots[p] = build_bot(spec, agent_seed(seed, p, moves))

    def bot_move(self, p: int) -> int:
        """The move of the bot at seat ``p``, given only its own seat's tracked view."""
        return int(self.bots[p].act(SeatView(self.game, p, "tracked")))

    def saved(self) -> dict:
        """The saved-game data of this session (the full position: for a file, never for a bot or a page)."""
        return save_data(self.game, self.seat, self.opponents, self.seed)
