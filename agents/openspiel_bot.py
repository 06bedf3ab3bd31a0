"""OpenSpiel's bots at the project's table: its Python ISMCTS ready for ``evaluate_bots``, and any pyspiel bot as an
agent of the project's tournaments (the ``[openspiel]`` extra).

``ISMCTSBot`` is OpenSpiel's ``open_spiel.python.algorithms.ismcts.ISMCTSBot`` with a random-rollout evaluator,
seeded, and the one method ``evaluate_bots`` calls that it lacks, ``restart_at``: it keeps nothing between moves
(every ``step`` searches afresh from ``reset``), so restarting is resetting. It also draws its worlds
(``resample_from_infostate``) from its own seeded generator: its default resampler passes a fresh
``pyspiel.UniformProbabilitySampler``, which no caller can seed.

``OpenSpielAgent(make_bot)`` plays a pyspiel bot as an agent (``act(view)``): it deals one world consistent with
what the seat knows (``view.sample_determinization``), puts it in a ``python_packetrow`` state (``state_at``) and
asks the bot, one built per game and seat by ``make_bot(game, seat, seed)`` (the seed is the agent's, as
``reset`` got it; a bot that takes a C++ int needs it reduced, e.g. ``seed % 2**31``). The bot never sees the
true game, and a bot that reads only the information state and ``resample_from_infostate`` (ISMCTS) plays exactly
as on the true state, since a determinisation depends on nothing the seat does not know.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from packetrow_env import openspiel_game
from packetrow_env.seat_view import SeatView

from .base import Agent


class ISMCTSBot(ismcts.ISMCTSBot):
    """OpenSpiel's ISMCTS with random rollouts, seeded, with ``restart_at`` (see the module docstring)."""

    def __init__(self, game: pyspiel.Game, max_simulations: int, seed: int = 0, uct_c: float = 2.0,
                 rollouts: int = 1):
        random_state = np.random.RandomState(seed)
        super().__init__(game, mcts.RandomRolloutEvaluator(rollouts, random_state), uct_c, max_simulations,
                         random_state=random_state)
        self.set_resampler(self.resample_world)

    def restart_at(self, state: pyspiel.State) -> None:
        """Start a new game at ``state``: ISMCTS keeps nothing between moves, so this is ``reset``."""
        self.reset()

    def resample_world(self, state: pyspiel.State, player: int) -> pyspiel.State:
        """A world ``player`` cannot tell from ``state``, drawn with this bot's generator."""
        return state.resample_from_infostate(player, self.random_number)


class OpenSpielAgent(Agent):
    """A pyspiel bot as an agent: ``make_bot(game, seat, seed)`` builds it for a seat of a ``python_packetrow`` game."""

    def __init__(self, make_bot: Callable[[pyspiel.Game, int, int], pyspiel.Bot], name: str = "openspiel",
                 seed: int = 0):
        self.name = name
        self._make_bot = make_bot
        self._games: dict[tuple[int, str, str], pyspiel.Game] = {}  # by player count, mode, catalogue file
        self.reset(seed)

    def reset(self, seed: int) -> None:
        """Reseed for a new game: the worlds dealt and the bots built from now on."""
        self._seed = int(seed)
        self._rng = np.random.default_rng(seed)
        self._bots: dict[tuple[int, str, str, int], pyspiel.Bot] = {}  # by game and seat

    def act(self, view: SeatView) -> int:
        """The bot's move in a world consistent with the view (a view of a game in a mode that can be dealt)."""
        key = (view.num_players, view.mode, str(view.cards.path))
        if key not in self._games:
            self._games[key] = pyspiel.load_game(openspiel_game.SHORT_NAME, {
                "players": view.num_players, "observation_mode": view.mode, "cards": key[2]})
        game = self._games[key]
        if key + (view.seat,) not in self._bots:
            self._bots[key + (view.seat,)] = self._make_bot(game, view.seat, self._seed)
        state = openspiel_game.state_at(game, view.sample_determinization(self._rng))
        return int(self._bots[key + (view.seat,)].step(state))


def ismcts_agent(max_simulations: int, seed: int = 0, uct_c: float = 2.0) -> OpenSpielAgent:
    """OpenSpiel's ISMCTS (``ISMCTSBot``) as an agent, named ``openspiel_ismcts:simulations=N``."""
    return OpenSpielAgent(lambda game, seat, bot_seed: ISMCTSBot(game, max_simulations, bot_seed, uct_c),
                          name=f"openspiel_ismcts:simulations={max_simulations}", seed=seed)


__all__ = ["ISMCTSBot", "OpenSpielAgent", "ismcts_agent"]
