"""SearchAgent: legal play, budgets, determinism, no use of hidden cards, the rollout reward, bad options."""

from __future__ import annotations

import numpy as np
import pytest

from packetrow_agents.heuristic import HeuristicAgent
from packetrow_agents.ismcts import terminal_rewards
from packetrow_agents.policy import SHIPPED_MODEL, NumpyPolicy, PolicyAgent, action_model
from packetrow_agents.policy_batch import stack_of
from packetrow_agents.registry import make_agent
from packetrow_agents.search import DEFAULT_ALPHA, DEFAULT_ETA, SearchAgent, seat_rewards
from packetrow_env.belief import starting_contract_posterior
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from packetrow_env.vector import VectorGame
from tests.test_ismcts import decision_positions
from tests.test_belief import hidden_twin, play
from tests.test_leaks import twins
from tests.test_vector import finished_games

FAST = dict(rollouts=8, determinizations=2, candidates=3)
ISMCTS_IMITATION = SHIPPED_MODEL.parent / "ismcts_imitation.npz"  # packetrow imitate's model of ISMCTS at 1 s


def choose(data: dict, seed: int = 0, **options) -> int:
    """The action a fresh search agent with this seed picks in a saved position."""
    return SearchAgent(seed=seed, **{**FAST, **options}).act(SeatView(Game.from_dict(data)))


@pytest.mark.parametrize("n, moves", [(2, 1000), (5, 40)])
def test_plays_only_legal_actions(n, moves):
    game = Game.new(n, seed=n)
    agent = SearchAgent(seed=1, rollouts=4, determinizations=1, candidates=2)
    for _ in range(moves):
        if game.is_over:
            break
        mask = game.legal_action_mask()
        action = agent.act(SeatView(game, action_mask=mask))
        assert isinstance(action, int) and mask[action]
        game.step(action)


@pytest.mark.parametrize("n, options", [(2, {}), (3, {}), (3, {"opponents": "heuristic"}), (2, {"value": "ppo"}),
                                        (3, {"value": "ppo", "depth": 2}), (2, {"opponents": str(ISMCTS_IMITATION)}),
                                        (2, {"update": "mmd"}), (3, {"update": "mmd", "act": "sample", "eta": 5})])
def test_hidden_twins_get_the_same_action(n, options):
    """No cheating (R-INFO-2): what the acting seat cannot know never changes the action for a seed."""
    rng = np.random.default_rng(n)
    checked = 0
    for data in decision_positions(n, [n], steps=(1, 30, 80)):
        expected = choose(data, seed=3, **options)
        for name, twin in twins(data, data["current_player"], rng):
            assert choose(twin, seed=3, **options) == expected, name
            checked += 1
    assert checked >= 3


def test_twin_check_catches_a_cheating_search(monkeypatch):
    """Control: a search that rolls out the true game (it sees hidden cards) is caught by the twin check."""
    monkeypatch.setattr(Game, "sample_determinization", lambda game, seat, rng, mode="tracked": game.clone())
    rng = np.random.default_rng(0)
    for data in decision_positions(2, range(6), steps=(30, 80)):
        expected = choose(data, seed=3, candidates=0)
        if any(choose(twin, seed=3, candidates=0) != expected for _, twin in twins(data, data["current_player"], rng)):
            return
    pytest.fail("no twin changed the cheating search's choice")


def test_one_candidate_is_the_policy_argmax_and_the_real_game_is_unchanged():
    policy = PolicyAgent()
    for data in decision_positions(2, [5], steps=(10, 60)):
        game = Game.from_dict(data)
        before = game.to_dict()
        assert SearchAgent(candidates=1, rollouts=2).act(SeatView(game)) == policy.act(SeatView(game))
        assert game.to_dict() == before


@pytest.mark.parametrize("n, opponents", [(2, "policy"), (3, "policy"), (3, "heuristic")])
def test_posterior_determinisations_follow_the_belief_and_keep_twins_equal(n, opponents, monkeypatch):
    """With belief=posterior the deals come from the exact posterior of the opponents' play under the rollouts'
    model of them (the policy, or the heuristic), and the choice still depends only on what the seat knows."""
    given = []
    sample = SeatView.sample_determinization

    def spy(view, rng, posterior=None):
        given.append(posterior)
        return sample(view, rng, posterior=posterior)

    model = HeuristicAgent() if opponents == "heuristic" else PolicyAgent()
    game = play(n, n, 40, agents=[HeuristicAgent(q) for q in range(n)] if opponents == "heuristic" else None)
    seat = game.current_player
    expected = starting_contract_posterior(SeatView(game), {q: action_model(model) for q in range(n)})
    options = dict(FAST, belief="posterior", opponents=opponents)
    with monkeypatch.context() as patch:
        patch.setattr(SeatView, "sample_determinization", spy)
        choice = SearchAgent(seed=2, **options).act(SeatView(game))
    assert given and all(p == expected for p in given) and len(expected) == n - 1
    rng = np.random.default_rng(1)
    for _ in range(3):
        twin = hidden_twin(game, seat, rng)
        assert SearchAgent(seed=2, **options).act(SeatView(twin)) == choice


def test_posterior_search_of_a_loaded_game_deals_uniformly():
    """A game loaded from a saved file cannot replay its past: the posterior search deals as the uniform one."""
    data = play(2, 4, 30).to_dict()
    assert choose(data, seed=5, belief="posterior") == choose(data, seed=5)


def test_rollout_budget_counts_rollouts_and_seed_repeats():
    data = decision_positions(4, [2], steps=(40,))[0]
    first = SearchAgent(seed=9, rollouts=20, determinizations=3, candidates=3)
    action = first.act(SeatView(Game.from_dict(data)))
    assert first.last_rollouts >= 20 and first.last_rollouts % 3 == 0
    assert SearchAgent(seed=9, rollouts=20, determinizations=3, candidates=3).act(
        SeatView(Game.from_dict(data))) == action


def test_time_budget_stops():
    data = decision_positions(2, [3], steps=(20,))[0]
    agent = SearchAgent(seconds_per_move=0.05, determinizations=2)
    agent.act(SeatView(Game.from_dict(data)))
    assert agent.last_rollouts >= 2


def test_the_search_leaves_the_policy_only_for_a_clear_paired_gain():
    agent = SearchAgent(threshold=0.05)
    # candidate 1 gains 0.5 on every deal: far beyond the threshold and two standard errors (0)
    assert agent.choose(np.array([[0.0, 0.5, -1.0], [1.0, 1.5, 0.0], [-1.0, -0.5, -1.0]])) == 1
    # candidate 2 is better on average (+0.33) but not by two standard errors of the paired gain (2.4)
    assert agent.choose(np.array([[1.0, 0.0, -1.0], [-1.0, -1.0, 1.0], [0.0, 0.0, 1.0]])) == 0
    # a gain of 0.04 on every deal: sure, but below the threshold
    assert agent.choose(np.array([[0.0, 0.04], [0.5, 0.54]])) == 0
    assert SearchAgent(threshold=0.0).choose(np.array([[0.0, 0.04], [0.5, 0.54]])) == 1
    # one deal: no standard error, so the favourite stays
    assert agent.choose(np.array([[0.0, 1.0]])) == 0
    # the favourite is best: kept
    assert agent.choose(np.array([[1.0, 0.0], [1.0, -1.0]])) == 0


def test_the_mirror_descent_update_of_the_candidates():
    """update=mmd: the policy over the candidates (renormalised) moved by the shrunk paired advantages; eta = 0
    keeps the policy's favourite, a large eta takes the best mean, and the magnet is the uniform or the policy."""
    rewards = np.array([[0.0, 0.5, -1.0], [1.0, 1.5, 0.0], [-1.0, -0.5, -1.0]])  # candidate 1 gains 0.5 every deal
    prior = np.array([0.5, 0.2, 0.1])  # the policy's probabilities of the candidates; 0.2 elsewhere
    policy = prior / prior.sum()
    agent = SearchAgent(update="mmd", eta=2.0, alpha=0.5)
    # candidate 2's gains -1, -1, 0: mean -2/3, squared standard error 1/9, shrunk by (4/9) / (4/9 + 1/9)
    q = np.array([0.0, 0.5, -2 / 3 * 0.8])
    power = 1 / (1 + 0.5 * 2.0)
    expected = (policy * (1 / 3) ** 1.0 * np.exp(2.0 * q)) ** power
    np.testing.assert_allclose(agent.mirror_descent(rewards, prior), expected / expected.sum(), rtol=1e-12)
    by_policy = policy * np.exp(2.0 * q * power)  # rho = pi: pi^(1/2) * pi^(1/2) * exp(eta * q / 2)
    np.testing.assert_allclose(SearchAgent(update="mmd", eta=2.0, alpha=0.5, magnet="policy").mirror_descent(
        rewards, prior), by_policy / by_policy.sum(), rtol=1e-12)
    assert SearchAgent(update="mmd", eta=0.0).choose_by_mirror_descent(rewards, prior) == 0
    assert SearchAgent(update="mmd", eta=100.0).choose_by_mirror_descent(rewards, prior) == 1
    assert SearchAgent(update="mmd", eta=1.0).choose_by_mirror_descent(rewards, prior) == 0  # 0.5 < log 2.5
    # one deal: no standard error, so nothing moves the policy however large eta is
    assert SearchAgent(update="mmd", eta=1e6).choose_by_mirror_descent(rewards[:1], prior) == 0


def test_sampled_mirror_descent_follows_the_updated_policy():
    rewards = np.array([[0.0, 0.5], [1.0, 1.5], [-1.0, -0.5]])
    agent = SearchAgent(seed=0, update="mmd", eta=2.0, alpha=0.0, act="sample")
    updated = agent.mirror_descent(rewards, np.array([0.5, 0.5]))
    picks = [agent.choose_by_mirror_descent(rewards, np.array([0.5, 0.5])) for _ in range(2000)]
    assert abs(np.mean(picks) - updated[1]) < 0.04  # e / (1 + e) = 0.73, within four standard errors


def test_the_search_policy_is_the_policy_with_the_candidates_share_moved_by_the_update(monkeypatch):
    """last_policy under update=mmd: the policy's probabilities outside the candidates, and the candidates' share of
    them split as mirror_descent splits it; the action played is the most likely candidate under it."""
    agent = SearchAgent(seed=1, rollouts=9, candidates=3, update="mmd")  # one wave of 3 deals
    rewards = np.array([[0.0, 0.5, -1.0], [1.0, 1.5, 0.0], [-1.0, -0.5, -1.0]])  # candidate 1 gains every deal
    monkeypatch.setattr(agent, "_rollouts", lambda deals, candidates, seat: rewards[:len(deals)])
    game = Game.new(2, seed=3)
    view = SeatView(game, game.current_player)
    prior = agent.player.action_probabilities(view)
    candidates = sorted(np.flatnonzero(prior), key=lambda a: (-prior[a], a))[:3]
    action = agent.act(view)
    assert action == candidates[1]
    searched = agent.last_policy
    assert searched.shape == prior.shape and searched.sum() == pytest.approx(1.0)
    others = np.setdiff1d(np.arange(len(prior)), candidates)
    np.testing.assert_array_equal(searched[others], prior[others])
    share = prior[candidates].sum()
    np.testing.assert_allclose(searched[candidates], share * agent.mirror_descent(rewards, prior[candidates]))
    assert searched[candidates[1]] > prior[candidates[1]]
    SearchAgent(rollouts=16).act(view)  # SPARTA's rule has no policy to give
    assert SearchAgent(rollouts=16).last_policy is None


def test_a_heuristic_opponent_model_plays_every_other_seat_in_the_rollouts(monkeypatch):
    import packetrow_agents.heuristic_batch as heuristic_batch

    moved = []
    real = heuristic_batch.heuristic_actions

    def spy(games, rows, *args, **kwargs):
        moved.append(games.current_player[rows])
        return real(games, rows, *args, **kwargs)

    monkeypatch.setattr(heuristic_batch, "heuristic_actions", spy)
    game = Game.new(3, seed=2)
    seat = game.current_player
    SearchAgent(seed=0, opponents="heuristic", **FAST).act(SeatView(game))
    seats = np.concatenate(moved)
    assert set(seats.tolist()) == {0, 1, 2} - {seat}  # the heuristic moves the others, the policy the searcher


def rollout_rewards(search: SearchAgent, n: int = 2, seed: int = 7) -> np.ndarray:
    """The search's rollout rewards for its top 3 candidates in 6 deals of a position ``seed`` of an n-player game."""
    game = play(n, seed, 12)
    view = SeatView(game)
    rng = np.random.default_rng(seed)
    return search._rollouts([view.sample_determinization(rng) for _ in range(6)], view.legal_actions()[:3], view.seat)


def test_a_policy_opponent_model_shares_the_compiled_forward_and_equals_its_own_forward():
    """An opponent policy of the search policy's shape runs as policy 1 of its stack, one forward a step; the
    rollouts equal those with the opponent model moved by its own forward."""
    joint = SearchAgent(seed=0, opponents=str(ISMCTS_IMITATION), **FAST)
    assert joint._joint and joint._stack.num_policies == 2
    separate = SearchAgent(seed=0, opponents=str(ISMCTS_IMITATION), **FAST)
    separate._joint, separate._stack = False, stack_of((separate.player.policy,))
    for n in (2, 3):
        np.testing.assert_array_equal(rollout_rewards(joint, n), rollout_rewards(separate, n))


def test_the_shipped_policy_as_opponent_model_is_the_default_search():
    """Control for the joint forward: the search's own policy named as the opponent model changes nothing."""
    default = SearchAgent(seed=0, **FAST)
    same = SearchAgent(seed=0, opponents=str(SHIPPED_MODEL), **FAST)
    np.testing.assert_array_equal(rollout_rewards(same, 3), rollout_rewards(default, 3))
    assert not np.array_equal(rollout_rewards(SearchAgent(seed=0, opponents=str(ISMCTS_IMITATION), **FAST), 3),
                              rollout_rewards(default, 3))  # another model, other rollouts


def constant_value(c: float) -> NumpyPolicy:
    """A value network that says ``c`` VP of every position."""
    size = SeatView(Game.new(2, seed=0)).observation.shape[0]
    return NumpyPolicy([], [], np.zeros((size, 1)), np.array([c]), metadata={"head": "value"})


@pytest.mark.parametrize("depth", [0, 3])
def test_value_leaves_stop_at_the_seats_turn_after_depth_of_its_moves(depth, monkeypatch):
    """With a value network the rollouts stop when the seat is to move after ``depth`` moves of its own, and the
    leaf scores tanh(value / 5); only games that end first score their VP margin."""
    stopped = []
    real = VectorGame.observe

    def spy(games, mode, rows=None, encoding="onehot"):
        if encoding == "onehot":  # the value network's input; the shipped policy reads the compact one
            stopped.append(games.current_player[rows])
        return real(games, mode, rows=rows, encoding=encoding)

    monkeypatch.setattr(VectorGame, "observe", spy)
    game = play(2, 1, 20)
    seat = game.current_player
    agent = SearchAgent(seed=0, value=constant_value(1000.0), depth=depth, **FAST)
    assert agent.player.observation_encoding == "compact"
    deals = [SeatView(game).sample_determinization(np.random.default_rng(k)) for k in range(2)]
    moved = []
    original = VectorGame.step

    def count(games, moves, where=None):
        turn = games.current_player == seat
        moved.append(turn if where is None else turn & where)
        return original(games, moves, where=where)

    monkeypatch.setattr(VectorGame, "step", count)
    rewards = agent._rollouts(deals, [int(a) for a in SeatView(game).legal_actions()[:2]], seat)
    assert np.all(rewards == 1.0)  # tanh(1000 / 5): every rollout ended at a leaf, none at the end of the game
    leaves = np.concatenate([s for s in stopped if len(s)])
    assert len(leaves) == rewards.size and np.all(leaves == seat)
    assert np.sum(moved, axis=0).tolist() == [depth] * rewards.size  # the seat's own moves before each leaf


def test_value_rollouts_that_end_score_the_vp_margin():
    """Near the end of a game, with more depth than turns left, every rollout ends and scores its VP margin."""
    length = len(play(2, 2, 10**4).state.history)
    game = play(2, 2, length - 6)  # the same random play, six moves before its end
    seat = game.current_player
    agent = SearchAgent(seed=0, value=constant_value(1000.0), depth=10**6, **FAST)
    deals = [SeatView(game).sample_determinization(np.random.default_rng(0))]
    rewards = agent._rollouts(deals, [int(SeatView(game).legal_actions()[0])], seat)
    assert np.all(np.abs(rewards) < 1.0)  # no leaf: the VP margin of a real end, never 200 VP


def test_seat_rewards_equal_the_ismcts_terminal_rewards():
    games = finished_games()
    batch = VectorGame.from_games(games)
    for seat in range(2):
        got = seat_rewards(batch, seat)
        assert np.allclose(got, [terminal_rewards(g)[seat] for g in games])


def test_registry_builds_it_from_a_spec():
    agent = make_agent("search:policy=ppo,seconds=0.5,candidates=2", seed=4)
    assert isinstance(agent, SearchAgent)
    assert agent.seconds_per_move == 0.5 and agent.candidates == 2 and agent.rollouts is None
    assert agent.update == "sparta" and agent.eta is None
    agent = make_agent("search:rollouts=64,update=mmd,eta=12.5,alpha=0,magnet=policy,act=sample", seed=4)
    assert (agent.update, agent.eta, agent.alpha, agent.magnet, agent.act_by) == ("mmd", 12.5, 0.0, "policy", "sample")
    agent = make_agent("search:update=mmd", seed=4)
    assert (agent.eta, agent.alpha, agent.magnet, agent.act_by) == (DEFAULT_ETA, DEFAULT_ALPHA, "uniform", "argmax")


@pytest.mark.parametrize("spec, words", [
    ("search:update=mirror", "update must be one of sparta, mmd, got 'mirror'"),
    ("search:update=mmd,eta=-1", "eta must be a non-negative finite number, got -1"),
    ("search:update=mmd,eta=fast", "eta must be a non-negative finite number, got 'fast'"),
    ("search:update=mmd,alpha=inf", "alpha must be a non-negative finite number, got inf"),
    ("search:update=mmd,magnet=heuristic", "magnet must be one of uniform, policy"),
    ("search:update=mmd,act=max", "act must be one of argmax, sample"),
    ("search:eta=10", "eta set the mirror-descent update: give update=mmd"),
    ("search:magnet=policy,act=sample", "magnet, act set the mirror-descent update"),
    ("search:update=mmd,beta=1", "unknown option 'beta' for agent 'search'.*update, eta, alpha, magnet, act"),
])
def test_bad_mirror_descent_specs_raise_clear_errors(spec, words):
    with pytest.raises(ValueError, match=words):
        make_agent(spec)


@pytest.mark.parametrize("options, words", [
    (dict(rollouts=10, seconds_per_move=1.0), "one budget"),
    (dict(seconds_per_move=0), "positive number"),
    (dict(rollouts=0), "rollouts must be an integer of at least 1"),
    (dict(determinizations=2.5), "determinizations must be an integer"),
    (dict(candidates=-1), "candidates must be an integer of at least 0"),
    (dict(belief="exact"), "belief must be one of uniform, posterior"),
    (dict(threshold=-0.1), "threshold must be a non-negative number"),
    (dict(opponents="ismcts"), "opponents must be one of policy, heuristic or the path of a policy export"),
    (dict(opponents="nowhere.npz"), "opponents: no model file"),
    (dict(opponents=str(SHIPPED_MODEL.parent / "ppo_packetrow_value.npz")), "opponents: .* is a value network"),
    (dict(depth=-1), "depth must be an integer of at least 0"),
    (dict(value="nowhere.npz"), "no model file"),
    (dict(value=str(SHIPPED_MODEL)), "is not a value network"),
    (dict(policy=3), "policy must be"),
    (dict(policy="nowhere.npz"), "no model file"),
    (dict(policy="model.zip"), "SB3 checkpoints"),
])
def test_bad_options_raise_clear_errors(options, words):
    with pytest.raises(ValueError, match=words):
        SearchAgent(**options)


def test_act_needs_a_view_of_the_game():
    game = Game.new(2, seed=0)
    view = SeatView.of_observation(SeatView(game).observation, game.legal_action_mask())
    with pytest.raises(ValueError, match="determinisations of the table"):
        SearchAgent().act(view)
