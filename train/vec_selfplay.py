"""Self-play on the batched engine: an SB3 ``VecEnv`` whose slots are learner seats of one VectorGame.

Each slot is one game with one learner seat (``packetrow_env.vector.learner.LearnerGames``); the other seats
are drawn per game from an ``OpponentPool`` and moved by ``PoolOpponents``, an ``OpponentTable`` that speaks to them
through the agent protocol (``packetrow_env.agent_protocol``, docs/agent_protocol.md): the random, heuristic and
snapshot seats through their compiled forms, inside one compiled call per round (``opponents_batch``); any other
agent through ``act_batch``: all waiting games of all snapshot policies in one compiled call (``PolicyAgent``),
random opponents in one numpy draw, the heuristic in one compiled call per threshold, and agents without a batched
form one game at a time (they read a ``SeatView`` of a ``Game``: the one per-game cost left, so give them the share
the throughput allows, docs/benchmarks.md).
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from packetrow_agents.opponents_batch import OpponentKernel
from packetrow_agents.policy import NumpyPolicy
from packetrow_agents.registry import make_agent
from packetrow_env.vector import VectorGame
from packetrow_env.vector.gymnasium_env import single_spaces
from packetrow_env.vector.learner import LearnerGames, check_settings
from packetrow_env.vector.opponents import OpponentTable

from .pool import POLICY_SOURCES, OpponentPool, member_name


class PoolOpponents(OpponentTable):
    """The opponents of a batch of games, drawn per game and seat from an OpponentPool and moved batched;
    ``compiled``: the random, heuristic and snapshot seats play inside one numba call per round
    (``packetrow_agents.opponents_batch``), the others, and every seat without a compiled form, through
    ``act_batch``."""

    def __init__(self, pool: OpponentPool, observation_mode: str = "tracked", seed=None,
                 observation_encoding: str = "onehot", compiled: bool = True):
        # observation_encoding: what the snapshots read (the learner's encoding)
        super().__init__((), observation_mode, observation_encoding, seed, OpponentKernel if compiled else None)
        self.pool = pool
        self.entries: list = []  # id -> ("snapshot" | "exploiter" | "agent", name, agent)
        self._ids: dict = {}
        self.previous: dict[int, list[str]] = {}  # game -> the names of its last opponents, kept at a re-deal

    def _entry(self, source: str, index) -> int:
        if index is not None:
            step, policy = self.pool.members(source)[index]
            name = member_name(source, step)
            key = (name.partition("@")[0], name, id(policy))  # ("snapshot" | "exploiter", name, the policy)
        else:
            key = ("agent", source)
        found = self._ids.get(key)
        if found is None:  # a new agent only for a new key (a PolicyAgent per seat drawn cost 8 us a learner step)
            agent = self.pool.member_agent(source, index) if index is not None else make_agent(source, 0)
            found = self._ids[key] = self.join(agent)
            self.entries.append((key[0], key[1], agent))
        return found

    def policy_examples(self) -> list:
        """A PolicyAgent of a policy the pool can seat now (the newest of the first policy source with weight and
        members), or none: the types of the compiled mover's arguments depend only on whether a policy is seated
        (``OpponentKernel.compile_jobs``)."""
        pool = self.pool
        for mixture in (pool.mixture, *pool.by_players.values()):
            for source, weight in mixture.items():
                if weight > 0 and source in POLICY_SOURCES and pool.members(source):
                    return [pool.member_agent(source, len(pool.members(source)) - 1)]
        return []

    def seat(self, rows, num_players, learner_seats) -> None:
        """Draw the opponents of freshly dealt games ``rows``: one pool draw per opponent seat."""
        rows = np.asarray(rows)
        for i, before in zip(rows.tolist(), self.vacate(rows).tolist()):
            self.previous[i] = [self.entries[e][1] for e in before if e >= 0]
        counts = np.asarray(num_players).tolist()
        drawn = iter(self.pool.draw_games(self.rng, counts))
        for i, n, learner in zip(rows.tolist(), counts, np.asarray(learner_seats).tolist()):
            for q in range(n):
                if q != learner:
                    self.assigned[i, q] = self._entry(*next(drawn))


class SelfPlayVecEnv(VecEnv):
    """An SB3 VecEnv of ``num_envs`` learner seats in one VectorGame, opponents from ``pool`` (MaskablePPO-ready);
    ``compiled_opponents``: random, heuristic and snapshot seats move in compiled code (``PoolOpponents``)."""

    render_mode = None

    def __init__(self, num_envs: int, pool: OpponentPool, num_players=4, observation_mode: str = "tracked",
                 reward_mode: str = "rank", seed=None, cards=None, observation_encoding: str = "onehot",
                 compiled_opponents: bool = True):
        check_settings(num_players, observation_mode, reward_mode, observation_encoding)
        super().__init__(num_envs, *single_spaces(observation_mode, observation_encoding, cards))
        self.opponents = PoolOpponents(pool, observation_mode, seed, observation_encoding, compiled_opponents)
        self._args = dict(num_players=num_players, observation_mode=observation_mode, reward_mode=reward_mode,
                          cards=cards, observation_encoding=observation_encoding)
        self._seed = seed
        self._compiled = compiled_opponents
        self.games = None
        self._actions = None
        self._lengths = np.zeros(num_envs, np.int64)
        self._rewards = np.zeros(num_envs, np.float64)

    def _new_games(self):
        # the opponents' draws follow the games' seats, so both start from the same seed
        self.opponents.rng = np.random.default_rng(self._seed)
        self.games = LearnerGames(self.num_envs, opponents=self.opponents, seed=self._seed, **self._args)

    def compile_jobs(self) -> list[tuple]:
        """``(kernel, example arguments)`` of the numba kernels this env's games and compiled opponents call (the
        argument types of their calls, ``VectorGame.compile_jobs``), with the pool's policies as they are now: for
        ``packetrow_train.compile_ahead`` before the first reset."""
        if not self._compiled:
            return VectorGame.compile_jobs(self._args["cards"])
        mover = OpponentKernel(self._args["cards"], self._args["observation_mode"], self._args["observation_encoding"])
        mover.set_agents(self.opponents.policy_examples())
        return VectorGame.compile_jobs(self._args["cards"], [mover])

    def add_snapshot(self, policy: NumpyPolicy, step: int) -> None:
        """Add a snapshot of the learner to the opponent pool."""
        self.opponents.pool.add(policy, step)

    def add_exploiter(self, policy: NumpyPolicy, step: int) -> None:
        """Add a league's exploiter to the opponent pool."""
        self.opponents.pool.add_exploiter(policy, step)

    def record_results(self, results) -> None:
        """Update the pool's loss-rate estimates (``OpponentPool.record_results``)."""
        self.opponents.pool.record_results(results)

    def part(self, index: int, num_envs: int) -> SelfPlayVecEnv:
        """A rollout worker's own games: a SelfPlayVecEnv of ``num_envs`` slots with this env's settings and
        its pool object, seeded from this env's seed and the worker's ``index`` (unseeded if this env is); its
        games are dealt at its reset."""
        seed = None if self._seed is None else int(np.random.SeedSequence([self._seed, index]).generate_state(1)[0])
        return SelfPlayVecEnv(num_envs, self.opponents.pool, seed=seed, compiled_opponents=self._compiled,
                              **self._args)

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

    def starting_contract_labels(self) -> np.ndarray:
        """int64[num_envs, MAX_PLAYERS - 1]: the learners' hidden opponents' starting contracts, the belief head's
        targets (``LearnerGames.starting_contract_labels``)."""
        return self.games.starting_contract_labels()

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
