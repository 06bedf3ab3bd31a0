"""A trained policy that plays anywhere an agent is accepted, with numpy only.

Training (``train/selfplay.py``) produces a MaskablePPO checkpoint (an SB3 ``.zip``, needs torch) and
exports its policy network to a small ``.npz`` that this module runs with numpy: the weights of the
policy MLP and its action layer, plus metadata (format version, activation, observation mode,
observation size, number of actions, and training facts such as the step count). The value network
is left out: playing needs only the action logits.

``.npz`` layout (format 1): ``layer_{i}_weight`` (in, out) and ``layer_{i}_bias`` (out,) for each hidden
layer i = 0..k-1, ``action_weight`` (hidden, A) and ``action_bias`` (A,), A the number of actions (48 in env v0, 48 + K in v1), and ``meta``, a JSON string.
Illegal actions get probability 0, as in sb3-contrib's MaskableCategorical.

    agent = PolicyAgent.load("runs/quick/model.npz")       # or make_agent("ppo:path=runs/quick/model.npz")
    agent = PolicyAgent.load()                              # the shipped model, models/ppo_packetrow.npz
"""

from __future__ import annotations

import json
import os
from importlib.resources import files
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1
ACTIVATIONS = ("tanh", "relu")
# models/ of the repository, installed as the package packetrow_models
SHIPPED_MODEL = Path(str(files("packetrow_models") / "ppo_packetrow.npz"))
TRAIN_HINT = ("train one with `packetrow train --config configs/quick.yaml --out runs/quick` and load "
              "runs/quick/model.npz (agent spec ppo:path=runs/quick/model.npz)")


class ModelNotFoundError(FileNotFoundError, ValueError):
    """No model file where one was expected (a ValueError too, so agent-spec callers report it as bad input)."""


class ModelFormatError(ValueError):
    """A model file that is not a policy this module can run (wrong keys, shapes, version or observation size)."""


class NumpyPolicy:
    """A policy MLP as numpy arrays: logits, masked probabilities and actions without torch."""

    def __init__(self, weights: list[np.ndarray], biases: list[np.ndarray], action_weight: np.ndarray,
                 action_bias: np.ndarray, activation: str = "tanh", observation_mode: str = "tracked",
                 metadata: dict | None = None):
        if activation not in ACTIVATIONS:
            raise ModelFormatError(f"unknown activation {activation!r}; allowed: {', '.join(ACTIVATIONS)}")
        if len(weights) != len(biases):
            raise ModelFormatError(f"{len(weights)} hidden weight matrices but {len(biases)} bias vectors")
        self.weights = [np.ascontiguousarray(w, dtype=np.float32) for w in weights]
        self.biases = [np.ascontiguousarray(b, dtype=np.float32) for b in biases]
        self.action_weight = np.ascontiguousarray(action_weight, dtype=np.float32)
        self.action_bias = np.ascontiguousarray(action_bias, dtype=np.float32)
        width = self.weights[0].shape[0] if self.weights else self.action_weight.shape[0]
        for i, (w, b) in enumerate(zip(self.weights + [self.action_weight], self.biases + [self.action_bias])):
            if w.ndim != 2 or b.shape != (w.shape[1],) or w.shape[0] != width:
                raise ModelFormatError(f"layer {i}: weight {w.shape} and bias {b.shape} do not chain "
                                       f"(expected ({width}, k) and (k,))")
            width = w.shape[1]
        self.activation = activation
        self.observation_mode = observation_mode
        self.metadata = dict(metadata or {})

    @property
    def observation_size(self) -> int:
        """Length of the observation vector the network reads."""
        return int((self.weights[0] if self.weights else self.action_weight).shape[0])

    @property
    def num_actions(self) -> int:
        """Number of action logits (the action layout's size)."""
        return int(self.action_bias.shape[0])

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Raw action logits for one observation (shape (size,)) or a batch (shape (b, size))."""
        x = np.asarray(observation, dtype=np.float32)
        if x.shape[-1] != self.observation_size:
            raise ModelFormatError(f"the observation has {x.shape[-1]} floats but the model reads "
                                   f"{self.observation_size}: it was trained on another observation layout "
                                   "(catalogue or encoder version); retrain or pass the matching observation")
        squash = np.tanh if self.activation == "tanh" else _relu
        for w, b in zip(self.weights, self.biases):
            x = squash(x @ w + b)
        return x @ self.action_weight + self.action_bias

    def log_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Log-probabilities over the actions with illegal ones at -inf (one observation or a batch)."""
        mask = np.asarray(action_mask, dtype=bool)
        logits = np.where(mask, self.logits(observation), -np.inf)
        if not mask.any(axis=-1).all():
            raise ValueError("no legal action: the mask is all zeros (is the game over?)")
        top = logits.max(axis=-1, keepdims=True)
        return logits - (top + np.log(np.exp(logits - top).sum(axis=-1, keepdims=True)))

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Action probabilities, zero on illegal actions (one observation or a batch)."""
        return np.exp(self.log_probabilities(observation, action_mask))

    def action(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator | None = None,
               deterministic: bool = True) -> int:
        """The most likely legal action, or (``deterministic=False``) one sampled from the masked policy."""
        if deterministic:
            mask = np.asarray(action_mask, dtype=bool)
            if not mask.any():
                raise ValueError("no legal action: the mask is all zeros (is the game over?)")
            return int(np.argmax(np.where(mask, self.logits(observation), -np.inf)))
        cumulative = np.cumsum(self.probabilities(observation, action_mask))
        # searchsorted on the cumulative sum samples in one call; the clip guards float round-off at the top
        index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        return int(min(index, len(cumulative) - 1))

    def save(self, path) -> Path:
        """Write the policy to a ``.npz`` file; returns its path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {**self.metadata, "format_version": FORMAT_VERSION, "activation": self.activation,
                "observation_mode": self.observation_mode, "observation_size": self.observation_size,
                "num_actions": self.num_actions, "hidden_layers": len(self.weights)}
        arrays = {"meta": np.array(json.dumps(meta, sort_keys=True))}
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            arrays[f"layer_{i}_weight"], arrays[f"layer_{i}_bias"] = w, b
        arrays["action_weight"], arrays["action_bias"] = self.action_weight, self.action_bias
        # np.savez appends .npz to a name without it; write through a handle so the path is exactly ``path``
        with path.open("wb") as f:
            np.savez_compressed(f, **arrays)
        return path

    @classmethod
    def load_npz(cls, path) -> NumpyPolicy:
        """Read a policy written by ``save`` (numpy arrays only: nothing in the file is unpickled)."""
        path = Path(path)
        not_export = f"{path} is not a policy export (a .npz written by packetrow train)"
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
        except OSError as error:
            raise ModelNotFoundError(f"cannot read {path}: {error.strerror or error}") from None
        except Exception:  # BadZipFile, a pickle or .npy file, object arrays, truncation, ...
            raise ModelFormatError(not_export) from None
        if "meta" not in arrays:
            raise ModelFormatError(f"{not_export}: it has no 'meta' entry")
        try:
            meta = json.loads(str(arrays.pop("meta")))
            if not isinstance(meta, dict):
                raise ValueError(meta)
        except ValueError:
            raise ModelFormatError(f"{not_export}: its 'meta' entry is not a JSON object") from None
        if meta.get("format_version") != FORMAT_VERSION:
            raise ModelFormatError(f"{path}: policy format {meta.get('format_version')!r}, this code reads "
                                   f"format {FORMAT_VERSION}")
        layers = meta.get("hidden_layers")
        if isinstance(layers, bool) or not isinstance(layers, int) or not 0 <= layers <= 64:
            raise ModelFormatError(f"{not_export}: 'hidden_layers' must be a layer count, got {layers!r}")
        expected = {f"layer_{i}_{part}" for i in range(layers) for part in ("weight", "bias")} \
            | {"action_weight", "action_bias"}
        if set(arrays) != expected:
            raise ModelFormatError(f"{path}: entries {sorted(arrays)} do not match {layers} hidden layers "
                                   f"(expected {sorted(expected)})")
        if any(a.dtype.kind not in "fiu" for a in arrays.values()):
            raise ModelFormatError(f"{not_export}: its weights are not numbers")
        policy = cls([arrays[f"layer_{i}_weight"] for i in range(layers)],
                     [arrays[f"layer_{i}_bias"] for i in range(layers)], arrays["action_weight"],
                     arrays["action_bias"], meta.get("activation", "tanh"), meta.get("observation_mode", "tracked"),
                     {k: v for k, v in meta.items() if k not in ("format_version", "activation", "observation_mode",
                                                                  "observation_size", "num_actions",
                                                                  "hidden_layers")})
        if policy.observation_size != meta.get("observation_size") or policy.num_actions != meta.get("num_actions"):
            raise ModelFormatError(f"{path}: the weights' sizes ({policy.observation_size} in, {policy.num_actions} "
                                   f"out) contradict the metadata ({meta.get('observation_size')} in, "
                                   f"{meta.get('num_actions')} out)")
        return policy


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def export_policy(model, observation_mode: str | None = None, metadata: dict | None = None) -> NumpyPolicy:
    """A NumpyPolicy copy of a MaskablePPO model's (or MaskableActorCriticPolicy's) policy network."""
    import torch  # only exporting needs torch

    policy = getattr(model, "policy", model)
    meta = dict(getattr(model, "packetrow_meta", None) or {})
    if hasattr(model, "num_timesteps"):
        meta["num_timesteps"] = int(model.num_timesteps)
    meta.update(metadata or {})
    mode = observation_mode or meta.pop("observation_mode", "tracked")
    meta.pop("observation_mode", None)
    extractor = type(policy.features_extractor).__name__
    if extractor != "FlattenExtractor":
        raise ModelFormatError(f"cannot export a policy with a {extractor} features extractor; only MlpPolicy "
                               "(FlattenExtractor) networks run in numpy")
    weights, biases, activations = [], [], set()
    for module in policy.mlp_extractor.policy_net:
        if isinstance(module, torch.nn.Linear):
            weights.append(module.weight.detach().cpu().numpy().T.copy())
            biases.append(module.bias.detach().cpu().numpy().copy())
        elif isinstance(module, torch.nn.Tanh):
            activations.add("tanh")
        elif isinstance(module, torch.nn.ReLU):
            activations.add("relu")
        else:
            raise ModelFormatError(f"cannot export the layer {module!r}; the numpy policy supports Linear layers "
                                   f"with {' or '.join(ACTIVATIONS)} activations")
    if len(activations) > 1 or len(activations) != min(len(weights), 1):
        raise ModelFormatError(f"the policy network must use one activation after every layer, got {activations}")
    action = policy.action_net
    return NumpyPolicy(weights, biases, action.weight.detach().cpu().numpy().T.copy(),
                       action.bias.detach().cpu().numpy().copy(), activations.pop() if activations else "tanh",
                       mode, meta)


def check_model_path(path) -> Path:
    """``path`` as a Path if it names a ``.npz`` export; a ModelFormatError for an SB3 ``.zip`` or another type.

    SB3 ``.zip`` checkpoints are refused: loading one unpickles parts of it, which runs any code a crafted
    file carries, so no agent spec, config or saved game may name one. Every checkpoint ``packetrow
    train`` writes has its ``.npz`` export beside it; ``export_policy(MaskablePPO.load(...))`` converts a
    checkpoint you trust yourself.
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ModelFormatError(f"a model path must be a file name, got {path!r}")
    path = Path(path)
    if path.suffix.lower() == ".zip":
        raise ModelFormatError(f"{path}: SB3 checkpoints (.zip) are not loaded as agents, because loading one "
                               f"unpickles it and so can run code stored in the file; play its numpy export "
                               f"instead ({path.with_suffix('.npz')}, which packetrow train writes beside every "
                               f"checkpoint)")
    if path.suffix.lower() != ".npz":
        raise ModelFormatError(f"{path}: unknown model file type {path.suffix!r}; allowed: .npz (the numpy export "
                               "packetrow train writes)")
    return path


def load_policy(path=None) -> NumpyPolicy:
    """A NumpyPolicy from a ``.npz`` export (numpy only, never unpickled); None: the shipped model."""
    if path is None:
        if not SHIPPED_MODEL.is_file():
            raise ModelNotFoundError(f"no shipped model at {SHIPPED_MODEL}; {TRAIN_HINT}")
        path = SHIPPED_MODEL
    path = check_model_path(path)
    if not path.is_file():
        raise ModelNotFoundError(f"no model file at {path}; {TRAIN_HINT}")
    return NumpyPolicy.load_npz(path)


class PolicyAgent:
    """Plays a trained policy: masked argmax (``deterministic``) or a sample from it, seeded.

    Built from a model file (``path``: a ``.npz`` export; None: the shipped model) or a
    NumpyPolicy in memory (``policy``). It reads the seat's observation in the mode it was trained on
    (``observation_mode``; default tracked): ``view.observe(mode)``, or the vector of a view built on an
    observation alone (``SeatView.of_observation``), which must be in that mode.

    A policy trained on env v0 (48 actions, the v0 observation; see the env's version history) still
    plays v1 games to the end: it reads ``Encoder.v0_observation`` of its observation and chooses among
    the first 48 actions, and in phase pay, which it cannot express, it pays as the heuristic does
    (``heuristic.choose_payment``; on a view without a game, with the first option, the least card value).
    """

    def __init__(self, seed: int = 0, path=None, deterministic: bool = True, policy: NumpyPolicy | None = None,
                 name: str = "ppo"):
        if not isinstance(deterministic, bool):
            raise ValueError(f"deterministic must be true or false, got {deterministic!r}")
        self.policy = policy if policy is not None else load_policy(path)
        self.path = None if policy is not None else str(path if path is not None else SHIPPED_MODEL)
        self.deterministic = deterministic
        self.name = name
        self.reset(seed)

    @classmethod
    def load(cls, path=None, deterministic: bool = True, seed: int = 0) -> PolicyAgent:
        """An agent playing the ``.npz`` export at ``path``; None: the shipped models/ppo_packetrow.npz."""
        return cls(seed=seed, path=path, deterministic=deterministic)

    @property
    def observation_mode(self) -> str:
        """The observation mode the policy was trained on."""
        return self.policy.observation_mode

    @property
    def metadata(self) -> dict:
        """What the export recorded about training (step count, config name, seed, ...)."""
        return self.policy.metadata

    def reset(self, seed: int) -> None:
        """Reseed for a new game (matters only when sampling)."""
        self._rng = np.random.default_rng(seed)

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The policy's probability of each action, zero on illegal ones."""
        return self.policy.probabilities(observation, action_mask)

    def act(self, view) -> int:
        """A legal action from the policy, for the seat of ``view`` (a SeatView)."""
        mask = view.action_mask
        outputs = self.policy.num_actions
        if outputs < mask.shape[-1]:  # a policy of an older action layout (v0: no pay actions)
            if not mask[:outputs].any():
                return self._pay_without_outputs(view)
            mask = mask[:outputs]
        observation = view.observe(self.observation_mode)
        if observation.shape[-1] != self.policy.observation_size:
            from packetrow_env.observation import encoder
            coder = encoder(view.cards)
            if self.policy.observation_size == coder.v0_size and observation.shape[-1] > coder.v0_size:
                observation = coder.v0_observation(observation)  # a v0 policy reads the v0 prefix
        return self.policy.action(observation, mask, self._rng, self.deterministic)

    @staticmethod
    def _pay_without_outputs(view) -> int:
        """The pay decision of a policy with no pay outputs: the heuristic's choice (documented in the class)."""
        from packetrow_env import actions
        pay = np.flatnonzero(view.action_mask[actions.PAY:actions.PAY + actions.MAX_PAYMENT_OPTIONS])
        if len(pay) == 0:
            raise ValueError("the legal actions lie beyond this policy's outputs and are not pay actions; "
                             "it was trained on another action layout")
        if not view.has_game:
            return actions.PAY + int(pay[0])
        from .heuristic import choose_payment
        return actions.PAY + choose_payment(view)
