"""The PettingZoo AEC environment of Packet Row: ``env()`` (order-enforced) and ``raw_env()``.

Version history (the env id ``packetrow_vN`` names the version):

- v0 (``packetrow_v0``): rules v0, where the engine paid every shipment with its cheapest cards;
  48 actions; observation of ``observation.layout`` v0 (``round`` as round / 20, which real games of
  25-31 rounds exceed); saved games schema 1.
- v1 (``packetrow_v1``): rules v1, the player chooses how to pay (docs/rules.md, R-SHIP-7): a shipment with
  more than one payment option enters phase ``pay``, where ``game.payment_options()`` lists them.
  Action layout 48 -> 48 + K: ``actions.PAY + k`` pays with option k (K = ``actions.MAX_PAYMENT_OPTIONS``).
  Observation: the pieces ``paying`` and ``payment_options`` (what each option discards) are appended to
  the v0 layout, and ``round`` becomes round / (round + 30), in [0, 1) for every game; the first
  ``encoder().v0_size`` floats are otherwise v0 (``Encoder.v0_observation`` rebuilds a v0 vector).
  Saved games: schema 2 (phase ``pay`` and ``resume_phase``); schema-1 files load as the same position.
  ``observation_encoding="compact"`` (same version: an option, the default ``onehot`` unchanged) gives the
  same information in about 700 floats (``compact_observation``: supply slots as card-type indices).
- v2 (``packetrow_v2``): every payment choosable, and an observation that holds exactly what the seat knows.
  Action layout 60 -> 61: action 60, ``more``, pages through the payment options (12 a page, forward only: legal
  while options follow the page shown) and ``pay:k`` pays with option k of the page shown; ``game.payment_options()``
  lists them all, no longer the first 12 only (R-SHIP-7). Observation: the piece ``payment_page`` follows
  ``payment_options``, and per-board pieces are appended for the card types that lie on several boards, so
  positions that differ in what the seat knows give different vectors; the v1 vector is a prefix
  (``Encoder.v1_observation`` rebuilds it), and policies exported for v1 keep playing v2 games through that
  adapter (``PolicyAgent`` feeds them the v1 vector; they never choose ``more``). In ``table`` mode the other
  seats no longer see a paying player's options (they are part of his hidden hand). Saved games: schema 3
  (``payment_page``); schema-1 and -2 files load (a schema-2 file in phase pay on page 0). ``game_info`` describes the game in one place (``packetrow info`` prints it).
"""

from __future__ import annotations

import warnings

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from . import actions, render as text
from .cards import resolve
from .engine import Game, IllegalActionError
from .compact_observation import encoder_for
from .game_info import GAME_TYPE, check_num_players, game_info
from .observation import MODES, encoder
from .scoring import REWARD_MODES, final_rewards
from .seat_view import SeatView

ILLEGAL_ACTIONS = ("raise", "penalize")
RENDER_MODES = ("ansi", "human")


def check_option(name, value, allowed):
    """Raise a ValueError naming the option and its allowed values unless ``value`` is one of them."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def check_options(observation_mode: str, reward_mode: str, illegal_action: str, render_mode: str | None,
                  render_modes: tuple[str, ...]) -> None:
    """Raise a ValueError naming the first option, of those this env and ``SingleAgentEnv`` share, that is not one of
    its allowed values (``render_modes``: the env's own, besides None)."""
    check_option("observation_mode", observation_mode, MODES)
    check_option("reward_mode", reward_mode, REWARD_MODES)
    check_option("illegal_action", illegal_action, ILLEGAL_ACTIONS)
    check_option("render_mode", render_mode, (*render_modes, None))


def saved_position(state: dict, num_players: int, cards) -> Game:
    """The saved game ``state`` (``Game.to_dict()``) as a ``Game``; a ValueError unless it has ``num_players`` seats."""
    game = Game.from_dict(state, cards=cards)
    if game.num_players != num_players:
        raise ValueError(f"the saved game has {game.num_players} players, not {num_players}")
    return game


class raw_env(AECEnv):
    """Packet Row as a PettingZoo AEC environment, without the order-enforcing wrapper."""

    metadata = {"render_modes": list(RENDER_MODES), "name": GAME_TYPE.env_id, "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, num_players: int = 4, observation_mode: str = "tracked", reward_mode: str = "rank",
                 illegal_action: str = "raise", cards=None, render_mode: str | None = None,
                 random_start: bool = False, observation_encoding: str = "onehot"):
        super().__init__()
        check_num_players(num_players)
        check_options(observation_mode, reward_mode, illegal_action, render_mode, RENDER_MODES)
        self.num_players = num_players
        self.observation_mode = observation_mode
        self.reward_mode = reward_mode
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.random_start = random_start
        self.cards = resolve(cards)
        self.observation_encoding = observation_encoding
        self._encoder = encoder_for(observation_encoding, self.cards)  # checks the encoding
        self.possible_agents = [f"player_{p}" for p in range(num_players)]
        self._seat = {agent: p for p, agent in enumerate(self.possible_agents)}
        info = game_info(num_players, self.cards)
        size = info.observation_sizes[observation_mode, observation_encoding]
        num_actions = info.num_distinct_actions
        self.observation_spaces = {agent: spaces.Dict({
            "observation": spaces.Box(0.0, info.observation_high[observation_encoding], (size,), np.float32),
            "action_mask": spaces.Box(0, 1, (num_actions,), np.int8)}) for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(num_actions) for agent in self.possible_agents}
        # state() is seat 0's one-hot observation in full mode, whatever this env's mode and encoding
        self.state_space = spaces.Box(0.0, info.observation_high["onehot"], (info.observation_sizes["full", "onehot"],),
                                      np.float32)
        self._no_mask = np.zeros(num_actions, dtype=np.int8)
        self._no_mask.flags.writeable = False
        self._seeds = np.random.default_rng()
        self.game = None

    def observation_space(self, agent):
        """The (fixed) observation space of an agent."""
        return self.observation_spaces[agent]

    def action_space(self, agent):
        """The (fixed) action space of an agent: Discrete(game_info's num_distinct_actions)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Deal a new game (``seed``) or start from a saved position (``options={"state": game.to_dict()}``)."""
        options = options or {}
        unknown = set(options) - {"state"}
        if unknown:  # PettingZoo lets callers pass options an env does not use: say so, but go on
            warnings.warn(f"reset ignores unknown options {sorted(unknown)}; packetrow uses only 'state'", stacklevel=2)
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
        if "state" in options:
            game = saved_position(options["state"], self.num_players, self.cards)
        else:
            game = Game.new(self.num_players, seed=int(self._seeds.integers(2**63)), random_start=self.random_start,
                            cards=self.cards)
        self.game = game
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {"action_mask": self._no_mask} for agent in self.agents}
        self._observations = {}
        if game.is_over:  # a saved finished game: everyone is done, with the game's final rewards
            self._end(final_rewards(game.scores(), self.reward_mode))
            self._accumulate_rewards()
            self.agent_selection = self.agents[0]
        else:
            self._select()

    def _select(self):
        """Point agent_selection and the action masks at the player to act."""
        agent = self.possible_agents[self.game.current_player]
        self.agent_selection = agent
        self.infos[agent]["action_mask"] = self.game.legal_action_mask().astype(np.int8)

    def observe(self, agent):
        """The agent's observation dict; its action mask is zeros unless it is the agent to act."""
        cached = self._observations.get(agent)
        if cached is None:
            seat = self._seat[agent]
            vector = self._encoder.encode(self.game, seat, self.observation_mode)
            cached = self._observations[agent] = {"observation": vector, "action_mask": self.infos[agent]["action_mask"]
                                                  if agent in self.infos else self._no_mask}
        return cached

    def seat_view(self, agent=None) -> SeatView:
        """What ``agent`` (default: the agent to act) knows, for an agent's ``act``: a SeatView in this env's mode."""
        agent = agent or self.agent_selection
        seat = self._seat[agent]
        mask = self.infos[agent]["action_mask"] if agent in self.infos else self._no_mask
        # the view's own observation is the one-hot encoding (agents read it); a compact env's is encoded there
        vector = self.observe(agent)["observation"] if self.observation_encoding == "onehot" else None
        return SeatView(self.game, seat, self.observation_mode, observation=vector,
                        action_mask=mask)

    def state(self) -> np.ndarray:
        """A global full-information vector for centralised critics, in ``state_space``: seat 0's one-hot observation
        in ``full`` mode (privileged: every hand and deck, never a fair observation for a seat)."""
        return encoder(self.cards).state_vector(self.game)

    def step(self, action):
        """Apply the selected agent's action (None for an agent that is already done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        try:
            self.game.step(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            penalty = [0.0] * self.num_players
            penalty[self._seat[agent]] = -1.0
            self._end(penalty)
        else:
            self.infos[agent]["action_mask"] = self._no_mask
            self._observations = {}
            if self.game.is_over:
                self._end(final_rewards(self.game.scores(), self.reward_mode))
            else:
                self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end(self, rewards: list[float]):
        for agent, reward in zip(self.possible_agents, rewards):
            self.rewards[agent] = reward
            self.terminations[agent] = True
            self.infos[agent]["action_mask"] = self._no_mask
        self._observations = {}

    def render_text(self, agent=None) -> str:
        """The table as ``agent`` (default: the agent to act) may see it."""
        return SeatView(self.game, self._seat[agent or self.agent_selection], self.observation_mode).render_text()

    def render(self):
        """Text of the table for the agent to act: returned in 'ansi' mode, printed in 'human' mode."""
        if self.render_mode is None:
            raise ValueError("render() needs render_mode 'ansi' or 'human' (pass render_mode= to env())")
        out = self.render_text()
        if self.render_mode == "human":
            print(out)
            return None
        return out

    def action_to_string(self, action: int) -> str:
        """An action as 'name: what it does now', e.g. 'take:1: take 3 cotton ($10) from the market'."""
        name = actions.name(action)
        if self.game is None or self.game.is_over:
            return name
        return f"{name}: {text.describe_action(self.game, action)}"

    @staticmethod
    def string_to_action(text_: str) -> int:
        """The action id of a name ('take:1', 'pass', 'ship', ...), a number, or an action_to_string text."""
        head = text_.split(": ", 1)[0]
        return actions.parse(head)

    def close(self):
        """Nothing to release."""


class _OrderEnforcing(OrderEnforcingWrapper):
    """PettingZoo's order enforcement reading the raw env's attributes directly, not through its ``__getattr__``
    (speed: docs/benchmarks.md#the-engine)."""

    def _forward(name):  # noqa: N805 - builds properties at class creation
        def get(self):
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self.env, name)
        return property(get)

    agents = _forward("agents")
    agent_selection = _forward("agent_selection")
    rewards = _forward("rewards")
    terminations = _forward("terminations")
    truncations = _forward("truncations")
    infos = _forward("infos")
    del _forward

    @property
    def _cumulative_rewards(self):
        return self.env._cumulative_rewards

    @property
    def num_agents(self):
        """The number of agents still in the game."""
        return len(self.agents)

    def last(self, observe: bool = True):
        """(observation, cumulative reward, terminated, truncated, info) of the agent to act."""
        if not self._has_reset:
            raise AttributeError("last() cannot be called before reset")
        return self.env.last(observe)


def env(**kwargs) -> AECEnv:
    """The Packet Row AEC environment with order enforcement (see ``raw_env`` for the options)."""
    return _OrderEnforcing(raw_env(**kwargs))
