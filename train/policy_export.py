"""MaskablePPO networks to and from the numpy policies that agents play (``NumpyPolicy``, saved as ``.npz``).

``export_policy`` copies a model's policy network into a ``NumpyPolicy`` (``.save`` writes the ``.npz`` that
``PolicyAgent`` loads), ``export_value`` its value network, and ``import_policy`` copies a ``NumpyPolicy`` back
into a model, the inverse of the export. The features extractor decides the policy's input stage: SB3's
``FlattenExtractor`` gives a onehot policy, the trainer's ``CompactExtractor`` a compact one (its embedding and
index floats become the numpy policy's).
"""

from __future__ import annotations

import numpy as np
import torch
from stable_baselines3.common.torch_layers import FlattenExtractor

from packetrow_agents.policy import ACTIVATIONS, ModelFormatError, NumpyPolicy, load_policy

from .compact_extractor import CompactExtractor


def export_policy(model, observation_mode: str | None = None, metadata: dict | None = None) -> NumpyPolicy:
    """A NumpyPolicy copy of a MaskablePPO model's (or MaskableActorCriticPolicy's) policy network.

    The features extractor may be SB3's FlattenExtractor (a onehot policy) or the trainer's CompactExtractor
    (a compact policy: its embedding and index floats become the NumpyPolicy's input stage). A network whose
    weights are not all finite is refused (ModelFormatError).
    """
    policy = getattr(model, "policy", model)
    return _export_network(model, getattr(policy, "pi_features_extractor", policy.features_extractor),
                           policy.mlp_extractor.policy_net, policy.action_net, observation_mode, metadata)


def export_value(model, observation_mode: str | None = None, metadata: dict | None = None) -> NumpyPolicy:
    """The value network of a MaskablePPO model as a one-output NumpyPolicy (metadata ``head: value``): its
    ``logits`` are the value of the seat to act; search reads it (``search:value=...``), agents refuse it."""
    policy = getattr(model, "policy", model)
    return _export_network(model, getattr(policy, "vf_features_extractor", policy.features_extractor),
                           policy.mlp_extractor.value_net, policy.value_net, observation_mode,
                           {**(metadata or {}), "head": "value"})


def _export_network(model, extractor, layers, head, observation_mode, metadata) -> NumpyPolicy:
    """A NumpyPolicy of one network of ``model``: its features extractor, hidden ``layers`` and output ``head``."""
    policy = getattr(model, "policy", model)
    meta = dict(getattr(model, "packetrow_meta", None) or {})
    if hasattr(model, "num_timesteps"):
        meta["num_timesteps"] = int(model.num_timesteps)
    meta.update(metadata or {})
    mode = observation_mode or meta.pop("observation_mode", "tracked")
    meta.pop("observation_mode", None)
    encoding = meta.pop("observation_encoding", None)  # the extractor decides; a contradicting claim is an error
    name = type(extractor).__name__
    compact = isinstance(extractor, CompactExtractor)
    if not compact and not isinstance(extractor, FlattenExtractor):
        raise ModelFormatError(f"cannot export a policy with a {name} features extractor; the numpy policy runs "
                               "FlattenExtractor (MlpPolicy) and CompactExtractor networks")
    # a compact policy's input stage: the extractor's embedding and the ranges of the index floats it embeds
    stage = {"embedding": extractor.embedding.weight.detach().cpu().numpy().copy(),
             "index_slices": extractor.index_ranges()} if compact else {}
    weights, biases, activations = [], [], set()
    first = extractor.first_layer() if compact else None
    if first is not None:  # the extractor's own first layer, on the features the numpy input stage computes
        weights.append(first[0])
        biases.append(first[1])
        activations.add(_activation_name(extractor.activation) or "other")
    for module in layers:
        if isinstance(module, torch.nn.Linear):
            weights.append(module.weight.detach().cpu().numpy().T.copy())
            biases.append(module.bias.detach().cpu().numpy().copy())
        elif _activation_name(module):
            activations.add(_activation_name(module))
        else:
            raise ModelFormatError(f"cannot export the layer {module!r}; the numpy policy supports Linear layers "
                                   f"with {' or '.join(ACTIVATIONS)} activations")
    if len(activations) > 1 or len(activations) != min(len(weights), 1):
        raise ModelFormatError(f"the policy network must use one activation after every layer, got {activations}")
    exported = NumpyPolicy(weights, biases, head.weight.detach().cpu().numpy().T.copy(),
                           head.bias.detach().cpu().numpy().copy(), activations.pop() if activations else "tanh",
                           mode, meta, **stage)
    bad = exported.non_finite()
    if bad:  # a diverged training's network: nothing plays it, and no file should hold it
        raise ModelFormatError(f"cannot export a network whose weights are not finite (NaN or infinite in "
                               f"{', '.join(bad)}): its training diverged")
    if encoding not in (None, exported.observation_encoding):
        raise ModelFormatError(f"the metadata says observation_encoding {encoding!r} but the network's {name} reads "
                               f"the {exported.observation_encoding} observation")
    size = int(np.prod(policy.observation_space.shape))
    if exported.observation_size != size:
        raise ModelFormatError(f"the exported network reads {exported.observation_size} floats but the model's "
                               f"observation space has {size}")
    return exported


def _activation_name(module) -> str | None:
    """"tanh" or "relu" for those activation modules (subclasses included, e.g. the trainer's FastTanh), else None."""
    return "tanh" if isinstance(module, torch.nn.Tanh) else "relu" if isinstance(module, torch.nn.ReLU) else None


def load_start(start: str) -> NumpyPolicy:
    """The policy a run starts from (``--start`` of ``packetrow train`` and ``packetrow exploit``): a shipped
    policy's name (``ppo``, ``packetrow_agents.shipped``) or the path of a policy export; raises ModelNotFoundError or
    ModelFormatError."""
    return load_policy(start)


def network_of(policy: NumpyPolicy) -> dict:
    """The config keys of a learner whose network ``import_policy`` can fill with ``policy``: its observation
    (``env.observation_mode``, ``env.observation_encoding``) and network (``ppo.net_arch``, ``ppo.extractor_layer``,
    ``ppo.activation``), as {"section.key": value}."""
    widths = [w.shape[1] for w in policy.weights]
    # a compact policy's first layer is the extractor's (the same function as a first net_arch layer, cheaper)
    extractor_layer = widths.pop(0) if policy.embedding is not None and widths else 0
    return {"env.observation_mode": policy.observation_mode, "env.observation_encoding": policy.observation_encoding,
            "ppo.net_arch": widths, "ppo.extractor_layer": extractor_layer, "ppo.activation": policy.activation}


def import_policy(model, policy: NumpyPolicy, value_features: bool = True) -> None:
    """Copy a NumpyPolicy's weights into a MaskablePPO model's policy network (the inverse of ``export_policy``).

    With ``value_features`` the value network's extractor and hidden layers start as the policy's too (where
    they are separate and shaped alike), so that a warm-started learner's first advantages come from useful
    features; the value head itself keeps its fresh initialisation. The networks must match in shape.
    """
    target = getattr(model, "policy", model)
    extractor = getattr(target, "pi_features_extractor", target.features_extractor)
    linears = [m for m in target.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    compact = isinstance(extractor, CompactExtractor)
    first = extractor.first_layer() if compact else None
    have = ([] if first is None else [first[0].shape]) + [tuple(m.weight.shape[::-1]) for m in linears]
    want = [w.shape for w in policy.weights]
    shapes_match = (have == want and tuple(target.action_net.weight.shape[::-1]) == policy.action_weight.shape
                    and compact == (policy.embedding is not None)
                    and (not compact or tuple(extractor.embedding.weight.shape) == policy.embedding.shape))
    if not shapes_match:
        raise ModelFormatError(f"the policy's layers {want} ({policy.observation_encoding}) do not match the model's "
                               f"{have} ({'compact' if compact else 'onehot'}); give the learner the policy's network")

    def put(module: torch.nn.Linear, weight: np.ndarray, bias: np.ndarray | None) -> None:
        module.weight.data.copy_(torch.as_tensor(weight.T))
        if bias is not None:
            module.bias.data.copy_(torch.as_tensor(bias))

    def fill(extractor_to, linears_to) -> None:
        weights, biases = list(policy.weights), list(policy.biases)
        if compact:
            extractor_to.embedding.weight.data.copy_(torch.as_tensor(policy.embedding))
            if first is not None:
                split = extractor_to.embedded_layer.weight.shape[1]
                weight, bias = weights.pop(0), biases.pop(0)
                put(extractor_to.embedded_layer, weight[:split], None)
                put(extractor_to.rest_layer, weight[split:], bias)
        for module, weight, bias in zip(linears_to, weights, biases):
            put(module, weight, bias)

    with torch.no_grad():
        fill(extractor, linears)
        put(target.action_net, policy.action_weight, policy.action_bias)
        value_extractor = getattr(target, "vf_features_extractor", extractor)
        value_linears = [m for m in target.mlp_extractor.value_net if isinstance(m, torch.nn.Linear)]
        if value_features and value_extractor is not extractor and \
                [m.weight.shape for m in value_linears] == [m.weight.shape for m in linears]:
            fill(value_extractor, value_linears)


__all__ = ["export_policy", "export_value", "import_policy"]
