"""Prioritized fictitious self-play and the SB3 league (train/pool.py, train/league.py): PFSP's weights and
estimates against a hand computation, the configs' checks, and a tiny league run's matchmaking statistics."""

from collections import Counter

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")

from packetrow_agents.policy import NumpyPolicy  # noqa: E402
from packetrow_train import rollout_process  # noqa: E402
from packetrow_train.config import ConfigError, config_from_dict  # noqa: E402
from packetrow_train.league import League, train  # noqa: E402
from packetrow_train.pool import PFSP, OpponentPool  # noqa: E402
from packetrow_train.rollout import RolloutPPO  # noqa: E402
from packetrow_train.selfplay import make_vec_env  # noqa: E402
from packetrow_train.selfplay import train as train_selfplay  # noqa: E402
from tests.test_training import CONFIGS, small_policy, tiny  # noqa: E402


# --------------------------------------------------------------------------- PFSP
def test_pfsp_weights_are_hard_or_variance_and_uniform_when_all_zero():
    p = [0.0, 0.25, 0.5, 1.0]
    np.testing.assert_allclose(PFSP("hard", 2.0).weights(p), [0, 0.0625, 0.25, 1])
    np.testing.assert_allclose(PFSP("hard", 1.0).probabilities(p), np.array(p) / 1.75)
    np.testing.assert_allclose(PFSP("variance").weights(p), [0, 0.1875, 0.25, 0])
    np.testing.assert_allclose(PFSP("variance").probabilities([0.0, 1.0, 1.0]), [1 / 3] * 3)
    for bad, match in [(dict(weighting="soft"), "hard, variance"), (dict(exponent=0), "exponent"),
                       (dict(prior=1.5), "prior"), (dict(rate=0), "rate")]:
        with pytest.raises(ValueError, match=match):
            PFSP(**bad)


def test_the_estimates_move_toward_each_result_from_the_prior():
    pool = OpponentPool({"pfsp": 1.0}, max_snapshots=2, pfsp=PFSP(prior=0.4, rate=0.1))
    for step in (0, 100):
        pool.add(small_policy(step), step)
    assert pool.loss_rate("snapshot@0") == 0.4  # never met: the prior
    pool.record_results([("snapshot@0", 1.0), ("heuristic", 1.0), ("snapshot@7", 0.0), ("snapshot@0", 0.5),
                         ("snapshot@100", 0.0)])
    first = 0.4 + 0.1 * (1.0 - 0.4)
    assert pool.loss_rates == pytest.approx({"snapshot@0": first + 0.1 * (0.5 - first), "snapshot@100": 0.36})
    pool.add(small_policy(2), 200)  # snapshot@0 goes, and its estimate with it
    assert set(pool.loss_rates) == {"snapshot@100"} and pool.loss_rate("snapshot@200") == 0.4


@pytest.mark.parametrize("weighting", ["hard", "variance"])
def test_pfsp_draws_snapshots_by_their_weights(weighting):
    pool = OpponentPool({"pfsp": 0.6, "exploiters": 0.2, "random": 0.2}, pfsp=PFSP(weighting, 3.0, rate=1.0),
                        exploiter_draw="uniform")
    for step, loss in [(0, 0.2), (1, 0.9), (2, 0.5)]:
        pool.add(small_policy(step), step)
        pool.record_results([(f"snapshot@{step}", loss)])  # rate 1: the estimate is the last result
    pool.add_exploiter(small_policy(9), 5)
    pool.add_exploiter(small_policy(10), 6)
    f = np.array([0.2, 0.9, 0.5]) ** 3 if weighting == "hard" else np.array([0.16, 0.09, 0.25])
    expected = {f"snapshot@{i}": 0.6 * f[i] / f.sum() for i in range(3)} | {"exploiter@5": 0.1, "exploiter@6": 0.1}
    assert {row["name"]: row["probability"] for row in pool.matchmaking()} == pytest.approx(expected)
    names = Counter(getattr(o, "name", "random") for o in pool.sample(np.random.default_rng(0), 50_000))
    assert {n: names[n] / 50_000 for n in expected} == pytest.approx(expected, abs=0.01)


# --------------------------------------------------------------------------- configs
def league_data(tmp_path, total_timesteps=2048, **league) -> dict:
    """configs/league.yaml at tiny()'s sizes: an exploiter of 256 steps (tiny()'s base config) every 512 steps."""
    base = tiny()
    base["eval"].update(every=0, final_games=0)
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    data = yaml.safe_load((CONFIGS / "league.yaml").read_text())
    data.update({key: base[key] for key in ("env", "ppo", "eval", "checkpoint", "log")},
                total_timesteps=total_timesteps, seed=3)
    data["pool"].update(snapshot_every=512)
    data["pool"]["mixture"]["exploiters"] = 0.5
    data["league"].update(every=512, steps=256, config=str(tmp_path / "base.yaml"), max_exploiters=2, **league)
    return data


@pytest.mark.parametrize("change, message", [
    (lambda d: d["pool"]["mixture"].update(exploiters=0.0), "no weight to the source exploiters"),
    (lambda d: d["league"].update(every=0), "only a league makes"),
    (lambda d: d["league"].update(start="best"), "league.start must be one of scratch, main"),
    (lambda d: d["league"].update(draw="hard"), "league.draw must be one of pfsp, uniform"),
    (lambda d: d["league"].update(num_players=6), "league.num_players must be one of 2, 3, 4, 5"),
    (lambda d: d["league"].update(steps=0), "league.steps must be > 0"),
    (lambda d: d["league"].update(config="no_such_config"), "league.config: no config file at no_such_config"),
    (lambda d: d["pool"].update(pfsp_weighting="soft"), "pool.pfsp_weighting must be one of hard, variance"),
    (lambda d: d["pool"].update(pfsp_prior=1.5), r"pool.pfsp_prior must be in \[0, 1\]"),
    (lambda d: d["pool"].update(pfsp_rate=0.0), r"pool.pfsp_rate must be in \(0, 1\]"),
    (lambda d: d["pool"].update(pfsp_exponent=-1.0), "pool.pfsp_exponent must be > 0"),
])
def test_bad_pfsp_and_league_values_are_refused(tmp_path, change, message):
    data = league_data(tmp_path)
    change(data)
    with pytest.raises(ConfigError, match=message):
        config_from_dict(data)


def test_a_league_config_trains_through_the_league(tmp_path):
    with pytest.raises(ConfigError, match="packetrow_train.league.train"):
        train_selfplay(config_from_dict(league_data(tmp_path)), out=tmp_path / "run")
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------- a tiny league
@pytest.fixture(scope="module")
def league_run(tmp_path_factory):
    """configs/league.yaml, tiny: exploiters made at steps 512, 1024 and 1536, the last two kept (the pipeline's
    rollouts in a forked process where there is one, as configured)."""
    folder = tmp_path_factory.mktemp("league")
    return train(config_from_dict(league_data(folder)), out=folder / "run")


def test_the_league_trains_exploiters_and_keeps_the_newest(league_run):
    out = league_run.out
    made = sorted(p.name for p in (out / "exploiters").iterdir())
    assert made == ["step_0000000512", "step_0000001024", "step_0000001536"]
    for name in made:
        assert {"model.npz", "main.npz"} <= {p.name for p in (out / "exploiters" / name).iterdir()}
    pool = league_run.model.env.opponents.pool
    assert [step for step, _ in pool.exploiters] == [1024, 1536]
    saved = NumpyPolicy.load_npz(out / "exploiters" / "step_0000001536" / "model.npz")
    assert all(np.array_equal(a, b) for a, b in zip(pool.exploiters[-1][1].weights, saved.weights))
    met = {name for episode in league_run.callback.episodes for name in episode.opponents}
    assert {"exploiter@512", "exploiter@1024", "exploiter@1536"} <= met


def test_the_leagues_matchmaking_statistics(league_run):
    """The pool's loss rates are the moving estimates of the run's episodes, the draw's probabilities are f(p)
    within each PFSP source times the source's share, and the pool draws by them."""
    pool = league_run.model.env.opponents.pool
    config = yaml.safe_load((league_run.out / "config.yaml").read_text())
    rate, prior = config["pool"]["pfsp_rate"], config["pool"]["pfsp_prior"]
    kept = set(pool.loss_rates)
    estimates = {}
    for episode in league_run.callback.episodes:  # every episode of the run, in the order the trainer saw them
        for name in dict.fromkeys(episode.opponents):
            if name in kept:
                before = estimates.get(name, prior)
                estimates[name] = before + rate * ((1 - episode.win) - before)
    assert len(estimates) >= 4 and estimates == pytest.approx(pool.loss_rates, abs=1e-12)

    mixture = config["pool"]["mixture"]
    share = {source: weight / sum(mixture.values()) for source, weight in mixture.items()}
    exponent = config["pool"]["pfsp_exponent"]
    snapshots = [f"snapshot@{step}" for step, _ in pool.snapshots]
    exploiters = [f"exploiter@{step}" for step, _ in pool.exploiters]
    expected = {}
    for names, source in ((snapshots, "pfsp"), (exploiters, "exploiters")):
        f = np.array([estimates.get(n, prior) for n in names]) ** exponent  # hard weighting, league.draw pfsp
        expected |= {n: share[source] * w / f.sum() for n, w in zip(names, f)}
    expected[snapshots[-1]] += share["latest"]
    rows = {row["name"]: row for row in pool.matchmaking()}
    assert {n: row["probability"] for n, row in rows.items()} == pytest.approx(expected)
    assert {n: row["pfsp_weight"] for n, row in rows.items()} == pytest.approx(
        {n: estimates.get(n, prior) ** exponent for n in rows})
    drawn = Counter(getattr(o, "name", "scripted") for o in pool.sample(np.random.default_rng(1), 50_000))
    assert {n: drawn[n] / 50_000 for n in expected} == pytest.approx(expected, abs=0.01)


@pytest.mark.skipif(not rollout_process.available(), reason="rollouts in a process need fork (Linux)")
def test_a_league_in_a_rollout_process_trains_as_on_a_thread(tmp_path, monkeypatch):
    """Differential: the exploiters and PFSP's results reach the forked process's pool as the thread's."""
    runs = []
    for in_process in (False, True):
        monkeypatch.setattr(RolloutPPO, "pipeline_in_process", in_process)
        runs.append(train(config_from_dict(league_data(tmp_path, total_timesteps=1280)),
                          out=tmp_path / str(in_process)))
    a, b = runs
    assert all(np.array_equal(x, y) for x, y in zip(a.model.policy.state_dict().values(),
                                                     b.model.policy.state_dict().values()))
    assert a.model.env.opponents.pool.loss_rates == b.model.env.opponents.pool.loss_rates
    assert [s for s, _ in b.model.env.opponents.pool.exploiters] == [512, 1024]


def test_a_resumed_league_reloads_its_exploiters(league_run):
    config = config_from_dict(yaml.safe_load((league_run.out / "config.yaml").read_text()))
    env = make_vec_env(config)
    League(config).resume(env, league_run.out / "checkpoints" / "step_0000001024.zip", 1024)
    assert [step for step, _ in env.opponents.pool.exploiters] == [512, 1024]
    saved = NumpyPolicy.load_npz(league_run.out / "exploiters" / "step_0000000512" / "model.npz")
    assert all(np.array_equal(a, b) for a, b in zip(env.opponents.pool.exploiters[0][1].weights, saved.weights))


def test_the_rllib_trainer_refuses_the_sb3_pools_sources():
    from packetrow_train.rllib_selfplay import config_from_dict as rllib_config_from_dict

    with pytest.raises(ConfigError, match="pfsp, exploiters are sources of the SB3 trainer's pool"):
        rllib_config_from_dict({"trainer": "rllib", "league": {"mixture": {"pfsp": 1.0, "exploiters": 1.0}}})


def test_pfsp_results_reach_every_pool_of_one_game_envs(tmp_path):
    """With one env (and pool) per game, every pool gets every episode's results, so all hold the same estimates."""
    data = tiny(total_timesteps=512, pipeline=False)
    data["env"].update(vec_env="dummy", observation_encoding="onehot", num_players=[2])
    data["ppo"]["extractor_layer"] = 0
    data["pool"].update(mixture={"pfsp": 0.5, "heuristic": 0.5}, snapshot_every=128)
    data["eval"].update(every=0, final_games=0)
    result = train(config_from_dict(data), out=tmp_path)
    pools = [env.unwrapped.opponents for env in result.model.env.envs]
    assert len(pools) == 2 and pools[0].loss_rates and pools[0].loss_rates == pools[1].loss_rates
    met = [name for episode in result.callback.episodes for name in episode.opponents if name.startswith("snapshot@")]
    assert set(pools[0].loss_rates) <= set(met)


def test_a_bad_exploiter_base_config_is_refused_before_the_run(tmp_path):
    data = league_data(tmp_path)
    (tmp_path / "base.yaml").write_text("ppo:\n  n_steps: 0\n")
    with pytest.raises(ConfigError, match=r"league.config: .*base.yaml \(for exploit\): ppo.n_steps must be > 0"):
        train(config_from_dict(data), out=tmp_path / "run")
    assert not (tmp_path / "run").exists()
