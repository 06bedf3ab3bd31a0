"""Self-play training: a smoke run (train, checkpoint, export, reload, play, resume), the learner's own reward,
the opponent pool's mixture, the numpy export against torch, PolicyAgent loading, and config validation."""

import csv
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from packetrow_agents import HeuristicAgent, RandomAgent  # noqa: E402
from packetrow_agents import policy as policy_module  # noqa: E402
from packetrow_agents.policy import ModelFormatError, ModelNotFoundError, NumpyPolicy, PolicyAgent  # noqa: E402
from packetrow_agents.registry import make_agent  # noqa: E402
from packetrow_env import actions  # noqa: E402
from packetrow_env.env import final_rewards  # noqa: E402
from packetrow_env.compact_observation import encoder as compact_encoder  # noqa: E402
from packetrow_env.engine import Game  # noqa: E402
from packetrow_env.observation import encoder  # noqa: E402
from packetrow_env.single_agent_env import SingleAgentEnv  # noqa: E402
from packetrow_env.seat_view import SeatView
from packetrow_cli.main import main  # noqa: E402
from packetrow_train.policy_export import export_policy  # noqa: E402
from packetrow_train.pool import OpponentPool  # noqa: E402
from packetrow_train.config import ConfigError, config_from_dict, load_config  # noqa: E402
from packetrow_train.selfplay import _ppo_kwargs, train  # noqa: E402
from packetrow_arena.tournament import run_tournament  # noqa: E402

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
SIZE = encoder().size


def tiny(**top) -> dict:
    """quick.yaml with tiny step counts and evaluations, as plain data."""
    import yaml

    data = yaml.safe_load((CONFIGS / "quick.yaml").read_text())
    data.update(total_timesteps=2048, seed=3)
    data["env"].update(n_envs=2, num_players=[2, 3, 4, 5])
    data["pool"].update(snapshot_every=512)
    data["ppo"].update(n_steps=128, batch_size=128, n_epochs=1)
    data["eval"].update(every=1024, games=2, final_games=4, num_players=[2, 3], opponents=["random", "heuristic"],
                        workers=1)
    data["checkpoint"].update(every=1024)
    data["log"].update(progress_bar=False, tensorboard=True)
    data.update(top)
    return data


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One smoke training run shared by the tests that inspect it."""
    out = tmp_path_factory.mktemp("run")
    return train(config_from_dict(tiny()), out=out)


# --------------------------------------------------------------------------- the smoke run
def test_smoke_run_saves_checkpoints_snapshots_logs_and_evaluations(run):
    out = run.out
    assert run.model.num_timesteps >= 2048
    assert run.model_path == out / "model.zip" and run.model_path.is_file() and run.npz_path.is_file()
    assert sorted(p.name for p in (out / "checkpoints").glob("*.zip")) == ["step_0000001024.zip", "step_0000002048.zip"]
    assert (out / "checkpoints" / "step_0000001024.npz").is_file()
    snapshots = sorted(p.name for p in (out / "snapshots").glob("*.npz"))
    assert snapshots[0] == "step_0000000000.npz" and len(snapshots) == 5  # the initial policy, then every 512 steps
    assert any((out / "tb").rglob("events.out.tfevents.*"))
    assert (out / "config.yaml").is_file()
    import yaml
    versions = yaml.safe_load((out / "versions.yaml").read_text())  # what a table measured from this run quotes
    assert versions["numpy"] == np.__version__ and set(versions) >= {"python", "torch", "sb3-contrib", "packetrow"}
    with (out / "eval.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {(r["stage"], r["opponent"], r["num_players"]) for r in rows} >= {
        ("periodic", "random", "2"), ("periodic", "heuristic", "3"),
        ("final", "random", "2"), ("final", "heuristic", "3")}
    final = [r for r in rows if r["stage"] == "final"]
    assert all(int(r["games"]) == (4 if r["num_players"] == "2" else 6) for r in final)  # whole seat rotations
    assert all(0 <= float(r["win_rate"]) <= 1 and 1 <= float(r["mean_rank"]) <= int(r["num_players"]) for r in final)
    assert len(run.evaluation) == 4
    seconds = [float(r["train_seconds"]) for r in rows if r["opponent"] == "random" and r["num_players"] == "2"]
    assert 0 < seconds[0] <= seconds[1] <= seconds[2] < run.wall_seconds  # training time, evaluations left out


def test_stop_ends_training_after_the_evaluation_it_accepts(tmp_path):
    """``train(stop=...)`` sees each periodic evaluation's rows and ends the run at the first it accepts."""
    seen = []

    def stop(rows):
        seen.append(sorted((r["opponent"], r["num_players"]) for r in rows))
        return len(seen) == 1

    result = train(config_from_dict(tiny(total_timesteps=8192)), out=tmp_path / "run", stop=stop)
    assert len(seen) == 1 and seen[0] == [("heuristic", 2), ("heuristic", 3), ("random", 2), ("random", 3)]
    assert 1024 <= result.model.num_timesteps < 2048  # the rollout that reached the evaluation, not 8192
    import torch
    assert torch.distributions.Distribution._validate_args  # switched off for the run only


def test_eval_rows_keep_an_older_files_columns(tmp_path):
    """Resuming a run whose eval.csv predates a column appends rows under the file's own header."""
    from packetrow_train.run_dir import EVAL_COLUMNS, append_eval_rows

    path = tmp_path / "eval.csv"
    older = [c for c in EVAL_COLUMNS if c != "train_seconds"]
    path.write_text(",".join(older) + "\n")
    append_eval_rows(path, [dict.fromkeys(EVAL_COLUMNS, 1)])
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == older and set(rows[0].values()) == {"1"}


def test_exported_npz_plays_as_a_policy_agent(run):
    agent = PolicyAgent.load(run.npz_path)
    assert agent.observation_mode == "tracked" and agent.metadata["num_timesteps"] == run.model.num_timesteps
    assert agent.metadata["config_name"] == "quick"
    result = run_tournament([agent, "random", "heuristic"], 3, 3, seed=1, progress=False)
    assert result.row("ppo")["games"] == 3
    spec_agent = make_agent(f"ppo:path={run.npz_path},deterministic=false", seed=2)
    assert isinstance(spec_agent, PolicyAgent) and not spec_agent.deterministic
    # the .zip checkpoint, loaded by its owner through SB3, exports the same policy
    from sb3_contrib import MaskablePPO
    from_zip = PolicyAgent(policy=export_policy(MaskablePPO.load(run.model_path, device="cpu")))
    assert agent.observation_encoding == from_zip.observation_encoding == "compact"  # quick.yaml's
    game = Game.new(4, seed=5)
    observation = compact_encoder().encode(game, 0, "tracked")
    mask = game.legal_action_mask()
    np.testing.assert_allclose(from_zip.probabilities(observation, mask), agent.probabilities(observation, mask),
                               atol=1e-6)
    # as opponents in the single-agent view
    env = SingleAgentEnv(3, opponents=[agent, spec_agent])
    env.reset(seed=0)
    while True:
        *_, terminated, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if terminated:
            break


def test_training_episode_rewards_are_the_learners_own(run):
    """Inside the training loop, Monitor's episode reward is final_rewards(...)[learner seat], whatever the seat."""
    episodes = list(run.callback.episodes)
    assert len(episodes) > 30
    for num_players, seat, reward, win, expected, opponents in episodes:
        assert reward == pytest.approx(expected, abs=1e-6)
        assert len(opponents) == num_players - 1
    assert len({seat for _, seat, *_ in episodes}) >= 4
    assert {n for n, *_ in episodes} == {2, 3, 4, 5}
    faced = Counter(name.split("@")[0] for *_, opponents in episodes for name in opponents)
    assert set(faced) == {"snapshot", "heuristic", "random"}


def test_resume_continues_the_step_count(run, tmp_path, capsys):
    checkpoint = run.out / "checkpoints" / "step_0000001024.zip"
    config = tmp_path / "more.yaml"
    import yaml
    config.write_text(yaml.safe_dump(tiny(total_timesteps=2560)))
    out = tmp_path / "resumed"
    with pytest.raises(SystemExit):  # a checkpoint is unpickled: only with the user's word that it is his own
        main(["train", "--config", str(config), "--resume", str(checkpoint), "--out", str(out), "--no-progress"])
    assert "--trust-checkpoint" in capsys.readouterr().err and not out.exists()
    assert main(["train", "--config", str(config), "--resume", str(checkpoint), "--out", str(out),
                 "--no-progress", "--trust-checkpoint"]) == 0
    trained = PolicyAgent.load(out / "model.npz").metadata["num_timesteps"]
    assert 2560 <= trained < 2560 + 256  # from 1024 on, not from 0, stopping at the first rollout past the total
    printed = capsys.readouterr().out
    assert f"Trained {trained - 1024} steps in" in printed and f"resumed at step 1024: {trained} steps in all" in printed
    with pytest.raises(SystemExit):  # already there: says to raise total_timesteps
        main(["train", "--config", str(config), "--resume", str(out / "model.zip"), "--out", str(out),
              "--no-progress", "--trust-checkpoint"])
    assert "already trained 2560 steps" in capsys.readouterr().err
    (tmp_path / "junk.zip").write_bytes(b"junk")
    with pytest.raises(SystemExit):
        main(["train", "--config", str(config), "--resume", str(tmp_path / "junk.zip"), "--out", str(out),
              "--trust-checkpoint"])
    assert "cannot resume from" in capsys.readouterr().err


def test_subprocess_envs_get_the_snapshots(tmp_path):
    data = tiny(total_timesteps=1024, pipeline=False)  # the pipeline needs the batched stack
    data["env"].update(vec_env="subproc", n_envs=2, observation_encoding="onehot")
    data["ppo"].update(extractor_layer=0, share_extractor=True)  # the compact extractor's layer needs compact
    data["pool"].update(snapshot_every=256, mixture={"latest": 1.0})
    data["eval"].update(every=0, final_games=0)
    data["log"].update(tensorboard=False)
    result = train(config_from_dict(data), out=tmp_path)
    faced = {name for *_, opponents in result.callback.episodes for name in opponents}
    assert {"snapshot@256", "snapshot@512"} <= faced  # added after the workers started


# --------------------------------------------------------------------------- the learner's reward
def test_the_learners_shared_win_counts_its_share(tmp_path):
    """The self-play statistics count a win shared by k as 1/k, as tournaments and the RLlib league do."""
    from packetrow_train.selfplay import make_callback

    callback = make_callback(config_from_dict(tiny()), tmp_path)
    tied = {"vp": 12, "cash": 4, "winner": True}
    for seat, share in [(0, 0.5), (1, 0.5), (2, 0.0)]:
        callback._record({"seat": seat, "num_players": 3, "episode": {"r": 1.0},
                          "scores": [tied, dict(tied), {"vp": 3, "cash": 0, "winner": False}]})
        assert callback.episodes[-1].win == share


def test_learner_reward_sign_matches_its_final_ranking():
    env = SingleAgentEnv([2, 3, 4, 5], opponents=RandomAgent(1))
    rng = np.random.default_rng(0)
    seats = set()
    for episode in range(30):
        env.reset(seed=100 + episode)
        while True:
            _, reward, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            if terminated:
                break
        seat, scores, n = info["seat"], info["scores"], info["num_players"]
        seats.add(seat)
        assert reward == final_rewards(scores, "rank")[seat]
        keys = [(row["vp"], row["cash"]) for row in scores]
        better = sum(k > keys[seat] for k in keys)
        worse = sum(k < keys[seat] for k in keys)
        assert np.sign(reward) == np.sign(worse - better)
    assert len(seats) >= 4


# --------------------------------------------------------------------------- the opponent pool
def small_policy(seed: int, sizes=(SIZE, 8)) -> NumpyPolicy:
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=(a, b)) for a, b in zip(sizes, sizes[1:])]
    return NumpyPolicy(weights, [rng.normal(size=w.shape[1]) for w in weights], rng.normal(size=(sizes[-1], actions.NUM_ACTIONS)),
                       rng.normal(size=actions.NUM_ACTIONS))


def test_pool_sampling_follows_the_mixture():
    mixture = {"latest": 0.3, "uniform": 0.1, "recent": 0.2, "heuristic": 0.25, "random": 0.15}
    pool = OpponentPool(mixture, max_snapshots=4, recent_decay=0.5)
    for step in range(6):
        pool.add(small_policy(step), step * 100)
    assert [s for s, _ in pool.snapshots] == [200, 300, 400, 500]  # the oldest went first
    rng = np.random.default_rng(0)
    draws = pool.draw(rng, 40_000)
    sources = Counter(source for source, _ in draws)
    for source, weight in mixture.items():
        assert sources[source] / len(draws) == pytest.approx(weight, abs=0.01)
    assert {index for source, index in draws if source == "latest"} == {3}
    recent = Counter(index for source, index in draws if source == "recent")
    expected = np.array([0.125, 0.25, 0.5, 1.0]) / 1.875
    np.testing.assert_allclose([recent[i] / sources["recent"] for i in range(4)], expected, atol=0.015)
    uniform = Counter(index for source, index in draws if source == "uniform")
    np.testing.assert_allclose([uniform[i] / sources["uniform"] for i in range(4)], 0.25, atol=0.03)
    # sample() builds the agents: snapshots as PolicyAgents, scripted ones from their specs, one object per seat
    opponents = pool.sample(np.random.default_rng(1), 4)
    assert len({id(o) for o in opponents}) == 4
    kinds = Counter(type(o) for _ in range(200) for o in pool.sample(rng, 3))
    assert set(kinds) == {PolicyAgent, HeuristicAgent, RandomAgent}


def test_a_player_counts_mixture_replaces_the_mixture_in_its_games():
    pool = OpponentPool({"random": 1.0}, by_players={4: {"heuristic": 3.0, "latest": 1.0}})
    pool.add(small_policy(0), 0)
    rng = np.random.default_rng(0)
    assert {type(o) for o in pool.sample(rng, 1) for _ in range(20)} == {RandomAgent}  # 2 players: the mixture
    assert {type(o) for _ in range(50) for o in pool.sample(rng, 2)} == {RandomAgent}  # 3 players too
    fours = Counter(source for source, _ in pool.draw(rng, 30_000, num_players=4))
    assert set(fours) == {"heuristic", "latest"} and fours["heuristic"] / 30_000 == pytest.approx(0.75, abs=0.01)
    assert pool.source_probabilities(4) == {"heuristic": 0.75, "latest": 0.25}
    assert pool.source_probabilities() == pool.source_probabilities(2) == {"random": 1.0}
    assert [row["probability"] for row in pool.matchmaking(4)] == [0.25] and pool.matchmaking()[0]["probability"] == 0
    assert not pool.uses_results
    assert OpponentPool({"random": 1.0}, by_players={2: {"pfsp": 1.0}}).uses_results
    with pytest.raises(ValueError, match="keyed by a player count 2-5, got '4'"):
        OpponentPool({"random": 1.0}, by_players={"4": {"heuristic": 1.0}})


def test_pool_without_snapshots_draws_only_scripted_agents():
    pool = OpponentPool({"latest": 0.5, "heuristic": 0.25, "random": 0.25})
    assert pool.source_probabilities() == {"latest": 0.0, "heuristic": 0.5, "random": 0.5}
    assert {type(o) for o in pool.sample(np.random.default_rng(0), 50)} == {HeuristicAgent, RandomAgent}
    with pytest.raises(RuntimeError, match="no snapshot"):
        OpponentPool({"uniform": 1.0}).sample(np.random.default_rng(0), 1)
    with pytest.raises(ValueError, match="unknown opponent source 'newest'"):
        OpponentPool({"newest": 1.0})


# --------------------------------------------------------------------------- numpy export
@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_numpy_export_matches_the_torch_policy(activation, tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    env = SingleAgentEnv([2, 4], opponents=RandomAgent(0))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [32, 16], "activation_fn": {"tanh": torch.nn.Tanh,
                                                                               "relu": torch.nn.ReLU}[activation]})
    exported = export_policy(model)
    path = exported.save(tmp_path / "p.npz")
    policy = NumpyPolicy.load_npz(path)
    assert policy.activation == activation and policy.observation_size == SIZE
    rng = np.random.default_rng(0)
    observations, masks = [], []
    for seed in range(8):  # real observations and masks, and random ones
        observation, _ = env.reset(seed=seed)
        observations.append(observation)
        masks.append(env.action_masks())
    observations += list(rng.random((8, SIZE), dtype=np.float32) * 3)
    masks += list(rng.random((8, actions.NUM_ACTIONS)) < 0.3)
    for mask in masks:
        mask[rng.integers(actions.NUM_ACTIONS)] = True
    observations, masks = np.array(observations, dtype=np.float32), np.array(masks)
    with torch.no_grad():
        obs = torch.as_tensor(observations)
        logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(model.policy.extract_features(
            obs, model.policy.pi_features_extractor))).numpy()
        probabilities = model.policy.get_distribution(obs, action_masks=masks).distribution.probs.numpy()
    np.testing.assert_allclose(policy.logits(observations), logits, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(policy.probabilities(observations, masks), probabilities, rtol=1e-4, atol=1e-6)
    assert (policy.probabilities(observations, masks)[~masks] == 0).all()
    agent = PolicyAgent(policy=policy)
    predicted, _ = model.predict(observations, action_masks=masks, deterministic=True)
    assert [agent.act(SeatView.of_observation(o, m)) for o, m in zip(observations, masks)] == list(predicted)
    sampler = PolicyAgent(policy=policy, deterministic=False, seed=4)
    assert all(masks[i][sampler.act(SeatView.of_observation(observations[i], masks[i]))]
               for i in range(len(masks)) for _ in range(5))


# --------------------------------------------------------------------------- PolicyAgent errors
def test_policy_agent_errors_say_what_to_do(tmp_path, monkeypatch):
    with pytest.raises(ModelNotFoundError, match="packetrow train"):
        PolicyAgent.load(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="no model file"):  # through the registry it is bad input
        make_agent(f"ppo:path={tmp_path / 'missing.npz'}")
    monkeypatch.setitem(policy_module.SHIPPED_POLICIES, "ppo", tmp_path / "models" / "ppo_packetrow.npz")
    with pytest.raises(ModelNotFoundError, match="no shipped model.*packetrow train --config configs/quick.yaml"):
        PolicyAgent.load()
    small_policy(0, (10, 4)).save(tmp_path / "models" / "ppo_packetrow.npz")
    agent = PolicyAgent.load()  # the shipped model, once there is one
    with pytest.raises(ModelFormatError, match=f"observation has {SIZE} floats but the model reads 10"):
        agent.act(SeatView.of_observation(np.zeros(SIZE, np.float32), np.ones(actions.NUM_ACTIONS, bool)))
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ModelFormatError, match="not a policy"):
        PolicyAgent.load(tmp_path / "junk.npz")
    with pytest.raises(ModelFormatError, match="SB3 checkpoints .* not loaded as agents.*model.npz"):
        PolicyAgent.load(tmp_path / "model.zip")
    with pytest.raises(ModelFormatError, match="unknown model file type"):
        (tmp_path / "model.pt").write_bytes(b"")
        PolicyAgent.load(tmp_path / "model.pt")


# --------------------------------------------------------------------------- config validation
@pytest.mark.parametrize("name", ["quick", "selfplay_2p", "selfplay_4p", "selfplay_mixed", "pfsp", "league",
                                  "ppo_packetrow_robust", "ppo_packetrow_robust_2",
                                  "ppo_packetrow_robust_3", "ppo_packetrow_mmd_2p",
                                  "ppo_packetrow_mmd_2p_step2", "ppo_packetrow_mmd_2p_uniform",
                                  "ppo_packetrow_mmd_2p_step3", "ppo_packetrow_mmd_2p_step4",
                                  "ppo_packetrow_mmd_2p_fresh", "ppo_packetrow_mmd_2p_fresh_heuristic",
                                  "ppo_packetrow_mmd_2p_step5", "ppo_packetrow_mmd_2p_step6",
                                  "ppo_packetrow_mmd_2p_step7", "ppo_packetrow_mmd_2p_step8",
                                  "exploit_magnet_mmd_2p"])
def test_shipped_configs_load(name):
    config = load_config(CONFIGS / f"{name}.yaml")
    assert config.name == name and config.total_timesteps > 0


@pytest.mark.parametrize("name", ["rllib_quick", "rllib_selfplay"])
def test_shipped_rllib_configs_load_without_ray(name):
    import yaml

    from packetrow_train.rllib_selfplay import config_from_dict as rllib_config

    config = rllib_config(yaml.safe_load((CONFIGS / f"{name}.yaml").read_text()), name)
    assert config.name == name and config.trainer == "rllib" and config.ppo.iterations > 0


@pytest.mark.parametrize("change, message", [
    ({"epochs": 3}, r"unknown key epochs; allowed top-level keys: trainer, name, seed, total_timesteps.*ppo: learning_rate"),
    ({"ppo": {"lr": 0.1}}, r"unknown key ppo.lr; allowed keys in ppo: learning_rate, lr_schedule, n_steps"),
    ({"pool": {"mixture": {"newest": 1.0}}}, r"pool.mixture: unknown opponent source 'newest'"),
    ({"pool": {"mixture": {"random": 0}}}, r"weights sum to 0"),
    ({"pool": {"mixture": {"ppo:path=nowhere/model.npz": 1.0}}},
     r"pool.mixture: opponent source 'ppo:path=nowhere/model.npz': no model file at nowhere/model.npz"),
    ({"env": {"num_players": [2, 6]}}, r"env.num_players must be a player count 2-5"),
    ({"pool": {"mixture_by_players": {7: {"heuristic": 1.0}}}},
     r"pool.mixture_by_players: the mixtures by player count are keyed by a player count 2-5, got 7"),
    ({"pool": {"mixture_by_players": {4: {"wizard": 1.0}}}},
     r"pool.mixture_by_players: 4 players: unknown opponent source 'wizard'"),
    ({"env": {"num_players": [2, 4]}, "pool": {"mixture_by_players": {3: {"heuristic": 1.0}}}},
     r"pool.mixture_by_players gives a mixture to \[3\] players, but env.num_players \[2, 4\] never deals"),
    ({"env": {"vec_env": "threads"}}, r"env.vec_env must be one of batched, dummy, subproc"),
    ({"ppo": {"lr_schedule": "cosine"}}, r"ppo.lr_schedule must be one of constant, linear"),
    ({"env": {"n_envs": 0}}, r"env.n_envs must be > 0"),
    ({"ppo": {"gamma": 1.5}}, r"ppo.gamma must be in \(0, 1\]"),
    ({"ppo": {"n_steps": "many"}}, r"ppo.n_steps must be an integer"),
    ({"ppo": {"net_arch": [64, 0]}}, r"ppo.net_arch must be a non-empty list"),
    ({"ppo": {"extractor_layer": -1}}, r"ppo.extractor_layer must be >= 0"),
    ({"ppo": {"extractor_layer": 64}, "env": {"observation_encoding": "onehot", "vec_env": "dummy"}},
     r"ppo.extractor_layer \(64\) needs env.observation_encoding 'compact'"),
    ({"ppo": {"batch_size": 1024}}, r"ppo.batch_size \(1024\) must be at most one rollout, .* = 256"),
    ({"update_threads": 2}, r"pipeline needs .* update_threads 0 \(got 2\): the update runs beside the next rollout"),
    ({"env": {"vec_env": "dummy", "observation_encoding": "onehot"}, "ppo": {"extractor_layer": 0}},
     r"pipeline needs env.vec_env 'batched' \(got 'dummy'\)"),
    ({"eval": {"opponents": ["wizard"]}}, r"eval.opponents: unknown agent 'wizard'"),
    ({"log": "loud"}, r"section 'log' must be a mapping"),
    ({"seed": True}, r"seed must be an integer"),
    ({"name": "../../x"}, r"name must be a plain name .*no path separators or '\.\.'"),
    ({"name": "/abs/path"}, r"name must be a plain name"),
    ({"name": "a/b"}, r"name must be a plain name"),
    ({"name": "a\\b"}, r"name must be a plain name"),
    ({"name": ".."}, r"name must be a plain name"),
    ({"name": ""}, r"name must be a plain name"),
])
def test_config_errors_name_the_key_and_what_is_allowed(change, message):
    data = tiny()
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    with pytest.raises(ConfigError, match=message):
        config_from_dict(data, "test.yaml")


def test_config_values_are_converted():
    data = tiny()
    data["ppo"]["learning_rate"] = "3e-4"  # YAML 1.1 reads this as a string
    data["env"]["num_players"] = 4
    config = config_from_dict(data)
    assert config.ppo.learning_rate == 3e-4 and config.env.num_players == [4]
    assert config_from_dict({}).ppo.net_arch == [64, 64]  # every key has a default
    data["ppo"]["lr_schedule"] = "linear"
    schedule = _ppo_kwargs(config_from_dict(data))["learning_rate"]
    assert schedule(1.0) == pytest.approx(3e-4) and schedule(0.25) == pytest.approx(7.5e-5)


def test_cli_reports_config_errors(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo:\n  lr: 0.1\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--config", str(bad)])
    assert exit_info.value.code == 2
    assert "unknown key ppo.lr" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--config", str(tmp_path / "none.yaml")])
    assert "no config file" in capsys.readouterr().err


def test_a_fresh_run_refuses_a_used_out_unless_overwrite(tmp_path, capsys):
    """An earlier run's eval.csv, checkpoints and TensorBoard logs are never silently mixed with or lost to a new run."""
    import yaml

    config = tmp_path / "tiny.yaml"
    data = tiny(total_timesteps=256)
    data["eval"].update(every=0, final_games=0)
    data["checkpoint"].update(every=0)
    config.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    (out / "tb" / "ppo_1").mkdir(parents=True)
    (out / "tb" / "ppo_1" / "events.out.tfevents.earlier").write_text("")
    (out / "eval.csv").write_text("earlier\n")
    (out / "notes.txt").write_text("mine\n")
    with pytest.raises(SystemExit):
        main(["train", "--config", str(config), "--out", str(out), "--no-progress"])
    error = capsys.readouterr().err
    assert "already holds files" in error and "--overwrite" in error
    assert (out / "eval.csv").read_text() == "earlier\n" and (out / "tb" / "ppo_1" / "events.out.tfevents.earlier").exists()
    assert main(["train", "--config", str(config), "--out", str(out), "--no-progress", "--overwrite"]) == 0
    # the earlier run's logs are gone: the curve shows one run
    assert not (out / "eval.csv").exists() and not list((out / "tb").rglob("*.earlier"))
    assert (out / "notes.txt").read_text() == "mine\n" and (out / "model.npz").is_file()  # the user's stay


def test_no_config_name_writes_outside_runs(tmp_path, monkeypatch):
    """The default output directory runs/<name> stays under runs/, even for a TrainConfig built in code."""
    monkeypatch.chdir(tmp_path)
    for name in ["../../escape", str(tmp_path / "abs"), "sub/dir"]:
        config = config_from_dict(tiny())
        config.name = name
        with pytest.raises(ConfigError, match="name must be a plain name"):
            train(config)
    assert sorted(p.name for p in tmp_path.iterdir()) == []



def test_train_dispatches_on_the_trainer_key(tmp_path, capsys):
    """trainer: rllib goes to the RLlib trainer (here without Ray: a one-line error, nothing written);
    --ray is refused for SB3 configs; an unknown trainer names the allowed ones."""
    rllib = tmp_path / "rllib.yaml"
    rllib.write_text("trainer: rllib\nname: r\nppo: {iterations: 1}\n")
    out = tmp_path / "out"
    try:
        import ray  # noqa: F401
        has_ray = True
    except ImportError:
        has_ray = False
    if not has_ray:
        with pytest.raises(SystemExit):
            main(["train", "--config", str(rllib), "--out", str(out)])
        assert 'pip install "packetrow[ray]"' in capsys.readouterr().err
        assert not out.exists()
    with pytest.raises(SystemExit):
        main(["train", "--config", "quick", "--ray", "auto", "--out", str(out)])
    assert "--ray applies to RLlib configs" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("trainer: jax\n")
    with pytest.raises(SystemExit):
        main(["train", "--config", str(bad), "--out", str(out)])
    assert "trainer must be one of sb3, rllib" in capsys.readouterr().err
