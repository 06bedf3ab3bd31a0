"""A training run whose numbers stop being finite stops, with an error saying so.

A too-high learning rate (``ppo.learning_rate: 1e300``, say; the config check refuses ``.inf``) turns the
network's weights into NaN or infinity in one update; PPO keeps running on them without an error, its evaluations
look like a weak policy's, and the export would hold NaN everywhere. ``check_update`` runs after every PPO update
(the training callback calls it before the next rollout and at the end of training) and raises
``TrainingDivergedError`` when the losses the update logged, the gradients it left or the weights are not all
finite. Exports refuse non-finite weights as well (``packetrow_train.policy_export``), so no NaN model is written
either way.
"""

from __future__ import annotations

import math
import numbers

import torch

from .config import ConfigError


class TrainingDivergedError(ConfigError):
    """The loss, the gradients or the weights of a training run stopped being finite (NaN or infinite). A
    ConfigError: the config's learning rate (or clipping) is what usually made it so."""


def non_finite_parts(model) -> list[str]:
    """What of ``model`` (an SB3 PPO) is not finite after its last update, as short phrases; [] if all is.

    The losses are those the update recorded in SB3's logger (``train/*loss``, before the logger's next dump);
    the gradients are those the last minibatch left on the parameters; the weights are the policy's parameters."""
    parts = []
    recorded = getattr(model.logger, "name_to_value", {})
    losses = [f"{key} = {value}" for key, value in recorded.items()
              if key.startswith("train/") and key.endswith("loss") and isinstance(value, numbers.Real)
              and not math.isfinite(value)]
    if losses:
        parts.append(f"the loss ({', '.join(losses)})")
    named = list(model.policy.named_parameters())
    if not _all_finite([p for _, p in named] + [p.grad for _, p in named if p.grad is not None]):
        gradients = [name for name, p in named if p.grad is not None and not torch.isfinite(p.grad).all()]
        if gradients:
            parts.append(f"the gradients ({len(gradients)} of {len(named)} tensors)")
        weights = [name for name, p in named if not torch.isfinite(p).all()]
        if weights:
            parts.append(f"the weights ({len(weights)} of {len(named)} tensors, {weights[0]} first)")
    return parts


def _all_finite(tensors) -> bool:
    """Whether every element of ``tensors`` is finite, if True; False may be wrong (a sum of finite elements that
    overflows), so a False is followed by the exact check. One sum per tensor: a NaN or an infinity in a tensor makes
    its sum NaN or infinite, and the sums cost about a fifth of an elementwise ``isfinite`` per tensor (measured)."""
    with torch.no_grad():
        return bool(torch.isfinite(torch.stack([t.sum() for t in tensors])).all())


def check_update(model, step: int, learning_rate) -> None:
    """Raise TrainingDivergedError if ``non_finite_parts(model)``: one line naming the learner step, what went
    non-finite and the learning rate to lower."""
    parts = non_finite_parts(model)
    if parts:
        what = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
        raise TrainingDivergedError(
            f"training diverged at learner step {step}: {what} stopped being finite (NaN or infinite) "
            f"after a PPO update; lower ppo.learning_rate (now {learning_rate}) or ppo.max_grad_norm and train "
            "again, or resume from a checkpoint before this step")

