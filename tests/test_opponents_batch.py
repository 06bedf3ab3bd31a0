"""Opponents moved in one compiled call (packetrow_agents.opponents_batch) against the agents they stand for:
every move replayed on the readable engine is the agent's own, the same statistics as the act_batch path, runs
that reproduce, and history room made in the middle of a call."""

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from packetrow_agents.opponents_batch import ELSEWHERE, HEURISTIC, POLICY, RANDOM, OpponentKernel, _time_left  # noqa: E402
from packetrow_agents.heuristic import TIE  # noqa: E402
from packetrow_agents.policy import PolicyAgent  # noqa: E402
from packetrow_agents.registry import make_agent  # noqa: E402
from packetrow_env.engine import Game  # noqa: E402
from packetrow_env.scoring import time_left_batch  # noqa: E402
from packetrow_env.seat_view import SeatView  # noqa: E402
from packetrow_env.vector import VectorGame  # noqa: E402
from packetrow_env.vector.learner import LearnerGames, random_legal  # noqa: E402
from packetrow_train.pool import OpponentPool  # noqa: E402
from packetrow_train.vec_selfplay import PoolOpponents  # noqa: E402
from tests.test_heuristic_batch import RecordingHeuristic  # noqa: E402
from tests.test_policy_encodings import random_policy  # noqa: E402

MIXTURE = {"heuristic": 1.0, "heuristic:threshold=2": 1.0, "random": 1.0, "uniform": 2.0}


def learner_games(mixture=MIXTURE, num_games=24, seed=0, compiled=True, deterministic=True, players=(2, 3, 4, 5)):
    pool = OpponentPool(mixture, deterministic=deterministic)
    for step in range(3):
        pool.add(random_policy("compact", step, hidden=(16, 8), dim=4), step)
    opponents = PoolOpponents(pool, observation_encoding="compact", seed=seed, compiled=compiled)
    return LearnerGames(num_games, num_players=list(players), opponents=opponents, seed=seed,
                        observation_encoding="compact")


def test_every_compiled_move_is_its_agents_own():
    """Replayed on the readable engine, each opponent move of the compiled path is its agent's: the heuristic's
    choice (or one of its exact ties), the snapshot's argmax, a legal move of the random player."""
    games = learner_games()
    rng = np.random.default_rng(1)
    for _ in range(25):
        games.step(random_legal(games.action_masks(), rng))
    vg, opponents = games.games, games.opponents
    assert set(opponents.compiled_mover.kinds.tolist()) == {RANDOM, HEURISTIC, POLICY}
    checked = {RANDOM: 0, HEURISTIC: 0, POLICY: 0}
    heuristics = {}
    for i in range(vg.num_games):
        game = Game.new(int(vg.num_players[i]), int(vg.seeds[i]))
        for a in vg.batch.history[i, :vg.batch.n_history[i]].tolist():
            seat = game.current_player
            entry = opponents.assigned[i, seat]
            if entry >= 0:
                agent = opponents.entries[entry][2]
                kind = opponents.compiled_mover.kinds[entry]
                view = SeatView(game, seat, "tracked")
                if kind == HEURISTIC:
                    recorder = heuristics.setdefault(agent.threshold, RecordingHeuristic(threshold=agent.threshold))
                    recorder.options = None
                    choice = recorder.act(view)
                    if recorder.options is None:
                        assert a == choice
                    else:
                        best = max(v for _, v in recorder.options)
                        assert a in [x for x, v in recorder.options if v >= best - TIE]
                elif kind == POLICY:
                    assert a == agent.act(view)
                else:
                    assert game.legal_action_mask()[a]
                checked[kind] += 1
            game.step(a)
        assert game.to_dict()["phase"] == vg.game(i).to_dict()["phase"]
    assert min(checked.values()) > 20, checked


def test_compiled_and_batched_paths_give_the_same_statistics():
    """Sampling snapshots, the heuristic and random players: as many finished games and the same learner VP
    margins as on the act_batch path (other random streams, so statistics, not moves)."""
    finished, margins = {}, {}
    for compiled in (True, False):
        games = learner_games(num_games=64, compiled=compiled, deterministic=False, players=(2, 4))
        rng = np.random.default_rng(2)
        results = []
        for _ in range(400):
            ended = games.step(random_legal(games.action_masks(), rng))[3]
            if ended is not None:
                mine = ended.vp[np.arange(len(ended.rows)), ended.seats]
                results += (mine - ended.vp.sum(axis=1) / ended.num_players).tolist()
        finished[compiled], margins[compiled] = len(results), np.mean(results)
    assert finished[False] > 300
    assert abs(finished[True] / finished[False] - 1) < 0.1, finished
    assert abs(margins[True] - margins[False]) < 1.0, margins  # about 5 standard errors


def test_compiled_runs_reproduce_from_the_seed():
    """The same seed gives the same games, move for move; another seed other games."""
    def play(seed):
        games = learner_games(seed=seed, deterministic=False)
        rng = np.random.default_rng(seed)
        observations = [games.step(random_legal(games.action_masks(), rng))[0] for _ in range(30)]
        return np.stack(observations), games.games.batch.history.copy()

    first, again, other = play(5), play(5), play(6)
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert not np.array_equal(first[0], other[0])


def test_history_room_is_made_in_the_middle_of_a_call():
    """Games whose history is about to fill stop, the batch widens it, and the call goes on."""
    games = learner_games(num_games=8)
    vg = games.games
    width = int(vg.batch.n_history.max()) + 2
    vg.batch = vg.batch._replace(history=np.ascontiguousarray(vg.batch.history[:, :width]))
    rng = np.random.default_rng(3)
    for _ in range(20):
        games.step(random_legal(games.action_masks(), rng))
    assert vg.batch.history.shape[1] > width
    for i in range(vg.num_games):  # every history replays to the batch's game
        game = Game.new(int(vg.num_players[i]), int(vg.seeds[i]))
        for a in vg.batch.history[i, :vg.batch.n_history[i]].tolist():
            game.step(a)
        assert game.to_dict() == vg.game(i).to_dict()


def test_agents_without_a_compiled_form_move_elsewhere():
    """Agents the kernel cannot play (another observation, another class, another architecture than the stacked
    policies') are left to act_batch: the kernel names them ELSEWHERE, and the games stop at their turns."""
    kernel = OpponentKernel(None, "tracked", "compact")
    table = [make_agent("random"), make_agent("heuristic:threshold=1"), PolicyAgent(policy=random_policy("compact")),
             PolicyAgent(policy=random_policy("onehot")), PolicyAgent.load(), make_agent("ismcts:iters=5"),
             PolicyAgent(policy=random_policy("compact", 1, hidden=(8,)))]  # another architecture than entry 2's
    kernel.set_agents(table)
    assert kernel.kinds.tolist() == [RANDOM, HEURISTIC, POLICY, ELSEWHERE, ELSEWHERE, ELSEWHERE, ELSEWHERE]
    vg = VectorGame([3] * 6, seeds=list(range(6)))
    assigned = np.array([[5, 0, 1, 0, 0], [0, 5, -1, 0, 0], [-1, 2, 1, 0, 0]] * 2, np.int64)
    waiting = kernel.move(vg, assigned, np.random.default_rng(0))
    seats = vg.current_player
    for i in range(6):
        entry = assigned[i, seats[i]]
        assert waiting[i] == (entry == 5) and (entry in (-1, 5) or vg.is_over[i])


def test_the_kernels_clock_is_scoring_time_left():
    """The heuristic's clock inside the kernel is scoring.time_left_batch, value for value."""
    vg = VectorGame([2, 3, 4, 5] * 8, seeds=list(range(32)))
    rng = np.random.default_rng(4)
    kernel = OpponentKernel(None)
    _, _, _, _, _, deck_sizes, clock, floor, scale = kernel._heuristic
    for _ in range(60):
        live = np.flatnonzero(vg.current_player >= 0)
        b = vg.batch
        expected = time_left_batch(b.deck_top[live], b.deck_end[live], b.num_players[live], vg.cards, floor)
        assert [_time_left(b, i, deck_sizes, clock, floor, scale) for i in live.tolist()] == expected.tolist()
        vg.step(random_legal(vg.legal_action_mask(), rng))
