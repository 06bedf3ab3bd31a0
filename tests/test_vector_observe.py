"""The batched observation (vector.observe) equals the single engine's Encoder.encode bit for bit (R-INFO-1..4).

Positions come from random legal play biased toward shipping (so phase pay and its payment options come up
often), snapshot along the way and at the end, for 2-5 players, the default catalogue and fuzzed ones; they
are packed into one Batch (``batch.from_games``) and every seat's vector is compared in every mode.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packetrow_env import actions
from packetrow_env import cards as catalogue
from packetrow_env.engine import Game
from packetrow_env.observation import MODES, encoder
from packetrow_env.state import MAX_PLAYERS, OVER, PAY
from packetrow_env.vector.batch import from_games
from packetrow_env.vector.observe import BatchEncoder
from tests.fuzzing import default_rows, mutate_catalogue


def positions(seed: int, games: int, cards=None, keep: float = 0.03) -> list[Game]:
    """Snapshots of random games (2-5 players) played to the end: every position in phase pay, a random
    few others, and each final position. Adds and ships are preferred so that shipments are paid often."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        game = Game.new(2 + g % 4, seed=seed * 1000 + g, cards=cards)
        out.append(game.clone())
        while not game.is_over:
            legal = game.legal_actions()
            shipping = [a for a in legal if a >= actions.ADD_CONTRACT]
            game.step(int(rng.choice(shipping if shipping and rng.random() < 0.8 else legal)))
            if not game.is_over and (game.state.phase == PAY or rng.random() < keep):
                out.append(game.clone())
        out.append(game)
    return out


def assert_batch_equals_encoder(games: list[Game], modes=MODES) -> None:
    """Every seat's vector of every game, in every mode: the batch's equals Encoder.encode's, bit for bit."""
    batch = from_games(games)
    enc = encoder(games[0].cards)
    for mode in modes:
        batch_encoder = BatchEncoder(games[0].cards, mode)
        assert batch_encoder.size == enc.size_of(mode)
        for seat in range(MAX_PLAYERS):
            seats = np.array([seat if seat < g.num_players else -1 for g in games])
            out = np.full((len(games), batch_encoder.size), np.nan, dtype=np.float32)  # every float must be written
            batch_encoder.encode(batch, seats, out)
            for i, game in enumerate(games):
                expected = enc.encode(game, seat, mode) if seat < game.num_players else np.zeros_like(out[i])
                if expected.tobytes() != out[i].tobytes():
                    wrong = np.flatnonzero(expected != out[i])
                    names = sorted({p.name for p in enc.pieces_of(mode) for x in wrong
                                    if p.offset <= x < p.offset + p.size})
                    pytest.fail(f"game {i} ({game.num_players} players, phase {game.phase}), seat {seat}, {mode}: "
                                f"pieces {names} differ at {wrong[:8].tolist()}")


@pytest.fixture(scope="module")
def default_positions() -> list[Game]:
    return positions(seed=1, games=24)


def test_positions_cover_pay_and_the_end(default_positions):
    """The positions below include phase pay with several options, finished games and every player count."""
    assert sum(g.state.phase == PAY and len(g.payment_options()) > 1 for g in default_positions) >= 10
    assert sum(g.state.phase == OVER for g in default_positions) == 24
    assert {g.num_players for g in default_positions} == {2, 3, 4, 5}


@pytest.mark.parametrize("mode", MODES)
def test_every_seat_every_mode_equals_encoder(default_positions, mode):
    """R-INFO-1..4: what each mode shows each seat, as the single engine encodes it."""
    assert_batch_equals_encoder(default_positions, modes=(mode,))


def test_fuzzed_catalogues_equal_encoder(tmp_path):
    """Custom catalogues (the fuzzer's mutations that load), some with more card types than the default."""
    rows = default_rows()
    loaded, more_types = 0, 0
    for seed in range(200):
        path = tmp_path / f"cards_{seed}.csv"
        path.write_bytes(mutate_catalogue(rows, random.Random(seed)).encode("utf-8", errors="surrogateescape"))
        try:
            cards = catalogue.load(path)
        except ValueError:
            continue
        loaded += 1
        more_types += encoder(cards).num_types != encoder().num_types
        assert_batch_equals_encoder(positions(seed, games=4, cards=cards, keep=0.01))
        if loaded >= 6 and more_types >= 2:
            break
    assert more_types >= 2


@settings(max_examples=25, deadline=None)
@given(num_players=st.integers(2, 5), seed=st.integers(0, 10**6), steps=st.integers(0, 400))
def test_player_to_act_equals_encoder(num_players, seed, steps):
    """Property: after any random play, the player to act's tracked vector equals the Encoder's."""
    rng = np.random.default_rng(seed)
    game = Game.new(num_players, seed=seed)
    for _ in range(steps):
        if game.is_over:
            break
        game.step(int(rng.choice(game.legal_actions())))
    seat = -1 if game.is_over else game.current_player
    batch_encoder = BatchEncoder(None, "tracked")
    out = np.full((1, batch_encoder.size), np.nan, dtype=np.float32)
    batch_encoder.encode(from_games([game]), np.array([seat]), out)
    expected = np.zeros(batch_encoder.size, np.float32) if seat < 0 else encoder().encode(game, seat, "tracked")
    assert out[0].tobytes() == expected.tobytes()


def test_rows_writes_only_those_games(default_positions):
    """``rows``: the listed games are written, every other row of ``out`` keeps what it held."""
    games = default_positions[:10]
    batch_encoder = BatchEncoder(None, "online")
    out = np.full((10, batch_encoder.size), 7.0, dtype=np.float32)
    seats = np.array([-1 if g.is_over else g.current_player for g in games])
    batch_encoder.encode(from_games(games), seats, out, rows=[2, 5])
    for i, game in enumerate(games):
        if i in (2, 5):
            assert out[i].tobytes() == encoder().encode(game, int(seats[i]), "online").tobytes()
        else:
            assert (out[i] == 7.0).all()


def test_bad_arguments_are_refused_before_writing(default_positions):
    """Seats beyond a game's players, wrong shapes or dtypes of ``out``, rows out of range: ValueError, out kept."""
    games = default_positions[:4]
    batch = from_games(games)
    batch_encoder = BatchEncoder(None, "tracked")
    out = np.full((4, batch_encoder.size), 7.0, dtype=np.float32)
    with pytest.raises(ValueError, match="not a seat"):
        batch_encoder.encode(batch, np.array([0, 0, 0, 5]), out)
    with pytest.raises(ValueError, match="one integer seat per game"):
        batch_encoder.encode(batch, np.array([0, 0]), out)
    with pytest.raises(ValueError, match="out must be"):
        batch_encoder.encode(batch, np.zeros(4, int), out.astype(np.float64))
    with pytest.raises(ValueError, match="out must be"):
        batch_encoder.encode(batch, np.zeros(4, int), out[:, :-1])
    with pytest.raises(ValueError, match="rows must be"):
        batch_encoder.encode(batch, np.zeros(4, int), out, rows=[4])
    with pytest.raises(ValueError, match="unknown observation mode"):
        BatchEncoder(None, "secret")
    assert (out == 7.0).all()



def test_packed_writes_the_listed_games_in_order(default_positions):
    """``packed``: out[j] is game rows[j]'s observation, for a subset of the games in any order."""
    games = default_positions[:12]
    batch_encoder = BatchEncoder(None, "table")
    seats = np.array([-1 if g.is_over else g.current_player for g in games])
    rows = [7, 0, 3, 11]
    out = np.full((4, batch_encoder.size), np.nan, dtype=np.float32)
    batch_encoder.encode(from_games(games), seats, out, rows=rows, packed=True)
    for j, i in enumerate(rows):
        expected = np.zeros_like(out[j]) if seats[i] < 0 else encoder().encode(games[i], int(seats[i]), "table")
        assert out[j].tobytes() == expected.tobytes()
    with pytest.raises(ValueError, match=r"shape \(4, "):
        batch_encoder.encode(from_games(games), seats, np.zeros((12, batch_encoder.size), np.float32), rows=rows,
                             packed=True)


def test_vector_game_batch_equals_encoder_of_its_games():
    """The batch as VectorGame steps it (its own payment option bitsets, not packed from Games): every seat's
    vector in every mode equals Encoder.encode of ``vg.game(i)``, every third step and every step in phase pay."""
    from packetrow_env.vector import VectorGame
    rng = np.random.default_rng(4)
    vg = VectorGame([2, 3, 4, 5, 4, 3], seeds=list(range(10, 16)))
    encoders = {mode: BatchEncoder(None, mode) for mode in MODES}
    paying = 0
    for step in range(150):
        mask = vg.legal_action_mask()
        in_pay = (vg.batch.phase == PAY).any()
        if step % 3 == 0 or in_pay:
            games = [vg.game(i) for i in range(vg.num_games)]
            for mode, batch_encoder in encoders.items():
                for seat in range(MAX_PLAYERS):
                    seats = np.array([seat if seat < g.num_players else -1 for g in games])
                    out = batch_encoder.encode(vg.batch, seats, np.empty((vg.num_games, batch_encoder.size),
                                                                         np.float32))
                    for i, game in enumerate(games):
                        if seats[i] >= 0:
                            assert out[i].tobytes() == encoder().encode(game, seat, mode).tobytes(), (step, mode, i)
        paying += int(in_pay)
        weight = rng.random(mask.shape)
        weight[:, actions.ADD_CONTRACT:] += 0.5  # ship often
        vg.step(np.where(mask, weight, -1.0).argmax(axis=1))
    assert paying > 0
