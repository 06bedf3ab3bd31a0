"""A Gymnasium ``VectorEnv`` of Packet Row: B games in one VectorGame, one learner seat each.

Observations are the learner's vectors (the AEC env's, ``observation_mode`` and ``observation_encoding``), actions one id per game,
rewards the learner's own final reward (``reward_mode``) on the step his game ends, 0 before. Opponents are
batched (``learner.LearnerGames``; default: uniformly random legal moves). Autoreset mode SAME_STEP: a game
that ends is re-dealt within the same step; ``infos["final_obs"]`` holds its last learner observation
(``infos["_final_obs"]`` says which rows). The legal actions are ``infos["action_mask"]`` and
``action_masks()``.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from .. import actions
from ..cards import resolve
from ..compact_observation import encoder_for
from .learner import LearnerGames


class PacketRowVectorEnv(VectorEnv):
    """``num_envs`` games of Packet Row for one learner seat each, stepped together."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 16, num_players=4, observation_mode: str = "tracked",
                 reward_mode: str = "rank", opponents=None, seed=None, cards=None,
                 observation_encoding: str = "onehot"):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self._args = dict(num_players=num_players, opponents=opponents, observation_mode=observation_mode,
                          reward_mode=reward_mode, cards=cards, observation_encoding=observation_encoding)
        self.cards = resolve(cards)
        enc = encoder_for(observation_encoding, self.cards)
        size = enc.size_of(observation_mode)
        self.single_observation_space = spaces.Box(0.0, enc.high, (size,), np.float32)
        self.single_action_space = spaces.Discrete(actions.NUM_ACTIONS)
        self.observation_space = spaces.Box(0.0, enc.high, (self.num_envs, size), np.float32)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, actions.NUM_ACTIONS))
        self.games = LearnerGames(self.num_envs, seed=seed, **self._args)

    def reset(self, *, seed=None, options=None):
        """Re-deal every game (``seed`` re-seeds the deals, seats and default opponents); (observations, infos)."""
        if seed is not None:
            self.games = LearnerGames(self.num_envs, seed=seed, **self._args)
        observations = self.games.reset()
        return observations, {"action_mask": self.games.action_masks()}

    def step(self, actions_):
        """One learner action per game; (observations, rewards, terminations, truncations, infos)."""
        acts = np.asarray(actions_)
        observations, rewards, dones, ended = self.games.step(acts)
        infos = {"action_mask": self.games.action_masks()}
        if ended is not None:
            final_obs = np.empty(self.num_envs, dtype=object)
            for k, i in enumerate(ended.rows.tolist()):
                final_obs[i] = ended.observations[k]
            infos["final_obs"] = final_obs
            infos["_final_obs"] = dones.copy()
            infos["final_info"] = {"learner_seat": _rows(ended.seats, dones),
                                   "num_players": _rows(ended.num_players, dones),
                                   "_learner_seat": dones.copy(), "_num_players": dones.copy()}
            infos["_final_info"] = dones.copy()
        return observations, rewards, dones, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, NUM_ACTIONS]: each learner's legal actions (sb3-contrib's MaskablePPO asks this)."""
        return self.games.action_masks()


def _rows(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """A per-env array with ``values`` at the rows of ``where`` and 0 elsewhere."""
    out = np.zeros(len(where), dtype=np.int64)
    out[where] = values
    return out
