"""The opponent pool of self-play: frozen snapshots of the learner plus scripted agents, drawn per seat.

Every episode, ``SingleAgentEnv`` calls ``pool.sample(rng, count)`` for the ``count`` opponent seats,
and each seat independently draws a *source* from the mixture (weights normalised to sum 1):

- ``latest``: the newest snapshot;
- ``uniform``: a snapshot drawn uniformly from those kept;
- ``recent``: a snapshot drawn with weight ``recent_decay ** age`` (age 0 = newest, 1 = the one before, ...);
- any agent spec of ``packetrow_agents.registry`` (``heuristic``, ``random``, ``heuristic:threshold=2``, ...).

Snapshots are NumpyPolicy copies of the learner (numpy forward pass, no torch, no gradients), played
by PolicyAgent objects sampling from (or, with ``deterministic``, taking the argmax of) the policy.
At most ``max_snapshots`` are kept; the oldest go first. Snapshot sources are left out of the draw
while the pool has no snapshot yet (training adds the initial policy before the first episode).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from packetrow_agents.policy import NumpyPolicy, PolicyAgent
from packetrow_agents.registry import make_agent, parse_spec

SNAPSHOT_SOURCES = ("latest", "uniform", "recent")


def check_mixture(mixture: Mapping[str, float]) -> dict[str, float]:
    """Validate a mixture {source: weight}; returns it as floats (sources: latest, uniform, recent or an agent spec)."""
    if not isinstance(mixture, Mapping) or not mixture:
        raise ValueError(f"the opponent mixture must be a non-empty mapping source -> weight, got {mixture!r}; "
                         f"sources: {', '.join(SNAPSHOT_SOURCES)} or an agent spec (e.g. heuristic, random)")
    checked = {}
    for source, weight in mixture.items():
        source = str(source).strip()
        if source not in SNAPSHOT_SOURCES:
            try:
                parse_spec(source)
            except ValueError as error:
                raise ValueError(f"unknown opponent source {source!r} in the mixture ({error}); allowed: "
                                 f"{', '.join(SNAPSHOT_SOURCES)} or an agent spec") from None
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight >= 0:
            raise ValueError(f"the weight of {source!r} in the mixture must be a number >= 0, got {weight!r}")
        checked[source] = float(weight)
    if sum(checked.values()) <= 0:
        raise ValueError(f"the opponent mixture's weights sum to 0: {checked}; give at least one positive weight")
    return checked


class OpponentPool:
    """Snapshots of the learner and scripted agents; ``sample(rng, count)`` draws one opponent per seat."""

    def __init__(self, mixture: Mapping[str, float], max_snapshots: int = 20, recent_decay: float = 0.7,
                 deterministic: bool = False):
        self.mixture = check_mixture(mixture)
        if isinstance(max_snapshots, bool) or not isinstance(max_snapshots, int) or max_snapshots < 1:
            raise ValueError(f"max_snapshots must be a positive integer, got {max_snapshots!r}")
        if not 0 < recent_decay <= 1:
            raise ValueError(f"recent_decay must be in (0, 1], got {recent_decay!r}")
        self.max_snapshots = max_snapshots
        self.recent_decay = float(recent_decay)
        self.deterministic = deterministic
        self.snapshots: list[tuple[int, NumpyPolicy]] = []  # (learner step, policy), oldest first
        # scripted agents are reused per (spec, seat slot): cheap, and two seats never share one object
        self._scripted: dict[tuple[str, int], object] = {}

    def add(self, policy: NumpyPolicy, step: int) -> None:
        """Add a snapshot taken at learner step ``step``; drops the oldest beyond ``max_snapshots``."""
        self.snapshots.append((int(step), policy))
        del self.snapshots[:-self.max_snapshots]

    def source_probabilities(self) -> dict[str, float]:
        """The probability of each source for one seat now (snapshot sources are 0 while there are no snapshots)."""
        weights = {s: (0.0 if s in SNAPSHOT_SOURCES and not self.snapshots else w) for s, w in self.mixture.items()}
        total = sum(weights.values())
        if total <= 0:
            raise RuntimeError("the opponent pool has no snapshot yet and the mixture gives weight only to "
                               "snapshots; add one first (training adds the initial policy)")
        return {s: w / total for s, w in weights.items()}

    def snapshot_probabilities(self, source: str) -> np.ndarray:
        """The probability of each kept snapshot (oldest first) under a snapshot source."""
        k = len(self.snapshots)
        if source == "latest":
            p = np.zeros(k)
            p[-1] = 1.0
        elif source == "uniform":
            p = np.full(k, 1.0 / k)
        elif source == "recent":
            p = self.recent_decay ** np.arange(k - 1, -1, -1, dtype=float)
            p /= p.sum()
        else:
            raise ValueError(f"{source!r} is not a snapshot source; allowed: {', '.join(SNAPSHOT_SOURCES)}")
        return p

    def draw(self, rng: np.random.Generator, count: int) -> list[tuple[str, int | None]]:
        """(source, snapshot index or None) for each of ``count`` seats."""
        probabilities = self.source_probabilities()
        sources = list(probabilities)
        picks = rng.choice(len(sources), size=count, p=list(probabilities.values()))
        index = np.full(count, -1, np.int64)
        for k, source in enumerate(sources):  # each snapshot source's seats in one draw
            at = np.flatnonzero(picks == k)
            if source in SNAPSHOT_SOURCES and len(at):
                p = self.snapshot_probabilities(source)
                index[at] = len(p) - 1 if source == "latest" else rng.choice(len(p), size=len(at), p=p)
        return [(sources[pick], None if i < 0 else i) for pick, i in zip(picks.tolist(), index.tolist())]

    def snapshot_agent(self, index: int) -> PolicyAgent:
        """A PolicyAgent playing kept snapshot ``index`` (oldest first), named after its learner step."""
        step, policy = self.snapshots[index]
        return PolicyAgent(policy=policy, deterministic=self.deterministic, name=f"snapshot@{step}")

    def sample(self, rng: np.random.Generator, count: int) -> list:
        """One opponent agent per seat, drawn independently from the mixture."""
        opponents = []
        for slot, (source, index) in enumerate(self.draw(rng, count)):
            if index is not None:
                opponents.append(self.snapshot_agent(index))
            else:
                agent = self._scripted.get((source, slot))
                if agent is None:
                    agent = self._scripted[(source, slot)] = make_agent(source, 0)
                opponents.append(agent)
        return opponents
