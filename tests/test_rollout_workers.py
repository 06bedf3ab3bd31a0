"""Rollout workers (train/rollout_process.py with ``workers`` > 1): each forked worker steps its own part of the
games into its columns of the shared rollout buffers; differential against the same parts collected one after
another in this process, reproducibility from the seed and the number of workers; the config's workers and device."""

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

from packetrow_train import rollout_process  # noqa: E402
from packetrow_train.config import ConfigError, config_from_dict  # noqa: E402
from packetrow_train.machine import rollout_workers, update_device, usable_cores  # noqa: E402
from packetrow_train.policy_export import export_policy  # noqa: E402
from packetrow_train.rollout import RolloutPPO  # noqa: E402
from packetrow_train.selfplay import _policy_kwargs, make_vec_env, train  # noqa: E402
from tests.test_rollout import _trained_weights  # noqa: E402
from tests.test_training import tiny  # noqa: E402

needs_fork = pytest.mark.skipif(not rollout_process.available(), reason="rollout workers need fork (Linux)")


def _model(n_envs: int, n_steps: int = 8):
    data = tiny()
    data["env"]["n_envs"] = n_envs
    config = config_from_dict(data)
    env = make_vec_env(config)
    model = RolloutPPO("MlpPolicy", env, policy_kwargs=_policy_kwargs(config), seed=0, device="cpu", n_steps=n_steps,
                       batch_size=16, n_epochs=1)
    env.add_snapshot(export_policy(model, "tracked"), 0)
    model._setup_learn(n_steps * n_envs)  # the first observations, as learn() starts
    return model, env


def _weights(model) -> dict:
    return {k: v.numpy().copy() for k, v in model.policy.state_dict().items()}


@needs_fork
@pytest.mark.parametrize("count", [2, 3])
def test_the_workers_rollouts_are_the_single_process_paths(count):
    """Differential: two rollouts of ``count`` workers (a snapshot added to the pool and the weights changed between
    them) hold, column for column, what the same parts (their envs, buffers and generators, ``worker_parts``)
    collect one after another in this process; the steps' infos and dones come back joined in column order."""
    model, env = _model(n_envs=7, n_steps=32)
    behaviour, buffer, _ = model._pipeline_parts()
    workers = rollout_process.RolloutWorker(model, buffer, count)
    parts = [rollout_process.part_columns(7, index, count) for index in range(count)]
    assert parts[-1].stop - parts[-1].start == 7 - (count - 1) * (7 // count)
    # the single-process path: the same parts, each its env's first observations and episode starts
    states = []
    for index, columns in enumerate(parts):
        part_env, part_buffer, generator = rollout_process.worker_parts(model, index, columns)
        states.append([part_env, part_buffer, generator, part_env.reset(), np.ones(part_env.num_envs, bool)])
    observations, ended = [], 0
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the workers' (a sum's rounding depends on the threads that share it)
    try:
        for rollout in range(2):
            if rollout:
                with torch.no_grad():
                    for p in model.policy.parameters():
                        p.add_(0.05)
                env.add_snapshot(export_policy(model, "tracked"), 100)  # journalled to every worker
            weights = _weights(model)
            workers.request(weights)
            steps, last_obs, starts = workers.receive(buffer)
            observations.append(buffer.observations.copy())
            behaviour.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
            expected_steps = []
            for state, columns in zip(states, parts):
                part_env, part_buffer, generator, model._last_obs, model._last_episode_starts = state
                record = []
                model._collect(behaviour, part_env, part_buffer, model.n_steps,
                               lambda infos, dones: record.append((infos, dones)) or True, generator, values=False)
                state[3:] = model._last_obs, model._last_episode_starts
                expected_steps.append(record)
                for name in rollout_process.BUFFER_ARRAYS:
                    np.testing.assert_array_equal(getattr(buffer, name)[:, columns], getattr(part_buffer, name),
                                                  err_msg=name)
                np.testing.assert_array_equal(last_obs[columns], state[3])
                np.testing.assert_array_equal(starts[columns], state[4])
            assert len(steps) == model.n_steps
            for step, parts_of_step in zip(steps, zip(*expected_steps)):
                np.testing.assert_array_equal(step[1], np.concatenate([dones for _, dones in parts_of_step]))
                assert [info.get("seat") for info in step[0]] == [i.get("seat") for infos, _ in parts_of_step
                                                                   for i in infos]
            ended += sum(bool(info) for infos, _ in steps for info in infos)
    finally:
        workers.close()
        torch.set_num_threads(threads)
    assert not np.array_equal(*observations)
    assert ended > 0  # games ended and were dealt again in the workers


@needs_fork
def test_training_with_workers_reproduces_from_the_seed_and_the_worker_count(tmp_path):
    """Two runs of one config, seed and number of workers end with the same weights; another seed, or another
    number of workers (other parts of the games), ends with others."""
    first, again, seed, one = (_trained_weights(tmp_path / name, seed, workers=workers)
                               for name, seed, workers in (("a", 3, 2), ("b", 3, 2), ("c", 4, 2), ("d", 3, 1)))
    assert all(np.array_equal(x, y) for x, y in zip(first, again))
    assert not all(np.array_equal(x, y) for x, y in zip(first, seed))
    assert not all(np.array_equal(x, y) for x, y in zip(first, one))


def test_workers_and_device_are_checked(tmp_path):
    """workers: auto or a count, with the pipeline and at most env.n_envs; device: auto | cpu | cuda, where cuda
    without a CUDA device is refused before the run writes anything, and auto is the CPU there."""
    for workers, pipeline, message in [(0, True, "workers must be auto or an integer >= 1, got 0"),
                                       ("many", True, "workers must be auto or an integer >= 1, got 'many'"),
                                       (2, False, "workers 2 needs pipeline: true"),
                                       (3, True, r"workers \(3\) must be at most env.n_envs \(2\)")]:
        with pytest.raises(ConfigError, match=message):
            config_from_dict(tiny(workers=workers, pipeline=pipeline))
    with pytest.raises(ConfigError, match="device must be one of auto, cpu, cuda, got 'gpu'"):
        config_from_dict(tiny(device="gpu"))
    assert rollout_workers(config_from_dict(tiny(pipeline=False))) == 1
    assert rollout_workers(config_from_dict(tiny(pipeline=True))) == max(1, min(usable_cores() - 1, 2))
    assert rollout_workers(config_from_dict(tiny(pipeline=True, workers=2))) == 2
    assert update_device("cpu") == torch.device("cpu")
    if torch.cuda.is_available():
        assert update_device("auto") == torch.device("cuda")
        return
    assert update_device("auto") == torch.device("cpu")
    with pytest.raises(ConfigError, match="device 'cuda': torch .* finds no CUDA device on this machine; use device: "
                                          "cpu, or auto"):
        train(config_from_dict(tiny(device="cuda")), out=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_without_fork_the_pipeline_collects_on_one_thread_and_an_asked_count_says_so(monkeypatch, capsys):
    """Where processes cannot be forked (macOS, Windows: ``rollout_process.available`` is False there), auto is one
    collector quietly and a count above one says on stderr that it is not used."""
    monkeypatch.setattr(rollout_process, "available", lambda: False)
    assert rollout_workers(config_from_dict(tiny(pipeline=True))) == 1
    assert capsys.readouterr().err == ""
    assert rollout_workers(config_from_dict(tiny(pipeline=True, workers=2))) == 1
    assert "workers: 2 asked, but rollout processes need fork (Linux) here" in capsys.readouterr().err
