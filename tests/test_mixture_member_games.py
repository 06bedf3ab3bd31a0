"""benchmarks/mixture_member_games.py: a mixture's match from its member's match equals the mixture's whole match."""

import importlib.util
import json
from pathlib import Path

import pytest

from packetrow_arena.records import read_records, write_records
from packetrow_arena.tournament import run_tournament

GAMES, SEED = 12, 5


def _script():
    path = Path(__file__).parents[1] / "benchmarks" / "mixture_member_games.py"
    spec = importlib.util.spec_from_file_location("mixture_member_games", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def matches(tmp_path_factory):
    """The mixture's whole match and its member's (heuristic) match against random, on the same seed."""
    root = tmp_path_factory.mktemp("matches")
    mixture = root / "mix.json"
    mixture.write_text(json.dumps({"mixture": {"heuristic": 0.6, "random": 0.4}}))
    whole = run_tournament([f"mixture:{mixture}", "random"], num_players=2, games=GAMES, seed=SEED, progress=False,
                           out=root / "whole")
    run_tournament(["heuristic", "random"], num_players=2, games=GAMES, seed=SEED, progress=False,
                   out=root / "member")
    return root, whole


def _file_with(root: Path, name: str, keep) -> Path:
    """A copy of the whole match's record file with only the games ``keep(game)`` accepts."""
    whole = read_records(root / "whole" / "records.jsonl")
    path = root / name / "records.jsonl"
    path.parent.mkdir()
    write_records(path, whole.header, [game for game in whole.games if keep(game)])
    return path


def test_play_plays_exactly_the_mixtures_games_in_which_it_draws_another_member(matches):
    root, whole = matches
    script = _script()
    path = _file_with(root, "play", lambda game: False)
    assert script.main(["play", "--records", str(path), "--member", "heuristic", "--games", str(GAMES),
                        "--workers", "1", "--no-progress"]) == 0
    played = read_records(path).games
    weights = script.members(read_records(path).header, "heuristic")
    others = [g for g in whole.records if script.drawn(weights, g) != "heuristic"]
    assert 0 < len(others) < GAMES
    assert sorted(played, key=lambda g: g["index"]) == others


def test_count_from_the_members_match_gives_the_whole_matchs_wins(matches, capsys):
    root, whole = matches
    script = _script()
    # the mixture's file holds its games with the random member and the first half of those with the heuristic
    weights = script.members(read_records(root / "whole" / "records.jsonl").header, "heuristic")
    path = _file_with(root, "count",
                      lambda game: game["index"] < GAMES // 2 or script.drawn(weights, game) != "heuristic")
    member = root / "member" / "records.jsonl"
    assert script.main(["count", "--records", str(path), "--member", f"heuristic={member}",
                        "--games", str(GAMES)]) == 0
    out = capsys.readouterr().out
    wins = whole.row(whole.names[0])["wins"]
    assert f"won {wins:g} of {GAMES} games" in out and "0 not played yet" in out


def test_count_refuses_a_member_match_of_another_seed_a_member_without_its_file_or_not_in_the_mixture(matches,
                                                                                                     tmp_path):
    root, _ = matches
    script = _script()
    other = run_tournament(["heuristic", "random"], num_players=2, games=2, seed=SEED + 1, progress=False,
                           out=tmp_path / "other")
    assert other.records
    with pytest.raises(SystemExit, match="played with seed 6, the mixture's match with 5"):
        script.main(["count", "--records", str(root / "whole" / "records.jsonl"),
                     "--member", f"heuristic={tmp_path / 'other' / 'records.jsonl'}", "--games", str(GAMES)])
    with pytest.raises(SystemExit, match="--member is SPEC=RECORDS"):
        script.main(["count", "--records", str(root / "whole" / "records.jsonl"), "--member", "heuristic",
                     "--games", str(GAMES)])
    with pytest.raises(SystemExit, match="'ppo' is not a member of mixture:.*; its members: heuristic, random"):
        script.main(["play", "--records", str(root / "whole" / "records.jsonl"), "--member", "ppo",
                     "--games", str(GAMES)])
