"""The masked PPO update of ``RolloutPPO``, written out top to bottom, with MMD's terms as an option.

sb3-contrib's ``MaskablePPO.train`` has no place for extra loss terms, so the update is here, in its order and
with its arithmetic: for each epoch, the rollout's minibatches (the buffer's own numpy draw); the policy's values,
masked log-probabilities and entropies; the advantages normalised per minibatch; the ratio to the behaviour
policy and the clipped surrogate; the value loss with SB3's optional clipping (``clip_range_vf``); approx_kl,
which ends the update early past 1.5 x ``target_kl``; the gradient clipped to ``max_grad_norm`` and one optimizer
step; SB3's logger keys. With ``model.mmd`` None it makes MaskablePPO.train's update to float rounding
(tests/test_ppo_update.py); with an ``mmd.MMD`` (train/mmd.py) its two KL terms join the loss (``mmd_terms``) and
are logged as train/magnet_kl, train/previous_kl and train/magnet_coef.
"""

from __future__ import annotations

import numpy as np
import torch
from stable_baselines3.common.utils import explained_variance

# exp() of a float32 far below -88 (a masked logit's -1e8, an underflow) takes CPU's slow path: measured 10-40x the
# time of an ordinary exp on the development machine, more than the minibatch's matrix products for the policy head
LOG_PROB_FLOOR = -80.0
MASKED = -1e8  # sb3-contrib's logit for an illegal action


def evaluate(policy, observations: torch.Tensor, actions: torch.Tensor, masks, dtype: torch.dtype | None = None):
    """(values (n, 1), log-probabilities of ``actions``, entropies, masked log-probabilities of every action) of
    an SB3 actor-critic policy on a batch: its ``evaluate_actions`` with masks (to float rounding) in fewer
    operations, and the whole distribution, which MMD's magnet term needs. With ``dtype`` (torch.bfloat16) the
    features and hidden layers run under torch's autocast in that dtype; the heads, and all that follows, in
    float32."""
    with torch.autocast(observations.device.type, dtype=dtype, enabled=dtype is not None):
        features = policy.extract_features(observations)
        if policy.share_features_extractor:
            latent_pi, latent_vf = policy.mlp_extractor(features)
        else:
            latent_pi = policy.mlp_extractor.forward_actor(features[0])
            latent_vf = policy.mlp_extractor.forward_critic(features[1])
    # the heads in float32: the log-probabilities' ratio to the behaviour policy's is what PPO clips, and a
    # bfloat16 logit's rounding (about 1 part in 256) would be noise of a few percent in it
    latent_pi, latent_vf = latent_pi.float(), latent_vf.float()
    logits = policy.action_net(latent_pi)
    illegal = ~torch.as_tensor(masks, dtype=torch.bool).reshape(logits.shape)
    log_p = logits.masked_fill(illegal, MASKED).log_softmax(dim=-1)
    log_prob = log_p.gather(1, actions.long().reshape(-1, 1)).reshape(-1)
    # the floor only touches illegal actions (a legal one's log-probability below -80 is 0 in float32 too)
    entropy = -(log_p.clamp(min=LOG_PROB_FLOOR).exp() * log_p).masked_fill(illegal, 0.0).sum(dim=-1)
    return policy.value_net(latent_vf), log_prob, entropy, log_p


def magnet_kl(log_p: torch.Tensor, magnet_log_p: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Per row, KL(pi || magnet) = the sum over legal actions of pi (log pi - log magnet), exact."""
    # the floor only touches illegal actions, masked out here
    return (log_p.clamp(min=LOG_PROB_FLOOR).exp() * (log_p - magnet_log_p)).masked_fill(~masks, 0.0).sum(dim=-1)


def previous_kl(log_prob: torch.Tensor, old_log_prob: torch.Tensor) -> torch.Tensor:
    """Per row, r log r - (r - 1) with r = pi(a) / pi_old(a) of the action taken: over actions drawn by pi_old its
    mean is KL(pi || pi_old), and it is never negative (the paper's code's estimate of this "backward" KL)."""
    log_ratio = log_prob - old_log_prob
    ratio = log_ratio.exp()
    return ratio * log_ratio - (ratio - 1)


def mmd_terms(mmd, log_p: torch.Tensor, log_prob: torch.Tensor, entropy: torch.Tensor, old_log_prob: torch.Tensor,
              observations: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean KL(pi || magnet), mean estimate of KL(pi || pi_old)) of a minibatch for an ``mmd.MMD``: ``log_p``
    the learner's masked log-probabilities of every action, ``log_prob`` those of the actions taken, ``entropy``
    its entropies, ``old_log_prob`` the behaviour policy's; the magnet's logits masked and renormalised to the legal
    actions."""
    if mmd.magnet is None:  # uniform over n legal actions: KL = log n - entropy, on the entropy already at hand
        to_magnet = masks.sum(dim=-1).log() - entropy
    else:
        magnet_logits = torch.from_numpy(mmd.magnet.logits(observations.cpu().numpy())).to(log_p.device)
        to_magnet = magnet_kl(log_p, magnet_logits.masked_fill(~masks, MASKED).log_softmax(dim=-1), masks)
    return to_magnet.mean(), previous_kl(log_prob, old_log_prob).mean()


def update(model) -> None:
    """One PPO update of ``model`` (a MaskablePPO with a full rollout buffer and a Discrete action space), plus
    ``model.mmd``'s terms when it is set (an ``mmd.MMD``), its hidden layers in ``model.update_dtype`` when that
    is set (``evaluate``)."""
    policy, mmd, dtype = model.policy, getattr(model, "mmd", None), getattr(model, "update_dtype", None)
    policy.set_training_mode(True)
    model._update_learning_rate(policy.optimizer)
    progress = model._current_progress_remaining
    clip_range = model.clip_range(progress)
    clip_range_vf = None if model.clip_range_vf is None else model.clip_range_vf(progress)
    magnet_coef = None if mmd is None else mmd.coef(progress)
    logs = {key: [] for key in ("entropy_loss", "policy_gradient_loss", "value_loss", "clip_fraction",
                                "magnet_kl", "previous_kl")}
    continue_training = True
    for epoch in range(model.n_epochs):
        approx_kl_divs = []
        for batch in model.rollout_buffer.get(model.batch_size):
            masks = torch.as_tensor(batch.action_masks, dtype=torch.bool)
            values, log_prob, entropy, log_p = evaluate(policy, batch.observations, batch.actions, masks, dtype)
            values = values.flatten()
            advantages = batch.advantages
            if model.normalize_advantage:
                advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

            ratio = torch.exp(log_prob - batch.old_log_prob)
            policy_loss = -torch.min(advantages * ratio,
                                     advantages * torch.clamp(ratio, 1 - clip_range, 1 + clip_range)).mean()
            logs["policy_gradient_loss"].append(policy_loss.item())
            logs["clip_fraction"].append(torch.mean((torch.abs(ratio - 1) > clip_range).float()).item())

            if clip_range_vf is not None:  # the new value at most clip_range_vf from the one stored with the data
                values = batch.old_values + torch.clamp(values - batch.old_values, -clip_range_vf, clip_range_vf)
            value_loss = torch.nn.functional.mse_loss(batch.returns, values)
            logs["value_loss"].append(value_loss.item())
            entropy_loss = -torch.mean(entropy)
            logs["entropy_loss"].append(entropy_loss.item())
            loss = policy_loss + model.ent_coef * entropy_loss + model.vf_coef * value_loss

            if mmd is not None:
                to_magnet, to_previous = mmd_terms(mmd, log_p, log_prob, entropy, batch.old_log_prob,
                                                   batch.observations, masks)
                loss = loss + magnet_coef * to_magnet + mmd.kl_coef * to_previous
                logs["magnet_kl"].append(to_magnet.item())
                logs["previous_kl"].append(to_previous.item())

            with torch.no_grad():  # Schulman's k3 estimate of KL(pi_old || pi), SB3's early stop
                log_ratio = log_prob - batch.old_log_prob
                approx_kl_div = torch.mean((torch.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
                approx_kl_divs.append(approx_kl_div)
            if model.target_kl is not None and approx_kl_div > 1.5 * model.target_kl:
                continue_training = False
                if model.verbose >= 1:
                    print(f"Early stopping at step {epoch} due to reaching max kl: {approx_kl_div:.2f}")
                break

            policy.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
            policy.optimizer.step()
        model._n_updates += 1
        if not continue_training:
            break

    buffer = model.rollout_buffer
    for key, values in logs.items():
        if values:
            model.logger.record(f"train/{key}", np.mean(values))
    model.logger.record("train/approx_kl", np.mean(approx_kl_divs))
    model.logger.record("train/loss", loss.item())
    model.logger.record("train/explained_variance",
                        explained_variance(buffer.values.flatten(), buffer.returns.flatten()))
    model.logger.record("train/n_updates", model._n_updates, exclude="tensorboard")
    model.logger.record("train/clip_range", clip_range)
    if clip_range_vf is not None:
        model.logger.record("train/clip_range_vf", clip_range_vf)
    if mmd is not None:
        model.logger.record("train/magnet_coef", magnet_coef)
