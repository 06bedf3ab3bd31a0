"""tanh for the policy networks' CPU training: ``FastTanh``, an ``nn.Tanh`` computed as 2 sigmoid(2x) - 1.

torch's CPU tanh kernel is slower than its sigmoid (docs/benchmarks.md, "Behind the training code's choices"). The identity gives the same function to float32
rounding (within 2e-7), and the backward is torch's own fused tanh backward on the output.
A subclass of ``nn.Tanh``, so everything that reads the activation (exports, the numpy policy) sees tanh.
"""

from __future__ import annotations

import torch
from torch import nn


class _SigmoidTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x + x).mul_(2).sub_(1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


class FastTanh(nn.Tanh):
    """nn.Tanh as 2 sigmoid(2x) - 1 (see the module docstring)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _SigmoidTanh.apply(x)
