"""The opponent pool of self-play: frozen snapshots of the learner, a league's exploiters and scripted agents.

Every episode, ``SingleAgentEnv`` calls ``pool.sample(rng, count)`` for the ``count`` opponent seats,
and each seat independently draws a *source* from the mixture (weights normalised to sum 1):

- ``latest``: the newest snapshot;
- ``uniform``: a snapshot drawn uniformly from those kept;
- ``recent``: a snapshot drawn with weight ``recent_decay ** age`` (age 0 = newest, 1 = the one before, ...);
- ``pfsp``: prioritized fictitious self-play (AlphaStar): a snapshot drawn with weight ``f(p)``, ``p`` the learner's
  estimated loss rate against it, ``f`` the ``PFSP`` weighting: ``hard`` (``p ** exponent``: mostly the opponents
  the learner loses to) or ``variance`` (``p (1 - p)``: mostly those it beats about half the time);
- ``exploiters``: a league's exploiter (``train/league.py``), drawn uniformly or by PFSP (``exploiter_draw``);
- any agent spec of ``packetrow_agents.registry`` (``heuristic``, ``random``, ``heuristic:threshold=2``, ...).

``by_players`` replaces the mixture in games of some player counts ({4: {"heuristic": 1.0}}: three heuristics in
every 4-player game, the mixture in the others), so that, e.g., 2-player games meet the best responses the
exploit stack trains in 2-player games while 4-player games keep the heuristic seats that hold the 4-player
strength. Without it one draw serves every seat of a batch of games, as before it existed.

The loss-rate estimates are moving averages over finished episodes (``record_results``, from the trainer's
callback): each episode in which the learner met a kept snapshot or exploiter (named ``snapshot@STEP`` or
``exploiter@STEP``) moves that opponent's estimate a step ``rate`` toward the learner's loss, 1 minus its share
of the win (0 or 1 in a 2-player game without a tie; in a game of more players the learner also loses to the
other seats, so ``p`` is the learner's loss rate in games with that opponent). An opponent never met has the
``prior``. When every weight is 0 (``hard`` with every ``p`` 0, ``variance`` with every ``p`` 0 or 1) the draw is
uniform. The estimates start from the prior in each process and on a resume (they are not saved).

Snapshots and exploiters are NumpyPolicy copies of a learner (numpy forward pass, no torch, no gradients),
played by PolicyAgent objects sampling from (or, with ``deterministic``, taking the argmax of) the policy.
At most ``max_snapshots`` snapshots and ``max_exploiters`` exploiters are kept; the oldest go first. A policy
source is left out of the draw while the pool has none of its policies (training adds the initial policy
before the first episode; a league's first exploiter comes after ``league.every`` steps).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from packetrow_agents.policy import NumpyPolicy, PolicyAgent
from packetrow_agents.registry import make_agent, model_paths, parse_spec

SNAPSHOT_SOURCES = ("latest", "uniform", "recent", "pfsp")
EXPLOITERS = "exploiters"
POLICY_SOURCES = (*SNAPSHOT_SOURCES, EXPLOITERS)  # the sources that draw one of the pool's policies
PFSP_WEIGHTINGS = ("hard", "variance")
EXPLOITER_DRAWS = ("pfsp", "uniform")


@dataclass(frozen=True)
class PFSP:
    """Prioritized fictitious self-play's weighting of opponents by the learner's loss rate ``p`` against each
    (module docstring); ``rate``: the step of the moving estimate, ``prior``: the estimate of an opponent not met."""

    weighting: str = "hard"
    exponent: float = 2.0
    prior: float = 0.5
    rate: float = 0.05

    def __post_init__(self):
        if self.weighting not in PFSP_WEIGHTINGS:
            raise ValueError(f"the PFSP weighting must be one of {', '.join(PFSP_WEIGHTINGS)}, got {self.weighting!r}")
        if not self.exponent > 0:
            raise ValueError(f"the PFSP exponent must be > 0, got {self.exponent!r}")
        if not 0 <= self.prior <= 1:
            raise ValueError(f"the PFSP prior must be in [0, 1], got {self.prior!r}")
        if not 0 < self.rate <= 1:
            raise ValueError(f"the PFSP rate must be in (0, 1], got {self.rate!r}")

    def weights(self, loss_rates) -> np.ndarray:
        """f(p) of each loss rate: ``p ** exponent`` (hard) or ``p (1 - p)`` (variance)."""
        p = np.asarray(loss_rates, dtype=float)
        return p ** self.exponent if self.weighting == "hard" else p * (1 - p)

    def probabilities(self, loss_rates) -> np.ndarray:
        """The draw's probabilities: the weights normalised, uniform where they sum to 0."""
        w = self.weights(loss_rates)
        total = w.sum()
        return w / total if total > 0 else np.full(len(w), 1.0 / len(w))

    def update(self, estimate: float, loss: float) -> float:
        """The moving estimate after one more episode with ``loss`` (1 minus the learner's share of the win)."""
        return estimate + self.rate * (loss - estimate)


def check_mixture(mixture: Mapping[str, float]) -> dict[str, float]:
    """Validate a mixture {source: weight}; returns it as floats (sources: latest, uniform, recent, pfsp,
    exploiters or an agent spec)."""
    allowed = f"{', '.join(POLICY_SOURCES)} or an agent spec (e.g. heuristic, random)"
    if not isinstance(mixture, Mapping) or not mixture:
        raise ValueError(f"the opponent mixture must be a non-empty mapping source -> weight, got {mixture!r}; "
                         f"sources: {allowed}")
    checked = {}
    for source, weight in mixture.items():
        source = str(source).strip()
        if source not in POLICY_SOURCES:
            try:
                name, options = parse_spec(source)
            except ValueError as error:
                raise ValueError(f"unknown opponent source {source!r} in the mixture ({error}); allowed: "
                                 f"{allowed}") from None
            for path in model_paths(name, options):  # read when the games start: missing, say so before
                if not Path(path).is_file():
                    raise ValueError(f"opponent source {source!r}: no model file at {path} (a relative path is read "
                                     f"from the working directory, {Path.cwd()})")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight >= 0:
            raise ValueError(f"the weight of {source!r} in the mixture must be a number >= 0, got {weight!r}")
        checked[source] = float(weight)
    if sum(checked.values()) <= 0:
        raise ValueError(f"the opponent mixture's weights sum to 0: {checked}; give at least one positive weight")
    return checked


def check_mixtures_by_players(by_players: Mapping | None) -> dict[int, dict[str, float]]:
    """Validate {player count: mixture} (counts 2-5, each mixture as ``check_mixture``); returns it checked."""
    if by_players is None:
        return {}
    if not isinstance(by_players, Mapping):
        raise ValueError(f"the mixtures by player count must be a mapping player count -> mixture, got "
                         f"{by_players!r}")
    checked = {}
    for count, mixture in by_players.items():
        if isinstance(count, bool) or not isinstance(count, int) or not 2 <= count <= 5:
            raise ValueError(f"the mixtures by player count are keyed by a player count 2-5, got {count!r}")
        try:
            checked[count] = check_mixture(mixture)
        except ValueError as error:
            raise ValueError(f"{count} players: {error}") from None
    return checked


def member_name(source: str, step: int) -> str:
    """The name a kept policy plays under (and episodes record): ``snapshot@STEP`` or ``exploiter@STEP``."""
    return f"{'exploiter' if source == EXPLOITERS else 'snapshot'}@{step}"


class OpponentPool:
    """Snapshots of the learner, exploiters and scripted agents; ``sample(rng, count)`` draws one opponent per seat."""

    def __init__(self, mixture: Mapping[str, float], max_snapshots: int = 20, recent_decay: float = 0.7,
                 deterministic: bool = False, pfsp: PFSP = PFSP(), max_exploiters: int = 3,
                 exploiter_draw: str = "pfsp", by_players: Mapping[int, Mapping[str, float]] | None = None):
        self.mixture = check_mixture(mixture)
        self.by_players = check_mixtures_by_players(by_players)
        for name, value in [("max_snapshots", max_snapshots), ("max_exploiters", max_exploiters)]:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not 0 < recent_decay <= 1:
            raise ValueError(f"recent_decay must be in (0, 1], got {recent_decay!r}")
        if exploiter_draw not in EXPLOITER_DRAWS:
            raise ValueError(f"exploiter_draw must be one of {', '.join(EXPLOITER_DRAWS)}, got {exploiter_draw!r}")
        self.max_snapshots = max_snapshots
        self.max_exploiters = max_exploiters
        self.recent_decay = float(recent_decay)
        self.deterministic = deterministic
        self.pfsp = pfsp
        self.exploiter_draw = exploiter_draw
        self.snapshots: list[tuple[int, NumpyPolicy]] = []  # (learner step, policy), oldest first
        self.exploiters: list[tuple[int, NumpyPolicy]] = []  # (the main agent's step when made, policy), oldest first
        self.loss_rates: dict[str, float] = {}  # member name -> the learner's estimated loss rate (PFSP)
        # scripted agents are reused per (spec, seat slot): cheap, and two seats never share one object
        self._scripted: dict[tuple[str, int], object] = {}

    @property
    def uses_results(self) -> bool:
        """Whether a draw depends on the loss-rate estimates (a PFSP source): only then need results be recorded."""
        mixtures = [self.mixture, *self.by_players.values()]
        return any("pfsp" in m or (EXPLOITERS in m and self.exploiter_draw == "pfsp") for m in mixtures)

    def add(self, policy: NumpyPolicy, step: int) -> None:
        """Add a snapshot taken at learner step ``step``; drops the oldest beyond ``max_snapshots``."""
        self.snapshots.append((int(step), policy))
        del self.snapshots[:-self.max_snapshots]
        self._forget_dropped()

    def add_exploiter(self, policy: NumpyPolicy, step: int) -> None:
        """Add an exploiter made at the main agent's step ``step``; drops the oldest beyond ``max_exploiters``."""
        self.exploiters.append((int(step), policy))
        del self.exploiters[:-self.max_exploiters]
        self._forget_dropped()

    def _kept_names(self) -> set[str]:
        return set(self.names("latest")) | set(self.names(EXPLOITERS))  # every snapshot, every exploiter

    def _forget_dropped(self) -> None:
        kept = self._kept_names()
        self.loss_rates = {name: p for name, p in self.loss_rates.items() if name in kept}

    def members(self, source: str) -> list[tuple[int, NumpyPolicy]]:
        """The kept policies a policy source draws from (snapshots or exploiters), oldest first."""
        if source not in POLICY_SOURCES:
            raise ValueError(f"{source!r} is not a policy source; allowed: {', '.join(POLICY_SOURCES)}")
        return self.exploiters if source == EXPLOITERS else self.snapshots

    def names(self, source: str) -> list[str]:
        """The names of the policies a policy source draws from, oldest first."""
        return [member_name(source, step) for step, _ in self.members(source)]

    def loss_rate(self, name: str) -> float:
        """The learner's estimated loss rate against a kept policy (the prior if not met yet)."""
        return self.loss_rates.get(name, self.pfsp.prior)

    def record_results(self, results: Iterable[tuple[str, float]]) -> None:
        """Update the loss-rate estimates with finished episodes' (opponent name, learner's loss) pairs, in order;
        names of policies no longer kept (or of scripted agents) are ignored."""
        kept = self._kept_names()
        for name, loss in results:
            if name in kept:
                self.loss_rates[name] = self.pfsp.update(self.loss_rate(name), float(loss))

    def source_probabilities(self, num_players: int | None = None) -> dict[str, float]:
        """The probability of each source for one seat of a game of ``num_players`` now (its ``by_players``
        mixture, else the mixture; policy sources are 0 while they have no policy)."""
        mixture = self.by_players.get(num_players, self.mixture)
        weights = {s: (0.0 if s in POLICY_SOURCES and not self.members(s) else w) for s, w in mixture.items()}
        total = sum(weights.values())
        if total <= 0:
            raise RuntimeError("the opponent pool has no snapshot or exploiter yet for the sources the mixture "
                               "gives weight to; add a snapshot first (training adds the initial policy)")
        return {s: w / total for s, w in weights.items()}

    def member_probabilities(self, source: str) -> np.ndarray:
        """The probability of each kept policy (oldest first) under a policy source."""
        k = len(self.members(source))
        if source == "latest":
            p = np.zeros(k)
            p[-1] = 1.0
        elif source == "uniform" or (source == EXPLOITERS and self.exploiter_draw == "uniform"):
            p = np.full(k, 1.0 / k)
        elif source == "recent":
            p = self.recent_decay ** np.arange(k - 1, -1, -1, dtype=float)
            p /= p.sum()
        else:  # pfsp, or exploiters drawn by PFSP
            p = self.pfsp.probabilities([self.loss_rate(name) for name in self.names(source)])
        return p

    def matchmaking(self, num_players: int | None = None) -> list[dict]:
        """Each kept policy's loss-rate estimate, PFSP weight and probability of being drawn for one seat of a game
        of ``num_players`` now (``None``: the mixture)."""
        sources = self.source_probabilities(num_players)
        rows = []
        for kind in ("latest", EXPLOITERS):  # the snapshots (every snapshot source), then the exploiters
            names = self.names(kind)
            drawn = np.zeros(len(names))
            for source, share in sources.items():
                if source in POLICY_SOURCES and self.members(source) is self.members(kind) and share:
                    drawn += share * self.member_probabilities(source)
            weights = self.pfsp.weights([self.loss_rate(n) for n in names])
            rows += [{"name": n, "loss_rate": self.loss_rate(n), "pfsp_weight": float(w), "probability": float(q)}
                     for n, w, q in zip(names, weights, drawn)]
        return rows

    def draw(self, rng: np.random.Generator, count: int,
             num_players: int | None = None) -> list[tuple[str, int | None]]:
        """(source, index of the source's policy or None) for each of ``count`` seats of games of ``num_players``
        (``None``: the mixture)."""
        probabilities = self.source_probabilities(num_players)
        sources = list(probabilities)
        picks = rng.choice(len(sources), size=count, p=list(probabilities.values()))
        index = np.full(count, -1, np.int64)
        for k, source in enumerate(sources):  # each policy source's seats in one draw
            at = np.flatnonzero(picks == k)
            if source in POLICY_SOURCES and len(at):
                p = self.member_probabilities(source)
                index[at] = len(p) - 1 if source == "latest" else rng.choice(len(p), size=len(at), p=p)
        return [(sources[pick], None if i < 0 else i) for pick, i in zip(picks.tolist(), index.tolist())]

    def draw_games(self, rng: np.random.Generator, num_players) -> list[tuple[str, int | None]]:
        """``draw`` for the opponent seats of games of these player counts, game after game (each game's
        ``num_players - 1`` seats in turn): with ``by_players`` one draw per game from its count's mixture, without
        it one draw for all the seats."""
        counts = [int(n) for n in num_players]
        if not self.by_players:
            return self.draw(rng, sum(counts) - len(counts))
        return [seat for n in counts for seat in self.draw(rng, n - 1, n)]

    def member_agent(self, source: str, index: int) -> PolicyAgent:
        """A PolicyAgent playing kept policy ``index`` (oldest first) of a policy source, named after it."""
        step, policy = self.members(source)[index]
        return PolicyAgent(policy=policy, deterministic=self.deterministic, name=member_name(source, step))

    def sample(self, rng: np.random.Generator, count: int) -> list:
        """One opponent agent per seat of one game of ``count + 1`` players, drawn independently from its mixture."""
        opponents = []
        for slot, (source, index) in enumerate(self.draw(rng, count, count + 1)):
            if index is not None:
                opponents.append(self.member_agent(source, index))
            else:
                agent = self._scripted.get((source, slot))
                if agent is None:
                    agent = self._scripted[(source, slot)] = make_agent(source, 0)
                opponents.append(agent)
        return opponents
