"""Packet Row as an OpenSpiel game, ``python_packetrow``: importing this module registers it with pyspiel.

    import pyspiel
    import packetrow_env.openspiel_game  # registers python_packetrow
    game = pyspiel.load_game("python_packetrow(players=3)")

It needs the ``[openspiel]`` extra (``open_spiel``). The engine plays the rules: a state holds one ``Game``.

Parameters: ``players`` (2-5, default 4); ``observation_mode``, what a seat knows, as the env's option of that name:
``tracked`` (default), ``online`` or ``full`` (privileged, not a fair game), the modes a position can be
determinised for (``table`` forgets opponents' hand sizes, so no world consistent with it can be dealt);
``reward_mode``: ``rank`` (default) or ``vp``, zero-sum, or ``win``, general-sum (``game_info.UTILITY``); ``cards``:
a catalogue file, "" for the shipped one. A bad value is a ValueError naming what is allowed.

Chance: explicit. The deal is ``Game.new(players, seed)`` for a 64-bit seed drawn by the first ``SEED_BYTES`` chance
nodes, one byte each (256 equally likely outcomes, the lowest byte first). Explicit outcomes make a history (seed
bytes, then moves) replay to its state, so a seeded ``evaluate_bots`` and Shimmy's ``reset(seed)`` reproduce a
game; a sampled chance node would draw the deal from a generator no caller seeds. Eight small nodes rather than
one of 2^64 outcomes keep ``chance_outcomes`` a list of 256. The limitation, said plainly:
the deals are those 2^64 seeds give through numpy's generator, a finite subset of every way the decks can be
shuffled, chosen by the same dealing code as the rest of the project (the tournaments' uint64 deal seeds are all
among them: ``state_at`` or the bytes of a seed reach any of them).

Information state (string and tensor): the seat's observation in ``observation_mode`` (``observation.encoder``,
one-hot, 2536 floats tracked): what the seat knows of the position now, exact (tests/test_exact_observation.py),
but not the order of the moves that led there, so OpenSpiel's algorithms see an abstraction without perfect
recall of strategically equal positions. The string is that tensor written out (each non-zero float as
``index:value``, the value's exact float32 repr), so two states share a string exactly when they share a tensor.
Observation (string and tensor): the same in ``table`` mode, what the table shows. The tensors' ``dict`` names the
observation layout's pieces. Before the deal every tensor is zeros. ``str(state)``: the table as the seat to act
sees it (``render``), for people.

``resample_from_infostate(player, sampler)``: the project's determinisation (``Game.sample_determinization``) for
that seat in ``observation_mode``, its generator seeded from one draw of ``sampler``; the state it returns sits at
the new position with an empty OpenSpiel history (``state_at``). Cloning copies the engine's game with
``Game.clone``: OpenSpiel clones a Python state by deep-copying its attributes, and the attribute holding the
engine's game deep-copies through ``Game.clone`` (the catalogue shared, not copied).

Length: OpenSpiel keeps ``max_game_length`` in a C++ int (at most 2^31 - 1) and some of its algorithms size arrays by
it. ``game_info``'s proven bound (about 2e11 decisions) counts every page of the most payment options its antichain
argument allows one shipment (about 9.5e10); its other terms come to under 12,000, and no measured shipment had
more than 32 options (docs/benchmarks.md). So the OpenSpiel game is the game cut at ``max_game_length(players,
cards)``: the same bound with at most ``CUT_OPTIONS`` options a shipment (31,824 to 40,602 decisions). A game
that reaches it before its end must have had a shipment with more options than that; such a game ends there as a
draw, every return 0 (zero-sum and general-sum alike). Real games take about 100-250 decisions.

Returns: zeros until the end, then ``scoring.final_rewards`` of the final scores in ``reward_mode``; the utility
bounds are the mode's ([-1, 1] rank, [0, 1] win, +-``most_vp`` vp).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pyspiel

from . import actions, scoring
from .cards import BANKER, BUILDING, Catalogue, resolve
from .determinization import MODES
from .engine import Game
from .game_info import GAME_TYPE, GENERAL_SUM, UTILITY, ZERO_SUM, game_info
from .observation import encoder
from .render import render
from .state import MAX_PLAYERS, MIN_PLAYERS, most_cash

SHORT_NAME = "python_packetrow"
SEED_BYTES = 8  # chance nodes before the deal, one byte of the 64-bit deal seed each
CUT_OPTIONS = 12_000  # payment options a shipment may have within max_game_length (1,000 pages of 12)
TABLE = "table"  # the mode of OpenSpiel's observation: what the table shows
DEFAULTS = {"players": 4, "observation_mode": "tracked", "reward_mode": "rank", "cards": ""}

_UTILITY = {GENERAL_SUM: pyspiel.GameType.Utility.GENERAL_SUM, ZERO_SUM: pyspiel.GameType.Utility.ZERO_SUM}


def _game_type(utility) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=SHORT_NAME, long_name=f"Python {GAME_TYPE.long_name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility, reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=MAX_PLAYERS, min_num_players=MIN_PLAYERS,
        provides_information_state_string=True, provides_information_state_tensor=True,
        provides_observation_string=True, provides_observation_tensor=True,
        parameter_specification=DEFAULTS)


# registered with the default reward mode's utility; each game's own type carries its reward mode's
REGISTERED_TYPE = _game_type(_UTILITY[UTILITY[DEFAULTS["reward_mode"]]])


def max_game_length(num_players: int, cards: Catalogue | str | None = None) -> int:
    """``game_info``'s bound on a game's decisions with at most ``CUT_OPTIONS`` payment options a shipment."""
    longest = game_info(num_players, cards).longest_game
    return dataclasses.replace(longest, payment_options=min(longest.payment_options, CUT_OPTIONS)).decisions


def most_vp(num_players: int, cards: Catalogue) -> int:
    """A bound on one seat's VP: every building, all the cash a player can hold, every banker at the leader's rate."""
    bankers = int((cards.kind == BANKER).sum())
    return (int(cards.vp[cards.kind == BUILDING].sum()) + most_cash(cards) // 10
            + bankers * scoring.leader_banker_points(num_players))


def utility_range(reward_mode: str, num_players: int, cards: Catalogue) -> tuple[float, float]:
    """(min, max) of one seat's final reward in ``reward_mode``."""
    if reward_mode == "vp":  # own VP minus the others' mean
        bound = float(most_vp(num_players, cards))
        return -bound, bound
    return (0.0, 1.0) if reward_mode == "win" else (-1.0, 1.0)


@dataclasses.dataclass(frozen=True)
class Rules:
    """One game's settings, shared by its states (never copied: a clone keeps the same object)."""

    num_players: int
    observation_mode: str
    reward_mode: str
    cards: Catalogue
    max_game_length: int

    def __deepcopy__(self, memo):
        return self


def check_parameters(params: dict) -> Rules:
    """The rules of a game with OpenSpiel parameters ``params``; a ValueError names a bad one and what is allowed."""
    players, mode, reward_mode, path = (params.get(key, default) for key, default in DEFAULTS.items())
    if players not in range(MIN_PLAYERS, MAX_PLAYERS + 1):  # pyspiel has checked each parameter's type
        raise ValueError(f"{SHORT_NAME}: players must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {players!r}")
    if mode not in MODES:
        raise ValueError(f"{SHORT_NAME}: observation_mode must be one of {', '.join(MODES)}, got {mode!r} (the "
                         "information state is what a seat knows, and resampling deals a world consistent with it: "
                         "table mode forgets opponents' hand sizes)")
    if reward_mode not in scoring.REWARD_MODES:
        raise ValueError(f"{SHORT_NAME}: reward_mode must be one of {', '.join(scoring.REWARD_MODES)}, "
                         f"got {reward_mode!r}")
    cards = resolve(path or None)
    return Rules(int(players), mode, reward_mode, cards, max_game_length(int(players), cards))


class PacketRowGame(pyspiel.Game):
    """``python_packetrow``: one player count, observation mode, reward mode and catalogue (the module docstring)."""

    def __init__(self, params=None):
        self.rules = rules = check_parameters(params or {})
        low, high = utility_range(rules.reward_mode, rules.num_players, rules.cards)
        utility = UTILITY[rules.reward_mode]
        info = pyspiel.GameInfo(
            num_distinct_actions=actions.NUM_ACTIONS, max_chance_outcomes=256, num_players=rules.num_players,
            min_utility=low, max_utility=high, utility_sum=None if utility == GENERAL_SUM else 0.0,
            max_game_length=rules.max_game_length)
        super().__init__(_game_type(_UTILITY[utility]), info, {**DEFAULTS, **(params or {})})

    def new_initial_state(self):
        """The state before the deal: the first of ``SEED_BYTES`` chance nodes."""
        return PacketRowState(self)

    def max_chance_nodes_in_history(self):
        """The deal's chance nodes: ``SEED_BYTES``."""
        return SEED_BYTES

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The information state's observer (perfect recall asked) or the table's (the default observation)."""
        if isinstance(iig_obs_type, dict):  # pyspiel passes the parameters alone when no type is asked
            iig_obs_type, params = None, iig_obs_type
        if params:
            raise ValueError(f"{SHORT_NAME}'s observers take no parameters, got {params}")
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return Observer(self.rules, self.rules.observation_mode if perfect_recall else TABLE)


class _Dealt:
    """The engine's game of a dealt state, copied with ``Game.clone`` when OpenSpiel clones the state."""

    __slots__ = ("game",)

    def __init__(self, game: Game):
        self.game = game

    def __deepcopy__(self, memo):
        return _Dealt(self.game.clone())


class PacketRowState(pyspiel.State):
    """A state of ``python_packetrow``: the deal's chance nodes, then the engine's game."""

    def __init__(self, game: PacketRowGame):
        super().__init__(game)
        self._rules = game.rules
        self._seed_bytes: list[int] = []
        self._dealt: _Dealt | None = None

    # ------------------------------------------------------------------ the project's view of it
    @property
    def packetrow_game(self) -> Game | None:
        """The engine's game (None before the deal): read it; a step taken on it bypasses OpenSpiel's history."""
        return None if self._dealt is None else self._dealt.game

    @property
    def deal_seed(self) -> int | None:
        """The seed the chance nodes drew (``Game.new(players, seed)``), None before the deal or after ``state_at``."""
        if len(self._seed_bytes) < SEED_BYTES:
            return None
        return int.from_bytes(bytes(self._seed_bytes), "little")

    @property
    def truncated(self) -> bool:
        """Whether the game was cut at ``max_game_length`` before its end (a draw: the module docstring)."""
        game = self.packetrow_game
        return game is not None and not game.is_over and len(game.state.history) >= self._rules.max_game_length

    # ------------------------------------------------------------------ OpenSpiel's API
    def current_player(self):
        """The seat to act, CHANCE before the deal, TERMINAL at the end."""
        # pyspiel asks this several times a move: written out, not through the properties above
        if self._dealt is None:
            return pyspiel.PlayerId.CHANCE
        game = self._dealt.game
        player = game.current_player  # None once the game is over
        if player is None or len(game.state.history) >= self._rules.max_game_length:
            return pyspiel.PlayerId.TERMINAL
        return player

    def _legal_actions(self, player):
        return self.packetrow_game.legal_actions()

    def chance_outcomes(self):
        """The next byte of the deal seed: 256 outcomes, each 1/256."""
        return [(byte, 1 / 256) for byte in range(256)]

    def _apply_action(self, action):
        if self._dealt is None:
            self._seed_bytes.append(int(action))
            if len(self._seed_bytes) == SEED_BYTES:
                self._dealt = _Dealt(Game.new(self._rules.num_players, seed=self.deal_seed, cards=self._rules.cards))
        else:
            self._dealt.game.step(int(action))  # an illegal action raises here and changes nothing

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return f"seed byte {action}"
        return actions.name(int(action))

    def is_terminal(self):
        """Whether the game is over or cut at ``max_game_length``."""
        return self.current_player() == pyspiel.PlayerId.TERMINAL

    def returns(self):
        """Zeros until the end (and in a cut game); then ``scoring.final_rewards`` in the game's reward mode."""
        game = self.packetrow_game
        if game is None or not game.is_over:
            return [0.0] * self._rules.num_players
        return scoring.final_rewards(game.scores(), self._rules.reward_mode)

    def resample_from_infostate(self, player_id, probability_sampler):
        """A state seat ``player_id`` cannot tell from this one: the hidden cards re-dealt by the project's
        determinisation, its generator seeded from one draw of ``probability_sampler`` (uniform in [0, 1))."""
        game = self.packetrow_game
        if game is None:
            raise ValueError("resample_from_infostate needs a dealt game: the deal's chance nodes come first")
        rng = np.random.default_rng(int(probability_sampler() * 2 ** 53))
        return state_at(self.get_game(), game.sample_determinization(player_id, rng, self._rules.observation_mode))

    def __str__(self):
        game = self.packetrow_game
        if game is None:
            return f"dealing: {len(self._seed_bytes)} of {SEED_BYTES} seed bytes drawn"
        return render(game)


def state_at(game: PacketRowGame, position: Game) -> PacketRowState:
    """A state of ``game`` at the engine position ``position`` (copied), e.g. a determinisation or a loaded save;
    its OpenSpiel history starts empty and its ``deal_seed`` is None. ``position`` must be of the game's player
    count and catalogue file (a ValueError otherwise)."""
    rules = game.rules
    if position.num_players != rules.num_players or Path(position.cards.path) != Path(rules.cards.path):
        raise ValueError(f"the position is a {position.num_players}-player game with the catalogue "
                         f"{position.cards.path}, but this game has {rules.num_players} players and the catalogue "
                         f"{rules.cards.path}")
    state = game.new_initial_state()
    state._dealt = _Dealt(position.clone())
    return state


class Observer:
    """OpenSpiel's Python observer of one mode: the seat's observation vector, its pieces named in ``dict``."""

    def __init__(self, rules: Rules, mode: str):
        self.mode = mode
        self._encoder = encoder(rules.cards)
        self.tensor = np.zeros(self._encoder.size_of(mode), np.float32)
        pieces = self._encoder.pieces_of(mode)
        # pyspiel writes the tensor as the dict's arrays one after another: the pieces tile it, in order
        assert [p.offset for p in pieces] == list(np.cumsum([0] + [p.size for p in pieces[:-1]])) \
            and pieces[-1].offset + pieces[-1].size == len(self.tensor)
        self.dict = {p.name: self.tensor[p.offset:p.offset + p.size].reshape(p.shape) for p in pieces}

    def set_from(self, state: PacketRowState, player: int) -> None:
        """Write ``player``'s observation of ``state`` into ``tensor`` (zeros before the deal)."""
        game = state.packetrow_game
        if game is None:
            self.tensor.fill(0)
        else:
            self.tensor[:] = self._encoder.encode(game, player, self.mode)

    def string_from(self, state: PacketRowState, player: int) -> str:
        """The tensor as text: ``index:value`` for each non-zero float (its exact float32 value)."""
        self.set_from(state, player)
        nonzero = np.flatnonzero(self.tensor)
        values = self.tensor[nonzero].tolist()
        return f"p{player} {self.mode}: " + " ".join(map("{}:{!r}".format, nonzero.tolist(), values))


pyspiel.register_game(REGISTERED_TYPE, PacketRowGame)

__all__ = ["CUT_OPTIONS", "DEFAULTS", "Observer", "PacketRowGame", "PacketRowState", "REGISTERED_TYPE", "Rules",
           "SEED_BYTES", "SHORT_NAME", "TABLE", "check_parameters", "max_game_length", "most_vp", "state_at",
           "utility_range"]
