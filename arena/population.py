"""Population analysis of a record file: the payoff matrix with intervals, and Nash averaging.

Payoff. In every game where agents i and j both sit, i scores 1 against j if it finishes ahead
(R-SCORE-4 ranks), 1/2 on a tie and 0 behind, averaged over the seats of j (a game seating several copies
of j counts once). P[i, j] is the mean of those scores, so P[i, j] + P[j, i] = 1 over the same games.
Intervals: a game's scores are first averaged per deal (duplicate deals share one; otherwise each game is
its own deal), then the normal interval of the mean over deals (``packetrow_arena.duplicate_deals``).

Ranking: Nash averaging (Balduzzi, Tuyls, Perolat and Graepel, "Re-evaluating evaluation", 2018). The
antisymmetric game A = P - 1/2 (payoff A[i, j] to the row agent) is played by two meta-players who each
pick an agent; its value is 0. Among its Nash equilibria the one of maximum entropy is unique, and an
agent's Nash average is its expected payoff against that mixture, A p*: 0 for the agents the mixture
plays, negative for the others. Unlike a mean win rate it does not reward an agent for beating many
weak or redundant copies. Pairs that never met count as even (A = 0).

Solver: the equilibria of the symmetric zero-sum game are the mixtures p with A p <= 0; scipy's linprog
finds one, and scipy's SLSQP then maximises the entropy over that polytope (a concave objective over a
polytope: one maximum). nashpy, the maintained Python library for two-player games, returns equilibria
(vertices, support enumeration, Lemke-Howson) but not the maximum-entropy one Nash averaging needs;
OpenSpiel (a 16 MB wheel, the [openspiel] extra) has alpha-rank, another ranking (docs/openspiel.md runs it on
this payoff matrix), and a Nash averaging that needs cvxpy, so the few lines here do it with scipy.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from packetrow_env.user_files import check_output_folder

from packetrow_agents.mixture import draw_member, mixture_weights

from . import stats
from .records import RecordError, read_records
from .tournament import check_out_free, model_hashes

_TOLERANCE = 1e-9


@dataclass
class Population:
    """The agents of a record file, their payoff matrix (mean, low, high), the games per pair, and the ranking."""

    names: list[str]
    payoff: np.ndarray  # P[i, j]: i's mean score against j (nan where they never met)
    low: np.ndarray
    high: np.ndarray
    games: np.ndarray  # int[i, j]: games where both sat
    equilibrium: np.ndarray  # p*: the maximum-entropy Nash mixture
    nash_average: np.ndarray  # A p*

    def ranking(self) -> list[int]:
        """Agent indices by Nash average, best first (ties by mean payoff)."""
        mean = np.nanmean(np.where(np.eye(len(self.names), dtype=bool), np.nan, self.payoff), axis=1)
        return sorted(range(len(self.names)), key=lambda i: (-round(self.nash_average[i], 9), -mean[i]))

    def format_table(self) -> str:
        """The ranking and the payoff matrix as Markdown tables."""
        lines = ["| agent | Nash average | Nash mixture | mean score |", "|---|---:|---:|---:|"]
        off = np.where(np.eye(len(self.names), dtype=bool), np.nan, self.payoff)
        for i in self.ranking():
            lines.append(f"| {self.names[i]} | {self.nash_average[i]:+.3f} | {self.equilibrium[i]:.3f} "
                         f"| {np.nanmean(off[i]):.3f} |")
        lines += ["", "| row's score against column [95% CI] | " + " | ".join(self.names) + " |",
                  "|---|" + "---|" * len(self.names)]
        for i, name in enumerate(self.names):
            cells = ["" if i == j or self.games[i, j] == 0 else
                     f"{self.payoff[i, j]:.2f} [{self.low[i, j]:.2f}, {self.high[i, j]:.2f}]"
                     for j in range(len(self.names))]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def write_csv(self, path) -> Path:
        """The payoff matrix as CSV: one row per ordered pair."""
        path = Path(path)
        with path.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["agent", "opponent", "games", "score", "low", "high"])
            for i, a in enumerate(self.names):
                for j, b in enumerate(self.names):
                    if i != j and self.games[i, j]:
                        writer.writerow([a, b, int(self.games[i, j]), self.payoff[i, j], self.low[i, j],
                                         self.high[i, j]])
        return path

    def plot(self, path) -> Path:
        """A heat map of the payoff matrix, each cell with its score and interval, saved to ``path``."""
        import matplotlib
        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
        n = len(self.names)
        order = self.ranking()
        shown = self.payoff[np.ix_(order, order)]
        fig, ax = plt.subplots(figsize=(1.3 * n + 2, 1.1 * n + 1.5))
        image = ax.imshow(np.ma.masked_invalid(np.where(np.eye(n, dtype=bool), np.nan, shown)), cmap="RdBu",
                          vmin=0, vmax=1)
        for r, i in enumerate(order):
            for c, j in enumerate(order):
                if i != j and self.games[i, j]:
                    dark = abs(self.payoff[i, j] - 0.5) > 0.3  # white on the ends of the colour map
                    ax.text(c, r, f"{self.payoff[i, j]:.2f}\n[{self.low[i, j]:.2f}, {self.high[i, j]:.2f}]",
                            ha="center", va="center", fontsize=8, color="white" if dark else "black")
        labels = [self.names[i] for i in order]
        ax.set_xticks(range(n), labels, rotation=30, ha="right")
        ax.set_yticks(range(n), labels)
        ax.set_xlabel("opponent")
        ax.set_ylabel("agent (best Nash average first)")
        ax.set_title("score of the row agent against the column agent")
        fig.colorbar(image, ax=ax, label="score (1 = always ahead)")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return Path(path)


def pair_scores(record: dict) -> dict[tuple[int, int], float]:
    """(i, j) -> i's score against j in one game (entries as in the record), for every pair of distinct entries."""
    ranks, entries = record["ranks"], record["entries"]
    scores = {}
    for i in set(entries):
        mine = ranks[entries.index(i)]  # copies of one agent: its first seat speaks for it
        for j in set(entries) - {i}:
            theirs = [r for r, e in zip(ranks, entries) if e == j]
            scores[i, j] = sum(1.0 if mine < r else 0.5 if mine == r else 0.0 for r in theirs) / len(theirs)
    return scores


def payoff_matrix(games: Sequence[dict], num_agents: int, z: float = 1.96):
    """(P, low, high, games): mean pairwise scores with normal intervals over deals; nan where a pair never met."""
    per_deal: dict[tuple[int, int], dict[int, list[float]]] = {}
    count = np.zeros((num_agents, num_agents), dtype=int)
    for game in games:
        for pair, score in pair_scores(game).items():
            per_deal.setdefault(pair, {}).setdefault(game["deal"], []).append(score)
            count[pair] += 1
    payoff, low, high = (np.full((num_agents, num_agents), math.nan) for _ in range(3))
    for (i, j), deals in per_deal.items():
        means = [sum(values) / len(values) for values in deals.values()]
        payoff[i, j], low[i, j], high[i, j] = stats.mean_interval(means, z)
        if not math.isnan(low[i, j]):
            low[i, j], high[i, j] = max(0.0, low[i, j]), min(1.0, high[i, j])
    return payoff, low, high, count


def max_entropy_nash(antisymmetric: np.ndarray) -> np.ndarray:
    """The maximum-entropy Nash equilibrium mixture of the symmetric zero-sum game with payoff ``antisymmetric``."""
    from scipy.optimize import linprog, minimize
    a = np.asarray(antisymmetric, dtype=float)
    n = len(a)
    # any equilibrium: a mixture no agent beats on average (A p <= 0), the value of the game being 0
    found = linprog(np.zeros(n), A_ub=a, b_ub=np.full(n, _TOLERANCE), A_eq=np.ones((1, n)), b_eq=[1.0],
                    bounds=[(0, 1)] * n, method="highs")
    if not found.success:  # cannot happen for an antisymmetric matrix: a symmetric zero-sum game has one
        raise ValueError(f"no equilibrium found ({found.message}); is the matrix antisymmetric?")
    start = found.x

    def negative_entropy(p):
        q = np.clip(p, 1e-300, 1.0)
        return float(np.sum(q * np.log(q)))

    def gradient(p):
        return np.log(np.clip(p, 1e-300, 1.0)) + 1.0

    best = minimize(negative_entropy, start, jac=gradient, method="SLSQP", bounds=[(0, 1)] * n,
                    constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0, "jac": lambda p: np.ones(n)},
                                 {"type": "ineq", "fun": lambda p: _TOLERANCE - a @ p, "jac": lambda p: -a}],
                    options={"ftol": 1e-12, "maxiter": 500})
    p = best.x if best.success and np.all(a @ best.x <= 1e-6) else start
    p = np.clip(p, 0.0, None)
    return p / p.sum()


def least_exploitable_mixture(antisymmetric: np.ndarray, candidates: Sequence[int], strength: Sequence[float] = (),
                              floor: float | None = None) -> tuple[np.ndarray, float]:
    """(mixture, value): the mixture over the agents ``candidates`` (indices; the other weights 0) that minimises the
    most any agent of the game scores against it, ``max(A p)``, and that value (0 where the candidates hold a Nash
    equilibrium of the whole game, more where every mixture of them is beaten). A restricted-support minimax: the
    mixture to play when only some agents are acceptable (strong enough against outside opponents), judged against
    every agent of the population.

    ``strength`` and ``floor`` instead admit every candidate but keep the mixture strong on average: ``strength[k]``
    is candidate ``k``'s score against an opponent outside the population (its win rate against search, say), and
    the mixture's expected score, ``sum p_k strength[k]``, must be at least ``floor`` (a mixture drawn per game
    scores exactly that in expectation). A ValueError for an empty, repeated or out-of-range ``candidates``, a
    ``strength`` not one finite number per candidate, or a ``floor`` no candidate reaches."""
    from scipy.optimize import linprog
    a = np.asarray(antisymmetric, dtype=float)
    n, rows = len(a), list(candidates)
    if not rows or len(set(rows)) != len(rows) or not all(0 <= i < n for i in rows):
        raise ValueError(f"candidates must be distinct indices of the {n} agents, at least one; got {rows}")
    k = len(rows)
    # variables: the k weights and the value v; minimise v subject to A[:, rows] p - v <= 0, sum p = 1
    bound_rows, bounds = np.c_[a[:, rows], -np.ones(n)], np.zeros(n)
    if floor is not None:
        score = np.asarray(strength, dtype=float)
        if score.shape != (k,) or not np.all(np.isfinite(score)) or not np.isfinite(floor):
            raise ValueError(f"strength must be one finite score per candidate ({k}) and floor finite; got "
                             f"{list(strength)} and {floor}")
        if score.max() < floor:
            raise ValueError(f"no mixture of the candidates reaches the floor {floor}: their best strength is "
                             f"{score.max()}")
        bound_rows, bounds = np.r_[bound_rows, np.r_[-score, 0.0][None, :]], np.r_[bounds, -floor]
    found = linprog(np.r_[np.zeros(k), 1.0], A_ub=bound_rows, b_ub=bounds, A_eq=np.r_[np.ones(k), 0.0][None, :],
                    b_eq=[1.0], bounds=[(0, 1)] * k + [(None, None)], method="highs")
    if not found.success:  # cannot happen: the checks above leave a feasible mixture
        raise ValueError(f"no mixture found ({found.message})")
    p = np.zeros(n)
    p[rows] = np.clip(found.x[:k], 0.0, None)
    p /= p.sum()
    return p, float(np.max(a @ p))


def analyse(games: Sequence[dict], names: Sequence[str]) -> Population:
    """The payoff matrix and Nash averaging of ``games`` (record lines) among the agents ``names``."""
    payoff, low, high, count = payoff_matrix(games, len(names))
    antisymmetric = np.nan_to_num(payoff - 0.5, nan=0.0)
    np.fill_diagonal(antisymmetric, 0.0)
    antisymmetric = (antisymmetric - antisymmetric.T) / 2  # exact antisymmetry against rounding
    mixture = max_entropy_nash(antisymmetric)
    return Population(list(names), payoff, low, high, count, mixture, antisymmetric @ mixture)


def analyse_file(path, members: bool = False) -> Population:
    """``analyse`` on a record file (tournament or ladder); a RecordError names the file and line if it is bad.
    ``members``: each mixture agent split into the members it played (``split_mixtures``)."""
    records = read_records(path)
    if members:
        return analyse(*split_mixtures(records))
    return analyse(records.games, records.header["agents"])


def split_mixtures(records) -> tuple[list[dict], list[str]]:
    """(games, names) of ``records`` (a ``Records``) with each mixture agent's seats given, game by game, to the
    member it drew there (``packetrow_agents.mixture.draw_member`` on the seat's agent seed), as an entry of its own
    named ``AGENT [MEMBER]``; other agents keep theirs. A RecordError if a mixture's file is not the one the games
    were played with (its hash in the header), since the draws could not be read back."""
    header = records.header
    recorded = header.get("models", {})
    weights = {}  # entry -> its members' weights, for the mixture agents
    for entry, spec in enumerate(header["specs"]):
        try:
            mixture = mixture_weights(spec, header["num_players"])
        except ValueError as error:
            raise RecordError(f"{records.path}: cannot read the mixture agent {spec!r}: {error}") from None
        if mixture is None:
            continue
        changed = sorted(name for name, digest in model_hashes([spec]).items() if recorded.get(name) != digest)
        if changed:
            raise RecordError(f"{records.path}: the games were played with other files than {', '.join(changed)} "
                              f"(its sha256 differs from the header's), so the members {spec!r} drew cannot be "
                              "read back; use the files the games were played with")
        weights[entry] = mixture
    names, index = [], {}

    def entry_of(key, name):
        if key not in index:
            index[key] = len(names)
            names.append(name)
        return index[key]

    games = []
    for game in records.games:
        entries = []
        for entry, seed in zip(game["entries"], game["agent_seeds"]):
            agent = header["agents"][entry]
            if entry in weights:
                member = draw_member(weights[entry], seed)
                entries.append(entry_of((entry, member), f"{agent} [{member}]"))
            else:
                entries.append(entry_of((entry, None), agent))
        games.append({**game, "entries": entries})
    return games, names


# --------------------------------------------------------------------------- command line
def _run_population_command(args) -> int:
    out = Path(args.out) if args.out else None
    names = ("payoff.csv", "payoff.png", "population.md")
    if out is not None:
        check_out_free(args.parser, [out / name for name in names], args.overwrite)
        try:
            check_output_folder(out, ValueError, "argument --out")
        except ValueError as error:
            args.parser.error(str(error))
    try:
        population = analyse_file(args.records_file, args.members)
    except RecordError as error:
        args.parser.error(str(error))
    table = population.format_table()
    print(table)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        population.write_csv(out / names[0])
        population.plot(out / names[1])
        (out / names[2]).write_text(table + "\n")
        print(f"wrote {', '.join(str(out / name) for name in names)}")
    return 0


def add_arguments(parser) -> None:
    """Add the arguments of ``packetrow population`` to its parser."""
    parser.description = ("From a record file (records.jsonl of a tournament or the ladder): every agent's mean score "
                          "against every other (1 ahead, 1/2 tied, 0 behind) with 95% intervals, and the agents "
                          "ranked by Nash averaging (their payoff against the maximum-entropy Nash mixture).")
    parser.add_argument("records_file", metavar="RECORDS_JSONL", help="a records.jsonl of a tournament or ladder")
    parser.add_argument("--out", metavar="DIR",
                        help="write DIR/payoff.csv, DIR/payoff.png (the matrix as a heat map) and DIR/population.md")
    parser.add_argument("--members", action="store_true",
                        help="split each mixture agent (mixture:FILE, robust) into the members it drew, game by game")
    parser.add_argument("--overwrite", action="store_true", help="replace the files of an existing --out")
    parser.set_defaults(run=_run_population_command, parser=parser)
