"""Tournaments between agents: seat-balanced line-ups, seeded games, statistics, ratings, saved games and replays.

Entries. A tournament has k >= n entries (n = players per game), each a spec string for
``packetrow_agents.registry.make_agent`` ("heuristic", "ismcts:iters=200"), a factory ``seed -> agent``, or an
agent object. Entries are identified by their position; they are named by spec (or the agent's
``name``), and a name given to several entries gets ``#1``, ``#2``, ... in order, so
``heuristic,random,random,random`` gives heuristic, random#1, random#2, random#3, each with its own row.

Seat rotation. Games come in cycles of k. Cycle c draws a permutation P of the entries from the
seed; its j-th game seats P[(j + s) mod k] at seat s. So over every k consecutive games (from
game 0) each entry plays each seat exactly once, and the random P varies who sits next to whom
and, when k > n, who meets whom.

Seeds. Game g's deal seed and its seats' agent seeds come from ``numpy.random.SeedSequence(seed,
spawn_key=...)`` and the game index alone. An agent with ``reset(seed)`` is built once per process
and reseeded before each game; one without is built per game from its spec or factory (an agent
object without ``reset`` is used as it is). So results are the same whatever the number of workers.
Workers are forked where the platform allows, so factories (lambdas) and live agent objects need not
pickle; each worker plays whole games on its own copy of the agents (``packetrow_arena.worker_pool``: a
worker that dies stops the run with ``WorkerDied``, naming it and the games it held, instead of a hang).

Duplicate deals (``duplicate="rotations"`` or ``"permutations"``, see ``packetrow_arena.duplicate_deals``). There are
exactly n entries; game g plays deal g // A under seat assignment g % A of the A assignments, so each deal
is played once per assignment, and the table's intervals are paired by deal.

Statistics. Ranks follow R-SCORE-4 ((VP, cash), higher better); tied seats share the mean of their
places. A win shared by k winners counts 1/k for each. Ratings: openskill's Plackett-Luce model,
one update per game in game order, ties allowed.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import records as game_records
from packetrow_agents.registry import make_agent, model_files, split_specs
from .replay import replay_moves
from packetrow_env.agent_protocol import NoMove, move_note
from packetrow_env.engine import Game
from packetrow_env.knowledge import known_hands
from packetrow_env.memory import check_fits
from packetrow_env.seat_view import SeatView
from packetrow_env.observation import MODES
from packetrow_env.render import describe_action, render
from packetrow_env.user_files import check_output_folder

from . import duplicate_deals
from . import stats
from .worker_pool import WorkerDied, WorkerPool

MIN_PLAYERS, MAX_PLAYERS = 2, 5
# first words of the SeedSequence spawn keys, so deals, agents and line-ups never share a stream
_DEAL_KEY, _AGENT_KEY, _LINEUP_KEY = 0, 1, 2

OUT_FILES = ("records.jsonl", "games.jsonl", "table.csv")  # what --out (TournamentResult.write) writes
TABLE_COLUMNS = ("entry", "agent", "games", "deals", "wins", "win_rate", "win_low", "win_high", "mean_vp", "vp_low",
                 "vp_high", "mean_rank", "rank_low", "rank_high", "mu", "sigma", "ordinal", "fair_share")


class TournamentError(ValueError):
    """A tournament was set up wrongly (bad agents, player count, number of games, ...)."""


# --------------------------------------------------------------------------- entries
@dataclass
class Entry:
    """One participant: where its agents come from, and a first agent built to check and name it."""

    index: int
    name: str
    source: object  # spec string, factory seed -> agent, or agent object
    prototype: object

    def agent(self, seed: int):
        """An agent for one game, seeded with ``seed``."""
        agent = self.prototype
        if hasattr(agent, "reset"):
            agent.reset(seed)
            return agent
        if _is_agent(self.source):  # an object we cannot rebuild: use it as it is
            return agent
        return _build(self.source, seed)


def _is_agent(source) -> bool:
    return callable(getattr(source, "act", None))


def _build(source, seed: int):
    if isinstance(source, str):
        return make_agent(source, seed)
    return source(seed)


def make_entries(specs: Sequence) -> list[Entry]:
    """Check and name the entries: spec strings, factories ``seed -> agent``, or agent objects."""
    if isinstance(specs, str):
        try:
            specs = split_specs(specs)
        except ValueError as error:
            raise TournamentError(str(error)) from None
    specs = list(specs)
    if not specs:
        raise TournamentError("no agents given; give at least as many agents as players, e.g. heuristic,random")
    names, prototypes = [], []
    for i, source in enumerate(specs):
        if isinstance(source, str):
            try:
                prototype = _build(source, 0)
            except ValueError as error:
                raise TournamentError(f"agent {i + 1} ({source!r}): {error}") from None
            name = source.strip()
        elif _is_agent(source):
            prototype = source
            name = getattr(source, "name", None) or type(source).__name__
        elif callable(source):
            prototype = source(0)
            if not _is_agent(prototype):
                raise TournamentError(f"agent {i + 1}: the factory {source!r} returned {prototype!r}, "
                                      "which has no act(observation, action_mask, game) method")
            name = getattr(prototype, "name", None) or getattr(source, "__name__", None) or type(prototype).__name__
        else:
            raise TournamentError(f"agent {i + 1} is {source!r}; allowed: a spec string (e.g. 'random'), "
                                  "a factory seed -> agent, or an agent object with act()")
        names.append(str(name))
        prototypes.append(prototype)
    return [Entry(i, name, source, prototype)
            for i, (name, source, prototype) in enumerate(zip(_disambiguate(names), specs, prototypes))]


def _disambiguate(names: list[str]) -> list[str]:
    counts = {name: names.count(name) for name in names}
    seen: dict[str, int] = {}
    result = []
    for name in names:
        if counts[name] > 1:
            seen[name] = seen.get(name, 0) + 1
            name = f"{name}#{seen[name]}"
        result.append(name)
    return result


# --------------------------------------------------------------------------- schedule
def lineup(game_index: int, num_entries: int, num_players: int, seed: int) -> list[int]:
    """The entry index at each seat of game ``game_index`` (see the module docstring for the rotation)."""
    cycle, position = divmod(game_index, num_entries)
    permutation = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_LINEUP_KEY, cycle)))\
        .permutation(num_entries)
    return [int(permutation[(position + seat) % num_entries]) for seat in range(num_players)]


def game_seeds(game_index: int, num_players: int, seed: int, deal_index: int | None = None) -> tuple[int, list[int]]:
    """(deal seed, agent seed per seat) of game ``game_index`` (dealt as deal ``deal_index``, default the game's)."""
    deal_index = game_index if deal_index is None else deal_index
    deal = np.random.SeedSequence(seed, spawn_key=(_DEAL_KEY, deal_index)).generate_state(1, np.uint64)[0]
    agents = np.random.SeedSequence(seed, spawn_key=(_AGENT_KEY, game_index)).generate_state(num_players)
    return int(deal), [int(a) for a in agents]


# --------------------------------------------------------------------------- playing
def play_game(agents: Sequence, deal_seed: int, observation_mode: str = "tracked",
              notes: list | None = None) -> tuple[Game, list[int]]:
    """Play one game with one agent per seat; returns the finished game and its actions.

    ``notes``: a list to which each move that its agent notes (``agent_protocol.move_note``) adds
    ``{"move": its number in the actions, "seat", "note"}``, in move order."""
    game = Game.new(len(agents), seed=deal_seed)
    actions = []
    while not game.is_over:
        seat = game.current_player
        agent = agents[seat]
        try:
            action = int(agent.act(SeatView(game, seat, observation_mode)))  # the seat's view, never the game
            game.step(action)
            note = move_note(agent) if notes is not None else None
        except Exception as error:
            name = getattr(agent, "name", type(agent).__name__)
            error.add_note(f"in move {len(actions)} by seat {seat} ({name}), deal seed {deal_seed}")
            raise
        if note is not None:
            notes.append({"move": len(actions), "seat": seat, "note": note})
        actions.append(action)
    return game, actions


@dataclass
class _Runner:
    """Plays whole games by index; one per process."""

    entries: list[Entry]
    num_players: int
    seed: int
    observation_mode: str
    assignments: list[tuple[int, ...]] | None = None  # duplicate deals: the seat assignments of every deal

    def play(self, index: int) -> dict:
        if self.assignments:
            deal, assignment = divmod(index, len(self.assignments))
            seats = list(self.assignments[assignment])
        else:
            deal, seats = index, lineup(index, len(self.entries), self.num_players, self.seed)
        deal_seed, agent_seeds = game_seeds(index, self.num_players, self.seed, deal)
        agents = [self.entries[e].agent(s) for e, s in zip(seats, agent_seeds)]
        notes: list[dict] = []
        try:
            game, actions = play_game(agents, deal_seed, self.observation_mode, notes)
        except Exception as error:
            error.add_note(f"in tournament game {index} (line-up {[self.entries[e].name for e in seats]})")
            raise
        scores = game.scores()
        record = {"index": index, "deal": deal, "seed": deal_seed, "agent_seeds": agent_seeds,
                  "num_players": self.num_players, "entries": seats, "agents": [self.entries[e].name for e in seats],
                  "specs": [_spec_text(self.entries[e]) for e in seats], "actions": actions, "scores": scores,
                  "ranks": stats.ranks(stats.score_keys(scores))}
        return dict(record, notes=notes) if notes else record  # a game without notes is recorded as before them

    def play_chunk(self, indices: list[int]) -> list[dict]:
        return [self.play(i) for i in indices]


def _spec_text(entry: Entry) -> str:
    return entry.source.strip() if isinstance(entry.source, str) else entry.name


def _check_int(name: str, value, low: int, high: int | None, allowed: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or value < low or (high is not None and value > high):
        raise TournamentError(f"{name} must be {allowed}, got {value!r}")
    return int(value)


# --------------------------------------------------------------------------- results
@dataclass
class TournamentResult:
    """Every game's record (in game order) and the per-entry table."""

    names: list[str]
    num_players: int
    seed: int
    observation_mode: str
    records: list[dict]
    table: list[dict] = field(default_factory=list)
    specs: list[str] = field(default_factory=list)  # each entry's spec text (its name for factories and objects)
    schedule: str = "rotation"  # or "duplicate-rotations" / "duplicate-permutations"
    models: dict = field(default_factory=dict)  # name -> sha256 of every model file the spec entries may read

    @property
    def fair_share(self) -> float:
        """The win rate of an entry as strong as the others: 1/n."""
        return 1.0 / self.num_players

    def row(self, name: str) -> dict:
        """The table row of the entry named ``name``."""
        for row in self.table:
            if row["agent"] == name:
                return row
        raise KeyError(f"no entry named {name!r}; entries: {', '.join(self.names)}")

    def format_table(self) -> str:
        """The table as aligned text, with the fair share and how to read it."""
        header = ["agent", "games", "wins", "win rate [95% CI]", "mean VP [95% CI]", "mean rank [95% CI]",
                  "mu ± sigma", "ordinal"]
        lines = [header]
        for r in self.table:
            lines.append([r["agent"], str(r["games"]), _number(r["wins"], 1),
                          f"{_percent(r['win_rate'])} [{_percent(r['win_low'])}, {_percent(r['win_high'])}]",
                          f"{_number(r['mean_vp'], 2)} [{_number(r['vp_low'], 2)}, {_number(r['vp_high'], 2)}]",
                          f"{_number(r['mean_rank'], 2)} [{_number(r['rank_low'], 2)}, {_number(r['rank_high'], 2)}]",
                          f"{r['mu']:.2f} ± {r['sigma']:.2f}", f"{r['ordinal']:.2f}"])
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        text = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths)))
                for line in lines]
        text.insert(1, "  ".join("-" * w for w in widths))
        n = self.num_players
        games = len(self.records)
        text.append("")
        text.append(f"{games} games of {n} players, seed {self.seed}, {self.observation_mode} observations. "
                    f"Fair share: 1/{n} = {_percent(self.fair_share)} wins, mean rank {(n + 1) / 2:.2f}.")
        text.append("A win shared by k winners counts 1/k; tied players share the mean of their places "
                    "(rank 1 = best). Rating: openskill Plackett-Luce, ordinal = mu - 3 sigma.")
        if self.schedule != "rotation":
            deals = self.table[0]["deals"]
            text.append(f"Duplicate deals ({self.schedule.split('-')[1]}): {deals} deals, each played under "
                        f"{games // max(deals, 1)} seat assignments; the intervals are paired by deal "
                        "(normal intervals over the deals' means).")
        elif games % len(self.names):
            text.append(f"Seats are balanced over multiples of {len(self.names)} games; {games} is not one.")
        return "\n".join(text)

    def header(self, source: str = "tournament") -> dict:
        """The header line of this tournament's record file (``packetrow_arena.records``)."""
        return game_records.make_header(source, self.num_players, self.names, self.specs or self.names, self.seed,
                                        self.schedule, self.observation_mode, self.models)

    def write(self, directory, overwrite: bool = False) -> tuple[Path, Path]:
        """Write ``records.jsonl``, ``games.jsonl`` and ``table.csv`` into ``directory``; returns the last two paths.

        ``records.jsonl`` is the record file (``packetrow_arena.records``); ``games.jsonl`` holds the same game
        lines without the header, which the browser's Watch tab reads until it reads record files.
        An existing output is replaced only with ``overwrite``.
        """
        directory = Path(directory)
        paths = [directory / name for name in OUT_FILES]
        existing = [str(path) for path in paths if path.exists()]
        if existing and not overwrite:
            raise FileExistsError(f"{', '.join(existing)} exist; pass overwrite (--overwrite) to replace them")
        records_path, games_path, table_path = paths
        game_records.write_records(records_path, self.header(), self.records, overwrite=True)
        with games_path.open("w") as f:
            for record in self.records:
                f.write(json.dumps(record, separators=(",", ":")) + "\n")
        with table_path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=TABLE_COLUMNS)
            writer.writeheader()
            writer.writerows(self.table)
        return games_path, table_path


def _number(value: float, digits: int) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def _percent(value: float) -> str:
    return "-" if math.isnan(value) else f"{100 * value:.1f}%"


def summarize(records: Sequence[dict], names: Sequence[str], num_players: int, paired: bool = False) -> list[dict]:
    """The per-entry table (columns ``TABLE_COLUMNS``) of game records, ratings updated in game order.

    ``paired``: the records are duplicate deals, and the win, VP and rank columns are paired by deal.
    """
    k = len(names)
    wins = [0.0] * k
    vps: list[list[float]] = [[] for _ in range(k)]
    places: list[list[float]] = [[] for _ in range(k)]
    ratings = [stats.new_rating()] * k
    for record in sorted(records, key=lambda r: r["index"]):
        seats = record["entries"]
        scores = record["scores"]
        game_ranks = stats.ranks(stats.score_keys(scores))
        for entry, share, row, place in zip(seats, stats.win_shares(scores), scores, game_ranks):
            wins[entry] += share
            vps[entry].append(row["vp"])
            places[entry].append(place)
        updated = stats.update_ratings([ratings[e] for e in seats], game_ranks)
        for entry, rating in zip(seats, updated):
            ratings[entry] = rating
    nan = math.nan
    table = []
    for e, name in enumerate(names):
        games = len(vps[e])
        win_low, win_high = stats.wilson_interval(wins[e], games) if games else (nan, nan)
        mean_vp, vp_low, vp_high = stats.mean_interval(vps[e]) if games else (nan, nan, nan)
        mean_rank, rank_low, rank_high = stats.mean_interval(places[e]) if games else (nan, nan, nan)
        mu, sigma = ratings[e]
        table.append({"entry": e, "agent": name, "games": games, "deals": games, "wins": wins[e],
                      "win_rate": wins[e] / games if games else nan, "win_low": win_low, "win_high": win_high,
                      "mean_vp": mean_vp, "vp_low": vp_low, "vp_high": vp_high, "mean_rank": mean_rank,
                      "rank_low": rank_low, "rank_high": rank_high, "mu": mu, "sigma": sigma,
                      "ordinal": stats.ordinal(ratings[e]), "fair_share": 1.0 / num_players})
    if paired and records:
        for row, columns in zip(table, duplicate_deals.paired_columns(records, k, num_players)):
            row.update(columns)
    return table


def run_tournament(specs: Sequence, num_players: int = 4, games: int = 100, seed: int = 0, workers: int = 1,
                   progress: bool = True, observation_mode: str = "tracked",
                   chunk_size: int | None = None, ray: str | bool = False,
                   duplicate: str | bool = False, out=None, overwrite: bool = False,
                   resume: bool = False) -> TournamentResult:
    """Play ``games`` seat-balanced games between the entries ``specs`` (spec strings, factories or agents).

    ``duplicate``: False for seat rotation; "rotations" (or True) or "permutations" to play every deal once per
    seat assignment (exactly one entry per seat; ``games`` a multiple of the assignments per deal).

    ``ray``: False plays here (``workers`` processes); True plays the games as Ray tasks on a local Ray
    instance started and stopped for it (or the caller's running Ray); an address string, on that cluster.
    The results are the same either way. A worker process that dies (killed, crashed) stops the run with
    ``WorkerDied`` (``packetrow_arena.worker_pool``), which names it and the games it held.

    ``chunk_size``: games a worker plays per task (None: a few tasks per worker, at most 10 games each with
    ``out``); the results do not depend on it, and with ``out`` an interrupted run loses only its chunks in
    flight, so 1 suits games of minutes.

    ``out``: a directory for the result's files (``TournamentResult.write``); its ``records.jsonl`` grows as games
    finish, so that ``resume`` can keep the games of an interrupted run (or of one with fewer ``games``) and play
    only the others, with the same results as one uninterrupted run (``RecordLog``). A run stopped by a dead
    worker says in a note how many games it kept there.
    """
    entries, schedule, (num_players, games, seed, workers, chunk_size) = _set_up(
        specs, num_players, games, seed, workers, chunk_size, observation_mode, duplicate)
    log = _record_log(entries, num_players, games, seed, observation_mode, schedule, out, overwrite, resume)
    result = _play_tournament(entries, num_players, games, seed, workers, progress, observation_mode, chunk_size, ray,
                              schedule, log)
    if out is not None:
        result.write(out, overwrite=True)
    return result


def _play_tournament(entries: list[Entry], num_players: int, games: int, seed: int, workers: int, progress: bool,
                     observation_mode: str, chunk_size: int | None, ray: str | bool, schedule: str,
                     log: RecordLog | None) -> TournamentResult:
    """Play the games of a checked set-up that ``log`` (if any) does not hold yet, recording them there."""
    runner = _Runner(entries, num_players, seed, observation_mode, _assignments(schedule, num_players))
    records: list[dict] = log.games if log else []  # a log's list: its games grow as chunks finish
    done = {game["index"] for game in records}
    try:
        _play(runner, [index for index in range(games) if index not in done], games, workers, progress, chunk_size,
              ray, log.append if log else records.extend, logged=log is not None)
    except WorkerDied as error:
        if log:
            error.add_note(log.kept())
        raise
    return _result(entries, num_players, seed, observation_mode, records, schedule)


def play_games(specs: Sequence, num_players: int, indices: Sequence[int], seed: int = 0, workers: int = 1,
               progress: bool = False, observation_mode: str = "tracked", chunk_size: int | None = None,
               ray: str | bool = False, duplicate: str | bool = False,
               on_chunk: Callable[[list[dict]], None] | None = None) -> list[dict]:
    """The records of games ``indices`` of the tournament ``run_tournament`` plays with the same entries, players,
    seed, observation mode and ``duplicate``, in index order: each exactly its record there (games are seeded by
    their index alone), whatever ``workers``, ``chunk_size`` or ``ray``.

    ``on_chunk``: called with each chunk's records as it finishes (to record them as they come), which sizes
    chunks as ``run_tournament`` does with ``out``. For callers that keep their own record of a tournament's games,
    such as the ladder's matches; a dead worker raises ``WorkerDied`` as there.
    """
    indices = sorted({_check_int("a game index", index, 0, None, "a non-negative integer") for index in indices})
    entries, schedule, (num_players, _, seed, workers, chunk_size) = _set_up(
        specs, num_players, None, seed, workers, chunk_size, observation_mode, duplicate)
    runner = _Runner(entries, num_players, seed, observation_mode, _assignments(schedule, num_players))
    records: list[dict] = []

    def finished(chunk: list[dict]) -> None:
        records.extend(chunk)
        if on_chunk is not None:
            on_chunk(chunk)

    _play(runner, indices, len(indices), workers, progress, chunk_size, ray, finished, logged=on_chunk is not None)
    return sorted(records, key=lambda r: r["index"])


def check_game_count(games: int, num_players: int) -> None:
    """A TournamentError, before any game is played, unless the records of ``games`` games fit in the memory
    available: a tournament keeps every game's record for its results (``records.records_bytes``)."""
    check_fits(f"{games:,} games of {num_players} players", game_records.records_bytes(games, num_players),
               TournamentError, "; give fewer games")


def _set_up(specs: Sequence, num_players: int, games: int | None, seed: int, workers: int, chunk_size: int | None,
            observation_mode: str, duplicate: str | bool) -> tuple[list[Entry], str, tuple]:
    """A tournament's entries, schedule and (players, games, seed, workers, chunk size), checked: a TournamentError
    says what is wrong before anything is played (``games`` None: some of a tournament's games, not counted)."""
    num_players = _check_int("the number of players", num_players, MIN_PLAYERS, MAX_PLAYERS, "2, 3, 4 or 5")
    if games is not None:
        games = _check_int("the number of games", games, 1, None, "a positive integer")
        check_game_count(games, num_players)
    seed = _check_int("the seed", seed, 0, None, "a non-negative integer")
    workers = _check_int("the number of workers", workers, 1, None, "a positive integer")
    if chunk_size is not None:
        chunk_size = _check_int("the chunk size", chunk_size, 1, None, "a positive integer (or None)")
    if observation_mode not in MODES:
        raise TournamentError(f"unknown observation mode {observation_mode!r}; allowed: {', '.join(MODES)}")
    entries = make_entries(specs)
    _check_entry_count(entries, num_players)
    schedule = check_schedule(duplicate, len(entries), num_players, games)
    return entries, schedule, (num_players, games, seed, workers, chunk_size)


def _record_log(entries: list[Entry], num_players: int, games: int, seed: int, observation_mode: str, schedule: str,
                out, overwrite: bool, resume: bool) -> "RecordLog | None":
    """The RecordLog of ``out`` (None without one), its header this tournament's."""
    if out is None:
        if resume:
            raise TournamentError("resume keeps the games recorded in an output directory: give out as well")
        return None
    header = _result(entries, num_players, seed, observation_mode, [], schedule).header()
    directory = Path(out)
    return RecordLog.open(directory / OUT_FILES[0], header, overwrite, resume, lambda kept: _beyond(kept, games),
                          [directory / name for name in OUT_FILES[1:]])


def _beyond(kept: list[dict], games: int) -> str | None:
    last = max((game["index"] for game in kept), default=-1)
    return f"records game {last}; ask for at least {last + 1} games" if last >= games else None


class RecordLog:
    """A run's ``records.jsonl`` written while it plays: the header first, then each chunk of games as it
    finishes, so that an interrupted run loses only the chunks in flight. Games are seeded by index alone
    (module docstring), so the recorded games are exactly those an uninterrupted run plays, and resuming
    plays the missing indices. Tournaments and the ladder (``packetrow_arena.ladder``) keep their games in one."""

    def __init__(self, path: Path, games: list[dict], torn: bool = False):
        self.path, self.games, self.torn = path, games, torn  # torn: a torn last line of the resumed file left out

    @classmethod
    def open(cls, path, header: dict, overwrite: bool, resume: bool,
             refuse: Callable[[list[dict]], str | None], outputs: Sequence[Path] = ()) -> "RecordLog":
        """Start the record file ``path``, keeping its games with ``resume``.

        The kept games must come from a run with the same ``header`` (its set-up; ``_RESUME_KEYS`` and the model
        files' hashes), and ``refuse(kept games)`` says why they are not this run's games, or None if they are.
        Without ``overwrite`` or ``resume``, the record file or one of the run's other ``outputs`` existing is a
        FileExistsError. Every refusal is raised before anything is written.
        """
        path = Path(path)
        if overwrite and resume:
            raise TournamentError("overwrite starts the output again and resume keeps its games: give one of them")
        kept, torn = [], False
        if resume and path.exists():
            kept, torn = _resumable(path, header, refuse)
        elif not (overwrite or resume):
            existing = [str(file) for file in [path, *outputs] if file.exists()]
            if existing:
                raise FileExistsError(f"{', '.join(existing)} exist; pass overwrite (--overwrite) to replace them "
                                      "or resume (--resume) to keep their games")
        game_records.write_records(path, header, kept, overwrite=True)
        return cls(path, kept, torn)

    def append(self, records: list[dict]) -> None:
        """Record finished games."""
        game_records.append_records(self.path, records)
        self.games.extend(records)

    def kept(self) -> str:
        """What a stopped run leaves here, and how to go on: a note for its error."""
        return f"{len(self.games)} finished games are kept in {self.path}: resume (--resume) plays the others"


# what must match for a record file's games to be kept: anything else in the header is informative
_RESUME_KEYS = ("package_version", "env_id", "source", "num_players", "agents", "specs", "seed", "schedule",
                "observation_mode")  # and the model files' hashes, checked first


def _resumable(path: Path, header: dict, refuse: Callable[[list[dict]], str | None]) -> tuple[list[dict], bool]:
    """The games of an interrupted run's record file, checked to be this run's (a TournamentError if not), and
    whether a torn last line was left out."""
    try:
        records, torn = game_records.read_interrupted(path)
    except game_records.RecordError as error:
        raise TournamentError(f"cannot resume from {error}") from None
    before, now = records.header.get("models", {}), header.get("models", {})
    changed = sorted(name for name in before.keys() | now.keys() if before.get(name) != now.get(name))
    if changed:
        raise TournamentError(f"cannot resume: {path} was played with other model files than this run reads "
                              f"({', '.join(changed)}: changed, added or gone); give the same models, or overwrite "
                              "to start again")
    for key in _RESUME_KEYS:
        if records.header.get(key) != header.get(key):
            raise TournamentError(f"cannot resume: {path} was played with {key} {records.header.get(key)!r}, this "
                                  f"run has {header.get(key)!r}; give the same set-up, or overwrite to start again")
    indices = [game["index"] for game in records.games]
    if len(set(indices)) < len(indices):
        raise TournamentError(f"cannot resume: {path} records some game twice")
    reason = refuse(records.games)
    if reason is not None:
        raise TournamentError(f"cannot resume: {path} {reason}")
    return records.games, torn


def check_schedule(duplicate: str | bool | None, num_entries: int, num_players: int, games: int | None) -> str:
    """The schedule ("rotation", "duplicate-rotations" or "duplicate-permutations") of a set-up, checked
    (``games`` None: some games of a tournament, not all, so whole deals are not asked for)."""
    if duplicate is False or duplicate is None:
        return "rotation"
    mode = "rotations" if duplicate is True else duplicate
    if mode not in duplicate_deals.DUPLICATE_MODES:
        raise TournamentError(f"unknown duplicate mode {duplicate!r}; allowed: "
                              f"{', '.join(duplicate_deals.DUPLICATE_MODES)}")
    if num_entries != num_players:
        raise TournamentError(f"duplicate deals seat every agent in every game: give exactly {num_players} agents "
                              f"for {num_players}-player games, got {num_entries}")
    per_deal = len(duplicate_deals.seat_assignments(num_players, mode))
    if games is not None and games % per_deal:
        raise TournamentError(f"duplicate {mode} plays each deal {per_deal} times: the number of games must "
                              f"be a multiple of {per_deal}, got {games}")
    return "duplicate-" + mode


def _assignments(schedule: str, num_players: int) -> list[tuple[int, ...]] | None:
    if schedule == "rotation":
        return None
    return duplicate_deals.seat_assignments(num_players, schedule.removeprefix("duplicate-"))


def _check_entry_count(entries: Sequence[Entry], num_players: int) -> None:
    if len(entries) < num_players:
        raise TournamentError(f"{len(entries)} agents for {num_players}-player games; give at least as many agents "
                              "as players (repeat a spec to seat it several times, "
                              "e.g. heuristic,random,random,random)")


def _play(runner: _Runner, todo: list[int], total: int, workers: int, progress: bool, chunk_size: int | None,
          ray: str | bool, on_chunk: Callable[[list[dict]], None], logged: bool) -> None:
    """Play games ``todo`` here, in ``workers`` processes or on Ray, calling ``on_chunk`` with each chunk's records
    as it finishes (``total``: the games the progress bar counts, those not in ``todo`` already played)."""
    def chunked(parallel: int) -> list[list[int]]:
        # a few chunks per worker keeps them all busy to the end; a logged run loses at most its chunks in flight
        size = chunk_size or max(1, min(10 if logged else 50, math.ceil(len(todo) / (4 * parallel))))
        return [todo[start:start + size] for start in range(0, len(todo), size)]

    from tqdm import tqdm

    def bar():
        return tqdm(total=total, initial=total - len(todo), desc="games", unit="game", file=sys.stderr,
                    disable=not progress)

    def finished(chunk: list[dict], progress_bar) -> None:
        on_chunk(chunk)
        progress_bar.update(len(chunk))

    if ray is not False and todo:
        from .ray_cluster import play_chunks, ray_session
        with ray_session(None if ray is True else ray) as ray_module:
            cpus = max(1, int(ray_module.cluster_resources().get("CPU", 1)))
            with bar() as progress_bar:
                play_chunks(runner, chunked(cpus), lambda chunk: finished(chunk, progress_bar))
        return
    chunks = chunked(workers)
    if workers == 1 or len(chunks) <= 1:
        with bar() as progress_bar:
            for chunk in chunks:
                finished(runner.play_chunk(chunk), progress_bar)
        return
    # the pool forks before the bar starts tqdm's monitor thread: forking a threaded process is fragile
    with WorkerPool(runner, min(workers, len(chunks))) as pool, bar() as progress_bar:
        pool.play(chunks, lambda chunk: finished(chunk, progress_bar))


def model_hashes(specs: Sequence) -> dict:
    """Name -> sha256 (``records.file_hash``) of every model file the spec strings among ``specs`` may read
    (``registry.model_files``) that exists: what a record file's header holds, so that a resumed run can tell
    a retrained model."""
    files = {name: path for spec in specs if isinstance(spec, str) for name, path in model_files(spec).items()}
    return {name: game_records.file_hash(files[name]) for name in sorted(files) if Path(files[name]).is_file()}


def _result(entries: list[Entry], num_players: int, seed: int, observation_mode: str, records: list[dict],
            schedule: str = "rotation") -> TournamentResult:
    records = sorted(records, key=lambda r: r["index"])
    names = [e.name for e in entries]
    return TournamentResult(names, num_players, seed, observation_mode, records,
                            summarize(records, names, num_players, paired=schedule != "rotation"),
                            [_spec_text(e) for e in entries], schedule, model_hashes([e.source for e in entries]))


# --------------------------------------------------------------------------- saved games and replays
def load_games(path) -> list[dict]:
    """The game records of a ``games.jsonl`` file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no games file at {path} (expected the games.jsonl that tournament --out writes)")
    records = []
    with path.open() as f:
        for number, line in enumerate(f, start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}, line {number}: not a JSON game record ({error})") from None
    return records


def find_game(records: Sequence[dict], index: int) -> dict:
    """The record of game ``index``."""
    for record in records:
        if record.get("index") == index:
            return record
    indices = sorted(r.get("index", -1) for r in records)
    allowed = f"{indices[0]} to {indices[-1]}" if indices else "none: the file has no games"
    raise ValueError(f"no game {index} in the file; games recorded: {allowed}")


def replay_text(record: dict, seat: int = 0, full: bool = False, every_move: bool = False,
                notes: bool = False) -> Iterator[str]:
    """A recorded game as text, move by move, from ``seat``'s view (``full``: every hand shown; ``notes``: each
    move's note, such as the llm agent's raw replies, as indented JSON under it); checks the scores."""
    n = int(record["num_players"])
    if not 0 <= seat < n:
        raise ValueError(f"seat must be from 0 to {n - 1} in this {n}-player game, got {seat}")
    names = record.get("agents") or ["unnamed agent"] * n

    def table(game):
        known = known_hands(game.state, game.cards, seat, "full") if full else None  # else: the table's view
        return render(game, seat, known_hands=known, names=names)  # seats by agent: no bot is "you"

    yield (f"Game {record.get('index')}, seed {record['seed']}, {n} players: "
           + ", ".join(f"seat {p} {name}" for p, name in enumerate(names))
           + f". The tables show what seat {seat} ({names[seat]}) saw.")
    if full:
        yield "FULL INFORMATION: every player's hand is shown, not only what seat %d knew." % seat
    last_round = None
    game = None
    noted = {note["move"]: note["note"] for note in record.get("notes", [])} if notes else {}
    for move, (game, player, action) in enumerate(replay_moves(record)):
        if every_move or game.state.round != last_round:
            last_round = game.state.round
            yield ""
            yield table(game)
            yield ""
        yield (f"{move:4d}  round {game.state.round:2d}  player {player} ({names[player]}): "
               f"{describe_action(game, action)}")
        if move in noted:
            yield textwrap.indent(json.dumps(noted[move], indent=2, ensure_ascii=False), " " * 6)
    if game is not None:  # the generator checked the scores before stopping
        yield ""
        yield table(game)
        yield "Replayed scores match the recorded ones."


# --------------------------------------------------------------------------- command line
def positive_int(text: str) -> int:
    """An ``argparse`` type: ``text`` as a positive integer, or a usage error that quotes it."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _run_tournament_command(args) -> int:
    try:
        specs = [spec for text in args.agents for spec in split_specs(text)]
    except ValueError as error:
        args.parser.error(f"argument --agents: {error}")
    if args.seed < 0:
        args.parser.error(f"argument --seed: expected a non-negative integer, got {args.seed}")
    try:
        check_game_count(args.games, args.players)
    except TournamentError as error:
        args.parser.error(f"argument --games: {error}")
    if args.out is not None:
        try:
            check_output_folder(args.out, TournamentError, "argument --out")
        except TournamentError as error:
            args.parser.error(str(error))
    try:
        entries = make_entries(specs)
        _check_entry_count(entries, args.players)
    except (TournamentError, ImportError) as error:  # bad specs are usage errors
        args.parser.error(f"argument --agents: {error}")
    try:
        schedule = check_schedule(args.duplicate, len(entries), args.players, args.games)
    except TournamentError as error:
        args.parser.error(f"argument --duplicate: {error}")
    if args.resume and args.out is None:
        args.parser.error("argument --resume: give --out DIR, the directory whose records.jsonl it continues")
    try:
        log = _record_log(entries, args.players, args.games, args.seed, args.observation_mode, schedule, args.out,
                          args.overwrite, args.resume)
    except (TournamentError, FileExistsError) as error:
        args.parser.error(f"argument --out: {error}")
    if args.resume:
        print(f"{log.path}: {len(log.games)} games kept" + (", a torn last line left out" if log.torn else "")
              + f"; {args.games - len(log.games)} to play", file=sys.stderr)
    try:
        result = _play_tournament(entries, args.players, args.games, args.seed, args.workers, not args.no_progress,
                                  args.observation_mode, args.chunk_size, False if args.ray is None else args.ray,
                                  schedule, log)
    except ImportError as error:  # Ray not installed, or its cluster unreachable
        args.parser.error(f"argument --ray: {error}")
    except WorkerDied as error:
        return report_dead_worker("tournament", error)
    except NoMove as error:
        return report_no_move(error, log)
    print(result.format_table())
    if args.out is not None:
        result.write(args.out, overwrite=True)  # checked above, before the games were played
        print(f"wrote {', '.join(str(Path(args.out) / name) for name in OUT_FILES)}")
    return 0


def report_no_move(error: NoMove, log: "RecordLog | None") -> int:
    """Say on one line that an agent could not move (its reason, the move and game where: the error's notes other
    than a worker's traceback) and where the finished games are kept; returns the exit status, 1."""
    where = [note for note in getattr(error, "__notes__", []) if not note.startswith("raised in worker process")]
    kept = f"; the finished games are in {log.path} (--resume plays the rest)" if log is not None else ""
    print(f"packetrow tournament: error: {'; '.join([str(error), *where])}{kept}", file=sys.stderr)
    return 1


def report_dead_worker(command: str, error: WorkerDied) -> int:
    """Say on one line, as ``packetrow COMMAND``'s error, that a dead worker stopped the run (with its notes: what
    was kept); returns the exit status, 1."""
    print(f"packetrow {command}: error: {'; '.join([str(error), *getattr(error, '__notes__', [])])}", file=sys.stderr)
    return 1


def check_out_free(parser, paths: Sequence[Path], overwrite: bool) -> None:
    """Stop the command (a usage error) if an output exists and ``--overwrite`` was not given."""
    existing = [str(path) for path in paths if path.exists()]
    if existing and not overwrite:
        parser.error(f"argument --out: {', '.join(existing)} already exist; pass --overwrite to replace them")


def _run_replay_command(args) -> int:
    try:
        records = game_records.read_records(args.records_file)
        record = records.game(args.game)
    except game_records.RecordError as error:
        args.parser.error(str(error))
    n = record["num_players"]
    if not 0 <= args.seat < n:
        args.parser.error(f"argument --seat: game {args.game} has {n} players: give a seat from 0 to {n - 1}, got "
                          f"{args.seat}")
    try:
        for line in replay_text(record, seat=args.seat, full=args.all, every_move=args.every_move, notes=args.notes):
            print(line)
    except ValueError as error:  # a mismatch or an illegal recorded move: the file does not match the engine
        print(f"packetrow replay: error: {records.path}, line {records.line_of(args.game)}: {error}",
              file=sys.stderr)
        return 1
    return 0


def add_tournament_arguments(tournament) -> None:
    """Add the arguments of ``packetrow tournament`` to its parser."""
    tournament.description = ("Play seat-balanced games between agents and print, per agent: games, wins (a shared "
                              "win counts 1/k), win rate, mean VP and mean rank with 95% intervals, and an openskill "
                              "rating. Agents are listed in order; a spec given several times is several entries "
                              "(random#1, random#2, ...). Over every K games (K = number of agents) each agent plays "
                              "each seat once.")
    tournament.add_argument("--agents", nargs="+", required=True, metavar="SPECS",
                            help="comma-separated agent specs, at least one per player, e.g. "
                                 "heuristic,random,ismcts:iters=200 (options of a spec follow its colon)")
    tournament.add_argument("--players", type=int, default=4, choices=range(2, 6),
                            help="players per game (default 4)")
    tournament.add_argument("--games", type=positive_int, default=100, help="number of games (default 100)")
    tournament.add_argument("--seed", type=int, default=0, help="tournament seed, a non-negative integer (default 0)")
    tournament.add_argument("--workers", type=positive_int, default=1,
                            help="processes playing games; results do not depend on it (default 1)")
    tournament.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                            help="play the games as Ray tasks: on the cluster at ADDRESS (e.g. 10.0.0.1:6379, or "
                                 "auto), or without ADDRESS on a local Ray instance started for the run; same "
                                 "results as without --ray (needs the [ray] extra)")
    tournament.add_argument("--duplicate", nargs="?", const="rotations", default=None,
                            choices=duplicate_deals.DUPLICATE_MODES,
                            help="duplicate deals: play every deal once per seat assignment (rotations: n games a "
                                 "deal; permutations: n! games a deal), with intervals paired by deal; needs exactly "
                                 "one agent per seat and --games a multiple of the games a deal")
    tournament.add_argument("--out", metavar="DIR",
                            help="write DIR/records.jsonl (the game records), DIR/games.jsonl (the same games "
                                 "without the header, for the browser's Watch tab) and DIR/table.csv")
    tournament.add_argument("--overwrite", action="store_true", help="replace the files of an existing --out")
    tournament.add_argument("--resume", action="store_true",
                            help="keep the games already in --out's records.jsonl (written as games finish, so an "
                                 "interrupted run leaves them; or a run with fewer --games) and play the others: the "
                                 "same results as one uninterrupted run; needs the same agents, players, seed, "
                                 "options and model files (their hashes are recorded)")
    tournament.add_argument("--chunk-size", type=positive_int, metavar="N",
                            help="games a worker plays before handing them back (and --out records them); "
                                 "default: up to 10 with --out, up to 50 without; 1 for slow games, so that an "
                                 "interrupted run loses only the games in flight; results do not depend on it")
    tournament.add_argument("--observation-mode", default="tracked", choices=MODES,
                            help="observation given to agents that use one (default tracked)")
    tournament.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    tournament.set_defaults(run=_run_tournament_command, parser=tournament)


def add_replay_arguments(replay) -> None:
    """Add the arguments of ``packetrow replay`` to its parser."""
    replay.description = ("Replay one game of a record file (records.jsonl, written by tournament --out and the "
                          "ladder) from its seed and actions through the engine, print it move by move, and check the "
                          "final scores equal the recorded ones (exit 1 if not).")
    replay.add_argument("records_file", metavar="RECORDS_JSONL",
                        help="the records.jsonl written by tournament --out or ladder --out")
    replay.add_argument("--game", type=int, required=True, help="index of the game to replay")
    view = replay.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, default=0, help="show the table as this seat sees it (default 0)")
    view.add_argument("--all", action="store_true",
                      help="FULL INFORMATION: show every player's hand (seat 0's table, all hands revealed)")
    replay.add_argument("--every-move", action="store_true",
                        help="print the table after every move (default: at the start of each round and the end)")
    replay.add_argument("--notes", action="store_true",
                        help="print under each move the note its agent recorded, if any (the llm agent's: every "
                             "raw reply, why a reply was not read, and whether its fallback moved), as JSON")
    replay.set_defaults(run=_run_replay_command, parser=replay)
