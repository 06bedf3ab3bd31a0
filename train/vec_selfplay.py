"""Self-play on the batched engine: an SB3 ``VecEnv`` whose slots are learner seats of one VectorGame.

Each slot is one game with one learner seat (``packetrow_env.vector.learner.LearnerGames``); the other seats
are drawn per game from an ``OpponentPool`` and moved batched by ``PoolOpponents``: all waiting games of all
snapshot policies in one compiled call (``packetrow_agents.policy_batch.PolicyStack``; one numpy forward per
snapshot where their architectures differ), random opponents in one numpy draw, the heuristic (``HeuristicAgent``,
any threshold) in one compiled call over its games (``packetrow_agents.heuristic_batch``: the agent's own
action on each seat's view), and other scripted agents one game at a time (they read a ``SeatView`` of a
``Game``: the one per-game cost left, so give them the share the measured throughput allows,
benchmarks/training_speed.py).
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from packetrow_agents.heuristic import HeuristicAgent
from packetrow_agents.heuristic_batch import heuristic_actions
from packetrow_agents.policy import NumpyPolicy
from packetrow_agents.policy_batch import PolicyStack, same_architecture
from packetrow_agents.registry import make_agent
from packetrow_env.seat_view import SeatView
from packetrow_env.state import MAX_PLAYERS
from packetrow_env.vector.learner import LearnerGames, random_legal

from .pool import OpponentPool

STACK_ROWS_PER_POLICY = 8  # PoolOpponents: one PolicyStack call up to this many rows per snapshot


class PoolOpponents:
    """The opponents of a batch of games, drawn per game and seat from an OpponentPool and moved batched."""

    def __init__(self, pool: OpponentPool, observation_mode: str = "tracked", seed=None,
                 observation_encoding: str = "onehot"):
        self.pool = pool
        self.observation_mode = observation_mode
        self.observation_encoding = observation_encoding  # what the snapshots read (the learner's encoding)
        self.rng = np.random.default_rng(seed)
        self.entries: list = []  # id -> ("snapshot", step, policy) | ("random",) | ("agent", spec, agent)
        self._ids: dict = {}
        self._is_snapshot = np.zeros(0, bool)  # by entry id
        self._stacked: PolicyStack | None = None  # of the snapshot entries; None where their architectures differ
        self._stack_stale = True  # a snapshot entry was added since the stack was built
        self._stack_index = np.zeros(0, np.int64)  # entry id -> index in the stack
        self.assigned = np.zeros((0, MAX_PLAYERS), np.int64)
        self.previous: dict[int, list[str]] = {}  # game -> the names of its last opponents, kept at a re-deal

    def _entry(self, source: str, index) -> int:
        if index is not None:
            step, policy = self.pool.snapshots[index]
            key = ("snapshot", step, id(policy))
            entry = ("snapshot", f"snapshot@{step}", policy)
        elif source == "random":
            key = entry = ("random", "random")
        else:
            key = ("agent", source)
            entry = ("agent", source, make_agent(source, 0))
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self.entries)
            self.entries.append(entry)
            self._is_snapshot = np.append(self._is_snapshot, entry[0] == "snapshot")
            self._stack_stale |= entry[0] == "snapshot"
        return found

    def seat(self, rows, num_players, learner_seats) -> None:
        """Draw the opponents of freshly dealt games ``rows``: one pool draw per opponent seat."""
        rows = np.asarray(rows)
        if len(rows) and rows.max() >= len(self.assigned):
            grown = np.full((rows.max() + 1, MAX_PLAYERS), -1, np.int64)
            grown[:len(self.assigned)] = self.assigned
            self.assigned = grown
        for i in rows.tolist():
            self.previous[i] = [self.entries[e][1] for e in self.assigned[i].tolist() if e >= 0]
        self.assigned[rows] = -1
        total = int(np.sum(num_players)) - len(rows)
        drawn = iter(self.pool.draw(self.rng, total))
        for i, n, learner in zip(rows.tolist(), np.asarray(num_players).tolist(), np.asarray(learner_seats).tolist()):
            for q in range(n):
                if q != learner:
                    self.assigned[i, q] = self._entry(*next(drawn))

    def act(self, games, rows, observations, masks) -> np.ndarray:
        """One action per waiting game: grouped by opponent, each group in one call (the snapshots' rows are
        encoded in one call for all of them; the other opponents read no observation)."""
        seats = games.current_player[rows]
        ids = self.assigned[rows, seats]
        out = np.zeros(len(rows), np.int64)
        is_snapshot = self._is_snapshot[ids]
        snapshot_rows = np.flatnonzero(is_snapshot)
        if len(snapshot_rows):
            out[snapshot_rows] = self._snapshot_actions(ids[snapshot_rows], observations[snapshot_rows],
                                                        masks[snapshot_rows])
        for entry_id in np.unique(ids[~is_snapshot]).tolist():
            group = np.flatnonzero(ids == entry_id)
            entry = self.entries[entry_id]
            if entry[0] == "random":
                out[group] = random_legal(masks[group], self.rng)
            elif type(entry[2]) is HeuristicAgent:  # exactly the documented agent (a subclass may play otherwise)
                out[group] = heuristic_actions(games, rows[group], self.observation_mode, self.rng,
                                               entry[2].threshold, masks[group])
            else:
                agent = entry[2]
                for k in group.tolist():
                    view = SeatView(games.game(int(rows[k])), int(seats[k]), self.observation_mode)
                    out[k] = agent.act(view)
        return out

    def _snapshot_actions(self, ids, observations, masks) -> np.ndarray:
        """The actions of snapshot entries ``ids`` (one per row): one PolicyStack call for all of them, or one
        numpy forward per snapshot where there are many rows per snapshot or their architectures differ."""
        groups = np.unique(ids).tolist()
        stack = self._stack()
        # measured (benchmarks/policy_forward.py): one compiled call beats a numpy forward per snapshot up to about
        # 8 rows per snapshot; beyond, BLAS's products win
        if stack is not None and len(ids) <= STACK_ROWS_PER_POLICY * len(groups):
            return stack.actions(self._stack_index[ids], observations, masks, self.rng, self.pool.deterministic)
        out = np.zeros(len(ids), np.int64)
        for entry_id in groups:
            group = np.flatnonzero(ids == entry_id)
            out[group] = _policy_actions(self.entries[entry_id][2], observations[group], masks[group], self.rng,
                                         self.pool.deterministic)
        return out

    def _stack(self) -> PolicyStack | None:
        """A PolicyStack of every snapshot entry (built again after one is added), or None where they differ."""
        if self._stack_stale:
            snapshot_ids = np.flatnonzero(self._is_snapshot)
            policies = [self.entries[e][2] for e in snapshot_ids.tolist()]
            same = all(same_architecture(policies[0], p) for p in policies)
            self._stack_index = np.full(len(self.entries), -1, np.int64)
            self._stack_index[snapshot_ids] = np.arange(len(snapshot_ids))
            self._stacked = PolicyStack(policies) if same else None
            self._stack_stale = False
        return self._stacked


def _policy_actions(policy: NumpyPolicy, observations, masks, rng, deterministic: bool) -> np.ndarray:
    """A snapshot's actions for a group of games: one forward, masked, sampled (or argmax)."""
    logits = policy.logits(observations).astype(np.float64)
    logits[~masks] = -np.inf
    if deterministic:
        return logits.argmax(axis=1)
    gumbel = -np.log(-np.log(rng.random(logits.shape)))  # argmax(logits + Gumbel) samples softmax(logits)
    return (logits + gumbel).argmax(axis=1)


class SelfPlayVecEnv(VecEnv):
    """An SB3 VecEnv of ``num_envs`` learner seats in one VectorGame, opponents from ``pool`` (MaskablePPO-ready)."""

    render_mode = None

    def __init__(self, num_envs: int, pool: OpponentPool, num_players=4, observation_mode: str = "tracked",
                 reward_mode: str = "rank", seed=None, cards=None, observation_encoding: str = "onehot"):
        from packetrow_env.vector.gymnasium_env import PacketRowVectorEnv

        spaces_of = PacketRowVectorEnv(1, num_players, observation_mode, reward_mode, seed=0, cards=cards,
                                       observation_encoding=observation_encoding)
        super().__init__(num_envs, spaces_of.single_observation_space, spaces_of.single_action_space)
        self.opponents = PoolOpponents(pool, observation_mode, seed, observation_encoding)
        self._args = dict(num_players=num_players, observation_mode=observation_mode, reward_mode=reward_mode,
                          cards=cards, observation_encoding=observation_encoding)
        self._seed = seed
        self.games = None
        self._actions = None
        self._lengths = np.zeros(num_envs, np.int64)
        self._rewards = np.zeros(num_envs, np.float64)

    def _new_games(self):
        # the opponents' draws follow the games' seats, so both start from the same seed
        self.opponents.rng = np.random.default_rng(self._seed)
        self.games = LearnerGames(self.num_envs, opponents=self.opponents, seed=self._seed, **self._args)

    def add_snapshot(self, policy: NumpyPolicy, step: int) -> None:
        """Add a snapshot of the learner to the opponent pool."""
        self.opponents.pool.add(policy, step)

    def reset(self):
        """Deal every game afresh; the learners' observations."""
        if self.games is None:
            self._new_games()
        self._lengths[:] = 0
        self._rewards[:] = 0
        return self.games.reset()

    def step_async(self, actions) -> None:
        """Store the learners' actions."""
        self._actions = np.asarray(actions)

    def step_wait(self):
        """Play the stored actions and the opponents' replies; (observations, rewards, dones, infos)."""
        observations, rewards, dones, ended = self.games.step(self._actions)
        self._lengths += 1
        self._rewards += rewards
        infos = [{} for _ in range(self.num_envs)]
        if ended is not None:
            for k, i in enumerate(ended.rows.tolist()):
                n, seat = int(ended.num_players[k]), int(ended.seats[k])
                best = max(zip(ended.vp[k, :n].tolist(), ended.cash[k, :n].tolist()))
                scores = [{"vp": int(v), "cash": int(c), "winner": (v, c) == best}
                          for v, c in zip(ended.vp[k, :n].tolist(), ended.cash[k, :n].tolist())]
                infos[i] = {"terminal_observation": ended.observations[k], "seat": seat, "num_players": n,
                            "scores": scores, "opponents": self.opponents.previous.get(i, []),
                            "episode": {"r": float(self._rewards[i]), "l": int(self._lengths[i])},
                            "TimeLimit.truncated": False}
                self._lengths[i] = 0
                self._rewards[i] = 0
        return observations, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, NUM_ACTIONS]: the learners' legal actions."""
        return self.games.action_masks()

    def close(self) -> None:
        """Nothing to release."""

    def get_attr(self, attr_name, indices=None):
        """An attribute of this env, once per slot asked."""
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name, value, indices=None) -> None:
        """Set an attribute of this env."""
        setattr(self, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        """``action_masks`` per slot (as sb3-contrib asks it), or any method of this env once per slot asked."""
        rows = self._indices(indices)
        if method_name == "action_masks":
            return list(self.action_masks()[rows])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(rows)

    def env_is_wrapped(self, wrapper_class, indices=None):
        """No slot is a wrapped gymnasium env."""
        return [False] * len(self._indices(indices))

    def seed(self, seed=None):
        """Seed the deals, seats and opponents of the next reset (the games are dealt then: after the trainer
        added its first snapshot, which a pool of snapshots only needs)."""
        self._seed = seed
        self.games = None
        return [seed] * self.num_envs

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)
