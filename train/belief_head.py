"""An auxiliary belief head: the policy also predicts its opponents' hidden starting contracts (``ppo.belief_head``).

``BeliefPolicy`` adds one linear layer on the policy network's last hidden layer: per opponent seat in the
learner's order (the next seat first), a softmax over the starting contracts. ``BeliefPPO`` is MaskablePPO whose
rollouts also store, per step, which contract each opponent held where it was hidden from the learner
(``SelfPlayVecEnv.starting_contract_labels``, from ``belief.hidden_locations``), and whose loss adds
``belief_head`` x the head's cross-entropy on them. The head is not part of the exported policy (.npz): it
only shapes the features the policy learns; ``BeliefPolicy.belief_probabilities`` reads it (docs/beliefs.md).
"""

from __future__ import annotations

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from torch import nn
from torch.nn import functional

from packetrow_env.state import MAX_PLAYERS

OPPONENTS = MAX_PLAYERS - 1  # the head's seats: every opponent a game can have, in the learner's order
NO_LABEL = -1  # an opponent seat without a hidden starting contract (empty, or the learner can locate it)


class _AddLossGradient(torch.autograd.Function):
    """The identity on ``latent``, whose backward also sends ``weight`` into ``loss``: the auxiliary loss joins
    MaskablePPO's own backward pass (``weight`` x loss added to its loss) without a copy of its ``train``."""

    @staticmethod
    def forward(ctx, latent, loss, weight):
        ctx.weight = weight
        return latent.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad, grad.new_tensor(ctx.weight), None


class BeliefPolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy with a linear belief head on the policy's last hidden layer."""

    def __init__(self, *args, belief_weight: float, belief_classes: int, **kwargs):
        self.belief_weight = float(belief_weight)
        self.belief_classes = int(belief_classes)
        self.belief_targets = None  # the labels of the next minibatch evaluated (set by BeliefRolloutBuffer)
        self.belief_losses: list[float] = []  # the head's loss per minibatch since the last update was logged
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        super()._build_mlp_extractor()
        # built here, before SB3 creates the optimizer over every parameter
        self.belief_head = nn.Linear(self.mlp_extractor.latent_dim_pi, OPPONENTS * self.belief_classes)

    def _get_constructor_parameters(self) -> dict:
        return dict(super()._get_constructor_parameters(), belief_weight=self.belief_weight,
                    belief_classes=self.belief_classes)

    def belief_logits(self, latent_pi: torch.Tensor) -> torch.Tensor:
        """(batch, OPPONENTS, belief_classes) logits from the policy's last hidden layer."""
        return self.belief_head(latent_pi).view(len(latent_pi), OPPONENTS, self.belief_classes)

    def belief_loss(self, latent_pi: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The head's mean cross-entropy over the labelled opponent seats (0 where the batch has none)."""
        logits = self.belief_logits(latent_pi).reshape(-1, self.belief_classes)
        flat = targets.reshape(-1).long()
        total = functional.cross_entropy(logits, flat, ignore_index=NO_LABEL, reduction="sum")
        return total / max(int((flat != NO_LABEL).sum()), 1)

    def _get_action_dist_from_latent(self, latent_pi: torch.Tensor):
        # MaskablePPO.train evaluates each minibatch once through here: its labels ride along
        if self.belief_targets is not None:
            targets, self.belief_targets = self.belief_targets, None
            loss = self.belief_loss(latent_pi, targets)
            self.belief_losses.append(float(loss.detach()))
            latent_pi = _AddLossGradient.apply(latent_pi, loss, self.belief_weight)
        return super()._get_action_dist_from_latent(latent_pi)

    def belief_probabilities(self, observations: np.ndarray) -> np.ndarray:
        """float64[batch, OPPONENTS, belief_classes]: the head's distribution over each opponent's starting contract
        (index in ``cards.start_contracts``), for observations in the policy's encoding."""
        with torch.no_grad():
            latent = self.policy_latent(self.obs_to_tensor(observations)[0])
            return torch.softmax(self.belief_logits(latent), dim=-1).double().cpu().numpy()

    def policy_latent(self, observations: torch.Tensor) -> torch.Tensor:
        """The policy network's last hidden layer, what the action logits and the belief head read."""
        features = self.extract_features(observations)
        return self.mlp_extractor.forward_actor(features if self.share_features_extractor else features[0])


class BeliefRolloutBuffer(MaskableRolloutBuffer):
    """MaskableRolloutBuffer that also keeps each step's belief labels and hands each minibatch's to the policy."""

    policy: BeliefPolicy | None = None  # set by BeliefPPO

    def reset(self) -> None:
        self.labels = np.full((self.buffer_size, self.n_envs, OPPONENTS), NO_LABEL, np.int64)
        super().reset()

    def get(self, batch_size=None):
        if not self.generator_ready:
            self.labels = self.swap_and_flatten(self.labels)
        yield from super().get(batch_size)

    def _get_samples(self, batch_inds, env=None):
        self.policy.belief_targets = torch.as_tensor(self.labels[batch_inds], device=self.device)
        return super()._get_samples(batch_inds, env)


class BeliefLabels(BaseCallback):
    """Stores, at each rollout step, the labels of the observation that step acted on (before the env stepped)."""

    def _on_rollout_start(self) -> None:
        self._labels = self.training_env.starting_contract_labels()

    def _on_step(self) -> bool:
        buffer = self.model.rollout_buffer
        buffer.labels[buffer.pos] = self._labels  # add() for this step comes after the callbacks, at pos
        self._labels = self.training_env.starting_contract_labels()
        return True


class BeliefPPO(MaskablePPO):
    """MaskablePPO training a BeliefPolicy's head beside the policy (its env: a ``SelfPlayVecEnv``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("rollout_buffer_class", BeliefRolloutBuffer)
        super().__init__(*args, **kwargs)
        self.belief_loss_history: list[float] = []  # the head's mean loss per update (a loaded model's: restored)

    def _setup_model(self) -> None:
        super()._setup_model()
        if not isinstance(self.policy, BeliefPolicy):
            raise ValueError(f"BeliefPPO trains a BeliefPolicy, got {type(self.policy).__name__}")
        self.rollout_buffer.policy = self.policy

    def learn(self, total_timesteps, callback=None, **kwargs):
        """MaskablePPO.learn with the labels' callback first."""
        others = [] if callback is None else list(callback) if isinstance(callback, list) else [callback]
        return super().learn(total_timesteps, callback=CallbackList([BeliefLabels(), *others]), **kwargs)

    def train(self) -> None:
        """One PPO update with the belief loss; logs the head's mean loss as train/belief_loss."""
        super().train()
        losses, self.policy.belief_losses = self.policy.belief_losses, []
        if losses:
            self.belief_loss_history.append(float(np.mean(losses)))
            self.logger.record("train/belief_loss", self.belief_loss_history[-1])
