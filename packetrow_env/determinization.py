"""Determinization: a full game consistent with what one seat knows, its hidden cards re-dealt at random.

What seat ``observer`` knows (docs/rules.md R-INFO-1..3): everything public, his own hand, and with
perfect memory every opponent's hand except an opponent's starting contract while that
opponent still holds it. What he does not know, and what ``sample`` therefore re-deals:

* per board, the order of its deck and (two players, R-SETUP-3) which of its cards were removed
  unseen: the board's deck cards and its removed cards are one pool, dealt into the board's
  deck positions and its removed slots (deck size and removed count of each board kept; a card
  only ever goes to its own board, R-COMP-2);
* the starting contracts held (unrevealed) by opponents together with the starting contracts
  left out of the game unseen (R-SETUP-5): one pool, dealt into those opponents' starting
  contract slots and the removed pile. An opponent's starting contract staged in the pending
  shipment is public (the action named it) and stays where it is.

Each pool is dealt by a uniformly random permutation of its cards sorted by id, so a sample
depends only on what the observer knows (the same generator state gives the same sample on
positions he cannot tell apart), never on the true arrangement. The new game gets a fresh random generator
seeded from ``rng``: the true game's generator state decided the shuffles, so it is hidden too.
"""

from __future__ import annotations

import operator

import numpy as np

from .cards import START
from .engine import Game
from .state import DECK, HAND, REMOVED

def sample(game: Game, observer: int, rng: np.random.Generator) -> Game:
    """A new game consistent with everything ``observer`` knows, the cards he cannot locate re-dealt uniformly."""
    n = game.state.num_players
    seat = _seat(observer, n)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")

    s = game.state
    location = s.location
    # Cards out of the game, by pool: the four boards' and the starting contracts'.
    removed = np.flatnonzero(location == REMOVED).tolist()
    out = [[], [], [], [], []]
    for c, board in zip(removed, game.cards.board[removed].tolist()):
        out[board].append(c)
    starts = s.starting_contract[:n].tolist()
    held = location[starts].tolist()
    hidden_seats = [p for p in range(n) if p != seat and held[p] == HAND + p and starts[p] not in s.pending]

    new = game.clone()
    t = new.state
    # The true generator state decided the shuffles, so it is hidden too: the sample gets a fresh one.
    t.rng_state = np.random.PCG64(rng.bit_generator.random_raw()).state
    tops, ends = s.deck_top.tolist(), s.deck_end.tolist()
    for b in range(4):  # each board's deck positions and removed slots get a uniform permutation of their cards
        top, end = tops[b], ends[b]
        deck = t.deck[b, top:end]
        if not out[b]:
            if end - top > 1:
                deck.sort()  # start from an order the observer knows: the true one would leak into the sample
                rng.shuffle(deck)  # the same cards, in a new order: their locations stay
            continue
        cards = np.sort(np.concatenate((deck, out[b])))  # a known order, as above
        rng.shuffle(cards)
        deck[:] = cards[:end - top]
        t.location[cards[:end - top]] = DECK + b
        t.location[cards[end - top:]] = REMOVED

    if hidden_seats:  # the hidden starting contracts and the unseen ones: one pool, dealt back the same way
        pool = sorted([starts[p] for p in hidden_seats] + out[START])  # a known order, as above
        dealt = [pool[i] for i in rng.permutation(len(pool)).tolist()]
        t.location[dealt] = [HAND + p for p in hidden_seats] + [REMOVED] * len(out[START])
        t.starting_contract[hidden_seats] = dealt[:len(hidden_seats)]
        changed = [p for p, c in zip(hidden_seats, dealt) if starts[p] != c]
        for p in changed:
            new._hand_changed(p)
        if changed:
            new._scores = None
            if t.current_player in changed:
                new._mask = None
    return new


def _seat(observer, n: int) -> int:
    """The observer as a seat number, or a ValueError saying what is allowed."""
    if not isinstance(observer, (bool, np.bool_)):
        try:
            seat = operator.index(observer)
        except TypeError:
            seat = None
        if seat is not None and 0 <= seat < n:
            return seat
    raise ValueError(f"observer must be a seat number (an integer from 0 to {n - 1}), got {observer!r}")


__all__ = ["sample"]
