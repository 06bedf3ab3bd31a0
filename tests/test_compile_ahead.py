"""numba kernels compiled ahead, in forked processes through numba's disk cache (``packetrow_train.compile_ahead``),
and the training env's list of its kernels (``SelfPlayVecEnv.compile_jobs``), which must name the argument types
of the kernels' own calls: a kernel compiled for other types is compiled again at its first call."""

import importlib
import json
import subprocess
import sys

import numba
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from packetrow_train import rollout_process  # noqa: E402
from packetrow_train.compile_ahead import compile_ahead  # noqa: E402

TOY_KERNELS = """
import numba


@numba.njit(cache=True)
def double(x):
    return x * 2


@numba.njit(cache=True)
def total(a):
    return a.sum()
"""


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """Two cached kernels in a module of their own (numba caches beside a module's file), never compiled yet."""
    name = f"toy_kernels_{tmp_path.name}"
    (tmp_path / f"{name}.py").write_text(TOY_KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


@pytest.mark.skipif(not rollout_process.available(), reason="compiling in forked processes needs fork (Linux)")
def test_the_other_shares_compile_in_forked_processes_and_load_here_from_the_disk_cache(toy):
    seconds = compile_ahead([(toy.double, (1,)), (toy.total, (np.zeros(3),))], processes=2)
    assert seconds > 0
    assert toy.double.signatures == [(numba.int64,)]
    assert toy.total.signatures == [(numba.float64[::1],)]
    # the first share compiled here; the second in the forked process, which wrote the cache this one loaded
    assert sum(toy.double.stats.cache_misses.values()) == 1 and not toy.double.stats.cache_hits
    assert sum(toy.total.stats.cache_hits.values()) == 1 and not toy.total.stats.cache_misses
    assert toy.total(np.arange(4.0)) == 6.0


def test_one_process_compiles_every_job_itself(toy):
    compile_ahead([(toy.double, (1,)), (toy.total, (np.zeros(3),))], processes=1)
    assert sum(toy.total.stats.cache_misses.values()) == 1 and not toy.total.stats.cache_hits
    assert toy.double(21) == 42


@pytest.mark.skipif(not rollout_process.available(), reason="compiling in forked processes needs fork (Linux)")
def test_ctrl_c_while_the_compilers_fork_stops_them(toy, ctrl_c_at_next_fork):
    """A Ctrl-C that comes while the compilers fork (where Python would lose it) is raised once they have started,
    and ends them; nothing is compiled here."""
    import multiprocessing

    with pytest.raises(KeyboardInterrupt):
        compile_ahead([(toy.double, (1,)), (toy.total, (np.zeros(3),))], processes=2)
    assert not [p for p in multiprocessing.active_children() if p.name == "packetrow-compile"]
    assert toy.double.signatures == []


def test_no_jobs_take_no_time():
    assert compile_ahead([]) == 0.0


# In a fresh interpreter, so that no other test's calls compiled a kernel for the types under test: the env's
# kernels compiled (or loaded) for its compile_jobs, then its games played; a signature a kernel gained while
# playing is one that compile_jobs did not name.
PLAY_AFTER_COMPILING = """
import json
import numpy as np
from packetrow_env.vector.learner import random_legal
from packetrow_train.compile_ahead import compile_ahead
from packetrow_train.policy_export import load_start
from packetrow_train.pool import OpponentPool
from packetrow_train.vec_selfplay import SelfPlayVecEnv

gained = {}
for mixture in ({"latest": 0.5, "heuristic": 0.3, "random": 0.2}, {"heuristic": 0.7, "random": 0.3}):
    env = SelfPlayVecEnv(8, OpponentPool(mixture), num_players=[2, 4], observation_encoding="compact", seed=0)
    env.add_snapshot(load_start("ppo"), 0)
    jobs = env.compile_jobs()
    compile_ahead(jobs, processes=1)
    kernels = {kernel for kernel, _ in jobs}
    before = {kernel: list(kernel.signatures) for kernel in kernels}
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(200):
        env.step_async(random_legal(env.action_masks(), rng))
        env.step_wait()
    gained[" ".join(mixture)] = {kernel.__name__: [str(s) for s in kernel.signatures if s not in before[kernel]]
                                 for kernel in kernels}
print(json.dumps(gained))
"""


def test_the_training_envs_jobs_are_the_signatures_its_games_call():
    """Against snapshots (the compiled mover with a policy stack) and scripted agents only (without one): after
    compiling the env's jobs, 200 steps of its games (deals, steps, scores, opponents) compile nothing more."""
    done = subprocess.run([sys.executable, "-c", PLAY_AFTER_COMPILING], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    gained = json.loads(done.stdout.strip().splitlines()[-1])
    for mixture, kernels in gained.items():
        assert set(kernels) == {"step", "_move", "deal_seeded", "masks_of", "holdings"}, mixture
        assert all(not signatures for signatures in kernels.values()), (mixture, kernels)


# --------------------------------------------------------------------------- packetrow compile
def test_packetrow_compile_compiles_the_main_jobs_kernels_and_keeps_nothing(capsys, tmp_path, monkeypatch):
    import tempfile

    from packetrow_cli.main import main

    folders, temporary = [], tempfile.TemporaryDirectory
    monkeypatch.setattr(tempfile, "TemporaryDirectory",
                        lambda **options: folders.append(temporary(dir=tmp_path, **options)) or folders[-1])
    assert main(["compile"]) == 0
    assert capsys.readouterr().out.startswith("Compiled the kernels of quick's runs in ")
    assert len(folders) == 1 and list(tmp_path.iterdir()) == []  # the warm-up run's folder, removed


def test_the_warm_up_run_keeps_the_configs_settings_with_its_own_budget():
    from packetrow_train.compile_command import warm_up_config
    from packetrow_train.config import load_config

    shipped, run = load_config("ppo_packetrow"), warm_up_config("ppo_packetrow")
    assert (run.env.num_players, run.env.observation_mode, run.env.observation_encoding, run.pool.mixture,
            run.ppo.net_arch, run.ppo.activation, run.seed) == \
        (shipped.env.num_players, shipped.env.observation_mode, shipped.env.observation_encoding,
         shipped.pool.mixture, shipped.ppo.net_arch, shipped.ppo.activation, shipped.seed)
    assert (run.total_timesteps, run.env.n_envs, run.ppo.n_steps, run.eval.final_games, run.checkpoint.every,
            run.log.tensorboard) == (256, 2, 128, 0, 0, False)


@pytest.mark.parametrize("text, error", [
    ("trainer: rllib\n", "trains with rllib: packetrow compile compiles the kernels of an SB3 run"),
    ("- quick\n", "a mapping of keys to values"),
    ("env: 5\n", "section 'env' must be a mapping of keys to values"),
])
def test_packetrow_compile_refuses_what_is_not_an_sb3_config(tmp_path, capsys, text, error):
    from packetrow_cli.main import main

    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(SystemExit) as stopped:
        main(["compile", "--config", str(tmp_path / "bad.yaml")])
    assert stopped.value.code == 2 and error in capsys.readouterr().err
