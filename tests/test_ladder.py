"""The anchored ladder: the rating fits against hand computations, reproducibility, placement, bad input."""

import json
import math

import numpy as np
import pytest

from packetrow_arena import exploit_curves
from packetrow_arena import records
from packetrow_arena import ladder
from packetrow_cli.main import main
from packetrow_arena.ladder import (LadderError, build_ladder, fit_ratings, lone_scores, place_agent, place_rating)

SMALL = (("random", "random"), ("heuristic", "heuristic"), ("ppo", "ppo"))  # fast agents: a ladder in seconds


def test_two_agents_are_rated_by_their_score_ratio():
    """Bradley-Terry on the Elo scale: scoring w of n against B puts A 400 log10(w / (n - w)) above B."""
    won = np.array([[0.0, 15.0], [5.0, 0.0]])
    games = np.array([[0.0, 20.0], [20.0, 0.0]])
    ratings = fit_ratings(won, games, anchor=1)
    assert ratings[1] == 1000 and ratings[0] - 1000 == pytest.approx(400 * math.log10(15 / 5))


def test_the_fit_solves_the_likelihood_equations():
    """At the maximum every agent's expected score equals its score."""
    won = np.array([[0, 3.5, 10.5], [17.5, 0, 2.5], [10.5, 18.5, 0.0]])
    games = np.full((3, 3), 21.0) - np.diag([21.0] * 3)
    ratings = fit_ratings(won, games, anchor=1, anchor_rating=1500)
    assert ratings[1] == 1500
    p = 1 / (1 + 10 ** ((ratings[None, :] - ratings[:, None]) / 400))
    assert (games * p).sum(axis=1) == pytest.approx(won.sum(axis=1), abs=1e-8)


def test_placing_against_fixed_ratings():
    # 30 of 40 against a 1200: 1200 + 400 log10(3); against two equal opponents the same score ratio
    assert place_rating(np.array([30.0]), np.array([40.0]), np.array([1200.0])) == \
        pytest.approx(1200 + 400 * math.log10(3), abs=1e-6)
    assert place_rating(np.array([15.0, 15.0]), np.array([20.0, 20.0]), np.array([900.0, 900.0])) == \
        pytest.approx(900 + 400 * math.log10(3), abs=1e-6)


def test_lone_scores_count_the_crowd_seats_beaten():
    record = {"entries": [1, 0, 2, 3], "ranks": [1.0, 2.5, 2.5, 4.0]}  # the lone agent (entry 0) ties one, beats one
    assert lone_scores(record) == pytest.approx((0 + 0.5 + 1) / 3)
    assert lone_scores({"entries": [0, 1], "ranks": [1.0, 2.0]}) == 1.0


@pytest.fixture(scope="module")
def small_ladder():
    return build_ladder(2, games=4, seed=3, progress=False, reference=SMALL)


def test_the_same_seeds_give_the_same_ladder(small_ladder):
    again = build_ladder(2, games=4, seed=3, workers=2, progress=False, reference=SMALL)
    assert again.to_dict() == small_ladder.to_dict()
    assert again.format_table() == small_ladder.format_table()
    other = build_ladder(2, games=4, seed=4, progress=False, reference=SMALL)
    assert [m.records for m in other.matches] != [m.records for m in small_ladder.matches]


def test_the_ladder_is_anchored_and_ordered(small_ladder):
    data = small_ladder.to_dict()
    rating = {a["name"]: a for a in data["agents"]}
    assert rating["heuristic"]["rating"] == 1000 == data["anchor"]["rating"]
    assert rating["random"]["rating"] < 1000 < rating["ppo"]["rating"]
    assert all(a["low"] <= a["rating"] <= a["high"] for a in data["agents"])
    assert [(m["a"], m["b"], m["games"]) for m in data["matches"]] == \
        [("random", "heuristic", 4), ("random", "ppo", 4), ("heuristic", "ppo", 4)]
    assert "heuristic (anchor)" in small_ladder.format_table()


def test_ladder_records_follow_the_schema_and_replay(small_ladder, tmp_path):
    header, games = small_ladder.header_and_records()
    path = records.write_records(tmp_path / "records.jsonl", header, games)
    assert records.validate_file(path) == 1 + 12
    read = records.read_records(path)
    assert read.header["source"] == "ladder" and read.header["agents"] == ["random", "heuristic", "ppo"]
    assert [g["index"] for g in read.games] == list(range(12)) and len({g["deal"] for g in read.games}) == 6
    for game in read.games:
        assert {read.header["agents"][e] for e in game["entries"]} == set(game["agents"])
        assert records.replay_record(read, game["index"]).scores() == game["scores"]


def test_a_multiplayer_match_seats_each_agent_alone_in_half_the_games():
    built = build_ladder(3, games=6, seed=0, progress=False, reference=SMALL[:2])
    (match,) = built.matches
    lone = [next(e for e in r["entries"] if r["entries"].count(e) == 1) for r in match.records]
    assert lone == [0, 0, 0, 1, 1, 1] and match.deal_scores[:, 1].tolist() == [3, 3]


@pytest.fixture(scope="module")
def reference_file(small_ladder, tmp_path_factory):
    path = tmp_path_factory.mktemp("ladder") / "ladder.json"
    path.write_text(json.dumps(small_ladder.to_dict()))
    return path


def test_placing_an_agent_is_reproducible_and_brackets_it(reference_file):
    placed = place_agent("heuristic", 2, games=4, seed=1, progress=False, reference=reference_file)
    again = place_agent("heuristic", 2, games=4, seed=1, progress=False, reference=reference_file)
    assert (placed.rating, placed.low, placed.high) == (again.rating, again.low, again.high)
    assert placed.low <= placed.rating <= placed.high
    table = placed.format_table()
    assert "**heuristic**" in table and "placed agent's score against it" in table
    header, games = placed.header_and_records()
    assert header["agents"] == ["heuristic", "random", "heuristic", "ppo"] and len(games) == 12


@pytest.mark.parametrize("change, message", [
    ({"format": "something"}, "not a packetrow-ladder file"),
    ({"version": 9}, "ladder format version 9"),
    ({"catalogue": "sha256:" + "0" * 64}, "catalogue hash"),
    ({"num_players": 3}, "for 3-player games, not 2"),
])
def test_bad_reference_files_name_the_file(reference_file, tmp_path, change, message):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(json.loads(reference_file.read_text()), **change)))
    with pytest.raises(LadderError, match=message) as error:
        place_agent("random", 2, games=2, progress=False, reference=bad)
    assert str(bad) in str(error.value)


def test_bad_set_ups_say_what_is_allowed(reference_file):
    with pytest.raises(LadderError, match="unknown agent 'nonsense'"):
        place_agent("nonsense", 2, games=2, progress=False, reference=reference_file)
    with pytest.raises(LadderError, match="multiple of 6 for 3-player ladders"):
        build_ladder(3, games=4, progress=False, reference=SMALL)
    with pytest.raises(LadderError, match="2, 3, 4 or 5"):
        build_ladder(7, games=4, progress=False)
    with pytest.raises(LadderError, match="must hold the anchor 'heuristic'"):
        build_ladder(2, games=2, progress=False, reference=SMALL[::2])


def test_the_published_ladder_ships_with_the_package():
    data = ladder.load_reference(ladder.reference_path(2))
    names = [a["name"] for a in data["agents"]]
    assert names == [name for name, _ in ladder.REFERENCE] and data["anchor"] == {"agent": "heuristic",
                                                                                    "rating": 1000.0}
    assert "search:rollouts=64" in [a["spec"] for a in data["agents"]]  # the strongest agent has its rung


def test_cli_ladder_places_and_refuses_to_overwrite(reference_file, tmp_path, capsys):
    out = tmp_path / "placed"
    argv = ["ladder", "--agent", "random", "--games", "2", "--reference", str(reference_file), "--out", str(out),
            "--no-progress"]
    assert main(argv) == 0
    assert "**random**" in capsys.readouterr().out
    assert records.validate_file(out / "records.jsonl") == 1 + 6
    before = (out / "placement.md").read_text()
    with pytest.raises(SystemExit) as exit_info:
        main(argv[:4] + ["4"] + argv[5:])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "pass overwrite (--overwrite)" in err and "resume (--resume)" in err
    assert (out / "placement.md").read_text() == before


def a_curve(agent: str, num_players: int = 2) -> dict:
    """An exploitability curve as packetrow exploit writes it, two budgets."""
    points = [{"budget": b, "timesteps": t, "train_seconds": s, "win_rate": w, "low": w - 0.1, "high": w + 0.1,
               "games": 20, "policy": f"runs/exploit/budgets/{b}min.npz", "deals": "0123456789abcdef"}
              for b, t, s, w in ((1, 8192, 60.2, 0.55), (2, 16384, 120.4, 0.625))]
    return {"format": exploit_curves.CURVE_FORMAT, "version": exploit_curves.CURVE_VERSION, "package_version": "x",
            "agent": agent, "num_players": num_players, "start": "ppo", "seed": 0, "budget_unit": "minutes",
            "config": "quick", "date": "2026-11-28 22:00 UTC", "machine": "test", "points": points}


def test_cli_ladder_shows_exploitability_curves_in_a_column(reference_file, tmp_path, capsys):
    ppo, placed = tmp_path / "ppo", tmp_path / "placed"
    exploit_curves.write_curve(ppo, a_curve("ppo"))
    exploit_curves.write_curve(placed, a_curve("random"))
    assert main(["ladder", "--agent", "random", "--games", "2", "--reference", str(reference_file), "--no-progress",
                 "--exploitability", str(ppo / "exploit_curve.json"), "--exploitability",
                 str(placed / "exploit_curve.json")]) == 0
    rows = {line.split(" | ")[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")}
    assert rows["| agent"].endswith("| exploitability: best response's win rate [95% CI] |")
    assert rows["| ppo"].endswith("| 62.5% [52.5, 72.5] (2 min from ppo, 20 games) |")  # the largest budget
    assert rows["| **random**"].endswith("| 62.5% [52.5, 72.5] (2 min from ppo, 20 games) |")
    assert rows["| heuristic"].endswith("|  |")  # no curve, no figure


@pytest.mark.parametrize("change, message", [
    ({"format": "other"}, "not a packetrow-exploit-curve file"),
    ({"version": 7}, "curve format version 7"),
    ({"points": []}, "the curve lacks points (a non-empty list)"),
    ({"agent": "ismcts:iters=10"}, "a curve for agent 'ismcts:iters=10', which is not in this table"),
    ({"num_players": 3}, "a curve of 3-player games, this table is of 2-player games"),
])
def test_cli_ladder_refuses_curves_that_do_not_fit(change, message, reference_file, tmp_path, capsys):
    exploit_curves.write_curve(tmp_path, a_curve("ppo") | change)
    with pytest.raises(SystemExit) as exit_info:
        main(["ladder", "--agent", "random", "--games", "2", "--reference", str(reference_file),
              "--exploitability", str(tmp_path / "exploit_curve.json"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and err.count("error:") == 1
    assert not (tmp_path / "out").exists()  # refused before any game


@pytest.mark.parametrize("argv, message", [
    (["ladder", "--agent", "bogus"], "unknown agent 'bogus'"),
    (["ladder", "--agent", "random", "--exploitability", "nowhere.json"], "nowhere.json"),
    (["ladder", "--agent", "random,heuristic"], "give one agent spec, got 2"),
    (["ladder", "--agent", "random", "--games", "3"], "multiple of 2"),
    (["ladder", "--agent", "random", "--reference", "nowhere.json"], "nowhere.json: no reference ladder there"),
    (["ladder"], "one of the arguments --agent --build is required"),
])
def test_cli_ladder_errors_are_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("error:") == 1


def test_cli_ladder_help(capsys):
    with pytest.raises(SystemExit):
        main(["ladder", "--help"])
    assert "--agent SPEC" in capsys.readouterr().out
