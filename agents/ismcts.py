"""Information-set Monte Carlo tree search (single-observer ISMCTS, Cowling, Powley & Whitehouse 2012).

Every iteration deals one determinisation of the position (``Game.sample_determinization``: the hidden
cards re-dealt consistently with what the acting seat knows), walks down one tree shared by all
determinisations, expands one node, plays a short rollout and backs the result up.

Tree. A node is a point in the public action history from the current decision; its edges are actions
(every action is public, so the history is the same for all players). An edge stores its visit count,
its total reward for the player who acts at the node, and its *availability*: how often the action was
legal when the node was visited (the legal set differs between determinisations, e.g. an opponent may
only ship the hidden starting contract he happens to hold in this one). Selection is UCB1 with the
availability count in place of the parent's visits (the paper's ISUCT). Shipping (stage contract k,
then ship) is an ordinary action that does not end the decision. Where an action ends a round, the
refill deals fresh cards; these become public, so the child is keyed by the action *and* the dealt
supplies (a chance outcome), never merging positions that a player could tell apart.

Rewards. Each player gets a reward in [-1, 1] and every edge backs up the reward of its own actor.
At the end of a game it is the rank reward of ``packetrow_env.scoring.rank_rewards(scores)``, which
equals the mean over opponents of +1 / 0 / -1 (beat, tie, lost to), blended with a small margin term
so the search still prefers a bigger lead when every line wins. At a rollout cutoff the same pairwise
mean is used with ``tanh(vp difference / eval_scale)`` on the static evaluation below, so a cut-off
result and a finished game are on one scale.

Static evaluation (estimated final VP of a seat, fractional):
    printed VP of his buildings
  + (cash + money cards in hand + reward of the contracts he could fulfil now (R-SCORE-1 set)) / 10
  + ``partial_weight`` x clock x reward x progress of his other contracts / 10, progress = share of the
    units held (goods, gold) x 1 with a ship for the destination (or a captain and any ship), else x 0.5;
    clock = time left, from the deck that ends the game first (1 early, falling to 0.1)
  + banker VP (``scoring.banker_points``, R-SCORE-3) on those cash estimates.
Cash counts linearly (the floor of R-SCORE-2 only matters at the very end).

Rollouts. From the new node the rollout policy ("random": uniform legal; "heuristic": HeuristicAgent)
plays until ``rollout_rounds`` rounds have ended (0: evaluate at once; None: to the end of the game), so
the evaluation sees every seat after the same number of takes. Defaults (rollout_rounds=2,
exploration=1.0, partial_weight=0.25, eval_scale=3) come from 2-player matches; at a short time a move
random rollouts beat heuristic ones, which cost more (docs/benchmarks.md).

No cheating: the search sees hidden cards only through determinisations, and a determinisation depends
only on what the acting seat knows (the sampler deals each unknown pool from its sorted cards), so two
games that differ only in hidden cards get the same action for a seed.
"""

from __future__ import annotations

import math
import random
import time

import numpy as np

from packetrow_env.cards import BANKER, BUILDING, CAPTAIN, CONTRACT, GOLD, GOODS_KIND, MONEY
from packetrow_env.engine import Game
from packetrow_env.scoring import banker_points, rank_rewards, time_left
from packetrow_env.seat_view import SeatView
from packetrow_env.shipping import best_fulfilment
from packetrow_env.state import HAND, SHIPS

from .base import Agent

ROLLOUTS = ("random", "heuristic")
DEFAULT_ITERATIONS = 1000
TERMINAL_MARGIN_WEIGHT = 0.1  # share of the terminal reward that rewards a bigger VP lead


class ISMCTSAgent(Agent):
    """Single-observer information-set MCTS over determinisations, for the seat to act."""

    def __init__(self, seconds_per_move: float | None = None, iterations: int | None = None, seed: int = 0,
                 rollout: str = "heuristic", rollout_rounds: int | None = 2, exploration: float = 1.0,
                 eval_scale: float = 3.0, partial_weight: float = 0.25):
        if seconds_per_move is not None and iterations is not None:
            raise ValueError("give one budget: iterations or seconds_per_move, not both "
                             f"(got iterations={iterations!r}, seconds_per_move={seconds_per_move!r})")
        if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer))
                                       or iterations < 1):
            raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
        if seconds_per_move is not None and (isinstance(seconds_per_move, bool)
                                             or not isinstance(seconds_per_move, (int, float, np.number))
                                             or not 0 < seconds_per_move < math.inf):
            raise ValueError(f"seconds_per_move must be a positive number of seconds, got {seconds_per_move!r}")
        if seconds_per_move is None and iterations is None:
            iterations = DEFAULT_ITERATIONS
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
        if rollout_rounds is not None and (isinstance(rollout_rounds, bool)
                                           or not isinstance(rollout_rounds, (int, np.integer)) or rollout_rounds < 0):
            raise ValueError(f"rollout_rounds must be a non-negative integer or None (play to the end), "
                             f"got {rollout_rounds!r}")
        for key, value in (("exploration", exploration), ("eval_scale", eval_scale)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not 0 < value < math.inf:
                raise ValueError(f"{key} must be a positive number, got {value!r}")
        if isinstance(partial_weight, bool) or not isinstance(partial_weight, (int, float, np.number)) \
                or not 0 <= partial_weight <= 1:
            raise ValueError(f"partial_weight must be a number from 0 to 1, got {partial_weight!r}")
        self.iterations = None if iterations is None else int(iterations)
        self.seconds_per_move = None if seconds_per_move is None else float(seconds_per_move)
        self.rollout = rollout
        self.rollout_rounds = None if rollout_rounds is None else int(rollout_rounds)
        self.exploration = float(exploration)
        self.eval_scale = float(eval_scale)
        self.partial_weight = float(partial_weight)
        self.name = "ismcts"
        self._policy = None
        if rollout == "heuristic":
            self._policy = _heuristic(seed)
        self.last_iterations = 0  # iterations of the last search, for benchmarks
        self.reset(seed)

    def reset(self, seed: int) -> None:
        """Reseed for a new game."""
        self._np_rng = np.random.default_rng(seed)
        self._rng = random.Random(int(self._np_rng.integers(2**63)))
        if self._policy is not None:
            self._policy.reset(int(self._np_rng.integers(2**63)))

    # ---------------------------------------------------------------- acting
    def act(self, view) -> int:
        """The action the search visited most for the seat of ``view`` (a SeatView of a game)."""
        if not view.has_game:
            raise ValueError("ISMCTSAgent searches determinisations of the table: act(SeatView(game, seat)), not a "
                             "view of an observation")
        legal = view.legal_actions()
        if not legal:
            raise ValueError("no legal action: the mask is all zeros (is the game over, or is it another seat's turn?)")
        if len(legal) == 1:
            return int(legal[0])
        seat = view.seat
        root = _Node()
        deadline = None if self.seconds_per_move is None else time.perf_counter() + self.seconds_per_move
        count = 0
        while True:
            self._iterate(root, view, seat)
            count += 1
            if deadline is None:
                if count >= self.iterations:
                    break
            elif time.perf_counter() >= deadline:
                break
        self.last_iterations = count
        # Most visits; ties by the better mean, then the lower id (deterministic).
        best = max(legal, key=lambda a: (root.visits.get(a, 0),
                                         root.total.get(a, 0.0) / max(1, root.visits.get(a, 0)), -a))
        return int(best)

    # ---------------------------------------------------------------- search
    def _iterate(self, root: "_Node", view: SeatView, seat: int) -> None:
        """One determinise-select-expand-rollout-backup pass."""
        rng = self._rng
        game = view.sample_determinization(self._np_rng)
        state = game.state
        node = root
        path = []
        c = self.exploration
        log = math.log
        sqrt = math.sqrt
        while not game.is_over:
            legal = game.legal_action_mask().nonzero()[0].tolist()
            player = state.current_player
            visits, total, avail = node.visits, node.total, node.avail
            untried = []
            best, best_score = -1, -math.inf
            for a in legal:
                avail[a] = avail.get(a, 0) + 1
                n = visits.get(a, 0)
                if n == 0:
                    untried.append(a)
                elif not untried:
                    score = total[a] / n + c * sqrt(log(avail[a]) / n)
                    if score > best_score:
                        best, best_score = a, score
            if untried:
                a = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
                path.append((node, player, a))
                game.step(a)
                break
            path.append((node, player, best))
            node = self._child(node, best, game)
        rewards = self._playout(game)
        for node, player, a in path:
            node.visits[a] = node.visits.get(a, 0) + 1
            node.total[a] = node.total.get(a, 0.0) + rewards[player]

    @staticmethod
    def _child(node: "_Node", action: int, game: Game) -> "_Node":
        """Step ``game`` by ``action`` and return the child node (keyed by the dealt cards after a refill)."""
        state = game.state
        before = state.round
        game.step(action)
        key = action
        if state.round != before or game.is_over:  # a refill dealt new public cards: a chance outcome
            key = (action, state.current.tobytes(), state.future.tobytes())
        child = node.children.get(key)
        if child is None:
            child = node.children[key] = _Node()
        return child

    def _playout(self, game: Game) -> list[float]:
        """Play the rollout policy up to the cutoff and score the position for every seat."""
        state = game.state
        limit = None if self.rollout_rounds is None else state.round + self.rollout_rounds
        policy = self._policy
        rng = self._rng
        while not game.is_over and (limit is None or state.round < limit):
            mask = game.legal_action_mask()
            if policy is None:
                legal = mask.nonzero()[0].tolist()
                game.step(legal[rng.randrange(len(legal))] if len(legal) > 1 else legal[0])
            else:
                game.step(policy.act(SeatView(game, state.current_player, "tracked", action_mask=mask)))
        if game.is_over:
            return terminal_rewards(game)
        return pairwise_rewards(estimate_vp(game, self.partial_weight), self.eval_scale)


class _Node:
    """Edge statistics of one history node: visits, total reward of the actor, availability; children."""

    __slots__ = ("visits", "total", "avail", "children")

    def __init__(self):
        self.visits = {}
        self.total = {}
        self.avail = {}
        self.children = {}


# ------------------------------------------------------------------------ rewards and evaluation
def terminal_rewards(game: Game) -> list[float]:
    """Rank reward (``scoring.rank_rewards``: the mean of +1/0/-1 against each opponent) blended with a small
    VP-margin term."""
    scores = game.scores()
    n = len(scores)
    vps = [row["vp"] for row in scores]
    m = TERMINAL_MARGIN_WEIGHT
    tanh = math.tanh
    return [(1 - m) * rank + m * sum(tanh((vps[p] - vps[q]) / 5.0) for q in range(n) if q != p) / (n - 1)
            for p, rank in enumerate(rank_rewards(scores))]


def pairwise_rewards(values: list[float], scale: float) -> list[float]:
    """Per seat, the mean over opponents of tanh(value difference / scale): the rank reward, smoothed."""
    n = len(values)
    tanh = math.tanh
    return [sum(tanh((values[p] - values[q]) / scale) for q in range(n) if q != p) / (n - 1) for p in range(n)]


class _Tables:
    """Plain-Python card columns for the evaluation (numpy scalar access is slow)."""

    def __init__(self, cards):
        self.kind = cards.kind.tolist()
        self.vp = cards.vp.tolist()
        self.money = cards.money.tolist()
        self.reward = cards.reward.tolist()
        self.good = cards.good.tolist()
        self.quantity = cards.quantity.tolist()
        self.destination = cards.destination.tolist()
        self.fulfilled = {}  # (hand, ships) -> contracts of the R-SCORE-1 best fulfilment


_TABLES: dict = {}


def _tables(cards) -> _Tables:
    t = _TABLES.get(id(cards))
    if t is None or t[0] is not cards:
        t = _TABLES[id(cards)] = (cards, _Tables(cards))
    return t[1]


def estimate_vp(game: Game, partial_weight: float = 0.25) -> list[float]:
    """Estimated final VP per seat from the position as it stands (see the module docstring)."""
    s = game.state
    n = s.num_players
    t = _tables(game.cards)
    kind, vp, money, reward = t.kind, t.vp, t.money, t.reward
    good, quantity, destination = t.good, t.quantity, t.destination
    location = s.location
    held = np.flatnonzero((location >= HAND) & (location < SHIPS + n)).tolist()
    where = location[held].tolist()
    hands = [[] for _ in range(n)]
    ships = [[] for _ in range(n)]
    for c, code in zip(held, where):
        if code >= SHIPS:
            ships[code - SHIPS].append(c)
        else:
            hands[code - HAND].append(c)
    cash = s.cash[:n].tolist()
    points = [0.0] * n
    clock = time_left(s, game.cards, floor=0.1)  # unfinished contracts are worth less as the game runs out
    bankers = [0] * n
    for p in range(n):
        building = 0
        contracts = []
        units = [0, 0, 0, 0]
        gold = captains = 0
        for c in hands[p]:
            k = kind[c]
            if k == BUILDING:
                building += vp[c]
            elif k == MONEY:
                cash[p] += money[c]
            elif k == CONTRACT:
                contracts.append(c)
            elif k == GOODS_KIND:
                units[good[c]] += quantity[c]
            elif k == GOLD:
                gold += quantity[c]
            elif k == CAPTAIN:
                captains += 1
            elif k == BANKER:
                bankers[p] += 1
        partial = 0.0
        if contracts:
            fulfilled = ()
            if ships[p]:
                key = (tuple(hands[p]), tuple(ships[p]))
                fulfilled = t.fulfilled.get(key)
                if fulfilled is None:
                    if len(t.fulfilled) > 100_000:  # hands repeat across iterations; bound the memory
                        t.fulfilled.clear()
                    fulfilled = t.fulfilled[key] = best_fulfilment(game.cards, hands[p] + ships[p], contracts)[0]
                for c in fulfilled:
                    cash[p] += reward[c]
            if partial_weight:
                bound = {destination[c] for c in ships[p]}
                for c in contracts:
                    if c in fulfilled:
                        continue
                    q = quantity[c]
                    progress = min(q, units[good[c]] + gold) / q
                    if not (destination[c] in bound or (captains and bound)):
                        progress *= 0.5
                    partial += reward[c] * progress
        points[p] = building + partial_weight * clock * partial / 10.0
    per = banker_points(cash)
    return [points[p] + cash[p] / 10.0 + per[p] * bankers[p] for p in range(n)]


def _heuristic(seed: int):
    """The heuristic rollout policy, imported on first use (it lives in agents.heuristic)."""
    try:
        from .heuristic import HeuristicAgent
    except ImportError as error:
        raise ValueError(f"rollout='heuristic' needs agents.heuristic.HeuristicAgent, which failed to import "
                         f"({error}); use rollout='random'") from None
    return HeuristicAgent(seed=seed)


__all__ = ["ISMCTSAgent", "estimate_vp", "pairwise_rewards", "terminal_rewards"]
