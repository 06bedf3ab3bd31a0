"""The agent protocol: how every player is asked for its moves, one game at a time or a batch of games at once.

Everything that moves an opponent (the AEC env's users, the single-agent env ``single_agent_env.SingleAgentEnv``, the
batched learner's ``vector.opponents.OpponentTable``, tournaments, the compiled opponents of training) asks through
this protocol, and only through it (docs/agent_protocol.md):

- ``act(view) -> int`` (required): a legal action for the seat to act, from ``view``, a ``SeatView``: what that
  seat knows and nothing else.
- ``act_batch(agents, turns) -> int64[len(turns)]`` (optional, a class method): the moves of many games at once;
  turn k is played by ``agents[turns.player[k]]``, all of the caller's agents of that class. Without it an agent
  moves each turn through its ``act`` (``act_each``). It must play the moves ``act`` would (random draws aside:
  batched moves draw from ``turns.rng``, so a batch replays from its seed). ``batches_together`` (optional, default
  False): True where all agents of the class move in one call (policies stacked into one forward); False gives each
  agent its own call.
- ``compiled_form(observation_mode, observation_encoding, observation_size)`` (optional): a description of the agent
  that a compiled mover (``packetrow_agents.opponents_batch``) plays inside one compiled call for a batch read in
  that mode, encoding and size, or None where the agent has none there (the default).
- ``name`` (optional, default the class name) names it in logs and tables; ``reset(seed)`` (optional) reseeds it for
  a new game.
- ``move_note() -> dict | None`` (optional, default None): a note about the move its last ``act`` returned (the llm
  agent's raw replies, a search's statistics), which tournaments store with that move in the game's record. Called
  once after each ``act`` that moved (``move_note(agent)`` reads it); a JSON object of plain values, or None for
  no note.

An agent that cannot choose a move by its own rules (the llm agent with ``fallback=none`` whose replies named none)
raises ``NoMove``: the game cannot go on, and a tournament stops with a one-line error that keeps its finished games.

A callable ``f(observation, action_mask) -> int`` is an agent too once adapted, here and only here
(``as_agent``, ``FunctionAgent``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .seat_view import SeatView


class NoMove(RuntimeError):
    """An agent could not choose a move by its own rules; its message says why (module docstring)."""


@runtime_checkable
class Agent(Protocol):
    """Chooses a legal action for the seat to act, from that seat's view alone (the module docstring lists the
    optional parts of the protocol and their defaults)."""

    def act(self, view: SeatView) -> int:
        """A legal action id for ``view``'s seat."""
        ...


@runtime_checkable
class BatchedAgent(Agent, Protocol):
    """An agent with its own way to move many games at once."""

    @classmethod
    def act_batch(cls, agents: Sequence[Agent], turns: Turns) -> np.ndarray:
        """int64[len(turns)]: turn k's action by ``agents[turns.player[k]]``."""
        ...


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


def act_each(agents: Sequence[Agent], turns: Turns) -> np.ndarray:
    """The turns' actions one game at a time, each by its agent's ``act`` on its seat's view (the default batched
    form)."""
    return np.array([agents[p].act(turns.view(k)) for k, p in enumerate(turns.player.tolist())], np.int64)


def batched_form(agent: Agent) -> tuple[Callable[[Sequence[Agent], Turns], np.ndarray], bool]:
    """(how ``agent`` moves a batch: its class's ``act_batch``, else ``act_each``; whether all agents of its class
    move in one call, ``batches_together``)."""
    if not isinstance(agent, BatchedAgent):
        return act_each, False
    return type(agent).act_batch, bool(getattr(agent, "batches_together", False))


def compiled_form(agent: Agent, observation_mode: str, observation_encoding: str, observation_size: int):
    """``agent``'s description for a compiled mover reading that mode, encoding and size; None where it has none."""
    form = getattr(agent, "compiled_form", None)
    return None if form is None else form(observation_mode, observation_encoding, observation_size)


def move_note(agent: Agent) -> dict | None:
    """``agent``'s note about the move its last ``act`` returned, as JSON values (a copy through JSON, so that a note
    kept in memory equals the note read back from a file); None where it has none. A ValueError, naming the agent,
    where the note is not a JSON object."""
    note_of = getattr(agent, "move_note", None)
    note = None if note_of is None else note_of()
    if note is None:
        return None
    name = getattr(agent, "name", type(agent).__name__)
    if not isinstance(note, dict):
        raise ValueError(f"{name}'s move_note() returned {type(note).__name__}; it must return a dict (a JSON "
                         "object) or None")
    try:
        return json.loads(json.dumps(note, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}'s move_note() returned a dict that is not plain JSON: {error}") from None


class FunctionAgent:
    """A callable ``f(observation, action_mask) -> action`` as an agent: it reads the seat's observation in the
    view's mode (``view.observation``) and its legal actions."""

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], int]):
        self.function = function
        self.name = getattr(function, "__name__", type(function).__name__)

    def act(self, view: SeatView) -> int:
        """``function(view.observation, view.action_mask)``."""
        return int(self.function(view.observation, view.action_mask))


def as_agent(opponent) -> Agent:
    """``opponent`` as an agent: itself where it has ``act``, a ``FunctionAgent`` where it is a callable
    ``f(observation, action_mask)``; a ValueError otherwise."""
    if isinstance(opponent, Agent):
        return opponent
    if callable(opponent):
        return FunctionAgent(opponent)
    raise ValueError(f"{opponent!r} is not an agent: give an object with act(view) -> action, or a callable "
                     "f(observation, action_mask) -> action (docs/agent_protocol.md)")
