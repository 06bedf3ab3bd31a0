"""The compiled heuristic against HeuristicAgent: the same action at every position, in every observation mode.

Games of 2-5 players are played with random legal actions; at every position the kernel's action for the
player to act must be HeuristicAgent's on that seat's SeatView. Where the agent's best options tie (within
``heuristic_weights.TIE``), the kernel takes the tied option that its draw for the row picks, in the agent's order of
options: the test draws the same numbers and predicts that option, so every comparison is exact.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packetrow_agents.heuristic import TIE, HeuristicAgent
from packetrow_agents.heuristic_batch import heuristic_actions
from packetrow_env import actions
from packetrow_env.engine import Game
from packetrow_env.knowledge import MODES
from packetrow_env.seat_view import SeatView
from packetrow_env.state import CHOOSE_BOARD, MUST_TAKE, PAY, TAKE
from packetrow_env.vector import VectorGame
from tests.positions import random_play
from tests.test_leaks import twins
from tests.test_vector import choose


class RecordingHeuristic(HeuristicAgent):
    """HeuristicAgent that remembers the options of its last tie-break (``_best``); it plays unchanged."""

    def _best(self, options):
        self.options = list(options)
        return super()._best(options)


def expected_action(agent: RecordingHeuristic, game: Game, mode: str, draw: float) -> tuple[int, bool]:
    """(the agent's action, with a tie resolved as the kernel resolves it by ``draw``; whether there was a tie)."""
    agent.options = None
    action = agent.act(SeatView(game, game.current_player, mode))
    if agent.options is None:  # rule 1 or a pass: no choice among valued options
        return action, False
    values = np.array([v for _, v in agent.options])
    tied = [a for a, v in agent.options if v >= values.max() - TIE]
    assert action in tied
    return tied[min(int(draw * len(tied)), len(tied) - 1)], len(tied) > 1


def compare(vg: VectorGame, mode: str, seed: int, agent: RecordingHeuristic, threshold: float = 0.0) -> Counter:
    """Assert the kernel plays the agent's action in every running game of ``vg``; counts of phases and ties."""
    rows = np.flatnonzero(~vg.is_over)
    got = heuristic_actions(vg, rows, mode, np.random.default_rng(seed), threshold)
    draws = np.random.default_rng(seed).random(len(rows))  # the kernel's draws
    seen = Counter()
    for j, i in enumerate(rows.tolist()):
        game = vg.game(i)
        assert vg.payment_options(i) == game.payment_options()  # the batch's option order is Game's (R-SHIP-7)
        want, tie = expected_action(agent, game, mode, draws[j])
        assert got[j] == want, (mode, i, game.to_dict())
        seen[game.state.phase] += 1
        seen["tie"] += tie
        seen["stage"] += int(actions.ADD_CONTRACT <= want <= actions.SHIP)
        seen["pass"] += int(want == actions.PASS)
    return seen


def play_and_compare(vg: VectorGame, rng: np.random.Generator, modes=MODES, threshold: float = 0.0) -> Counter:
    """Play ``vg`` to the end with random legal actions, comparing the kernel with the agent at every position."""
    agent = RecordingHeuristic(threshold=threshold)
    seen = Counter()
    step = 0
    while not vg.is_over.all():
        for mode in modes:
            seen += compare(vg, mode, 1000 * step + len(seen), agent, threshold)
        vg.step(choose(vg.legal_action_mask(), rng))
        step += 1
    return seen


def assert_every_phase(seen: Counter) -> None:
    """Take, must-take, choose-board and pay decisions, stagings and passes all came up."""
    for key in (TAKE, MUST_TAKE, CHOOSE_BOARD, PAY, "stage", "pass"):
        assert seen[key] > 0, (key, seen)


def test_kernel_plays_the_heuristic_in_every_mode_and_player_count():
    """Mixed 2-5 player games, modes tracked, online, table and full: the agent's action at every position
    (rule 1 staging, shipping and R-SHIP-7 payment; rule 2 takes, passes and R-ROUND-5 switches; rule 3 boards)."""
    counts = np.array([2, 3, 4, 5, 5, 3])
    vg = VectorGame(counts, seeds=[31, 32, 33, 34, 35, 36])
    seen = play_and_compare(vg, np.random.default_rng(1))
    assert_every_phase(seen)
    assert seen["tie"] > 0  # ties came up and were resolved by the draw, in the agent's order


@pytest.mark.parametrize("num_players", [2, 4])
def test_kernel_plays_the_heuristic_with_a_threshold(num_players):
    """``threshold`` (the agent's option): passes below it, the earlier takers of rule 3 judged by it."""
    vg = VectorGame(num_players, seeds=[7, 8])
    seen = play_and_compare(vg, np.random.default_rng(num_players), modes=("tracked",), threshold=4.0)
    assert seen["pass"] > 0 and seen[CHOOSE_BOARD] > 0


@pytest.mark.parametrize("change", ["values", "reshuffled"])
def test_kernel_reads_a_custom_catalogue(tmp_path, change):
    """A user's catalogue (other values, quantities, destinations, gold sizes): the kernel reads its card table."""
    from tests.test_shipping import _random_values, _reshuffled, _write_catalogue
    cat = _write_catalogue(tmp_path / "cards.csv", {"values": _random_values, "reshuffled": _reshuffled}[change])
    vg = VectorGame(np.array([2, 3, 4, 5]), seeds=[11, 12, 13, 14], cards=cat)
    seen = play_and_compare(vg, np.random.default_rng(9), modes=("tracked", "table"))
    assert seen[PAY] > 0 and seen[CHOOSE_BOARD] > 0


SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=25,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.integers(2, 5), st.integers(0, 2 ** 31 - 1), st.integers(0, 230))
def test_kernel_reads_only_what_the_seat_knows(num_players, seed, steps):
    """R-INFO-2..4: hidden twins of a position (an opponent's held starting contract swapped, decks shuffled,
    removed cards re-dealt) get the same action in the fair modes, and the agent's."""
    game = random_play(Game.new(num_players, seed=seed), steps, seed)
    if game.is_over:
        return
    data = game.to_dict()
    seat = game.current_player
    agent = RecordingHeuristic()
    for mode in ("tracked", "online", "table"):
        positions = [data] + [twin for _, twin in twins(data, seat, np.random.default_rng(seed), mode)]
        vg = VectorGame.from_games([Game.from_dict(d) for d in positions])
        got = [int(heuristic_actions(vg, [k], mode, 0)[0]) for k in range(len(positions))]  # one draw for all
        assert len(set(got)) == 1, (mode, got)
        assert got[0] == expected_action(agent, vg.game(0), mode, np.random.default_rng(0).random())[0]


def test_ties_follow_the_draw():
    """A tie is broken by the row's draw: across draws the kernel plays every tied option, and only those."""
    vg = VectorGame(4, seeds=[3])  # the first decision: choose a board, often between equal ones
    rng = np.random.default_rng(5)
    agent = RecordingHeuristic()
    while True:
        agent.options = None
        agent.act(SeatView(vg.game(0), int(vg.current_player[0]), "tracked"))
        if agent.options is not None:
            values = np.array([v for _, v in agent.options])
            tied = {a for a, v in agent.options if v >= values.max() - TIE}
            if len(tied) > 1:
                break
        vg.step(choose(vg.legal_action_mask(), rng))
    played = {int(heuristic_actions(vg, [0], "tracked", seed)[0]) for seed in range(60)}
    assert played == tied


def test_empty_rows_give_no_actions():
    """No rows, no actions (a group of opponents may be empty)."""
    vg = VectorGame(3, seeds=[1])
    out = heuristic_actions(vg, [], "tracked", 0)
    assert out.shape == (0,) and out.dtype == np.int64


def test_bad_input_is_refused_clearly():
    """Wrong games, rows, modes, thresholds, generators or masks: a ValueError saying what is allowed."""
    vg = VectorGame(3, seeds=[1, 2])
    rng = np.random.default_rng(0)
    while not vg.is_over[1]:
        vg.step(np.where(vg.is_over, 0, choose(vg.legal_action_mask(), rng)))
    running = np.flatnonzero(~vg.is_over)
    cases = [
        (dict(games=Game.new(3, seed=1)), "VectorGame"),
        (dict(rows=[5]), "game indices from 0 to 1"),
        (dict(rows=[-1]), "game indices from 0 to 1"),
        (dict(rows=[0.5]), "1-D list of game indices"),
        (dict(rows=[[0]]), "1-D list of game indices"),
        (dict(rows=[True]), "1-D list of game indices"),
        (dict(rows=[1]), "game 1 is over"),
        (dict(mode="secret"), "unknown observation mode"),
        (dict(threshold="high"), "threshold must be a number"),
        (dict(threshold=float("nan")), "threshold must be a number"),
        (dict(rng="seed"), "rng must be a numpy Generator"),
        (dict(rng=-3), "rng must be a numpy Generator"),
        (dict(masks=np.ones((1, 3), bool)), "masks must be the rows' legal masks"),
    ]
    for change, message in cases:
        args = dict(games=vg, rows=running, mode="tracked", rng=0, threshold=0.0, masks=None) | change
        with pytest.raises(ValueError, match=message):
            heuristic_actions(**args)
