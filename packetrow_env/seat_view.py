"""A seat's view of a game: everything one seat may know (R-INFO-1..4), and nothing else. Agents act on it.

``SeatView(game, seat, mode)`` is what an agent's ``act`` receives (as OpenSpiel's agents receive an
information state): the seat's legal actions, its observation vector, the public state (``view.state``,
read-only, without card locations, deck orders or starting contracts), its own hand, what it knows of the
other hands (``packetrow_env.knowledge``), and determinisations for it (full games consistent with what
it knows, for search). The game itself is kept private: an agent that reads only the view cannot see a
hidden card, and the leak tests check every accessor on hidden twins of positions.

``mode`` is what the seat knows: ``tracked`` (default, perfect memory), ``online`` (plus the decks'
contents) or ``table``; ``full`` gives a privileged view (debugging, cheating baselines). A view without a
game (``SeatView.of_observation``) carries only an observation vector and a mask, for policies played
on raw env outputs.
"""

from __future__ import annotations

import numpy as np

from . import knowledge, scoring
from .state import ARRAY, FIELDS, LIST, PHASES

# What each mode's seat knows includes what these modes show (so a view may encode them).
_COVERS = {"table": ("table",), "tracked": ("table", "tracked"), "online": ("table", "tracked", "online"),
           "full": ("table", "tracked", "online", "full")}


def covers(view_mode: str, mode: str) -> bool:
    """Whether a seat that knows what ``view_mode`` shows knows all that ``mode`` shows (table < tracked < online < full)."""
    return knowledge.check_mode(mode) in _COVERS[knowledge.check_mode(view_mode)]


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


class PublicState:
    """The public part of a position (R-INFO-1): the fields of ``state.FIELDS`` marked public, read-only.

    Arrays are read-only views (e.g. ``current``, ``cash``; ``deck_top`` and ``deck_end`` give each deck's size but
    not its cards), lists are tuples (``chosen_order``, ``pending``, ``history``), scalars are ints (``phase`` and
    ``resume_phase`` index ``PHASES``; -1 is none). Card locations, deck orders and starting contracts are not here.
    """

    __slots__ = tuple(f.name for f in FIELDS if f.public)

    def __init__(self, state):
        for f in FIELDS:
            if f.public:
                value = getattr(state, f.name)
                setattr(self, f.name,
                        _read_only(value) if f.kind == ARRAY else tuple(value) if f.kind == LIST else value)

    def deck_size(self, board: int) -> int:
        """The number of cards left in a board's deck (public; its contents and order are not)."""
        return int(self.deck_end[board] - self.deck_top[board])


class SeatView:
    """What one seat knows of a game, for an agent to act on (see the module docstring)."""

    __slots__ = ("seat", "mode", "cards", "num_players", "state", "_game", "_observation", "_mask", "_hands",
                 "_encoder", "_compact")

    def __init__(self, game, seat: int | None = None, mode: str = "tracked", observation: np.ndarray | None = None,
                 action_mask: np.ndarray | None = None):
        self.mode = knowledge.check_mode(mode)
        self._game = game
        self._observation = observation
        self._hands = None
        self._encoder = self._compact = None
        if game is None:
            if observation is None or action_mask is None:
                raise ValueError("a SeatView without a game needs the observation and the action mask")
            self.seat = seat
            self.cards = self.num_players = self.state = None
        else:
            n = game.num_players
            if seat is None:
                seat = game.current_player
                if seat is None:
                    raise ValueError("the game is over: give the seat whose view is wanted")
            self.seat = knowledge.check_observer(seat, n)
            self.cards = game.cards
            self.num_players = n
            self.state = PublicState(game.state)
        if action_mask is None:
            action_mask = game.legal_action_mask() if self.seat == game.current_player else \
                np.zeros(len(game.legal_action_mask()), dtype=bool)
        self._mask = _read_only(np.asarray(action_mask, dtype=bool))

    @classmethod
    def of_observation(cls, observation: np.ndarray, action_mask: np.ndarray, mode: str = "tracked") -> "SeatView":
        """A view carrying only an observation vector (in ``mode``) and a mask, as a PettingZoo env gives them."""
        return cls(None, None, mode, np.asarray(observation), action_mask)

    # ------------------------------------------------------------------ the decision
    @property
    def has_game(self) -> bool:
        """Whether the view was built on a game (else it holds only an observation and a mask)."""
        return self._game is not None

    @property
    def action_mask(self) -> np.ndarray:
        """The seat's legal actions (read-only bool array; all False when it is not the seat's turn)."""
        return self._mask

    def legal_action_mask(self) -> np.ndarray:
        """The same as ``action_mask`` (the Game method's name)."""
        return self._mask

    def legal_actions(self) -> list[int]:
        """The legal action ids, ascending."""
        return np.flatnonzero(self._mask).tolist()

    @property
    def observation(self) -> np.ndarray:
        """The seat's observation vector in the view's mode (given, or encoded on first use)."""
        if self._observation is None:
            self._observation = self.observe(self.mode)
        return self._observation

    def observe(self, mode: str | None = None) -> np.ndarray:
        """The seat's observation vector in ``mode``, one the view's mode covers (table < tracked < online < full)."""
        mode = self._covered(mode)
        if mode == self.mode and self._observation is not None:
            return self._observation
        game = self._require_game("an observation in another mode")
        if self._encoder is None:
            from .observation import encoder
            self._encoder = encoder(self.cards)
        return self._encoder.encode(game, self.seat, mode)

    def compact_observation(self, mode: str | None = None) -> np.ndarray:
        """The seat's compact observation vector (``compact_observation``) in ``mode``, one the view's mode covers."""
        mode = self._covered(mode)
        game = self._require_game("a compact observation")
        if self._compact is None:
            from .compact_observation import encoder
            self._compact = encoder(self.cards)
        return self._compact.encode(game, self.seat, mode)

    def _covered(self, mode: str | None) -> str:
        """``mode`` (None: the view's), checked to be one the view's mode covers."""
        mode = self.mode if mode is None else knowledge.check_mode(mode)
        if not covers(self.mode, mode):
            raise ValueError(f"a {self.mode} view cannot give a {mode} observation (it knows less); allowed: "
                             f"{', '.join(_COVERS[self.mode])}")
        return mode

    # ------------------------------------------------------------------ public facts
    @property
    def current_player(self) -> int | None:
        """The seat to act, or None when the game is over."""
        return self._require_game("the player to act").current_player

    @property
    def phase(self) -> str:
        """The phase name (``state.PHASES``)."""
        return PHASES[self._require_game("the phase").state.phase]

    @property
    def is_over(self) -> bool:
        """Whether the game has ended and been scored."""
        return self._require_game("the game's end").is_over

    def ships(self, seat: int) -> list[int]:
        """The ship card ids face up in front of a seat (public, R-INFO-1)."""
        return self._require_game("ships").ships(seat)

    def scores(self) -> list[dict]:
        """The scores the table shows (``Game.scores``: public, R-INFO-1; final after the game)."""
        return self._require_game("scores").scores()

    def time_left(self, floor: float = 0.0) -> float:
        """The game clock as agents weigh plans (``scoring.time_left``)."""
        return scoring.time_left(self.state, self.cards, floor)

    def payment_options(self) -> list:
        """The payment options of a shipment waiting to be paid (public: the seat to act chooses among them)."""
        game = self._require_game("payment options")
        options = getattr(game, "payment_options", None)
        return [] if options is None or self.seat != game.current_player else options()

    def payment_page_options(self) -> list:
        """The payment options of the page shown, which ``PAY + k`` pays with (public as ``payment_options``)."""
        game = self._require_game("payment options")
        options = getattr(game, "payment_page_options", None)
        return [] if options is None or self.seat != game.current_player else options()

    def describe_action(self, action: int) -> str:
        """What one of the seat's actions does now, in words."""
        from .render import describe_action
        return describe_action(self._require_game("action texts"), action)

    def render_text(self, names=None) -> str:
        """The table as text, as this seat may see it (the env's render in this mode; online: with the decks' contents)."""
        from collections import Counter

        from .cards import BOARDS
        from .render import card_text, render
        game = self._require_game("the table")
        known = self.known_hands()
        text = render(game, seat=self.seat, known_hands=None if None in known else known, names=names)
        decks = self.deck_contents()
        if decks is None:
            return text
        lines = ["decks (what each still holds, not in order; R-INFO-4):"]
        for b, deck in enumerate(decks):
            counts = sorted(Counter(card_text(game, c) for c in deck).items())
            lines.append(f"  {BOARDS[b]}: " + (", ".join(f"{k} x{v}" if v > 1 else k for k, v in counts) or "empty"))
        table, marker, legal = text.partition("\nlegal actions:\n")
        return "\n".join([table] + lines) + (marker + legal if marker else "")

    # ------------------------------------------------------------------ what the seat knows
    def hand(self, seat: int | None = None) -> list[int]:
        """The seat's own hand (sorted); another seat's hand is not his to see (``known_hand``)."""
        if seat is not None and seat != self.seat:
            raise ValueError(f"seat {self.seat}'s view holds only his own hand, not seat {seat}'s; "
                             "known_hand(seat) gives what he knows of it")
        return self.known_hand(self.seat)

    def known_hand(self, seat: int) -> list[int] | None:
        """The cards of a seat's hand this seat knows (R-INFO-3); None where the mode does not track it (table)."""
        game = self._require_game("hands")
        if self._hands is None:
            self._hands = [False] * self.num_players  # False: not asked yet (None is table mode's answer)
        hand = self._hands[seat]
        if hand is False:
            hand = self._hands[seat] = knowledge.known_hand(game.state, game.cards, self.seat, seat, self.mode,
                                                            game.hand(seat))
        return None if hand is None else list(hand)

    def known_hands(self) -> list[list[int] | None]:
        """``known_hand`` of every seat (new lists)."""
        return [self.known_hand(q) for q in range(self._require_game("hands").num_players)]

    def holds_starting_contract(self) -> list[int | None]:
        """Per seat: 1 if he still holds his starting contract, 0 if not, None where the mode does not know."""
        game = self._require_game("starting contracts")
        return knowledge.holds_starting_contract(game.state, game.cards, self.seat, self.mode)

    def deck_contents(self) -> list[list[int]] | None:
        """Per board, the sorted cards its deck holds where the mode shows them (online, full); else None."""
        return knowledge.deck_contents(self._require_game("decks").state, self.mode)

    def unseen(self) -> list[int]:
        """The cards this seat cannot locate."""
        game = self._require_game("unseen cards")
        return knowledge.unseen(game.state, game.cards, self.seat, self.mode)

    def sample_determinization(self, rng: np.random.Generator, posterior=None):
        """A new full Game consistent with everything this seat knows (``Game.sample_determinization``), for search;
        with ``posterior`` (``belief.starting_contract_posterior`` of this view) the hidden starting contracts are
        dealt from it."""
        game = self._require_game("determinisations")
        if posterior is None:
            return game.sample_determinization(self.seat, rng, self.mode)
        from .determinization import sample
        return type(game)(sample(game.state, game.cards, self.seat, rng, self.mode, posterior), game.cards)

    def _require_game(self, what: str):
        if self._game is None:
            raise ValueError(f"this view holds only an observation and a mask; {what} needs a view of a game "
                             "(SeatView(game, seat))")
        return self._game


__all__ = ["PublicState", "SeatView", "covers"]
