"""The anchored ladder: a frozen set of reference agents with ratings on a fixed scale, and placing an agent on it.

Matches. Two agents A and B meet in duplicate deals (``packetrow_arena.duplicate_deals``, rotations): in 2-player
games A against B; with n > 2 players half the games seat one A among n - 1 B and half one B among n - 1 A.
Each game scores the lone agent against the crowd by rank: 1 for every crowd seat it finishes ahead of,
1/2 for a tie, 0 behind, averaged over the crowd seats (in 2-player games: its share of the win).
Match m's tournament seed is drawn from the ladder seed and m alone, so the same seeds give the same table.

Ratings. A Bradley-Terry model, P(A beats B) = 1 / (1 + 10^((r_B - r_A) / 400)) (the Elo scale), fitted by
maximum likelihood on each pair's total score, with one virtual drawn game added to every pair so that a
pair one agent always wins keeps a finite gap. The scale is fixed by the anchor: the heuristic is rated
1000. Intervals come from a bootstrap over deals (the deals of every match resampled, the fit repeated;
95% percentile interval), which keeps the pairing of a deal's games.

Placing an agent. The agent plays a match against every reference agent; its rating is fitted with the
reference ratings held at their published values (they are frozen), so its interval says how well its own
games place it and nothing else.

Exploitability. Given curve files of ``packetrow exploit`` (``packetrow_arena.exploit_curves``), a table gains a
column: for each agent with a curve, the win rate of the best response at the curve's largest budget.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import numpy as np

from . import records as game_records
from .exploit_curves import CurveError, curve_cell, load_curves
from packetrow_agents.registry import split_specs
from packetrow_env import __version__
from packetrow_env.memory import check_fits
from packetrow_env.user_files import check_output_folder, read_versioned_json

from .tournament import (RecordLog, TournamentError, game_seeds, make_entries, model_hashes, play_games, positive_int,
                         report_dead_worker)
from .worker_pool import WorkerDied

# The frozen reference set: names and specs. ISMCTS and the search agent play at fixed budgets of work
# (iterations, rollouts), not at a time a move, so they play the same moves however loaded the machine is.
REFERENCE = (("random", "random"), ("heuristic", "heuristic"), ("ismcts-10", "ismcts:iters=10"),
             ("ismcts-40", "ismcts:iters=40"), ("ppo", "ppo"), ("search-64", "search:rollouts=64"))
ANCHOR, ANCHOR_RATING = "heuristic", 1000.0
ELO = 400.0 / math.log(10.0)  # rating points per unit of log-strength
LADDER_FORMAT, LADDER_VERSION = "packetrow-ladder", 1
BOOTSTRAP = 1000
RECORDS_FILE, PLACEMENT_FILE = "records.jsonl", "placement.md"  # what --out holds, with ladder-Np.json (--build)
_MATCH_KEY, _BOOTSTRAP_KEY = 0, 1  # first words of the SeedSequence spawn keys of match seeds and the bootstrap


class LadderError(ValueError):
    """A ladder was asked for wrongly (bad agent, player count, games, reference file)."""


# --------------------------------------------------------------------------- matches
@dataclass
class Match:
    """Two agents' games: per deal, the lone agent's summed score and its number of games."""

    a: int  # ladder indices: a is the lone agent of the first half
    b: int
    deal_scores: np.ndarray  # float[deals, 2]: (score of a, games) per deal; b scores games - score of a
    records: list[dict]  # as the ladder's record file holds them: its game indices, deals, entries and names


def match_seed(seed: int, match: int, half: int = 0) -> int:
    """The tournament seed of half ``half`` of match ``match`` of a ladder seeded ``seed``."""
    return int(np.random.SeedSequence(seed, spawn_key=(_MATCH_KEY, match, half)).generate_state(1)[0])


def lone_scores(record: dict, lone: int = 0) -> float:
    """The score of the agent at entry ``lone`` (seated once) against the others by rank: 1 ahead, 1/2 tied,
    0 behind, averaged."""
    ranks = record["ranks"]
    mine = ranks[record["entries"].index(lone)]
    crowd = [rank for rank, entry in zip(ranks, record["entries"]) if entry != lone]
    return sum(1.0 if mine < r else 0.5 if mine == r else 0.0 for r in crowd) / len(crowd)


@dataclass(frozen=True)
class _Half:
    """Half of a match: a duplicate tournament of one lone agent among a crowd of the other, and where its games
    sit in the ladder's record file (from index ``first_index``, deals from ``first_deal``)."""

    lone: int
    crowd: int
    seed: int
    first_index: int
    first_deal: int
    games: int


@dataclass
class Matches:
    """The matches of a ladder or a placement: who meets whom, how every game is seeded and where it is recorded.

    Match m (agents ``pairs[m]``) holds games m x ``games`` onwards of the record file, its first half before its
    second; a game's deal is its tournament's deal plus the deals of the matches before (the two halves of a match
    number their deals alike). So a game's place in the file follows from the set-up alone, which is what lets a
    record file written as games finish be resumed.
    """

    names: list[str]
    specs: list[str]
    pairs: list[tuple[int, int]]
    num_players: int
    games: int  # per match
    seed: int

    def halves(self, match: int) -> list[_Half]:
        """The halves of match ``match``: one in 2-player games, two with more players (A alone, then B alone)."""
        a, b = self.pairs[match]
        sides = [(a, b)] if self.num_players == 2 else [(a, b), (b, a)]
        per_half = self.games // len(sides)
        deals = per_half // self.num_players  # duplicate rotations: n games a deal
        return [_Half(lone, crowd, match_seed(self.seed, match, h), match * self.games + h * per_half,
                      match * deals, per_half) for h, (lone, crowd) in enumerate(sides)]

    def header(self) -> dict:
        """The header of the record file of these matches' games."""
        return _header(self.names, self.specs, self.num_players, self.seed)

    def play(self, workers: int, ray, progress: bool, log: RecordLog | None = None) -> list[Match]:
        """Play every match, recording each chunk of games in ``log`` as it finishes; the games ``log`` holds
        already (a resumed run's) are kept, not played again."""
        from tqdm import tqdm
        kept = {game["index"]: game for game in log.games} if log else {}
        with tqdm(total=len(self.pairs) * self.games, initial=len(kept), desc="ladder games", unit="game",
                  file=sys.stderr, disable=not progress) as bar:
            def finished(records: list[dict]) -> None:
                if log:
                    log.append(records)
                bar.update(len(records))

            matches = []
            for m, (a, b) in enumerate(self.pairs):
                bar.set_postfix_str(f"{self.specs[a]} vs {self.specs[b]}")
                matches.append(self._play_match(m, kept, workers, ray, finished))
        return matches

    def _play_match(self, match: int, kept: dict[int, dict], workers: int, ray, finished) -> Match:
        a, _ = self.pairs[match]
        scores, records = [], []
        for half in self.halves(match):
            specs = [self.specs[half.lone]] + [self.specs[half.crowd]] * (self.num_players - 1)
            todo = [g for g in range(half.games) if half.first_index + g not in kept]
            played: list[dict] = []

            def recorded(chunk: list[dict], half=half, played=played) -> None:
                chunk = [self._recorded(half, game) for game in chunk]
                played.extend(chunk)
                finished(chunk)

            if todo:
                play_games(specs, self.num_players, todo, seed=half.seed, workers=workers, ray=ray, duplicate=True,
                           on_chunk=recorded)
            games = sorted([kept[half.first_index + g] for g in range(half.games) if half.first_index + g in kept]
                           + played, key=lambda game: game["index"])
            deals: dict[int, list[float]] = {}
            for game in games:
                score = lone_scores(game, half.lone)
                deals.setdefault(game["deal"], []).append(score if half.lone == a else 1.0 - score)
            scores += [(sum(values), len(values)) for _, values in sorted(deals.items())]
            records += games
        return Match(*self.pairs[match], np.array(scores, dtype=float), records)

    def _recorded(self, half: _Half, game: dict) -> dict:
        """A game of ``half``'s tournament as the ladder's record file holds it."""
        entries = [half.lone if e == 0 else half.crowd for e in game["entries"]]
        return dict(game, index=half.first_index + game["index"], deal=half.first_deal + game["deal"],
                    entries=entries, agents=[self.names[e] for e in entries])

    def dealt_otherwise(self, kept: list[dict]) -> str | None:
        """Why games of a record file are not these matches' games (another number of games per match), or None.

        A kept game must sit where this set-up plays it: its deal and its agents' seeds are checked."""
        total = len(self.pairs) * self.games
        last = max((game["index"] for game in kept), default=-1)
        if last >= total:
            return (f"records game {last}, and this set-up plays {total} ({len(self.pairs)} matches of "
                    f"{self.games} games); give the same games per match, or overwrite to start again")
        halves = [half for match in range(len(self.pairs)) for half in self.halves(match)]
        for game in sorted(kept, key=lambda game: game["index"]):
            index = game["index"]
            half = halves[index // halves[0].games]
            g = index - half.first_index
            deal = g // self.num_players
            deal_seed, agent_seeds = game_seeds(g, self.num_players, half.seed, deal)
            if (game["deal"], game["seed"], game["agent_seeds"]) != (half.first_deal + deal, deal_seed, agent_seeds):
                return (f"records game {index} dealt otherwise than this set-up deals it (another number of games "
                        "per match?); give the same set-up, or overwrite to start again")
        return None

    def open_log(self, out, overwrite: bool, resume: bool, result_name: str) -> RecordLog | None:
        """The record file of ``out`` (None without ``out``), written as games finish; ``resume`` keeps its games
        if they are these matches' (a LadderError if not; a FileExistsError if ``out`` holds a run and neither
        ``overwrite`` nor ``resume`` is given). ``result_name``: the other file the run writes there."""
        if out is None:
            if resume:
                raise LadderError("resume keeps the games recorded in an output directory: give out as well")
            return None
        out = Path(out)
        try:
            return RecordLog.open(out / RECORDS_FILE, self.header(), overwrite, resume, self.dealt_otherwise,
                                  [out / result_name])
        except TournamentError as error:
            raise LadderError(str(error)) from None


def _header(names: Sequence[str], specs: Sequence[str], num_players: int, seed: int) -> dict:
    return game_records.make_header("ladder", num_players, names, specs, seed, "duplicate-rotations", "tracked",
                                    model_hashes(specs))


def check_games(games: int, num_players: int) -> int:
    """Games per match, checked: whole deals in each half."""
    unit = 2 if num_players == 2 else 2 * num_players
    if isinstance(games, bool) or not isinstance(games, int) or games < unit or games % unit:
        raise LadderError(f"games per match must be a positive multiple of {unit} for {num_players}-player "
                          f"ladders (whole duplicate deals{'' if num_players == 2 else ' in each half'}), "
                          f"got {games!r}")
    check_fits(f"{games:,} games a match against {len(REFERENCE)} reference agents",
               game_records.records_bytes(games * len(REFERENCE), num_players), LadderError,
               " (every game's record is kept); give fewer games")
    return games


# --------------------------------------------------------------------------- ratings
def _totals(matches: Sequence[Match], num_agents: int, choice: Sequence[np.ndarray] | None = None):
    """Scores won[i, j] (i against j) and games[i, j], with one virtual draw a pair; ``choice``: deals to use."""
    won = np.zeros((num_agents, num_agents))
    games = np.zeros((num_agents, num_agents))
    for m, match in enumerate(matches):
        rows = match.deal_scores if choice is None else match.deal_scores[choice[m]]
        score, count = rows.sum(axis=0)
        won[match.a, match.b] += score + 0.5
        won[match.b, match.a] += count - score + 0.5
        games[match.a, match.b] += count + 1
        games[match.b, match.a] += count + 1
    return won, games


def fit_ratings(won: np.ndarray, games: np.ndarray, anchor: int, anchor_rating: float = ANCHOR_RATING,
                tolerance: float = 1e-12, max_iterations: int = 100_000) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale) maximising the likelihood of ``won`` of ``games``; ``anchor`` fixed.

    ``won[..., i, j]``: i's score against j (leading axes: independent fits, e.g. bootstrap samples). Hunter's
    MM iteration, gamma_i <- W_i / sum_j n_ij / (gamma_i + gamma_j), never decreases the likelihood and
    converges when every agent has won and lost something (the virtual draws see to it).
    """
    gamma = np.ones(won.shape[:-1])
    wins = won.sum(axis=-1)
    for _ in range(max_iterations):
        updated = wins / (games / (gamma[..., :, None] + gamma[..., None, :])).sum(axis=-1)
        updated /= updated[..., anchor:anchor + 1]
        done = np.max(np.abs(np.log(updated) - np.log(gamma))) < tolerance
        gamma = updated
        if done:
            break
    return anchor_rating + ELO * np.log(gamma)


def place_rating(won: np.ndarray, games: np.ndarray, ratings: np.ndarray) -> np.ndarray:
    """The rating (Elo scale) at which an agent's expected score against ``ratings`` equals ``won`` of ``games``.

    ``won[..., j]`` and ``games[..., j]``: against opponent j (leading axes: independent placements).
    """
    # the expected score rises with the rating: bisect between generous bounds, every placement at once
    target = np.sum(won, axis=-1)
    low = np.full(target.shape, ratings.min() - 4000.0)
    high = np.full(target.shape, ratings.max() + 4000.0)
    for _ in range(100):
        middle = (low + high) / 2
        expected = np.sum(games / (1.0 + 10.0 ** ((ratings - middle[..., None]) / 400.0)), axis=-1)
        below = expected < target
        low, high = np.where(below, middle, low), np.where(below, high, middle)
    return (low + high) / 2


def _bootstrap_choices(matches: Sequence[Match], rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.integers(0, len(m.deal_scores), len(m.deal_scores)) for m in matches]


def _percentiles(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.percentile(samples, 2.5, axis=0), np.percentile(samples, 97.5, axis=0)


# --------------------------------------------------------------------------- the reference ladder
@dataclass
class Ladder:
    """Agents with ratings and 95% intervals, and what was played to get them."""

    names: list[str]
    specs: list[str]
    ratings: np.ndarray
    low: np.ndarray
    high: np.ndarray
    num_players: int
    games: int  # per match
    seed: int
    matches: list[Match]
    curves: dict = field(default_factory=dict)  # agent spec -> exploitability curve (load_curves)

    def to_dict(self) -> dict:
        """The ladder as JSON data (the reference file a placement reads)."""
        return {"format": LADDER_FORMAT, "version": LADDER_VERSION, "package_version": __version__,
                "catalogue": game_records.catalogue_hash(), "num_players": self.num_players,
                "games_per_match": self.games, "seed": self.seed, "bootstrap": BOOTSTRAP,
                "anchor": {"agent": ANCHOR, "rating": ANCHOR_RATING},
                "agents": [{"name": n, "spec": s, "rating": round(float(r), 1), "low": round(float(lo), 1),
                            "high": round(float(hi), 1)}
                           for n, s, r, lo, hi in zip(self.names, self.specs, self.ratings, self.low, self.high)],
                "matches": [{"a": self.names[m.a], "b": self.names[m.b], "games": int(m.deal_scores[:, 1].sum()),
                             "score_a": float(m.deal_scores[:, 0].sum())} for m in self.matches]}

    def format_table(self) -> str:
        """The ladder as a Markdown table, best first."""
        lines = ["| agent | spec | rating [95% CI] |" + exploit_header(self.curves),
                 "|---|---|---|" + "---|" * bool(self.curves)]
        for i in np.argsort(-self.ratings, kind="stable"):
            anchor = " (anchor)" if self.names[i] == ANCHOR else ""
            lines.append(f"| {self.names[i]}{anchor} | `{self.specs[i]}` | {self.ratings[i]:.0f} "
                         f"[{self.low[i]:.0f}, {self.high[i]:.0f}] |" + exploit_cell(self.curves, self.specs[i]))
        lines.append("")
        lines.append(f"{self.num_players}-player duplicate matches of {self.games} games between every pair, "
                     f"seed {self.seed}; Bradley-Terry on the Elo scale, {ANCHOR} anchored at "
                     f"{ANCHOR_RATING:.0f}; intervals: bootstrap over deals ({BOOTSTRAP} resamples)."
                     + EXPLOIT_NOTE * bool(self.curves))
        return "\n".join(lines)

    def header_and_records(self) -> tuple[dict, list[dict]]:
        """The record file of every game played (``packetrow_arena.records``), matches in order."""
        return _header(self.names, self.specs, self.num_players, self.seed), _all_records(self.matches)

    def write(self, directory) -> list[Path]:
        """Write ``ladder-Np.json`` (the reference file a placement reads) and ``records.jsonl`` into ``directory``,
        replacing them; returns their paths."""
        path = Path(directory) / ladder_file(self.num_players)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        return [path, game_records.write_records(Path(directory) / RECORDS_FILE, *self.header_and_records(),
                                                 overwrite=True)]


EXPLOIT_NOTE = (" Exploitability: the win rate of a best response trained against the agent at every other seat "
                "(packetrow exploit), at its curve's largest budget: a lower bound.")


def exploit_header(curves: dict) -> str:
    """The exploitability column's header cell ('' without curves)."""
    return " exploitability: best response's win rate [95% CI] |" if curves else ""


def exploit_cell(curves: dict, spec: str) -> str:
    """The exploitability cell of the agent ``spec`` ('' without curves, blank for an agent without one)."""
    if not curves:
        return ""
    return f" {curve_cell(curves[spec])} |" if spec in curves else "  |"


def ladder_file(num_players: int) -> str:
    """The name of the reference file of ``num_players``-player ladders."""
    return f"ladder-{num_players}p.json"


def _all_records(matches: Sequence[Match]) -> list[dict]:
    return [record for match in matches for record in match.records]


def _played(matches: Matches, workers: int, ray, progress: bool, log: RecordLog | None) -> list[Match]:
    """The matches played, a dead worker's error told what ``log`` kept."""
    try:
        return matches.play(workers, ray, progress, log)
    except WorkerDied as error:
        if log:
            error.add_note(log.kept())
        raise


def build_ladder(num_players: int = 2, games: int = 20, seed: int = 0, workers: int = 1, ray=False,
                 progress: bool = True, reference: Sequence[tuple[str, str]] = REFERENCE, out=None,
                 overwrite: bool = False, resume: bool = False, exploitability: Sequence = ()) -> Ladder:
    """Play every pair of the reference agents and fit their ratings (the published ladder).

    ``out``: a directory for ``Ladder.write``'s files; its ``records.jsonl`` grows as games finish, so that
    ``resume`` keeps the games of an interrupted run with the same set-up (same agents, players, games per match,
    seed and model files) and plays the others, to the same ladder and files as one uninterrupted run. A dead
    worker stops the run with ``WorkerDied`` (``packetrow_arena.worker_pool``). ``exploitability``: curve files of
    reference agents (``load_curves``, read before any game), shown in the table's exploitability column.
    """
    _check_players(num_players)
    check_games(games, num_players)
    names, specs = [n for n, _ in reference], [s for _, s in reference]
    if ANCHOR not in names:
        raise LadderError(f"the reference set must hold the anchor {ANCHOR!r}; it holds {', '.join(names)}")
    curves = load_curves(exploitability, specs, num_players)
    pairs = [(a, b) for a in range(len(specs)) for b in range(a + 1, len(specs))]
    schedule = Matches(names, specs, pairs, num_players, games, seed)
    log = schedule.open_log(out, overwrite, resume, ladder_file(num_players))
    matches = _played(schedule, workers, ray, progress, log)
    anchor = names.index(ANCHOR)
    ratings = fit_ratings(*_totals(matches, len(names)), anchor)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_BOOTSTRAP_KEY,)))
    won, games_played = zip(*(_totals(matches, len(names), _bootstrap_choices(matches, rng))
                              for _ in range(BOOTSTRAP)))
    low, high = _percentiles(fit_ratings(np.array(won), np.array(games_played), anchor))
    ladder = Ladder(names, specs, ratings, low, high, num_players, games, seed, matches, curves)
    if out is not None:
        ladder.write(out)
    return ladder


def _check_players(num_players: int) -> None:
    if isinstance(num_players, bool) or num_players not in range(2, 6):
        raise LadderError(f"the number of players must be 2, 3, 4 or 5, got {num_players!r}")


# --------------------------------------------------------------------------- placing an agent
def reference_path(num_players: int) -> Path:
    """The published reference ladder for ``num_players`` shipped in the package."""
    return Path(str(files("packetrow_arena").joinpath("ladders", f"ladder-{num_players}p.json")))


def load_reference(path, num_players: int | None = None) -> dict:
    """A reference ladder file, checked (format, version, catalogue, players); a LadderError names the file."""
    path = Path(path)
    if not path.is_file():
        raise LadderError(f"{path}: no reference ladder there; build one with 'packetrow ladder --build --out DIR'")
    data = read_versioned_json(path, LadderError, "a reference ladder, the ladder-Np.json of ladder --build",
                               LADDER_FORMAT, LADDER_VERSION, "ladder")
    if data.get("catalogue") != game_records.catalogue_hash():
        raise LadderError(f"{path}: catalogue hash {data.get('catalogue')!r} does not match this packetrow's "
                          f"catalogue {game_records.catalogue_hash()}")
    if num_players is not None and data.get("num_players") != num_players:
        raise LadderError(f"{path}: the reference ladder is for {data.get('num_players')}-player games, "
                          f"not {num_players}")
    return data


@dataclass
class Placement:
    """An agent placed on a reference ladder: its rating, 95% interval and its matches."""

    name: str
    spec: str
    rating: float
    low: float
    high: float
    seed: int
    reference: dict
    matches: list[Match]
    curves: dict = field(default_factory=dict)  # agent spec -> exploitability curve (load_curves)

    def format_table(self) -> str:
        """The reference ladder with the placed agent in its place, as a Markdown table."""
        rows = [(self.rating, f"**{self.name}**", self.spec, self.rating, self.low, self.high, "")]
        header = "| agent | spec | rating [95% CI] | placed agent's score against it |"
        for match, agent in zip(self.matches, self.reference["agents"]):
            score, games = match.deal_scores.sum(axis=0)
            rows.append((agent["rating"], agent["name"], agent["spec"], agent["rating"], agent["low"], agent["high"],
                         f"{100 * score / games:.1f}%"))
        lines = [header + exploit_header(self.curves), "|---|---|---|---|" + "---|" * bool(self.curves)]
        for _, name, spec, rating, low, high, score in sorted(rows, key=lambda r: -r[0]):
            lines.append(f"| {name} | `{spec}` | {rating:.0f} [{low:.0f}, {high:.0f}] | {score} |"
                         + exploit_cell(self.curves, spec))
        ref = self.reference
        lines.append("")
        lines.append(f"{ref['num_players']}-player duplicate matches of {self.matches[0].deal_scores[:, 1].sum():.0f} "
                     f"games against each reference agent; reference ratings frozen (packetrow "
                     f"{ref['package_version']}, seed {ref['seed']}, {ref['anchor']['agent']} = "
                     f"{ref['anchor']['rating']:.0f}); interval: bootstrap over deals ({BOOTSTRAP} resamples)."
                     + EXPLOIT_NOTE * bool(self.curves))
        return "\n".join(lines)

    def header_and_records(self) -> tuple[dict, list[dict]]:
        """The record file of the placement's games (agent 0 is the placed agent)."""
        names, specs = _placement_agents(self.name, self.spec, self.reference)
        return _header(names, specs, self.reference["num_players"], self.seed), _all_records(self.matches)

    def write(self, directory) -> list[Path]:
        """Write ``placement.md`` (the table) and ``records.jsonl`` into ``directory``, replacing them; returns their
        paths."""
        path = Path(directory) / PLACEMENT_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.format_table() + "\n")
        return [path, game_records.write_records(Path(directory) / RECORDS_FILE, *self.header_and_records(),
                                                 overwrite=True)]


def _placement_agents(name: str, spec: str, reference: dict) -> tuple[list[str], list[str]]:
    """The names and specs of a placement's agents: the placed agent first, then the reference agents."""
    return [name] + [a["name"] for a in reference["agents"]], [spec] + [a["spec"] for a in reference["agents"]]


def place_agent(spec: str, num_players: int = 2, games: int = 20, seed: int = 0, workers: int = 1, ray=False,
                progress: bool = True, reference=None, out=None, overwrite: bool = False,
                resume: bool = False, exploitability: Sequence = ()) -> Placement:
    """Play ``spec`` against every agent of a reference ladder and place it on that ladder's scale.

    ``out``, ``overwrite``, ``resume`` and ``exploitability`` (curve files of the placed or reference agents) as
    for ``build_ladder`` (``Placement.write``'s files).
    """
    _check_players(num_players)
    check_games(games, num_players)
    try:
        entry = make_entries([spec])[0]
    except TournamentError as error:
        raise LadderError(f"agent {spec!r}: {str(error).split(': ', 1)[-1]}") from None
    data = load_reference(reference_path(num_players) if reference is None else reference, num_players)
    names, specs = _placement_agents(entry.name, spec.strip(), data)
    curves = load_curves(exploitability, specs, num_players)
    schedule = Matches(names, specs, [(0, b) for b in range(1, len(specs))], num_players, games, seed)
    log = schedule.open_log(out, overwrite, resume, PLACEMENT_FILE)
    matches = _played(schedule, workers, ray, progress, log)
    ratings = np.array([a["rating"] for a in data["agents"]])

    def scores(choice=None):
        won, played = _totals(matches, len(specs), choice)
        return won[0, 1:], played[0, 1:]

    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_BOOTSTRAP_KEY,)))
    won, played = (np.array(x) for x in zip(*(scores(_bootstrap_choices(matches, rng)) for _ in range(BOOTSTRAP))))
    low, high = _percentiles(place_rating(won, played, ratings))
    placement = Placement(entry.name, spec.strip(), float(place_rating(*scores(), ratings)), float(low), float(high),
                          seed, data, matches, curves)
    if out is not None:
        placement.write(out)
    return placement


# --------------------------------------------------------------------------- command line
def _run_ladder_command(args) -> int:
    if args.resume and args.out is None:
        args.parser.error("argument --resume: give --out DIR, the directory whose records.jsonl it continues")
    if args.out is not None:  # before the matches, not after them
        try:
            check_output_folder(args.out, LadderError, "argument --out")
        except LadderError as error:
            args.parser.error(str(error))
    ray = False if args.ray is None else args.ray
    try:
        check_games(args.games, args.players)
        if args.seed < 0:
            raise LadderError(f"the seed must be a non-negative integer, got {args.seed}")
        if args.agent is not None:
            spec = split_specs(args.agent)
            if len(spec) != 1:
                raise LadderError(f"give one agent spec, got {len(spec)}: {', '.join(spec)}")
            result = place_agent(spec[0], args.players, args.games, args.seed, args.workers, ray,
                                 not args.no_progress, args.reference, args.out, args.overwrite, args.resume,
                                 args.exploitability)
        else:
            result = build_ladder(args.players, args.games, args.seed, args.workers, ray, not args.no_progress,
                                  out=args.out, overwrite=args.overwrite, resume=args.resume,
                                  exploitability=args.exploitability)
    except (LadderError, TournamentError, CurveError) as error:
        args.parser.error(str(error))
    except FileExistsError as error:
        args.parser.error(f"argument --out: {error}")
    except ImportError as error:  # Ray not installed, or its cluster unreachable
        args.parser.error(f"argument --ray: {error}")
    except WorkerDied as error:
        return report_dead_worker("ladder", error)
    print(result.format_table())
    if args.out is not None:
        written = ladder_file(args.players) if args.build else PLACEMENT_FILE
        print(f"wrote {', '.join(str(Path(args.out) / name) for name in (written, RECORDS_FILE))}")
    return 0


def add_arguments(parser) -> None:
    """Add the arguments of ``packetrow ladder`` to its parser."""
    parser.description = ("Place an agent on the published ladder of reference agents (random, heuristic, ISMCTS at "
                          "10 and 40 iterations, the shipped ppo): it plays duplicate-deal matches against each, and "
                          "its Bradley-Terry rating on the Elo scale (heuristic = 1000) is printed with a 95% "
                          "interval. --build replays the whole reference ladder instead.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--agent", metavar="SPEC", help="the agent to place, e.g. ppo:path=my.npz or ismcts:iters=100")
    what.add_argument("--build", action="store_true",
                      help="play every pair of reference agents and print the ladder (write it with --out)")
    parser.add_argument("--players", type=int, default=2, choices=range(2, 6), help="players per game (default 2)")
    parser.add_argument("--games", type=positive_int, default=20,
                        help="games per match, a multiple of 2 (2 players) or of 2 x players (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="ladder seed, a non-negative integer (default 0)")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="processes playing games; results do not depend on it (default 1)")
    parser.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                        help="play the games as Ray tasks (on the cluster at ADDRESS, or a local instance); same "
                             "results (needs the [ray] extra)")
    parser.add_argument("--reference", metavar="LADDER_JSON",
                        help="place on this reference ladder (the ladder-Np.json of --build --out) instead of the "
                             "published one")
    parser.add_argument("--exploitability", action="append", default=[], metavar="CURVE_JSON",
                        help="an exploit_curve.json of packetrow exploit for one agent of the table (same players): "
                             "adds an exploitability column, the best response's win rate at the curve's largest "
                             "budget; repeat for more agents")
    parser.add_argument("--out", metavar="DIR",
                        help="write DIR/records.jsonl (every game, recorded as games finish) and DIR/ladder-Np.json "
                             "(--build) or DIR/placement.md")
    parser.add_argument("--overwrite", action="store_true", help="replace the files of an existing --out")
    parser.add_argument("--resume", action="store_true",
                        help="keep the games already in --out's records.jsonl (an interrupted run's) and play the "
                             "others: the same results and files as one uninterrupted run; needs the same agents, "
                             "players, games, seed and model files")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.set_defaults(run=_run_ladder_command, parser=parser)
