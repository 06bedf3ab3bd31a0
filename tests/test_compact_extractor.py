"""The CompactExtractor: embeds the supply slots' card-type indices of real compact observations in an SB3 policy."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gym = pytest.importorskip("gymnasium")
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402

from packetrow_env import actions  # noqa: E402
from packetrow_env.compact_observation import NUM_SLOTS, encoder  # noqa: E402
from packetrow_env.engine import Game  # noqa: E402
from packetrow_train.compact_extractor import CompactExtractor, compact_policy_kwargs, extractor_kwargs  # noqa: E402
from tests.positions import random_play  # noqa: E402

ENC = encoder()


def observations(mode: str = "tracked") -> tuple[np.ndarray, np.ndarray]:
    """Compact observations and action masks of the acting seat in a few random positions."""
    obs, masks = [], []
    for seed in range(6):
        game = random_play(Game.new(2 + seed % 4, seed=seed), 20 + 7 * seed, seed)
        obs.append(ENC.encode(game, game.current_player, mode))
        masks.append(game.legal_action_mask())
    return np.stack(obs), np.stack(masks)


def space(mode: str = "tracked") -> gym.spaces.Box:
    return gym.spaces.Box(0.0, ENC.high, (ENC.size_of(mode),), np.float32)


@pytest.mark.parametrize("mode", ["tracked", "online"])
def test_extractor_embeds_the_slot_indices_and_passes_the_rest(mode):
    torch.manual_seed(0)
    extractor = CompactExtractor(space(mode), **extractor_kwargs(embed_dim=4))
    obs, _ = observations(mode)
    features = extractor(torch.as_tensor(obs))
    assert features.shape == (len(obs), ENC.size_of(mode) - NUM_SLOTS + 4 * NUM_SLOTS) == (len(obs),
                                                                                          extractor.features_dim)
    table = extractor.embedding.weight.detach().numpy()
    expected = np.concatenate([table[obs[:, :NUM_SLOTS].astype(int)].reshape(len(obs), -1), obs[:, NUM_SLOTS:]], 1)
    np.testing.assert_array_equal(features.detach().numpy(), expected)


def test_extractor_gathers_index_floats_anywhere():
    box = gym.spaces.Box(0.0, 10.0, (6,), np.float32)
    extractor = CompactExtractor(box, index_slices=((2, 4),), num_types=5, embed_dim=3)
    x = torch.tensor([[0.5, 0.25, 2.0, 0.0, 7.0, 8.0]])
    out = extractor(x).detach().numpy()[0]
    table = extractor.embedding.weight.detach().numpy()
    np.testing.assert_array_equal(out, np.concatenate([table[2], table[0], [0.5, 0.25, 7.0, 8.0]]).astype(np.float32))


def test_extractor_refuses_bad_slices():
    with pytest.raises(ValueError, match="outside the observation"):
        CompactExtractor(gym.spaces.Box(0.0, 1.0, (10,), np.float32), index_slices=((5, 20),))


def test_maskable_ppo_policy_with_the_extractor_picks_legal_actions_on_real_observations():
    torch.manual_seed(0)
    kwargs = compact_policy_kwargs(net_arch=[32, 32])
    policy = MaskableActorCriticPolicy(space(), gym.spaces.Discrete(actions.NUM_ACTIONS), lambda _: 3e-4, **kwargs)
    assert isinstance(policy.features_extractor, CompactExtractor)
    obs, masks = observations()
    chosen, _ = policy.predict(obs, action_masks=masks, deterministic=False)
    assert chosen.shape == (len(obs),)
    assert masks[np.arange(len(obs)), chosen].all()
    values, log_prob, entropy = policy.evaluate_actions(torch.as_tensor(obs), torch.as_tensor(chosen),
                                                        action_masks=masks)
    assert torch.isfinite(values).all() and torch.isfinite(log_prob).all()
    log_prob.sum().backward()  # gradients reach the embedding
    assert policy.features_extractor.embedding.weight.grad.abs().sum() > 0


def test_shared_first_layer_equals_a_linear_layer_on_the_concatenation():
    torch.manual_seed(1)
    plain = CompactExtractor(space(), **extractor_kwargs(embed_dim=4))
    shared = CompactExtractor(space(), **extractor_kwargs(embed_dim=4, hidden=16))
    shared.embedding.load_state_dict(plain.embedding.state_dict())
    assert shared.features_dim == 16
    obs = torch.as_tensor(observations()[0])
    concatenated = plain(obs)  # embeddings first, then the plain floats
    weight, bias = shared.first_layer()
    assert plain.first_layer() is None and weight.shape == (plain.features_dim, 16)
    expected = np.tanh(concatenated.detach().numpy() @ weight + bias)
    np.testing.assert_allclose(shared(obs).detach().numpy(), expected, rtol=1e-5, atol=1e-5)


def test_maskable_ppo_learns_a_step_with_the_shared_first_layer():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from packetrow_env.compact_observation import encoder as compact
    obs, masks = observations()

    class Replay(gym.Env):
        """Real compact observations and masks in turn; every fourth step ends the episode."""
        observation_space = space()
        action_space = gym.spaces.Discrete(actions.NUM_ACTIONS)

        def reset(self, seed=None, options=None):
            self.t = 0
            return obs[0], {}

        def step(self, action):
            assert masks[self.t % len(obs), action]
            self.t += 1
            return obs[self.t % len(obs)], 1.0, self.t % 4 == 0, False, {}

        def action_masks(self):
            return masks[self.t % len(obs)]

    assert compact().size_of("tracked") == obs.shape[1]
    model = MaskablePPO("MlpPolicy", DummyVecEnv([Replay, Replay]), n_steps=16, batch_size=16, n_epochs=1, seed=0,
                        policy_kwargs=compact_policy_kwargs(hidden=32, net_arch=[16]), device="cpu")
    before = model.policy.features_extractor.embedding.weight.detach().clone()
    model.learn(32)
    assert not torch.equal(before, model.policy.features_extractor.embedding.weight)
