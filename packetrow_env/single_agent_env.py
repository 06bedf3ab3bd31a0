"""A single-agent Gymnasium view of Packet Row for SB3 and friends: the learner plays one seat, opponents the rest.

Opponents move through the agent protocol (``agent_protocol``): each seat's ``act`` on its view.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from . import actions
from .agent_protocol import as_agent
from .cards import resolve
from .engine import Game, IllegalActionError
from .env import check_options, final_rewards, saved_position
from .game_info import check_num_players
from .observation import encoder
from .seat_view import SeatView

RENDER_MODES = ("ansi",)


def choose(opponent, game, seat: int, mode: str = "tracked") -> int:
    """Deprecated (to be removed in 0.5): ``as_agent(opponent).act(SeatView(game, seat, mode))``, the seat's
    action by an agent or a callable ``f(observation, action_mask)``."""
    warnings.warn("packetrow_env.single_agent_env.choose is deprecated: use "
                  "packetrow_env.agent_protocol.as_agent(opponent).act(SeatView(game, seat, mode))",
                  DeprecationWarning, stacklevel=2)
    return int(as_agent(opponent).act(SeatView(game, seat, mode)))


class SingleAgentEnv(gymnasium.Env):
    """One learner seat (random each episode by default) against opponents stepped by the env itself.

    ``opponents`` is one opponent for every other seat, a list with one per other seat (clockwise from
    the learner), or a sampler with ``sample(rng, count) -> list`` called at every reset (an opponent
    pool). An opponent is an agent of the protocol (``agent_protocol.Agent``: ``act(view)``, a SeatView in the
    env's observation mode) or a callable ``f(observation, action_mask) -> action`` (``agent_protocol.as_agent``);
    agents with a ``reset(seed)`` method are reseeded from the env's generator each episode, so ``reset(seed=s)``
    replays the same episode.
    ``num_players`` may be a count or a sequence of counts to draw from each episode.
    ``illegal_action``: "raise" (default) or "penalize" (end the episode with reward -1, as PettingZoo's
    TerminateIllegalWrapper does; gymnasium's ``check_env`` samples unmasked actions and needs it).
    """

    metadata = {"render_modes": list(RENDER_MODES)}

    def __init__(self, num_players: int | Sequence[int] = 4, opponents=None, seat: int | str = "random",
                 observation_mode: str = "tracked", reward_mode: str = "rank", illegal_action: str = "raise",
                 cards=None, render_mode: str | None = None):
        counts = [num_players] if isinstance(num_players, (int, np.integer)) else list(num_players)
        if not counts:
            raise ValueError("num_players must be a count 2-5 or a non-empty list of them, got an empty list")
        for count in counts:
            check_num_players(count)
        if seat != "random" and (isinstance(seat, bool) or not isinstance(seat, (int, np.integer))
                                 or not 0 <= seat < min(counts)):
            raise ValueError(f"seat must be 'random' or a seat 0-{min(counts) - 1}, got {seat!r}")
        check_options(observation_mode, reward_mode, illegal_action, render_mode, RENDER_MODES)
        if opponents is None:
            raise ValueError("opponents is required: an agent or callable, a list of them, or a sampler")
        self.counts = counts
        self.opponents = opponents
        self.seat_choice = seat
        self.observation_mode = observation_mode
        self.reward_mode = reward_mode
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.cards = resolve(cards)
        self._encoder = encoder(self.cards)
        self.observation_space = spaces.Box(0.0, self._encoder.high, (self._encoder.size_of(observation_mode),),
                                            np.float32)
        self.action_space = spaces.Discrete(actions.NUM_ACTIONS)
        self.game: Game | None = None
        self.seat = 0
        self.seated: list = []  # opponent per seat (None at the learner's seat)
        self._ended = False  # an illegal action ended the episode (penalize)

    def _opponents_for(self, count: int) -> list:
        spec = self.opponents
        if hasattr(spec, "sample"):
            chosen = list(spec.sample(self.np_random, count))
        elif isinstance(spec, (list, tuple)):
            chosen = list(spec)
        else:
            chosen = [spec] * count
        if len(chosen) != count:
            raise ValueError(f"{count} opponents are needed for a {count + 1}-player game, got {len(chosen)}")
        return chosen

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode: draw the player count, the learner's seat and the opponents; play until the learner acts."""
        super().reset(seed=seed)
        rng = self.np_random
        n = int(rng.choice(self.counts))
        self.seat = int(rng.integers(n)) if self.seat_choice == "random" else int(self.seat_choice)
        others = [as_agent(opponent) for opponent in self._opponents_for(n - 1)]
        for opponent in others:
            if hasattr(opponent, "reset"):
                opponent.reset(int(rng.integers(2**63)))
        self.seated = [None] * n
        for k, opponent in enumerate(others, start=1):
            self.seated[(self.seat + k) % n] = opponent
        if options and "state" in options:
            self.game = saved_position(options["state"], n, self.cards)
        else:
            self.game = Game.new(n, seed=int(rng.integers(2**63)), cards=self.cards)
        self._ended = False
        self._play_opponents()
        return self._observation(), self._info()

    def _play_opponents(self):
        game = self.game
        while not game.is_over and game.current_player != self.seat:
            p = game.current_player
            game.step(int(self.seated[p].act(SeatView(game, p, self.observation_mode))))

    def _observation(self) -> np.ndarray:
        return self._encoder.encode(self.game, self.seat, self.observation_mode)

    def _info(self) -> dict:
        info = {"action_mask": self.action_masks(), "seat": self.seat, "num_players": self.game.num_players}
        if self.game.is_over:
            info["scores"] = self.game.scores()
        return info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (sb3-contrib MaskablePPO calls this); all False when the game is over."""
        if self.game.is_over or self._ended:
            return np.zeros(actions.NUM_ACTIONS, dtype=bool)
        return self.game.legal_action_mask().copy()

    def step(self, action):
        """Play the learner's action, then the opponents' until the learner acts again or the game ends."""
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        if self.game.is_over or self._ended:
            raise RuntimeError("the episode is over: call reset()")
        try:
            self.game.step(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._ended = True
            return self._observation(), -1.0, True, False, {**self._info(), "illegal_action": True}
        self._play_opponents()
        reward = 0.0
        terminated = self.game.is_over
        if terminated:
            reward = final_rewards(self.game.scores(), self.reward_mode)[self.seat]
        return self._observation(), reward, terminated, False, self._info()

    def render(self):
        """The table as the learner sees it."""
        from .render import render
        return render(self.game, seat=self.seat)

