"""Population analysis: pairwise scores and payoff intervals by hand, the maximum-entropy Nash and the least
exploitable mixture of some agents, mixtures split into their members, the command, the PSRO script's round-robin."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from packetrow_cli.main import main
from packetrow_agents.registry import make_agent
from packetrow_arena.population import (analyse, analyse_file, least_exploitable_mixture, max_entropy_nash,
                                        pair_scores, payoff_matrix, split_mixtures)
from packetrow_arena.records import iter_replay, read_records
from packetrow_arena.tournament import run_tournament
from packetrow_env.seat_view import SeatView


def test_pair_scores_count_ties_and_copies():
    # entries 0, 1, 1, 2 with ranks 2, 1, 3, 4 (R-SCORE-4 places): copies of agent 1 are averaged
    scores = pair_scores({"entries": [0, 1, 1, 2], "ranks": [2.0, 1.0, 3.0, 4.0]})
    assert scores[0, 1] == 0.5 and scores[0, 2] == 1.0 and scores[2, 0] == 0.0
    assert scores[1, 0] == 1.0  # agent 1 is spoken for by its first seat
    tied = pair_scores({"entries": [0, 1], "ranks": [1.5, 1.5]})
    assert tied == {(0, 1): 0.5, (1, 0): 0.5}


def test_payoff_matrix_equals_a_hand_computation():
    # two deals of two games (seats swapped) and one plain game of deal 2; agent 0 against agent 1
    games = [{"deal": 0, "entries": [0, 1], "ranks": [1.0, 2.0]}, {"deal": 0, "entries": [1, 0], "ranks": [1.5, 1.5]},
             {"deal": 1, "entries": [0, 1], "ranks": [2.0, 1.0]}, {"deal": 1, "entries": [1, 0], "ranks": [2.0, 1.0]},
             {"deal": 2, "entries": [0, 1], "ranks": [1.0, 2.0]}]
    payoff, low, high, count = payoff_matrix(games, 2)
    # per deal: 0.75, 0.5, 1 -> mean 0.75, sample variance (0 + 0.0625 + 0.0625) / 2 = 0.0625
    half = 1.96 * math.sqrt(0.0625 / 3)
    assert payoff[0, 1] == pytest.approx(0.75) and payoff[1, 0] == pytest.approx(0.25)
    assert (low[0, 1], high[0, 1]) == pytest.approx((0.75 - half, min(1.0, 0.75 + half)))
    assert count.tolist() == [[0, 5], [5, 0]] and math.isnan(payoff[0, 0])


def test_max_entropy_nash_of_known_games():
    rps = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0.0]])
    assert max_entropy_nash(rps) == pytest.approx([1 / 3] * 3, abs=1e-6)
    # a copy of rock: the unique maximum-entropy equilibrium splits rock's third between the copies
    copied = np.array([[0, 0, 1, -1], [0, 0, 1, -1], [-1, -1, 0, 1], [1, 1, -1, 0.0]])
    assert max_entropy_nash(copied) == pytest.approx([1 / 6, 1 / 6, 1 / 3, 1 / 3], abs=1e-5)
    dominant = np.array([[0, 0.4, 0.3], [-0.4, 0, 0.2], [-0.3, -0.2, 0.0]])
    assert max_entropy_nash(dominant) == pytest.approx([1, 0, 0], abs=1e-6)


def test_least_exploitable_mixture_by_hand():
    rps = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0.0]])
    # rock and paper only, (x, 1 - x): A p = (1 - x, -x, 2x - 1), whose max is least at x = 2/3, value 1/3
    mixture, value = least_exploitable_mixture(rps, [0, 1])
    assert mixture == pytest.approx([2 / 3, 1 / 3, 0], abs=1e-6) and value == pytest.approx(1 / 3, abs=1e-6)
    mixture, value = least_exploitable_mixture(rps, [0, 1, 2])  # every agent allowed: the equilibrium, value 0
    assert mixture == pytest.approx([1 / 3] * 3, abs=1e-6) and value == pytest.approx(0, abs=1e-6)
    # without the dominant agent: (0, y, 1 - y) scores A p = (0.3 + 0.1y, 0.2 - 0.2y, -0.2y), least at y = 0
    dominant = np.array([[0, 0.4, 0.3], [-0.4, 0, 0.2], [-0.3, -0.2, 0.0]])
    mixture, value = least_exploitable_mixture(dominant, [1, 2])
    assert mixture == pytest.approx([0, 0, 1], abs=1e-6) and value == pytest.approx(0.3, abs=1e-6)
    for bad in ([], [0, 0], [3], [-1]):
        with pytest.raises(ValueError, match="candidates must be distinct indices of the 3 agents"):
            least_exploitable_mixture(rps, bad)


def test_least_exploitable_mixture_with_a_strength_floor_by_hand():
    rps = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0.0]])
    # rock scores 0.7 outside, paper 0.4: (x, 1 - x) must have 0.3x + 0.4 >= 0.64, x >= 0.8, where
    # max(1 - x, -x, 2x - 1) = 0.6; a floor the free optimum x = 2/3 already reaches changes nothing
    mixture, value = least_exploitable_mixture(rps, [0, 1], strength=[0.7, 0.4], floor=0.64)
    assert mixture == pytest.approx([0.8, 0.2, 0], abs=1e-6) and value == pytest.approx(0.6, abs=1e-6)
    mixture, value = least_exploitable_mixture(rps, [0, 1], strength=[0.7, 0.4], floor=0.5)
    assert mixture == pytest.approx([2 / 3, 1 / 3, 0], abs=1e-6) and value == pytest.approx(1 / 3, abs=1e-6)
    with pytest.raises(ValueError, match="no mixture of the candidates reaches the floor 0.75"):
        least_exploitable_mixture(rps, [0, 1], strength=[0.7, 0.4], floor=0.75)
    for strength in ([0.7], [0.7, float("nan")], [0.7, 0.4, 0.5]):
        with pytest.raises(ValueError, match="strength must be one finite score per candidate"):
            least_exploitable_mixture(rps, [0, 1], strength=strength, floor=0.5)


def test_a_cycle_of_agents_has_no_best_agent():
    """a beats b beats c beats a: the equilibrium plays all three and every Nash average is 0."""
    games = []
    beats = {(0, 1), (1, 2), (2, 0)}  # a cycle: nobody is best
    deal = 0
    for i in range(3):
        for j in range(3):
            if (i, j) in beats:
                for _ in range(4):
                    games.append({"deal": deal, "entries": [i, j], "ranks": [1.0, 2.0]})
                    deal += 1
    population = analyse(games, ["a", "b", "c"])
    assert population.equilibrium == pytest.approx([1 / 3] * 3, abs=1e-6)
    assert population.nash_average == pytest.approx([0, 0, 0], abs=1e-6)


@pytest.fixture(scope="module")
def records_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("population")
    run_tournament(["heuristic", "random", "ppo"], 2, games=12, seed=0, progress=False).write(out)
    return out / "records.jsonl"


def test_analysing_a_tournament_file(records_file):
    population = analyse_file(records_file)
    assert population.names == ["heuristic", "random", "ppo"]
    met = population.games > 0
    assert np.allclose((population.payoff + population.payoff.T)[met], 1.0)
    assert population.games.sum() == 2 * 12  # two ordered pairs a 2-player game
    assert population.ranking()[0] == 2  # the shipped policy beats both: the equilibrium is all on it
    off = np.where(np.eye(3, dtype=bool), np.nan, population.payoff)
    assert np.argmin(np.nanmean(off, axis=1)) == 1  # random scores least on average (Nash averaging may rank it
    # above the heuristic: each is measured by its score against ppo alone, where one lucky game counts)
    assert np.all(population.nash_average <= 1e-6) and population.equilibrium.sum() == pytest.approx(1)


def test_cli_population_writes_matrix_plot_and_table(records_file, tmp_path, capsys):
    out = tmp_path / "pop"
    assert main(["population", str(records_file), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Nash average" in printed and "row's score against column" in printed
    assert (out / "payoff.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "payoff.csv").read_text().startswith("agent,opponent,games,score,low,high")
    with pytest.raises(SystemExit) as exit_info:
        main(["population", str(records_file), "--out", str(out)])
    assert exit_info.value.code == 2 and "pass --overwrite" in capsys.readouterr().err


def test_cli_population_bad_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"format": "other"}\n')
    with pytest.raises(SystemExit) as exit_info:
        main(["population", str(bad)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and f"{bad}, line 1: not a packetrow-records header" in err


@pytest.fixture(scope="module")
def mixture_records(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixture")
    mixture = out / "mixture.json"
    mixture.write_text(json.dumps({"mixture": {"heuristic": 0.5, "random": 0.5}}))
    run_tournament([f"mixture:{mixture}", "random"], 2, games=16, seed=3, progress=False).write(out)
    return out / "records.jsonl", mixture


def test_split_mixtures_names_the_member_that_played_each_game(mixture_records):
    records_file, mixture = mixture_records
    records = read_records(records_file)
    games, names = split_mixtures(records)
    members = {f"mixture:{mixture} [heuristic]": "heuristic", f"mixture:{mixture} [random]": "random"}
    assert sorted(names) == sorted([*members, "random"])  # both members drew games in 16
    for before, game in zip(records.games, games):
        seat = next(s for s, e in enumerate(before["entries"]) if e == 0)
        spec = members[names[game["entries"][seat]]]
        member = make_agent(spec, game["agent_seeds"][seat])  # replayed, it must make every move the mixture made
        for state, mover, action in iter_replay(records, game["index"]):
            if mover == seat:
                assert member.act(SeatView(state, seat, records.header["observation_mode"])) == action
    population = analyse_file(records_file, members=True)
    assert population.games.sum() == 2 * 16 and population.names == names


def test_split_mixtures_refuses_a_mixture_file_changed_since(mixture_records, tmp_path, capsys):
    records_file, mixture = mixture_records
    copy = tmp_path / "records.jsonl"
    copy.write_text(records_file.read_text())
    saved = mixture.read_text()
    mixture.write_text(json.dumps({"mixture": {"heuristic": 0.9, "random": 0.1}}))
    try:
        with pytest.raises(SystemExit) as exit_info:
            main(["population", str(copy), "--members"])
    finally:
        mixture.write_text(saved)
    assert exit_info.value.code == 2 and "sha256 differs" in capsys.readouterr().err


def _psro_script():
    import importlib.util
    spec = importlib.util.spec_from_file_location("psro_benchmark", Path(__file__).parents[1] / "benchmarks" / "psro.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_psro_round_robin_alone_and_a_candidates_mixture(tmp_path, capsys):
    """`benchmarks/psro.py --iterations 0`: the round-robin alone; `--candidates`: the mixture restricted to them."""
    psro = _psro_script()
    out = tmp_path / "rr"
    members = ["random", "heuristic", "ppo"]
    assert psro.main(["--out", str(out), "--iterations", "0", "--pair-games", "4", "--workers", "1",
                      "--members", *members, "--candidates", "random", "heuristic"]) == 0
    state = json.loads((out / "psro.json").read_text())
    assert state["rows"] == [] and len(state["wins"]) == 6
    assert all(state["wins"][f"{a}|{b}"] + state["wins"][f"{b}|{a}"] == pytest.approx(1) for a in members
               for b in members if a != b)
    restricted = json.loads((out / "mixture_candidates.json").read_text())["mixture"]
    assert set(restricted) <= {"random", "heuristic"} and sum(restricted.values()) == pytest.approx(1, abs=1e-3)
    weights, best, rate = psro.candidates_mixture(members, state["wins"], ["random", "heuristic"])
    assert best in members and rate >= 0.5 and weights[2] == 0  # ppo is no candidate
    assert f"the best member against it, {best}, wins {100 * rate:.1f}%" in capsys.readouterr().out
    for bad, why in ((["random", "search"], "not members: search"), (["random", "random"], "one is repeated")):
        with pytest.raises(SystemExit) as stop:
            psro.main(["--out", str(tmp_path / "bad"), "--iterations", "0", "--members", *members,
                       "--candidates", *bad])
        assert stop.value.code == 2 and why in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()  # refused before anything was made
    # a strength floor: heuristic 0.9, random 0.1 against some outside opponent; at least 0.8 on average
    assert psro.main(["--out", str(out), "--iterations", "0", "--members", *members, "--candidates", "random",
                      "heuristic", "--strength", "random=0.1", "heuristic=0.9", "--floor", "0.8"]) == 0
    floored = json.loads((out / "mixture_candidates_floor_0.8.json").read_text())["mixture"]
    assert 0.1 * floored.get("random", 0) + 0.9 * floored.get("heuristic", 0) >= 0.8 - 1e-3
    for bad, why in ((["--strength", "random=0.1", "--floor", "0.5"], "missing: heuristic"),
                     (["--strength", "random=0.1", "heuristic=0.2", "--floor", "0.5"], "no candidate's --strength"),
                     (["--strength", "random=0.1", "heuristic=0.9", "ppo=0.5", "--floor", "0.5"],
                      "not candidates: ppo"),
                     (["--strength", "random=0.1", "heuristic=0.2"], "only with --floor")):
        with pytest.raises(SystemExit) as stop:
            psro.main(["--out", str(tmp_path / "bad"), "--iterations", "0", "--members", *members,
                       "--candidates", "random", "heuristic", *bad])
        assert stop.value.code == 2 and why in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
