"""Opponents moved inside one compiled call: every game of a VectorGame played up to its learner's turn.

Self-play steps many games with one learner seat each; between two learner moves every other seat moves,
in several rounds of opponent moves per learner step across the batch, each a dozen numpy and numba calls when
every round goes through ``act_batch`` (docs/experiments.md's profile: most of the opponents' time was those
calls; docs/benchmarks.md). ``OpponentKernel.move`` instead plays every game, in one numba call, until its
learner is to act, the game is over or the seat to act holds an agent without a compiled form. It moves in waves:
each game runs through its random and heuristic seats up to a snapshot's turn, then every waiting snapshot seat
moves, the rows of one policy together (so that its weights stay in the core's cache from one row to the next: a
pool of 20 snapshots' weights does not fit in it), and the next wave goes on from there. An agent's compiled form is its
part of the agent protocol (``compiled_form``, a ``CompiledOpponent``):
random players (a uniform legal action), the heuristic (its compiled rules, ``heuristic_batch.decide``) and snapshot
policies (the compact observation, ``observe_compact.encode_rows``, and their stacked weights,
``policy_batch.stack_logits``). Those are the same kernels the batched agents use, so a move is the agent's; only the
random numbers come from numba's own generator (seeded from the caller's generator at every call), so runs
reproduce but follow other random streams than ``act_batch`` (tests/test_opponents_batch.py compares both).
``OpponentKernel`` is the compiled mover of ``packetrow_env.vector.opponents.OpponentTable``.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np

from packetrow_env.agent_protocol import compiled_form
from packetrow_env.knowledge import check_mode, hides_held_starting_contracts
from packetrow_env.scoring import CLOCK_DECK, TIME_SCALE
from packetrow_env.state import HAND, MAX_PLAYERS, OVER
from packetrow_env.vector import rules
from packetrow_env.vector.observe_compact import CompactBatchEncoder, encode_rows

from . import heuristic_batch as hb
from . import heuristic_weights
from .compiled_opponent import ELSEWHERE, HEURISTIC, POLICY, RANDOM
from .policy_batch import PolicyStack, same_architecture as _same, stack_logits

__all__ = ["ELSEWHERE", "HEURISTIC", "POLICY", "RANDOM", "OpponentKernel", "kind_of"]

_JIT = dict(cache=True, nogil=True)

# What move() reports per game.
LEARNER, OTHER_AGENT, NEEDS_ROOM = range(3)


def kind_of(agent, observation_mode: str, observation_encoding: str, observation_size: int) -> int:
    """Deprecated (to be removed in 0.5): the kind of ``agent``'s compiled form, ELSEWHERE where it has none; read
    ``packetrow_env.agent_protocol.compiled_form`` instead."""
    warnings.warn("opponents_batch.kind_of is deprecated: use packetrow_env.agent_protocol.compiled_form",
                  DeprecationWarning, stacklevel=2)
    form = compiled_form(agent, observation_mode, observation_encoding, observation_size)
    return ELSEWHERE if form is None else form.kind


class OpponentKernel:
    """The table of agents of one batch (``set_agents``) and ``move``: every game played up to its learner."""

    def __init__(self, cards, observation_mode: str = "tracked", observation_encoding: str = "compact"):
        self.mode = check_mode(observation_mode)
        self.encoding = observation_encoding
        # snapshots read the compact observation (under onehot no policy moves here, the encoder is never read)
        encoder = CompactBatchEncoder(cards, self.mode)
        self.observation_size = encoder.size
        self._encoder = encoder.kernel_tables
        _, powers, flexibility, lead = hb.catalogue_constants(encoder.cards)
        self._heuristic = (hb.hand_visibility(self.mode), hides_held_starting_contracts(self.mode), flexibility,
                           powers, lead, np.maximum(1, np.asarray(encoder.cards.deck_sizes, dtype=np.int64)),
                           CLOCK_DECK, float(heuristic_weights.TIME_FLOOR), float(TIME_SCALE))
        self.set_agents([])

    def set_agents(self, agents) -> None:
        """The table's agents, entry ids in order (a batch's ``assigned`` holds these ids; -1: the learner)."""
        forms = [compiled_form(a, self.mode, self.encoding, self.observation_size) for a in agents]
        self.kinds = np.array([ELSEWHERE if form is None else form.kind for form in forms], dtype=np.int64)
        params = np.zeros((len(agents), len(hb.agent_parameters(0.0))), np.float64)
        stack_ids = np.full(len(agents), -1, np.int64)
        deterministic = np.zeros(len(agents), np.bool_)
        policies = []
        for e, form in enumerate(forms):
            kind = self.kinds[e]
            if kind == HEURISTIC:
                params[e] = hb.agent_parameters(float(form.threshold))
            elif kind == POLICY and policies and not _same(policies[0], form.policy):
                self.kinds[e] = ELSEWHERE  # one stack holds one architecture (a run's snapshots share theirs)
            elif kind == POLICY:
                stack_ids[e] = len(policies)
                deterministic[e] = form.deterministic
                policies.append(form.policy)
        stack = PolicyStack(policies) if policies else None
        self._params, self._stack_ids, self._deterministic = params, stack_ids, deterministic
        self._stack = _stack_arrays(stack, self.observation_size)

    def move(self, games, assigned: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Play every running game whose seat to act holds a compiled entry until its learner (``assigned`` -1) is
        to act, it is over, or an ELSEWHERE entry is to act; bool[B]: the games left at such an entry's turn."""
        status = np.zeros(games.num_games, np.int64)
        table = np.ascontiguousarray(assigned[:games.num_games], dtype=np.int64)
        while True:
            _move(*self._move_args(games.engine_arrays(), table, int(rng.integers(0, 2 ** 31 - 1)), status))
            games.moved()
            if not (status == NEEDS_ROOM).any():
                return status == OTHER_AGENT

    def compile_jobs(self, engine) -> list[tuple]:
        """``[(kernel, example arguments)]`` of ``move``'s kernel for the agents set now, on a VectorGame's
        ``engine`` arrays (the argument types of its calls, for compiling it ahead: ``VectorGame.compile_jobs``).
        Their types differ only by whether a policy is among the agents."""
        games = len(engine.mask)
        table = np.full((games, MAX_PLAYERS), -1, np.int64)
        return [(_move, self._move_args(engine, table, 0, np.zeros(games, np.int64)))]

    def _move_args(self, engine, table: np.ndarray, seed: int, status: np.ndarray) -> tuple:
        return (engine.batch, engine.table, engine.contract_ids, engine.hands, engine.mask, engine.ended,
                engine.scratch, table, self.kinds, self._params, self._stack_ids, self._deterministic, self._heuristic,
                self._encoder, self._stack, seed, status)


def _stack_arrays(stack: PolicyStack | None, size: int) -> tuple:
    """A PolicyStack's arrays as the kernel reads them, the observation size and the action count; a one-layer
    zero stack where there is none (never read)."""
    if stack is None:
        zero = np.zeros((1, 1, 1), np.float32)
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((1, 0, 1, 1), np.float32), 0, (zero,),
                (np.zeros((1, 1), np.float32),), False, max(size, 1), 1)
    return (stack.index_positions, stack.rest_positions, stack.projected, stack.first_rest, stack.kernel_weights,
            stack.biases, stack.relu, size, stack.num_actions)


@numba.njit(**_JIT)
def _time_left(b, i, deck_sizes, clock_deck, floor, scale):
    """``scoring.time_left`` of game i (the same float64 arithmetic): the clock deck's share left, scaled."""
    left = np.empty(deck_sizes.shape[0], np.float64)
    for k in range(deck_sizes.shape[0]):
        left[k] = (np.int64(b.deck_end[i, k]) - np.int64(b.deck_top[i, k])) / deck_sizes[k]
    left.sort()
    return min(1.0, max(floor, scale * left[clock_deck[b.num_players[i]]]))


@numba.njit(**_JIT)
def _random_legal(mask):
    count = 0
    for a in range(mask.shape[0]):
        count += mask[a]
    r = int(np.random.random() * count)
    for a in range(mask.shape[0]):
        if mask[a]:
            if r == 0:
                return a
            r -= 1
    return -1


@numba.njit(**_JIT)
def _move(b, tab, contract_ids, hc, mask, ended, sc, assigned, kinds, params, stack_ids, deterministic, heuristic,
          enc, stack, seed, status):
    np.random.seed(seed)
    ended[:] = False
    sees, hides, flexibility, powers, lead, deck_sizes, clock_deck, floor, scale = heuristic
    (dest, split_at, pair_cards, pair_of, hides_starts, holds_known, others_see_options, type_of, number,
     option_rows, offsets) = enc
    index_positions, rest_positions, projected, first_rest, weights, biases, relu, size, num_actions = stack
    nd = np.zeros((hb.MAX_PLAYERS + 1, hb.NUM_FIELDS), np.int64)
    con = np.zeros((hb.MAX_PLAYERS + 1, contract_ids.shape[0] + 1, 3), np.int64)
    pot = np.zeros(hb.MAX_PLAYERS, np.float64)
    budget = np.zeros(hb.MAX_PLAYERS, np.int64)
    staged = np.zeros(b.location.shape[1], np.bool_)
    short = np.zeros(hb.NUM_GOODS, np.int64)
    order = np.zeros(hb.NUM_GOODS, np.int64)
    taken = np.zeros(hb.MAX_SUPPLY, np.int64)
    values = np.zeros(hb.NUM_OPTIONS, np.float64)
    acts = np.zeros(hb.NUM_OPTIONS, np.int64)
    num_games = b.num_players.shape[0]
    history = b.history.shape[1]
    seats = np.full(num_games, -1, np.int64)
    active = np.arange(num_games)  # the games to advance in this wave
    waiting = np.zeros(num_games, np.int64)  # the games stopped at a snapshot's turn
    policy_of = np.zeros(num_games, np.int64)
    targets = np.arange(num_games)
    x = np.zeros((0, size), np.float32)
    logits = np.zeros((0, num_actions), np.float32)
    status[:] = LEARNER
    n_active = num_games
    while n_active > 0:
        # every active game up to its learner, another agent, the end, or a snapshot's turn: random and heuristic
        # seats move at once; the snapshots' moves wait for the wave's batched forward below
        n_wait = 0
        for r in range(n_active):
            i = active[r]
            while b.phase[i] != OVER:
                p = b.current_player[i]
                e = assigned[i, p]
                if e < 0:
                    break
                kind = kinds[e]
                if kind == ELSEWHERE:
                    status[i] = OTHER_AGENT
                    break
                if b.n_history[i] + 1 >= history:
                    status[i] = NEEDS_ROOM
                    break
                if kind == POLICY:
                    seats[i] = p
                    waiting[n_wait] = i
                    policy_of[n_wait] = stack_ids[e]
                    n_wait += 1
                    break
                if kind == RANDOM:
                    a = _random_legal(mask[i])
                else:
                    t = _time_left(b, i, deck_sizes, clock_deck, floor, scale)
                    a = hb.decide(b, tab, contract_ids, mask[i], i, sees, hides, t, np.random.random(), params[e],
                                  flexibility, powers, lead, nd, con, pot, budget, staged, short, order, taken,
                                  values, acts)
                _play(b, tab, contract_ids, hc, mask, ended, sc, i, a)
        if n_wait == 0:
            break
        # the wave: every waiting game's snapshot move, the rows of one policy together, so that its weights stay in
        # the core's cache from row to row (a row at a time, 20 policies' weights leave it: docs/benchmarks.md)
        if x.shape[0] == 0:
            x = np.empty((num_games, size), np.float32)  # encode_rows writes each row whole
            logits = np.empty((num_games, num_actions), np.float32)
        by_policy = np.argsort(policy_of[:n_wait], kind="mergesort")
        rows = waiting[:n_wait][by_policy]
        ids = policy_of[:n_wait][by_policy]
        encode_rows(b.location, b.deck_top, b.deck_end, b.current, b.future, b.exhausted, b.chosen, b.cash,
                    b.has_piece, b.starting_contract, b.num_players, b.round, b.harbour_master, b.current_player,
                    b.phase, b.resume_phase, b.current_board, b.pending, b.n_pending, b.options, b.n_options,
                    b.payment_page, b.n_payments, seats, rows, targets, dest, split_at, pair_cards, pair_of,
                    hides_starts, holds_known, others_see_options, type_of, number, option_rows, offsets, x)
        stack_logits(x[:n_wait], ids, index_positions, rest_positions, projected, first_rest, weights, biases, relu,
                     logits)
        for r in range(n_wait):
            i = rows[r]
            sample = not deterministic[assigned[i, seats[i]]]
            a, best = -1, -np.inf
            for k in range(num_actions):
                if mask[i, k]:
                    value = np.float64(logits[r, k])
                    if sample:
                        value -= np.log(-np.log(np.random.random()))
                    if a < 0 or value > best:
                        a, best = k, value
            _play(b, tab, contract_ids, hc, mask, ended, sc, i, a)
            active[r] = i
        n_active = n_wait
    return status


@numba.njit(inline="always", **_JIT)
def _play(b, tab, contract_ids, hc, mask, ended, sc, i, a):
    """Action ``a`` in game i: the rules applied, whether it ended, its next legal actions."""
    rules.apply(b, tab, contract_ids, i, a, hc, sc.res, sc.con, sc.bits, sc.paid)
    ended[i] = b.phase[i] == OVER
    rules.compute_mask(b, tab, i, hc, mask[i], sc.res, sc.con)
