"""A trained policy that plays anywhere an agent is accepted, with numpy only.

Training exports its policy network to a small ``.npz`` (``packetrow_train.policy_export``) that this module
runs with numpy: the weights of the policy MLP and its action layer, plus metadata (format version, activation,
observation mode, observation size, number of actions, and training facts such as the step count). The value
network is left out: playing needs only the action logits. This module reads and writes ``.npz`` policies only
and knows nothing of the training stack.

``.npz`` layout (format 1): ``layer_{i}_weight`` (in, out) and ``layer_{i}_bias`` (out,) for each hidden
layer i = 0..k-1, ``action_weight`` (hidden, A) and ``action_bias`` (A,), A the number of actions (48 in env v0, 48 + K in v1), and ``meta``, a JSON string.
Illegal actions get probability 0, as in the masked distribution training samples from.

The metadata's ``observation_encoding`` says which vector the network reads: ``onehot`` (``observation``; the
default when absent) or ``compact`` (``compact_observation``). A compact policy starts with an input stage: its
index floats (card types + 1, 0 = empty) are looked up in an ``embedding`` (num_types + 1, dim) and the
embeddings, in the order of the floats, are concatenated with the other floats.
Format 2 adds that stage's arrays, ``embedding`` (num_types + 1, dim) and ``index_slices`` (k, 2): ascending
(start, stop) ranges of the index floats. Only compact policies are written as format 2, so a onehot export
stays a format-1 file every reader loads; format-1 files load as onehot policies.

    agent = PolicyAgent.load("runs/quick/model.npz")       # or make_agent("ppo:path=runs/quick/model.npz")
    agent = PolicyAgent.load()                              # the shipped model, models/ppo_packetrow.npz
"""

from __future__ import annotations

import importlib
import json
import os
import warnings
from pathlib import Path

import numpy as np

from packetrow_env import actions
from packetrow_env.compact_observation import ENCODINGS, encoder_for  # observation_encoding: onehot or compact

from packetrow_env.seat_view import covers

from .base import Agent, act_each
from .compiled_opponent import POLICY, CompiledOpponent
from .shipped import SHIPPED_POLICIES

FORMAT_VERSION = 2  # the newest format written (for compact policies; onehot ones are written as format 1)
ACTIVATIONS = ("tanh", "relu")
SHIPPED_MODEL = SHIPPED_POLICIES["ppo"]  # models/ppo_packetrow.npz, installed as packetrow_models
# PolicyAgent.act_batch: one PolicyStack call up to this many rows per policy; measured
# (benchmarks/policy_forward.py, docs/benchmarks.md): the compiled call beats a numpy forward per policy up to
# about this many rows per policy, beyond, BLAS's products win
STACK_ROWS_PER_POLICY = 8
TRAIN_HINT = ("train one with `packetrow train --config configs/quick.yaml --out runs/quick` and load "
              "runs/quick/model.npz (agent spec ppo:path=runs/quick/model.npz)")


class ModelNotFoundError(FileNotFoundError, ValueError):
    """No model file where one was expected (a ValueError too, so agent-spec callers report it as bad input)."""


class ModelFormatError(ValueError):
    """A model file that is not a policy this module can run (wrong keys, shapes, version or observation size)."""


class NumpyPolicy:
    """A policy MLP as numpy arrays: logits, masked probabilities and actions, with numpy only."""

    def __init__(self, weights: list[np.ndarray], biases: list[np.ndarray], action_weight: np.ndarray,
                 action_bias: np.ndarray, activation: str = "tanh", observation_mode: str = "tracked",
                 metadata: dict | None = None, embedding: np.ndarray | None = None, index_slices=None):
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
        self.embedding = self.index_slices = self.index_floats = self.rest_floats = self._size = None
        if (embedding is None) != (index_slices is None):
            raise ModelFormatError("a compact policy needs both its embedding and its index slices, got only the "
                                   + ("embedding" if index_slices is None else "index slices"))
        if embedding is not None:
            self._set_input_stage(embedding, index_slices)

    def _set_input_stage(self, embedding, index_slices) -> None:
        """Check and keep the compact input stage: the embedding and the (start, stop) ranges of the index floats."""
        embedding = np.asarray(embedding)
        slices = np.asarray(index_slices)
        if embedding.ndim != 2 or embedding.shape[0] < 2 or embedding.shape[1] < 1 or embedding.dtype.kind != "f":
            raise ModelFormatError(f"the embedding must be a float matrix (num_types + 1, dim) with num_types and dim "
                                   f"at least 1, got {embedding.dtype} {embedding.shape}")
        if slices.ndim != 2 or slices.shape[1] != 2 or len(slices) == 0 or slices.dtype.kind not in "iu":
            raise ModelFormatError(f"index_slices must be (start, stop) integer pairs, shape (k, 2) with k >= 1, got "
                                   f"{slices.dtype} {slices.shape}")
        slices = slices.astype(np.int64)
        starts, stops = slices[:, 0], slices[:, 1]
        if (starts < 0).any() or (stops <= starts).any() or (starts[1:] < stops[:-1]).any():
            raise ModelFormatError(f"index_slices {slices.tolist()} must be ascending, non-overlapping, non-empty "
                                   "(start, stop) ranges")
        features = int((self.weights[0] if self.weights else self.action_weight).shape[0])
        count, dim = int((stops - starts).sum()), embedding.shape[1]
        if count * dim > features:
            raise ModelFormatError(f"index_slices name {count} index floats, whose {dim}-wide embeddings need more "
                                   f"than the network's {features} input features")
        size = features - count * (dim - 1)  # the observation holds one float per index, the features dim
        if stops[-1] > size:
            raise ModelFormatError(f"index_slices {slices.tolist()} reach past the {size} observation floats that "
                                   f"{features} input features and a {dim}-wide embedding imply")
        is_index = np.zeros(size, dtype=bool)
        for start, stop in slices:
            is_index[start:stop] = True
        self.embedding, self.index_slices = np.ascontiguousarray(embedding, dtype=np.float32), slices
        # Where the index floats and the plain floats lie in the observation (a slice where they are one run): the
        # compiled forward (policy_batch.PolicyStack) and training's copies of the network read them too.
        self.index_floats, self.rest_floats, self._size = _take(is_index), _take(~is_index), size

    @property
    def observation_encoding(self) -> str:
        """Which observation vector the network reads: ``onehot`` (observation.Encoder) or ``compact``."""
        return "onehot" if self.embedding is None else "compact"

    @property
    def observation_size(self) -> int:
        """Length of the observation vector the network reads (in its encoding)."""
        if self.embedding is not None:
            return self._size
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
        layers = list(zip(self.weights, self.biases)) + [(self.action_weight, self.action_bias)]
        for i, (w, b) in enumerate(layers):
            x = (self._compact_product(x, w) if i == 0 and self.embedding is not None else x @ w) + b
            if i < len(self.weights):
                x = squash(x)
        return x

    def _compact_product(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """features @ w, the compact input stage's features: the index floats' embeddings in order, then the rest."""
        # Index floats are small whole numbers; round before the cast so that no float error picks a neighbour.
        index = np.rint(x[..., self.index_floats]).clip(0, len(self.embedding) - 1).astype(np.intp)
        embedded = self.embedding[index].reshape(*x.shape[:-1], -1)
        # Two products instead of one on the concatenation: copying the features costs more than the product.
        return embedded @ w[:embedded.shape[-1]] + x[..., self.rest_floats] @ w[embedded.shape[-1]:]

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

    def actions(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator,
                deterministic: bool) -> np.ndarray:
        """int64[k]: per row, the most likely legal action, or (``deterministic=False``) a sample of the masked
        policy: one forward for all rows."""
        logits = self.logits(observations).astype(np.float64)
        logits[~masks] = -np.inf
        if deterministic:
            return logits.argmax(axis=1)
        gumbel = -np.log(-np.log(rng.random(logits.shape)))  # argmax(logits + Gumbel) samples softmax(logits)
        return (logits + gumbel).argmax(axis=1)

    def non_finite(self) -> list[str]:
        """The ``.npz`` entries whose values are not all finite (NaN or infinite: a diverged training); [] if none."""
        return [name for name, array in self._arrays().items() if not np.isfinite(array).all()]

    def _refuse_non_finite(self) -> None:
        bad = self.non_finite()
        if bad:
            raise ModelFormatError(f"not writing a policy whose weights are not finite (NaN or infinite in "
                                   f"{', '.join(bad)}): the training that made it diverged")

    def _arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the ``.npz`` by entry name, in the file's order (the metadata aside)."""
        arrays = {"embedding": self.embedding, "index_slices": self.index_slices} if self.embedding is not None else {}
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            arrays[f"layer_{i}_weight"], arrays[f"layer_{i}_bias"] = w, b
        arrays["action_weight"], arrays["action_bias"] = self.action_weight, self.action_bias
        return arrays

    def save(self, path) -> Path:
        """Write the policy to a ``.npz`` file; returns its path. Non-finite weights: ``write``'s error, no file."""
        path = Path(path)
        self._refuse_non_finite()
        path.parent.mkdir(parents=True, exist_ok=True)
        # np.savez appends .npz to a name without it; write through a handle so the path is exactly ``path``
        with path.open("wb") as f:
            self.write(f)
        return path

    def write(self, file) -> None:
        """Write the policy as ``.npz`` bytes to an open binary file (an atomic writer's, say); a ModelFormatError,
        before anything is written, if a weight is not finite."""
        self._refuse_non_finite()
        compact = self.embedding is not None
        meta = {**self.metadata, "format_version": 2 if compact else 1, "activation": self.activation,
                "observation_mode": self.observation_mode, "observation_encoding": self.observation_encoding,
                "observation_size": self.observation_size, "num_actions": self.num_actions,
                "hidden_layers": len(self.weights)}
        np.savez_compressed(file, meta=np.array(json.dumps(meta, sort_keys=True)), **self._arrays())

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
        version = meta.get("format_version")
        if isinstance(version, bool) or version not in range(1, FORMAT_VERSION + 1):
            raise ModelFormatError(f"{path}: policy format {version!r}, this code reads formats 1 to {FORMAT_VERSION}")
        encoding = meta.get("observation_encoding", "onehot")
        if encoding not in ENCODINGS:
            raise ModelFormatError(f"{path}: unknown observation_encoding {encoding!r}; allowed: {', '.join(ENCODINGS)}")
        if encoding == "compact" and version < 2:
            raise ModelFormatError(f"{path}: a compact policy needs format 2 (format 1 has no embedding)")
        layers = meta.get("hidden_layers")
        if isinstance(layers, bool) or not isinstance(layers, int) or not 0 <= layers <= 64:
            raise ModelFormatError(f"{not_export}: 'hidden_layers' must be a layer count, got {layers!r}")
        expected = {f"layer_{i}_{part}" for i in range(layers) for part in ("weight", "bias")} \
            | {"action_weight", "action_bias"} | ({"embedding", "index_slices"} if encoding == "compact" else set())
        if set(arrays) != expected:
            raise ModelFormatError(f"{path}: entries {sorted(arrays)} do not match {layers} hidden layers and the "
                                   f"{encoding} encoding (expected {sorted(expected)})")
        if any(a.dtype.kind not in "fiu" for a in arrays.values()):
            raise ModelFormatError(f"{not_export}: its weights are not numbers")
        policy = cls([arrays[f"layer_{i}_weight"] for i in range(layers)],
                     [arrays[f"layer_{i}_bias"] for i in range(layers)], arrays["action_weight"],
                     arrays["action_bias"], meta.get("activation", "tanh"), meta.get("observation_mode", "tracked"),
                     {k: v for k, v in meta.items() if k not in ("format_version", "activation", "observation_mode",
                                                                  "observation_encoding", "observation_size",
                                                                  "num_actions", "hidden_layers")},
                     arrays.get("embedding"), arrays.get("index_slices"))
        if policy.observation_size != meta.get("observation_size") or policy.num_actions != meta.get("num_actions"):
            raise ModelFormatError(f"{path}: the weights' sizes ({policy.observation_size} in, {policy.num_actions} "
                                   f"out) contradict the metadata ({meta.get('observation_size')} in, "
                                   f"{meta.get('num_actions')} out)")
        bad = policy.non_finite()
        if bad:
            raise ModelFormatError(f"{path}: its weights are not finite (NaN or infinite in {', '.join(bad)}); the "
                                   "training that wrote it diverged: retrain with a lower ppo.learning_rate")
        return policy


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _take(where: np.ndarray):
    """The positions where ``where`` is true, as a slice when they are one run (a view, no copy), else an array."""
    positions = np.flatnonzero(where)
    if positions.size and positions[-1] - positions[0] == positions.size - 1:
        return slice(int(positions[0]), int(positions[-1]) + 1)
    return positions


def check_model_path(path) -> Path:
    """``path`` as a Path if it names a ``.npz`` export; a ModelFormatError for an SB3 ``.zip`` or another type.

    SB3 ``.zip`` checkpoints are refused: loading one unpickles parts of it, which runs any code a crafted
    file carries, so no agent spec, config or saved game may name one. Every checkpoint ``packetrow
    train`` writes has its ``.npz`` export beside it; ``packetrow_train.policy_export.export_policy`` converts a
    checkpoint you trust yourself, once loaded.
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
    """A NumpyPolicy from a ``.npz`` export (numpy only, never unpickled); None or ``ppo``: the shipped model;
    another name of ``SHIPPED_POLICIES`` (``robust_br60``, ...): that shipped policy."""
    if path is None or (isinstance(path, str) and path in SHIPPED_POLICIES):
        shipped = SHIPPED_POLICIES[path or "ppo"]
        if not shipped.is_file():
            raise ModelNotFoundError(f"no shipped model at {shipped}; {TRAIN_HINT}")
        path = shipped
    path = check_model_path(path)
    if not path.is_file():
        raise ModelNotFoundError(f"no model file at {path}; {TRAIN_HINT}")
    return NumpyPolicy.load_npz(path)


def policy_input(policy: NumpyPolicy, observations: np.ndarray, encoding: str, cards=None) -> np.ndarray:
    """What ``policy`` reads of a batch's observations in its encoding: them, or for a policy trained on env v1 the
    v1 vector inside (see ``PolicyAgent``)."""
    if observations.shape[-1] == policy.observation_size:
        return observations
    return encoder_for(encoding, cards).v1_observation(observations)


def _forward(policies: list[NumpyPolicy], turns, ids: np.ndarray, deterministic: bool) -> np.ndarray:
    """The moves of ``policies[ids[k]]`` (one observation layout and action count) for the turns: one PolicyStack
    call where they share an architecture and have few rows each (``STACK_ROWS_PER_POLICY``), else one numpy
    forward per policy; each reads the batch's observation in its own layout and chooses among its outputs."""
    from .policy_batch import stack_of  # numba compiles only where games are batched

    groups = np.unique(ids)
    stack = stack_of(tuple(policies))
    observations = policy_input(policies[0], turns.observe(), turns.observation_encoding, turns.games.cards)
    masks = turns.masks[:, :policies[0].num_actions]
    if stack is not None and len(ids) <= STACK_ROWS_PER_POLICY * len(groups):
        return stack.actions(ids, observations, masks, turns.rng, deterministic)
    out = np.zeros(len(ids), np.int64)
    for g in groups.tolist():
        rows = np.flatnonzero(ids == g)
        out[rows] = policies[g].actions(observations[rows], masks[rows], turns.rng, deterministic)
    return out


class PolicyAgent(Agent):
    """Plays a trained policy: masked argmax (``deterministic``) or a sample from it, seeded.

    Built from a model file (``path``: a ``.npz`` export; None: the shipped model) or a
    NumpyPolicy in memory (``policy``). It reads the seat's observation in the mode and encoding it was trained
    on (``observation_mode``, default tracked; ``observation_encoding``): ``view.observe(mode)`` or
    ``view.compact_observation(mode)``, or the vector of a view built on an observation alone
    (``SeatView.of_observation``), which must be in that mode and encoding.

    Policies of older env versions keep playing (the env's version history): one trained on env v1 reads
    ``v1_observation`` of its observation (``Encoder``'s or ``CompactEncoder``'s: the v1 vector inside the
    v2 one, bit for bit) and chooses among its outputs. One trained on env v0 (48 actions, the v0
    observation) reads ``Encoder.v0_observation`` and chooses among the first 48 actions, and in phase pay,
    which it cannot express, it pays as the heuristic does (``heuristic.choose_payment``; on a view without
    a game, with the first option, the least card value).
    """

    batches_together = True  # policies of one architecture share one compiled forward (policy_batch.PolicyStack)

    def __init__(self, seed: int = 0, path=None, deterministic: bool = True, policy: NumpyPolicy | None = None,
                 name: str = "ppo"):
        if not isinstance(deterministic, bool):
            raise ValueError(f"deterministic must be true or false, got {deterministic!r}")
        self.policy = policy if policy is not None else load_policy(path)
        if self.policy.metadata.get("head") == "value":
            raise ModelFormatError(f"{path or 'the network given'} is a value network (export_value), not a policy: "
                                   "it scores positions and chooses no action; the search reads it with value=PATH")
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
    def observation_encoding(self) -> str:
        """The observation encoding the policy reads (``onehot`` or ``compact``)."""
        return self.policy.observation_encoding

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
        read = self.read(view)
        if isinstance(read, int):
            return read
        return self.policy.action(*read, self._rng, self.deterministic)

    def action_probabilities(self, view) -> np.ndarray:
        """float64[A]: the policy's probability of each action of ``view``'s seat (for beliefs): the softmax of its
        masked logits whatever ``deterministic``, zero on illegal actions and on actions beyond its outputs."""
        out = np.zeros(view.action_mask.shape[-1])
        read = self.read(view)
        if isinstance(read, int):  # a v0 policy's pay decision, the heuristic's choice
            out[read] = 1.0
            return out
        probs = self.policy.probabilities(*read).astype(np.float64)
        out[:len(probs)] = probs / probs.sum()
        return out

    def action_inputs(self, games, rows, mode: str) -> np.ndarray:
        """float32[k, D]: the observations the policy reads of the players to act in ``rows`` of a VectorGame whose
        seats know what ``mode`` shows (a v1 policy: the v1 vector inside); for ``batch_action_probabilities``."""
        if not covers(mode, self.observation_mode):
            raise ValueError(f"a policy trained on {self.observation_mode} observations cannot read a {mode} seat's "
                             f"view (it knows less); allowed modes for it: those covering {self.observation_mode}")
        if self.policy.num_actions < actions.PAY + actions.MAX_PAYMENT_OPTIONS:
            raise ValueError("a policy without the pay actions (env v0) plays one game at a time: use "
                             "action_probabilities")
        observations = games.observe(self.observation_mode, rows=rows, encoding=self.observation_encoding)
        return policy_input(self.policy, observations, self.observation_encoding, games.cards)

    def batch_action_probabilities(self, inputs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float64[k, A]: ``action_probabilities`` of k decisions from their ``action_inputs`` and legal actions."""
        outputs = self.policy.num_actions
        out = np.zeros(masks.shape)
        probs = self.policy.probabilities(inputs, masks[:, :outputs]).astype(np.float64)
        out[:, :outputs] = probs / probs.sum(axis=1, keepdims=True)
        return out

    def read(self, view):
        """(the observation, the mask) the policy reads of ``view``; or, where it has no output for the legal
        actions (a v0 policy in phase pay), the action it plays (an int)."""
        mask = view.action_mask
        outputs = self.policy.num_actions
        if outputs < mask.shape[-1]:  # a policy of an older action layout (v0: no pay actions)
            if not mask[:outputs].any():
                return self._pay_without_outputs(view)
            mask = mask[:outputs]
        if self.observation_encoding == "compact" and view.has_game:
            observation = view.compact_observation(self.observation_mode)
        else:  # a view without a game gives its own vector, which must be in the policy's encoding
            observation = view.observe(self.observation_mode)
        if observation.shape[-1] != self.policy.observation_size:  # a policy of an older env version
            coder = encoder_for(self.observation_encoding, view.cards)
            if self.policy.observation_size == coder.v1_size_of(self.observation_mode):
                observation = coder.v1_observation(observation)
            elif self.observation_encoding == "onehot" and self.policy.observation_size == coder.v0_size \
                    and observation.shape[-1] > coder.v0_size:
                observation = coder.v0_observation(observation)  # a v0 policy reads the v0 prefix
        return observation, mask

    @classmethod
    def act_batch(cls, agents, turns) -> np.ndarray:
        """The agents that read the batch's observations (its mode and encoding, its layout or the v1 layout inside
        it, every pay action) move batched, sampling from ``turns.rng`` (``_forward``); other agents game by game."""
        coder = encoder_for(turns.observation_encoding, turns.games.cards)
        layouts = (coder.size_of(turns.observation_mode), coder.v1_size_of(turns.observation_mode))
        # (how the readers pick: argmax True, a sample False; the vector and actions they read) -> their indices;
        # None: the others
        parts: dict = {}
        for j, agent in enumerate(agents):
            policy = agent.policy
            # A policy with every pay output finds a legal action among its outputs in every phase (v0's cannot pay)
            reads = (agent.observation_mode == turns.observation_mode
                     and agent.observation_encoding == turns.observation_encoding
                     and policy.observation_size in layouts
                     and actions.PAY + actions.MAX_PAYMENT_OPTIONS <= policy.num_actions <= turns.masks.shape[1])
            key = (agent.deterministic, policy.observation_size, policy.num_actions) if reads else None
            parts.setdefault(key, []).append(j)
        out = np.zeros(len(turns), np.int64)
        for key, members in parts.items():
            if len(members) == len(agents):  # the usual case, the snapshots of one learner: no regrouping
                k, part, ids = slice(None), turns, turns.player
            else:
                index = np.full(len(agents), -1, np.int64)
                index[members] = np.arange(len(members))
                k = np.flatnonzero(index[turns.player] >= 0)
                part, ids = turns.select(k), index[turns.player[k]]
            if key is None:
                out[k] = act_each(agents, part)
            elif len(ids):
                out[k] = _forward([agents[j].policy for j in members], part, ids, key[0])
        return out

    def compiled_form(self, observation_mode: str, observation_encoding: str, observation_size: int):
        """The policy's moves inside the compiled mover, where it reads that batch's vector as it is: the compact
        observation of its own mode, that size, with an output for every action; None elsewhere."""
        policy = self.policy
        if (observation_encoding == "compact" and policy.observation_encoding == "compact"
                and self.observation_mode == observation_mode and policy.observation_size == observation_size
                and policy.num_actions == actions.NUM_ACTIONS):
            return CompiledOpponent(POLICY, policy=policy, deterministic=self.deterministic)
        return None

    @staticmethod
    def _pay_without_outputs(view) -> int:
        """The pay decision of a policy with no pay outputs: the heuristic's choice (documented in the class)."""
        pay = np.flatnonzero(view.action_mask[actions.PAY:actions.PAY + actions.MAX_PAYMENT_OPTIONS])
        if len(pay) == 0:
            raise ValueError("the legal actions lie beyond this policy's outputs and are not pay actions; "
                             "it was trained on another action layout")
        if not view.has_game:
            return actions.PAY + int(pay[0])
        from .heuristic import choose_payment
        return actions.PAY + choose_payment(view)


class ActionModel:
    """An agent as a model of its play, for beliefs (``packetrow_env.belief``): called on a SeatView, its action
    probabilities; where the agent has batched ones, ``batch_inputs`` and ``batch_probabilities`` too."""

    def __init__(self, agent):
        if not callable(getattr(agent, "action_probabilities", None)):
            raise ValueError(f"agent {getattr(agent, 'name', type(agent).__name__)!r} has no action probabilities; "
                             "agents that have them: ppo (PolicyAgent), random, heuristic")
        self.agent = agent
        batched = getattr(agent, "action_inputs", None)
        policy = getattr(agent, "policy", None)
        if batched is not None and (policy is None or policy.num_actions >= actions.PAY + actions.MAX_PAYMENT_OPTIONS):
            self.batch_inputs = batched
            self.batch_probabilities = agent.batch_action_probabilities

    def __call__(self, view) -> np.ndarray:
        """The agent's probability of each action of ``view``'s seat."""
        return self.agent.action_probabilities(view)


def action_model(agent) -> ActionModel:
    """The callable ``packetrow_env.belief.starting_contract_posterior`` takes as a seat's policy, for ``agent``."""
    return ActionModel(agent)


# export_policy, export_value and import_policy moved to training, packetrow_train.policy_export (issue #46): the
# old names keep working until 0.5.0, with a DeprecationWarning. Their module is imported by name only when an old
# name is asked for, so that the agents layer keeps no import of training (the layers of docs/design.md).
_MOVED = {name: "packetrow_train.policy_export" for name in ("export_policy", "export_value", "import_policy")}


def __getattr__(name: str):
    """A moved name: warn, then return the object from its new module."""
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = _MOVED[name]
    warnings.warn(f"{__name__}.{name} moved to {home}.{name}; the old name goes in packetrow 0.5.0",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(home), name)
