"""Packet Row as an RLlib multi-agent environment, and the action-masked PPO module that plays it (and the batched
``rllib_vector_env.LearnerVectorEnv``, which self-play trains on).

In the multi-agent env every seat is an agent (``player_0`` .. ``player_{n-1}``). Each step only the player
to act gets an observation, a dict ``{"observations": float32[D], "action_mask": float32[A]}`` as RLlib's
action-masking modules expect; the game's final rewards go to every seat at the end, with a last observation
each and the final scores in its info. Rewards are zero until then (the acting agent gets its 0 each step, as
RLlib requires). Needs the ``[ray]`` extra.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from packetrow_env import actions
from packetrow_env.engine import Game, IllegalActionError
from packetrow_env.env import REWARD_MODES, check_option, final_rewards
from packetrow_env.observation import MODES, encoder

from .rllib_vector_env import masked_observation_space


def agent_name(seat: int) -> str:
    """The RLlib agent id of a seat."""
    return f"player_{seat}"


class PacketRowMultiAgentEnv(MultiAgentEnv):
    """Packet Row for RLlib: every seat an agent, only the player to act observed, final rewards to all.

    ``config``: ``num_players`` (2-5, default 2), ``observation_mode`` (default tracked),
    ``reward_mode`` (default rank), ``seed`` (deals are drawn from it; None: fresh entropy).
    """

    def __init__(self, config: dict | None = None):
        super().__init__()
        config = dict(config or {})
        unknown = set(config) - {"num_players", "observation_mode", "reward_mode", "seed"}
        if unknown:
            raise ValueError(f"unknown env config keys {sorted(unknown)}; allowed: num_players, observation_mode, "
                             "reward_mode, seed")
        num_players = config.get("num_players", 2)
        if isinstance(num_players, bool) or num_players not in range(2, 6):
            raise ValueError(f"num_players must be one of 2, 3, 4, 5, got {num_players!r}")
        self.num_players = int(num_players)
        self.observation_mode = config.get("observation_mode", "tracked")
        self.reward_mode = config.get("reward_mode", "rank")
        check_option("observation_mode", self.observation_mode, MODES)
        check_option("reward_mode", self.reward_mode, REWARD_MODES)
        self._seeds = np.random.default_rng(config.get("seed"))
        self.game: Game | None = None
        self._encoder = encoder()
        self.agents = self.possible_agents = [agent_name(p) for p in range(self.num_players)]
        space = observation_space(self._encoder)
        self.observation_spaces = {agent: space for agent in self.possible_agents}
        self.action_spaces = {agent: gym.spaces.Discrete(actions.NUM_ACTIONS) for agent in self.possible_agents}

    def _observe(self, seat: int) -> dict:
        mask = self.game.legal_action_mask() if seat == self.game.current_player \
            else np.zeros(actions.NUM_ACTIONS, dtype=bool)
        return {"observations": self._encoder.encode(self.game, seat, self.observation_mode),
                "action_mask": mask.astype(np.float32)}

    def reset(self, *, seed=None, options=None):
        """Deal a new game; returns the first player's observation."""
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
        self.game = Game.new(self.num_players, seed=int(self._seeds.integers(2**63)))
        seat = self.game.current_player
        return {agent_name(seat): self._observe(seat)}, {}

    def step(self, action_dict: dict):
        """Apply the acting player's action; the next player's observation, or everyone's at the end."""
        seat = self.game.current_player
        agent = agent_name(seat)
        if set(action_dict) != {agent}:
            raise ValueError(f"expected an action for {agent} (the player to act) only, got {sorted(action_dict)}")
        action = int(action_dict[agent])
        if not (0 <= action < actions.NUM_ACTIONS and self.game.legal_action_mask()[action]):
            raise IllegalActionError(f"{agent} chose the illegal action {action}; legal: {self.game.legal_actions()} "
                                     "(is the policy masking actions? use MaskedPPOTorchRLModule)")
        self.game.step(action)
        if self.game.is_over:
            scores = self.game.scores()
            rewards = final_rewards(scores, self.reward_mode)
            everyone = {agent_name(p): self._observe(p) for p in range(self.num_players)}
            # the scores, not the rewards, say who won: equal VP margins can hide a win on cash (R-SCORE-4)
            return (everyone, {agent_name(p): float(r) for p, r in enumerate(rewards)},
                    {**{a: True for a in everyone}, "__all__": True}, {"__all__": False},
                    {a: {"scores": scores} for a in everyone})
        # RLlib wants a reward for every agent that acted; it is 0 until the end
        rewards = {agent: 0.0}
        seat = self.game.current_player
        return {agent_name(seat): self._observe(seat)}, rewards, {"__all__": False}, {"__all__": False}, {}


def observation_space(enc=None) -> gym.spaces.Dict:
    """The observation space of every seat: the observation vector and the action mask."""
    enc = enc or encoder()
    return masked_observation_space(enc.size, enc.high)


def _masked(logits, mask):
    # log(0) = -inf would give NaN gradients through softmax; a very negative floor gives probability 0
    return logits + torch.clamp(torch.log(mask), min=torch.finfo(logits.dtype).min)


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module reading ``{"observations", "action_mask"}``: illegal actions get probability 0."""

    def __init__(self, *args, observation_space=None, **kwargs):
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space) != {"observations",
                                                                                             "action_mask"}:
            raise ValueError("MaskedPPOTorchRLModule needs a Dict observation space with keys 'observations' and "
                             f"'action_mask', got {observation_space}")
        self._dict_space = observation_space
        super().__init__(*args, observation_space=observation_space["observations"], **kwargs)

    def setup(self):
        super().setup()  # builds the networks on the inner vector space
        self.observation_space = self._dict_space

    @staticmethod
    def _split(batch):
        inner = dict(batch)
        inner[Columns.OBS] = batch[Columns.OBS]["observations"]
        return inner, batch[Columns.OBS]["action_mask"]

    def _forward(self, batch, **kwargs):
        inner, mask = self._split(batch)
        out = super()._forward(inner, **kwargs)
        out[Columns.ACTION_DIST_INPUTS] = _masked(out[Columns.ACTION_DIST_INPUTS], mask)
        return out

    def _forward_train(self, batch, **kwargs):
        inner, mask = self._split(batch)
        out = super()._forward_train(inner, **kwargs)
        out[Columns.ACTION_DIST_INPUTS] = _masked(out[Columns.ACTION_DIST_INPUTS], mask)
        return out

    def compute_values(self, batch, embeddings=None):
        if isinstance(batch[Columns.OBS], dict):
            batch, _ = self._split(batch)
        return super().compute_values(batch, embeddings)
