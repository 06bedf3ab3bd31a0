"""The opponents of a batch of games: agents seated per game and seat, moved through the agent protocol.

``learner.LearnerGames`` (one learner seat per game) hands every other seat to an ``OpponentTable``: ``seat(rows,
num_players, learner_seats)``, when games are dealt, says who sits where, and ``play(games, learner)`` moves the
opponents until every game waits for its learner or is over. The table knows its agents only through the agent
protocol (``packetrow_env.agent_protocol``). Before every round a compiled mover, where the table has one, plays
the seats whose agents have a compiled form inside one compiled call (``move_compiled``); then each batch group
moves its waiting games in one ``act_batch`` call (``moves``): the agents of a class that batches together share a
group, every other agent has its own, and those shared groups move first, so the table's generator (``rng``) is
drawn in a fixed order and a run replays from its seed.

This class seats the agents it is given, as ``single_agent_env.SingleAgentEnv`` takes them: one agent at every opponent
seat, or a list with one per opponent seat, clockwise from the learner. Subclasses draw them per game instead
(``packetrow_train.vec_selfplay.PoolOpponents``), adding agents with ``join``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from ..agent_protocol import Agent, Turns, as_agent, batched_form
from ..knowledge import check_mode
from ..state import MAX_PLAYERS


class CompiledMover(Protocol):
    """Plays, in one compiled call, every game up to its learner's turn or to a seat whose agent has no compiled
    form (``packetrow_agents.opponents_batch.OpponentKernel``). Built as ``mover(cards, observation_mode,
    observation_encoding)``."""

    def set_agents(self, agents: Sequence[Agent]) -> None:
        """The table's agents, entry ids in order (``assigned`` holds these ids)."""
        ...

    def move(self, games, assigned: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Play the games; bool[B]: those left at the turn of an agent without a compiled form."""
        ...


class OpponentTable:
    """The agents at the opponent seats of a batch of games (see the module docstring).

    ``agents``: one agent (every opponent seat) or a list (one per opponent seat, clockwise from the learner), each
    an agent of the protocol or a callable ``f(observation, action_mask)``. Agents read ``observation_mode`` and
    ``observation_encoding`` from their turns. ``compiled``: None, or how to build the compiled mover
    (``CompiledMover``) for the batch's catalogue.
    """

    def __init__(self, agents=(), observation_mode: str = "tracked", observation_encoding: str = "onehot",
                 seed=None, compiled: Callable[..., CompiledMover] | None = None):
        self.observation_mode = check_mode(observation_mode)
        self.observation_encoding = observation_encoding
        self.rng = np.random.default_rng(seed)
        self.compiled = compiled
        self.compiled_mover: CompiledMover | None = None  # built on the first move, for the batch's catalogue
        self._mover_agents = -1  # how many agents the mover knows
        self.agents: list = []  # by entry id
        self.assigned = np.zeros((0, MAX_PLAYERS), np.int64)  # entry id per game and seat; -1: the learner, empty
        # the groups moved by one act_batch call each: (method, their agents); a class that batches together is one
        # group, any other agent its own; the shared groups move first (_order)
        self._batches: list[tuple] = []
        self._together: dict[type, int] = {}  # agent class -> its group
        self._order: list[int] = []
        self._group = np.zeros(0, np.int64)  # by entry id
        self._position = np.zeros(0, np.int64)  # by entry id: the index of its agent in its group
        one = not isinstance(agents, (list, tuple))
        self._clockwise = [self.join(as_agent(agent)) for agent in ([agents] if one else agents)]
        self._everywhere = one

    def join(self, agent: Agent) -> int:
        """Add ``agent`` to the table, in its batch group; its entry id."""
        method, together = batched_form(agent)
        cls = type(agent)
        group = self._together.get(cls) if together else None
        if group is None:
            group = len(self._batches)
            self._batches.append((method, []))
            if together:
                self._together[cls] = group
            self._order = sorted(range(len(self._batches)), key=lambda g: g not in self._together.values())
        members = self._batches[group][1]
        self._group = np.append(self._group, group)
        self._position = np.append(self._position, len(members))
        members.append(agent)
        self.agents.append(agent)
        return len(self.agents) - 1

    def vacate(self, rows: np.ndarray) -> np.ndarray:
        """Empty every seat of games ``rows`` (dealt anew), growing ``assigned`` to hold them; int[k, MAX_PLAYERS]:
        the entries that sat there (-1: none)."""
        if len(rows) and rows.max() >= len(self.assigned):
            grown = np.full((rows.max() + 1, MAX_PLAYERS), -1, np.int64)
            grown[:len(self.assigned)] = self.assigned
            self.assigned = grown
        before = self.assigned[rows]
        self.assigned[rows] = -1
        return before

    def seat(self, rows, num_players, learner_seats) -> None:
        """Seat the opponents of freshly dealt games ``rows`` (``num_players`` and the learner's seat in each)."""
        rows, counts, learner = np.asarray(rows), np.asarray(num_players), np.asarray(learner_seats)
        self.vacate(rows)
        needed = int(counts.max(initial=1)) - 1
        if not self._everywhere and needed > len(self._clockwise):
            raise ValueError(f"{needed} opponents are needed for a {needed + 1}-player game, got "
                             f"{len(self._clockwise)}")
        for k in range(1, needed + 1):  # the k-th opponent clockwise from the learner
            at = k < counts
            entry = self._clockwise[0 if self._everywhere else k - 1]
            self.assigned[rows[at], (learner[at] + k) % counts[at]] = entry

    def play(self, games, learner: np.ndarray) -> None:
        """Move the opponents of ``games`` (a VectorGame) until each waits for its learner (``learner``: his seat in
        each game) or is over."""
        while True:
            self.move_compiled(games)
            player = games.current_player
            waiting = (player >= 0) & (player != learner)
            if not waiting.any():
                return
            rows = np.flatnonzero(waiting)
            acts = np.zeros(games.num_games, np.int64)
            acts[rows] = self.moves(games, rows, games.legal_action_mask()[rows])
            games.step(acts, where=waiting)

    def move_compiled(self, games) -> None:
        """Play every game's seats whose agents have a compiled form, up to its learner or another agent (nothing
        without a compiled mover)."""
        if self.compiled is None:
            return
        if self.compiled_mover is None:
            self.compiled_mover = self.compiled(games.cards, self.observation_mode, self.observation_encoding)
        if self._mover_agents != len(self.agents):
            self.compiled_mover.set_agents(self.agents)
            self._mover_agents = len(self.agents)
        self.compiled_mover.move(games, self.assigned, self.rng)

    def moves(self, games, rows: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """int64[k]: the action of the opponent to act in each game of ``rows`` (``masks``: their legal actions),
        each batch group's games in one ``act_batch`` call."""
        seats = games.current_player[rows]
        ids = self.assigned[rows, seats]
        groups = self._group[ids]
        out = np.zeros(len(rows), np.int64)
        for group in self._order:
            k = np.flatnonzero(groups == group)
            if len(k):
                method, agents = self._batches[group]
                turns = Turns(games, rows[k], seats[k], self._position[ids[k]], masks[k], self.observation_mode,
                              self.observation_encoding, self.rng)
                out[k] = method(agents, turns)
        return out

    def act(self, games, rows, observations, masks) -> np.ndarray:
        """Deprecated (to be removed in 0.5): ``moves(games, rows, masks)``; the agents read their own
        observations."""
        warnings.warn("OpponentTable.act(games, rows, observations, masks) is deprecated: use moves(games, rows, "
                      "masks)", DeprecationWarning, stacklevel=2)
        return self.moves(games, np.asarray(rows), masks)
