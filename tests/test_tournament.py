"""Tournaments: statistics, seat rotation, determinism across workers, saved games, replays and the CLI."""

import csv
import json
import math
from collections import Counter

import numpy as np
import pytest

from packetrow_agents import registry
from packetrow_agents.random_agent import RandomAgent
from packetrow_arena.replay import ReplayError, replay_game, replay_moves
from packetrow_env.observation import Encoder, encoder
from packetrow_arena import stats
from packetrow_cli.main import main
from packetrow_arena.duplicate_deals import paired_columns, per_deal_means, seat_assignments
from packetrow_arena.tournament import (TournamentError, find_game, lineup, load_games, make_entries, replay_text,
                                        run_tournament)


class LowestAgent:
    """Always the lowest legal action; reads (and counts) its observation."""

    def __init__(self, seed: int = 0):
        self.name = "lowest"
        self.observations = 0

    def act(self, view) -> int:
        assert view.observation.shape == (encoder().size,)
        self.observations += 1
        return int(np.flatnonzero(view.action_mask)[0])


class PassingAgent:
    """Passes whenever it may, else the lowest legal action: a weak player, no reset(), no observation."""

    built = 0

    def __init__(self, seed: int = 0):
        PassingAgent.built += 1
        self.name = "passer"

    def act(self, view) -> int:
        mask = view.action_mask
        return 10 if mask[10] else int(np.flatnonzero(mask)[0])


@pytest.fixture
def registered(monkeypatch):
    """'lowest' and 'passer' in the agent registry (workers are forked, so they see it too)."""
    monkeypatch.setitem(registry.AGENTS, "lowest", (__name__, "LowestAgent"))
    monkeypatch.setitem(registry.AGENTS, "passer", (__name__, "PassingAgent"))


# --------------------------------------------------------------------------- statistics
@pytest.mark.parametrize("successes, n, low, high", [
    (0, 10, 0.0, 0.2775402),      # high = z²/n / (1 + z²/n) = 0.38416 / 1.38416
    (5, 10, 0.2365896, 0.7634104),  # 0.5 ± 1.96/1.38416 · sqrt(0.025 + 0.009604)
    (10, 10, 0.7224598, 1.0),  # the mirror of 0 of 10
])
def test_wilson_interval_known_values(successes, n, low, high):
    assert stats.wilson_interval(successes, n) == pytest.approx((low, high), abs=1e-6)


@pytest.mark.parametrize("n", [1, 7, 100, 400, 1000])
def test_wilson_interval_contains_the_proportion_at_the_ends(n):
    """At 0 and n successes the interval reaches exactly 0 and 1 (rounding once left 1 - 1e-16 < p)."""
    assert stats.wilson_interval(n, n)[1] == 1.0 and stats.wilson_interval(0, n)[0] == 0.0
    for successes in (0, 1, n / 2, n - 1, n):
        low, high = stats.wilson_interval(successes, n)
        assert low <= successes / n <= high


def test_wilson_interval_fractional_wider_z_and_bad_input():
    low, high = stats.wilson_interval(2.5, 10)
    assert low < 0.25 < high
    assert stats.wilson_interval(5, 10, z=2.576)[0] < stats.wilson_interval(5, 10)[0]
    for args in [(1, 0), (11, 10), (-1, 10), (1, 2.5)]:
        with pytest.raises(ValueError, match="must be"):
            stats.wilson_interval(*args)
    with pytest.raises(ValueError, match="z must be"):
        stats.wilson_interval(1, 10, z=0)


def test_mean_interval():
    mean, low, high = stats.mean_interval([1, 2, 3, 4, 5])  # s = sqrt(2.5), half = 1.96 · sqrt(2.5 / 5)
    assert (mean, low, high) == pytest.approx((3.0, 3 - 1.385929, 3 + 1.385929), abs=1e-6)
    assert stats.mean_interval([7, 7, 7]) == (7.0, 7.0, 7.0)
    one = stats.mean_interval([4])
    assert one[0] == 4 and math.isnan(one[1]) and math.isnan(one[2])
    with pytest.raises(ValueError, match="at least one value"):
        stats.mean_interval([])


def test_ranks_with_ties():
    assert stats.ranks([(10, 5), (10, 5), (8, 0), (12, 0)]) == [2.5, 2.5, 4.0, 1.0]
    assert stats.ranks([(10, 5), (10, 6), (10, 4)]) == [2.0, 1.0, 3.0]  # cash breaks a VP tie (R-SCORE-4)
    assert stats.ranks([3, 3, 3, 3]) == [2.5] * 4
    scores = [{"vp": 9, "cash": 3, "winner": True}, {"vp": 9, "cash": 3, "winner": True},
              {"vp": 2, "cash": 30, "winner": False}]
    assert stats.ranks(stats.score_keys(scores)) == [1.5, 1.5, 3.0]
    assert stats.win_shares(scores) == [0.5, 0.5, 0.0]


def test_rating_updates():
    start = [stats.new_rating()] * 3
    after = stats.update_ratings(start, [1, 2, 3])
    assert after[0][0] > 25 > after[2][0]
    assert all(sigma < start[0][1] for _, sigma in after)  # every game teaches something
    tied = stats.update_ratings(start, [1, 2, 2])
    assert tied[0][0] > 25 > tied[1][0] and tied[1] == pytest.approx(tied[2])
    draw = stats.update_ratings(start[:2], [1, 1])
    assert draw[0] == pytest.approx(draw[1]) and draw[0][0] == pytest.approx(25)
    assert stats.ordinal((25.0, 25 / 3)) == pytest.approx(0)
    with pytest.raises(ValueError, match="one rank per player"):
        stats.update_ratings(start, [1, 2])


# --------------------------------------------------------------------------- schedule
@pytest.mark.parametrize("entries, players", [(4, 4), (2, 2), (5, 3), (7, 4), (3, 2)])
def test_every_entry_plays_every_seat_equally_often(entries, players):
    cycles = 3
    seats = Counter()
    for g in range(cycles * entries):
        line = lineup(g, entries, players, seed=11)
        assert len(set(line)) == players  # nobody sits twice in a game
        seats.update((e, s) for s, e in enumerate(line))
    assert seats == Counter({(e, s): cycles for e in range(entries) for s in range(players)})


def test_line_ups_vary_between_cycles():
    """When k > n the permutation per cycle mixes who meets whom."""
    met = {frozenset(lineup(g, 6, 2, seed=0)) for g in range(60)}
    assert len(met) > 6  # a fixed rotation would only ever pair neighbours: 6 pairs


def test_tournament_seats_and_counts(registered):
    result = run_tournament(["random", "lowest", "random", "passer", "random"], num_players=3, games=10, seed=2,
                            progress=False)
    assert result.names == ["random#1", "lowest", "random#2", "passer", "random#3"]
    seats = Counter((e, s) for r in result.records for s, e in enumerate(r["entries"]))
    assert seats == Counter({(e, s): 2 for e in range(5) for s in range(3)})
    assert [row["games"] for row in result.table] == [6] * 5
    assert sum(row["wins"] for row in result.table) == pytest.approx(10)
    assert [r["index"] for r in result.records] == list(range(10))


def test_entries_split_a_list_of_specs_by_the_registrys_rule():
    entries = make_entries("heuristic,random, ismcts:iters=200,rollout=random,random")
    assert [e.name for e in entries] == ["heuristic", "random#1", "ismcts:iters=200,rollout=random", "random#2"]
    with pytest.raises(TournamentError, match="empty agent spec at position 2 of 3"):
        make_entries("random,,random")
    with pytest.raises(TournamentError, match="option 'path' is given twice"):  # one spec, not two
        make_entries("ppo:a.npz,path=C:/x.npz")


# --------------------------------------------------------------------------- playing
def test_same_seed_same_results_whatever_the_workers(registered):
    specs = ["random", "lowest", lambda seed: RandomAgent(seed), "passer"]
    one = run_tournament(specs, 4, games=12, seed=5, workers=1, progress=False)
    two = run_tournament(specs, 4, games=12, seed=5, workers=2, progress=False, chunk_size=2)
    assert one.records == two.records
    assert one.table == two.table
    other = run_tournament(specs, 4, games=12, seed=6, workers=1, progress=False)
    assert other.records != one.records


def test_observations_are_encoded_only_when_an_agent_reads_them(registered, monkeypatch):
    encoded = []
    encode = Encoder.encode
    monkeypatch.setattr(Encoder, "encode", lambda self, *args: encoded.append(args[1]) or encode(self, *args))
    lowest = LowestAgent()
    PassingAgent.built = 0
    result = run_tournament([lowest, "passer"], 2, games=4, seed=0, progress=False, workers=1)
    moves = sum(r["entries"][seat] == 0 for r in result.records for _, seat, _ in replay_moves(r))
    assert lowest.observations == moves > 0
    assert len(encoded) == moves  # the passer's views never encoded one
    assert PassingAgent.built == 1 + 4  # no reset(): the check build, then one per game


def test_weak_agent_rates_lowest(registered):
    result = run_tournament(["random", "random", "passer"], 3, games=30, seed=0, progress=False)
    passer = result.row("passer")
    assert passer["mu"] < min(result.row(n)["mu"] for n in ("random#1", "random#2"))
    assert passer["win_rate"] < result.fair_share


def test_bad_setups_say_what_is_allowed(registered):
    with pytest.raises(TournamentError, match="2, 3, 4 or 5"):
        run_tournament(["random"] * 6, 6, games=1, progress=False)
    with pytest.raises(TournamentError, match="positive integer"):
        run_tournament(["random"] * 2, 2, games=0, progress=False)
    with pytest.raises(TournamentError, match="known agents"):
        run_tournament(["random", "nonsense"], 2, games=1, progress=False)
    with pytest.raises(TournamentError, match="at least as many agents as players"):
        run_tournament(["random", "random"], 3, games=1, progress=False)
    with pytest.raises(TournamentError, match="allowed"):
        make_entries(["random", 42])
    with pytest.raises(TournamentError, match="observation mode"):
        run_tournament(["random"] * 2, 2, games=1, observation_mode="psychic", progress=False)
    with pytest.raises(TournamentError, match="the chunk size must be a positive integer"):
        run_tournament(["random"] * 2, 2, games=1, chunk_size=0, progress=False)


# --------------------------------------------------------------------------- duplicate deals
def _score(vp: int, winner: bool) -> dict:
    return {"vp": vp, "cash": 0, "winner": winner}


def test_paired_statistics_equal_a_hand_computation():
    """Three deals, each played with the seats swapped; entry 0's results averaged per deal, then over deals."""
    # (deal, entries by seat, vp by seat); the winner is the higher VP, a tie is a shared win
    games = [(0, [0, 1], [10, 6]), (0, [1, 0], [8, 8]),    # deal 0: entry 0 wins 1 + 1/2 of 2, VP (10 + 8) / 2 = 9
             (1, [0, 1], [5, 9]), (1, [1, 0], [7, 4]),     # deal 1: wins 0 of 2, VP (5 + 4) / 2 = 4.5
             (2, [0, 1], [12, 3]), (2, [1, 0], [2, 11])]   # deal 2: wins 2 of 2, VP (12 + 11) / 2 = 11.5
    records = [{"deal": deal, "entries": entries,
                "scores": [_score(v, v == max(vps)) for v in vps]} for deal, entries, vps in games]
    assert per_deal_means(records, 2, lambda r: [row["vp"] for row in r["scores"]])[:, 0].tolist() == [9, 4.5, 11.5]
    zero, one = paired_columns(records, 2, 2)
    # wins per deal 0.75, 0, 1: mean 7/12, sample variance ((1/6)² + (7/12)² + (5/12)²) / 2 = 13/48
    half = 1.96 * math.sqrt(13 / 48 / 3)
    assert zero["deals"] == 3 and zero["win_rate"] == pytest.approx(7 / 12)
    assert (zero["win_low"], zero["win_high"]) == pytest.approx((max(0, 7 / 12 - half), min(1, 7 / 12 + half)))
    assert one["win_rate"] == pytest.approx(5 / 12)  # the shares of a deal sum to 1
    # VP per deal 9, 4.5, 11.5: mean 25/3, sample variance ((2/3)² + (23/6)² + (19/6)²) / 2 = 151/12
    vp_half = 1.96 * math.sqrt(151 / 12 / 3)
    assert (zero["mean_vp"], zero["vp_low"], zero["vp_high"]) == pytest.approx((25 / 3, 25 / 3 - vp_half,
                                                                                 25 / 3 + vp_half))
    # ranks per deal (1 + 1.5) / 2, 2, 1: the same as 3 - 2 x wins here
    assert zero["mean_rank"] == pytest.approx((1.25 + 2 + 1) / 3)


def test_a_paired_win_rate_of_deals_all_alike_falls_back_to_wilson_over_the_deals():
    """Every deal won by entry 0: the per-deal spread is zero, and the interval is Wilson's of 4 of 4 deals."""
    records = [{"deal": deal, "entries": entries, "scores": [_score(9, True), _score(1, False)] if entries[0] == 0
                else [_score(1, False), _score(9, True)]} for deal in range(4) for entries in ([0, 1], [1, 0])]
    zero, one = paired_columns(records, 2, 2)
    assert zero["win_rate"] == 1.0 and (zero["win_low"], zero["win_high"]) == pytest.approx(stats.wilson_interval(4, 4))
    assert one["win_rate"] == 0.0 and (one["win_low"], one["win_high"]) == pytest.approx(stats.wilson_interval(0, 4))
    assert zero["vp_low"] == zero["vp_high"] == 9  # other columns keep the paired interval


@pytest.mark.parametrize("players, mode, count", [(2, "rotations", 2), (2, "permutations", 2), (3, "rotations", 3),
                                                   (4, "permutations", 24), (5, "rotations", 5)])
def test_seat_assignments_seat_every_entry_once_a_game(players, mode, count):
    assignments = seat_assignments(players, mode)
    assert len(assignments) == len(set(assignments)) == count
    assert all(sorted(a) == list(range(players)) for a in assignments)
    # every entry sits at every seat equally often over one deal
    assert Counter((e, s) for a in assignments for s, e in enumerate(a)) ==         Counter({(e, s): count // players for e in range(players) for s in range(players)})


def test_a_duplicate_tournament_plays_every_deal_under_every_assignment(registered):
    result = run_tournament(["random", "lowest", "passer"], 3, games=12, seed=4, progress=False, duplicate=True)
    assert result.schedule == "duplicate-rotations"
    deals = {}
    for record in result.records:
        deals.setdefault(record["deal"], []).append(record)
    assert sorted(deals) == [0, 1, 2, 3]
    for games in deals.values():
        assert len({g["seed"] for g in games}) == 1  # one deal
        assert sorted(tuple(g["entries"]) for g in games) == sorted(seat_assignments(3, "rotations"))
    assert [row["deals"] for row in result.table] == [4, 4, 4] and [row["games"] for row in result.table] == [12] * 3
    assert sum(row["win_rate"] for row in result.table) == pytest.approx(1)
    assert "paired by deal" in result.format_table()
    two = run_tournament(["random", "lowest", "passer"], 3, games=12, seed=4, progress=False, duplicate="rotations",
                         workers=2, chunk_size=5)
    assert two.records == result.records and two.table == result.table
    perms = run_tournament(["random", "lowest", "passer"], 3, games=6, seed=4, progress=False,
                           duplicate="permutations")
    assert perms.schedule == "duplicate-permutations" and len({r["seed"] for r in perms.records}) == 1


def test_duplicate_set_ups_say_what_is_allowed(registered):
    with pytest.raises(TournamentError, match="exactly 2 agents"):
        run_tournament(["random", "random", "lowest"], 2, games=4, progress=False, duplicate=True)
    with pytest.raises(TournamentError, match="multiple of 6, got 8"):
        run_tournament(["random", "random", "lowest"], 3, games=8, progress=False, duplicate="permutations")
    with pytest.raises(TournamentError, match="allowed: rotations, permutations"):
        run_tournament(["random", "random"], 2, games=2, progress=False, duplicate="shuffled")


# --------------------------------------------------------------------------- saved games and replays
def test_out_files_and_replay(tmp_path, registered):
    result = run_tournament(["random", "lowest", "random"], 3, games=6, seed=3, progress=False)
    games_path, table_path = result.write(tmp_path)
    records = load_games(games_path)
    assert records == json.loads(json.dumps(result.records))
    assert {"index", "seed", "num_players", "specs", "agents", "actions", "scores"} <= set(records[0])
    assert records[0]["specs"] == [["random", "lowest", "random"][e] for e in records[0]["entries"]]
    with table_path.open() as f:
        rows = list(csv.DictReader(f))
    assert [row["agent"] for row in rows] == ["random#1", "lowest", "random#2"]
    assert int(rows[1]["games"]) == 6 and float(rows[0]["fair_share"]) == pytest.approx(1 / 3)

    for record in records:
        game = replay_game(record)
        assert game.scores() == record["scores"]
    text = "\n".join(replay_text(find_game(records, 4), seat=1))
    record = find_game(records, 4)
    assert "Replayed scores match" in text and "(you)" not in text  # every seat is a bot
    assert f"player 1 ({record['agents'][1]})" in text and f"seat 1 ({record['agents'][1]}) saw" in text
    assert "FULL INFORMATION" in "\n".join(replay_text(records[0], full=True))

    tampered = dict(records[2], scores=[dict(row, vp=row["vp"] + 1) for row in records[2]["scores"]])
    with pytest.raises(ReplayError, match="the file records"):
        replay_game(tampered)
    with pytest.raises(ReplayError, match="do not finish"):
        replay_game(dict(records[2], actions=records[2]["actions"][:-3]))
    with pytest.raises(ValueError, match="games recorded: 0 to 5"):
        find_game(records, 6)


# --------------------------------------------------------------------------- command line
def test_cli_tournament_and_replay(tmp_path, capsys):
    out = tmp_path / "results"
    assert main(["tournament", "--agents", "random,random,random", "--players", "3", "--games", "6", "--seed", "1",
                 "--workers", "2", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    for text in ("random#1", "random#3", "win rate [95% CI]", "mean rank", "Fair share: 1/3 = 33.3%", "ordinal"):
        assert text in printed
    assert all((out / name).is_file() for name in ("records.jsonl", "games.jsonl", "table.csv"))

    assert main(["replay", str(out / "records.jsonl"), "--game", "2", "--seat", "1"]) == 0
    assert "Replayed scores match" in capsys.readouterr().out

    lines = (out / "records.jsonl").read_text().splitlines()
    record = json.loads(lines[3])  # line 1 is the header: game 2 is on line 4
    record["scores"][0]["vp"] += 5
    lines[3] = json.dumps(record)
    (out / "records.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["replay", str(out / "records.jsonl"), "--game", "2"]) == 1
    error = capsys.readouterr().err
    assert "the file records" in error and f"{out / 'records.jsonl'}, line 4:" in error


def test_cli_chunk_size_changes_only_how_games_are_handed_out(tmp_path):
    """--chunk-size 1 (each game recorded as it finishes) writes the files of the default chunking."""
    argv = ["tournament", "--agents", "heuristic,random", "--players", "2", "--games", "5", "--seed", "3",
            "--workers", "2", "--no-progress", "--out"]
    assert main(argv + [str(tmp_path / "default")]) == 0
    assert main(argv + [str(tmp_path / "single"), "--chunk-size", "1"]) == 0
    for name in ("records.jsonl", "table.csv"):
        assert (tmp_path / "single" / name).read_bytes() == (tmp_path / "default" / name).read_bytes()


def test_cli_duplicate_tournament_and_no_overwrite(tmp_path, capsys):
    out = tmp_path / "dup"
    argv = ["tournament", "--agents", "heuristic,random", "--players", "2", "--games", "4", "--duplicate",
            "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    assert "Duplicate deals (rotations): 2 deals" in capsys.readouterr().out
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(SystemExit) as exit_info:
        main(argv[:-1] + ["--seed", "9", "--no-progress"])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and "(--overwrite) to replace them or resume (--resume)" in error
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing written
    assert main(argv + ["--seed", "9", "--overwrite"]) == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} != before


@pytest.mark.parametrize("argv, message", [
    (["tournament", "--agents", "random,bogus"], "unknown agent 'bogus'"),
    (["tournament", "--agents", "random,random", "--players", "3"], "at least as many agents as players"),
    (["tournament", "--agents", "random,random", "--games", "0"], "positive integer"),
    (["tournament", "--agents", "random,random", "--chunk-size", "0"], "argument --chunk-size: expected a positive"),
    (["tournament", "--agents", "random,random", "--players", "6"], "invalid choice"),
    (["replay", "nowhere.jsonl", "--game", "0"], "nowhere.jsonl: no such file"),
    (["tournament", "--agents", "random,random,random", "--players", "2", "--duplicate"], "exactly 2 agents"),
    (["tournament", "--agents", "random,random", "--players", "2", "--games", "3", "--duplicate"],
     "multiple of 2, got 3"),
    (["tournament", "--agents", "random,random", "--duplicate", "sideways"], "invalid choice"),
    # one spec parser (packetrow_agents.registry.split_specs) for every list of agents
    (["tournament", "--agents", "random,,random"], "empty agent spec at position 2 of 3"),
    (["tournament", "--agents", "ppo:a.npz,path=C:/x.npz", "random"], "option 'path' is given twice"),
])
def test_cli_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["tournament", "replay"])
def test_cli_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: packetrow " + command in capsys.readouterr().out


def test_demo_labels_every_seat_as_a_bot(capsys):
    assert main(["demo", "--players", "3", "--seed", "2", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "(you)" not in text and "player 0 (random)" in text and "WINNER" in text


def test_a_tournament_in_online_mode_hands_agents_online_views(registered):
    """R-INFO-4: with observation_mode='online' every agent acts on an online view (a policy reads online vectors,
    a search deals online determinisations)."""
    modes = set()

    class ModeAgent(LowestAgent):
        def act(self, view):
            modes.add(view.mode)
            assert view.deck_contents() is not None
            return int(np.flatnonzero(view.action_mask)[0])

    result = run_tournament([ModeAgent(), "random"], 2, games=2, seed=1, progress=False, observation_mode="online")
    assert len(result.records) == 2 and modes == {"online"}
