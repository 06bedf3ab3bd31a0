"""Many games at once: ``VectorGame`` steps B games of Packet Row in one call, with exactly the rules of ``Game``.

State is batched numpy arrays (``batch.Batch``); deals, masks and actions run in compiled kernels (``rules``,
numba) over the whole batch. ``Game`` stays the readable reference: the tests play both side by side. Observations come from ``observe`` (the AEC env's vectors).
"""

from __future__ import annotations

import functools
import itertools
import operator
from typing import NamedTuple

import numpy as np

from .. import actions, payment, shipping
from ..cards import ASSISTANT, resolve
from ..compact_observation import ENCODINGS, encoder_for
from ..engine import Game, IllegalActionError
from ..memory import check_fits, format_bytes, most_that_fit
from ..observation import MODES
from ..scoring import banker_points_batch, final_rewards_batch
from ..state import HAND, MAX_DECK, MAX_PLAYERS, MIN_PLAYERS, NUM_BOARDS, OVER, PAY, SHIPS
from . import rules
from .batch import WORDS, Batch, allocate, from_games, state_of
from .seeded_shuffle import STATE_WORDS, state_dict
from .tables import DISCARD as DISCARD_PILE, table

__all__ = ["EngineArrays", "VectorGame", "IllegalActionError", "bytes_per_game"]


class EngineArrays(NamedTuple):
    """What the rules kernels read and change (``VectorGame.engine_arrays``)."""

    batch: Batch
    table: np.ndarray
    contract_ids: np.ndarray
    hands: rules.HandCache
    mask: np.ndarray  # bool[B, NUM_ACTIONS]: each game's legal actions, kept current by the kernels
    ended: np.ndarray  # bool[B]: the games that ended since the last moved()
    scratch: rules.Scratch


class VectorGame:
    """B games of Packet Row as batched arrays (docs/design.md "Many games at once").

    A batch whose games cannot fit in the memory available (``bytes_per_game``, ``packetrow_env.memory``) is a
    ValueError naming its size, the estimate and the memory available, raised before anything is allocated.
    """

    def __init__(self, num_players=4, seeds=None, autoreset: bool = False, num_games: int | None = None,
                 cards=None):
        counts, seeds = _check_setup(num_players, seeds, num_games)
        self._allocate(counts, seeds, autoreset, cards)
        self._deal(np.arange(self.num_games), self.seeds)

    @classmethod
    def from_games(cls, games, autoreset: bool = False) -> "VectorGame":
        """A batch continuing these games (e.g. loaded with ``Game.from_dict``): row i plays on from ``games[i]``.

        With autoreset, finished games are re-dealt with seeds 0, 1, 2, ... of the batch's sequence.
        """
        games = list(games)
        if not games or not all(isinstance(g, Game) for g in games):
            raise ValueError("from_games needs a non-empty list of packetrow_env Game objects")
        if any(g.cards is not games[0].cards for g in games):
            raise ValueError("from_games needs games of one catalogue (the batch reads one card table)")
        vg = cls.__new__(cls)
        vg._allocate(np.array([g.num_players for g in games], dtype=np.int64), [0] * len(games), autoreset,
                     games[0].cards)
        vg._next_seed = 0
        vg.batch = from_games(games)
        vg._widen_history()
        rows = np.arange(len(games))
        for i, g in enumerate(games):
            vg._rng_states[i] = g.state.rng_state
            for p in range(g.num_players):
                hand = g.hand(p)
                vg._hands.money[i, p] = int(vg.cards.money[hand].sum())
                vg._hands.assistants[i, p] = int((vg.cards.kind[hand] == ASSISTANT).sum())
        rules.masks_of(*vg._masks_args(rows))
        over = np.flatnonzero(vg.is_over)  # games already finished: their final scores, as step records them
        if len(over):
            vg._final[0, over], vg._final[1, over] = vg._scores(over)
        return vg

    def _allocate(self, counts, seeds, autoreset, cards) -> None:
        self.cards = resolve(cards)
        self.autoreset = bool(autoreset)
        self.num_games = len(seeds)
        self._players = counts
        self._table = table(self.cards)
        self._contract_ids = np.ascontiguousarray(self.cards.contract_ids, dtype=np.int64)
        self.batch: Batch = allocate(self.num_games)
        b = self.num_games
        self._hands = rules.hand_cache(b)
        self._scratch = rules.scratch()
        self._mask = np.zeros((b, actions.NUM_ACTIONS), bool)
        self._ended = np.zeros(b, bool)  # games that ended on the last step
        self._final = np.zeros((2, b, MAX_PLAYERS), np.int64)  # VP and cash of each game's last finish
        self._rng = np.zeros((b, STATE_WORDS), np.uint64)  # each game's generator after its deal (seeded_shuffle)
        self._rng_states = [None] * b  # or, for games continued by from_games, their own generator's state
        self._board_cards = np.full((NUM_BOARDS, MAX_DECK), -1, np.int64)
        for board, ids in enumerate(self.cards.board_cards):
            self._board_cards[board, :len(ids)] = ids
        self._board_sizes = np.array([len(ids) for ids in self.cards.board_cards], np.int64)
        self._start_contracts = np.asarray(self.cards.start_contracts, dtype=np.int64)
        self.seeds = np.array(seeds, dtype=np.int64)
        self._next_seed = int(self.seeds.max()) + 1 if b else 0
        self._encoders = {}

    # ------------------------------------------------------------------ setup
    def _deal(self, rows: np.ndarray, seeds) -> None:
        """Deal games ``rows`` as Game.new(num_players, seed) does (its generator's shuffles, compiled in
        ``seeded_shuffle``; R-SETUP-1..7), then refresh their masks."""
        seeds = np.asarray(seeds, dtype=np.int64)
        rules.deal_seeded(*self._deal_args(rows, seeds))
        self.seeds[rows] = seeds
        for i in rows.tolist():
            self._rng_states[i] = None
        self._final[:, rows] = 0
        rules.masks_of(*self._masks_args(rows))

    # The kernels' arguments, built in one place for the calls and for compile_jobs: a kernel compiled ahead for
    # other argument types than its calls pass would be compiled again at the first call.
    def _deal_args(self, rows: np.ndarray, seeds: np.ndarray) -> tuple:
        return (self.batch, self._hands, rows, self._players, seeds, self._board_cards, self._board_sizes,
                self._start_contracts, self._rng)

    def _masks_args(self, rows: np.ndarray) -> tuple:
        return self.batch, self._table, self._contract_ids, self._hands, self._mask, rows, self._scratch

    def _step_args(self, acts: np.ndarray, where: np.ndarray) -> tuple:
        return (self.batch, self._table, self._contract_ids, acts, where, self._hands, self._mask, self._ended,
                self._scratch)

    def _holdings_args(self, rows: np.ndarray) -> tuple:
        building = np.zeros((len(rows), MAX_PLAYERS), np.int64)
        bankers = np.zeros((len(rows), MAX_PLAYERS), np.int64)
        return self.batch, self._table, np.asarray(rows, dtype=np.int64), building, bankers

    @classmethod
    def compile_jobs(cls, cards=None, movers=()) -> list[tuple]:
        """``(kernel, example arguments)`` for every numba kernel that a VectorGame's deals, steps and scores
        call, the examples of the types those calls pass, for compiling the kernels before a batch needs them
        (``packetrow_train.compile_ahead``); then each of ``movers``' ``compile_jobs(engine_arrays)`` (compiled
        callers that move games themselves, e.g. ``OpponentKernel``) on the same arrays. The examples are the
        arrays of one game that is never dealt: arguments to compile for, not to call with."""
        vg = cls.__new__(cls)
        vg._allocate(*_check_setup(MIN_PLAYERS, [0], None), False, cards)
        rows = np.arange(1, dtype=np.int64)
        # heaviest first (compile_ahead's order): the step about 50 s on the development machine, a mover about 40 s
        return [(rules.step, vg._step_args(np.zeros(1, np.int64), np.ones(1, bool))),
                *(job for mover in movers for job in mover.compile_jobs(vg.engine_arrays())),
                (rules.deal_seeded, vg._deal_args(rows, np.zeros(1, np.int64))),
                (rules.masks_of, vg._masks_args(rows)),
                (rules.holdings, vg._holdings_args(rows))]

    def reset(self, indices=None, seeds=None, num_players=None) -> None:
        """Re-deal games ``indices`` (default all) as ``Game.new(num_players, seed)`` would, with ``seeds``
        (default: the next seeds of this batch's sequence) and ``num_players`` (one count or one per game;
        default: each game's count so far)."""
        rows = np.arange(self.num_games) if indices is None else _check_indices(indices, self.num_games)
        if num_players is not None:  # a re-deal allocates nothing: the counts are checked, not the memory
            self._players[rows] = _check_counts(num_players, len(rows))
        if seeds is None:
            seeds = self._take_seeds(len(rows))
        else:
            seeds = _check_seeds(seeds)
            if len(seeds) != len(rows):
                raise ValueError(f"reset got {len(rows)} indices but {len(seeds)} seeds; give one seed per game")
        self._deal(rows, seeds)
        self._ended[rows] = False

    def _take_seeds(self, count: int) -> list[int]:
        first = self._next_seed
        self._next_seed += count
        return list(range(first, first + count))

    # -------------------------------------------------------------- accessors
    @property
    def num_players(self) -> np.ndarray:
        """int[B]: each game's player count."""
        return self._players.copy()

    @property
    def current_player(self) -> np.ndarray:
        """int[B]: the seat to act in each game, -1 where the game is over."""
        b = self.batch
        return np.where(b.phase == OVER, -1, b.current_player).astype(np.int64)

    @property
    def is_over(self) -> np.ndarray:
        """bool[B]: which games have ended and been scored."""
        return self.batch.phase == OVER

    @property
    def ended(self) -> np.ndarray:
        """bool[B]: which games ended on the last ``step`` (with autoreset they are already re-dealt)."""
        return self._ended.copy()

    def legal_action_mask(self) -> np.ndarray:
        """bool[B, NUM_ACTIONS]: each game's legal actions for its player to act (all False where over)."""
        return self._mask.copy()

    def payment_options(self, i: int) -> list[tuple[int, ...]]:
        """Every payment option of game i in phase pay (as ``Game.payment_options``, from ``payment``), else []."""
        i = _check_index(i, self.num_games)
        b = self.batch
        if b.phase[i] != PAY:
            return []
        p = int(b.current_player[i])
        location = b.location[i]
        resources = np.flatnonzero((location == HAND + p) | (location == SHIPS + p)).tolist()
        return payment.payment_options(self.cards, resources, b.pending[i, :b.n_pending[i]].tolist())

    def payment_page_options(self, i: int) -> list[tuple[int, ...]]:
        """Game i's payment options of the page shown in phase pay (as ``Game.payment_page_options``), else []."""
        i = _check_index(i, self.num_games)
        b = self.batch
        if b.phase[i] != PAY:
            return []
        return [tuple(_bit_ids(b.options[i, k])) for k in range(b.n_options[i])]

    # ------------------------------------------------------------------ step
    def step(self, acts, where=None) -> None:
        """Apply one action per game (finished games ignore theirs; with ``where``, bool[B], only those games
        move); an illegal action in a moving game raises IllegalActionError naming the game and the action,
        and changes no game."""
        where = self._check_where(where)
        arr = self._check_actions(acts)
        bad = rules.step(*self._step_args(arr, where))
        if bad >= 0:
            raise self._illegal(np.asarray(acts), where)
        self.moved()

    def engine_arrays(self) -> EngineArrays:
        """The arrays the rules kernels read and change, for compiled callers that move games themselves (e.g.
        ``packetrow_agents.opponents_batch``): they apply only legal actions, refresh each moved game's mask, set
        ``ended`` where a game ends, and call ``moved()`` after."""
        return EngineArrays(self.batch, self._table, self._contract_ids, self._hands, self._mask, self._ended,
                            self._scratch)

    def moved(self) -> None:
        """What follows moves in the kernels: huge hands settled, history room, the scores of games that ended
        (``ended``), and with autoreset their new deals."""
        if self._hands.unsettled.any():
            self._settle_huge_hands()
        self._widen_history()
        if self._ended.any():
            rows = np.flatnonzero(self._ended)
            vp, cash = self._scores(rows)
            self._final[0, rows] = vp
            self._final[1, rows] = cash
            if self.autoreset:
                ended = self._ended.copy()
                self._deal(rows, self._take_seeds(len(rows)))
                self._final[0, rows] = vp  # _deal cleared them; the finished games' scores stay readable
                self._final[1, rows] = cash
                self._ended = ended

    def _settle_huge_hands(self) -> None:
        """The final fulfilment (R-SCORE-1) of hands the compiled search gave up on, by ``shipping``'s search over
        units (only hand-made hands holding much of the catalogue come here; money cards play no part in it)."""
        b = self.batch
        for i, p in zip(*np.nonzero(self._hands.unsettled)):
            location = b.location[i]
            resources = np.flatnonzero((location == HAND + p) | (location == SHIPS + p)).tolist()
            contracts = [c for c in np.flatnonzero(location == HAND + p).tolist() if self.cards.contract_number[c] >= 0]
            fulfilled, paid = shipping.best_fulfilment(self.cards, resources, contracts)
            spent = list(paid) + list(fulfilled)
            location[spent] = self._table[DISCARD_PILE, spent]
            b.cash[i, p] += int(self.cards.reward[list(fulfilled)].sum())
            self._hands.unsettled[i, p] = False

    def _check_where(self, where) -> np.ndarray:
        if where is None:
            return np.ones(self.num_games, bool)
        arr = np.asarray(where)
        if arr.shape != (self.num_games,) or arr.dtype != bool:
            raise ValueError(f"where must be a bool array of shape ({self.num_games},), got {arr.dtype} {arr.shape}")
        return arr

    def _check_actions(self, acts) -> np.ndarray:
        arr = np.asarray(acts)
        if arr.shape != (self.num_games,) or arr.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_games},), one per game, got "
                             f"{'dtype ' + str(arr.dtype) + ', ' if arr.dtype.kind not in 'iu' else ''}shape {arr.shape}")
        return arr.astype(np.int64, copy=False)  # unsigned values past int64 wrap to negative: illegal as well

    def _illegal(self, acts: np.ndarray, where: np.ndarray) -> IllegalActionError:
        """The error for the illegal actions among ``acts`` (the step kernel found one and changed no game)."""
        running = (self.batch.phase != OVER) & where
        in_range = (acts >= 0) & (acts < actions.NUM_ACTIONS)
        legal = np.zeros(self.num_games, bool)
        legal[in_range] = self._mask[np.flatnonzero(in_range), acts[in_range].astype(np.int64)]
        bad = np.flatnonzero(running & ~legal)
        i = int(bad[0])
        a = int(acts[i])
        what = (f"action {a} is out of range (actions are 0-{actions.NUM_ACTIONS - 1})"
                if not 0 <= a < actions.NUM_ACTIONS else f"action {a} ({actions.NAMES[a]}) is not legal")
        legal_ids = ", ".join(f"{x} ({actions.NAMES[x]})" for x in np.flatnonzero(self._mask[i]))
        more = f" ({len(bad) - 1} more games have illegal actions)" if len(bad) > 1 else ""
        return IllegalActionError(f"game {i}: {what} for player {int(self.batch.current_player[i])}; legal "
                                  f"actions: {legal_ids}{more}; no game was changed")

    def _widen_history(self) -> None:
        h = self.batch.history
        if int(self.batch.n_history.max(initial=0)) + 1 >= h.shape[1]:  # room for the next step's action
            wider = np.zeros((h.shape[0], 2 * h.shape[1]), h.dtype)
            wider[:, :h.shape[1]] = h
            self.batch = self.batch._replace(history=wider)

    # --------------------------------------------------------------- scores
    def _scores(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(VP, cash) int[len(rows), 5] of games ``rows`` as the table counts them now (R-SCORE-2, R-SCORE-3)."""
        args = self._holdings_args(rows)
        rules.holdings(*args)
        building, bankers = args[-2:]
        cash = self.batch.cash[rows].astype(np.int64)
        n = self._players[rows]
        vp = building + cash // 10 + banker_points_batch(cash, n) * bankers
        seats = np.arange(MAX_PLAYERS) < n[:, None]
        return np.where(seats, vp, 0), np.where(seats, cash, 0)

    def rewards(self, mode: str = "rank") -> np.ndarray:
        """float32[B, 5]: final rewards by seat of games over (with autoreset: of games that ended on the last
        step), zeros elsewhere and past each game's player count (``scoring.final_rewards``: R-SCORE-4's order)."""
        done = self._ended if self.autoreset else self.is_over
        out = final_rewards_batch(self._final[0], self._final[1], self._players, mode)
        out[~done] = 0
        return out

    def scores(self, rows=None) -> tuple[np.ndarray, np.ndarray]:
        """(VP, cash) int[B, 5] of every game, or int[len(rows), 5] of games ``rows`` (final where over, else as the
        table shows now)."""
        rows = np.arange(self.num_games) if rows is None else _check_indices(rows, self.num_games)
        done = (self._ended if self.autoreset else self.is_over)[rows]
        vp, cash = self._final[0, rows], self._final[1, rows]  # copies (rows is an index array)
        if not done.all():  # the games still running counted now (a finished game's count is kept when it ends)
            vp[~done], cash[~done] = self._scores(rows[~done])
        return vp, cash

    # ----------------------------------------------------------- observation
    def observe(self, mode: str = "tracked", rows=None, seats=None, encoding: str = "onehot") -> np.ndarray:
        """float32[B, D]: each game's observation for its player to act (zeros where over), as the AEC env's.

        ``rows`` (int array): only those games, float32[len(rows), D]; ``seats`` (one per row): observe from
        those seats instead of the player to act (e.g. a learner's view of his finished game); ``encoding``:
        onehot (``observation``) or compact (``compact_observation``).
        """
        enc = self._encoders.get((mode, encoding))
        if enc is None:
            encoder_for(encoding)  # checks the encoding
            if encoding == "onehot":
                from .observe import BatchEncoder
                enc = BatchEncoder(self.cards, mode)
            else:
                from .observe_compact import CompactBatchEncoder
                enc = CompactBatchEncoder(self.cards, mode)
            self._encoders[mode, encoding] = enc
        who = self.current_player
        if rows is None:
            if seats is not None:
                who[:] = seats
            return enc.encode(self.batch, who, np.empty((self.num_games, enc.size), np.float32))
        rows = np.asarray(rows, dtype=np.int64)
        if seats is not None:
            who[rows] = seats
        out = np.empty((len(rows), enc.size), np.float32)
        return enc.encode(self.batch, who, out, rows, packed=True)

    # ------------------------------------------------------------ one game
    def game(self, i: int) -> Game:
        """Game i as an independent ``Game`` (its ``to_dict`` equals the single engine's)."""
        i = _check_index(i, self.num_games)
        rng_state = self._rng_states[i]
        return Game(state_of(self.batch, i, state_dict(self._rng[i]) if rng_state is None else rng_state), self.cards)


def _bit_ids(bits: np.ndarray) -> list[int]:
    """The card ids of a bitset, ascending."""
    return [w * 64 + j for w in range(WORDS) for j in range(64) if int(bits[w]) >> j & 1]


@functools.cache
def bytes_per_game() -> int:
    """About the bytes a VectorGame holds per game: its state (``batch.allocate``), the kernels' hand caches, the
    arrays ``VectorGame._allocate`` adds, its seed in the listed seeds, and one observation in the largest mode and
    encoding (every caller observes its games)."""
    state = sum(array.nbytes for array in (*allocate(1), *rules.hand_cache(1)))
    # _allocate's own: mask (bool), ended (bool), final (2 x int64 per seat), generator words, seed, player count,
    # generator state slot (a pointer); the listed seed is a Python int (32 bytes) behind a pointer
    own = actions.NUM_ACTIONS + 1 + 2 * MAX_PLAYERS * 8 + STATE_WORDS * 8 + 8 + 8 + 8 + 40
    observation = 4 * max(encoder_for(encoding).size_of(mode) for encoding in ENCODINGS for mode in MODES)
    return state + own + observation


def _fitting_seeds(seeds):
    """``seeds`` (anything with a length is left as it is; an iterator is read only up to one seed past the most
    games that fit), refused with a TooLargeError (a ValueError) before the batch is allocated if its games
    cannot fit in the memory available."""
    each = bytes_per_game()
    size = None
    if not hasattr(seeds, "__len__"):
        most = most_that_fit(each)
        seeds = list(seeds if most is None else itertools.islice(seeds, most + 1))
        if most is not None and len(seeds) > most:
            size = f"more than {most:,}"
    check_fits(f"a VectorGame of {size or format(len(seeds), ',')} games", len(seeds) * each,
               hint=f" (about {format_bytes(each)} a game); give fewer seeds or a smaller num_games")
    return seeds


def _check_setup(num_players, seeds, num_games):
    """(player count per game, seeds) from the constructor's arguments, or a ValueError saying what is allowed
    (a TooLargeError, before anything is allocated, for more games than fit in memory)."""
    if seeds is None:
        if num_games is None:
            num_games = 1 if np.ndim(num_players) == 0 else len(num_players)
        seeds = range(_count(num_games, "num_games"))
    seeds = _check_seeds(_fitting_seeds(seeds))
    if not seeds:
        raise ValueError("a VectorGame needs at least one game: give seeds (or num_games) of length 1 or more")
    if num_games is not None and _count(num_games, "num_games") != len(seeds):
        raise ValueError(f"num_games is {num_games} but {len(seeds)} seeds were given; give one seed per game")
    return _check_counts(num_players, len(seeds)), seeds


def _check_counts(num_players, num_games: int) -> np.ndarray:
    """int64[num_games]: the player count of each game from one count or one per game, or a ValueError saying what
    is allowed."""
    if np.ndim(num_players) == 0:
        counts = [num_players] * num_games
    else:
        counts = list(num_players)
        if len(counts) != num_games:
            raise ValueError(f"num_players has {len(counts)} entries for {num_games} games; give one per game")
    for n in counts:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) \
                or not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(f"num_players must be integers from {MIN_PLAYERS} to {MAX_PLAYERS}, got {n!r}")
    return np.array(counts, dtype=np.int64)


def _count(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def _check_seeds(seeds) -> list[int]:
    seeds = list(seeds)
    for s in seeds:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) or not 0 <= s < 2 ** 63:
            raise ValueError(f"seeds must be integers from 0 to 2**63 - 1, got {s!r}")
    return [int(s) for s in seeds]


def _check_index(i, num_games: int) -> int:
    try:
        k = None if isinstance(i, (bool, np.bool_)) else operator.index(i)
    except TypeError:
        k = None
    if k is None or not 0 <= k < num_games:
        raise ValueError(f"game index must be an integer from 0 to {num_games - 1}, got {i!r}")
    return k


def _check_indices(indices, num_games: int) -> np.ndarray:
    rows = [_check_index(i, num_games) for i in np.atleast_1d(np.asarray(indices, dtype=object)).tolist()]
    if len(set(rows)) != len(rows):
        raise ValueError(f"indices must be distinct, got {rows}")
    return np.array(rows, dtype=np.int64)
