"""Determinisation: a full position consistent with what one seat knows, the cards he cannot place re-dealt.

``sample(state, cards, observer, rng, mode)`` returns a new State; the original is never touched
(``Game.sample_determinization`` wraps it in a new Game). What the observer knows comes from
``knowledge`` (docs/rules.md R-INFO-1..4); what he does not know, and what is therefore re-dealt:

* per board, the order of its deck, and in ``tracked`` mode with two players (R-SETUP-3) also which
  of its cards were removed unseen: the board's deck cards and its removed cards he cannot locate are
  one pool, dealt into the board's deck positions and its removed slots (deck size and removed count
  of each board kept; a card only ever goes to its own board, R-COMP-2). In ``online`` mode he knows
  each deck's contents (R-INFO-4), so the pool is the deck alone: only its order changes;
* the starting contracts held (unrevealed) by opponents together with the starting contracts left
  out of the game unseen (R-SETUP-5): one pool, dealt into those opponents' starting contract slots
  and the removed pile. An opponent's starting contract staged in the pending shipment is public.

``full`` knows everything: its sample is the position itself (with a fresh generator). ``table``
forgets opponents' hands, even their sizes, so no position can be dealt for it: a ValueError.

Each pool is dealt by a uniformly random permutation of its cards sorted by id, so a sample depends only
on what the observer knows (the same generator state gives the same sample on positions he cannot tell
apart), never on the true arrangement. The new position gets a fresh random generator seeded from
``rng``: the true game's generator state decided the shuffles, so it is hidden too.
"""

from __future__ import annotations

import numpy as np

from . import knowledge
from .cards import START
from .knowledge import UNKNOWN
from .state import DECK, HAND, NUM_BOARDS, REMOVED, State

MODES = ("tracked", "online", "full")  # the modes a position can be dealt for


def sample(state: State, cards, observer: int, rng: np.random.Generator, mode: str = "tracked",
           posterior=None) -> State:
    """A new state consistent with everything ``observer`` knows in ``mode``, the cards he cannot place re-dealt;
    with ``posterior`` (``belief.starting_contract_posterior`` for this observer and position), the hidden
    opponents' starting contracts are dealt from its joint, the other unseen ones removed."""
    seat = knowledge.check_observer(observer, state.num_players)
    knowledge.check_mode(mode)
    if mode not in MODES:
        raise ValueError(f"determinisation needs mode {', '.join(MODES)}, got {mode!r}: in table mode an opponent's "
                         "hand (and its size) is unknown, so no consistent position can be dealt")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    s = state
    known = knowledge.known_locations(s, cards, seat, mode)
    if posterior is not None:
        _check_posterior(posterior, seat, knowledge.hidden_starting_seats(s, seat, mode),
                         cards.start_contracts[known[cards.start_contracts] == UNKNOWN].tolist())
    t = s.copy()
    t.rng_state = np.random.PCG64(rng.bit_generator.random_raw()).state
    if mode == "full":
        return t
    # Removed cards the observer cannot place, by pool: the four boards' and the starting contracts'.
    lost = np.flatnonzero(known == UNKNOWN)
    lost_removed = lost[s.location[lost] == REMOVED]
    pool_of = cards.board[lost_removed].tolist()
    out = [[c for c, b in zip(lost_removed.tolist(), pool_of) if b == board] for board in range(START + 1)]

    tops, ends = s.deck_top.tolist(), s.deck_end.tolist()
    for b in range(NUM_BOARDS):  # each board's deck positions and removed slots get a uniform permutation of its pool
        top, end = tops[b], ends[b]
        deck = t.deck[b, top:end]
        if not out[b]:
            if end - top > 1:
                deck.sort()  # start from an order the observer knows: the true one would leak into the sample
                rng.shuffle(deck)  # the same cards, in a new order: their locations stay
            continue
        pool = np.sort(np.concatenate((deck, out[b])))  # a known order, as above
        rng.shuffle(pool)
        deck[:] = pool[:end - top]
        t.location[pool[:end - top]] = DECK + b
        t.location[pool[end - top:]] = REMOVED

    hidden_seats = knowledge.hidden_starting_seats(s, seat, mode)
    if hidden_seats:  # the hidden starting contracts and the unseen ones: one pool, dealt back the same way
        starts = s.starting_contract.tolist()
        pool = sorted([starts[p] for p in hidden_seats] + out[START])  # a known order, as above
        if posterior is None:
            dealt = [pool[i] for i in rng.permutation(len(pool)).tolist()]
        else:  # the hidden seats' from the posterior's joint; the rest of the pool is removed, in any order
            dealt = posterior.sample(rng).tolist()
            dealt += [c for c in pool if c not in dealt]
        t.location[dealt] = [HAND + p for p in hidden_seats] + [REMOVED] * len(out[START])
        t.starting_contract[hidden_seats] = dealt[:len(hidden_seats)]
    return t


def _check_posterior(posterior, observer: int, seats: list[int], candidates: list[int]) -> None:
    """A ValueError unless ``posterior`` is a starting-contract posterior of this observer's position."""
    if not all(hasattr(posterior, name) for name in ("observer", "seats", "candidates", "sample")):
        raise ValueError(f"posterior must be what belief.starting_contract_posterior returns (it carries the joint "
                         f"over the hidden seats), got {type(posterior).__name__}")
    if (posterior.observer, list(posterior.seats), sorted(posterior.candidates)) != (observer, seats, candidates):
        raise ValueError(f"the posterior is seat {posterior.observer}'s over seats {list(posterior.seats)} and "
                         f"contracts {sorted(posterior.candidates)}, but this position's seat {observer} cannot see "
                         f"the starting contracts of seats {seats} among {candidates}: compute it for this view")


__all__ = ["MODES", "sample"]
