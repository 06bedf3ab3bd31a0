"""One learner seat per game of a VectorGame; every other seat moved by batched opponents.

This is the core the vectorised training envs share (``gymnasium_env.PacketRowVectorEnv``, the SB3
``VecEnv`` of packetrow_train): after every call, each game waits for its learner (a game that ended is
re-dealt at once, with a new player count and learner seat, and its opponents play up to the learner's
first move). The opponents are an ``opponents.OpponentTable``, which seats agents of the agent protocol when
games are dealt and moves them, batched, until each game waits for its learner; ``LearnerGames`` also takes an
agent or a list of agents (seated as ``OpponentTable`` seats them) and, by default, ``RandomOpponents``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from ..compact_observation import encoder_for
from ..knowledge import check_mode
from ..scoring import REWARD_MODES
from ..state import MAX_PLAYERS, MIN_PLAYERS
from . import VectorGame
from .opponents import OpponentTable


class UniformRandom:
    """An agent that plays a uniformly random legal action: one draw per game, or one draw over a batch."""

    name = "uniform"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, view) -> int:
        """A uniformly random legal action of ``view``'s seat."""
        return int(random_legal(view.action_mask[None], self.rng)[0])

    @classmethod
    def act_batch(cls, agents, turns) -> np.ndarray:
        """A uniformly random legal action per turn, in one draw from ``turns.rng``."""
        return random_legal(turns.masks, turns.rng)


class RandomOpponents(OpponentTable):
    """Every opponent plays a uniformly random legal action (one numpy draw over the waiting games)."""

    def __init__(self, seed=None):
        super().__init__(UniformRandom(seed), seed=seed)


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (bool[k, A]); 0 in rows without a legal action."""
    # the r-th legal action, r uniform below the row's count: one draw per row, not one per action, read from
    # the flat list of legal actions (row by row; each row's share found by binary search), no pass over the mask
    legal = np.flatnonzero(masks)
    row_start = np.arange(len(masks) + 1) * masks.shape[1]
    edges = np.searchsorted(legal, row_start)
    first, counts = edges[:-1], np.diff(edges)
    pick = first + (rng.random(len(masks)) * counts).astype(np.int64)
    if counts.all():
        return legal[pick] - row_start[:-1]
    out = np.zeros(len(masks), np.int64)
    some = counts > 0
    out[some] = legal[pick[some]] - row_start[:-1][some]
    return out


class RowObservations:
    """Deprecated (to be removed in 0.5; opponents read their own observations, ``agent_protocol.Turns.observe``):
    the observations of games ``rows`` for their players to act, encoded when indexed (``obs[k]``,
    ``obs[index_array]``) or converted (``np.asarray(obs)``)."""

    def __init__(self, games: VectorGame, rows: np.ndarray, mode: str, encoding: str):
        warnings.warn("RowObservations is deprecated: opponents read their turns' observations (Turns.observe)",
                      DeprecationWarning, stacklevel=2)
        self.games, self.rows, self.mode, self.encoding = games, rows, mode, encoding

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index) -> np.ndarray:
        if np.ndim(index) == 0:
            return self.games.observe(self.mode, rows=self.rows[[index]], encoding=self.encoding)[0]
        return self.games.observe(self.mode, rows=self.rows[index], encoding=self.encoding)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.games.observe(self.mode, rows=self.rows, encoding=self.encoding)
        return out if dtype is None else out.astype(dtype)


class Ended(NamedTuple):
    """The games that ended on a step, before they were re-dealt (one entry per row)."""

    rows: np.ndarray  # int[k]: game indices
    seats: np.ndarray  # int[k]: the learner's seat
    num_players: np.ndarray  # int[k]
    vp: np.ndarray  # int[k, 5]: final VP by seat
    cash: np.ndarray  # int[k, 5]: final cash by seat
    rewards: np.ndarray  # float32[k]: the learner's reward
    observations: np.ndarray  # float32[k, D]: the learner's view of the finished game


class LearnerGames:
    """``num_games`` games with one learner seat each; ``step(actions)`` plays the learners' moves and then the
    opponents' until every game waits for its learner again.

    ``opponents``: an ``OpponentTable``; an agent (every opponent seat) or a list of agents (one per opponent seat,
    clockwise from the learner), agents of the protocol or callables ``f(observation, action_mask)``, which read
    ``observation_mode`` and ``observation_encoding``; or None, ``RandomOpponents``.
    """

    def __init__(self, num_games: int, num_players=4, opponents=None, observation_mode: str = "tracked",
                 reward_mode: str = "rank", seed=None, cards=None, observation_encoding: str = "onehot"):
        self.player_counts = check_settings(num_players, observation_mode, reward_mode, observation_encoding)
        self.observation_mode = observation_mode
        self.encoding = observation_encoding
        self.reward_mode = reward_mode
        if opponents is None:
            opponents = RandomOpponents(seed)
        elif not isinstance(opponents, OpponentTable):
            opponents = OpponentTable(opponents, observation_mode, observation_encoding, seed)
        self.opponents = opponents
        self.rng = np.random.default_rng(seed)
        counts, seeds = self._draw(num_games)
        self.games = VectorGame(counts, seeds=seeds, cards=cards)
        self.num_games = num_games
        self.learner = np.zeros(num_games, np.int64)
        self._start(np.arange(num_games), counts)

    def _draw(self, count: int):
        """Player counts and deal seeds for ``count`` new games."""
        counts = self.rng.choice(self.player_counts, size=count)
        seeds = self.rng.integers(0, 2 ** 63 - 1, size=count)
        return counts, seeds

    def _start(self, rows: np.ndarray, counts: np.ndarray) -> None:
        """Seat the learners of freshly dealt games, draw their opponents and play up to the learners' moves."""
        self.learner[rows] = self.rng.integers(0, counts)
        self.opponents.seat(rows, counts, self.learner[rows])
        if (self.games.current_player[rows] != self.learner[rows]).any():  # every other game waits for its learner
            self._advance()

    def reset(self) -> np.ndarray:
        """Re-deal every game; the learners' observations."""
        counts, seeds = self._draw(self.num_games)
        rows = np.arange(self.num_games)
        self.games.reset(rows, seeds=seeds.tolist(), num_players=counts)
        self._start(rows, counts)
        return self.observe()

    def observe(self) -> np.ndarray:
        """float32[B, D]: every learner's observation (each game waits for its learner)."""
        return self.games.observe(self.observation_mode, encoding=self.encoding)

    def action_masks(self) -> np.ndarray:
        """bool[B, A]: every learner's legal actions."""
        return self.games.legal_action_mask()

    def starting_contract_labels(self) -> np.ndarray:
        """int64[B, MAX_PLAYERS - 1]: ``starting_contract_labels`` of every game's learner (each waits for him)."""
        return starting_contract_labels(self.games, self.observation_mode)

    def step(self, actions, where=None):
        """Play the learners' actions, then the opponents'; (observations, rewards, dones, Ended or None).

        A game that ended is re-dealt: its row in ``observations`` is the new game's first learner view.
        ``where`` (bool[B]): only those learners move (the others' actions are ignored).
        """
        vg = self.games
        vg.step(actions, where=where)
        self._advance()
        over = vg.is_over
        rewards = np.zeros(self.num_games, np.float32)
        ended = None
        if over.any():
            rows = np.flatnonzero(over)
            seats = self.learner[rows]
            rewards[rows] = vg.rewards(self.reward_mode)[rows, seats]
            vp, cash = vg.scores(rows)
            ended = Ended(rows, seats, vg.num_players[rows], vp, cash, rewards[rows],
                          vg.observe(self.observation_mode, rows=rows, seats=seats, encoding=self.encoding))
            counts, seeds = self._draw(len(rows))
            vg.reset(rows, seeds=seeds.tolist(), num_players=counts)
            self._start(rows, counts)
        return self.observe(), rewards, over, ended

    def _advance(self) -> None:
        """Opponents move, batched, until every game waits for its learner."""
        self.opponents.play(self.games, self.learner)


def starting_contract_labels(games: VectorGame, mode: str = "tracked") -> np.ndarray:
    """int64[B, MAX_PLAYERS - 1]: per game, for the player to act and each opponent in his order (the next seat
    first), the index in ``cards.start_contracts`` of the opponent's starting contract where it is hidden from the
    player in ``mode`` (``belief.hidden_locations``), -1 where he can locate it, the seat is empty or the game is
    over: the targets of a learned belief."""
    from ..belief import NOT_HIDDEN, hidden_locations  # beliefs compile only where they are asked for

    out = np.full((games.num_games, MAX_PLAYERS - 1), -1, np.int64)
    live = np.flatnonzero(games.current_player >= 0)
    hidden = hidden_locations(games, mode, rows=live).astype(np.int64)
    rows = np.arange(len(live))[:, None]
    players = games.num_players[live, None].astype(np.int64)
    offsets = np.arange(1, MAX_PLAYERS)[None, :]
    opponents = (games.current_player[live, None].astype(np.int64) + offsets) % players
    contracts = games.batch.starting_contract[live[:, None], opponents].astype(np.int64)
    secret = (offsets < players) & (hidden[rows, np.maximum(contracts, 0)] != NOT_HIDDEN)
    out[live] = np.where(secret, np.searchsorted(games.cards.start_contracts, contracts), -1)
    return out


def check_settings(num_players, observation_mode: str, reward_mode: str, observation_encoding: str) -> np.ndarray:
    """LearnerGames' settings checked (a ValueError saying what is allowed); the player counts as int64[k]."""
    counts = np.atleast_1d(np.asarray(num_players, dtype=object))
    if counts.size == 0 or any(isinstance(n, bool) or not isinstance(n, (int, np.integer))
                               or not MIN_PLAYERS <= n <= MAX_PLAYERS for n in counts.tolist()):
        raise ValueError(f"num_players must be a player count {MIN_PLAYERS}-{MAX_PLAYERS} or a non-empty list of "
                         f"them (drawn uniformly per game), got {num_players!r}")
    check_mode(observation_mode)
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode must be one of {', '.join(map(repr, REWARD_MODES))}, got {reward_mode!r}")
    encoder_for(observation_encoding)  # checks the encoding
    return counts.astype(np.int64)
