"""The Agent protocol shared by every player: baselines, search and learned policies; and its batched form.

An agent moves one seat of one game at a time (``act``). Where many games wait at once (self-play on the
batched engine, ``packetrow_train.vec_selfplay``), a caller groups the waiting seats by agent class and asks
``type(agent).act_batch(agents, turns)`` for all of them: a class with a faster way (one compiled call, one
draw) overrides it; the default plays each turn with ``act``. Batched moves draw from the batch's own
generator (``turns.rng``), so a batch replays from its seed alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from packetrow_env.seat_view import SeatView


@dataclass(frozen=True)
class Turns:
    """The seats to act in some games of a ``packetrow_env.vector.VectorGame``, one turn per game."""

    games: object  # the VectorGame
    rows: np.ndarray  # int[k]: the games
    seats: np.ndarray  # int[k]: the seat to act in each
    player: np.ndarray  # int[k]: which of the agents moved together plays each turn (an index into them)
    masks: np.ndarray  # bool[k, A]: the legal actions
    observation_mode: str
    observation_encoding: str
    rng: np.random.Generator  # the batch's generator, for batched draws

    def __len__(self) -> int:
        return len(self.rows)

    def observe(self) -> np.ndarray:
        """float32[k, D]: each seat's observation in the batch's mode and encoding."""
        return self.games.observe(self.observation_mode, rows=self.rows, encoding=self.observation_encoding)

    def view(self, k: int) -> SeatView:
        """The SeatView of turn ``k`` (a Game copied out of the batch: the slow, general path)."""
        return SeatView(self.games.game(int(self.rows[k])), int(self.seats[k]), self.observation_mode)

    def by_agent(self):
        """(agent index, positions, their turns) for each agent that has turns here (no copy where one has all)."""
        first = int(self.player[0]) if len(self.player) else 0
        if (self.player == first).all():
            if len(self.player):
                yield first, slice(None), self
            return
        for j in np.unique(self.player).tolist():
            k = np.flatnonzero(self.player == j)
            yield j, k, self.select(k)

    def select(self, where) -> Turns:
        """The turns at positions ``where`` (an index array)."""
        return Turns(self.games, self.rows[where], self.seats[where], self.player[where], self.masks[where],
                     self.observation_mode, self.observation_encoding, self.rng)


@runtime_checkable
class Agent(Protocol):
    """Chooses a legal action for the seat to act, from that seat's view alone.

    ``act(view)`` receives a ``packetrow_env.seat_view.SeatView``: the seat's legal actions
    (``view.action_mask``), its observation (``view.observation``, encoded on first use), the public
    state, its own hand and what it knows of the others (R-INFO), and determinisations for search
    (``view.sample_determinization(rng)``). The Game itself is not part of it, so an agent cannot read a
    hidden card. ``reset(seed)`` reseeds an agent for a new game. ``act_batch`` (a class method) moves many
    games at once; see the module docstring.
    """

    name: str
    # True: all agents of the class move in one act_batch call (policies stacked into one forward), before the
    # agents that move one by one, so that the batch's generator is drawn in a fixed order
    batches_together: ClassVar[bool] = False

    def act(self, view: SeatView) -> int:
        """A legal action id."""
        ...

    def reset(self, seed: int) -> None:
        """Reseed for a new game."""
        ...

    @classmethod
    def act_batch(cls, agents: Sequence[Agent], turns: Turns) -> np.ndarray:
        """int64[len(turns)]: turn k's action by ``agents[turns.player[k]]``; by default each agent's ``act``."""
        return act_each(agents, turns)


def act_each(agents: Sequence, turns: Turns) -> np.ndarray:
    """The turns' actions one game at a time, each by its agent's ``act`` on its seat's view."""
    return np.array([agents[p].act(turns.view(k)) for k, p in enumerate(turns.player.tolist())], np.int64)


def batch_method(agent_class: type):
    """How agents of ``agent_class`` move a batch: its ``act_batch`` where that plays its own ``act``; else
    ``act_each`` (a class without act_batch, or a subclass that changed ``act`` but not ``act_batch``)."""
    def owner(name):
        return next((k for k in agent_class.__mro__ if name in vars(k)), None)

    batched, acts = owner("act_batch"), owner("act")
    if batched is None or batched is Agent or acts is None or not issubclass(batched, acts):
        return act_each
    return agent_class.act_batch
