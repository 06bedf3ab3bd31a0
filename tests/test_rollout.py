"""The lean rollout collector (train/rollout.py) against SB3's: the same network outputs and log-probabilities,
samples that follow the masked softmax, and training runs that reproduce from the seed; the pipeline's rollouts
collected one update behind."""

import copy

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

from packetrow_agents.policy import NumpyPolicy  # noqa: E402
from packetrow_train.config import config_from_dict  # noqa: E402
from packetrow_train.policy_export import export_policy  # noqa: E402
from packetrow_train import rollout_process  # noqa: E402
from packetrow_train.rollout import (  # noqa: E402
    LeanMaskablePolicy, LeanRolloutBuffer, RolloutPPO, _compiled_actor, _forward, _sample)
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402
from packetrow_train.selfplay import _policy_kwargs, make_vec_env, train  # noqa: E402
from tests.test_training import tiny  # noqa: E402


def _model(share: bool, n_steps: int):
    """A RolloutPPO on tiny()'s env (policy and value network sharing their extractor or not) and that env."""
    data = tiny()
    data["ppo"]["share_extractor"] = share
    config = config_from_dict(data)
    env = make_vec_env(config)
    model = RolloutPPO("MlpPolicy", env, policy_kwargs=_policy_kwargs(config), seed=0, device="cpu",
                       n_steps=n_steps, batch_size=16)
    env.add_snapshot(export_policy(model, "tracked"), 0)
    return model, env


@pytest.mark.parametrize("share", [False, True])
def test_the_lean_forward_is_sb3s(share):
    """Logits, values and the sampled actions' log-probabilities are SB3's for the same observations."""
    model, env = _model(share, n_steps=8)
    observations, masks = env.reset(), env.action_masks()
    with torch.no_grad():
        logits, values = _forward(model.policy, observations)
        actions = np.empty(len(masks), np.int64)
        log_probs = np.empty(len(masks), np.float32)
        _sample(logits.numpy(), masks, np.random.default_rng(0).random(logits.shape), actions, log_probs)
        expected_values, expected_log_probs, _ = MaskableActorCriticPolicy.evaluate_actions(model.policy,
            torch.as_tensor(observations), torch.as_tensor(actions), action_masks=masks)
    assert masks[np.arange(len(masks)), actions].all()
    np.testing.assert_allclose(values.numpy(), expected_values.numpy(), rtol=0, atol=0)
    np.testing.assert_allclose(log_probs, expected_log_probs.numpy(), rtol=0, atol=1e-5)


@pytest.mark.parametrize("share", [False, True])
def test_the_compiled_actor_gives_the_torch_forwards_logits(share):
    """The collector's compiled actor (the policy's numpy export in one kernel call) gives torch's logits to float32
    rounding; a policy the numpy policy cannot run (another extractor) gets none, and torch's forward acts."""
    model, env = _model(share, n_steps=8)
    observations = env.reset()
    actor = _compiled_actor(model.policy)
    with torch.no_grad():
        expected = _forward(model.policy, observations, critic=False)[0].numpy()
    logits = actor(observations)
    assert logits.dtype == np.float32 and logits.shape == expected.shape
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(actor(observations[:3]), expected[:3], rtol=1e-5, atol=1e-5)
    other = copy.deepcopy(model.policy)
    other.pi_features_extractor = other.features_extractor = torch.nn.Identity()
    assert _compiled_actor(other) is None


@pytest.mark.parametrize("share", [False, True])
def test_the_lean_update_forward_is_sb3s(share):
    """LeanMaskablePolicy.evaluate_actions gives SB3's values, log-probabilities and entropies, and the same
    gradients of a PPO-style loss, for rollout data with masked actions (and SB3's path without masks); the
    LeanRolloutBuffer's minibatches are SB3's."""
    model, env = _model(share, n_steps=16)
    assert type(model.policy) is LeanMaskablePolicy
    model.learn(total_timesteps=16 * env.num_envs)
    batch = next(model.rollout_buffer.get(64))
    masks = batch.action_masks
    assert (masks.sum(axis=1) < masks.shape[1]).all()  # every row has illegal actions
    actions = batch.actions.long().flatten()
    results = []
    for evaluate in (MaskableActorCriticPolicy.evaluate_actions, LeanMaskablePolicy.evaluate_actions):
        model.policy.zero_grad()
        values, log_prob, entropy = evaluate(model.policy, batch.observations, actions, action_masks=masks)
        (values.sum() + log_prob.exp().sum() - 0.01 * entropy.sum()).backward()
        grads = [p.grad.clone() for p in model.policy.parameters() if p.grad is not None]
        results.append((values.detach(), log_prob.detach(), entropy.detach(), grads))
    (sb3_values, sb3_log_prob, sb3_entropy, sb3_grads), (values, log_prob, entropy, grads) = results
    torch.testing.assert_close(values, sb3_values, rtol=0, atol=0)
    torch.testing.assert_close(log_prob, sb3_log_prob, rtol=0, atol=1e-5)
    torch.testing.assert_close(entropy, sb3_entropy, rtol=0, atol=1e-5)
    assert len(grads) == len(sb3_grads) and len(grads) > 4
    for grad, sb3_grad in zip(grads, sb3_grads):
        torch.testing.assert_close(grad, sb3_grad, rtol=1e-4, atol=1e-5)
    assert isinstance(model.rollout_buffer, LeanRolloutBuffer)
    rows = np.random.default_rng(0).permutation(16 * env.num_envs)[:50]
    lean, sb3 = (cls._get_samples(model.rollout_buffer, rows) for cls in (LeanRolloutBuffer, MaskableRolloutBuffer))
    assert all(a.dtype == b.dtype and torch.equal(a, b) for a, b in zip(lean, sb3))
    unmasked = model.policy.evaluate_actions(batch.observations, actions)
    for batch_size in (64, None):  # a rollout's minibatches from the same numpy draw: SB3's, in SB3's order
        minibatches = []
        for cls in (LeanRolloutBuffer, MaskableRolloutBuffer):
            buffer = copy.deepcopy(model.rollout_buffer)
            buffer.reset()
            for step in range(buffer.buffer_size):
                rng = np.random.default_rng(step)
                buffer.add(rng.random((env.num_envs, buffer.obs_shape[0])), rng.integers(0, 9, (env.num_envs, 1)),
                           rng.random(env.num_envs), np.zeros(env.num_envs), torch.as_tensor(rng.random(env.num_envs)),
                           torch.as_tensor(rng.random(env.num_envs)), action_masks=rng.random((env.num_envs, buffer.mask_dims)) < 0.5)
            buffer.compute_returns_and_advantage(torch.zeros(env.num_envs), np.zeros(env.num_envs))
            np.random.seed(7)
            minibatches.append(list(cls.get(buffer, batch_size)))
        assert len(minibatches[0]) == len(minibatches[1]) > 0
        for lean_batch, sb3_batch in zip(*minibatches):
            assert all(a.dtype == b.dtype and torch.equal(a, b) for a, b in zip(lean_batch, sb3_batch))
    expected = MaskableActorCriticPolicy.evaluate_actions(model.policy, batch.observations, actions)
    assert all(torch.equal(a, b) for a, b in zip(unmasked, expected))


def test_samples_follow_the_masked_softmax():
    """Over many draws each legal action comes up with its masked softmax probability; illegal ones never."""
    logits = np.array([[2.0, -1.0, 0.5, 3.0, 0.0, 1.0]], np.float32).repeat(40_000, axis=0)
    masks = np.array([[True, True, False, True, False, True]]).repeat(len(logits), axis=0)
    actions = np.empty(len(logits), np.int64)
    log_probs = np.empty(len(logits), np.float32)
    _sample(logits, masks, np.random.default_rng(1).random(logits.shape), actions, log_probs)
    legal = np.where(masks[0], np.exp(logits[0]), 0.0)
    expected = legal / legal.sum()
    np.testing.assert_allclose(np.bincount(actions, minlength=6) / len(actions), expected, atol=0.01)
    np.testing.assert_allclose(log_probs, np.log(expected[actions]), rtol=1e-5)


def _trained_weights(path, seed: int = 3, pipeline: bool = True, **top) -> list[np.ndarray]:
    """The exported weights at the end of a tiny() run (no evaluations or checkpoints unless ``top`` says)."""
    data = tiny(seed=seed, total_timesteps=1024, pipeline=pipeline)
    data["eval"].update(every=0, final_games=0)
    data["checkpoint"]["every"] = 0
    data["log"]["tensorboard"] = False
    data.update(top)
    result = train(config_from_dict(data), out=path)
    assert isinstance(result.model, RolloutPPO)
    policy = NumpyPolicy.load_npz(result.npz_path)
    return policy.weights + [policy.action_weight]


@pytest.mark.parametrize("pipeline", ["off", "thread", "process"])
def test_training_reproduces_from_the_seed(tmp_path, monkeypatch, pipeline):
    """Two runs of one config and seed end with the same weights; another seed with others (with the pipeline's
    rollouts on a second thread or in a forked process too)."""
    monkeypatch.setattr(RolloutPPO, "pipeline_in_process", pipeline == "process")
    first, again, other = (_trained_weights(tmp_path / name, seed, pipeline != "off")
                           for name, seed in (("a", 3), ("b", 3), ("c", 4)))
    assert all(np.array_equal(x, y) for x, y in zip(first, again))
    assert not all(np.array_equal(x, y) for x, y in zip(first, other))


@pytest.mark.skipif(not rollout_process.available(), reason="rollouts in a process need fork (Linux)")
def test_rollouts_in_a_process_train_as_on_a_thread(tmp_path, monkeypatch):
    """Differential: the pipeline's rollouts collected in a forked process give the same run, weight for weight,
    as on a thread, across snapshots added to the pool, periodic evaluations and checkpoints."""
    runs = []
    for in_process in (False, True):
        monkeypatch.setattr(RolloutPPO, "pipeline_in_process", in_process)
        runs.append(_trained_weights(tmp_path / str(in_process), total_timesteps=2048,
                                     eval=dict(tiny()["eval"], every=1024), checkpoint={"every": 1024}))
    assert all(np.array_equal(x, y) for x, y in zip(*runs))
    assert len(list((tmp_path / "True" / "snapshots").glob("*.npz"))) >= 4  # the pool grew while it ran


def test_fast_adam_makes_adams_update():
    """Adam switched to its fused (or multi-tensor) kernel moves the weights as the default one does."""
    from packetrow_train.rollout import fast_adam

    torch.manual_seed(0)
    start = [torch.randn(64, 754), torch.randn(64), torch.randn(61, 128)]
    grads = [[torch.randn_like(w) for w in start] for _ in range(5)]
    results = []
    for fast in (False, True):
        params = [torch.nn.Parameter(w.clone()) for w in start]
        optimizer = torch.optim.Adam(params, lr=1e-3, eps=1e-5)
        if fast:
            fast_adam(optimizer)
        for step in grads:
            for p, g in zip(params, step):
                p.grad = g.clone()
            optimizer.step()
        results.append([p.detach() for p in params])
    assert any(group.get("fused") or group.get("foreach") for group in optimizer.param_groups)
    for slow, fast in zip(*results):
        torch.testing.assert_close(fast, slow, rtol=1e-5, atol=1e-6)
    assert not torch.equal(results[0][0], start[0])


def _pipelined_model(n_steps=8):
    config = config_from_dict(tiny())
    env = make_vec_env(config)
    model = RolloutPPO("MlpPolicy", env, policy_kwargs=_policy_kwargs(config), seed=0, device="cpu", n_steps=n_steps,
                       batch_size=16, n_epochs=1)
    model.pipeline = True
    env.add_snapshot(export_policy(model, "tracked"), 0)
    return model, env


def test_the_pipeline_collects_each_rollout_with_the_weights_before_the_update():
    """The second rollout is collected during the first update, acting with the weights from before it: its stored
    log-probabilities are those weights', not the trained ones'; its steps are counted and the run ends on time."""
    model, env = _pipelined_model()
    start = {k: v.clone() for k, v in model.policy.state_dict().items()}
    model.learn(total_timesteps=2 * 8 * env.num_envs)
    assert model.num_timesteps == 2 * 8 * env.num_envs
    behaviour = model._behaviour.state_dict()
    assert all(torch.equal(behaviour[k], start[k]) for k in start)
    assert not all(torch.equal(model.policy.state_dict()[k], start[k]) for k in start)
    buffer = model.rollout_buffer  # the second rollout, handed over for the second update
    observations = torch.as_tensor(buffer.observations.reshape(-1, buffer.observations.shape[-1]))
    actions = torch.as_tensor(buffer.actions.reshape(-1))
    masks = buffer.action_masks.reshape(len(actions), -1)
    with torch.no_grad():
        _, then, _ = model._behaviour.evaluate_actions(observations, actions, action_masks=masks)
        _, now, _ = model.policy.evaluate_actions(observations, actions, action_masks=masks)
    np.testing.assert_allclose(buffer.log_probs.reshape(-1), then.numpy(), rtol=0, atol=1e-5)
    assert not np.allclose(buffer.log_probs.reshape(-1), now.numpy(), rtol=0, atol=1e-5)


def test_an_error_in_the_rollout_thread_reaches_the_caller():
    """An exception while the next rollout is collected beside the update is raised by learn()."""
    model, env = _pipelined_model()
    step, calls = env.step_wait, []

    def failing():
        calls.append(1)
        if len(calls) > 8:  # the first rollout is collected on the main thread, the second on the other
            raise RuntimeError("engine failure")
        return step()

    env.step_wait = failing
    with pytest.raises(RuntimeError, match="engine failure"):
        model.learn(total_timesteps=3 * 8 * env.num_envs)


@pytest.mark.skipif(not rollout_process.available(), reason="rollouts in a process need fork (Linux)")
def test_the_rollout_process_stops_with_learn_and_a_next_learn_deals_afresh():
    """learn() leaves no rollout process behind; the env it stepped is gone with it, so the next learn() starts
    from fresh deals and trains on."""
    import multiprocessing

    model, env = _pipelined_model()
    model.learn(total_timesteps=3 * 8 * env.num_envs)
    assert model._worker is None and model._last_obs is None
    assert not [p for p in multiprocessing.active_children() if p.name == "packetrow-rollout"]
    model.learn(total_timesteps=2 * 8 * env.num_envs, reset_num_timesteps=False)
    assert model.num_timesteps == 5 * 8 * env.num_envs and model._worker is None


@pytest.mark.skipif(not rollout_process.available(), reason="rollouts in a process need fork (Linux)")
def test_ctrl_c_while_the_rollout_process_forks_stops_the_run(ctrl_c_at_next_fork):
    """A Ctrl-C that comes while the trainer forks its rollout process (where Python would lose it, and the run go
    on) is raised once the process has started: learn() ends with it and leaves no process behind."""
    import multiprocessing

    model, env = _pipelined_model()
    with pytest.raises(KeyboardInterrupt):
        model.learn(total_timesteps=3 * 8 * env.num_envs)
    assert model._worker is None and model.num_timesteps == 8 * env.num_envs  # the first rollout, here
    assert not [p for p in multiprocessing.active_children() if p.name == "packetrow-rollout"]


def _available_in_a_daemon(_):
    return rollout_process.available()


def test_a_daemonic_worker_pipelines_on_a_thread():
    """Inside a daemonic pool worker, which may not start processes, the pipeline falls back to its thread."""
    import multiprocessing

    with multiprocessing.Pool(1) as pool:
        assert pool.map(_available_in_a_daemon, [0]) == [False]


@pytest.mark.skipif(not rollout_process.available(), reason="rollouts in a process need fork (Linux)")
def test_an_error_in_the_update_stops_the_rollout_process(monkeypatch):
    """An exception in the trainer while the process collects (a failing update, Ctrl-C) reaches the caller and
    stops the process, its rollout under way."""
    import multiprocessing

    from packetrow_train import ppo_update

    def interrupted_update(model):
        raise KeyboardInterrupt

    model, env = _pipelined_model()
    monkeypatch.setattr(ppo_update, "update", interrupted_update)
    with pytest.raises(KeyboardInterrupt):
        model.learn(total_timesteps=3 * 8 * env.num_envs)
    assert model._worker is None
    assert not [p for p in multiprocessing.active_children() if p.name == "packetrow-rollout"]
