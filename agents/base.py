"""The Agent every shipped player extends: the env's agent protocol (``packetrow_env.agent_protocol``) with its
defaults written out.

An agent moves one seat of one game at a time (``act``). Where many games wait at once (self-play on the batched
engine, ``packetrow_env.vector.opponents.OpponentTable``), the table asks ``type(agent).act_batch(agents, turns)``
for the turns of all its agents of one batch group: a class with a faster way (one compiled call, one draw)
overrides it; the default plays each turn with ``act``. ``compiled_form`` describes the agent to the compiled
opponents of training (``opponents_batch``); the default has none. ``move_note`` is a note about the move ``act``
returned last, which tournaments store in the game's record; the default has none.

A batched or compiled form plays the rules of the class that declares it. A subclass may change those rules (its
``act``, a weight, a helper), so it does not inherit them: it moves through its own ``act`` until it declares its own
``act_batch`` or ``compiled_form`` (``Agent.__init_subclass__``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from packetrow_env import agent_protocol
from packetrow_env.agent_protocol import Turns, act_each
from packetrow_env.seat_view import SeatView

__all__ = ["Agent", "Turns", "act_each", "batch_method"]


@runtime_checkable
class Agent(agent_protocol.Agent, Protocol):
    """Chooses a legal action for the seat to act, from that seat's view alone.

    ``act(view)`` receives a ``packetrow_env.seat_view.SeatView``: the seat's legal actions
    (``view.action_mask``), its observation (``view.observation``, encoded on first use), the public
    state, its own hand and what it knows of the others (R-INFO), and determinisations for search
    (``view.sample_determinization(rng)``). The Game itself is not part of it, so an agent cannot read a
    hidden card. ``reset(seed)`` reseeds an agent for a new game. ``act_batch`` (a class method) moves many
    games at once and ``compiled_form`` describes it to a compiled mover; see the module docstring.
    """

    name: str
    # True: all agents of the class move in one act_batch call (policies stacked into one forward), before the
    # agents that move one by one, so that the batch's generator is drawn in a fixed order
    batches_together: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = vars(cls)
        if "act_batch" not in own:  # the parent's batched form plays the parent's rules
            cls.act_batch = Agent.__dict__["act_batch"]
            cls.batches_together = own.get("batches_together", False)
        if "compiled_form" not in own:
            cls.compiled_form = Agent.compiled_form

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

    def compiled_form(self, observation_mode: str, observation_encoding: str, observation_size: int):
        """What a compiled mover plays for this agent (``opponents_batch.CompiledOpponent``); None: it has none."""
        return None

    def move_note(self) -> dict | None:
        """A note about the move ``act`` returned last (JSON values), stored with it in the game's record; None:
        none."""
        return None


def batch_method(agent_class: type):
    """Deprecated (to be removed in 0.5): how agents of ``agent_class`` move a batch; ask
    ``packetrow_env.agent_protocol.batched_form(agent)`` instead."""
    warnings.warn("packetrow_agents.base.batch_method is deprecated: use packetrow_env.agent_protocol.batched_form",
                  DeprecationWarning, stacklevel=2)
    return getattr(agent_class, "act_batch", act_each)
