"""The Ray extra with a real Ray: tournaments as Ray tasks (one node and a two-node cluster), the RLlib
multi-agent env, and a tiny RLlib self-play run whose numpy export plays legal games.

Run in the environment of the [ray] extra (`.ci/run` makes one); elsewhere the module is skipped.
"""

import json

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'packetrow[ray]')")

from packetrow_env import actions  # noqa: E402
from packetrow_env.engine import IllegalActionError  # noqa: E402
from packetrow_env.env import final_rewards  # noqa: E402
from packetrow_cli.main import main  # noqa: E402
from packetrow_arena.ray_cluster import play_chunks, ray_session  # noqa: E402
from packetrow_arena.tournament import _Runner, make_entries, run_tournament  # noqa: E402

SPECS = ["heuristic", "random", "random"]


def test_ray_session_reaches_no_cluster_with_a_clear_error():
    from packetrow_arena.ray_cluster import RayUnavailableError
    assert not ray.is_initialized()  # first in the module: no session yet
    with pytest.raises(RayUnavailableError, match="could not connect"):
        with ray_session("127.0.0.1:1"):
            pass


@pytest.fixture(scope="module")
def local_ray():
    with ray_session(num_cpus=2) as session:
        yield session


def test_ray_tournament_equals_the_local_one(local_ray):
    local = run_tournament(SPECS, num_players=2, games=9, seed=7, progress=False)
    on_ray = run_tournament(SPECS, num_players=2, games=9, seed=7, progress=False, ray=True, chunk_size=2)
    assert on_ray.records == local.records
    assert on_ray.format_table() == local.format_table()


def test_a_ray_tournament_records_its_games_and_resumes_to_the_local_files(local_ray, tmp_path):
    run_tournament(SPECS, num_players=2, games=4, seed=7, progress=False, ray=True, chunk_size=1, out=tmp_path / "a")
    assert len((tmp_path / "a" / "records.jsonl").read_text().splitlines()) == 5  # the header and 4 games
    run_tournament(SPECS, num_players=2, games=9, seed=7, progress=False, ray=True, chunk_size=2, out=tmp_path / "a",
                   resume=True)
    run_tournament(SPECS, num_players=2, games=9, seed=7, progress=False, out=tmp_path / "b")
    for name in ("records.jsonl", "games.jsonl", "table.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_tournament_command_with_ray_prints_the_same_table(local_ray, capsys):
    argv = ["tournament", "--agents", "heuristic,random", "--players", "2", "--games", "4", "--seed", "3",
            "--no-progress"]
    assert main(argv) == 0
    local = capsys.readouterr().out
    assert main(argv + ["--ray"]) == 0
    assert capsys.readouterr().out == local
    assert "heuristic" in local


def test_ray_ladder_equals_the_local_one(local_ray, tmp_path, capsys):
    """Building a ladder and placing an agent on it give the same tables with ``ray`` as without."""
    from packetrow_arena.ladder import build_ladder

    small = (("random", "random"), ("heuristic", "heuristic"), ("ppo", "ppo"))
    local = build_ladder(2, games=4, seed=3, progress=False, reference=small)
    on_ray = build_ladder(2, games=4, seed=3, progress=False, reference=small, ray=True)
    assert on_ray.to_dict() == local.to_dict() and on_ray.format_table() == local.format_table()
    reference = tmp_path / "ladder.json"
    reference.write_text(json.dumps(local.to_dict()))
    argv = ["ladder", "--agent", "random", "--games", "2", "--seed", "1", "--reference", str(reference),
            "--no-progress"]
    tables = []
    for extra in ([], ["--ray"]):
        assert main(argv + ["--out", str(tmp_path / f"placed{len(extra)}")] + extra) == 0
        tables.append(capsys.readouterr().out.replace(f"placed{len(extra)}", "placed"))  # the files' paths
    assert tables[0] == tables[1] and "**random**" in tables[0]


def test_tournament_on_a_two_node_cluster_uses_both_nodes():
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        with ray_session(cluster.address) as session:
            assert len([n for n in session.nodes() if n["Alive"]]) == 2
            # start a worker on each node first: a node still starting its workers would otherwise see the
            # other finish every game before it is ready
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
            ready = session.remote(lambda: session.get_runtime_context().get_node_id())
            warm = {session.get(ready.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
                node["NodeID"], soft=False)).remote()) for node in session.nodes() if node["Alive"]}
            assert len(warm) == 2
            entries = make_entries(SPECS)
            runner = _Runner(entries, 2, 5, "tracked")
            # chunks of several games keep each node's one CPU busy, so the tasks cannot all fit on one node
            records, nodes = play_chunks(runner, [list(range(i, i + 3)) for i in range(0, 24, 3)])
            assert len(nodes) == 2, "the games should run on both nodes"
            assert sorted(r["index"] for r in records) == list(range(24))
            on_cluster = run_tournament(SPECS, num_players=2, games=12, seed=5, progress=False, ray=cluster.address)
        local = run_tournament(SPECS, num_players=2, games=12, seed=5, progress=False)
        assert on_cluster.records == local.records
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


# --------------------------------------------------------------------------- the RLlib env
def test_rllib_env_observes_only_the_player_to_act_and_rewards_everyone_at_the_end():
    from packetrow_train.rllib_env import PacketRowMultiAgentEnv

    env = PacketRowMultiAgentEnv({"num_players": 3, "seed": 1, "reward_mode": "rank"})
    rng = np.random.default_rng(0)
    observations, _ = env.reset()
    steps = 0
    while True:
        (agent, observation), = observations.items()
        assert agent == f"player_{env.game.current_player}"
        assert env.observation_spaces[agent].contains(observation)
        mask = observation["action_mask"].astype(bool)
        action = int(rng.choice(np.flatnonzero(mask)))
        observations, rewards, terminateds, truncateds, infos = env.step({agent: action})
        steps += 1
        assert not truncateds["__all__"]
        if terminateds["__all__"]:
            break
        assert rewards == {agent: 0.0} and infos == {}
    assert env.game.is_over and steps > 20
    expected = final_rewards(env.game.scores(), "rank")
    assert rewards == {f"player_{p}": pytest.approx(r) for p, r in enumerate(expected)}
    assert set(observations) == {"player_0", "player_1", "player_2"}
    assert all(not o["action_mask"].any() for o in observations.values())
    assert infos == {a: {"scores": env.game.scores()} for a in observations}  # who won: the league's count


def test_rllib_env_refuses_an_illegal_action_and_changes_nothing():
    from packetrow_train.rllib_env import PacketRowMultiAgentEnv

    env = PacketRowMultiAgentEnv({"num_players": 2, "seed": 2})
    observations, _ = env.reset()
    (agent, observation), = observations.items()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    before = env.game.to_dict()
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step({agent: illegal})
    assert env.game.to_dict() == before
    with pytest.raises(ValueError, match="player to act"):
        env.step({"player_9": 0})
    with pytest.raises(ValueError, match="unknown env config keys"):
        PacketRowMultiAgentEnv({"players": 2})
    assert env.action_spaces[agent].n == actions.NUM_ACTIONS


# --------------------------------------------------------------------------- RLlib self-play
def tiny_config(**league):
    from packetrow_train.rllib_selfplay import config_from_dict

    return config_from_dict({
        "trainer": "rllib", "name": "tiny", "seed": 0,
        "ppo": {"iterations": 2, "train_batch_size": 256, "minibatch_size": 128, "num_epochs": 1, "net_arch": [16]},
        "runners": {"num_env_runners": 0, "num_envs_per_env_runner": 4, "num_cpus": 2},
        "league": {"mixture": {"latest": 0.5, "heuristic": 0.3, "random": 0.2}, **league},
        "eval": {"games": 4, "num_players": [2], "opponents": ["random"]}}, "tiny")


def test_rllib_self_play_grows_the_league_exports_a_policy_that_plays_and_repeats_itself(tmp_path):
    """Two runs with the same seed give the same iterations (losses, wins, steps) and the same weights."""
    from packetrow_agents.policy import PolicyAgent
    from packetrow_train.rllib_selfplay import train

    if ray.is_initialized():
        ray.shutdown()
    config = tiny_config(win_rate_threshold=0.0)  # every iteration freezes a copy: the league grows
    with ray_session(num_cpus=2):
        result = train(config, out=tmp_path / "run", progress=False)
        again = train(config, out=tmp_path / "again", progress=False)
    # main's initial weights are the first copy; each iteration freezes another
    assert [r["league_size"] for r in result.iterations] == [3, 4]
    assert result.env_steps >= 512
    # main's share of the games it finished (0 where it won none: a tiny untrained run may win none)
    assert all(0 <= r["main_win_rate"] <= 1 and np.isfinite(r["policy_loss"]) for r in result.iterations)
    timeless = [{k: v for k, v in r.items() if k != "wall_seconds"} for r in result.iterations]
    assert timeless == [{k: v for k, v in r.items() if k != "wall_seconds"} for r in again.iterations]
    agent = PolicyAgent.load(result.npz_path)
    twin = PolicyAgent.load(again.npz_path)
    for mine, theirs in zip(agent.policy.weights + [agent.policy.action_weight],
                            twin.policy.weights + [twin.policy.action_weight]):
        np.testing.assert_array_equal(mine, theirs)
    assert agent.policy.num_actions == actions.NUM_ACTIONS and agent.metadata["trainer"] == "rllib"
    played = run_tournament([agent, "random"], num_players=2, games=4, seed=0, progress=False)
    assert len(played.records) == 4 and all(r["scores"] for r in played.records)
    assert len(result.evaluation) == 1 and result.evaluation[0]["games"] == 4


def test_rllib_config_errors_name_the_key():
    from packetrow_train.config import ConfigError
    from packetrow_train.rllib_selfplay import config_from_dict

    with pytest.raises(ConfigError, match="unknown key ppo.epochs"):
        config_from_dict({"trainer": "rllib", "ppo": {"epochs": 3}})
    with pytest.raises(ConfigError, match="env.num_players must be one of 2, 3, 4, 5"):
        config_from_dict({"trainer": "rllib", "env": {"num_players": 7}})
    with pytest.raises(ConfigError, match="minibatch_size"):
        config_from_dict({"trainer": "rllib", "ppo": {"train_batch_size": 100, "minibatch_size": 200}})
    with pytest.raises(ConfigError, match="league.mixture: unknown opponent source 'champion'"):
        config_from_dict({"trainer": "rllib", "league": {"mixture": {"champion": 1.0}}})
    with pytest.raises(ConfigError, match="torch_threads must be > 0"):
        config_from_dict({"trainer": "rllib", "torch_threads": 0})


TINY_YAML = """trainer: rllib
name: tiny_cluster
seed: 0
ppo: {iterations: 1, train_batch_size: 128, minibatch_size: 64, num_epochs: 1, net_arch: [8]}
runners: {num_env_runners: 2, num_envs_per_env_runner: 8}
eval: {games: 0}
"""


def test_rllib_training_command_on_a_two_node_cluster_and_at_an_address_nobody_answers(tmp_path, capsys):
    """The README's cluster steps: `packetrow train --ray ADDRESS` with two env runners on two one-CPU nodes (each
    runner takes a CPU, so each node holds one), and a one-line error, nothing written, where nobody answers."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_YAML)
    with pytest.raises(SystemExit) as stopped:
        main(["train", "--config", str(config), "--out", str(tmp_path / "nobody"), "--ray", "127.0.0.1:1",
              "--no-progress"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "could not connect to a Ray cluster at '127.0.0.1:1'" in error
    assert not (tmp_path / "nobody").exists()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        assert main(["train", "--config", str(config), "--out", str(tmp_path / "run"), "--ray", cluster.address,
                     "--no-progress"]) == 0
        assert "Trained 1 RLlib iterations" in capsys.readouterr().out
        assert (tmp_path / "run" / "model.npz").is_file() and (tmp_path / "run" / "iterations.jsonl").is_file()
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
