"""The learner seats of a batch of games as the Gymnasium vector env RLlib's single-agent env runners step.

One ``VectorGame`` of ``num_envs`` games, one learner seat in each (``packetrow_env.vector.learner.LearnerGames``);
every other seat is drawn per game from an ``OpponentPool`` (snapshots of the learner, the compiled heuristic,
random) and moved batched by ``PoolOpponents``, as in the SB3 stack. Each observation is RLlib's action-masking
dict ``{"observations": float32[D], "action_mask": float32[A]}`` (``rllib_env.MaskedPPOTorchRLModule`` reads it).

Autoreset is NEXT_STEP, the mode RLlib's ``SingleAgentEnvRunner`` expects: the step a game ends returns the
learner's view of the finished game (mask all zeros) with his reward and ``terminated``; the next step ignores that
row's action and returns the first view of a new game. The info of an ending step carries ``win_share``: the
learner's share of the win (1/k of a win shared by k, R-SCORE-4). Needs no Ray: the env is plain Gymnasium.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from packetrow_agents.policy import NumpyPolicy
from packetrow_env import actions
from packetrow_env.compact_observation import encoder_for
from packetrow_env.scoring import final_rewards_batch
from packetrow_env.vector.learner import LearnerGames

from .pool import OpponentPool
from .vec_selfplay import PoolOpponents


def masked_observation_space(size: int, high: float) -> spaces.Dict:
    """One seat's observation space: the observation vector and the action mask (RLlib's masking keys)."""
    return spaces.Dict({"observations": spaces.Box(0.0, high, (size,), np.float32),
                        "action_mask": spaces.Box(0.0, 1.0, (actions.NUM_ACTIONS,), np.float32)})


class LearnerVectorEnv(VectorEnv):
    """``num_envs`` games with one learner seat each, opponents from ``pool`` moved batched; NEXT_STEP autoreset.

    ``seed`` (or ``reset(seed=...)``, as RLlib seeds each runner) draws the deals, the learner's seats and the
    opponents; ``add_snapshot`` puts a copy of the learner into the pool (RLlib's runners receive it as weights).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int, pool: OpponentPool, num_players=2, observation_mode: str = "tracked",
                 reward_mode: str = "rank", seed=None):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.pool = pool
        self._args = dict(num_players=num_players, observation_mode=observation_mode, reward_mode=reward_mode)
        enc = encoder_for("onehot")
        self.single_observation_space = masked_observation_space(enc.size_of(observation_mode), enc.high)
        self.single_action_space = spaces.Discrete(actions.NUM_ACTIONS)
        self.observation_space = spaces.Dict({
            key: spaces.Box(space.low[0], space.high[0], (self.num_envs, *space.shape), np.float32)
            for key, space in self.single_observation_space.items()})
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, actions.NUM_ACTIONS))
        self._seed = seed
        self.games: LearnerGames | None = None
        self._ended = np.zeros(self.num_envs, bool)  # rows showing a finished game: the next step deals anew

    def add_snapshot(self, policy: NumpyPolicy, version: int) -> None:
        """Add a frozen copy of the learner (``version``: its number in the league) to the opponent pool."""
        self.pool.add(policy, version)

    def reset(self, *, seed=None, options=None):
        """Deal every game afresh (``seed`` re-seeds deals, seats and opponents); (observations, infos)."""
        if seed is not None:
            self._seed = seed
        if self.games is None or seed is not None:
            # the opponents' draws follow the games' seats, so both start from the same seed
            opponents = PoolOpponents(self.pool, self._args["observation_mode"], self._seed)
            self.games = LearnerGames(self.num_envs, opponents=opponents, seed=self._seed, **self._args)
        self.games.reset()
        self._ended[:] = False
        return self._observe(), {}

    def step(self, actions_):
        """One learner action per game; (observations, rewards, terminations, truncations, infos)."""
        moving = ~self._ended
        _, rewards, dones, ended = self.games.step(np.asarray(actions_, np.int64), where=moving)
        observations = self._observe()
        infos = {}
        if ended is not None:
            observations["observations"][ended.rows] = ended.observations
            observations["action_mask"][ended.rows] = 0
            share = np.zeros(self.num_envs)
            share[ended.rows] = learner_win_shares(ended)
            infos = {"win_share": share, "_win_share": dones.copy()}
        self._ended = dones
        return observations, rewards, dones, np.zeros(self.num_envs, bool), infos

    def _observe(self) -> dict:
        return {"observations": self.games.observe(),
                "action_mask": self.games.action_masks().astype(np.float32)}


def learner_win_shares(ended) -> np.ndarray:
    """The learners' shares of the win in the games that ended (1/k of a win shared by k)."""
    winners = final_rewards_batch(ended.vp, ended.cash, ended.num_players, "win") > 0
    return winners[np.arange(len(ended.rows)), ended.seats] / winners.sum(axis=1)
