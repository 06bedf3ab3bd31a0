"""The observation vector: its layout, and each piece's contents on known positions (R-INFO-1..3, R-VAR-1).

Expected values are computed here from the saved-game dict (``Game.to_dict``) and ``card_types``, not
from the encoder's internals, so a wrong lookup table in the encoder shows up as a mismatch.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from packetrow_env import actions
from packetrow_env.cards import GOODS, NUM_CONTRACTS, SHIP, START, load
from packetrow_env.engine import Game
from packetrow_env.observation import MODES, Encoder, card_types, encoder, layout, layout_table

CARDS = load()
ENC = encoder()
TYPE_OF, TYPE_NAMES = card_types(CARDS)
F = len(TYPE_NAMES)
MAX_SEATS = 5

DOCUMENTED_PIECES = ("num_players", "round", "phase", "current_board", "chosen_boards", "exhausted", "deck_sizes",
                     "seats", "holds_starting_contract", "ships", "pending_shipment", "current_supply",
                     "future_supply", "hands", "discarded", "unseen", "paying", "payment_options", "payment_page",
                     "by_board")
DECK_PIECES = ("deck_contents",)  # appended in the modes that know each deck's contents (online, full)


def documented(mode: str) -> tuple[str, ...]:
    return DOCUMENTED_PIECES + (DECK_PIECES if mode in ("online", "full") else ())


# --------------------------------------------------------------------------- helpers
def counts(card_ids) -> np.ndarray:
    """Card-type counts of some cards (what every card-count row of the observation holds)."""
    return np.bincount(TYPE_OF[list(card_ids)], minlength=F).astype(np.float32)


def take_out(d: dict, card: int) -> None:
    """Remove a card from wherever a saved-game dict holds it (a supply slot gets the deck's top card, as a refill
    would have dealt it)."""
    for board in d["boards"]:
        for key in ("deck", "discard"):
            if card in board[key]:
                board[key].remove(card)
                return
        for key in ("current", "future"):
            if card in board[key]:
                board[key][board[key].index(card)] = board["deck"].pop(0) if board["deck"] else None
                return
    if card in d["removed"]:
        d["removed"].remove(card)
        return
    for player in d["players"]:
        for key in ("hand", "ships"):
            if card in player[key]:
                player[key].remove(card)
                return
    raise AssertionError(f"card {card} is nowhere")


def put(d: dict, card: int, where: str, index: int) -> None:
    """Move a card to a seat's hand/ships or a board's discard pile."""
    take_out(d, card)
    if where in ("hand", "ships"):
        d["players"][index][where] = sorted(d["players"][index][where] + [card])
    else:
        d["boards"][index][where] = sorted(d["boards"][index][where] + [card])


def deal_start(d: dict, seat: int, card: int) -> None:
    """Give a seat the starting contract ``card`` (it must be out of the game now); his old one leaves the game."""
    assert card in d["removed"]
    player = d["players"][seat]
    old = player["starting_contract"]
    player["hand"].remove(old)
    d["removed"].remove(card)
    d["removed"].append(old)
    player["hand"] = sorted(player["hand"] + [card])
    player["starting_contract"] = card


def seat_order(n: int, seat: int) -> list[int]:
    return [(seat + k) % n for k in range(n)]


def pieces(game: Game, seat: int, mode: str) -> dict[str, np.ndarray]:
    vector = ENC.encode(game, seat, mode)
    assert vector.dtype == np.float32 and vector.shape == (ENC.size_of(mode),)
    return ENC.split(vector)


def known_position() -> dict:
    """A 4-player position with distinct cash, hands, ships, discards and a taken piece (round 3, HM = seat 1)."""
    d = Game.new(4, seed=11).to_dict()
    for p, cash in enumerate((11, 22, 33, 44)):
        d["players"][p]["cash"] = cash
    for card in (85, 92, 34, 3, 142):  # seat 1: grain 3, cotton 3, library, a contract, $5
        put(d, card, "hand", 1)
    for card in (38, 41, 39):  # seat 2: two ships to Great Britain, one to France
        put(d, card, "ships", 2)
    for card in (108, 24):  # seat 3: trader, assistant
        put(d, card, "hand", 3)
    put(d, 53, "ships", 3)
    put(d, 120, "hand", 0)  # seat 0: university
    put(d, 29, "discard", 0)
    put(d, 80, "discard", 2)
    put(d, 81, "discard", 2)
    put(d, 122, "discard", 3)
    d["round"] = 3
    d["harbour_master"] = 1
    d["current_player"] = 1
    d["players"][3]["has_piece"] = False
    d["chosen_boards"] = [2]
    return d


# --------------------------------------------------------------------------- layout
@pytest.mark.parametrize("mode", MODES)
def test_layout_pieces_are_contiguous_and_cover_the_vector(mode):
    spec = layout(mode)
    assert tuple(p.name for p in spec) == documented(mode)
    offset = 0
    for piece in spec:
        assert piece.offset == offset, piece
        assert piece.size == int(np.prod(piece.shape)) > 0
        assert piece.description
        offset += piece.size
    assert offset == ENC.size_of(mode)
    assert ENC.size_of(mode) == ENC.size + (4 * F if mode in ("online", "full") else 0)
    game = Game.new(3, seed=0)
    assert ENC.encode(game, 0, mode).shape == (ENC.size_of(mode),)
    split = ENC.split(ENC.encode(game, 0, mode))
    assert list(split) == list(documented(mode))
    assert sum(v.size for v in split.values()) == ENC.size_of(mode)
    for piece in spec:
        assert split[piece.name].shape == piece.shape


def test_layout_shapes_match_the_documented_sizes():
    shapes = {p.name: p.shape for p in layout()}
    assert shapes["num_players"] == (4,)
    assert shapes["phase"] == (4,)
    assert shapes["seats"] == (MAX_SEATS, 5)
    assert shapes["holds_starting_contract"] == (MAX_SEATS,)
    assert shapes["ships"] == (MAX_SEATS, 6)
    assert shapes["pending_shipment"] == (NUM_CONTRACTS,)
    assert shapes["current_supply"] == (4, 4, F)
    assert shapes["future_supply"] == (4, 2, F)
    assert shapes["hands"] == (MAX_SEATS, F)
    assert shapes["discarded"] == (F,) and shapes["unseen"] == (F,)


def test_layout_table_mentions_every_piece():
    table = layout_table()
    for piece in layout():
        assert f"`{piece.name}`" in table
        assert str(piece.offset) in table
    assert str(ENC.size) in table


@pytest.mark.parametrize("bad", ["partial", "", "Tracked", None])
def test_unknown_mode_is_a_value_error(bad):
    with pytest.raises(ValueError, match="tracked"):
        layout(bad)
    with pytest.raises(ValueError, match="tracked"):
        layout_table(bad)
    with pytest.raises(ValueError, match="tracked"):
        ENC.encode(Game.new(2, seed=0), 0, bad)


def test_card_types_group_cards_by_effect():
    assert len(TYPE_OF) == 172
    assert list(TYPE_OF[CARDS.contract_ids]) == list(range(NUM_CONTRACTS))  # contracts by contract number
    ships = np.flatnonzero(CARDS.kind == SHIP)
    for d in range(6):  # three ships to one destination share one type
        assert len({int(TYPE_OF[c]) for c in ships if CARDS.destination[c] == d}) == 1
    assert len({int(TYPE_OF[c]) for c in ships}) == 6
    assert TYPE_OF[85] == TYPE_OF[86] != TYPE_OF[83]  # grain 3 vs grain 2
    assert TYPE_OF[142] != TYPE_OF[136]  # $5 vs $4


# --------------------------------------------------------------------------- piece contents
@pytest.mark.parametrize("mode", MODES)
def test_pieces_on_a_known_position(mode):
    d = known_position()
    game = Game.from_dict(d)
    n, observer = 4, 2
    order = seat_order(n, observer)  # [2, 3, 0, 1]
    obs = pieces(game, observer, mode)

    assert list(obs["num_players"]) == [0, 0, 1, 0]
    assert obs["round"][0] == pytest.approx(3 / (3 + 30))
    assert list(obs["phase"]) == [1, 0, 0, 0]
    assert not obs["current_board"].any()
    assert list(obs["chosen_boards"]) == [0, 0, 1, 0]
    assert not obs["exhausted"].any()
    assert obs["deck_sizes"] == pytest.approx([len(b["deck"]) / 42 for b in d["boards"]])

    # seats: slot 0 = the observer, then clockwise; padding slot 4 is zero
    seats = obs["seats"]
    for k, q in enumerate(order):
        player = d["players"][q]
        expected = [1.0, player["cash"] / 25, float(player["has_piece"]), float(q == 1), float(q == 1)]
        assert seats[k].tolist() == pytest.approx(expected), (k, q)
    assert not seats[4].any()

    # ships per destination, seat-relative
    ships = obs["ships"]
    assert list(ships[0]) == [2, 1, 0, 0, 0, 0]  # the observer's own (seat 2)
    assert list(ships[1]) == [0, 0, 0, 0, 0, 1]  # seat 3
    assert not ships[2:].any()

    # supplies by slot: one-hot card type, zeros for empty and unused slots (4 players: 3 slots)
    for b, board in enumerate(d["boards"]):
        for slot in range(4):
            card = board["current"][slot] if slot < len(board["current"]) else None
            expected = np.zeros(F) if card is None else np.eye(F)[TYPE_OF[card]]
            assert np.array_equal(obs["current_supply"][b, slot], expected), (b, slot)
        for slot in range(2):
            card = board["future"][slot]
            expected = np.zeros(F) if card is None else np.eye(F)[TYPE_OF[card]]
            assert np.array_equal(obs["future_supply"][b, slot], expected), (b, slot)

    assert np.array_equal(obs["discarded"], counts(c for b in d["boards"] for c in b["discard"]))
    assert not obs["pending_shipment"].any()

    # hands: own hand in full; opponents as the mode reveals them
    starts = [p["starting_contract"] for p in d["players"]]
    assert np.array_equal(obs["hands"][0], counts(game.hand(observer)))
    assert np.array_equal(obs["hands"][0], counts(d["players"][observer]["hand"]))
    for k, q in enumerate(order[1:], start=1):
        hand = game.hand(q)
        if mode in ("tracked", "online"):
            expected = counts([c for c in hand if c != starts[q]])
        elif mode == "full":
            expected = counts(hand)
        else:
            expected = np.zeros(F)
        assert np.array_equal(obs["hands"][k], expected), (mode, k, q)
    assert not obs["hands"][4].any()

    hidden = list(d["removed"])
    if mode in ("tracked", "table"):  # online and full show each deck's contents (R-INFO-4)
        hidden += [c for b in d["boards"] for c in b["deck"]]
        assert "deck_contents" not in obs
    else:
        for b, board in enumerate(d["boards"]):
            assert np.array_equal(obs["deck_contents"][b], counts(board["deck"])), b
    if mode in ("tracked", "online"):
        hidden += [starts[q] for q in order[1:]]
    elif mode == "table":
        hidden += [c for q in order[1:] for c in game.hand(q)]
    assert np.array_equal(obs["unseen"], counts(hidden))

    holds = [1, 0, 0, 0, 0] if mode == "table" else [1, 1, 1, 1, 0]
    assert list(obs["holds_starting_contract"]) == holds

    # by_board: the buildings' counts of the rows above, board by board (seat 1's library 34 is the guildhall's, seat
    # 0's university 120 the market's, the discarded church 29 the guildhall's)
    pairs = ENC.board_pairs
    assert sorted({TYPE_NAMES[t] for t, _ in pairs}) == ["church_1vp", "library_3vp", "town_hall_2vp",
                                                         "university_4vp"]
    assert [b for _, b in pairs] == [0, 1, 2, 3] * 4
    revealed = [order[0]] if mode == "table" else order
    for i, (t, b) in enumerate(pairs):
        ids = {c for c in range(172) if TYPE_OF[c] == t and CARDS.board[c] == b}
        row = obs["by_board"][i]
        discarded = [c for board in d["boards"] for c in board["discard"] if c in ids]
        assert row[0] == len(discarded), (t, b)
        for k, q in enumerate(order):
            assert row[1 + k] == (len(ids & set(game.hand(q))) if q in revealed else 0), (t, b, k)
        supplied = [c for c in d["boards"][b]["current"] + d["boards"][b]["future"] if c in ids]
        deck = [c for c in d["boards"][b]["deck"] if c in ids] if mode in ("online", "full") else []
        assert row[-1] == len(ids) - row[:-1].sum() - len(supplied) - len(deck), (t, b)
    assert not obs["by_board"][:, 1 + n:-1].any()
    for name, column in (("discarded", 0), ("unseen", -1)):  # the rows above are the sums over the boards
        for t in {t for t, _ in pairs}:
            assert obs[name][t] == sum(obs["by_board"][i, column] for i, (u, _) in enumerate(pairs) if u == t)
    assert obs["by_board"][pairs.index((int(TYPE_OF[34]), 0)), 1 + order.index(1)] == (mode != "table")
    assert obs["by_board"][pairs.index((int(TYPE_OF[120]), 2)), 1 + order.index(0)] == (mode != "table")
    assert obs["by_board"][pairs.index((int(TYPE_OF[29]), 0)), 0] == 1

    # every card is counted exactly once across supplies, hands, discards, unseen and ships
    total = (obs["current_supply"].sum() + obs["future_supply"].sum() + obs["hands"].sum()
             + obs["discarded"].sum() + obs["unseen"].sum() + obs["ships"].sum())
    assert total + (obs["deck_contents"].sum() if "deck_contents" in obs else 0) == 172


def test_own_hand_counts_equal_the_engine_hand_by_card_type():
    for n in range(2, 6):
        game = Game.new(n, seed=n)
        rng = np.random.default_rng(n)
        for _ in range(60):
            if game.is_over:
                break
            game.step(int(rng.choice(game.legal_actions())))
        for seat in range(n):
            for mode in MODES:
                own = pieces(game, seat, mode)["hands"][0]
                assert np.array_equal(own, counts(game.hand(seat)))
                assert own.sum() == len(game.hand(seat))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_padding_slots_are_zero_for_fewer_than_five_players(n):
    game = Game.new(n, seed=5)
    rng = np.random.default_rng(5)
    for _ in range(40):
        game.step(int(rng.choice(game.legal_actions())))
    for seat in range(n):
        for mode in MODES:
            obs = pieces(game, seat, mode)
            for name in ("seats", "ships", "hands"):
                assert not obs[name][n:].any(), (name, mode)
            assert not obs["holds_starting_contract"][n:].any()
            assert obs["seats"][:n, 0].tolist() == [1] * n
            size = {2: 2, 3: 2, 4: 3}[n]
            assert not obs["current_supply"][:, size:].any()


def test_five_players_fill_every_seat_slot():
    game = Game.new(5, seed=1)
    obs = pieces(game, 3, "tracked")
    assert obs["seats"][:, 0].tolist() == [1] * 5
    assert list(obs["num_players"]) == [0, 0, 0, 1]
    assert obs["holds_starting_contract"].tolist() == [1] * 5


def test_seats_are_relative_to_the_observer():
    d = Game.new(5, seed=2).to_dict()
    for p in range(5):
        d["players"][p]["cash"] = 10 * (p + 1)
    game = Game.from_dict(d)
    for observer in range(5):
        seats = pieces(game, observer, "tracked")["seats"]
        assert seats[:, 1].tolist() == pytest.approx([10 * ((observer + k) % 5 + 1) / 25 for k in range(5)])
        hm_slot = (0 - observer) % 5  # seat 0 is harbour master and to act
        assert seats[:, 3].tolist() == [float(k == hm_slot) for k in range(5)]
        assert seats[:, 4].tolist() == [float(k == hm_slot) for k in range(5)]


def test_pending_shipment_piece():
    d = Game.new(3, seed=4).to_dict()  # seat 0, harbour master, to choose a board
    put(d, 2, "hand", 0)  # contract: 2 grain to the Netherlands
    put(d, 83, "hand", 0)  # grain 2
    put(d, 44, "ships", 0)  # ship to the Netherlands
    d["pending_shipment"] = [2]
    game = Game.from_dict(d)
    for seat in range(3):
        for mode in MODES:
            pending = pieces(game, seat, mode)["pending_shipment"]
            expected = np.zeros(NUM_CONTRACTS)
            expected[CARDS.contract_number[2]] = 1
            assert np.array_equal(pending, expected)
    game.step(actions.SHIP)
    assert not pieces(game, 1, "tracked")["pending_shipment"].any()


def test_phase_board_and_to_act_follow_the_game():
    game = Game.new(4, seed=9)
    game.step(2)  # the harbour master chooses the market
    obs = pieces(game, 0, "tracked")
    assert list(obs["phase"]) == [0, 1, 0, 0]
    assert list(obs["current_board"]) == [0, 0, 1, 0]
    assert list(obs["chosen_boards"]) == [0, 0, 1, 0]
    assert obs["seats"][:, 4].tolist() == [0, 1, 0, 0, 0]  # seat 1 is asked first
    assert obs["seats"][:, 3].tolist() == [1, 0, 0, 0, 0]


def test_finished_game_has_phase_over_and_nobody_to_act():
    game = Game.new(3, seed=3)
    rng = np.random.default_rng(3)
    while not game.is_over:
        game.step(int(rng.choice(game.legal_actions())))
    for seat in range(3):
        obs = pieces(game, seat, "tracked")
        assert list(obs["phase"]) == [0, 0, 0, 1]
        assert not obs["seats"][:, 4].any()
        assert obs["exhausted"].sum() >= 1


# --------------------------------------------------------------------------- information rules
@pytest.mark.parametrize("mode", MODES)
def test_R_INFO_1_public_information_reaches_every_observer(mode):
    """R-INFO-1: supplies, discards, ships, cash, harbour master, pieces, chosen boards are in every mode."""
    base = known_position()
    game = Game.from_dict(base)
    changes = [  # (the piece that must change, the public change)
        ("seats", lambda d: d["players"][3].__setitem__("cash", 45)),  # cash
        ("seats", lambda d: d["players"][0].__setitem__("has_piece", False)),  # playing pieces
        ("seats", lambda d: d.update(harbour_master=0, current_player=0)),  # harbour master token
        ("ships", lambda d: put(d, 54, "ships", 0)),
        ("discarded", lambda d: put(d, 30, "discard", 0)),
        ("chosen_boards", lambda d: d.__setitem__("chosen_boards", [2, 3])),
    ]
    for piece, change in changes:
        d = copy.deepcopy(base)
        change(d)
        other = Game.from_dict(d)
        for observer in range(4):
            before = pieces(game, observer, mode)[piece]
            after = pieces(other, observer, mode)[piece]
            assert not np.array_equal(before, after), (piece, observer)
    # a supply card swapped with a deck card of another type
    d = copy.deepcopy(base)
    market = d["boards"][2]
    slot = next(i for i, c in enumerate(market["current"]) if c is not None)
    old = market["current"][slot]
    new = next(c for c in market["deck"] if TYPE_OF[c] != TYPE_OF[old])
    market["deck"][market["deck"].index(new)] = old
    market["current"][slot] = new
    other = Game.from_dict(d)
    for observer in range(4):
        assert not np.array_equal(pieces(game, observer, mode)["current_supply"],
                                  pieces(other, observer, mode)["current_supply"])


def _same_observation(a: Game, b: Game, seat: int, mode: str) -> bool:
    return ENC.encode(a, seat, mode).tobytes() == ENC.encode(b, seat, mode).tobytes()


def test_R_INFO_2_starting_contracts_deck_order_and_removed_cards_are_hidden():
    """R-INFO-2: an opponent's starting contract, deck orders and 2-player removed cards change no fair view."""
    d = Game.new(2, seed=21).to_dict()
    game = Game.from_dict(d)
    twin = copy.deepcopy(d)
    spare = next(c for c in twin["removed"] if CARDS.board[c] == START)
    deal_start(twin, 1, spare)  # seat 1's starting contract
    for board in twin["boards"]:  # deck order
        board["deck"].reverse()
    for b, board in enumerate(twin["boards"]):  # which cards of each board were removed
        removed = next(c for c in twin["removed"] if CARDS.board[c] == b)
        deck_card = next(c for c in board["deck"] if TYPE_OF[c] != TYPE_OF[removed])
        twin["removed"][twin["removed"].index(removed)] = deck_card
        board["deck"][board["deck"].index(deck_card)] = removed
    other = Game.from_dict(twin)
    for mode in ("tracked", "table"):
        assert _same_observation(game, other, 0, mode)
    assert not _same_observation(game, other, 0, "full")  # full mode shows the starting contract
    assert not _same_observation(game, other, 1, "tracked")  # seat 1 knows his own


def test_R_INFO_2_table_mode_hides_opponent_hand_contents_and_sizes():
    """R-INFO-2: in table mode, moving a card between two opponents' hands changes nothing for the observer."""
    d = known_position()
    game = Game.from_dict(d)
    twin = copy.deepcopy(d)
    put(twin, 85, "hand", 3)  # grain 3 from seat 1's hand to seat 3's: both hand sizes change
    other = Game.from_dict(twin)
    assert _same_observation(game, other, 2, "table")
    assert not _same_observation(game, other, 2, "tracked")  # seat 2 saw both takes
    assert not _same_observation(game, other, 1, "table")  # seat 1 knows his own hand


def test_R_INFO_3_tracked_equals_perfect_memory():
    """R-INFO-3: tracked hands = cards seen taken minus cards seen discarded, plus one unseen starting contract
    (seen while it is staged in a pending shipment: R-INFO-1)."""
    for n, seed in ((2, 1), (3, 2), (4, 3), (5, 4)):
        game = Game.new(n, seed=seed)
        rng = np.random.default_rng(seed)
        known = [[] for _ in range(n)]  # what everybody saw each seat take, minus what they saw him discard
        revealed = [False] * n  # starting contract seen discarded
        starts = [int(game.state.starting_contract[q]) for q in range(n)]
        steps = 0
        while not game.is_over:
            before = game.to_dict()
            p = game.current_player
            a = int(rng.choice(game.legal_actions()))
            board = before["current_board"]
            taken = None
            if actions.TAKE <= a < actions.TAKE_FUTURE:
                taken = before["boards"][board]["current"][a - actions.TAKE]
            elif actions.TAKE_FUTURE <= a < actions.PASS:
                taken = before["boards"][board]["future"][a - actions.TAKE_FUTURE]
            game.step(a)
            after = game.to_dict()
            if taken is not None and CARDS.kind[taken] != SHIP:
                known[p].append(taken)
            discarded_now = {c for b in after["boards"] for c in b["discard"]} \
                - {c for b in before["boards"] for c in b["discard"]}
            for q in range(n):  # R-SCORE-1 discards everybody's cards at the end
                if q == p or game.is_over:
                    known[q] = [c for c in known[q] if c not in discarded_now]
                    revealed[q] = revealed[q] or starts[q] in discarded_now
            steps += 1
            if steps % 7 and not game.is_over:
                continue
            for observer in range(n):
                obs = pieces(game, observer, "tracked")
                for k, q in enumerate(seat_order(n, observer)):
                    if k == 0:
                        continue
                    # R-INFO-1: a starting contract staged for shipping was named by a public action
                    staged = [starts[q]] if starts[q] in after["pending_shipment"] else []
                    assert np.array_equal(obs["hands"][k], counts(known[q] + staged)), (n, steps, observer, q)
                    assert obs["holds_starting_contract"][k] == (not revealed[q])
        assert steps > 50


def test_R_VAR_1_online_opponent_hand_is_the_open_display():
    """R-VAR-1, R-INFO-4: an opponent's hand as the online edition displays it (online mode, and tracked, which
    knows the same hands) is his hand minus his starting contract while he holds it, then all of it."""
    d = Game.new(3, seed=8).to_dict()
    start = 160  # starting contract: 2 grain to Sweden
    if d["players"][1]["starting_contract"] != start:
        holder = next((q for q, row in enumerate(d["players"]) if row["starting_contract"] == start), None)
        if holder is not None:  # give it back to the pile first
            deal_start(d, holder, next(c for c in d["removed"] if CARDS.board[c] == START))
        deal_start(d, 1, start)
    put(d, 83, "hand", 1)  # grain 2
    put(d, 125, "hand", 1)  # $2
    put(d, 47, "ships", 1)  # ship to Sweden
    d["harbour_master"] = d["current_player"] = 1
    game = Game.from_dict(d)
    hand = game.hand(1)
    assert start in hand
    for observer in (0, 2):
        obs = pieces(game, observer, "online")
        assert np.array_equal(obs["hands"], pieces(game, observer, "tracked")["hands"])
        k = (1 - observer) % 3
        assert np.array_equal(obs["hands"][k], counts([c for c in hand if c != start]))
        assert obs["holds_starting_contract"][k] == 1
        assert obs["unseen"][TYPE_OF[start]] == 1
        full = pieces(game, observer, "full")
        assert np.array_equal(full["hands"][k], counts(hand))
    game.step(actions.ADD_CONTRACT + int(CARDS.contract_number[start]))
    game.step(actions.SHIP)  # the starting contract is shipped: now everybody has seen it
    hand = game.hand(1)
    assert start not in hand and hand == [125]
    for observer in (0, 2):
        obs = pieces(game, observer, "tracked")
        k = (1 - observer) % 3
        assert np.array_equal(obs["hands"][k], counts(hand))
        assert obs["holds_starting_contract"][k] == 0
        assert obs["unseen"][TYPE_OF[start]] == 0
        assert obs["discarded"][TYPE_OF[start]] == 1
        assert np.array_equal(obs["hands"][k], pieces(game, observer, "full")["hands"][k])


def test_state_vector_is_seat_zero_full_view():
    game = Game.new(4, seed=2)
    assert np.array_equal(ENC.state_vector(game), ENC.encode(game, 0, "full"))


def test_encoder_of_a_catalogue_is_cached_and_typed():
    assert encoder() is encoder()
    assert encoder(CARDS) is encoder(CARDS)
    assert isinstance(ENC, Encoder)
    assert ENC.num_types == F and ENC.type_names == TYPE_NAMES
    assert set(GOODS) <= {name.split("_")[0] for name in TYPE_NAMES}
