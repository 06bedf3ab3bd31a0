"""Beliefs: what one seat can infer about the cards it cannot see, exactly (docs/beliefs.md).

What a seat cannot locate (``knowledge``) is the order of every deck, in two-player games which cards were
removed unseen, and the starting contracts: each opponent's while he holds it, and those left out of the game.

* ``location_marginals(view)``: per card and location, its probability under the uniform distribution over
  the deals consistent with what the seat knows (the distribution ``determinization.sample`` draws from);
  ``next_cards_probability(view, k)``: per card, the probability that it is among the next k of its deck.
* ``starting_contract_posterior(view, policies)``: the exact posterior over the opponents' hidden starting
  contracts given how they played. Only these change anyone's play (nobody sees the decks), so each candidate
  contract of an opponent is weighed by his policy's probability of every action he took, computed on what
  he knew at each decision: his seat view of the position rebuilt from the deal with that candidate. The
  contracts are dealt without replacement, so the joint over the opponents is computed and the per-opponent
  marginals read from it. The replays run batched in a ``VectorGame``.
* ``hidden_locations(games)``: from a ``VectorGame``, the true place of every card hidden from each seat to act
  (labels for a learned belief), and ``score(predicted, labels, exact)``: how good predicted card locations are
  (log-likelihood, Brier, calibration, KL to the exact beliefs).

A policy is a callable taking a ``SeatView`` and returning that seat's action probabilities (float array over
every action, zero on illegal ones); ``packetrow_agents.policy.action_model`` makes one of an agent. It may
also offer the batched pair ``batch_inputs(games, rows, mode)`` (what it reads of the players to act in those
rows of a ``VectorGame``) and ``batch_probabilities(inputs, masks)``: the replays then ask it once per seat.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from . import actions, knowledge
from .cards import NUM_BOARDS, NUM_CARDS, START
from .knowledge import UNKNOWN
from .state import DECK, HAND, NUM_LOCATIONS, REMOVED, STARTING_CASH, TWO_PLAYER_REMOVAL, State

POSTERIOR_MODES = ("tracked", "online", "full")  # the modes in which a seat remembers the opponents' takes
SUM_TOLERANCE = 1e-6  # how far from 1 a policy's probabilities may sum


class UnexplainedHistoryError(ValueError):
    """No assignment of the hidden starting contracts makes the opponents' play possible under their policies."""


class HistoryUnavailableError(ValueError):
    """The game cannot replay its own history (loaded from a saved file, which keeps only the cards left in each
    deck), so no posterior given the play can be computed."""


# --------------------------------------------------------------------------- prior marginals
def _pools(view):
    """(the game, the seat's known locations, per board its unknown cards and the deck and removed slots they fill,
    the hidden seats, the unknown starting contracts)."""
    game = view._require_game("beliefs")
    s, cards = game.state, game.cards
    known = knowledge.known_locations(s, cards, view.seat, view.mode)
    unknown = known == UNKNOWN
    boards = []
    for b in range(NUM_BOARDS):
        pool = np.flatnonzero(unknown & (cards.board == b))
        deck = int(s.deck_end[b] - s.deck_top[b])
        boards.append((pool, deck, len(pool) - deck))
    seats = knowledge.hidden_starting_seats(s, view.seat, view.mode)
    starts = cards.start_contracts[unknown[cards.start_contracts]]
    return game, known, boards, seats, starts


def location_marginals(view) -> np.ndarray:
    """float64[NUM_CARDS, NUM_LOCATIONS]: per card, the probability of each location given what the seat knows.

    A card the seat can locate has probability 1 there. The others are dealt uniformly within their pool
    (``determinization``): a board's unseen cards over its deck and its removed slots, the unseen starting
    contracts over the hidden opponents' hands and the removed pile.
    """
    game, known, boards, seats, starts = _pools(view)
    out = np.zeros((NUM_CARDS, NUM_LOCATIONS))
    placed = np.flatnonzero(known != UNKNOWN)
    out[placed, known[placed]] = 1.0
    for b, (pool, deck, removed) in enumerate(boards):
        if len(pool):
            out[pool, DECK + b] = deck / len(pool)
            out[pool, REMOVED] = removed / len(pool)
    if len(starts):
        for q in seats:
            out[starts, HAND + q] = 1.0 / len(starts)
        out[starts, REMOVED] = (len(starts) - len(seats)) / len(starts)
    return out


def next_cards_probability(view, k: int) -> np.ndarray:
    """float64[NUM_CARDS]: per card, the probability that it is among the next ``k`` cards of its board's deck."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a whole number of cards (0 or more), got {k!r}")
    game, known, boards, _, _ = _pools(view)
    s = game.state
    out = np.zeros(NUM_CARDS)
    for b, (pool, deck, _) in enumerate(boards):
        if view.mode == "full":  # the order is known
            out[s.deck_cards(b)[:k]] = 1.0
            continue
        # the deck's order is unknown: each card it may hold (known there, online, or unseen) is equally likely in
        # each of its slots
        cards = np.union1d(pool, np.flatnonzero(known == DECK + b))
        if len(cards):
            out[cards] = min(k, deck) / len(cards)
    return out


# --------------------------------------------------------------------------- the posterior
class StartingContractPosterior(dict):
    """Per hidden opponent, a dict from candidate card id to probability; the joint it was read from rides along.

    ``seats`` (the hidden opponents, ascending), ``assignments`` (int[K, len(seats)]: every way to deal them the
    ``candidates``, without replacement) and ``probabilities`` (float64[K]) are the exact joint;
    ``observer`` is the seat whose beliefs these are.
    """

    def __init__(self, observer: int, seats, candidates, assignments: np.ndarray, probabilities: np.ndarray):
        self.observer = observer
        self.seats = tuple(seats)
        self.candidates = tuple(int(c) for c in candidates)
        self.assignments = assignments
        self.probabilities = probabilities
        super().__init__({q: {c: float(probabilities[assignments[:, j] == c].sum()) for c in self.candidates}
                          for j, q in enumerate(self.seats)})

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One assignment drawn from the joint: int[len(seats)], the card dealt to each hidden seat."""
        cumulative = np.cumsum(self.probabilities)
        index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        return self.assignments[min(index, len(cumulative) - 1)]


def starting_contract_posterior(view, policies=None) -> StartingContractPosterior:
    """The exact posterior over each hidden opponent's starting contract given his play (module docstring).

    ``policies``: seat -> callable (SeatView -> action probabilities) for every opponent whose starting contract
    the seat cannot see; None: the prior. Raises ``UnexplainedHistoryError`` when no candidate explains the play.
    """
    if knowledge.check_mode(view.mode) not in POSTERIOR_MODES:
        raise ValueError(f"a starting-contract posterior needs a view in mode {', '.join(POSTERIOR_MODES)}, got "
                         f"{view.mode!r}: in table mode the seat forgets the opponents' takes, so their play cannot "
                         "be replayed")
    game, _, _, seats, starts = _pools(view)
    deals = list(permutations(starts.tolist(), len(seats)))  # with no hidden seat, one empty deal
    assignments = np.array(deals, dtype=np.int64).reshape(len(deals), len(seats))
    log_joint = np.zeros(len(assignments))
    if policies is not None and seats:
        if not isinstance(policies, dict):
            raise ValueError(f"policies must be a dict from seat to a policy callable, got {type(policies).__name__}")
        missing = [q for q in seats if q not in policies]
        if missing:
            raise ValueError(f"policies has no policy for seats {missing}, whose starting contracts seat {view.seat} "
                             f"cannot see; give one for each of {list(seats)}")
        for q in seats:
            if not callable(policies[q]):
                raise ValueError(f"the policy of seat {q} must be callable (SeatView -> action probabilities), got "
                                 f"{type(policies[q]).__name__}")
        likelihood = seat_log_likelihoods(view, policies)
        column = np.searchsorted(starts, assignments)
        for j in range(len(seats)):
            log_joint += likelihood[j, column[:, j]]
    top = log_joint.max(initial=-np.inf)
    if not np.isfinite(top):
        raise UnexplainedHistoryError(
            f"no assignment of the hidden starting contracts {starts.tolist()} to seats {list(seats)} explains their "
            "play: under every one, some action they took has probability 0 under their policy")
    weights = np.exp(log_joint - top)
    return StartingContractPosterior(view.seat, seats, starts, assignments, weights / weights.sum())


def seat_log_likelihoods(view, policies) -> np.ndarray:
    """float64[hidden seats, candidates]: log of the probability that each hidden opponent played his actions of the
    history, had he been dealt each candidate starting contract (-inf where an action is impossible)."""
    game, _, _, seats, starts = _pools(view)
    from .vector import VectorGame  # the batched engine compiles only where beliefs are asked for

    deals = [_deal(view, game, seats, starts, q, c) for q in seats for c in starts.tolist()]
    vg = VectorGame.from_games(deals)
    m = len(starts)
    owner = np.repeat(np.asarray(seats, dtype=np.int64), m)  # the seat whose candidates each row tries
    out = np.zeros(len(deals))
    alive = np.ones(len(deals), dtype=bool)
    pending = {q: [] for q in seats}  # batched policies: (rows, action, inputs, masks) per decision
    history = list(game.state.history)
    for t, a in enumerate(history):
        actor = vg.current_player
        masks = vg.legal_action_mask()
        deciding = np.flatnonzero(alive & (actor == owner))
        if len(deciding):
            q = int(owner[deciding[0]])
            policy = policies[q]
            if hasattr(policy, "batch_inputs"):
                pending[q].append((deciding, a, policy.batch_inputs(vg, deciding, view.mode), masks[deciding]))
            else:
                for row in deciding.tolist():
                    if not masks[row, a]:
                        out[row] = -np.inf
                        continue
                    probs = _checked(np.asarray(policy(_seat_view(vg, row, q, view.mode)))[None], masks[row:row + 1],
                                     q, f"action {t} of the history")[0]
                    out[row] += np.log(probs[a]) if probs[a] > 0 else -np.inf
        illegal = alive & ~masks[np.arange(len(deals)), a]
        if (illegal & (actor != owner)).any():
            raise ValueError(f"action {t} of the history ({a}, {actions.NAMES[a]}) is not legal in the rebuilt "
                             "position: the history does not lead to this game")
        out[illegal] = -np.inf
        alive &= ~illegal
        vg.step(np.full(len(deals), a, dtype=np.int64), where=alive)
    for q, decisions in pending.items():
        if decisions:
            _score_batched(policies[q], decisions, out, q)
    _check_replayed(vg, int(np.flatnonzero(alive)[0]) if alive.any() else 0, game, alive.any())
    return out.reshape(len(seats), m)


def _score_batched(policy, decisions, out: np.ndarray, seat: int) -> None:
    """Add to ``out`` each row's log-probability of its actions, from one batched call of the policy."""
    rows = np.concatenate([d[0] for d in decisions])
    taken = np.concatenate([np.full(len(d[0]), d[1]) for d in decisions])
    masks = np.concatenate([d[3] for d in decisions])
    inputs = np.concatenate([d[2] for d in decisions])
    probs = policy.batch_probabilities(inputs, masks)
    probs = _checked(probs, masks, seat, "its batched decisions")
    chosen = np.where(masks[np.arange(len(rows)), taken], probs[np.arange(len(rows)), taken], 0.0)
    with np.errstate(divide="ignore"):
        np.add.at(out, rows, np.log(chosen))


def _checked(probs, masks: np.ndarray, seat: int, decisions: str) -> np.ndarray:
    """A policy's outputs for ``masks`` (bool[k, A]) as float64[k, A] probabilities, or a ValueError naming what is
    wrong with the first bad one."""
    where = f"the policy of seat {seat} at {decisions}"
    p = np.asarray(probs, dtype=np.float64)
    if p.shape != masks.shape:
        raise ValueError(f"{where} returned probabilities of shape {p.shape[1:] if p.ndim > 1 else p.shape}; "
                         f"expected ({actions.NUM_ACTIONS},), one per action")
    bad = ~(p >= 0) | ~np.isfinite(p)
    if bad.any():
        raise ValueError(f"{where} returned negative or non-finite probabilities: {p[bad].tolist()[:5]}")
    total = p.sum(axis=1)
    off = np.abs(total - 1.0) > SUM_TOLERANCE
    if off.any():
        raise ValueError(f"{where} returned probabilities summing to {total[off][0]:.9g}, not 1")
    illegal = (p > 0) & ~masks
    if illegal.any():
        k = int(np.flatnonzero(illegal.any(axis=1))[0])
        raise ValueError(f"{where} gives illegal actions {np.flatnonzero(illegal[k]).tolist()} positive probability; "
                         f"legal: {np.flatnonzero(masks[k]).tolist()}")
    return p


def _seat_view(vg, row: int, seat: int, mode: str):
    from .seat_view import SeatView
    return SeatView(vg.game(row), seat, mode)


def _deal(view, game, seats, starts: np.ndarray, seat: int, candidate: int):
    """The game as dealt, rebuilt from what the seat knows, with ``candidate`` dealt to ``seat`` and the other hidden
    seats dealt the other candidates in id order (their own play is weighed in their own rows)."""
    from .engine import Game, refill  # the deal's refill is the engine's (R-SETUP-4)

    s, cards = game.state, game.cards
    n = s.num_players
    removal = TWO_PLAYER_REMOVAL if n == 2 else 0
    t = State(n, rng_state=np.random.PCG64(0).state)
    t.deck[:] = -1
    t.current[:] = -1
    t.future[:] = -1
    t.exhausted[:] = 0
    t.chosen[:] = 0
    for b in range(NUM_BOARDS):
        top, end = int(s.deck_top[b]), int(s.deck_end[b])
        if end != len(cards.board_cards[b]):
            raise HistoryUnavailableError("this game's past is not in its position: a game loaded from a saved file keeps only "
                             "the cards left in each deck, so the deals of its history cannot be rebuilt; beliefs "
                             "need a game played from its deal (Game.new, VectorGame.game)")
        order = s.deck[b, :end].copy()
        # What the seat cannot know is written in an order it knows (sorted), so the rebuilt deal depends only on it.
        if removal and view.mode not in knowledge.DECK_CONTENTS_MODES:  # which were removed is unknown too
            hidden = np.r_[0:removal, top:end]
            order[hidden] = np.sort(order[hidden])
        elif view.mode != "full":
            order[:removal] = np.sort(order[:removal])
            order[top:end] = np.sort(order[top:end])
        t.deck[b, :end] = order
        t.deck_end[b] = end
        t.location[order] = DECK + b
        t.location[order[:removal]] = REMOVED
        t.deck_top[b] = removal
    for b in range(NUM_BOARDS):
        refill(t, b)
    dealt = s.starting_contract[:n].copy()
    others = [c for c in starts.tolist() if c != candidate]
    for q in seats:
        dealt[q] = candidate if q == seat else others.pop(0)
    t.location[cards.board == START] = REMOVED
    t.location[dealt] = HAND + np.arange(n)
    t.starting_contract[:n] = dealt
    t.cash[:n] = STARTING_CASH
    t.has_piece[:n] = 1
    t.harbour_master = t.current_player = (s.harbour_master - (s.round - 1)) % n  # one seat on per round
    return Game(t, cards)


def _check_replayed(vg, row: int, game, any_alive: bool) -> None:
    """A ValueError unless replaying the history from the rebuilt deal reaches the game's public position."""
    if not any_alive:
        return
    replayed = vg.game(row).state
    s = game.state
    n = s.num_players
    for name in ("current", "future", "cash", "deck_top", "exhausted", "chosen"):
        mine, theirs = getattr(replayed, name), getattr(s, name)
        if name == "cash":  # the seats past the player count hold no cash (Game.new: -1, VectorGame.game: 0)
            mine, theirs = mine[:n], theirs[:n]
        if not np.array_equal(mine, theirs):
            raise ValueError(f"replaying the game's history from its deal does not reach its position ({name} "
                             "differs): the history does not lead to this game")
    if (replayed.round, replayed.phase, replayed.current_player) != (s.round, s.phase, s.current_player):
        raise ValueError("replaying the game's history from its deal does not reach its position (round, phase or "
                         "player to act differs): the history does not lead to this game")


# --------------------------------------------------------------------------- learned beliefs
NOT_HIDDEN = -1  # the label of a card the seat to act can locate (not a target)


def hidden_locations(games, mode: str = "tracked", rows=None) -> np.ndarray:
    """int8[len(rows), NUM_CARDS]: in each game of a ``VectorGame`` (default every one), the true location of every
    card hidden from the player to act in ``mode``, ``NOT_HIDDEN`` where he can locate it: the labels of a learned
    belief (an auxiliary loss), as ``knowledge.known_locations`` decides what is hidden."""
    knowledge.check_mode(mode)
    b = games.batch
    rows = np.arange(games.num_games) if rows is None else np.asarray(rows, dtype=np.int64)
    location = b.location[rows].astype(np.int64)
    players = b.num_players[rows].astype(np.int64)
    seats = b.current_player[rows].astype(np.int64)
    views = {key: knowledge.location_view(*key, mode) for key in set(zip(players.tolist(), seats.tolist()))}
    table = np.stack([views[key] for key in zip(players.tolist(), seats.tolist())]) if len(rows) else \
        np.zeros((0, NUM_LOCATIONS + 1), np.int64)
    hidden = np.take_along_axis(table, location, axis=1) == UNKNOWN
    if knowledge.hides_held_starting_contracts(mode):
        starts = b.starting_contract[rows].astype(np.int64)  # -1 beyond the player count
        seat_ids = np.arange(starts.shape[1])
        held = (starts >= 0) & (np.take_along_axis(location, np.maximum(starts, 0), axis=1) == HAND + seat_ids)
        staged = (b.pending[rows][:, None, :] == starts[:, :, None]) & \
            (np.arange(b.pending.shape[1]) < b.n_pending[rows][:, None])[:, None, :]
        secret = held & ~staged.any(axis=2) & (seat_ids != seats[:, None])
        r, q = np.nonzero(secret)
        hidden[r, starts[r, q]] = True
        if mode in knowledge.DECK_CONTENTS_MODES:  # the starting contracts left out: no deck's contents tell them
            start_ids = np.flatnonzero(games.cards.board == START)
            hidden[:, start_ids] |= location[:, start_ids] == REMOVED
    return np.where(hidden, location, NOT_HIDDEN).astype(np.int8)


def score(predicted, labels, exact=None, bins: int = 10) -> dict:
    """How good predicted card locations are, per scored card (a label other than ``NOT_HIDDEN``).

    ``predicted``: float[..., NUM_CARDS, L], each card's probability of each location; ``labels``: int[..., NUM_CARDS],
    the true locations (``hidden_locations``); ``exact``: optional, shaped as ``predicted``, the exact beliefs
    (``location_marginals``). Returns ``nll`` (mean negative log-likelihood of the true location), ``brier`` (mean
    squared error summed over locations), ``ece`` (expected calibration error of the most likely location, in
    ``bins`` equal-width confidence bins), ``kl`` (mean KL divergence from the exact beliefs; None without them) and
    ``cards`` (how many were scored).
    """
    p = np.asarray(predicted, dtype=np.float64)
    y = np.asarray(labels)
    if p.ndim < 2 or p.shape[:-1] != y.shape:
        raise ValueError(f"predicted must have the labels' shape {y.shape} plus one axis of locations, got {p.shape}")
    if (p < 0).any() or not np.allclose(p.sum(axis=-1), 1.0, atol=SUM_TOLERANCE):
        raise ValueError("predicted must hold, per card, non-negative probabilities summing to 1")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be a whole number of at least 1, got {bins!r}")
    scored = y != NOT_HIDDEN
    if ((y[scored] < 0) | (y[scored] >= p.shape[-1])).any():
        raise ValueError(f"labels must be location codes 0-{p.shape[-1] - 1} or NOT_HIDDEN ({NOT_HIDDEN})")
    p, y = p[scored], y[scored].astype(np.int64)
    count = len(y)
    if count == 0:
        return {"nll": None, "brier": None, "ece": None, "kl": None, "cards": 0}
    truth = np.zeros_like(p)
    truth[np.arange(count), y] = 1.0
    chosen = p[np.arange(count), y]
    with np.errstate(divide="ignore"):
        nll = float(-np.log(chosen).mean())
    confidence = p.max(axis=1)
    correct = p.argmax(axis=1) == y
    which = np.minimum((confidence * bins).astype(np.int64), bins - 1)
    ece = sum(abs(confidence[which == k].mean() - correct[which == k].mean()) * (which == k).sum()
              for k in range(bins) if (which == k).any()) / count
    kl = None
    if exact is not None:
        q = np.asarray(exact, dtype=np.float64)
        if q.shape != np.shape(predicted):
            raise ValueError(f"exact must have the shape of predicted {np.shape(predicted)}, got {q.shape}")
        q = q[scored]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(q > 0, q * (np.log(q) - np.log(p)), 0.0)
        kl = float(terms.sum(axis=1).mean())
    return {"nll": nll, "brier": float(((p - truth) ** 2).sum(axis=1).mean()), "ece": float(ece), "kl": kl,
            "cards": count}


__all__ = ["NOT_HIDDEN", "POSTERIOR_MODES", "StartingContractPosterior", "UnexplainedHistoryError", "hidden_locations",
           "location_marginals", "next_cards_probability", "score", "seat_log_likelihoods",
           "starting_contract_posterior"]
