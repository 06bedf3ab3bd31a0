"""The batch kernel's compact observations equal ``CompactEncoder.encode`` bit for bit (R-INFO-1..4).

Batches of random games of 2-5 players (phase pay and finished games included) are packed into a ``Batch``
(``batch.from_games``) and encoded for every seat, in every mode, and in a custom catalogue; and VectorGame's
own batch is encoded as it plays.
"""

from __future__ import annotations

import numpy as np
import pytest

from packetrow_env import actions
from packetrow_env.compact_observation import CompactEncoder, encoder
from packetrow_env.engine import Game
from packetrow_env.observation import MODES
from packetrow_env.state import PAY
from packetrow_env.vector.batch import from_games as pack
from packetrow_env.vector.observe_compact import CompactBatchEncoder, observe_compact
from tests.positions import random_play
from tests.test_compact_observation import custom_catalogue


def random_games(cards, count: int, seed: int) -> list[Game]:
    """``count`` games of 2-5 players played to the end (shipping and paying often); copies of them at random
    steps and at every pay phase, and the finished games."""
    rng = np.random.default_rng(seed)
    positions = []
    for j in range(count):
        game = Game.new(2 + j % 4, seed=int(rng.integers(1 << 30)), cards=cards)
        while not game.is_over:
            if game.state.phase == PAY or rng.random() < 0.02:
                positions.append(game.clone())
            legal = game.legal_actions()
            late = [a for a in legal if a >= actions.ADD_CONTRACT]
            game.step(int(rng.choice(late if late and rng.random() < 0.5 else legal)))
        positions.append(game)
    return positions


def check(compact: CompactEncoder, games: list[Game]) -> None:
    batch = pack(games)
    for mode in MODES:
        enc = CompactBatchEncoder(compact.cards, mode)
        for seat in range(5):
            seats = np.array([seat if seat < g.num_players else -1 for g in games])
            out = np.full((len(games), enc.size), np.nan, np.float32)
            enc.encode(batch, seats, out)
            for i, game in enumerate(games):
                if seats[i] < 0:
                    assert (out[i] == 0).all()
                else:
                    expected = compact.encode(game, seat, mode)
                    assert out[i].tobytes() == expected.tobytes(), (mode, i, seat, np.flatnonzero(out[i] != expected))


def test_kernel_equals_the_compact_encoder_on_random_games():
    games = random_games(None, 12, seed=0)
    assert sum(g.state.phase == PAY for g in games) >= 10 and sum(g.is_over for g in games) == 12
    assert {g.num_players for g in games} == {2, 3, 4, 5} and len(games) > 60
    check(encoder(), games)


def test_kernel_equals_the_compact_encoder_in_a_custom_catalogue(tmp_path):
    cards = custom_catalogue(tmp_path)
    check(CompactEncoder(cards), random_games(cards, 4, seed=1))


def test_kernel_fills_only_the_rows_asked_for():
    games = [random_play(Game.new(2 + j % 4, seed=j), 30 * j, j) for j in range(6)]
    enc = CompactBatchEncoder(None, "tracked")
    out = np.full((6, enc.size), 7.0, np.float32)
    enc.encode(pack(games), np.zeros(6, np.int64), out, rows=np.array([1, 4]))
    assert (out[[0, 2, 3, 5]] == 7.0).all()
    assert out[1].tobytes() == encoder().encode(games[1], 0).tobytes()
    np.testing.assert_array_equal(observe_compact(pack(games), [0] * 6)[4], encoder().encode(games[4], 0))


def test_kernel_refuses_a_seat_beyond_the_players():
    batch = pack([Game.new(2, seed=0)])
    with pytest.raises(ValueError, match="game 0: seat 3 is not a seat of a 2-player game"):
        observe_compact(batch, [3])
    with pytest.raises(ValueError, match="out must be a writeable C-contiguous float32 array of shape"):
        CompactBatchEncoder(None).encode(batch, np.zeros(1, np.int64), np.zeros((1, 5), np.float32))


def test_kernel_packed_writes_the_listed_games_into_consecutive_rows():
    games = [random_play(Game.new(2 + j % 4, seed=j), 25 * j, j) for j in range(5)]
    enc = CompactBatchEncoder(None, "online")
    seats = np.array([1, 0, -1, 2, 0])
    out = enc.encode(pack(games), seats, np.full((3, enc.size), 7.0, np.float32), rows=[3, 0, 2], packed=True)
    assert out[0].tobytes() == encoder().encode(games[3], 2, "online").tobytes()
    assert out[1].tobytes() == encoder().encode(games[0], 1, "online").tobytes()
    assert (out[2] == 0).all()


def test_kernel_on_a_vector_game_batch_equals_the_compact_encoder_of_its_games():
    """The batch as VectorGame steps it (not packed from Games): the acting seats' observations, every fourth step
    and every step in phase pay."""
    from packetrow_env.vector import VectorGame
    rng = np.random.default_rng(3)
    vg = VectorGame([2, 3, 4, 5], seeds=list(range(4)))
    encoders = {mode: CompactBatchEncoder(None, mode) for mode in MODES}
    paying = step = 0
    while step < 120:  # VectorGame steps in its own time; 120 steps reach several pay phases
        mask = vg.legal_action_mask()
        seats = vg.current_player
        step += 1
        for mode, enc in encoders.items() if step % 4 == 0 or (vg.batch.phase == PAY).any() else ():
            out = enc.encode(vg.batch, seats, np.empty((4, enc.size), np.float32))
            for i in range(4):
                expected = encoder().encode(vg.game(i), seats[i], mode) if seats[i] >= 0 else np.zeros(enc.size)
                assert out[i].tobytes() == expected.astype(np.float32).tobytes(), (mode, i)
        paying += int((vg.batch.phase == PAY).sum())
        weight = rng.random(mask.shape)
        weight[:, actions.ADD_CONTRACT:] += 0.5
        vg.step(np.where(mask, weight, -1.0).argmax(axis=1))
    assert paying > 0
