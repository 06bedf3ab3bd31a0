"""What a seat knows (docs/rules.md R-INFO-1..4), in each observation mode: the one place that decides it.

The observation, the text view, determinisation and the agents' seat views all ask this module; nothing
else derives hidden information. The modes:

- ``tracked``: what a player with perfect memory knows (R-INFO-3): everything public (R-INFO-1), his own
  hand, and every opponent's hand but the starting contract he still holds (every other hand card was
  taken face up). Not known: the order and contents of every deck, the cards removed unseen (two
  players, R-SETUP-3) and the starting contracts left out of the game (R-SETUP-5).
- ``online``: the online edition's view (R-INFO-4, R-VAR-1): ``tracked`` plus the contents of each deck
  (not its order). With two players this tells which cards were removed at setup.
- ``table``: only what is on the table now: opponents' hands are not known at all (not even their size).
- ``full``: everything (for debugging and privileged critics; not a fair view).

The central fact is ``known_locations``: per card, where the observer knows it to be, or ``UNKNOWN``. A
deck card he knows to be in a deck (online) is located there, though not its position in the deck: the
order of every deck is known only in ``full``.
"""

from __future__ import annotations

import operator
from functools import lru_cache

import numpy as np

from .state import DECK, HAND, NUM_BOARDS, NUM_LOCATIONS, REMOVED

MODES = ("tracked", "online", "table", "full")
UNKNOWN = NUM_LOCATIONS  # the location code of a card the observer cannot locate
DECK_CONTENTS_MODES = ("online", "full")  # the modes that know which cards each deck holds (R-INFO-4)
OPPONENT_HAND_MODES = ("tracked", "online", "full")  # the modes that remember opponents' takes (R-INFO-3)


def check_mode(mode) -> str:
    """``mode`` if it is an observation mode, else a ValueError naming the allowed ones."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"unknown observation mode {mode!r}; allowed: {', '.join(MODES)}")
    return mode


def check_observer(observer, num_players: int) -> int:
    """The observer as a seat number, or a ValueError saying what is allowed."""
    if not isinstance(observer, (bool, np.bool_)):
        try:
            seat = operator.index(observer)
        except TypeError:
            seat = None
        if seat is not None and 0 <= seat < num_players:
            return seat
    raise ValueError(f"observer must be a seat number (an integer from 0 to {num_players - 1}), got {observer!r}")


@lru_cache(maxsize=None)
def location_view(num_players: int, observer: int, mode: str) -> np.ndarray:
    """Per true location code (and ``UNKNOWN``): the code ``observer`` sees, ``UNKNOWN`` where he cannot tell.

    Cards are located by where they lie; the exceptions of single cards (an opponent's held starting
    contract, the starting contracts left out) are ``hidden_cards``. Read-only, cached.
    """
    check_mode(mode)
    view = np.arange(NUM_LOCATIONS + 1, dtype=np.int64)
    if mode != "full":
        if mode not in DECK_CONTENTS_MODES:
            view[DECK:DECK + NUM_BOARDS] = UNKNOWN
            view[REMOVED] = UNKNOWN  # removed board cards: which ones, only the decks' contents tell
        if mode not in OPPONENT_HAND_MODES:
            others = [HAND + q for q in range(num_players) if q != observer]
            view[others] = UNKNOWN
    view.flags.writeable = False
    return view


def hides_held_starting_contracts(mode: str) -> bool:
    """Whether ``mode`` hides an opponent's starting contract while he holds it, not staged (all but ``full``)."""
    return check_mode(mode) != "full"


def starting_contracts(state, cards, observer: int, mode: str) -> tuple[list[int], list[int | None]]:
    """(the starting contracts ``observer`` cannot locate, per seat whether he still holds his: 1, 0 or None).

    Hidden: an opponent's starting contract while he holds it and it is not staged in the pending shipment
    (one staged was named by a public action, R-INFO-1; one shipped lies face up), and in the modes that know
    the decks' contents the starting contracts left out of the game (they have no deck, so no contents tell
    them). Whether a seat still holds his is public wherever hands are tracked (it leaves a hand only by a
    public shipment); ``table`` knows it only of the observer. One pass: the observation calls this per vector.
    """
    n = state.num_players
    location = state.location
    starts = state.starting_contract[:n].tolist()
    where = location[starts].tolist()
    holds = [int(where[q] == HAND + q) for q in range(n)]
    if not hides_held_starting_contracts(mode):
        return [], holds
    pending = state.pending
    hidden = [starts[q] for q in range(n) if q != observer and holds[q] and starts[q] not in pending]
    if mode in DECK_CONTENTS_MODES:
        spare = cards.start_contracts
        hidden += [c for c, code in zip(spare.tolist(), location[spare].tolist()) if code == REMOVED]
    elif mode not in OPPONENT_HAND_MODES:
        holds = [h if q == observer else None for q, h in enumerate(holds)]
    return hidden, holds


def hidden_starting_seats(state, observer: int, mode: str) -> list[int]:
    """Opponents whose starting contract ``observer`` cannot locate: they hold it and it is not staged."""
    if not hides_held_starting_contracts(mode):
        return []
    n = state.num_players
    starts = state.starting_contract[:n].tolist()
    where = state.location[starts].tolist()
    pending = state.pending
    return [q for q in range(n) if q != observer and where[q] == HAND + q and starts[q] not in pending]


def hidden_cards(state, cards, observer: int, mode: str) -> list[int]:
    """The cards ``location_view`` would place but ``observer`` cannot (see ``starting_contracts``)."""
    return starting_contracts(state, cards, observer, check_mode(mode))[0]


def known_locations(state, cards, observer: int, mode: str = "tracked") -> np.ndarray:
    """Per card: the location code where ``observer`` knows it to be, or ``UNKNOWN`` (int64, a new array)."""
    seat = check_observer(observer, state.num_players)
    known = location_view(state.num_players, seat, check_mode(mode))[state.location]
    known[hidden_cards(state, cards, seat, mode)] = UNKNOWN
    return known


def known_hand(state, cards, observer: int, seat: int, mode: str = "tracked", hand: list[int] | None = None
               ) -> list[int] | None:
    """The sorted cards of ``seat``'s hand that ``observer`` knows; None where the mode does not track it (table).

    ``hand``: the seat's whole sorted hand when the caller has it (``Game.hand``), to save finding it again.
    """
    check_mode(mode)
    hand = np.flatnonzero(state.location == HAND + seat).tolist() if hand is None else list(hand)
    if seat == observer or mode == "full":
        return hand
    if mode not in OPPONENT_HAND_MODES:
        return None
    start = int(state.starting_contract[seat])
    if start in hand and start not in state.pending:  # hidden_starting_seats, for one seat
        hand.remove(start)
    return hand


def known_hands(state, cards, observer: int, mode: str = "tracked") -> list[list[int] | None]:
    """Per seat: ``known_hand`` (own hand whole; opponents as the mode reveals them; None = not tracked)."""
    seat = check_observer(observer, state.num_players)
    return [known_hand(state, cards, seat, q, mode) for q in range(state.num_players)]


def holds_starting_contract(state, cards, observer: int, mode: str = "tracked") -> list[int | None]:
    """Per seat: 1 if he still holds his starting contract, 0 if not, None where the mode does not know (table)."""
    return starting_contracts(state, cards, observer, check_mode(mode))[1]


def sees_payment_options(observer: int, payer: int, mode: str) -> bool:
    """Whether ``observer`` knows ``payer``'s payment options in phase pay (R-SHIP-7)."""
    # His own, and wherever hands are tracked: a payment spends cards taken face up and ships, never the hidden
    # starting contract (a contract pays nothing). ``table`` knows no opponent's hand, so not his options.
    return observer == payer or check_mode(mode) in OPPONENT_HAND_MODES


def deck_contents(state, mode: str = "tracked") -> list[list[int]] | None:
    """Per board: the sorted cards its deck still holds (not their order), where the mode shows them; else None."""
    if check_mode(mode) not in DECK_CONTENTS_MODES:
        return None
    return [np.sort(state.deck_cards(b)).tolist() for b in range(NUM_BOARDS)]


def unseen(state, cards, observer: int, mode: str = "tracked") -> list[int]:
    """The sorted cards ``observer`` cannot locate."""
    return np.flatnonzero(known_locations(state, cards, observer, mode) == UNKNOWN).tolist()


__all__ = ["DECK_CONTENTS_MODES", "MODES", "OPPONENT_HAND_MODES", "UNKNOWN", "check_mode", "check_observer",
           "deck_contents", "hidden_cards", "hidden_starting_seats", "hides_held_starting_contracts",
           "holds_starting_contract", "known_hand",
           "known_hands", "known_locations", "location_view", "sees_payment_options", "starting_contracts", "unseen"]
