"""The mixture agent: one member per game, drawn from the game's seed with the mixture's weights (by player count)."""

import json
from collections import Counter
from pathlib import Path

import pytest

from packetrow_agents.heuristic import HeuristicAgent
from packetrow_agents.mixture import SHIPPED_MIXTURES, MixtureAgent, MMDAgent, RobustAgent, read_mixture
from packetrow_agents.policy import SHIPPED_POLICIES, PolicyAgent, load_policy
from packetrow_agents.random_agent import RandomAgent
from packetrow_agents.registry import make_agent, model_files
from packetrow_arena.tournament import TournamentError, run_tournament
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView


def write(tmp_path, data, name="mix.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def first_member(agent, seed: int, num_players: int = 2):
    """The member ``agent`` plays in a game of ``seed`` (drawn at its first move)."""
    agent.reset(seed)
    agent.act(SeatView(Game.new(num_players=num_players, seed=seed)))
    return agent.member


def test_the_member_is_drawn_per_game_from_its_seed_with_the_weights(tmp_path):
    agent = make_agent("mixture:" + write(tmp_path, {"mixture": {"random": 1, "heuristic": 3}}))
    assert isinstance(agent, MixtureAgent) and agent.weights(2) == {"random": 0.25, "heuristic": 0.75}
    members = [first_member(agent, seed) for seed in range(400)]
    assert [first_member(agent, seed) for seed in range(400)] == members  # the game's seed decides it
    counts = Counter(type(member) for member in members)
    assert set(counts) == {RandomAgent, HeuristicAgent}
    assert 70 <= counts[RandomAgent] <= 130  # 100 expected: 0.25 of 400, binomial sd 8.7


def test_a_player_count_plays_its_own_mixture(tmp_path):
    path = write(tmp_path, {"mixture": {"random": 1}, "mixture_by_players": {"4": {"heuristic": 1}}})
    agent = make_agent("mixture:" + path)
    assert agent.weights(4) == {"heuristic": 1.0} and agent.weights(2) == agent.weights(3) == {"random": 1.0}
    assert isinstance(first_member(agent, 5, num_players=4), HeuristicAgent)
    assert isinstance(first_member(agent, 5, num_players=2), RandomAgent)


def test_a_mixture_of_one_agent_plays_that_agents_games(tmp_path):
    mixture = "mixture:" + write(tmp_path, {"mixture": {"heuristic": 1.0}})
    alone = run_tournament([mixture, "random"], 2, 6, seed=3, progress=False)
    direct = run_tournament(["heuristic", "random"], 2, 6, seed=3, progress=False)
    assert [game["actions"] for game in alone.records] == [game["actions"] for game in direct.records]


def test_its_files_are_the_mixture_and_its_members_models(tmp_path):
    path = write(tmp_path, {"mixture": {"ppo": 0.5, "ppo:path=runs/a/model.npz": 0.5}})
    files = model_files("mixture:" + path)
    assert {path, "runs/a/model.npz", "shipped policy"} <= set(files)


def same_policy(agent, path) -> bool:
    shipped = load_policy(path)
    return isinstance(agent, PolicyAgent) and all(
        (a == b).all() for a, b in zip(agent.policy.weights + [agent.policy.action_weight],
                                       shipped.weights + [shipped.action_weight]))


def test_a_shipped_policy_is_named_in_a_spec_and_its_file_is_checked_on_resume():
    assert set(SHIPPED_POLICIES) == {"ppo", "robust_br60", "robust_br60_br10", "robust_psro2", "mmd_2p",
                                      "mmd_2p_step7"}
    for name, path in SHIPPED_POLICIES.items():
        assert same_policy(make_agent(f"ppo:{name}"), path)
    assert model_files("ppo:robust_br60")["shipped robust_br60"] == SHIPPED_POLICIES["robust_br60"]
    assert "shipped robust_br60" not in model_files("ppo")


def test_robust_plays_the_shipped_psro_mixture_in_2_player_games_and_the_shipped_policy_in_others():
    agent = make_agent("robust")
    assert isinstance(agent, RobustAgent) and agent.name == "robust"
    two = agent.weights(2)
    assert set(two) == {"ppo:robust_br60", "ppo:robust_br60_br10", "ppo:robust_psro2"}
    assert sum(two.values()) == pytest.approx(1.0) and min(two.values()) > 0.1
    assert agent.weights(3) == agent.weights(4) == agent.weights(5) == {"ppo": 1.0}
    played = {id(first_member(agent, seed)) for seed in range(30)}
    assert played == {id(agent.members[spec]) for spec in two}  # each member plays some of 30 games
    assert same_policy(first_member(agent, 0, num_players=4), SHIPPED_POLICIES["ppo"])
    files = model_files("robust")
    assert files["shipped robust mixture"] == SHIPPED_MIXTURES["robust"]
    assert {f"shipped {name}" for name in ("robust_br60", "robust_br60_br10", "robust_psro2")} <= set(files)


def test_mmd_plays_the_shipped_mmd_mixture_in_2_player_games_and_the_shipped_policy_in_others():
    agent = make_agent("mmd")
    assert isinstance(agent, MMDAgent) and agent.name == "mmd"
    assert agent.weights(2) == {"ppo:mmd_2p": 0.3846, "ppo:mmd_2p_step7": 0.6154}
    assert agent.weights(3) == agent.weights(4) == agent.weights(5) == {"ppo": 1.0}
    played = {id(first_member(agent, seed)) for seed in range(30)}
    assert played == {id(agent.members[spec]) for spec in agent.weights(2)}  # each member plays some of 30 games
    for name in ("mmd_2p", "mmd_2p_step7"):
        assert same_policy(agent.members[f"ppo:{name}"], SHIPPED_POLICIES[name])
    assert same_policy(first_member(agent, 0, num_players=4), SHIPPED_POLICIES["ppo"])
    files = model_files("mmd")
    assert files["shipped mmd mixture"] == SHIPPED_MIXTURES["mmd"]
    assert {"shipped mmd_2p", "shipped mmd_2p_step7"} <= set(files)


def test_mmd_draws_in_every_game_the_policy_its_measured_mixture_file_draws(monkeypatch):
    # the model card's 2-player figures were measured with this file, which names the same policies by paths
    # relative to the checkout
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    measured = make_agent("mixture:benchmarks/records/round_robin_2p/with_step7/mixture_candidates_floor_0.62.json")
    shipped = make_agent("mmd")
    assert list(measured.weights(2).values()) == list(shipped.weights(2).values())
    for seed in range(20):
        assert same_policy(first_member(shipped, seed), first_member(measured, seed).path)


def test_the_old_name_of_the_robust_mixture_file_warns_and_still_names_it():
    with pytest.warns(DeprecationWarning, match="SHIPPED_MIXTURES\\['robust'\\]"):
        from packetrow_agents.shipped import SHIPPED_MIXTURE
    assert SHIPPED_MIXTURE == SHIPPED_MIXTURES["robust"]


@pytest.mark.parametrize("data, words", [
    ({"members": {"random": 1}}, "the keys mixture, mixture_by_players"),
    ({"mixture": {"random": 1}, "weights": {}}, "the keys mixture, mixture_by_players"),
    ({"mixture": {}}, "must map agent specs to weights"),
    ({"mixture": {"random": -1}}, "must be a number >= 0"),
    ({"mixture": {"random": True}}, "must be a number >= 0"),
    ({"mixture": {"random": 0}}, "the weights sum to 0"),
    ({"mixture": {"nobody": 1}}, "unknown agent 'nobody'"),
    ({"mixture": {"ppo:path=model.zip": 1}}, "SB3 checkpoints (.zip) are not loaded"),
    ({"mixture": {"mixture:other.json": 1}}, "is a mixture; list its members instead"),
    ({"mixture": {"robust": 1}}, "is a mixture; list its members instead"),
    ({"mixture": {"random": 1}, "mixture_by_players": {"7": {"random": 1}}}, "allowed: 2, 3, 4, 5"),
    ({"mixture": {"random": 1}, "mixture_by_players": [1]}, "must map player counts to mixtures"),
    ([1, 2], "must hold a JSON object"),
])
def test_a_bad_mixture_file_says_what_is_wrong_and_what_is_allowed(tmp_path, data, words):
    path = write(tmp_path, data)
    with pytest.raises(ValueError, match="mix.json") as error:
        read_mixture(path)
    assert words in str(error.value)
    with pytest.raises(TournamentError) as error:  # as a tournament's entry: before any game
        run_tournament(["mixture:" + path, "random"], 2, 2, progress=False)
    assert words in str(error.value)


def test_a_missing_or_unreadable_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="cannot read the mixture file .*nowhere.json"):
        read_mixture(tmp_path / "nowhere.json")
    (tmp_path / "binary.json").write_bytes(b"\x80\x81 not text")
    with pytest.raises(ValueError, match="binary.json is not JSON"):
        read_mixture(tmp_path / "binary.json")
    with pytest.raises(ValueError, match="needs its file"):
        MixtureAgent()
