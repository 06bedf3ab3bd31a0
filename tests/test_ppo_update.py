"""The PPO update written out (train/ppo_update.py) against sb3-contrib's MaskablePPO.train, and MMD's terms
(train/mmd.py) against a hand computation; the mmd config section's checks."""

import json
import zipfile

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402
from stable_baselines3.common.logger import configure  # noqa: E402

from packetrow_agents.policy import NumpyPolicy, PolicyAgent  # noqa: E402
from packetrow_env.engine import Game  # noqa: E402
from packetrow_env.seat_view import SeatView  # noqa: E402
from packetrow_train import ppo_update  # noqa: E402
from packetrow_train.config import ConfigError, config_from_dict, load_config  # noqa: E402
from packetrow_train.machine import native_bf16, update_dtype  # noqa: E402
from packetrow_train.mmd import MMD, mmd_of  # noqa: E402
from packetrow_train.policy_export import export_policy  # noqa: E402
from packetrow_train.rollout import RolloutPPO  # noqa: E402
from packetrow_train.selfplay import _policy_kwargs, make_vec_env, train  # noqa: E402
from tests.test_training import CONFIGS, tiny  # noqa: E402


def _model_with_a_rollout(share: bool, **ppo):
    """A RolloutPPO with SB3's own policy class (its distribution objects, not the lean forward) on tiny()'s env,
    its rollout buffer full of one collected rollout."""
    data = tiny()
    data["ppo"]["share_extractor"] = share
    config = config_from_dict(data)
    env = make_vec_env(config)
    model = RolloutPPO(MaskableActorCriticPolicy, env, policy_kwargs=_policy_kwargs(config), seed=0, device="cpu",
                       n_steps=32, batch_size=16, n_epochs=2, **ppo)
    env.add_snapshot(export_policy(model, "tracked"), 0)
    _, callback = model._setup_learn(total_timesteps=10 * 32 * env.num_envs)
    assert model.collect_rollouts(env, callback, model.rollout_buffer, model.n_steps)
    model._update_current_progress_remaining(model.num_timesteps, model._total_timesteps)
    model.set_logger(configure(None, []))
    return model


def _after(model, update, seed: int = 5):
    """The weights and the logged values after ``update(model)`` from the model's current state, which is restored."""
    weights = {k: v.clone() for k, v in model.policy.state_dict().items()}
    optimizer = model.policy.optimizer.state_dict()
    n_updates = model._n_updates
    np.random.seed(seed)  # the minibatches' draw
    update(model)
    after = {k: v.clone() for k, v in model.policy.state_dict().items()}
    logged = dict(model.logger.name_to_value)
    model.logger.dump()
    model.policy.load_state_dict(weights)
    model.policy.optimizer.load_state_dict(optimizer)
    model._n_updates = n_updates
    return after, logged


@pytest.mark.parametrize("share, ppo", [(True, {}), (False, {"clip_range_vf": 0.1, "target_kl": 1e-7})])
def test_the_update_is_maskableppos_train(share, ppo):
    """On the same rollout and numpy seed, with MMD off, one update leaves the weights of MaskablePPO.train's
    update (to float tolerance) and logs its keys with its values; the second case clips the value loss and stops
    early on approx_kl."""
    model = _model_with_a_rollout(share, **ppo)
    sb3_weights, sb3_logged = _after(model, MaskablePPO.train)
    weights, logged = _after(model, ppo_update.update)
    moved = [k for k in weights if not torch.equal(weights[k], model.policy.state_dict()[k])]
    assert len(moved) > 4
    for key in weights:
        torch.testing.assert_close(weights[key], sb3_weights[key], rtol=1e-4, atol=1e-6)
    assert logged.keys() == sb3_logged.keys()
    for key, value in sb3_logged.items():
        np.testing.assert_allclose(logged[key], value, rtol=1e-4, atol=1e-6, err_msg=key)
    if ppo:
        assert logged["train/n_updates"] == 1  # stopped in the first epoch
        assert "train/clip_range_vf" in logged


def _linear_policy(weight, bias) -> NumpyPolicy:
    """A NumpyPolicy with no hidden layer: logits = observation @ weight + bias."""
    return NumpyPolicy([], [], np.asarray(weight, np.float32), np.asarray(bias, np.float32))


# a 3-row batch of 4 actions, some illegal; the learner's logits, the actions taken and the behaviour's log-probs
OBSERVATIONS = np.array([[1.0, 0.0], [0.5, -1.0], [0.0, 2.0]], np.float32)
MASKS = np.array([[1, 1, 0, 1], [0, 1, 1, 0], [1, 1, 1, 1]], bool)
LOGITS = np.array([[0.3, -0.2, 5.0, 1.1], [2.0, 0.4, -0.6, 0.0], [0.0, 0.7, -1.3, 0.2]])
ACTIONS = np.array([3, 2, 1])
OLD_LOG_PROB = np.array([-1.0, -0.9, -1.6])
MAGNET_WEIGHT = [[0.5, -1.0, 2.0, 0.0], [0.1, 0.3, -0.2, 1.0]]
MAGNET_BIAS = [0.0, 0.2, -0.1, 0.4]


def _masked_log_softmax(logits, masks):
    """By hand: log of exp(logit) / the sum of exp over the row's legal actions, on legal actions."""
    exp = np.where(masks, np.exp(logits), 0.0)
    return np.log(exp / exp.sum(axis=1, keepdims=True), where=masks, out=np.full(logits.shape, -np.inf))


@pytest.mark.parametrize("magnet", ["uniform", "policy"])
def test_the_mmd_terms_match_a_hand_computation(magnet):
    """KL(pi || magnet) over each row's legal actions and r log r - (r - 1) for the action taken, averaged over
    the rows, computed with numpy from the definitions (the uniform magnet's term is computed as log(legal) minus
    the entropy, the reference policy's from both distributions)."""
    policy = _linear_policy(MAGNET_WEIGHT, MAGNET_BIAS) if magnet == "policy" else None
    mmd = MMD(policy, magnet_coef=0.3, magnet_coef_end=0.0, schedule="constant", kl_coef=0.2)
    log_pi = _masked_log_softmax(LOGITS, MASKS)
    pi = np.where(MASKS, np.exp(log_pi), 0.0)
    if magnet == "uniform":
        log_magnet = np.where(MASKS, -np.log(MASKS.sum(axis=1, keepdims=True)), -np.inf)
    else:
        log_magnet = _masked_log_softmax(OBSERVATIONS.astype(np.float64) @ MAGNET_WEIGHT + MAGNET_BIAS, MASKS)
    expected_magnet = np.mean([sum(pi[r, a] * (log_pi[r, a] - log_magnet[r, a]) for a in range(4) if MASKS[r, a])
                               for r in range(3)])
    ratio = np.exp(log_pi[np.arange(3), ACTIONS] - OLD_LOG_PROB)
    expected_previous = np.mean(ratio * np.log(ratio) - (ratio - 1))

    log_p = torch.tensor(LOGITS, dtype=torch.float32).masked_fill(~torch.tensor(MASKS), -1e8).log_softmax(dim=-1)
    log_prob = log_p.gather(1, torch.tensor(ACTIONS).reshape(-1, 1)).reshape(-1)
    entropy = -(log_p.exp() * log_p).masked_fill(~torch.tensor(MASKS), 0.0).sum(dim=-1)
    to_magnet, to_previous = ppo_update.mmd_terms(mmd, log_p, log_prob, entropy,
                                                  torch.tensor(OLD_LOG_PROB, dtype=torch.float32),
                                                  torch.tensor(OBSERVATIONS), torch.tensor(MASKS))
    assert expected_magnet > 0.01 and expected_previous > 0.01
    np.testing.assert_allclose(to_magnet.item(), expected_magnet, rtol=1e-5)
    np.testing.assert_allclose(to_previous.item(), expected_previous, rtol=1e-5)


def test_the_magnet_weight_anneals_over_the_run():
    """constant stays at the start; linear and geometric go from start to end as the progress remaining falls."""
    def coefs(schedule, end):
        mmd = MMD(None, magnet_coef=0.4, magnet_coef_end=end, schedule=schedule, kl_coef=0.1)
        return [mmd.coef(progress) for progress in (1.0, 0.5, 0.0)]

    np.testing.assert_allclose(coefs("constant", 0.0), [0.4, 0.4, 0.4])
    np.testing.assert_allclose(coefs("linear", 0.0), [0.4, 0.2, 0.0])
    np.testing.assert_allclose(coefs("geometric", 0.004), [0.4, 0.04, 0.004])


def test_an_update_with_mmd_adds_its_weighted_terms_to_the_loss():
    """With the magnet's terms on, the loss of a one-minibatch update is PPO's plus magnet_coef x KL(pi || magnet)
    plus kl_coef x KL(pi || pi_old) (as logged), and the weights differ from PPO's alone; the shipped policy as the
    magnet reads the run's observations."""
    model = _model_with_a_rollout(True)
    model.batch_size, model.n_epochs = model.n_steps * model.env.num_envs, 1
    plain_weights, plain = _after(model, ppo_update.update)
    data = tiny()
    data["mmd"] = {"enabled": True, "magnet": "ppo", "magnet_coef": 0.5, "magnet_coef_end": 0.1,
                   "magnet_schedule": "linear", "kl_coef": 2.0}
    model.mmd = mmd_of(config_from_dict(data))
    weights, logged = _after(model, ppo_update.update)
    progress = model._current_progress_remaining
    assert 0 < progress < 1
    np.testing.assert_allclose(logged["train/magnet_coef"], 0.5 + (0.1 - 0.5) * (1 - progress))
    # one minibatch: the policy is still the behaviour policy, whose KL to itself is 0
    assert logged["train/magnet_kl"] > 0 and logged["train/previous_kl"] == pytest.approx(0, abs=1e-6)
    ppo_loss = (logged["train/policy_gradient_loss"] + model.ent_coef * logged["train/entropy_loss"]
                + model.vf_coef * logged["train/value_loss"])
    np.testing.assert_allclose(plain["train/loss"], ppo_loss, rtol=1e-5)
    np.testing.assert_allclose(logged["train/loss"], ppo_loss + logged["train/magnet_coef"] * logged["train/magnet_kl"]
                               + 2.0 * logged["train/previous_kl"], rtol=1e-5)
    assert not all(torch.equal(weights[k], plain_weights[k]) for k in weights)


@pytest.mark.parametrize("mmd, words", [
    ({"magnet_coef": -0.1}, "mmd.magnet_coef must be a finite number >= 0"),
    ({"kl_coef": "lots"}, "mmd.kl_coef must be a number"),
    ({"magnet_schedule": "cosine"}, "mmd.magnet_schedule must be one of constant, linear, geometric"),
    ({"magnet_schedule": "geometric", "magnet_coef_end": 0.0}, "geometric needs magnet_coef and magnet_coef_end > 0"),
    ({"enabled": True, "magnet": "heuristic"}, "mmd.magnet must be 'uniform' or a policy export"),
    ({"enabled": True, "magnet": "nonsense"}, "mmd.magnet must be 'uniform' or a policy export"),
    ({"enabled": True, "magnet": "ppo:deterministic=false"}, "mmd.magnet must be 'uniform' or a policy export"),
    ({"enabled": True, "magnet": "ppo:path=no/such/model.npz"}, "no model file at no/such/model.npz"),
    ({"enabled": True, "magnet": "ppo:path=model.zip"}, "SB3 checkpoints (.zip) are not loaded"),
    ({"enabled": True, "magnet": "ppo", "magnt": 1}, "unknown key mmd.magnt; allowed keys in mmd: enabled, magnet"),
])
def test_bad_mmd_values_are_refused_with_what_is_allowed(mmd, words):
    data = tiny()
    data["mmd"] = mmd
    with pytest.raises(ConfigError, match="config: ") as error:
        config_from_dict(data)
    assert words in str(error.value)


def test_a_magnet_of_other_observations_is_refused():
    """The shipped policy reads tracked compact observations: a onehot or an online run cannot use it as its magnet."""
    for env in ({"observation_encoding": "onehot"}, {"observation_mode": "online"}):
        data = tiny()
        data["env"].update(env)
        data["ppo"]["extractor_layer"] = 0
        data["mmd"] = {"enabled": True, "magnet": "ppo"}
        with pytest.raises(ConfigError, match="mmd.magnet 'ppo' reads tracked compact observations of 778 floats"):
            config_from_dict(data)
    data = tiny(pipeline=False)
    data["ppo"]["belief_head"] = 0.1
    data["mmd"] = {"enabled": True}
    with pytest.raises(ConfigError, match="mmd.enabled needs ppo.belief_head 0"):
        config_from_dict(data)


def test_the_mmd_config_is_quicks_with_mmd_on():
    """configs/mmd.yaml is quick.yaml with its name, the mmd section and no separate entropy bonus."""
    quick, mmd = (yaml.safe_load((CONFIGS / f"{name}.yaml").read_text()) for name in ("quick", "mmd"))
    assert mmd.pop("mmd")["enabled"] and mmd["ppo"].pop("ent_coef") == 0
    quick["ppo"].pop("ent_coef")
    assert {**mmd, "name": "quick"} == quick
    assert mmd_of(load_config("mmd")).schedule == "geometric"


def test_the_mmd_config_trains_from_a_plain_checkpoint_and_its_checkpoints_keep_loading(tmp_path, capsys):
    """A plain PPO checkpoint (no mmd section) resumes under configs/mmd.yaml's mmd on a tiny budget: its updates
    log MMD's terms, and what it saves holds no MMD state (so it resumes without the section, and its .npz
    export plays as any other)."""
    mmd_yaml = yaml.safe_load((CONFIGS / "mmd.yaml").read_text())

    def config(total: int, mmd: bool):
        data = tiny(total_timesteps=total)
        data["eval"].update(every=0, final_games=0)
        data["checkpoint"]["every"] = 0
        data["log"].update(tensorboard=False, verbose=1)
        if mmd:
            data.update(name="mmd", mmd=mmd_yaml["mmd"])
            data["ppo"]["ent_coef"] = mmd_yaml["ppo"]["ent_coef"]
        return config_from_dict(data)

    plain = train(config(512, mmd=False), out=tmp_path / "plain")
    assert "train/magnet_kl" not in capsys.readouterr().out and plain.model.mmd is None
    mmd = train(config(1536, mmd=True), out=tmp_path / "mmd", resume=plain.model_path, trust_checkpoint=True)
    printed = capsys.readouterr().out
    assert mmd.model.mmd is not None and mmd.session_timesteps >= 1024
    for key in ("magnet_kl", "previous_kl", "magnet_coef"):
        assert f"|    {key}" in printed
    with zipfile.ZipFile(mmd.model_path) as saved:
        assert "mmd" not in json.loads(saved.read("data"))
    again = train(config(2048, mmd=False), out=tmp_path / "again", resume=mmd.model_path, trust_checkpoint=True)
    assert again.model.mmd is None and again.model.num_timesteps >= 2048
    agent = PolicyAgent.load(mmd.npz_path)
    assert agent.observation_encoding == "compact" and agent.metadata["num_timesteps"] == mmd.model.num_timesteps
    game = Game.new(num_players=2, seed=0)
    game.step(agent.act(SeatView(game)))


def _flat_step(after: dict, before: dict) -> torch.Tensor:
    return torch.cat([(after[k] - before[k]).flatten() for k in before if before[k].is_floating_point()])


def test_a_bf16_update_keeps_float32_weights_and_heads_and_steps_as_the_float32_one():
    """With ``update_dtype`` bfloat16 (the config's precision: bf16) the hidden layers run under autocast: the
    heads' outputs, the log-probabilities and every weight stay float32, the log-probabilities are those of the
    float32 forward to bfloat16's rounding, and the update's step points the way of the float32 update's."""
    model = _model_with_a_rollout(False)
    batch = next(model.rollout_buffer.get(64))
    masks = torch.as_tensor(batch.action_masks, dtype=torch.bool)
    with torch.no_grad():
        full = ppo_update.evaluate(model.policy, batch.observations, batch.actions, masks)
        half = ppo_update.evaluate(model.policy, batch.observations, batch.actions, masks, torch.bfloat16)
    for exact, rounded in zip(full, half):
        assert rounded.dtype == torch.float32
        torch.testing.assert_close(rounded, exact, atol=0.05, rtol=0.02)
    before = {k: v.clone() for k, v in model.policy.state_dict().items()}
    float32, _ = _after(model, ppo_update.update)
    model.update_dtype = torch.bfloat16
    bfloat16, logged = _after(model, ppo_update.update)
    assert all(bfloat16[k].dtype == before[k].dtype for k in before)
    exact, rounded = _flat_step(float32, before), _flat_step(bfloat16, before)
    assert rounded.abs().sum() > 0
    assert torch.nn.functional.cosine_similarity(exact, rounded, dim=0) > 0.9
    assert np.isfinite(logged["train/loss"])


def test_the_precision_picks_the_updates_autocast_dtype_and_a_bad_one_is_refused():
    """fp32 is float32 throughout, bf16 bfloat16 hidden layers wherever asked, auto bfloat16 only where the
    device computes it natively; any other precision is a ConfigError naming the choices, and so is bf16 with a
    belief head (whose trainer is float32)."""
    cpu = torch.device("cpu")
    assert update_dtype("fp32", cpu) is None and update_dtype("bf16", cpu) is torch.bfloat16
    assert update_dtype("auto", cpu) is (torch.bfloat16 if native_bf16(cpu) else None)
    assert load_config("quick").precision == "fp32"  # the main job as measured (docs/training.md)
    with pytest.raises(ConfigError, match="precision must be one of auto, fp32, bf16, got 'fp16'"):
        config_from_dict(tiny(precision="fp16"))
    belief = tiny(precision="bf16", pipeline=False)
    belief["ppo"]["belief_head"] = 0.5
    with pytest.raises(ConfigError, match="precision 'bf16' needs ppo.belief_head 0 .got 0.5.: the belief head's "
                                          "trainer updates in float32"):
        config_from_dict(belief)


def test_a_bf16_run_reproduces_from_its_seed(tmp_path):
    """Two runs of one bf16 config and seed train the same weights (autocast's arithmetic is deterministic on the
    CPU too)."""
    def run(name):
        data = tiny(total_timesteps=512, precision="bf16")
        data["eval"].update(every=0, final_games=0)
        data["checkpoint"]["every"] = 0
        data["log"]["tensorboard"] = False
        return train(config_from_dict(data), out=tmp_path / name).model
    first, second = run("a"), run("b")
    assert first.update_dtype is torch.bfloat16
    for (key, a), b in zip(first.policy.state_dict().items(), second.policy.state_dict().values()):
        assert torch.equal(a, b), key
