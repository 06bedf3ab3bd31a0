"""The auxiliary belief head (ppo.belief_head): its labels, its loss joined to PPO's, and its config key."""

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from packetrow_train.policy_export import export_policy  # noqa: E402
from packetrow_env import knowledge  # noqa: E402
from packetrow_env.vector import VectorGame  # noqa: E402
from packetrow_env.vector.learner import random_legal, starting_contract_labels  # noqa: E402
from packetrow_train.belief_head import NO_LABEL, OPPONENTS, BeliefPolicy, BeliefPPO  # noqa: E402
from packetrow_train.config import ConfigError, config_from_dict  # noqa: E402
from packetrow_train.pool import OpponentPool  # noqa: E402
from packetrow_train.rollout import RolloutPPO  # noqa: E402
from packetrow_train.selfplay import _policy_kwargs, ppo_class  # noqa: E402
from packetrow_train.vec_selfplay import SelfPlayVecEnv  # noqa: E402

CLASSES = 12


def head_model(num_envs=8, n_steps=32, weight=1.0, mixture=None):
    env = SelfPlayVecEnv(num_envs, OpponentPool(mixture or {"heuristic": 1.0}), num_players=[2, 4], seed=0)
    model = BeliefPPO(BeliefPolicy, env, n_steps=n_steps, batch_size=num_envs * n_steps, n_epochs=1, seed=0,
                      learning_rate=3e-3, policy_kwargs=dict(net_arch=[32], belief_weight=weight,
                                                             belief_classes=CLASSES))
    return env, model


@pytest.mark.parametrize("mode", ["tracked", "online", "table", "full"])
def test_labels_are_the_starting_contracts_knowledge_hides(mode):
    """A label is set exactly for the opponents knowledge.hidden_starting_seats names, and names their contract."""
    vg = VectorGame(num_players=[2, 3, 4, 5] * 4, seeds=list(range(16)))
    rng = np.random.default_rng(0)
    checked = 0
    for step in range(40):
        labels = starting_contract_labels(vg, mode)
        for row in range(vg.num_games):
            seat = int(vg.current_player[row])
            if seat < 0:
                assert (labels[row] == NO_LABEL).all()
                continue
            state = vg.game(row).state
            n = state.num_players
            hidden = set(knowledge.hidden_starting_seats(state, seat, mode))
            for offset in range(1, OPPONENTS + 1):
                label = labels[row, offset - 1]
                q = (seat + offset) % n
                if offset >= n or q not in hidden:
                    assert label == NO_LABEL
                else:
                    assert vg.cards.start_contracts[label] == state.starting_contract[q]
                    checked += 1
        vg.step(random_legal(vg.legal_action_mask(), rng), where=vg.current_player >= 0)
    assert (checked > 0) == knowledge.hides_held_starting_contracts(mode)  # all but full


def test_the_head_loss_joins_ppos_gradient():
    """The gradient of PPO's loss on a minibatch with labels is PPO's own plus weight x the head's cross-entropy's."""
    _, model = head_model(weight=0.7)
    policy = model.policy
    obs = torch.as_tensor(np.random.default_rng(0).random((6,) + model.observation_space.shape), dtype=torch.float32)
    targets = torch.as_tensor([[0, 3, -1, -1], [5, -1, -1, -1], [1, 2, 4, -1], [-1] * 4, [7, 7, 7, 7], [11, 0, 1, 2]])
    masks = torch.ones((6, model.action_space.n), dtype=torch.bool)
    actions = torch.zeros(6, dtype=torch.long)

    def gradients(with_labels: bool):
        policy.zero_grad()
        policy.belief_targets = targets if with_labels else None
        values, log_prob, entropy = policy.evaluate_actions(obs, actions, masks)
        (log_prob.sum() + values.sum()).backward()
        return {name: p.grad.clone() if p.grad is not None else torch.zeros_like(p)
                for name, p in policy.named_parameters()}

    plain, joined = gradients(False), gradients(True)
    assert policy.belief_targets is None  # a minibatch's labels are used once
    policy.zero_grad()
    latent = policy.policy_latent(obs)
    (0.7 * policy.belief_loss(latent, targets)).backward()
    for name, p in policy.named_parameters():
        head = p.grad if p.grad is not None else torch.zeros_like(p)
        torch.testing.assert_close(joined[name], plain[name] + head, rtol=1e-5, atol=1e-6)
    assert joined["belief_head.weight"].abs().sum() > 0


def test_the_head_learns_on_a_tiny_run(tmp_path):
    """Against the heuristic (whose takes give its contract away), repeated updates on one rollout lower the head's
    loss; the exported policy keeps its format and the head's probabilities are distributions."""
    env, model = head_model(num_envs=16, n_steps=32)
    model.learn(16 * 32)
    buffer = model.rollout_buffer
    assert (buffer.labels != NO_LABEL).any()
    for _ in range(15):
        model.train()
    history = model.belief_loss_history
    assert len(history) == 16
    assert history[-1] < 0.8 * history[0]
    probabilities = model.policy.belief_probabilities(env.games.observe())
    assert probabilities.shape == (16, OPPONENTS, CLASSES)
    np.testing.assert_allclose(probabilities.sum(axis=-1), 1.0, rtol=1e-6)
    saved = np.load(export_policy(model, "tracked").save(tmp_path / "policy.npz"))
    assert set(saved.files) == {"meta", "layer_0_weight", "layer_0_bias", "action_weight", "action_bias"}


def test_the_option_off_is_the_plain_trainer():
    """ppo.belief_head 0 (the default) trains MaskablePPO (with the lean collector) and its MlpPolicy with the
    policy kwargs of before."""
    base = {"env": {"vec_env": "batched", "observation_encoding": "compact"}, "ppo": {"extractor_layer": 64}}
    off = config_from_dict(base)
    assert off.ppo.belief_head == 0
    assert ppo_class(off) == (RolloutPPO, "MlpPolicy") and issubclass(RolloutPPO, MaskablePPO)
    assert not any(key.startswith("belief") for key in _policy_kwargs(off))
    on = config_from_dict({**base, "ppo": {"extractor_layer": 64, "belief_head": 0.5}})
    assert ppo_class(on) == (BeliefPPO, BeliefPolicy)
    assert _policy_kwargs(on)["belief_weight"] == 0.5 and _policy_kwargs(on)["belief_classes"] == CLASSES


@pytest.mark.parametrize("ppo, env, message", [
    ({"belief_head": -0.1}, {"vec_env": "batched"}, "ppo.belief_head must be >= 0"),
    ({"belief_head": "yes"}, {"vec_env": "batched"}, "ppo.belief_head must be a number"),
    ({"belief_head": 1.0}, {"vec_env": "dummy"}, "ppo.belief_head (1.0) needs env.vec_env 'batched'"),
])
def test_bad_belief_head_values_are_errors(ppo, env, message):
    with pytest.raises(ConfigError) as error:
        config_from_dict({"ppo": ppo, "env": env}, "test.yaml")
    assert message in str(error.value) and "test.yaml" in str(error.value)
