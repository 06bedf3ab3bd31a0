"""The uniform random baseline."""

from __future__ import annotations

import numpy as np

from .base import Agent


class RandomAgent(Agent):
    """Uniform over the legal actions, seeded."""

    def __init__(self, seed: int = 0):
        self.name = "random"
        self.reset(seed)

    def reset(self, seed: int) -> None:
        """Reseed for a new game."""
        self._rng = np.random.default_rng(seed)

    def act(self, view) -> int:
        """A uniformly random legal action of ``view`` (a SeatView)."""
        legal = np.flatnonzero(view.action_mask)
        if len(legal) == 0:
            raise ValueError("no legal action: the mask is all zeros (is the game over, or is it another seat's turn?)")
        return int(legal[self._rng.integers(len(legal))])

    @classmethod
    def act_batch(cls, agents, turns) -> np.ndarray:
        """A uniformly random legal action per turn, in one draw from ``turns.rng``."""
        from packetrow_env.vector.learner import random_legal  # the batched engine loads only for batches

        return random_legal(turns.masks, turns.rng)
