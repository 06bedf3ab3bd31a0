"""The compact observation loses nothing (R-INFO-1..4): ``expand`` rebuilds the Encoder's vector from it exactly.

Over random games of 2-5 players played to the end (phase pay and finished games included), every seat and
every mode, in the default catalogue and a custom one whose ships of one destination come in two types: the
compact vector expands to ``Encoder.encode`` bit for bit (payment option values to float32 rounding, as the
compact vector sums them as whole dollars).
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from packetrow_env import actions
from packetrow_env import cards as catalogue
from packetrow_env.compact_observation import NUM_SLOTS, CompactEncoder, encoder, layout
from packetrow_env.engine import Game
from packetrow_env.observation import MODES, encoder as full_encoder
from packetrow_env.state import PAY
from tests.fuzzing import default_rows

ENC = encoder()


def custom_catalogue(folder):
    """The default cards with ships worth 1 or 2 (two ship types per destination) and dearer buildings."""
    rows = default_rows()
    ships = [r for r in rows if r["kind"] == "ship"]
    for i, row in enumerate(ships):
        row["value"] = str(1 + i % 2)
    for row in rows:
        if row["kind"] == "building":
            row["vp"] = str(int(row["vp"]) + 1)
    return load_rows(rows, folder)


def load_rows(rows: list[dict], folder):
    """The catalogue of ``rows``, written to ``folder``/cards.csv and loaded."""
    path = folder / "cards.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return catalogue.load(path)


def check_position(compact: CompactEncoder, game: Game) -> None:
    full = compact.full
    options = full.split(np.zeros(full.size, np.float32))  # piece shapes only
    start = sum(v.size for name, v in options.items() if name != "payment_options" and
                list(options).index(name) < list(options).index("payment_options"))
    value_columns = start + np.arange(options["payment_options"].shape[0]) * options["payment_options"].shape[1] \
        + options["payment_options"].shape[1] - 1
    for mode in MODES:
        for seat in range(game.num_players):
            vector = compact.encode(game, seat, mode)
            assert vector.dtype == np.float32 and vector.shape == (compact.size_of(mode),)
            assert vector.min() >= 0 and vector.max() <= compact.high
            expected = full.encode(game, seat, mode)
            got = compact.expand(vector)
            exact = np.ones(len(expected), bool)
            exact[value_columns] = False
            assert np.array_equal(got[exact], expected[exact]), (mode, seat, np.flatnonzero(got != expected))
            np.testing.assert_allclose(got[value_columns], expected[value_columns], rtol=1e-6, atol=0)


def play_and_check(compact: CompactEncoder, seeds, every: int = 3) -> dict:
    seen = {"pay": 0, "over": 0, "positions": 0}
    for seed in seeds:
        n = 2 + seed % 4
        game = Game.new(n, seed=seed, cards=compact.cards)
        rng = np.random.default_rng(seed)
        step = 0
        while True:
            if step % every == 0 or game.state.phase == PAY or game.is_over:
                check_position(compact, game)
                seen["positions"] += 1
                seen["pay"] += game.state.phase == PAY
            if game.is_over:
                seen["over"] += 1
                break
            legal = game.legal_actions()
            # Ship and pay often: take a ship/pay action when one is legal, half the time.
            late = [a for a in legal if a >= actions.ADD_CONTRACT]
            game.step(int(rng.choice(late if late and rng.random() < 0.5 else legal)))
            step += 1
    return seen


def test_compact_vector_expands_to_the_encoder_vector_over_random_games():
    seen = play_and_check(ENC, range(12))
    assert seen["over"] == 12 and seen["pay"] > 10 and seen["positions"] > 500


def test_compact_vector_expands_to_the_encoder_vector_in_a_custom_catalogue(tmp_path):
    cards = custom_catalogue(tmp_path)
    compact = CompactEncoder(cards)
    assert len(compact.ship_types) == 12  # two ship types per destination: ships by type, not by destination
    seen = play_and_check(compact, range(4), every=4)
    assert seen["over"] == 4 and seen["pay"] > 0


def test_by_board_follows_the_catalogue(tmp_path):
    """Types on several boards come from the catalogue: with the guildhall's buildings worth a VP more, each building
    type of the other boards lies on three boards, the guildhall's on one; expand and the batch still agree."""
    from packetrow_env.vector.batch import from_games
    from packetrow_env.vector.observe_compact import CompactBatchEncoder

    rows = default_rows()
    for row in rows:
        if row["kind"] == "building" and row["board"] == "guildhall":
            row["vp"] = str(int(row["vp"]) + 1)
    compact = CompactEncoder(load_rows(rows, tmp_path))
    pairs = compact.full.board_pairs
    assert len(pairs) == 12 and {b for _, b in pairs} == {1, 2, 3}  # four types on the docks, market and bank
    assert compact.split(np.zeros(compact.size, np.float32))["by_board"].shape == (8, 6)  # two boards each
    seen = play_and_check(compact, range(3), every=5)
    assert seen["over"] == 3
    games = [Game.new(4, seed=s, cards=compact.cards) for s in range(3)]
    for game, seed in zip(games, range(3)):
        rng = np.random.default_rng(seed)
        for _ in range(150):
            if not game.is_over:
                game.step(int(rng.choice(game.legal_actions())))
    out = np.zeros((3, compact.size), np.float32)
    CompactBatchEncoder(compact.cards, "tracked").encode(from_games(games), np.zeros(3, np.int64), out)
    assert all(np.array_equal(out[i], compact.encode(game, 0)) for i, game in enumerate(games))


@pytest.mark.parametrize("mode", MODES)
def test_compact_layout_is_contiguous_documented_and_small(mode):
    pieces = layout(mode)
    offset = 0
    for piece in pieces:
        assert piece.offset == offset and piece.size > 0 and piece.description
        offset += piece.size
    assert offset == ENC.size_of(mode)
    assert ENC.index_slices == (slice(0, NUM_SLOTS),)
    assert [p.name for p in pieces[:2]] == ["current_supply", "future_supply"]
    assert ENC.size_of(mode) < full_encoder().size_of(mode) / 3
    assert ENC.size_of(mode) == (778 if mode in ("tracked", "table") else 846)  # default catalogue
    assert ENC.size_of(mode) == len(ENC.encode(Game.new(3, seed=1), 2, mode))


def test_supply_indices_are_card_types_plus_one_and_zero_for_empty_slots():
    game = Game.new(2, seed=5)
    vector = ENC.encode(game, 0)
    split = ENC.split(vector)
    s = game.state
    for board in range(4):
        for slot in range(4):
            card = s.current[board, slot]
            assert split["current_supply"][board, slot] == (0 if card < 0 else ENC.type_of[card] + 1)
    assert (split["current_supply"][:, 2:] == 0).all()  # 2 players: 2 slots a board (R-SETUP-4)
    assert split["future_supply"].min() >= 1
    assert vector[:NUM_SLOTS].max() <= ENC.num_types


def test_expand_refuses_a_vector_of_the_wrong_length():
    with pytest.raises(ValueError, match="778 or 846 floats"):
        ENC.expand(np.zeros(100, np.float32))


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown observation mode"):
        ENC.encode(Game.new(2, seed=0), 0, "everything")

