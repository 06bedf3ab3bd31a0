"""Long runs lose nothing (issue #47): divergence stops a run.

- An infinite learning rate stops the run with one line and writes no model; nothing writes or loads a policy whose
  weights are not finite.

The tests that start ``packetrow train`` in a subprocess take 10-30 s each (tiny budgets; numba's kernels are cached
after the first run of the suite).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")

from packetrow_agents.policy import ModelFormatError, NumpyPolicy  # noqa: E402
from packetrow_cli.main import main  # noqa: E402
from tests.test_training import small_policy, tiny  # noqa: E402


def write_config(path: Path, **changes) -> Path:
    """A tiny quick.yaml (pipeline on) with ``changes`` (dotted keys for sections: eval__every=512), as a file."""
    data = tiny(**{k: v for k, v in changes.items() if "__" not in k})
    for key, value in changes.items():
        if "__" in key:
            section, name = key.split("__")
            data[section][name] = value
    data["eval"].update(num_players=[2], opponents=["random"], final_games=0)
    data["log"].update(tensorboard=False)
    path.write_text(yaml.safe_dump(data))
    return path


# --------------------------------------------------------------------------- divergence
def test_an_infinite_learning_rate_stops_the_run_and_writes_no_model(tmp_path, capsys):
    config = write_config(tmp_path / "inf.yaml", total_timesteps=2048, eval__every=512, checkpoint__every=512)
    data = yaml.safe_load(config.read_text())
    data["ppo"]["learning_rate"] = float("inf")
    config.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("packetrow train: error: training diverged at learner step 256: ")
    assert "the weights (" in err[0] and "lower ppo.learning_rate (now inf)" in err[0]
    assert not (out / "model.npz").exists() and not (out / "model.zip").exists()
    assert not any(out.rglob("step_*.zip")) and not (out / "eval.csv").exists()
    for path in out.rglob("*.npz"):  # the snapshot of the initial policy, taken before any update
        NumpyPolicy.load_npz(path)


def test_no_policy_with_non_finite_weights_is_written_or_loaded(tmp_path):
    policy = small_policy(0)
    path = policy.save(tmp_path / "good.npz")
    policy.action_bias[3] = np.nan
    assert policy.non_finite() == ["action_bias"]
    with pytest.raises(ModelFormatError, match=r"not finite \(NaN or infinite in action_bias\)"):
        policy.save(tmp_path / "bad.npz")
    assert not (tmp_path / "bad.npz").exists()
    # a file written elsewhere: the same arrays with an infinity
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    arrays["layer_0_weight"][0, 0] = np.inf
    np.savez(tmp_path / "crafted.npz", **arrays)
    with pytest.raises(ModelFormatError, match=r"crafted.npz: its weights are not finite \(NaN or infinite in "
                                               r"layer_0_weight\).*lower ppo.learning_rate"):
        NumpyPolicy.load_npz(tmp_path / "crafted.npz")


def test_the_export_refuses_a_network_with_non_finite_weights():
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from packetrow_env.observation import encoder
    from packetrow_train.policy_export import export_policy
    from gymnasium import spaces

    size = encoder().size
    network = MaskableActorCriticPolicy(spaces.Box(0, 1, (size,), np.float32), spaces.Discrete(61),
                                        lambda _: 1e-3, net_arch=[8])
    export_policy(network)
    with torch.no_grad():
        network.action_net.weight[0, 0] = float("nan")
    with pytest.raises(ModelFormatError, match=r"cannot export a network whose weights are not finite .*action_weight"):
        export_policy(network)
