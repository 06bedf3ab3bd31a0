"""One declarative description of Packet Row, after OpenSpiel's ``GameType`` and ``GameInfo``.

``GAME_TYPE`` says what kind of game this is (names, env version, player counts, dynamics, chance, information,
utility per reward mode, reward model); ``game_info(num_players, cards)`` gives the sizes of one game: distinct
actions, the longest possible game in decisions, observation sizes. Every value is read from the code it
describes (actions, state, cards, scoring, the encoders), so a change there changes the description. The env's
metadata and spaces, the ``packetrow info`` command and the docs' tests read it here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from math import ceil
from types import MappingProxyType

from . import actions, cards as card_kinds, payment, state
from .cards import NUM_BOARDS, Catalogue, resolve
from .compact_observation import ENCODINGS, encoder_for
from .knowledge import MODES
from .scoring import REWARD_MODES
from .state import MAX_PLAYERS, MIN_PLAYERS

ENV_VERSION = 2  # the env id's version: env.py's module docstring keeps the history

# OpenSpiel's terms. rank: +1 first .. -1 last with ties sharing their places, so the rewards sum to 0; vp: own VP
# minus the mean of the others' VP, which also sums to 0; win: 1 for each winner (the rules let ties share the
# win) and 0 otherwise, so the sum is the number of winners, usually 1 but not always: general-sum.
ZERO_SUM, GENERAL_SUM = "zero_sum", "general_sum"
UTILITY = MappingProxyType({"rank": ZERO_SUM, "vp": ZERO_SUM, "win": GENERAL_SUM})
assert set(UTILITY) == set(REWARD_MODES), "every reward mode needs its utility kind"


@dataclass(frozen=True)
class GameType:
    """What kind of game Packet Row is: fixed for every player count and catalogue."""

    short_name: str
    long_name: str
    env_version: int
    min_num_players: int
    max_num_players: int
    dynamics: str  # sequential: one seat acts at a time (AEC)
    chance_mode: str  # sampled: the deal is drawn from the seed inside reset, no chance node is ever shown
    information: str  # imperfect: hands, decks and removed cards are hidden
    reward_model: str  # terminal: rewards only when the game ends
    utility: Mapping[str, str]  # reward mode -> zero_sum or general_sum

    @property
    def env_id(self) -> str:
        """The PettingZoo env id, e.g. 'packetrow_v2'."""
        return f"{self.short_name}_v{self.env_version}"

    @property
    def gymnasium_id(self) -> str:
        """The Gymnasium id of the single-agent env and its batched vector env, e.g. 'packetrow/SingleAgent-v2'
        (``packetrow_env.gymnasium_ids``)."""
        return f"{self.short_name}/SingleAgent-v{self.env_version}"


GAME_TYPE = GameType(short_name="packetrow", long_name="Packet Row", env_version=ENV_VERSION,
                     min_num_players=MIN_PLAYERS, max_num_players=MAX_PLAYERS, dynamics="sequential",
                     chance_mode="sampled", information="imperfect", reward_model="terminal", utility=UTILITY)


@dataclass(frozen=True)
class LongestGame:
    """A provable bound on the decisions of one game, piece by piece (see ``decisions``)."""

    rounds: int  # state.MAX_ROUNDS: every game ends
    decisions_per_round: int  # choices and answers (take or pass) in one round
    contracts: int  # contracts that can enter play: those in the decks and one starting contract per seat
    payment_options: int  # the most payment options one shipment can have
    page_size: int  # payment options shown per page (pay:0 .. pay:K-1)

    @property
    def pages(self) -> int:
        """The most pages of payment options one pay decision can show."""
        return ceil(self.payment_options / self.page_size)

    @property
    def decisions(self) -> int:
        """The bound: every round's choices and answers, and per contract one add, one ship, one pay decision's pages.

        From docs/rules.md sections 3 and 7 (their ids are left out here: the rule map lists the code that
        implements a rule). A round chooses each board at most once and asks each seat at most once per chosen
        board (the harbour master's choice of a board to take from is one of the board choices), so it holds at
        most NUM_BOARDS * (1 + n) of them. Shipping decisions do not end a turn, so they are counted per
        contract: a contract is added once (it is discarded when its shipment is paid, and a staged shipment
        allows only add and ship, then pay); a shipment needs a contract, so ships and pay decisions are each at
        most the contracts; and a pay decision is one ``pay:k`` after at most pages - 1 ``more``.
        """
        return self.rounds * self.decisions_per_round + self.contracts * (2 + self.pages)


@dataclass(frozen=True)
class GameInfo:
    """The sizes of one Packet Row game: a player count and a catalogue."""

    num_players: int
    num_distinct_actions: int
    longest_game: LongestGame
    observation_sizes: Mapping[tuple[str, str], int]  # (mode, encoding) -> floats in the observation vector
    observation_high: Mapping[str, float]  # encoding -> a bound of every float of the observation

    @property
    def max_game_length(self) -> int:
        """The most decisions a game can take (``LongestGame.decisions``)."""
        return self.longest_game.decisions


def check_num_players(num_players) -> None:
    """Raise a ValueError naming the player counts the game allows unless ``num_players`` is one of them."""
    if isinstance(num_players, bool) or num_players not in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        allowed = ", ".join(map(str, range(MIN_PLAYERS, MAX_PLAYERS + 1)))
        raise ValueError(f"num_players must be one of {allowed}, got {num_players!r}")


def game_info(num_players: int = 4, cards: Catalogue | str | None = None) -> GameInfo:
    """The description of a game of ``num_players`` seats with a catalogue (the default one when None)."""
    check_num_players(num_players)
    return _game_info(int(num_players), resolve(cards))


@lru_cache(maxsize=32)
def _game_info(num_players: int, cat: Catalogue) -> GameInfo:
    encoders = {encoding: encoder_for(encoding, cat) for encoding in ENCODINGS}
    return GameInfo(
        num_players=num_players,
        num_distinct_actions=actions.NUM_ACTIONS,
        longest_game=longest_game(num_players, cat),
        observation_sizes=MappingProxyType({(mode, encoding): enc.size_of(mode) for mode in MODES
                                            for encoding, enc in encoders.items()}),
        observation_high=MappingProxyType({encoding: enc.high for encoding, enc in encoders.items()}))


def describe(num_players: int = 4, cards: Catalogue | str | None = None) -> dict:
    """``GAME_TYPE`` and ``game_info(num_players, cards)`` as one dict of plain JSON types (``packetrow info``)."""
    info = game_info(num_players, cards)
    sizes = {}
    for (mode, encoding), size in info.observation_sizes.items():
        sizes.setdefault(mode, {})[encoding] = size
    longest = info.longest_game
    kind = {f.name: getattr(GAME_TYPE, f.name) for f in fields(GameType)}
    return {**kind, "utility": dict(GAME_TYPE.utility), "env_id": GAME_TYPE.env_id,
            "gymnasium_id": GAME_TYPE.gymnasium_id, "num_players": info.num_players,
            "num_distinct_actions": info.num_distinct_actions, "max_game_length": info.max_game_length,
            "longest_game": {**asdict(longest), "pages": longest.pages}, "observation_sizes": sizes,
            "observation_high": dict(info.observation_high)}


def longest_game(num_players: int, cat: Catalogue) -> LongestGame:
    """The pieces of the longest-game bound of ``num_players`` seats with catalogue ``cat``."""
    in_decks = sum(int((cat.kind[ids] == card_kinds.CONTRACT).sum()) for ids in cat.board_cards)
    # module attributes read at each call: the bound follows the constants it is made of (tested)
    return LongestGame(rounds=state.MAX_ROUNDS, decisions_per_round=NUM_BOARDS * (1 + num_players),
                       contracts=in_decks + num_players, payment_options=most_payment_options(cat),
                       page_size=actions.MAX_PAYMENT_OPTIONS)


def most_payment_options(cat: Catalogue) -> int:
    """A bound on the payment options of one shipment: the product of the ship part's and goods part's bounds.

    An option is a ship part times a goods part (payment.py: the two share no cards). Each part is a minimal
    multiset of interchangeable cards, and minimal multisets form an antichain of the product of chains
    (one chain per class, as long as its class is large), whose largest antichain is its largest rank level
    (de Bruijn, Tengbergen and Kruyswijk 1951). Cards equal in every column are the classes: payment.py's
    classes are unions of them, so its options are an antichain here too. Loose, but no hand can beat it.
    """
    bound = 1
    for kinds in (payment.SHIP_KINDS, payment.GOODS_KINDS):
        bound *= largest_antichain(_class_sizes(cat, kinds))
    return bound


def _class_sizes(cat: Catalogue, kinds) -> list[int]:
    """How many cards of the given kinds are equal in every column (the id aside), per such class."""
    columns = (cat.board, cat.kind, cat.good, cat.quantity, cat.destination, cat.reward, cat.cost, cat.vp, cat.money,
               cat.value)
    sizes = {}
    for c in range(len(cat.kind)):
        if int(cat.kind[c]) in kinds:
            key = (cat.names[c],) + tuple(int(column[c]) for column in columns)
            sizes[key] = sizes.get(key, 0) + 1
    return list(sizes.values())


def largest_antichain(chain_lengths: list[int]) -> int:
    """The largest antichain of multisets with at most ``chain_lengths[i]`` copies of item i: the most of one size."""
    level = [1]  # level[r]: multisets of size r so far
    for k in chain_lengths:
        wider = [0] * (len(level) + k)
        for r, count in enumerate(level):
            for extra in range(k + 1):
                wider[r + extra] += count
        level = wider
    return max(level)


__all__ = ["ENV_VERSION", "GAME_TYPE", "GENERAL_SUM", "GameInfo", "GameType", "LongestGame", "UTILITY", "ZERO_SUM",
           "describe", "game_info", "largest_antichain", "longest_game", "most_payment_options"]
