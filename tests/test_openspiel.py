"""python_packetrow, the OpenSpiel game (packetrow_env.openspiel_game): OpenSpiel's own random simulation test, the
deal as chance, clones, resampling from the information state, rewards, bad parameters, the cut at
max_game_length, Shimmy's PettingZoo env, and OpenSpiel's ISMCTS through evaluate_bots and the project's tournament."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="the OpenSpiel game needs the [openspiel] extra (open_spiel)")

from open_spiel.python.algorithms.evaluate_bots import evaluate_bots  # noqa: E402
from open_spiel.python.observation import make_observation  # noqa: E402

import packetrow_env.openspiel_game as og  # noqa: E402  (registers python_packetrow)
from packetrow_agents.openspiel_bot import ISMCTSBot, OpenSpielAgent, ismcts_agent  # noqa: E402
from packetrow_arena.tournament import run_tournament  # noqa: E402
from packetrow_env import scoring  # noqa: E402
from packetrow_env.engine import Game  # noqa: E402
from packetrow_env.observation import encoder  # noqa: E402
from packetrow_env.seat_view import SeatView  # noqa: E402


def load(**params) -> pyspiel.Game:
    return pyspiel.load_game(og.SHORT_NAME, params)


def dealt(game: pyspiel.Game, seed: int) -> pyspiel.State:
    """A state just after the deal of ``seed`` (its bytes as the chance outcomes)."""
    state = game.new_initial_state()
    for byte in seed.to_bytes(og.SEED_BYTES, "little"):
        state.apply_action(byte)
    return state


def play_randomly(state: pyspiel.State, moves: int, seed: int) -> pyspiel.State:
    """``state`` after up to ``moves`` uniformly random moves (fewer if the game ends)."""
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        legal = state.legal_actions()
        state.apply_action(legal[rng.integers(len(legal))])
    return state


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_openspiels_random_simulation_test_passes(players):
    pyspiel.random_sim_test(pyspiel.load_game(f"python_packetrow(players={players})"), num_sims=1, serialize=False,
                            verbose=False)


@pytest.mark.parametrize("reward_mode", ["vp", "win"])
def test_the_random_simulation_test_passes_in_the_other_reward_modes(reward_mode):
    # it checks every return against the utility bounds, and their sum in the zero-sum modes
    pyspiel.random_sim_test(load(players=2, reward_mode=reward_mode), num_sims=1, serialize=False, verbose=False)


def test_the_game_describes_itself_after_game_info():
    for players in range(2, 6):
        game = load(players=players)
        assert game.num_players() == players and game.num_distinct_actions() == 61
        assert game.max_game_length() == og.max_game_length(players) < 2 ** 31
        assert game.information_state_tensor_shape() == game.observation_tensor_shape() == [2536]
    assert load(reward_mode="win").get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert load(reward_mode="vp").get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert (load(reward_mode="rank").min_utility(), load(reward_mode="rank").max_utility()) == (-1, 1)
    assert load(observation_mode="online").information_state_tensor_shape() == [2808]


def test_the_chance_nodes_deal_the_projects_game_of_their_seed():
    game = load(players=3)
    state = game.new_initial_state()
    assert state.is_chance_node() and len(state.chance_outcomes()) == 256 and state.packetrow_game is None
    seed = 2 ** 63 + 12345  # a uint64, as the tournaments' deal seeds
    state = dealt(game, seed)
    assert state.deal_seed == seed and state.current_player() == 0
    assert state.packetrow_game.to_dict() == Game.new(3, seed=seed).to_dict()


def test_the_tensors_are_the_seats_observations_and_the_strings_write_them_out():
    state = play_randomly(dealt(load(players=3), 7), 40, seed=7)
    game, enc = state.packetrow_game, encoder()
    for p in range(3):
        tracked, table = enc.encode(game, p, "tracked"), enc.encode(game, p, "table")
        assert np.array_equal(np.array(state.information_state_tensor(p), np.float32), tracked)
        assert np.array_equal(np.array(state.observation_tensor(p), np.float32), table)
        written = dict(pair.split(":") for pair in state.information_state_string(p).split(" ")[2:])
        assert {int(i): np.float32(float(v)) for i, v in written.items()} == \
               {int(i): tracked[i] for i in np.flatnonzero(tracked)}
    observer = make_observation(state.get_game())
    observer.set_from(state, 0)
    assert observer.dict["hands"].shape == (5, 68) and np.array_equal(observer.tensor, enc.encode(game, 0, "table"))


def test_a_clone_equals_the_state_and_is_independent():
    state = play_randomly(dealt(load(players=2), 3), 30, seed=3)
    clone = state.clone()
    assert isinstance(clone, og.PacketRowState)
    assert str(clone) == str(state) and clone.history() == state.history()
    assert clone.packetrow_game is not state.packetrow_game
    assert clone.packetrow_game.to_dict() == state.packetrow_game.to_dict()
    assert clone.information_state_string(0) == state.information_state_string(0)
    before = state.packetrow_game.to_dict()
    clone.apply_action(clone.legal_actions()[0])
    assert state.packetrow_game.to_dict() == before


def test_openspiels_serialisation_gives_the_state_back():
    state = play_randomly(dealt(load(players=2), 4), 20, seed=4)
    _, back = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(state.get_game(), state))
    assert back.history() == state.history() and back.packetrow_game.to_dict() == state.packetrow_game.to_dict()


@pytest.mark.parametrize("mode", ["tracked", "online"])
def test_a_resampled_state_has_the_seats_information_state_and_redeals_the_rest(mode):
    state = play_randomly(dealt(load(players=3, observation_mode=mode), 11), 50, seed=11)
    before = state.packetrow_game.to_dict()
    sampler = pyspiel.UniformProbabilitySampler(5, 0.0, 1.0)
    for player in range(3):
        worlds = [state.resample_from_infostate(player, sampler) for _ in range(4)]
        for world in worlds:
            assert world.information_state_string(player) == state.information_state_string(player)
            assert world.information_state_tensor(player) == state.information_state_tensor(player)
            assert world.current_player() == state.current_player()
            if player == state.current_player():
                assert world.legal_actions() == state.legal_actions()
        assert any(w.packetrow_game.to_dict() != before for w in worlds), "the hidden cards are re-dealt"
    assert state.packetrow_game.to_dict() == before, "resampling leaves the state alone"


@pytest.mark.parametrize("reward_mode", ["rank", "vp", "win"])
def test_the_returns_are_the_projects_final_rewards(reward_mode):
    state = play_randomly(dealt(load(players=4, reward_mode=reward_mode), 21), 10 ** 4, seed=21)
    assert state.is_terminal() and not state.truncated
    replay = Game.new(4, seed=21)
    for action in state.packetrow_game.state.history:
        replay.step(action)
    assert replay.is_over
    assert state.returns() == scoring.final_rewards(replay.scores(), reward_mode)
    assert state.rewards() == state.returns()


def test_a_game_that_reaches_max_game_length_ends_there_as_a_draw():
    game = load(players=2)
    state = play_randomly(dealt(game, 5), 10, seed=5)
    # a shipment with more than CUT_OPTIONS payment options is out of reach of a test: lengthen the history instead
    state.packetrow_game.state.history.extend([0] * (game.max_game_length() - 11))
    assert not state.is_terminal()
    state.apply_action(state.legal_actions()[0])
    assert state.is_terminal() and state.truncated and state.returns() == [0.0, 0.0]
    assert state.legal_actions() == []


@pytest.mark.parametrize("params, message", [
    ({"players": 1}, "players must be 2 to 5, got 1"),
    ({"players": 6}, "players must be 2 to 5, got 6"),
    ({"observation_mode": "table"}, "observation_mode must be one of tracked, online, full, got 'table'"),
    ({"observation_mode": "x"}, "observation_mode must be one of"),
    ({"reward_mode": "score"}, "reward_mode must be one of rank, win, vp, got 'score'"),
])
def test_bad_parameters_are_a_clear_error(params, message):
    with pytest.raises(ValueError, match=message):
        load(**params)


def test_an_unknown_parameter_or_a_wrong_type_is_refused_by_openspiel():
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'seats'"):
        pyspiel.load_game("python_packetrow(seats=3)")
    with pytest.raises(pyspiel.SpielError, match="Wrong type for parameter players"):
        load(players="three")


def test_an_illegal_move_raises_and_changes_nothing():
    state = dealt(load(players=2), 9)
    before, history = state.packetrow_game.to_dict(), state.history()
    with pytest.raises(ValueError, match="is not legal"):
        state.apply_action(60)  # more: no payment is being chosen
    assert state.packetrow_game.to_dict() == before and state.history() == history


def test_state_at_refuses_a_position_of_another_player_count():
    with pytest.raises(ValueError, match="3-player game"):
        og.state_at(load(players=2), Game.new(3, seed=0))


@pytest.mark.parametrize("players", [2, 4])
def test_shimmy_wraps_it_as_a_pettingzoo_env_that_passes_the_api_test(players):
    shimmy = pytest.importorskip("shimmy", reason="Shimmy comes with the [openspiel] extra")
    from pettingzoo.test import api_test

    env = shimmy.OpenSpielCompatibilityV0(game_name=og.SHORT_NAME, config={"players": players})
    api_test(env, num_cycles=300)


def test_shimmys_reset_seed_deals_the_same_game():
    shimmy = pytest.importorskip("shimmy", reason="Shimmy comes with the [openspiel] extra")
    deals = []
    for _ in range(2):
        env = shimmy.OpenSpielCompatibilityV0(game_name=og.SHORT_NAME, config={"players": 2})
        env.reset(seed=42)
        deals.append(env.game_state.packetrow_game.to_dict())
    assert deals[0] == deals[1]


def test_openspiels_ismcts_plays_through_evaluate_bots():
    # from a late position, to keep it short: evaluate_bots restarts every bot there (ISMCTSBot.restart_at)
    game = load(players=2)
    state = play_randomly(dealt(game, 13), 100, seed=13)
    bots = [ISMCTSBot(game, max_simulations=3, seed=0), pyspiel.make_uniform_random_bot(1, 0)]
    returns = evaluate_bots(state, bots, np.random.RandomState(0))
    assert state.is_terminal() and returns == state.returns() and sum(returns) == 0


def test_a_pyspiel_bot_sits_in_the_projects_tournament():
    random_bot = OpenSpielAgent(lambda game, seat, seed: pyspiel.make_uniform_random_bot(seat, seed % 2 ** 31),
                                name="openspiel_random")
    result = run_tournament([random_bot, "random"], num_players=2, games=2, seed=0, progress=False)
    assert result.names == ["openspiel_random", "random"] and [row["games"] for row in result.table] == [2, 2]


def test_openspiels_ismcts_acts_on_a_world_dealt_from_the_seats_view():
    game = Game.new(2, seed=17)
    for _ in range(30):
        game.step(game.legal_actions()[-1])
    view = SeatView(game)
    agent = ismcts_agent(4, seed=1)
    assert agent.name == "openspiel_ismcts:simulations=4"
    assert agent.act(view) in view.legal_actions()
    agent.reset(1)
    assert agent.act(SeatView(game)) == ismcts_agent(4, seed=1).act(view), "seeded"
