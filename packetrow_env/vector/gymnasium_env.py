"""A Gymnasium ``VectorEnv`` of Packet Row: B games in one VectorGame, one learner seat each.

Observations are the learner's vectors (the AEC env's, ``observation_mode`` and ``observation_encoding``), actions one
id per game, rewards the learner's own final reward (``reward_mode``) on the step his game ends, 0 before. The other
seats are moved, batched, by ``opponents`` (``learner.LearnerGames``; docs/vector.md "The opponents"; default:
uniformly random legal moves). The legal actions are ``infos["action_mask"]`` and ``action_masks()``.

Autoreset (``autoreset_mode``, ``metadata["autoreset_mode"]``):

- ``NEXT_STEP`` (the default, Gymnasium's): the step a game ends returns the learner's view of the finished game, his
  reward, ``terminated`` True and an all-False mask (a finished game has no legal action), with ``learner_seat`` and
  ``num_players`` of that game in ``infos`` (``_learner_seat``, ``_num_players`` say which rows); the next step
  ignores that row's action and returns the first view of a new game, reward 0, not terminated.
- ``SAME_STEP``: a game that ends is re-dealt within the same step, whose row shows the new game;
  ``infos["final_obs"]`` holds the finished game's last learner view and ``infos["final_info"]`` its ``learner_seat``
  and ``num_players`` (``infos["_final_obs"]``, ``infos["_final_info"]`` say which rows).

Games never truncate. Seeds: ``seed`` (or ``reset(seed=...)``) draws the deals, the learners' seats and the opponents'
random moves, so the same seed replays the same games.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .. import actions
from ..cards import resolve
from ..compact_observation import encoder_for
from .learner import Ended, LearnerGames

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


def single_spaces(observation_mode: str = "tracked", observation_encoding: str = "onehot",
                  cards=None) -> tuple[spaces.Box, spaces.Discrete]:
    """One game's (observation space, action space), as a PacketRowVectorEnv's ``single_*_space``, without dealing
    a game."""
    enc = encoder_for(observation_encoding, resolve(cards))
    return spaces.Box(0.0, enc.high, (enc.size_of(observation_mode),), np.float32), spaces.Discrete(actions.NUM_ACTIONS)


class PacketRowVectorEnv(VectorEnv):
    """``num_envs`` games of Packet Row for one learner seat each, stepped together (see the module docstring).

    ``opponents``: None (uniformly random legal moves), an agent of the protocol or a callable
    ``f(observation, action_mask)`` for every opponent seat, a list of them (one per opponent seat, clockwise from the
    learner), or an ``opponents.OpponentTable``. ``autoreset_mode``: ``AutoresetMode.NEXT_STEP`` (default) or
    ``SAME_STEP``, or their values ``"NextStep"``, ``"SameStep"``.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 16, num_players=4, observation_mode: str = "tracked",
                 reward_mode: str = "rank", opponents=None, seed=None, cards=None,
                 observation_encoding: str = "onehot", autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.autoreset_mode = _check_autoreset_mode(autoreset_mode)
        # per instance: Gymnasium's vector wrappers read the mode here
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.num_envs = int(num_envs)
        self._args = dict(num_players=num_players, opponents=opponents, observation_mode=observation_mode,
                          reward_mode=reward_mode, cards=cards, observation_encoding=observation_encoding)
        self.cards = resolve(cards)
        self.single_observation_space, self.single_action_space = single_spaces(observation_mode,
                                                                                observation_encoding, self.cards)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, actions.NUM_ACTIONS))
        self.games = LearnerGames(self.num_envs, seed=seed, **self._args)
        self._finished = np.zeros(self.num_envs, bool)  # NEXT_STEP: rows showing a finished game

    def reset(self, *, seed=None, options=None):
        """Re-deal every game (``seed`` re-seeds the deals, seats and default opponents); (observations, infos)."""
        if seed is not None:
            self.games = LearnerGames(self.num_envs, seed=seed, **self._args)
        observations = self.games.reset()
        self._finished[:] = False
        return observations, {"action_mask": self.games.action_masks()}

    def step(self, actions_):
        """One learner action per game; (observations, rewards, terminations, truncations, infos)."""
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            return self._step_same(np.asarray(actions_))
        return self._step_next(np.asarray(actions_))

    def _step_next(self, acts: np.ndarray):
        """NEXT_STEP: the rows that showed a finished game already hold their new game (``LearnerGames`` deals at
        once), so they skip this step's action and show it now."""
        moving = ~self._finished
        observations, rewards, dones, ended = self.games.step(acts, where=moving)
        masks = self.games.action_masks()
        infos = {"action_mask": masks}
        if ended is not None:
            observations[ended.rows] = ended.observations
            masks[ended.rows] = False
            infos.update(_per_row(ended, dones))
        self._finished = dones
        return observations, rewards, dones, np.zeros(self.num_envs, bool), infos

    def _step_same(self, acts: np.ndarray):
        """SAME_STEP: a finished game's row shows its new game; the finished one is in ``final_obs``."""
        observations, rewards, dones, ended = self.games.step(acts)
        infos = {"action_mask": self.games.action_masks()}
        if ended is not None:
            final_obs = np.empty(self.num_envs, dtype=object)
            for k, i in enumerate(ended.rows.tolist()):
                final_obs[i] = ended.observations[k]
            infos["final_obs"] = final_obs
            infos["_final_obs"] = dones.copy()
            infos["final_info"] = _per_row(ended, dones)
            infos["_final_info"] = dones.copy()
        return observations, rewards, dones, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, NUM_ACTIONS]: each learner's legal actions (sb3-contrib's MaskablePPO asks this); under
        NEXT_STEP all False in a row that shows a finished game."""
        masks = self.games.action_masks()
        masks[self._finished] = False
        return masks


def _check_autoreset_mode(mode) -> AutoresetMode:
    """``mode`` as an ``AutoresetMode`` this env plays, or a ValueError naming the ones it does."""
    try:
        checked = AutoresetMode(mode)
    except ValueError:
        checked = None
    if checked not in AUTORESET_MODES:
        allowed = ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in AUTORESET_MODES)
        raise ValueError(f"autoreset_mode must be one of {allowed}, got {mode!r}")
    return checked


def _per_row(ended: Ended, dones: np.ndarray) -> dict:
    """The finished games' ``learner_seat`` and ``num_players`` as per-env arrays (0 elsewhere), each with its mask."""
    return {"learner_seat": _rows(ended.seats, dones), "num_players": _rows(ended.num_players, dones),
            "_learner_seat": dones.copy(), "_num_players": dones.copy()}


def _rows(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """A per-env array with ``values`` at the rows of ``where`` and 0 elsewhere."""
    out = np.zeros(len(where), dtype=np.int64)
    out[where] = values
    return out
