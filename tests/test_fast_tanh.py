"""FastTanh (train/fast_tanh.py) is tanh: the same values and gradients to float32 rounding, and exports of its
networks read as tanh."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from packetrow_train.fast_tanh import FastTanh  # noqa: E402


def test_fast_tanh_matches_torch_tanh_in_value_and_gradient():
    x = torch.cat([torch.linspace(-30, 30, 2001), torch.randn(5000) * 3, torch.tensor([0.0, 1e-6, -1e-6])])
    x.requires_grad_(True)
    grad = torch.randn_like(x)
    fast = FastTanh()(x)
    (fast_grad,) = torch.autograd.grad(fast, x, grad)
    slow = torch.tanh(x)
    (slow_grad,) = torch.autograd.grad(slow, x, grad)
    torch.testing.assert_close(fast, slow, rtol=0, atol=3e-7)
    torch.testing.assert_close(fast_grad, slow_grad, rtol=0, atol=3e-6)
    assert isinstance(FastTanh(), torch.nn.Tanh)


def test_a_trained_configs_policy_uses_it_and_exports_as_tanh():
    from packetrow_train.policy_export import export_policy
    from packetrow_train.config import config_from_dict
    from packetrow_train.rollout import RolloutPPO
    from packetrow_train.selfplay import _policy_kwargs, make_vec_env
    from tests.test_training import tiny

    config = config_from_dict(tiny())
    model = RolloutPPO("MlpPolicy", make_vec_env(config), policy_kwargs=_policy_kwargs(config), seed=0, device="cpu")
    kinds = {type(m) for m in model.policy.modules()}
    assert FastTanh in kinds and torch.nn.Tanh not in kinds
    policy = export_policy(model, "tracked")
    assert policy.activation == "tanh"
    observation = np.random.default_rng(0).random(policy.observation_size).astype(np.float32)
    with torch.no_grad():
        features = model.policy.pi_features_extractor(torch.as_tensor(observation)[None])
        expected = model.policy.action_net(model.policy.mlp_extractor.forward_actor(features))[0].numpy()
    np.testing.assert_allclose(policy.logits(observation), expected, rtol=0, atol=1e-5)
