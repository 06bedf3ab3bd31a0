"""A features extractor for SB3 policies reading the compact observation (``packetrow_env.compact_observation``).

The compact vector holds each supply slot's card type as one index float (0 = empty, else type + 1). The
extractor looks every index up in one small embedding shared by all slots and concatenates the embeddings
with the other floats, which it passes through unchanged:

    from packetrow_train.compact_extractor import compact_policy_kwargs
    model = MaskablePPO("MlpPolicy", env, policy_kwargs=compact_policy_kwargs(net_arch=[128, 128]))

With ``hidden`` > 0 it also computes the first hidden layer (shared by the policy and the value network,
or one each with SB3's ``share_features_extractor=False``: the training config's ``ppo.share_extractor``) as
two linear maps (of the plain floats and of the embeddings) added: the same function as a linear layer on
the concatenation, but the gradient is never taken with respect to the plain floats (a trainable embedding
feeding SB3's own first layers makes torch compute that input gradient over all ~870 features, twice: its cost is
in docs/benchmarks.md, "Behind the training code's choices"). On the CPU that layer is computed from what an
observation holds, its non-zero plain floats and its slots' card types (train/sparse_input.py): the same function to
float32 rounding, in about a third of the dense products' time.

    compact_policy_kwargs(hidden=128, net_arch=[128])   # a 128-128 network whose first layer is shared
    compact_policy_kwargs(hidden=128, net_arch=[128], share_features_extractor=False)  # one first layer each
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from packetrow_env.compact_observation import encoder

from .sparse_input import SparseInputLinear, slot_sum, slot_sum_applies, slot_tables

EMBED_DIM = 8


class CompactExtractor(BaseFeaturesExtractor):
    """Embeds the card-type index floats of a compact observation and concatenates the other floats."""

    def __init__(self, observation_space: gym.spaces.Box, index_slices: tuple[tuple[int, int], ...] = ((0, 24),),
                 num_types: int = 68, embed_dim: int = EMBED_DIM, hidden: int = 0,
                 activation_fn: type[nn.Module] = nn.Tanh):
        size = int(np.prod(observation_space.shape))
        if len(observation_space.shape) != 1:
            raise ValueError(f"CompactExtractor reads flat observations, got shape {observation_space.shape}")
        is_index = np.zeros(size, dtype=bool)
        for start, stop in index_slices:
            if not 0 <= start < stop <= size:
                raise ValueError(f"index slice ({start}, {stop}) is outside the observation's {size} floats")
            is_index[start:stop] = True
        if num_types < 1 or embed_dim < 1 or hidden < 0:
            raise ValueError(f"num_types and embed_dim must be positive and hidden >= 0, got {num_types}, {embed_dim} "
                             f"and {hidden}")
        indices, rest = np.flatnonzero(is_index), np.flatnonzero(~is_index)
        super().__init__(observation_space, features_dim=hidden or len(rest) + len(indices) * embed_dim)
        self.num_types = num_types
        self.embedding = nn.Embedding(num_types + 1, embed_dim)  # row 0: an empty slot
        self.hidden = hidden
        if hidden:
            self.rest_layer = SparseInputLinear(len(rest), hidden)  # the plain floats are nine in ten zeros
            self.embedded_layer = nn.Linear(len(indices) * embed_dim, hidden, bias=False)
            self.activation = activation_fn()
        # One contiguous block at each end needs no gather (the compact layout puts the indices first).
        self._head = int(indices.size) if indices.size and indices[-1] == indices.size - 1 else None
        self.register_buffer("_indices", torch.as_tensor(indices, dtype=torch.long), persistent=False)
        self.register_buffer("_rest", torch.as_tensor(rest, dtype=torch.long), persistent=False)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """(batch, size) observations -> (batch, features_dim) features."""
        if self._head is not None:
            index, rest = observations[:, :self._head], observations[:, self._head:]
        else:
            index, rest = observations[:, self._indices], observations[:, self._rest]
        if self.hidden and slot_sum_applies(index):  # the embedded part as per-slot tables (sparse_input.py)
            tables = slot_tables(self.embedding.weight, self.embedded_layer.weight)
            return self.activation(self.rest_layer(rest) + slot_sum(index, tables))
        # Index floats are small whole numbers; round before the cast so that no float error picks a neighbour.
        index = torch.round(index).long().clamp_(0, self.num_types)
        # index_select, not the embedding's own forward: its backward (index_add) measured 4x faster on the CPU.
        embedded = self.embedding.weight.index_select(0, index.flatten()).view(len(index), -1)
        if self.hidden:
            return self.activation(self.rest_layer(rest) + self.embedded_layer(embedded))
        return torch.cat([embedded, rest], dim=1)

    def index_ranges(self) -> np.ndarray:
        """int64[k, 2]: the index floats it embeds as ascending (start, stop) ranges, adjacent ones merged: the
        ``index_slices`` of the numpy policy exported from it."""
        indices = self._indices.cpu().numpy()
        breaks = np.flatnonzero(np.diff(indices) != 1) + 1
        return np.stack([indices[np.r_[0, breaks]], indices[np.r_[breaks - 1, len(indices) - 1]] + 1], axis=1)

    def first_layer(self) -> tuple[np.ndarray, np.ndarray] | None:
        """With ``hidden``: the first layer as one (weight float32[features, hidden], bias) on the features of
        the ``hidden=0`` extractor (embeddings in order, then the plain floats), for exports; else None."""
        if not self.hidden:
            return None
        weight = torch.cat([self.embedded_layer.weight, self.rest_layer.weight], dim=1)
        return weight.detach().cpu().numpy().T.copy(), self.rest_layer.bias.detach().cpu().numpy().copy()


def extractor_kwargs(cards=None, embed_dim: int = EMBED_DIM, hidden: int = 0,
                     activation_fn: type[nn.Module] = nn.Tanh) -> dict:
    """``features_extractor_kwargs`` for a catalogue's compact observation (the default catalogue when None)."""
    compact = encoder(cards)
    return {"index_slices": tuple((s.start, s.stop) for s in compact.index_slices), "num_types": compact.num_types,
            "embed_dim": embed_dim, "hidden": hidden, "activation_fn": activation_fn}


def compact_policy_kwargs(cards=None, embed_dim: int = EMBED_DIM, hidden: int = 0, **policy_kwargs) -> dict:
    """SB3 ``policy_kwargs`` with the CompactExtractor (further policy kwargs, e.g. net_arch, passed through; its
    ``activation_fn`` is the extractor's too)."""
    activation = policy_kwargs.get("activation_fn", nn.Tanh)
    return dict(policy_kwargs, features_extractor_class=CompactExtractor,
                features_extractor_kwargs=extractor_kwargs(cards, embed_dim, hidden, activation))
