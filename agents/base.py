"""The Agent protocol shared by every player: baselines, search and learned policies."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Chooses a legal action for the seat to act.

    ``observation`` is that seat's observation vector, ``action_mask`` its legal actions, and ``game``
    the engine's Game for agents that search. An agent may use from ``game`` only what its seat may
    know: ``game.current_player``, public state, and ``game.sample_determinization(seat, rng)``;
    never hidden cards. Agents that ignore the observation set ``needs_observation = False`` so
    callers may skip encoding it. ``reset(seed)`` reseeds an agent for a new game.
    """

    name: str

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray, game=None) -> int:
        """A legal action id."""
        ...
