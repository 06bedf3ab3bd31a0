"""Rollouts of the batched self-play env without SB3's per-step machinery: MaskablePPO with its own collector.

``RolloutPPO`` is sb3-contrib's MaskablePPO (its checkpoints, logging and callbacks unchanged) whose
``collect_rollouts`` fills the same ``MaskableRolloutBuffer`` from a ``SelfPlayVecEnv`` with fewer calls per
step: the actor's logits in one compiled call (the policy's numpy export through ``PolicyStack``'s kernel), the
masked sample and its log-probability in another (the Gumbel trick on ``torch.rand`` draws, so the run stays
reproducible from SB3's seed), the env's opponents moved in compiled code (``packetrow_agents.opponents_batch``),
and the critic once over the whole rollout at its end (``_finish``). The update is MaskablePPO's, written out in
train/ppo_update.py so that MMD's terms can join its loss (train/mmd.py), with four shortcuts, the same arithmetic
to float rounding: the policy's forward without distribution objects (``ppo_update.evaluate``;
``LeanMaskablePolicy.evaluate_actions``), the compact extractor's first layer from the observations' non-zero
floats (train/sparse_input.py), each minibatch gathered once by torch (``LeanRolloutBuffer``) and Adam's fused
kernel (what each saves: docs/benchmarks.md, "Behind the training code's choices" and issue #50's section). Any
other env or policy class falls back to SB3's collector.
"""

from __future__ import annotations

import copy
import threading

import numba
import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer, MaskableRolloutBufferSamples
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.policies import BaseModel

from packetrow_agents.policy import ModelFormatError
from packetrow_agents.policy_batch import PolicyStack

from . import ppo_update, rollout_process
from .policy_export import export_policy
from .vec_selfplay import SelfPlayVecEnv


class LeanMaskablePolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose ``evaluate_actions`` (the PPO update's forward) skips the distribution
    objects: the same values, log-probabilities and entropies (to float rounding) in fewer operations, and with
    no exp() of the masked logits' -1e8 (``ppo_update.evaluate``)."""

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor, action_masks=None):
        """(values, log-probabilities of ``actions``, entropies) under the masked policy, as the parent's."""
        if action_masks is None:
            return super().evaluate_actions(obs, actions, action_masks)
        return ppo_update.evaluate(self, obs, actions, action_masks)[:3]


class LeanRolloutBuffer(MaskableRolloutBuffer):
    """MaskableRolloutBuffer whose minibatches torch gathers from views of its arrays: one copy of each, where
    SB3 copies twice (numpy's fancy index, then into a tensor). SB3's minibatches, in SB3's order."""

    def get(self, batch_size: int | None = None):
        """SB3's minibatches from the same numpy draw, without SB3's first copy of every array into env-major
        order: the arrays stay step-major, as views, and each of SB3's row numbers is mapped to its row here."""
        if self.device.type != "cpu":
            yield from super().get(batch_size)
            return
        assert self.full, "the rollout buffer is not full"
        indices = np.random.permutation(self.buffer_size * self.n_envs)
        if not self.generator_ready:
            for name in ("observations", "actions", "values", "log_probs", "advantages", "returns", "action_masks"):
                array = self.__dict__[name]
                self.__dict__[name] = array.reshape(-1, *array.shape[2:])
            self.generator_ready = True
        # SB3's row i is env i // buffer_size at step i % buffer_size; step-major, that is step * n_envs + env
        rows = indices % self.buffer_size * self.n_envs + indices // self.buffer_size
        batch_size = batch_size or len(rows)
        for start in range(0, len(rows), batch_size):
            yield self._get_samples(rows[start:start + batch_size])

    def _get_samples(self, batch_inds: np.ndarray, env=None) -> MaskableRolloutBufferSamples:
        if env is not None or self.device.type != "cpu":
            return super()._get_samples(batch_inds, env)
        rows = torch.from_numpy(np.asarray(batch_inds, dtype=np.int64))

        def take(array):
            return torch.from_numpy(array).index_select(0, rows)

        return MaskableRolloutBufferSamples(
            take(self.observations), take(self.actions),
            *(take(a).flatten() for a in (self.values, self.log_probs, self.advantages, self.returns)),
            take(self.action_masks).reshape(-1, self.mask_dims))


class RolloutPPO(MaskablePPO):
    """MaskablePPO whose rollouts of a SelfPlayVecEnv take the lean path of the module docstring, and whose
    updates use the LeanMaskablePolicy and LeanRolloutBuffer; with ``pipeline`` set, each rollout after the
    first is collected on the other cores (``workers`` forked processes, or a thread) while the update before it
    runs (one update behind: see ``train``). The update runs on the model's device; rollouts always act on the CPU."""

    policy_aliases = {**MaskablePPO.policy_aliases, "MlpPolicy": LeanMaskablePolicy}
    pipeline = False  # the trainer sets it from the config's pipeline
    pipeline_in_process = True  # the pipeline's rollouts in a forked process where available (else a thread)
    mmd = None  # an mmd.MMD adds its terms to the update; the trainer sets it from the config's mmd section
    update_dtype = None  # torch.bfloat16: the update's hidden layers under autocast (the config's precision)
    workers = 1  # the pipeline's rollout processes, each stepping its own part of the games (the trainer sets it)
    _worker = None
    _unfinished = None  # (last observations, dones) of a rollout whose values and advantages are still to come

    def _setup_model(self) -> None:
        if self.rollout_buffer_class is None and not isinstance(self.observation_space, spaces.Dict):
            self.rollout_buffer_class = LeanRolloutBuffer
        super()._setup_model()

    def learn(self, *args, **kwargs):
        """MaskablePPO.learn; a rollout prefetched by an earlier call is dropped (the env may be reset)."""
        self._prefetched = self._unfinished = None
        try:
            return super().learn(*args, **kwargs)
        finally:
            self._stop_worker()

    def collect_rollouts(self, env, callback, rollout_buffer, n_rollout_steps: int, use_masking: bool = True) -> bool:
        """Fill ``rollout_buffer`` with ``n_rollout_steps`` steps of every env (as MaskablePPO's collector), or
        hand over the rollout ``train`` prefetched, its callbacks run step by step now."""
        if not (use_masking and self._lean(env)):
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        prefetched, self._prefetched = getattr(self, "_prefetched", None), None
        callback.on_rollout_start()
        if prefetched is None:
            self.policy.set_training_mode(False)
            if not self._collect(self._acting_policy(), env, rollout_buffer, n_rollout_steps,
                                 lambda infos, dones: self._on_step(env, callback, infos, dones)):
                return False
        else:
            buffer, steps = prefetched
            for infos, dones in steps:
                if not self._on_step(env, callback, infos, dones):
                    return False
            self._spare_buffer, self.rollout_buffer = self.rollout_buffer, buffer
        callback.on_rollout_end()
        return True

    def _acting_policy(self):
        """The policy that collects on the trainer's side: the policy itself on the CPU, else the behaviour copy
        (always on the CPU, where the env's observations are) holding its weights."""
        if self.device.type == "cpu":
            return self.policy
        behaviour = self._pipeline_parts()[0]
        behaviour.load_state_dict(self.policy.state_dict())
        return behaviour

    def _lean(self, env) -> bool:
        """Whether rollouts of ``env`` take the lean path (a SelfPlayVecEnv and MaskablePPO's own policy class or
        the lean one)."""
        return isinstance(env, SelfPlayVecEnv) and type(self.policy) in (MaskableActorCriticPolicy, LeanMaskablePolicy)

    def _on_step(self, env, callback, infos, dones) -> bool:
        """Count one step of every env and run the callbacks on it (False: stop training)."""
        self.num_timesteps += env.num_envs
        callback.update_locals({"infos": infos, "dones": dones})
        if not callback.on_step():
            return False
        self._update_info_buffer(infos, dones)
        return True

    def _collect(self, policy, env, buffer, n_steps: int, on_step, generator=None, values: bool = True) -> bool:
        """Fill ``buffer`` with ``n_steps`` steps of every env, acting with ``policy``; ``on_step(infos, dones)``
        after each step (False: stop before storing it); ``generator``: torch's for the action draws. Without
        ``values`` the critic is left out (the buffer's values stay zero; ``_finish`` adds them and the
        advantages), else ``_finish`` runs at the end."""
        buffer.reset()
        dones = self._last_episode_starts
        no_values = torch.zeros(env.num_envs)
        actor = _compiled_actor(policy)
        for _ in range(n_steps):
            masks = env.action_masks()
            observations = self._last_obs
            if actor is not None:
                logits = actor(observations)
            else:
                with torch.no_grad():
                    logits = _forward(policy, observations, critic=False)[0].numpy()
            uniforms = torch.rand(logits.shape, dtype=torch.float64, generator=generator).numpy()
            actions = np.empty(len(masks), np.int64)
            log_probs = np.empty(len(masks), np.float32)
            _sample(logits, masks, uniforms, actions, log_probs)
            new_obs, rewards, dones, infos = env.step(actions)
            if not on_step(infos, dones):
                return False
            buffer.add(observations, actions.reshape(-1, 1), rewards, self._last_episode_starts, no_values,
                       torch.from_numpy(log_probs), action_masks=masks)
            self._last_obs = new_obs
            self._last_episode_starts = dones
        if values:
            self._finish(policy, buffer, new_obs, dones)
        return True

    @staticmethod
    def _finish(policy, buffer, last_observations, dones) -> None:
        """Complete a rollout collected without values: ``policy``'s critic on all its observations in one batch
        (where the first layer's sparse products pay: train/sparse_input.py) and on the last ones, then SB3's
        advantages."""
        observations = buffer.observations.reshape(-1, *buffer.observations.shape[2:])
        with torch.no_grad():
            buffer.values[:] = _forward(policy, observations, actor=False)[1].numpy().reshape(buffer.values.shape)
            _, last_values = _forward(policy, last_observations, actor=False)
        buffer.compute_returns_and_advantage(last_values=last_values, dones=dones)

    def train(self) -> None:
        """MaskablePPO's update (``ppo_update.update``, with ``mmd``'s terms when set), with Adam's fused (or
        multi-tensor) kernel (``fast_adam``).

        With ``pipeline``, the next rollout is collected meanwhile on the other core, acting with a copy of the
        weights before this update (so the update after it trains on data one update old: PPO's ratio is taken
        against the log-probabilities stored with the data, as in asynchronous PPO): in ``workers`` forked processes
        where ``rollout_process.available()`` (and ``pipeline_in_process``), each stepping its own part of the
        games from the second rollout on when there are several, else on a second thread (the env, numba's
        kernels and torch's operators release the GIL for their compiled parts). Its steps' callbacks run when
        ``collect_rollouts`` hands it over, here. Runs stay reproducible, and the same either way: the rollout
        draws from its own torch generator, and the update draws its minibatches from numpy's."""
        fast_adam(self.policy.optimizer)
        unfinished, self._unfinished = self._unfinished, None  # a process's rollout, its values still to come
        if not (self.pipeline and self._lean(self.env) and self.num_timesteps < self._total_timesteps):
            if unfinished is not None:
                self._finish(self._behaviour, self.rollout_buffer, *unfinished)
            ppo_update.update(self)
            return
        behaviour, buffer, generator = self._pipeline_parts()
        if self.pipeline_in_process and rollout_process.available():
            if self._worker is None:
                self._worker = rollout_process.RolloutWorker(self, buffer, self.workers)
            self._worker.request({k: v.cpu().numpy().copy() for k, v in self.policy.state_dict().items()})
            # the critic of the rollout about to be trained on, here while the process collects the next:
            # the behaviour copy still holds the weights it was collected with
            if unfinished is not None:
                self._finish(behaviour, self.rollout_buffer, *unfinished)
            behaviour.load_state_dict(self.policy.state_dict())
            ppo_update.update(self)
            steps, self._last_obs, self._last_episode_starts = self._worker.receive(buffer)
            self._unfinished = self._last_obs, self._last_episode_starts
            self._prefetched = buffer, steps
            return
        behaviour.load_state_dict(self.policy.state_dict())
        steps, errors = [], []  # each step's (infos, dones), for its callbacks on the main thread

        def record(infos, dones) -> bool:
            steps.append((infos, dones))
            return True

        def collect():
            try:
                self._collect(behaviour, self.env, buffer, self.n_steps, record, generator)
            except BaseException as error:  # re-raised on the main thread
                errors.append(error)

        thread = threading.Thread(target=collect, name="packetrow-rollout")
        thread.start()
        try:
            ppo_update.update(self)
        finally:
            thread.join()
        if errors:
            raise errors[0]
        self._prefetched = buffer, steps

    def _stop_worker(self) -> None:
        """Stop the rollout process, if any; the env it stepped stays there, so the next learn() deals afresh."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None
            self._last_obs = None

    def _pipeline_parts(self):
        """(the behaviour policy's copy, the spare rollout buffer, the rollout thread's torch generator), made once."""
        if getattr(self, "_behaviour", None) is None:
            self._behaviour = copy.deepcopy(self.policy).to("cpu")  # it acts on the env's observations
            self._behaviour.optimizer = None
            self._behaviour.set_training_mode(False)
            self._spare_buffer = copy.deepcopy(self.rollout_buffer)
            self._rollout_generator = torch.Generator().manual_seed(int(torch.randint(2 ** 62, ())))
        return self._behaviour, self._spare_buffer, self._rollout_generator

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "_behaviour", "_spare_buffer", "_rollout_generator", "_prefetched",
                "_worker", "_unfinished", "mmd", "update_dtype"]


def _forward(policy, observations: np.ndarray, actor: bool = True, critic: bool = True):
    """(logits or None, values or None) of a policy's modules for a batch of observations."""
    observations = torch.as_tensor(observations)

    def features(extractor):
        return BaseModel.extract_features(policy, observations, extractor)

    if policy.share_features_extractor:
        pi_features = vf_features = features(policy.features_extractor)
    else:
        pi_features = features(policy.pi_features_extractor) if actor else None
        vf_features = features(policy.vf_features_extractor) if critic else None
    logits = policy.action_net(policy.mlp_extractor.forward_actor(pi_features)) if actor else None
    values = policy.value_net(policy.mlp_extractor.forward_critic(vf_features)) if critic else None
    return logits, values


def _compiled_actor(policy):
    """A function of a batch of observations to the policy network's float32 logits in one compiled call (its
    numpy export through ``PolicyStack``'s kernel: torch's operators cost more than their arithmetic on a rollout
    step's rows), or None for a policy the numpy policy cannot run (then torch's forward acts). The logits agree
    with torch's to float32 rounding (tests/test_rollout.py)."""
    if policy.device.type != "cpu":
        return None
    try:
        stack = PolicyStack([export_policy(policy)])
    except ModelFormatError:
        return None
    ids = np.zeros(0, np.int64)

    def logits(observations: np.ndarray) -> np.ndarray:
        nonlocal ids
        if len(ids) != len(observations):
            ids = np.zeros(len(observations), np.int64)
        return stack.logits(ids, observations)

    return logits


def fast_adam(optimizer) -> None:
    """Switch a torch Adam to its fused CPU kernel (torch >= 2.4; else the multi-tensor one): the same update as
    the default loop over tensors, faster. Set before every update: loading a checkpoint restores the saved
    optimizer's settings."""
    if not isinstance(optimizer, torch.optim.Adam):
        return
    try:
        from torch.utils._foreach_utils import _get_fused_kernels_supported_devices
        key = "fused" if "cpu" in _get_fused_kernels_supported_devices() else "foreach"
    except ImportError:
        key = "foreach"
    for group in optimizer.param_groups:
        group[key] = True


@numba.njit(cache=True, nogil=True)
def _sample(logits, masks, uniforms, actions, log_probs):
    """Per row: a sample of the masked softmax of ``logits`` (argmax of logits plus Gumbel noise from
    ``uniforms``) and its log-probability."""
    for r in range(logits.shape[0]):
        best, choice, top = -np.inf, -1, -np.inf
        for a in range(logits.shape[1]):
            if masks[r, a]:
                top = max(top, np.float64(logits[r, a]))
                value = np.float64(logits[r, a]) - np.log(-np.log(uniforms[r, a]))
                if choice < 0 or value > best:
                    best, choice = value, a
        total = 0.0
        for a in range(logits.shape[1]):
            if masks[r, a]:
                total += np.exp(np.float64(logits[r, a]) - top)
        actions[r] = choice
        log_probs[r] = np.float64(logits[r, choice]) - top - np.log(total)
