"""Beliefs (packetrow_env.belief): exact prior marginals and the policy-aware starting-contract posterior.

Checked against exhaustive enumeration, the frequencies of determinisations (chi-square), and a brute-force
replay written apart from the batched one (every joint assignment replayed with ``Game`` from the true deal);
hidden twins give identical beliefs (R-INFO-2).
"""

from __future__ import annotations

from itertools import combinations, permutations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from packetrow_env import actions, belief, knowledge
from packetrow_env.cards import GOODS, GOODS_KIND, NUM_BOARDS, START, load
from packetrow_env.engine import Game
from packetrow_env.seat_view import SeatView
from packetrow_env.state import DECK, HAND, REMOVED, TWO_PLAYER_REMOVAL
from packetrow_agents import HeuristicAgent, RandomAgent, make_agent
from packetrow_agents.policy import action_model

CARDS = load()
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=8,
                    suppress_health_check=[HealthCheck.too_slow])
P_FLOOR = 1e-3  # chi-square tests fail below this p-value (seeded: each test draws the same samples every run)


# --------------------------------------------------------------------------- games and policies
def play(n: int, seed: int, steps: int, agents=None, stop=None) -> Game:
    """``Game.new(n, seed)`` after up to ``steps`` actions by ``agents`` (per seat; default random)."""
    game = Game.new(n, seed=seed)
    agents = agents or [RandomAgent(seed + q) for q in range(n)]
    for _ in range(steps):
        if game.is_over or (stop is not None and stop(game)):
            break
        p = game.current_player
        game.step(agents[p].act(SeatView(game, p)))
    return game


def uniform(view) -> np.ndarray:
    """A policy: uniform over the legal actions (RandomAgent's)."""
    return view.action_mask / view.action_mask.sum()


def blind(view) -> np.ndarray:
    """A policy that ignores the hidden contract: uniform over the legal board choices, takes and passes when there
    are any (which no contract in hand changes), else over every legal action."""
    mask = view.action_mask.copy()
    if mask[:actions.ADD_CONTRACT].any():
        mask[actions.ADD_CONTRACT:] = False
    return mask / mask.sum()


class BlindAgent:
    """Plays ``blind``."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def act(self, view) -> int:
        p = blind(view)
        return int(self.rng.choice(len(p), p=p))


def own_good_lover(view, weight: float = 4.0) -> np.ndarray:
    """A policy preferring the good of its own starting contract: a take of goods of that good weighs ``weight``,
    every other legal action 1."""
    s = view.state
    start = next(c for c in view.hand() if CARDS.board[c] == START)
    weights = view.action_mask.astype(float)
    if view.phase in ("take", "must_take"):
        for slot, card in enumerate(s.current[s.current_board].tolist()):
            if card >= 0 and weights[actions.TAKE + slot] and CARDS.kind[card] == GOODS_KIND \
                    and CARDS.good[card] == CARDS.good[start]:
                weights[actions.TAKE + slot] = weight
    return weights / weights.sum()


class CottonTaker:
    """Takes a cotton goods card whenever one is offered, else passes (else the first legal action)."""

    def act(self, view) -> int:
        s = view.state
        if view.phase in ("take", "must_take"):
            for slot, card in enumerate(s.current[s.current_board].tolist()):
                if card >= 0 and view.action_mask[actions.TAKE + slot] and CARDS.kind[card] == GOODS_KIND \
                        and GOODS[CARDS.good[card]] == "cotton":
                    return actions.TAKE + slot
        return actions.PASS if view.action_mask[actions.PASS] else view.legal_actions()[0]


def brute_force_posterior(game: Game, seed: int, observer: int, policies, mode: str = "tracked") -> dict:
    """The posterior by replaying the history with ``Game`` from the true deal (``Game.new(n, seed)``) once per joint
    assignment of the hidden starting contracts, every hidden seat's decisions weighed together (no factorisation)."""
    s = game.state
    seats = knowledge.hidden_starting_seats(s, observer, mode)
    known = knowledge.known_locations(s, CARDS, observer, mode)
    pool = [c for c in CARDS.start_contracts.tolist() if known[c] == knowledge.UNKNOWN]
    joint = {}
    for assignment in permutations(pool, len(seats)):
        g = Game.new(s.num_players, seed=seed)
        t = g.state
        t.location[pool] = REMOVED
        for q, c in zip(seats, assignment):
            t.starting_contract[q] = c
            t.location[c] = HAND + q
        g = Game(t, CARDS)
        logp = 0.0
        for a in s.history:
            p = g.current_player
            if p in seats:
                if not g.legal_action_mask()[a]:
                    logp = -np.inf
                    break
                logp += np.log(policies[p](SeatView(g, p, mode))[a])
            g.step(a)
        joint[assignment] = logp
    top = max(joint.values())
    weights = {k: np.exp(v - top) for k, v in joint.items()}
    total = sum(weights.values())
    return {q: {c: sum(w for k, w in weights.items() if k[j] == c) / total for c in pool} for j, q in enumerate(seats)}


def assert_posteriors_equal(got: dict, want: dict, tol: float = 1e-9):
    assert got.keys() == want.keys()
    for q in want:
        assert got[q].keys() == want[q].keys()
        for c in want[q]:
            assert got[q][c] == pytest.approx(want[q][c], abs=tol), (q, c)


def hidden_twin(game: Game, observer: int, rng: np.random.Generator, mode: str = "tracked") -> Game:
    """A game that differs from ``game`` only in what ``observer`` cannot know: every deck's remaining order, in two-
    player tracked games which cards of a board were removed, and the hidden starting contracts (swapped with
    unseen ones)."""
    t = game.state.copy()
    for b in range(NUM_BOARDS):
        top, end = int(t.deck_top[b]), int(t.deck_end[b])
        rng.shuffle(t.deck[b, top:end])
        if t.num_players == 2 and mode == "tracked" and end > top:  # a removed card and a deck card change places
            i, j = int(rng.integers(TWO_PLAYER_REMOVAL)), int(rng.integers(top, end))
            t.deck[b, i], t.deck[b, j] = t.deck[b, j], t.deck[b, i]
            t.location[t.deck[b, i]], t.location[t.deck[b, j]] = REMOVED, DECK + b
    known = knowledge.known_locations(game.state, CARDS, observer, mode)
    spare = [c for c in CARDS.start_contracts.tolist() if known[c] == knowledge.UNKNOWN and t.location[c] == REMOVED]
    for q in knowledge.hidden_starting_seats(game.state, observer, mode):
        if spare:
            new, old = spare.pop(int(rng.integers(len(spare)))), int(t.starting_contract[q])
            t.location[new], t.location[old] = HAND + q, REMOVED
            t.starting_contract[q] = new
            spare.append(old)
    return Game(t, CARDS)


# --------------------------------------------------------------------------- prior marginals
def enumerated_marginals(game: Game, observer: int, mode: str, k: int):
    """(location marginals, next-k probabilities) by listing every deal of the unseen cards into the unseen places
    that keeps each card on its board (R-COMP-2): which cards fill each deck (its order: every k-prefix), and which
    starting contracts the hidden seats hold; each deal equally likely."""
    s = game.state
    known = knowledge.known_locations(s, CARDS, observer, mode)
    unknown = known == knowledge.UNKNOWN
    marginals = np.zeros((CARDS.board.size, REMOVED + 11))
    placed = np.flatnonzero(~unknown)
    marginals[placed, known[placed]] = 1
    top_k = np.zeros(CARDS.board.size)
    for b in range(NUM_BOARDS):
        pool = np.flatnonzero(unknown & (CARDS.board == b)).tolist()
        size = int(s.deck_end[b] - s.deck_top[b])
        if pool:
            decks = list(combinations(pool, size))
            for deck in decks:
                marginals[list(deck), DECK + b] += 1 / len(decks)
                marginals[[c for c in pool if c not in deck], REMOVED] += 1 / len(decks)
        else:  # online: the deck's cards are known, its order is not
            pool = np.flatnonzero(known == DECK + b).tolist()
        prefixes = list(permutations(pool, min(k, size)))
        for prefix in prefixes:
            top_k[list(prefix)] += 1 / len(prefixes)
    seats = knowledge.hidden_starting_seats(s, observer, mode)
    pool = np.flatnonzero(unknown & (CARDS.board == START)).tolist()
    deals = list(permutations(pool, len(seats)))
    for deal in deals:
        for q, c in zip(seats, deal):
            marginals[c, HAND + q] += 1 / len(deals)
        marginals[[c for c in pool if c not in deal], REMOVED] += 1 / len(deals)
    return marginals, top_k


@pytest.mark.parametrize("mode", ["tracked", "online"])
@pytest.mark.parametrize("seed", [0, 1])
def test_location_marginals_are_exact_by_enumeration(seed, mode):
    """Late in two-player games (small decks, removed cards): every marginal equals the count over all deals."""
    game = play(2, seed, 10_000, stop=lambda g: sum(g.state.deck_end - g.state.deck_top) <= 6)
    for observer in (0, 1):
        view = SeatView(game, observer, mode)
        want, top_k = enumerated_marginals(game, observer, mode, 2)
        got = belief.location_marginals(view)
        np.testing.assert_allclose(got, want[:, :got.shape[1]], atol=1e-12)
        np.testing.assert_allclose(belief.next_cards_probability(view, 2), top_k, atol=1e-12)


def test_location_marginals_match_determinisation_frequencies():
    """Chi-square: where 2,000 determinisations put the unseen cards matches the marginals (two players, tracked)."""
    game = play(2, 5, 40)
    view = SeatView(game, 0)
    marginals = belief.location_marginals(view)
    top_3 = belief.next_cards_probability(view, 3)
    rng = np.random.default_rng(0)
    counts = np.zeros_like(marginals)
    top_counts = np.zeros_like(top_3)
    samples = 2000
    for _ in range(samples):
        s = view.sample_determinization(rng).state
        counts[np.arange(len(s.location)), s.location] += 1
        for b in range(NUM_BOARDS):
            top_counts[s.deck[b, s.deck_top[b]:s.deck_top[b] + 3]] += 1
    unseen = view.unseen()
    for pool in ([c for c in unseen if CARDS.board[c] == b] for b in range(NUM_BOARDS + 1)):
        cells = marginals[pool] > 0
        assert chisquare(counts[pool][cells], samples * marginals[pool][cells], ddof=len(pool)).pvalue > P_FLOOR
        if CARDS.board[pool[0]] < NUM_BOARDS:
            assert chisquare(top_counts[pool], samples * top_3[pool]).pvalue > P_FLOOR
    assert (counts[marginals == 0] == 0).all()


def test_full_view_knows_every_place_and_no_posterior():
    game = play(3, 2, 60)
    view = SeatView(game, 1, "full")
    marginals = belief.location_marginals(view)
    assert (marginals[np.arange(len(game.state.location)), game.state.location] == 1).all()
    assert belief.starting_contract_posterior(view, {0: uniform, 2: uniform}) == {}


def test_next_cards_probability_refuses_a_bad_k():
    with pytest.raises(ValueError, match="k must be a whole number"):
        belief.next_cards_probability(SeatView(Game.new(3, seed=0), 0), -1)


# --------------------------------------------------------------------------- the posterior
def test_posterior_equals_brute_force_replay_heuristic_and_random():
    """Three players, seat 1 the heuristic (epsilon model), seat 2 random: the batched posterior is the brute force's."""
    agents = [RandomAgent(0), HeuristicAgent(1), RandomAgent(2)]
    game = play(3, 11, 45, agents)
    policies = {1: action_model(agents[1]), 2: action_model(agents[2])}
    got = belief.starting_contract_posterior(SeatView(game, 0), policies)
    assert_posteriors_equal(got, brute_force_posterior(game, 11, 0, policies))
    assert got[1] != belief.starting_contract_posterior(SeatView(game, 0))[1]  # the play moved the belief


def test_the_shipped_policy_batched_equals_one_view_at_a_time():
    """The ppo's batched probabilities (one forward for all decisions) give the posterior its per-view path gives."""
    agents = [make_agent("ppo"), make_agent("ppo", seed=1), RandomAgent(2), HeuristicAgent(3)]
    game = play(4, 3, 70, agents)
    model = action_model(agents[1])
    assert hasattr(model, "batch_inputs")
    batched = {1: model, 2: action_model(agents[2]), 3: action_model(agents[3])}
    one_by_one = {q: (lambda view, m=m: m(view)) for q, m in batched.items()}
    view = SeatView(game, 0)
    assert_posteriors_equal(belief.starting_contract_posterior(view, batched),
                            belief.starting_contract_posterior(view, one_by_one), tol=1e-5)


def test_hand_built_example_an_opponent_who_only_took_cotton():
    """Seat 1 took only cotton; under a model preferring the good of one's own contract the cotton contracts gain,
    exactly as the brute force says, and the candidates of one good stay equally likely."""
    agents = [RandomAgent(0), CottonTaker(), RandomAgent(2)]
    game = play(3, 7, 90, agents)
    takes = [CARDS.good[c] for c in game.hand(1) if CARDS.kind[c] == GOODS_KIND]
    assert takes and {GOODS[g] for g in takes} == {"cotton"}
    policies = {1: own_good_lover, 2: uniform}
    got = belief.starting_contract_posterior(SeatView(game, 0), policies)
    prior = belief.starting_contract_posterior(SeatView(game, 0))
    assert_posteriors_equal(got, brute_force_posterior(game, 7, 0, policies))
    cotton = [c for c in got[1] if GOODS[CARDS.good[c]] == "cotton"]
    assert sum(got[1][c] for c in cotton) > 2 * sum(prior[1][c] for c in cotton)
    by_good = {}
    for c, p in got[1].items():
        by_good.setdefault(CARDS.good[c], []).append(p)
    for values in by_good.values():
        assert max(values) - min(values) < 1e-9


def only_own_good(view) -> np.ndarray:
    """A policy that never takes goods of another good than its own starting contract's (uniform otherwise)."""
    s = view.state
    start = next(c for c in view.hand() if CARDS.board[c] == START)
    weights = view.action_mask.astype(float)
    if view.phase in ("take", "must_take"):
        for slot, card in enumerate(s.current[s.current_board].tolist()):
            if card >= 0 and CARDS.kind[card] == GOODS_KIND and CARDS.good[card] != CARDS.good[start]:
                weights[actions.TAKE + slot] = 0.0
    return weights / weights.sum()


def test_a_candidate_under_which_an_action_was_impossible_gets_zero():
    """Seat 1 took cotton; under a model that never takes another good than its contract's, every candidate of
    another good is impossible (exactly 0) and the cotton ones share the mass equally."""
    game = play(3, 7, 90, [RandomAgent(0), CottonTaker(), RandomAgent(2)])
    posterior = belief.starting_contract_posterior(SeatView(game, 0), {1: only_own_good, 2: uniform})
    cotton = {c for c in posterior[1] if GOODS[CARDS.good[c]] == "cotton"}
    assert cotton and all(p == 0.0 for c, p in posterior[1].items() if c not in cotton)
    for c in cotton:
        assert posterior[1][c] == pytest.approx(1 / len(cotton))


def test_a_contract_blind_policy_leaves_the_prior():
    agents = [BlindAgent(q) for q in range(4)]
    game = play(4, 8, 120, agents)
    view = SeatView(game, 2)
    posterior = belief.starting_contract_posterior(view, {q: blind for q in range(4)})
    assert_posteriors_equal(posterior, belief.starting_contract_posterior(view), tol=1e-12)
    np.testing.assert_allclose(posterior.probabilities, 1 / len(posterior.probabilities))


def test_prior_marginals_are_the_location_marginals():
    game = play(5, 4, 50)
    view = SeatView(game, 3)
    prior = belief.starting_contract_posterior(view)
    marginals = belief.location_marginals(view)
    for q, dist in prior.items():
        for c, p in dist.items():
            assert p == pytest.approx(marginals[c, HAND + q], abs=1e-12)


@SETTINGS
@given(st.integers(2, 5), st.integers(0, 2**31 - 1), st.integers(0, 120), st.sampled_from(["tracked", "online"]))
def test_R_INFO_2_beliefs_are_identical_on_hidden_twins(n, seed, steps, mode):
    """Two games that differ only in what the seat cannot know give it the same marginals and posterior, which
    sums to 1 per seat and over the joint."""
    game = play(n, seed % 1000, steps)
    policies = {q: uniform for q in range(n)}
    rng = np.random.default_rng(seed)
    for observer in range(n):
        twin = hidden_twin(game, observer, rng, mode)
        a, b = SeatView(game, observer, mode), SeatView(twin, observer, mode)
        assert np.array_equal(belief.location_marginals(a), belief.location_marginals(b))
        assert np.array_equal(belief.next_cards_probability(a, 4), belief.next_cards_probability(b, 4))
        pa, pb = belief.starting_contract_posterior(a, policies), belief.starting_contract_posterior(b, policies)
        assert pa == pb and np.array_equal(pa.probabilities, pb.probabilities)
        assert pa.probabilities.sum() == pytest.approx(1.0)
        for dist in pa.values():
            assert sum(dist.values()) == pytest.approx(1.0)


def test_sampling_from_the_posterior_matches_its_joint():
    """Chi-square: the starting contracts 3,000 determinisations deal the hidden seats follow the posterior."""
    agents = [RandomAgent(0), HeuristicAgent(1), RandomAgent(2)]
    game = play(3, 21, 60, agents)
    view = SeatView(game, 0)
    posterior = belief.starting_contract_posterior(view, {1: action_model(agents[1]), 2: uniform})
    rng = np.random.default_rng(1)
    samples = 3000
    counts = {q: dict.fromkeys(posterior[q], 0) for q in posterior.seats}
    for _ in range(samples):
        s = view.sample_determinization(rng, posterior=posterior).state
        dealt = [int(s.starting_contract[q]) for q in posterior.seats]
        assert len(set(dealt)) == len(dealt)
        assert (s.location[CARDS.start_contracts] >= 0).all()
        for q, c in zip(posterior.seats, dealt):
            assert s.location[c] == HAND + q
            counts[q][c] += 1
    for q in posterior.seats:
        cells = [c for c in posterior[q] if posterior[q][c] > 1e-3]
        observed = [counts[q][c] for c in cells]
        expected = np.array([posterior[q][c] for c in cells]) * sum(observed) / sum(posterior[q][c] for c in cells)
        assert chisquare(observed, expected).pvalue > P_FLOOR


def test_sampling_refuses_a_posterior_of_another_view():
    game = play(3, 21, 30)
    posterior = belief.starting_contract_posterior(SeatView(game, 0))
    with pytest.raises(ValueError, match="compute it for this view"):
        SeatView(game, 1).sample_determinization(np.random.default_rng(0), posterior=posterior)
    with pytest.raises(ValueError, match="starting_contract_posterior returns"):
        SeatView(game, 0).sample_determinization(np.random.default_rng(0), posterior=dict(posterior))


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad, message", [
    (lambda view: np.ones(5) / 5, "shape"),
    (lambda view: uniform(view) * np.where(np.arange(actions.NUM_ACTIONS) == view.legal_actions()[0], -1, 1),
     "negative"),
    (lambda view: view.action_mask * 0.5, "summing to"),
    (lambda view: np.full(actions.NUM_ACTIONS, 1 / actions.NUM_ACTIONS), "illegal actions"),
])
def test_a_bad_policy_output_is_a_clear_error(bad, message):
    game = play(3, 1, 40)
    with pytest.raises(ValueError, match=message):
        belief.starting_contract_posterior(SeatView(game, 0), {1: bad, 2: uniform})


def test_a_history_no_candidate_explains_is_reported():
    """A policy that always takes the first legal action cannot explain random play: no division by zero."""
    game = play(3, 1, 40)

    def first(view):
        p = np.zeros(actions.NUM_ACTIONS)
        p[view.legal_actions()[0]] = 1
        return p

    with pytest.raises(belief.UnexplainedHistoryError, match="explains their play"):
        belief.starting_contract_posterior(SeatView(game, 0), {1: first, 2: first})


def test_bad_arguments_are_refused():
    game = play(3, 1, 40)
    view = SeatView(game, 0)
    with pytest.raises(ValueError, match="no policy for seats"):
        belief.starting_contract_posterior(view, {1: uniform})
    with pytest.raises(ValueError, match="must be callable"):
        belief.starting_contract_posterior(view, {1: uniform, 2: "random"})
    with pytest.raises(ValueError, match="table mode"):
        belief.starting_contract_posterior(SeatView(game, 0, "table"), None)
    with pytest.raises(ValueError, match="saved file"):
        belief.starting_contract_posterior(SeatView(Game.from_dict(game.to_dict()), 0), {1: uniform, 2: uniform})
    with pytest.raises(ValueError, match="has no action probabilities"):
        action_model(object())


# --------------------------------------------------------------------------- the agents' probabilities
def test_agents_action_probabilities_are_distributions_over_legal_actions():
    game = play(4, 6, 50)
    view = SeatView(game, game.current_player)
    mask = view.action_mask
    for agent in (make_agent("ppo"), RandomAgent(0), HeuristicAgent(0)):
        p = action_model(agent)(view)
        assert p.shape == (actions.NUM_ACTIONS,) and p.sum() == pytest.approx(1.0) and (p[~mask] == 0).all()
    heuristic = HeuristicAgent(0)
    p = heuristic.action_probabilities(view)
    assert p[heuristic.act(view)] >= 1 - heuristic.epsilon
    assert p[mask].min() >= heuristic.epsilon / mask.sum() - 1e-12


def test_the_posterior_of_a_game_taken_out_of_a_batch():
    """VectorGame.game(i) is a game played from its deal: its posterior is the one of the same game played alone."""
    from packetrow_env.vector import VectorGame
    from packetrow_env.vector.learner import random_legal

    vg = VectorGame(num_players=3, seeds=[5])
    rng = np.random.default_rng(0)
    for _ in range(40):
        vg.step(random_legal(vg.legal_action_mask(), rng))
    game = vg.game(0)
    alone = Game.new(3, seed=5)
    for action in game.state.history:
        alone.step(int(action))
    policies = {q: uniform for q in range(3)}
    for seat in range(3):
        got = belief.starting_contract_posterior(SeatView(game, seat), policies)
        assert got == belief.starting_contract_posterior(SeatView(alone, seat), policies)
