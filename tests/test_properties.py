"""Property tests of the engine under random legal play (hypothesis, derandomized).

Every game here is played by a seeded numpy policy that picks uniformly among
the legal actions, for every player count and for random seeds and starting
seats. The properties are the engine's contract (docs/design.md "The engine"):
cards are conserved, the mask is honest, games end, scoring names the right
winners, same seed and actions give the same game byte for byte, save/load and
clone continue identically, and an illegal action changes nothing.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packetrow_env import actions, shipping
from packetrow_env.cards import BANKER, BUILDING, CONTRACT, MONEY, NUM_CARDS, SHIP, START, load
from packetrow_env.engine import Game, IllegalActionError
from packetrow_env.state import (CURRENT, DECK, DISCARD, END_THRESHOLD, FUTURE, HAND, REMOVED, SHIPS,
                                 SUPPLY_SIZE)

CARDS = load()
PLAYER_COUNTS = (2, 3, 4, 5)
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)

# R-END-2 gives a bound: each round refills at least one board; a board can be
# refilled at most (deck size + 3) times before its supplies are empty and it
# can no longer be chosen, so there are at most 4 * (42 + 3) = 180 rounds. A
# round has at most 4 choices and 4 * 5 take/pass decisions, plus at most 3
# shipment actions per contract over the whole game (36 contracts): add, ship, pay.
MAX_STEPS = 180 * (4 + 4 * 5) + 3 * 36


def _settings(examples: int):
    return settings(derandomize=True, deadline=None, max_examples=examples, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------ helpers

def random_action(game: Game, rng: np.random.Generator):
    """A random legal action (a numpy integer, as an agent would return it): half the time, when a shipment
    action (add contract, ship, pay) is legal, one of those, so that shipments and pay phases come often."""
    legal = np.flatnonzero(game.legal_action_mask())
    shipping_actions = legal[legal >= actions.ADD_CONTRACT]
    if len(shipping_actions) and rng.random() < 0.5:
        return shipping_actions[rng.integers(len(shipping_actions))]
    return legal[rng.integers(len(legal))]


def playout(num_players, seed, random_start, policy_seed):
    """Play a random game to the end; return the finished game and the actions (plain ints)."""
    game = Game.new(num_players, seed=seed, random_start=random_start)
    rng = np.random.default_rng(policy_seed)
    played = []
    while not game.is_over:
        assert len(played) < MAX_STEPS, "the game did not end within the bound of R-END-2"
        a = random_action(game, rng)
        game.step(a)
        played.append(int(a))
    return game, played


def dump(game: Game) -> str:
    """The position as the bytes a saved game would hold."""
    return json.dumps(game.to_dict())


def card_places(d: dict) -> dict[int, int]:
    """card id -> location code (state.py), read from a to_dict() position; each card listed once."""
    where: dict[int, int] = {}

    def put(cards, code, label):
        for c in cards:
            assert type(c) is int, f"{label} lists {c!r}, not an int"
            assert c not in where, f"card {c} is listed twice (again in {label})"
            where[c] = code

    for b, board in enumerate(d["boards"]):
        put(board["deck"], DECK + b, f"deck {b}")
        put(board["discard"], DISCARD + b, f"discard {b}")
        put([c for c in board["current"] if c is not None], CURRENT + b, f"current {b}")
        put([c for c in board["future"] if c is not None], FUTURE + b, f"future {b}")
    put(d["removed"], REMOVED, "removed")
    for p, player in enumerate(d["players"]):
        put(player["hand"], HAND + p, f"hand {p}")
        put(player["ships"], SHIPS + p, f"ships {p}")
    assert sorted(where) == list(range(NUM_CARDS)), \
        f"cards missing: {sorted(set(range(NUM_CARDS)) - set(where))}"
    return where


def wealth(d: dict, p: int) -> int:
    """Cash plus the money cards in hand: what a player can pay (R-TAKE-4)."""
    player = d["players"][p]
    return player["cash"] + sum(int(CARDS.money[c]) for c in player["hand"] if CARDS.kind[c] == MONEY)


def check_position(game: Game, d: dict) -> None:
    """Everything that must hold in any position reached by legal play."""
    n = d["num_players"]
    where = card_places(d)
    assert game.state.location.tolist() == [where[c] for c in range(NUM_CARDS)], \
        "state.location disagrees with to_dict()"

    for b, board in enumerate(d["boards"]):
        assert len(board["current"]) == SUPPLY_SIZE[n] and len(board["future"]) == 2
        for c in board["deck"] + [c for c in board["current"] + board["future"] if c is not None]:
            assert CARDS.board[c] == b, f"card {c} is on board {b}'s deck or supply"
        for c in board["discard"]:
            assert CARDS.board[c] == b or (b == 0 and CARDS.board[c] == START), f"card {c} in discard {b}"
    for p, player in enumerate(d["players"]):
        assert player["cash"] >= 0, f"player {p} has negative cash"
        assert all(CARDS.kind[c] == SHIP for c in player["ships"])
        assert not any(CARDS.kind[c] == SHIP for c in player["hand"])
        assert game.hand(p) == player["hand"] and game.ships(p) == player["ships"]
        assert where[player["starting_contract"]] in (HAND + p, DISCARD + 0)

    mask = game.legal_action_mask()
    assert mask.dtype == bool and mask.shape == (actions.NUM_ACTIONS,)
    assert not mask.flags.writeable
    assert game.legal_actions() == np.flatnonzero(mask).tolist()
    exhausted = sum(board["exhausted"] for board in d["boards"])
    chosen = d["chosen_boards"]
    assert len(set(chosen)) == len(chosen)

    if game.is_over:
        assert game.current_player is None and d["current_player"] is None
        assert game.phase == d["phase"] == "over"
        assert not mask.any(), "actions are legal after the game ended"
        assert d["pending_shipment"] == []
        assert exhausted >= END_THRESHOLD[n]
        for player in d["players"]:  # R-SCORE-1: money cards are cashed at the end
            assert not any(CARDS.kind[c] == MONEY for c in player["hand"])
        return

    cp = game.current_player
    assert cp is not None and cp == d["current_player"] and 0 <= cp < n
    assert game.phase == d["phase"] != "over"
    assert mask.any(), "no legal action while the game runs"
    assert exhausted < END_THRESHOLD[n], "the game should have ended (R-END-1)"
    hm = d["harbour_master"]
    assert d["players"][hm]["has_piece"], "the harbour master took a card but the round goes on"
    if d["phase"] == "pay":  # R-SHIP-7: only paying, with one of at least two distinct options, in order
        options = game.payment_options()
        page = game.payment_page_options()
        first = d["payment_page"] * actions.MAX_PAYMENT_OPTIONS
        assert d["pending_shipment"] and len(options) >= 2 and page == options[first:first + len(page)] != []
        more = first + len(page) < len(options)
        assert mask[actions.PAY:actions.PAY + len(page)].all() and mask[actions.MORE] == more
        assert mask.sum() == len(page) + more
        assert len(set(options)) == len(options)
        values = [(sum(int(CARDS.value[c]) for c in o), o) for o in options]
        assert values == sorted(values)
        held = set(d["players"][cp]["hand"]) | set(d["players"][cp]["ships"])
        assert all(set(o) <= held and not set(o) & set(d["pending_shipment"]) for o in options)
        d = dict(d, phase=d["resume_phase"])  # the rest holds as in the phase the payment resumes
    else:
        assert d["resume_phase"] is None and d["payment_page"] is None and game.payment_options() == []
    if d["phase"] == "choose_board":
        assert cp == hm and d["current_board"] is None
    else:
        assert d["current_board"] == chosen[-1]
        assert d["players"][cp]["has_piece"], "a player who already took is asked again"
    if d["phase"] == "must_take":
        assert cp == hm and [pl["has_piece"] for pl in d["players"]].count(True) == 1
    pending = d["pending_shipment"]
    assert len(set(pending)) == len(pending)
    assert all(c in d["players"][cp]["hand"] and CARDS.kind[c] == CONTRACT for c in pending)
    if game.phase == "pay":
        pass
    elif pending:  # only "add contract" and "ship" while a shipment is staged
        assert mask[actions.SHIP] and not mask[:actions.ADD_CONTRACT].any() and not mask[actions.PAY:].any()
    else:
        assert not mask[actions.SHIP]
        if d["phase"] == "choose_board":
            assert not mask[actions.TAKE:actions.PASS + 1].any()
        elif d["phase"] == "take":
            assert mask[actions.PASS]
        else:
            assert not mask[actions.PASS] and mask[actions.TAKE:actions.PASS].any()


def _without(d: dict, *keys) -> dict:
    return {k: v for k, v in d.items() if k not in keys}


def check_transition(before: dict, after: dict, action: int) -> None:
    """What one action may and may not change."""
    n = before["num_players"]
    actor = before["current_player"]
    assert after["history"] == before["history"] + [action]
    assert after["removed"] == before["removed"], "cards removed unseen never come back"
    for b in range(4):
        old, new = before["boards"][b], after["boards"][b]
        assert set(old["discard"]) <= set(new["discard"]), "a discard pile lost cards (R-REFILL-2)"
        assert new["deck"] == old["deck"][len(old["deck"]) - len(new["deck"]):], "cards left a deck not from the top"
        assert new["exhausted"] or not old["exhausted"], "an exhausted board recovered (R-REFILL-2)"

    if action >= actions.ADD_CONTRACT:
        if action == actions.SHIP and after["phase"] == "pay":  # R-SHIP-7: the choice of payment comes first
            assert before["phase"] != "pay" and after["resume_phase"] == before["phase"] and after["payment_page"] == 0
            assert _without(before, "phase", "resume_phase", "payment_page", "history") == \
                _without(after, "phase", "resume_phase", "payment_page", "history")
        elif action == actions.MORE:  # R-SHIP-7: the next page of options, nothing else
            assert before["phase"] == after["phase"] == "pay"
            assert after["payment_page"] == before["payment_page"] + 1
            assert _without(before, "payment_page", "history") == _without(after, "payment_page", "history")
        elif action == actions.SHIP or action >= actions.PAY:  # R-SHIP-1: contracts, payment and reward
            staged = before["pending_shipment"]
            assert staged and after["pending_shipment"] == []
            old_p, new_p = before["players"][actor], after["players"][actor]
            assert new_p["cash"] == old_p["cash"] + sum(int(CARDS.reward[c]) for c in staged)
            gone = (set(old_p["hand"]) | set(old_p["ships"])) - (set(new_p["hand"]) | set(new_p["ships"]))
            assert set(staged) <= gone and set(new_p["hand"]) <= set(old_p["hand"])
            for c in gone:
                pile = 0 if CARDS.board[c] == START else int(CARDS.board[c])
                assert c in after["boards"][pile]["discard"], f"shipped card {c} is not on its discard pile"
            others = [pl for p, pl in enumerate(before["players"]) if p != actor]
            assert others == [pl for p, pl in enumerate(after["players"]) if p != actor]
            if action >= actions.PAY:  # the option chosen is exactly what was discarded
                option = Game.from_dict(before).payment_page_options()[action - actions.PAY]
                assert gone - set(staged) == set(option)
                assert before["phase"] == "pay" and after["phase"] == before["resume_phase"]
                assert after["payment_page"] is None
                before = dict(before, phase=after["phase"], resume_phase=None, payment_page=None)
            assert _without(before, "players", "boards", "pending_shipment", "history") == \
                _without(after, "players", "boards", "pending_shipment", "history")
        else:
            contract = int(CARDS.contract_ids[action - actions.ADD_CONTRACT])
            assert after["pending_shipment"] == before["pending_shipment"] + [contract]
            assert _without(before, "pending_shipment", "history") == _without(after, "pending_shipment", "history")
        return

    assert before["pending_shipment"] == [] == after["pending_shipment"]
    if after["phase"] == "over":
        return  # the final fulfilment and cashing (R-SCORE-1) change hands and cash
    if actions.TAKE <= action < actions.PASS:
        board = before["boards"][before["current_board"]]
        if action < actions.TAKE_FUTURE:
            card = board["current"][action - actions.TAKE]
        else:
            card = board["future"][action - actions.TAKE_FUTURE]
        old_p, new_p = before["players"][actor], after["players"][actor]
        assert card in new_p["hand"] + new_p["ships"], "the taken card is not with the taker (R-TAKE-5)"
        cost = int(CARDS.cost[card])
        gained = int(CARDS.money[card])  # taking a money card adds to what one can pay
        assert wealth(after, actor) == wealth(before, actor) - cost + gained, "a take paid the wrong amount (R-TAKE-3/4)"
        lost = set(old_p["hand"]) - set(new_p["hand"])
        cashed = {c for c in lost if CARDS.kind[c] == MONEY}
        assert all(c in after["boards"][3]["discard"] for c in cashed), "cashed money not on the bank discard"
        if old_p["cash"] >= cost:
            assert not cashed, "money cards cashed although cash covered the cost (R-TAKE-4)"
        spent_assistants = lost - cashed
        assert len(spent_assistants) == (1 if action >= actions.TAKE_FUTURE else 0)
        assert all(c in after["boards"][0]["discard"] for c in spent_assistants)
    else:  # choose or pass: nobody's cards or cash change
        actor = None
    for p in range(n):
        if p == actor:
            continue
        old_p, new_p = before["players"][p], after["players"][p]
        assert (old_p["cash"], old_p["hand"], old_p["ships"]) == (new_p["cash"], new_p["hand"], new_p["ships"])


def check_final(game: Game, d: dict) -> None:
    """Scores and the final fulfilment of a finished game (R-SCORE-1..4)."""
    n = d["num_players"]
    rows = game.scores()
    assert len(rows) == n
    best = max((row["vp"], row["cash"]) for row in rows)
    assert [row["winner"] for row in rows] == [(row["vp"], row["cash"]) == best for row in rows]
    assert any(row["winner"] for row in rows)
    cash = [player["cash"] for player in d["players"]]
    top = max(cash)
    for p, (row, player) in enumerate(zip(rows, d["players"])):
        hand = player["hand"]
        assert row["cash"] == player["cash"]
        assert row["vp"] == row["building_vp"] + row["money_vp"] + row["banker_vp"]
        assert row["money_vp"] == player["cash"] // 10
        assert row["building_vp"] == sum(int(CARDS.vp[c]) for c in hand if CARDS.kind[c] == BUILDING)
        bankers = sum(1 for c in hand if CARDS.kind[c] == BANKER)
        if n <= 3:
            per_banker = 2 if cash[p] == top else 0
        elif cash.count(top) > 1:
            per_banker = 3 if cash[p] == top else 0
        else:
            second = max(c for c in cash if c != top)
            per_banker = 3 if cash[p] == top else 1 if cash[p] == second else 0
        assert row["banker_vp"] == per_banker * bankers
        # R-SCORE-1 fulfils the best set: nothing left could still be shipped on top of it.
        resources = hand + player["ships"]
        for c in hand:
            if CARDS.kind[c] == CONTRACT:
                assert not shipping.can_fulfil(CARDS, resources, [c]), \
                    f"player {p} ends with contract {c} still fulfillable"
    assert game.scores() == rows, "scores() of a finished game changed"


# ------------------------------------------------------------ properties

@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@_settings(40)
@given(seed=SEEDS, random_start=st.booleans(), policy_seed=SEEDS)
def test_random_play_keeps_every_invariant(num_players, seed, random_start, policy_seed):
    """Cards conserved, cash >= 0, honest mask, phases consistent, games end, winners right (R-END-2)."""
    game = Game.new(num_players, seed=seed, random_start=random_start)
    rng = np.random.default_rng(policy_seed)
    d = game.to_dict()
    assert d["round"] == 1 and d["history"] == []
    if not random_start:
        assert d["harbour_master"] == 0  # R-SETUP-7
    check_position(game, d)
    steps = 0
    while not game.is_over:
        assert steps < MAX_STEPS, "the game did not end within the bound of R-END-2"
        mask = game.legal_action_mask()
        mask_copy = mask.copy()
        a = random_action(game, rng)
        game.step(a)
        steps += 1
        assert np.array_equal(mask, mask_copy), "a mask returned earlier changed after a step"
        after = game.to_dict()
        check_position(game, after)
        check_transition(d, after, int(a))
        d = after
    check_final(game, d)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@_settings(12)
@given(seed=SEEDS, random_start=st.booleans(), policy_seed=SEEDS, noise=SEEDS)
def test_same_seed_and_actions_give_the_same_game_despite_global_rngs(num_players, seed, random_start,
                                                                      policy_seed, noise):
    """Only the game's own generator matters: global random/numpy.random state is never used."""
    game, played = playout(num_players, seed, random_start, policy_seed)
    reference = Game.new(num_players, seed=seed, random_start=random_start)
    trajectory = [dump(reference)]
    for a in played:
        reference.step(a)
        trajectory.append(dump(reference))
    assert trajectory[-1] == dump(game)

    def disturb(i):
        random.seed(noise + i)
        random.random()
        np.random.seed((noise + 7 * i) % 2**32)
        np.random.random(5)
        np.random.permutation(10)

    disturb(-1)
    replay = Game.new(num_players, seed=seed, random_start=random_start)
    assert dump(replay) == trajectory[0]
    for i, a in enumerate(played):
        disturb(i)
        replay.step(a)
        assert dump(replay) == trajectory[i + 1], f"replay diverged at step {i}"
    assert replay.scores() == game.scores()


def _cut_point(played, cut, mode):
    if mode == "end":
        return len(played)
    if mode == "pending":  # right after an "add contract": a shipment is staged
        adds = [i + 1 for i, a in enumerate(played) if actions.ADD_CONTRACT <= a < actions.SHIP]
        if adds:
            return adds[cut % len(adds)]
    if mode == "pay":  # in a pay phase: right before a pay action
        pays = [i for i, a in enumerate(played) if a >= actions.PAY]
        if pays:
            return pays[cut % len(pays)]
    return cut % (len(played) + 1)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@_settings(30)
@given(seed=SEEDS, random_start=st.booleans(), policy_seed=SEEDS, cut=st.integers(0, 10**6),
       mode=st.sampled_from(["random", "pending", "pay", "end"]), keep_history=st.booleans())
def test_save_and_load_mid_game_continues_identically(num_players, seed, random_start, policy_seed, cut, mode,
                                                      keep_history):
    """from_dict(json(to_dict())) then the same actions: byte-identical positions and scores."""
    _, played = playout(num_players, seed, random_start, policy_seed)
    k = _cut_point(played, cut, mode)
    game = Game.new(num_players, seed=seed, random_start=random_start)
    for a in played[:k]:
        game.step(a)
    saved = json.loads(dump(game))
    if not keep_history:  # history is informational: a hand-made position may leave it empty
        saved["history"] = []
    loaded = Game.from_dict(saved)
    prefix = played[:k] if keep_history else []

    def same(step):
        mine, theirs = game.to_dict(), loaded.to_dict()
        assert theirs["history"] == prefix + played[k:step]
        theirs["history"] = mine["history"]
        assert json.dumps(theirs) == json.dumps(mine), f"loaded game diverged at step {step}"
        assert np.array_equal(loaded.legal_action_mask(), game.legal_action_mask())
        assert loaded.current_player == game.current_player and loaded.phase == game.phase

    same(k)
    for i in range(k, len(played)):
        game.step(played[i])
        loaded.step(played[i])
        same(i + 1)
    assert loaded.is_over and loaded.scores() == game.scores()


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@_settings(20)
@given(seed=SEEDS, random_start=st.booleans(), policy_seed=SEEDS, cut=st.integers(0, 10**6),
       mode=st.sampled_from(["random", "pending", "pay"]))
def test_clone_is_independent_and_continues_identically(num_players, seed, random_start, policy_seed, cut, mode):
    """Stepping a clone leaves the original alone and vice versa; both follow the same actions alike."""
    _, played = playout(num_players, seed, random_start, policy_seed)
    k = _cut_point(played, cut, mode)
    game = Game.new(num_players, seed=seed, random_start=random_start)
    for a in played[:k]:
        game.step(a)
    game.legal_action_mask()  # a cached mask must not leak between the two either
    game.hand(0), game.ships(0)
    snapshot, mask = dump(game), game.legal_action_mask().copy()
    twin = game.clone()
    assert dump(twin) == snapshot

    trajectory = []
    for a in played[k:]:
        twin.step(a)
        trajectory.append(dump(twin))
    assert dump(game) == snapshot, "stepping the clone changed the original"
    assert np.array_equal(game.legal_action_mask(), mask)

    final = dump(twin)
    for i, a in enumerate(played[k:]):
        game.step(a)
        assert dump(game) == trajectory[i], f"original and clone diverged at step {k + i}"
    assert dump(twin) == final, "stepping the original changed the clone"
    assert game.scores() == twin.scores()


NON_INTEGER_ACTIONS = (1.0, 2.5, "3", None, np.float64(0.0), [4], (10,))


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@_settings(10)
@given(seed=SEEDS, random_start=st.booleans(), policy_seed=SEEDS)
def test_illegal_action_raises_and_changes_nothing(num_players, seed, random_start, policy_seed):
    """IllegalActionError (a ValueError) naming the action; position, mask and history untouched."""
    game = Game.new(num_players, seed=seed, random_start=random_start)
    rng = np.random.default_rng(policy_seed)
    step = 0
    while True:
        before = dump(game)
        mask = game.legal_action_mask().copy()
        illegal = np.flatnonzero(~mask)
        attempts = [-1, actions.NUM_ACTIONS, 10**9]
        if len(illegal):
            attempts += [int(illegal[rng.integers(len(illegal))]), illegal[rng.integers(len(illegal))]]
        for a in attempts:
            with pytest.raises(IllegalActionError, match=rf"\baction {int(a)}\b") as info:
                game.step(a)
            assert isinstance(info.value, ValueError)
        if step % 25 == 0:
            for a in NON_INTEGER_ACTIONS:
                with pytest.raises(IllegalActionError):
                    game.step(a)
        assert dump(game) == before, "an illegal action changed the position"
        assert np.array_equal(game.legal_action_mask(), mask)
        if game.is_over:
            break
        game.step(random_action(game, rng))
        step += 1
    for a in range(actions.NUM_ACTIONS):  # after the end nothing is legal
        with pytest.raises(IllegalActionError, match="over"):
            game.step(a)
    assert dump(game) == before


@pytest.mark.parametrize("accessor", ["hand", "ships"])
def test_hand_and_ships_return_lists_the_caller_may_mutate(accessor):
    game = Game.new(3, seed=7)
    expected = getattr(game, accessor)(0)[:]
    twin = game.clone()
    got = getattr(game, accessor)(0)
    got.clear()
    got.append(38)  # a ship: nonsense in anyone's hand or ships
    assert getattr(game, accessor)(0) == expected
    assert getattr(twin, accessor)(0) == expected
