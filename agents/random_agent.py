"""The uniform random baseline."""

from __future__ import annotations

import numpy as np

from .base import Agent
from .compiled_opponent import RANDOM, CompiledOpponent


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

    def action_probabilities(self, view) -> np.ndarray:
        """Its play as probabilities (for beliefs, ``packetrow_env.belief``): uniform over the legal actions."""
        mask = view.action_mask
        return np.where(mask, 1.0 / max(int(mask.sum()), 1), 0.0)

    def action_inputs(self, games, rows, mode: str) -> np.ndarray:
        """What ``batch_action_probabilities`` reads of the players to act in ``rows`` of a VectorGame: nothing."""
        return np.zeros((len(rows), 0), np.float32)

    @staticmethod
    def batch_action_probabilities(inputs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64[k, A]: ``action_probabilities`` of k decisions, from their masks alone."""
        return masks / np.maximum(masks.sum(axis=1, keepdims=True), 1)

    @classmethod
    def act_batch(cls, agents, turns) -> np.ndarray:
        """A uniformly random legal action per turn, in one draw from ``turns.rng``."""
        from packetrow_env.vector.learner import random_legal  # the batched engine loads only for batches

        return random_legal(turns.masks, turns.rng)

    def compiled_form(self, observation_mode: str, observation_encoding: str, observation_size: int):
        """A uniformly random legal action, whatever the batch reads."""
        return CompiledOpponent(RANDOM)
