"""A seeded mutation fuzzer for what users load: saved games (``Game.from_dict``) and card catalogues.

Every mutated input must either be refused with a ``ValueError`` that says what is wrong, or load to a game
that saves as JSON, loads again to the same position, gives observations inside the declared space, and plays
to the end with random legal actions, every card in one place and cash never negative (issue 11).

    stats = fuzz_saved_games(seed=0, count=1000)   # Counter: refused / loaded / failures
    stats = fuzz_catalogues(seed=0, count=200, folder=tmp_path)

The test suite runs a few thousand mutations; ``benchmarks/fuzz_loading.py`` runs it for minutes.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import random
import time
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

from packetrow_env import actions
from packetrow_env import cards as catalogue
from packetrow_env.engine import Game
from packetrow_env.observation import MODES, encoder
from packetrow_env.state import (CURRENT, DECK, FUTURE, NUM_LOCATIONS, OVER)

INTERESTING = (-1, 0, 1, 2, 3, 4, 5, 6, 24, 36, 47, 48, 171, 172, 481, 482, 945, 946, 2**31 - 1, 2**31, 2**63,
               2**128, 10**400, True, False, None, "1", 1.5, [], {})
PHASE_NAMES = ("choose_board", "take", "must_take", "pay", "over", "Over", "")
MAX_STEPS = 20_000  # no game comes near (R-END-2): more means a game that does not end


class FuzzFailure(AssertionError):
    """An input that neither was refused with a ValueError nor loaded to a sound game."""


# ---------------------------------------------------------------- checking a loaded game

def check_game(game: Game, rng: random.Random, slowest: list | None = None) -> int:
    """Save/load round trip, observations in their space, and a random playout to the end with the invariants
    checked after every step. Returns the number of steps played; ``slowest`` keeps the slowest step's CPU
    seconds and what it was."""
    d = game.to_dict()
    again = Game.from_dict(json.loads(json.dumps(d)), cards=game.cards)
    if again.to_dict() != d:
        raise FuzzFailure("a loaded game does not load again to the same position")
    enc = encoder(game.cards)
    steps = 0
    while True:
        _check_state(game)
        for mode in MODES if steps % 10 == 0 or game.is_over else ():
            for seat in range(game.num_players):
                vector = enc.encode(game, seat, mode)
                if not (np.isfinite(vector).all() and vector.min() >= 0 and vector.max() <= enc.high):
                    raise FuzzFailure(f"an observation ({mode}, seat {seat}) is outside its declared space "
                                      f"[0, {enc.high}]: min {vector.min()}, max {vector.max()}")
        if game.is_over:
            break
        if steps >= MAX_STEPS:
            raise FuzzFailure(f"the game did not end in {MAX_STEPS} steps")
        legal = game.legal_actions()
        if not legal:
            raise FuzzFailure(f"no legal action in a running game (phase {game.phase})")
        action = legal[rng.randrange(len(legal))]
        player = game.current_player
        start = time.process_time()  # CPU time: what the step costs, whatever else the machine runs
        game.step(action)
        elapsed = time.process_time() - start
        if slowest is not None and elapsed > slowest[0]:
            contracts = sum(1 for c in game.hand(player) if game.cards.kind[c] == catalogue.CONTRACT)
            slowest[:] = [elapsed, f"{actions.name(action)}, {contracts} contracts left in hand"
                                   + (", the last step" if game.is_over else "")]
        steps += 1
    json.dumps(game.to_dict())
    game.scores()
    return steps


def _check_state(game: Game) -> None:
    s = game.state
    n = s.num_players
    location = s.location
    if location.min() < 0 or location.max() >= NUM_LOCATIONS:
        raise FuzzFailure("a card has no place")
    for b in range(4):
        deck = s.deck_cards(b)
        for code, ids in ((DECK + b, deck), (CURRENT + b, s.current[b][s.current[b] >= 0]),
                          (FUTURE + b, s.future[b][s.future[b] >= 0])):
            if not (location[ids] == code).all() or len(ids) != int((location == code).sum()):
                raise FuzzFailure(f"board {b}: the cards of location {code} and its piles disagree")
    if (s.cash[:n] < 0).any():
        raise FuzzFailure(f"negative cash: {s.cash[:n].tolist()}")
    if s.phase != OVER and s.current_player not in range(n):
        raise FuzzFailure("no player to act in a running game")


def _attempt(stats: Counter, failures: list, describe, load, rng: random.Random, slowest: list | None):
    """Load one input and check it; count the outcome, keep a failure's description."""
    try:
        game = load()
    except ValueError as error:
        if not str(error).strip():
            failures.append((describe(), "a ValueError without a message"))
            stats["failures"] += 1
        else:
            stats["refused"] += 1
        return
    except Exception:  # anything else is what the fuzzer looks for
        failures.append((describe(), traceback.format_exc(limit=3)))
        stats["failures"] += 1
        return
    try:
        stats["steps"] += check_game(game, rng, slowest)
        stats["loaded"] += 1
    except Exception:
        failures.append((describe(), traceback.format_exc(limit=4)))
        stats["failures"] += 1


# ---------------------------------------------------------------- saved games

def corpus(rng: random.Random, size: int = 12) -> list[dict]:
    """Valid saved games to mutate: random games of 2-5 players stopped at random steps (some finished)."""
    out = []
    for i in range(size):
        game = Game.new(2 + i % 4, seed=rng.randrange(10**6), random_start=bool(i % 3))
        play = np.random.default_rng(rng.randrange(10**6))
        stop = rng.choice((0, 5, 30, 80, 150, 10**6))
        for _ in range(stop):
            if game.is_over:
                break
            game.step(int(play.choice(game.legal_actions())))
        out.append(game.to_dict())
    return out


def _piles(d: dict) -> list[tuple[list, str]]:
    """Every list of card ids in a saved game, with its kind of pile."""
    piles = []
    for board in d.get("boards", []) if isinstance(d.get("boards"), list) else []:
        if isinstance(board, dict):
            for key in ("deck", "discard", "current", "future"):
                if isinstance(board.get(key), list):
                    piles.append((board[key], key))
    if isinstance(d.get("removed"), list):
        piles.append((d["removed"], "removed"))
    for player in d.get("players", []) if isinstance(d.get("players"), list) else []:
        if isinstance(player, dict):
            for key in ("hand", "ships"):
                if isinstance(player.get(key), list):
                    piles.append((player[key], key))
    return piles


def _pick(rng: random.Random, d: dict):
    """A random place holding a scalar: (container, key)."""
    places = [(d, k) for k in d if k not in ("boards", "players", "rng")]
    for board in d.get("boards", []) if isinstance(d.get("boards"), list) else []:
        if isinstance(board, dict):
            places += [(board, k) for k in board]
    for player in d.get("players", []) if isinstance(d.get("players"), list) else []:
        if isinstance(player, dict):
            places += [(player, k) for k in player]
    return rng.choice(places)


def mutate_saved_game(d: dict, rng: random.Random) -> dict:
    """One to three random changes to a copy of a saved game."""
    d = copy.deepcopy(d)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        piles = _piles(d)
        op = rng.randrange(12)
        if op == 0:  # a scalar gets an interesting value
            container, key = _pick(rng, d)
            container[key] = rng.choice(INTERESTING)
        elif op in (1, 2) and piles:  # move a card to another pile (into a slot row: over a slot's card)
            (source, source_kind), (target, target_kind) = rng.choice(piles), rng.choice(piles)
            held = [i for i, c in enumerate(source) if c is not None]
            if not held or source is target or not target and target_kind in ("current", "future"):
                continue
            i = rng.choice(held)
            card = source[i]
            if source_kind in ("current", "future"):
                source[i] = None
            else:
                source.pop(i)
            if target_kind in ("current", "future"):
                target[rng.randrange(len(target))] = card
            else:
                target.append(card)
        elif op == 3 and piles:  # swap two cards
            (a, _), (b, _) = rng.choice(piles), rng.choice(piles)
            if a and b:
                i, j = rng.randrange(len(a)), rng.randrange(len(b))
                a[i], b[j] = b[j], a[i]
        elif op == 4 and piles:  # drop or duplicate a card
            pile, _ = rng.choice(piles)
            if pile:
                if rng.random() < 0.5:
                    pile.pop(rng.randrange(len(pile)))
                else:
                    pile.append(rng.choice(pile))
        elif op == 5:  # a flag flips
            owners = [x for x in (d.get("boards") or []) + (d.get("players") or []) if isinstance(x, dict)]
            if owners:
                owner = rng.choice(owners)
                for key in ("exhausted", "has_piece"):
                    if key in owner:
                        owner[key] = not owner[key] if isinstance(owner[key], bool) else True
        elif op == 6:
            d["phase"] = rng.choice(PHASE_NAMES)
            if rng.random() < 0.5:
                d["current_board"] = rng.choice((None, 0, 1, 2, 3))
        elif op == 7:
            d["chosen_boards"] = rng.sample(range(4), rng.randint(0, 4))
        elif op == 8:
            contracts = np.flatnonzero(catalogue.load().kind == catalogue.CONTRACT).tolist()
            d["pending_shipment"] = rng.sample(contracts, rng.randint(0, 3))
        elif op == 9:
            d["rng"] = rng.choice((
                json.loads(json.dumps(np.random.MT19937(1).state, default=lambda a: a.tolist())),
                np.random.PCG64DXSM(rng.randrange(100)).state, np.random.SFC64(2).state | {"state": {}},
                {"bit_generator": "PCG64", "state": {"state": rng.choice(INTERESTING), "inc": 1},
                 "has_uint32": 0, "uinteger": 0}, None, "PCG64"))
        elif op == 10:
            d["history"] = rng.choice(([0] * rng.randint(0, 3), [rng.choice(INTERESTING)], None, "x"))
        else:  # a key goes or comes
            if rng.random() < 0.5 and d:
                d.pop(rng.choice(list(d)))
            else:
                d[rng.choice(("extra", "version", "round"))] = rng.choice(INTERESTING)
    return d


def fuzz_saved_games(seed: int, count: int, stop_at: float | None = None, progress=None,
                     slowest: list | None = None) -> tuple[Counter, list]:
    """Mutate valid saved games `count` times (or until time.monotonic() passes `stop_at`)."""
    rng = random.Random(seed)
    base = corpus(rng)
    stats, failures = Counter(), []
    for i in range(count):
        if stop_at is not None and time.monotonic() > stop_at:
            break
        mutated = mutate_saved_game(rng.choice(base), rng)
        _attempt(stats, failures, lambda: json.dumps(mutated, default=str)[:2000],
                 lambda: Game.from_dict(mutated), rng, slowest)
        stats["inputs"] += 1
        if progress is not None:
            progress(1)
    return stats, failures


# ---------------------------------------------------------------- catalogues

CELL_VALUES = ("", "0", "1", "2", "3", "-1", "6", "7", "101", "40000", "9" * 30, "1.5", "x", "１", " 2 ", '"',
               "\x00", "contract", "money", "ship", "gold", "building", "grain", "france", "start", "docks",
               "y" * 150, "z" * 5000)


def default_rows() -> list[dict]:
    with open(catalogue.DEFAULT_PATH, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def mutate_catalogue(rows: list[dict], rng: random.Random) -> str:
    """The text of a catalogue CSV after one to three random changes."""
    rows = copy.deepcopy(rows)
    columns = list(catalogue.COLUMNS)
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.randrange(8)
        if op <= 2:  # a cell gets another value
            rng.choice(rows)[rng.choice(columns)] = rng.choice(CELL_VALUES)
        elif op == 3:  # two rows swap a column's values
            a, b = rng.choice(rows), rng.choice(rows)
            column = rng.choice(columns[1:])
            a[column], b[column] = b.get(column, ""), a.get(column, "")
        elif op == 4:  # a cell copies the same column of another row
            column = rng.choice(columns[1:])
            rng.choice(rows)[column] = rng.choice(rows).get(column, "")
        elif op == 5 and rows:
            rows.pop(rng.randrange(len(rows)))
        elif op == 6:
            rows.insert(rng.randrange(len(rows) + 1), dict(rng.choice(rows)))
        else:
            if rng.random() < 0.5:
                columns.remove(rng.choice(columns))
            else:
                columns.append(rng.choice(("colour", "value", "name")))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", restval="")
    writer.writeheader()
    writer.writerows(rows)
    text = out.getvalue()
    if rng.random() < 0.05:  # raw damage
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice(("\x00", "\xff", "\n", ",", '"', "\r")) + text[i + 1:]
    return text


def fuzz_catalogues(seed: int, count: int, folder: Path, stop_at: float | None = None, progress=None,
                    slowest: list | None = None) -> tuple[Counter, list]:
    """Mutate the default catalogue `count` times; a loaded one plays a game of 2-5 players."""
    rng = random.Random(seed)
    rows = default_rows()
    stats, failures = Counter(), []
    path = Path(folder) / "fuzzed_cards.csv"
    for i in range(count):
        if stop_at is not None and time.monotonic() > stop_at:
            break
        text = mutate_catalogue(rows, rng)
        path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
        num_players, deal = 2 + i % 4, rng.randrange(10**6)

        def load():
            return Game.new(num_players, seed=deal, cards=catalogue.load(path))

        _attempt(stats, failures, lambda: text[:3000], load, rng, slowest)
        stats["inputs"] += 1
        if progress is not None:
            progress(1)
    return stats, failures
