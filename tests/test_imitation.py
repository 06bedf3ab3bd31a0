"""Behaviour cloning (packetrow imitate): the decisions read from records, the torch network equal to the numpy one,
training towards an agent's moves, the command and its errors, and the export as the search's opponent model."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from packetrow_agents.policy import NumpyPolicy, PolicyAgent, load_policy
from packetrow_arena.records import read_records
from packetrow_agents.search import SearchAgent
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from packetrow_cli.main import main
from packetrow_train.imitation import ImitationError, imitate, recorded_decisions, torch_policy
from packetrow_arena.tournament import run_tournament


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """A record file of 12 two-player games, the heuristic against the shipped policy."""
    out = tmp_path_factory.mktemp("records")
    run_tournament(["heuristic", "ppo"], num_players=2, games=12, seed=5, progress=False, out=out)
    return out / "records.jsonl"


@pytest.fixture(scope="module")
def heuristic_decisions(records):
    return recorded_decisions([records], "heuristic", PolicyAgent())


def test_the_decisions_are_the_agents_moves_with_a_choice_as_its_seat_saw_them(records, heuristic_decisions):
    decisions = heuristic_decisions
    assert len(decisions) > 100 and decisions.masks.sum(axis=1).min() >= 2
    assert decisions.masks[np.arange(len(decisions)), decisions.actions].all()
    assert sorted(set(decisions.games.tolist())) == list(range(12))
    # game 0 replayed by hand: the heuristic's seat's moves where it had a choice, read as the policy reads it
    record = read_records(records).games[0]
    game, seat = Game.new(2, seed=record["seed"]), record["agents"].index("heuristic")
    expected = []
    for action in record["actions"]:
        if game.current_player == seat and game.legal_action_mask().sum() >= 2:
            expected.append((PolicyAgent().read(SeatView(game, seat))[0], action))
        game.step(action)
    rows = np.flatnonzero(decisions.games == 0)
    assert len(rows) == len(expected)
    for row, (observation, action) in zip(rows, expected):
        assert np.array_equal(decisions.observations[row], observation) and decisions.actions[row] == action


def test_the_torch_network_computes_the_numpy_logits(heuristic_decisions):
    import torch

    policy = load_policy()
    module = torch_policy(policy)
    x = heuristic_decisions.observations[:64]
    with torch.no_grad():
        torch_logits = module(torch.as_tensor(x)).numpy()
    # float32 sums of 2,536 products (inputs up to 68 here) in torch's order and numpy's: torch's blocking follows its
    # thread count, and one CI run saw 7.4e-4 on a logit of -3.15 (a wrong network is off by whole units)
    np.testing.assert_allclose(torch_logits, policy.logits(x), rtol=1e-3, atol=2e-3)
    exported = module.export({"check": 1})
    np.testing.assert_allclose(exported.logits(x), policy.logits(x), rtol=1e-5, atol=1e-5)
    assert exported.metadata["check"] == 1 and exported.observation_encoding == policy.observation_encoding


def test_imitation_moves_the_policy_towards_the_agents_moves(heuristic_decisions):
    policy, report = imitate(heuristic_decisions, load_policy(), epochs=8, learning_rate=1e-3, seed=0)
    assert report["games"] == 12 and report["held_out_games"] == 2
    assert report["cross_entropy_after"] < report["cross_entropy_before"]
    assert report["agreement_after"] > report["agreement_before"] + 0.1  # 34% -> 50% of 88 held-out moves
    assert 1 <= report["epoch_kept"] <= 8
    assert isinstance(policy, NumpyPolicy) and policy.metadata["imitation"] == report


def test_imitation_fits_target_distributions_where_they_are_given(heuristic_decisions):
    """Soft targets (a search's policy, for distilling it): the cross-entropy is to the distributions, and agreement
    is with their most likely action; a target of the wrong shape is refused before training."""
    decisions = heuristic_decisions
    targets = np.where(decisions.masks, 1.0, 0.0)  # uniform over the legal actions, a quarter more on the recorded
    targets[np.arange(len(decisions)), decisions.actions] += decisions.masks.sum(1) / 4
    targets = (targets / targets.sum(1, keepdims=True)).astype(np.float32)
    soft = dataclasses.replace(decisions, targets=targets)
    policy, report = imitate(soft, load_policy(), epochs=8, learning_rate=1e-3, seed=0)
    assert report["cross_entropy_after"] < report["cross_entropy_before"]

    def recorded_probability(fitted):  # mean probability of the recorded moves, which the targets favour
        logits = np.where(decisions.masks, fitted.logits(decisions.observations), -np.inf)
        probabilities = np.exp(logits - logits.max(1, keepdims=True))
        probabilities /= probabilities.sum(1, keepdims=True)
        return probabilities[np.arange(len(decisions)), decisions.actions].mean()

    assert recorded_probability(policy) > recorded_probability(load_policy()) + 0.05
    with pytest.raises(ImitationError, match=r"targets must be one distribution over the \d+ actions"):
        imitate(dataclasses.replace(decisions, targets=targets[:, :5]), load_policy())


@pytest.mark.parametrize("options, words", [
    (dict(epochs=0), "epochs must be a whole number"),
    (dict(learning_rate=2.0), "learning rate must lie between 0 and 1"),
    (dict(holdout=1.0), "holdout must be a fraction"),
])
def test_bad_settings_are_refused(heuristic_decisions, options, words):
    with pytest.raises(ImitationError, match=words):
        imitate(heuristic_decisions, load_policy(), **options)


def test_an_agent_missing_from_the_records_is_named_with_those_recorded(records):
    with pytest.raises(ImitationError, match=r"no decision of agent 'ismcts'.*heuristic, ppo"):
        recorded_decisions([records], "ismcts", PolicyAgent())


def test_the_command_writes_an_export_the_search_takes_as_its_opponent_model(records, tmp_path, capsys):
    out = tmp_path / "model.npz"
    argv = ["imitate", str(records), "--agent", "heuristic", "--out", str(out), "--epochs", "2", "--no-progress"]
    assert main(argv) == 0
    assert "held-out agreement" in capsys.readouterr().out
    search = SearchAgent(seed=0, rollouts=8, determinizations=2, candidates=2, opponents=str(out))
    game = Game.new(2, seed=1)
    assert game.legal_action_mask()[search.act(SeatView(game))]
    # the same again without --overwrite: refused, the file untouched
    before = out.read_bytes()
    assert main(argv) == 2
    assert "exists; give --overwrite" in capsys.readouterr().err and out.read_bytes() == before


@pytest.mark.parametrize("change, words", [
    (["--out", "model.zip"], "--out must name a .npz file"),
    (["--agent", "random"], "no decision of agent 'random'"),
    (["--policy", "nowhere.npz"], "no model file"),
])
def test_command_errors_are_one_line_and_write_nothing(records, tmp_path, capsys, monkeypatch, change, words):
    monkeypatch.chdir(tmp_path)
    options = {"--agent": "heuristic", "--out": "model.npz", **dict(zip(change[::2], change[1::2]))}
    argv = ["imitate", str(records), "--no-progress", *[part for item in options.items() for part in item]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_help_and_bad_numbers(records, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["imitate", "--help"])
    assert exit_info.value.code == 0 and "usage: packetrow imitate" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["imitate", "r.jsonl", "--agent", "heuristic", "--out", "m.npz", "--epochs", "0"])
    assert exit_info.value.code == 2 and "expected a positive integer, got 0" in capsys.readouterr().err
    out = tmp_path / "m.npz"
    assert main(["imitate", str(records), "--agent", "heuristic", "--out", str(out), "--lr", "nan"]) == 2
    assert "learning rate must lie between 0 and 1, got nan" in capsys.readouterr().err and not out.exists()
