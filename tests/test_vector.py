"""VectorGame against the single engine: the same deals, masks, players, positions and scores, step by step."""

import numpy as np
import pytest

from packetrow_env import actions
from packetrow_env.engine import Game, IllegalActionError
from packetrow_env.knowledge import MODES
from packetrow_env.compact_observation import encoder as compact_encoder
from packetrow_env.observation import encoder
from packetrow_env.scoring import final_rewards
from packetrow_env.vector import VectorGame
from packetrow_env.vector.learner import random_legal


def choose(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per game, staging and shipping contracts often (the pay phase gets played)."""
    weight = rng.random(mask.shape)
    weight[:, actions.ADD_CONTRACT:] += 0.5
    return np.where(mask, weight, -1.0).argmax(axis=1)


def play_both(num_players, seeds, rng, check=None, cards=None):
    """Play a VectorGame and one Game per seed with the same random actions to the end, comparing every step."""
    vg = VectorGame(num_players, seeds=seeds, cards=cards)
    counts = np.broadcast_to(num_players, len(seeds))
    games = [Game.new(int(n), seed=s, cards=cards) for n, s in zip(counts, seeds)]
    paid = 0
    while not vg.is_over.all():
        mask = vg.legal_action_mask()
        for i, g in enumerate(games):
            assert np.array_equal(mask[i], g.legal_action_mask()), (i, g.to_dict())
            assert vg.current_player[i] == (-1 if g.is_over else g.current_player)
            assert vg.payment_options(i) == g.payment_options()
        if check is not None:
            check(vg, games)
        acts = choose(mask, rng)
        paid += int((acts >= actions.PAY).sum())
        vg.step(acts)
        for i, g in enumerate(games):
            if not g.is_over:
                g.step(int(acts[i]))
    for i, g in enumerate(games):
        assert vg.game(i).to_dict() == g.to_dict()
        scores = g.scores()
        vp, cash = vg.scores()
        assert vp[i, :g.num_players].tolist() == [row["vp"] for row in scores]
        assert cash[i, :g.num_players].tolist() == [row["cash"] for row in scores]
        for mode in ("rank", "win", "vp"):
            assert np.allclose(vg.rewards(mode)[i, :g.num_players], final_rewards(scores, mode))
    return vg, paid


def same_observations(vg, games):
    """Every mode's observation of the player to act equals the AEC env's encoder (zeros where over)."""
    for encoding, enc in (("onehot", encoder()), ("compact", compact_encoder())):
        for mode in MODES:
            obs = vg.observe(mode, encoding=encoding)
            for i, g in enumerate(games):
                expected = 0 * obs[i] if g.is_over else enc.encode(g, g.current_player, mode)
                assert np.array_equal(obs[i], expected), (encoding, mode, i)


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_batch_plays_exactly_as_game(num_players):
    """Masks, players, observations, payment options (R-SHIP-7), final positions and scores equal the single
    engine's."""
    vg, paid = play_both(num_players, list(range(100 * num_players, 100 * num_players + 6)),
                         np.random.default_rng(num_players), check=same_observations)
    assert vg.is_over.all()
    assert paid > 0  # the pay phase was played


@pytest.mark.parametrize("change", ["values", "reshuffled"])
def test_custom_catalogue_plays_exactly_as_game(tmp_path, change):
    """A user's catalogue (other values, quantities, destinations, gold sizes): the batch reads its card table."""
    from tests.test_shipping import _random_values, _reshuffled, _write_catalogue
    cat = _write_catalogue(tmp_path / "cards.csv", {"values": _random_values, "reshuffled": _reshuffled}[change])
    vg, paid = play_both(np.array([2, 3, 4, 5]), [11, 12, 13, 14], np.random.default_rng(9), cards=cat)
    assert vg.is_over.all() and paid > 0


def test_mixed_player_counts():
    """One batch may hold games of every player count."""
    counts = [2, 3, 4, 5, 5, 2]
    vg, _ = play_both(np.array(counts), list(range(6)), np.random.default_rng(7))
    assert vg.num_players.tolist() == counts


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_deal_equals_game_new(num_players):
    """Game i is dealt as Game.new(num_players, seed=seeds[i]) (R-SETUP-1..7), generator state included, for
    small and large seeds (the batch's shuffles are compiled, vector/seeded_shuffle.py)."""
    seeds = [0, 5, 17, 99, 2 ** 32 - 1, 2 ** 32, 2 ** 63 - 1]
    vg = VectorGame(num_players, seeds=seeds)
    for i, seed in enumerate(seeds):
        assert vg.game(i).to_dict() == Game.new(num_players, seed=seed).to_dict()


def test_illegal_action_raises_and_changes_nothing():
    """An illegal action in a running game names the game and the action, and no game moves."""
    vg = VectorGame(4, seeds=range(4))
    before = [vg.game(i).to_dict() for i in range(4)]
    mask = vg.legal_action_mask()
    acts = mask.argmax(axis=1)
    acts[2] = actions.SHIP  # not legal at the start
    with pytest.raises(IllegalActionError, match=r"game 2: action 47 \(ship\) is not legal"):
        vg.step(acts)
    assert [vg.game(i).to_dict() for i in range(4)] == before
    assert np.array_equal(vg.legal_action_mask(), mask)
    for bad in (np.zeros(3, int), np.zeros(4), np.full(4, actions.NUM_ACTIONS)):
        with pytest.raises(ValueError):
            vg.step(bad)
    assert [vg.game(i).to_dict() for i in range(4)] == before


def test_finished_games_ignore_actions_and_reset():
    """Over games ignore their actions, report -1 and empty masks; reset re-deals them as Game.new."""
    rng = np.random.default_rng(0)
    vg = VectorGame(2, seeds=[1, 2])
    while not vg.is_over.all():
        vg.step(choose(vg.legal_action_mask(), rng))
    final = vg.game(0).to_dict()
    vg.step(np.array([99, -5]))  # ignored: both games are over
    assert vg.game(0).to_dict() == final
    assert vg.current_player.tolist() == [-1, -1]
    assert not vg.legal_action_mask().any()
    assert (vg.rewards("rank").sum(axis=1) == 0).all()
    vg.reset([1], seeds=[42])
    assert vg.game(1).to_dict() == Game.new(2, seed=42).to_dict()
    assert vg.is_over.tolist() == [True, False]
    assert (vg.rewards()[1] == 0).all()


def test_autoreset_reports_final_rewards_then_redeals():
    """With autoreset, a finished game's rewards are readable after the step that ended it, and it is re-dealt
    with the next seeds of the batch's sequence."""
    rng = np.random.default_rng(3)
    vg = VectorGame(2, seeds=[0, 1], autoreset=True)
    ref = VectorGame(2, seeds=[0, 1])
    while not vg.ended.any():
        acts = choose(vg.legal_action_mask(), rng)
        vg.step(acts)
        ref.step(acts)
    done = np.flatnonzero(vg.ended)
    assert np.array_equal(vg.rewards("vp")[done], ref.rewards("vp")[done])
    assert not vg.is_over.any()
    for k, i in enumerate(done):
        assert vg.game(int(i)).to_dict() == Game.new(2, seed=2 + k).to_dict()


def test_bad_setup_is_refused():
    """Clear errors for bad player counts, seeds and indices."""
    with pytest.raises(ValueError, match="num_players"):
        VectorGame(6, seeds=[0])
    with pytest.raises(ValueError, match="one per game"):
        VectorGame([2, 3], seeds=[0])
    with pytest.raises(ValueError, match="seeds"):
        VectorGame(2, seeds=[-1])
    vg = VectorGame(2, seeds=[0, 1])
    with pytest.raises(ValueError, match="game index"):
        vg.game(2)
    with pytest.raises(ValueError, match="one seed per game"):
        vg.reset([0, 1], seeds=[3])


def test_from_games_continues_loaded_positions():
    """A batch built from single games (e.g. loaded saves) plays on exactly as they do."""
    rng = np.random.default_rng(11)
    games = [Game.new(n, seed=40 + n) for n in (2, 3, 4, 5)]
    for g in games:
        for _ in range(37):
            g.step(int(rng.choice(g.legal_actions())))
    vg = VectorGame.from_games([Game.from_dict(g.to_dict()) for g in games])
    for i, g in enumerate(games):
        assert vg.game(i).to_dict() == g.to_dict()
        assert np.array_equal(vg.legal_action_mask()[i], g.legal_action_mask())
    with pytest.raises(ValueError, match="non-empty list"):
        VectorGame.from_games([])


def test_R_SCORE_1_a_huge_hand_is_settled_by_the_reference_search():
    """A hand holding most of the catalogue at the end (beyond the compiled search's budget): the final
    fulfilment still equals Game's (shipping's search over units settles it)."""
    from packetrow_env.cards import CAPTAIN, CONTRACT, GOLD, GOODS_KIND, SHIP, START, TRADER
    from tests.positions import CARDS, Position

    kinds = (CONTRACT, GOODS_KIND, GOLD, TRADER, SHIP, CAPTAIN)
    cards = [c for c in range(len(CARDS.kind)) if CARDS.kind[c] in kinds and CARDS.board[c] != START]
    pos = Position(2, seed=3)
    pos.hand(1, *[c for c in cards if CARDS.kind[c] != SHIP]).ships(1, *[c for c in cards if CARDS.kind[c] == SHIP])
    game = pos.last_round().game()
    vg = VectorGame.from_games([Game.from_dict(game.to_dict())])
    settled = []
    original = vg._settle_huge_hands
    vg._settle_huge_hands = lambda: (settled.append(True), original())
    game.step(actions.PASS)
    vg.step(np.array([actions.PASS]))
    assert game.is_over and vg.is_over.all() and settled
    assert vg.game(0).to_dict() == game.to_dict()
    assert vg.scores()[1][0, :2].tolist() == [row["cash"] for row in game.scores()]


def test_out_of_range_and_huge_unsigned_actions_are_illegal():
    """Out-of-range actions (unsigned ones past int64 too) raise before any game moves."""
    vg = VectorGame(2, seeds=range(3))
    before = [vg.game(i).to_dict() for i in range(3)]
    acts = vg.legal_action_mask().argmax(axis=1).astype(np.uint64)
    acts[1] = np.uint64(2 ** 64 - 1)
    with pytest.raises(IllegalActionError, match=r"game 1: action 18446744073709551615 is out of range"):
        vg.step(acts)
    assert [vg.game(i).to_dict() for i in range(3)] == before


def test_kernels_without_reference_counting_leak_nothing():
    """The rules kernels compiled without reference counting (rules._NO_REFCOUNT) leave numba's allocations
    balanced over whole games: deals, takes, shipments, payments and final fulfilments."""
    from numba.core.runtime import _nrt_python as nrt

    vg = VectorGame([2, 3, 4, 5] * 8, autoreset=True)
    rng = np.random.default_rng(3)
    vg.step(vg.legal_action_mask().argmax(axis=1))  # compiled before counting
    was_on = nrt.memsys_stats_enabled()
    nrt.memsys_enable_stats()
    try:
        alloc, free = nrt.memsys_get_stats_alloc(), nrt.memsys_get_stats_free()
        finished = 0
        for _ in range(600):
            mask = vg.legal_action_mask()
            acts = random_legal(mask, rng)
            acts[mask[:, actions.PAY]] = actions.PAY  # pay with the first option, ship whenever allowed
            acts[mask[:, actions.SHIP]] = actions.SHIP
            vg.step(acts)
            finished += int(vg.ended.sum())
        allocated = nrt.memsys_get_stats_alloc() - alloc
        assert allocated > 0 and finished > 0  # the shipment kernels allocated; games ended and were re-dealt
        assert nrt.memsys_get_stats_alloc() - alloc == nrt.memsys_get_stats_free() - free
    finally:
        if not was_on:
            nrt.memsys_disable_stats()


def finished_games() -> list[Game]:
    """One game of each player count played to the end at random (seeded)."""
    rng = np.random.default_rng(0)
    games = []
    for seed, n in enumerate((2, 3, 4, 5)):
        game = Game.new(n, seed=seed)
        while not game.is_over:
            game.step(int(rng.choice(game.legal_actions())))
        games.append(game)
    return games


def test_from_games_of_finished_games_reports_their_final_scores_and_rewards():
    games = finished_games()
    batch = VectorGame.from_games(games)
    vp, cash = batch.scores()
    rewards = batch.rewards("rank")
    for i, game in enumerate(games):
        n = game.num_players
        assert vp[i, :n].tolist() == [row["vp"] for row in game.scores()]
        assert cash[i, :n].tolist() == [row["cash"] for row in game.scores()]
        assert np.allclose(rewards[i, :n], final_rewards(game.scores(), "rank"))
