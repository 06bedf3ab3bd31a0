"""The suite's session: under pytest-xdist, the batched engine's kernels are compiled before the workers start.

A fresh checkout (CI's) has no numba cache, so every kernel compiles at its first call. The batched engine's and
the compiled opponents' kernels, which most of the suite's modules reach, take about two minutes on one core, and
each xdist worker would compile them for itself, at the same time. With ``-n``, the controller first trains a
run of two rollouts on the main job's settings, which compiles them on every core
(``packetrow_train.compile_ahead``); the workers then load them from the cache. Without the training extra, or
without ``-n``, nothing happens here.
"""

import tempfile
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def pytest_sessionstart(session):
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    try:
        import yaml

        from packetrow_train.config import config_from_dict
        from packetrow_train.selfplay import train
    except ImportError:  # the training extra is not installed: its tests are skipped
        return
    data = yaml.safe_load((CONFIGS / "quick.yaml").read_text())
    data.update(total_timesteps=256)
    data["env"].update(n_envs=2)
    data["ppo"].update(n_steps=128, batch_size=128)
    data["eval"].update(final_games=0)
    data["checkpoint"].update(every=0)
    data["log"].update(tensorboard=False, progress_bar=False)
    with tempfile.TemporaryDirectory() as out:
        train(config_from_dict(data, "compile-ahead"), out=out, progress_bar=False)
