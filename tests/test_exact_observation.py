"""Observations hold exactly what a seat knows (issue 25): different knowledge gives different vectors.

A seat's knowledge of the cards is ``knowledge.known_locations`` up to cards it cannot tell apart (one card type,
one board: two churches of the docks are alike, a church of the docks and one of the bank are not), the card
type in each supply slot, and in phase pay the payment options and the page of them shown where
``knowledge.sees_payment_options``. The
public scalars (cash, phase, ...) are left alone by the edits below, and the leak tests cover them.

Edits of random positions move buildings, whose name lies on every board, between the boards' piles and the
seats' hands so that every summed count stays the same (the issue's church and town hall, a building a seat
was seen to take, a building removed at setup), or change only what a seat cannot see (the leak tests' hidden
twins). For every edit, seat, mode and encoding, single (``Encoder``, ``CompactEncoder``) and batched
(``VectorGame.observe``), the vectors are equal exactly when the knowledge is.
"""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packetrow_env import knowledge
from packetrow_env.cards import load
from packetrow_env.compact_observation import ENCODINGS, encoder_for
from packetrow_env.engine import Game
from packetrow_env.observation import MODES, card_types, encoder
from packetrow_env.state import PAY
from packetrow_env.vector import VectorGame
from tests.positions import Position
from tests.test_leaks import random_position, twins
from tests.test_rules_pay_pages import HAND_22, on_page, paying

CARDS = load()
TYPE_OF, _ = card_types(CARDS)
PAIRS = encoder().board_pairs
SPLIT_TYPES = sorted({t for t, _ in PAIRS})
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=25,
                    suppress_health_check=[HealthCheck.too_slow])


def known(game: Game, seat: int, mode: str) -> tuple:
    """What ``seat`` knows of the cards in ``mode``, with cards of one type and one board as one."""
    s = game.state
    where = knowledge.known_locations(s, CARDS, seat, mode)
    cards = Counter(zip(TYPE_OF.tolist(), CARDS.board.tolist(), where.tolist()))
    slots = tuple(int(TYPE_OF[c]) if c >= 0 else -1 for c in np.concatenate([s.current.ravel(), s.future.ravel()]))
    options = None
    if s.phase == PAY and knowledge.sees_payment_options(seat, s.current_player, mode):
        options = tuple(tuple(sorted(TYPE_OF[list(o)].tolist())) for o in game.payment_options()), game.payment_page
    return cards, slots, options


# --------------------------------------------------------------------------- edits
def where_is(d: dict, card: int) -> tuple:
    """(container key path) of a card in a saved-game dict: ('boards', b, pile), ('players', q, pile), ('removed',)."""
    for b, board in enumerate(d["boards"]):
        for key in ("deck", "discard", "current", "future"):
            if card in board[key]:
                return "boards", b, key
    for q, player in enumerate(d["players"]):
        for key in ("hand", "ships"):
            if card in player[key]:
                return "players", q, key
    assert card in d["removed"], card
    return ("removed",)


def _pile(d: dict, place: tuple) -> list:
    return d["removed"] if place == ("removed",) else d[place[0]][place[1]][place[2]]


def exchange(d: dict, *pairs: tuple[int, int]) -> dict:
    """A copy of ``d`` where each pair of cards trade places (decks keep their order, slots their slot)."""
    twin = copy.deepcopy(d)
    for x, y in pairs:
        px, py = _pile(twin, where_is(twin, x)), _pile(twin, where_is(twin, y))
        ix, iy = px.index(x), py.index(y)
        px[ix], py[iy] = y, x
    for player in twin["players"]:
        player["hand"] = sorted(player["hand"])
    for board in twin["boards"]:
        board["discard"] = sorted(board["discard"])
    twin["removed"] = sorted(twin["removed"])
    return twin


def cards_of(t: int, b: int) -> list[int]:
    return np.flatnonzero((TYPE_OF == t) & (CARDS.board == b)).tolist()


def crossed(d: dict, place_of) -> list[tuple[str, dict]]:
    """Edits that keep every summed count: for boards b != b2 and types t != u on both, a card (t, b) at a place and
    a card (u, b2) at the matching place trade with (u, b) and (t, b2) of the decks (the issue's church and town
    hall). ``place_of(d, card)`` names the kind of place (the same for both, e.g. 'discard' or seat q's hand), or
    None where the card is not at a place of the kind wanted."""
    out = []
    for t in SPLIT_TYPES:
        for u in SPLIT_TYPES:
            if t == u:
                continue
            for b in range(4):
                for b2 in range(4):
                    if b == b2:
                        continue
                    x = next((c for c in cards_of(t, b) if place_of(d, c) is not None), None)
                    if x is None:
                        continue
                    y = next((c for c in cards_of(u, b2) if place_of(d, c) == place_of(d, x)), None)
                    w = next((c for c in cards_of(u, b) if c in d["boards"][b]["deck"]), None)
                    z = next((c for c in cards_of(t, b2) if c in d["boards"][b2]["deck"]), None)
                    if None not in (y, w, z):
                        out.append((f"{place_of(d, x)}: ({t}, {b}) + ({u}, {b2}) -> ({u}, {b}) + ({t}, {b2})",
                                    exchange(d, (x, w), (y, z))))
                        if len(out) >= 3:
                            return out
    return out


def _discarded(d: dict, card: int):
    place = where_is(d, card)
    return "discard" if place[-1] == "discard" else None


def _held(d: dict, card: int):
    place = where_is(d, card)
    return f"seat {place[1]}'s hand" if place[-1] == "hand" else None


def _removed(d: dict, card: int):
    return "removed" if card in d["removed"] else None


def across_hands(d: dict) -> list[tuple[str, dict]]:
    """Two seats' buildings of one type but from different boards trade hands."""
    out = []
    for t in SPLIT_TYPES:
        held = [(c, where_is(d, c)[1]) for b in range(4) for c in cards_of(t, b) if where_is(d, c)[-1] == "hand"]
        for c1, q1 in held:
            other = next(((c2, q2) for c2, q2 in held if q2 != q1 and CARDS.board[c2] != CARDS.board[c1]), None)
            if other is not None:
                out.append((f"type {t}: seats {q1} and {other[1]} trade boards", exchange(d, (c1, other[0]))))
                break
    return out


def edits(d: dict, seat: int, rng) -> list[tuple[str, dict]]:
    """Knowledge-changing edits (for some seats and modes) and the hidden twins of the leak tests."""
    out = crossed(d, _discarded) + crossed(d, _held) + crossed(d, _removed) + across_hands(d)
    return out + [(name, twin) for mode in ("tracked", "online") for name, twin in twins(d, seat, rng, mode)]


def loadable(d: dict) -> Game | None:
    try:
        return Game.from_dict(d)
    except ValueError:  # e.g. an edit that leaves the player to act no legal action
        return None


# --------------------------------------------------------------------------- the property
def check(game: Game, twin: Game, seat: int) -> tuple[int, int]:
    """Vectors equal exactly when knowledge is, in every mode and encoding, single and batched; returns (pairs
    checked with different knowledge, with the same)."""
    different = same = 0
    pair = VectorGame.from_games([game, twin])
    seats = np.array([seat, seat])
    for mode in MODES:
        equal_knowledge = known(game, seat, mode) == known(twin, seat, mode)
        different += not equal_knowledge
        same += equal_knowledge
        for encoding in ENCODINGS:
            coder = encoder_for(encoding)
            a, b = coder.encode(game, seat, mode), coder.encode(twin, seat, mode)
            assert (a.tobytes() == b.tobytes()) == equal_knowledge, (mode, encoding, equal_knowledge)
            batched = pair.observe(mode, seats=seats, encoding=encoding)
            assert batched[0].tobytes() == a.tobytes() and batched[1].tobytes() == b.tobytes(), (mode, encoding)
    return different, same


positions = st.tuples(st.integers(2, 5), st.integers(0, 2**31 - 1), st.integers(40, 230))


@SETTINGS
@given(positions)
def test_vectors_differ_exactly_where_knowledge_differs(position):
    """Issue 25: same knowledge, same vector (no leak); different knowledge, different vector (nothing left out)."""
    n, seed, steps = position
    data = random_position(n, seed, steps)
    game = Game.from_dict(data)
    rng = np.random.default_rng(seed)
    for seat in range(n):
        for name, edited in edits(data, seat, rng):
            twin = loadable(edited)
            if twin is not None:
                check(game, twin, seat)


def test_the_edits_change_knowledge_the_v1_vector_could_not_tell():
    """The edits are exercised, and they are the issue's case: the v1 prefix of both vectors is the same."""
    kinds, different = Counter(), 0
    for n, steps in ((2, 10), (2, 200), (3, 200), (4, 200), (5, 200)):  # early: the removed cards' decks are full
        data = random_position(n, 3 * n, steps)
        game = Game.from_dict(data)
        for name, edited in edits(data, 0, np.random.default_rng(n)):
            twin = loadable(edited)
            if twin is None or "->" not in name and "trade" not in name:
                continue
            kinds[name.split(":")[0].split(" ")[0]] += 1
            different += check(game, twin, 0)[0]
            for encoding in ENCODINGS:
                coder = encoder_for(encoding)
                assert np.array_equal(coder.v1_observation(coder.encode(game, 0, "tracked")),
                                      coder.v1_observation(coder.encode(twin, 0, "tracked"))), name
    assert different >= 10 and {"discard", "seat", "removed", "type"} <= set(kinds), kinds


def test_the_issues_church_and_town_hall():
    """Two positions that differ only in which board discarded a church and which a town hall (issue 25)."""
    church, town_hall = (int(TYPE_OF[CARDS.names.index(name)]) for name in ("church", "town_hall"))
    guildhall_church, guildhall_town_hall = cards_of(church, 0)[0], cards_of(town_hall, 0)[0]
    docks_church, docks_town_hall = cards_of(church, 1)[0], cards_of(town_hall, 1)[0]
    pos = Position(3, seed=0).discard(0, guildhall_church).discard(1, docks_town_hall)
    pos.deck_top(0, guildhall_town_hall).deck_top(1, docks_church)
    game = pos.game()
    twin = Game.from_dict(exchange(pos.data, (guildhall_church, guildhall_town_hall), (docks_town_hall, docks_church)))
    for mode in MODES:
        for encoding in ENCODINGS:
            coder = encoder_for(encoding)
            a, b = coder.encode(game, 0, mode), coder.encode(twin, 0, mode)
            if mode in ("tracked", "table"):  # v1 was blind to it (online and full: the decks' contents tell)
                assert np.array_equal(coder.v1_observation(a), coder.v1_observation(b)), (mode, encoding)
            assert not np.array_equal(a, b), (mode, encoding)
        split = encoder().split(encoder().encode(game, 0, mode))["by_board"]
        assert split[PAIRS.index((church, 0)), 0] == 1 and split[PAIRS.index((church, 1)), 0] == 0
        assert split[PAIRS.index((town_hall, 1)), 0] == 1 and split[PAIRS.index((town_hall, 0)), 0] == 0


def test_the_page_of_payment_options_shown_is_knowledge():
    """Two positions that differ only in the page of payment options shown (issue 25: 22 options, 12 a page) give
    the payer different vectors in every mode, and the other seats wherever they see the options (not table)."""
    first = paying(HAND_22)
    second = on_page(first, 1)
    assert second.payment_options() == first.payment_options() and second.state.location.tolist() == \
        first.state.location.tolist()
    for seat in range(first.num_players):
        different, same = check(first, second, seat)
        assert (different, same) == ((len(MODES), 0) if seat == first.current_player else (len(MODES) - 1, 1)), seat
    for encoding in ENCODINGS:  # and the piece that says so, beside the options of the page
        coder = encoder_for(encoding)
        pages = [coder.split(coder.encode(game, 0, "table"))["payment_page"].tolist() for game in (first, second)]
        assert pages == [[1.0, 0.0], [0.0, 0.5]], encoding
