"""No observation leaks hidden information (R-INFO-1..4).

For a position and an observing seat p, a *hidden twin* is a game that differs from it only in what
p cannot know (R-INFO-2): an opponent's still-held starting contract, the order of every deck, and in a
two-player game which cards of a board were removed unseen (except in ``online`` mode, which shows each
deck's contents, R-INFO-4). Everything p is given through the environment (observation vector, action
mask, info, text render, who is to act) must be byte-identical between a position and its twins in the
fair modes (tracked, online, table). A *public* change must change it.

The checks run through ``raw_env.reset(options={"state": ...})``, the way users load positions, and the
file ends by proving the check can fail: deliberately leaky environments are caught by the same code.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packetrow_env import actions, raw_env
from packetrow_env import render as text
from packetrow_env.cards import SHIP, START, load
from packetrow_env.engine import Game
from tests.positions import random_play
from packetrow_env.observation import Encoder, card_types, encoder
from packetrow_env.state import REMOVED

CARDS = load()
TYPE_OF, _ = card_types(CARDS)
FAIR_MODES = ("tracked", "online", "table")
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=30,
                    suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- positions and views
def random_position(n: int, seed: int, steps: int) -> dict:
    """The saved game after up to ``steps`` uniformly random legal actions from ``Game.new(n, seed)``."""
    return random_play(Game.new(n, seed=seed), steps, seed).to_dict()


_ENVS: dict = {}


def _env(env_class, n: int, mode: str):
    key = (env_class, n, mode)
    if key not in _ENVS:
        _ENVS[key] = env_class(num_players=n, observation_mode=mode)
    return _ENVS[key]


def view(data: dict, seat: int, mode: str, env_class=raw_env) -> dict:
    """Everything the environment gives ``seat`` after ``reset(options={"state": data})``."""
    env = _env(env_class, data["num_players"], mode)
    env.reset(options={"state": copy.deepcopy(data)})
    agent = env.possible_agents[seat]
    obs = env.observe(agent)
    info = env.infos[agent]
    return {
        "observation": obs["observation"].tobytes(),
        "action_mask": obs["action_mask"].tobytes(),
        "info": {key: np.asarray(value).tobytes() for key, value in sorted(info.items())},
        "text": env.render_text(agent),
        "agent_selection": env.agent_selection,
        "terminated": env.terminations[agent],
    }


def differences(a: dict, b: dict) -> list[str]:
    return [key for key in a if a[key] != b[key]]


def leaks(data: dict, twin: dict, seat: int, mode: str, env_class=raw_env) -> list[str]:
    """The components of seat's view that differ between a position and its twin."""
    return differences(view(data, seat, mode, env_class), view(twin, seat, mode, env_class))


# --------------------------------------------------------------------------- hidden twins
def hidden_starts(data: dict, seat: int) -> list[int]:
    """Opponents of ``seat`` whose starting contract is still hidden (in hand, not named in a pending shipment)."""
    out = []
    for q, player in enumerate(data["players"]):
        start = player["starting_contract"]
        if q != seat and start in player["hand"] and start not in data["pending_shipment"]:
            out.append(q)
    return out


def swap_start_with_removed(data: dict, q: int, rng) -> dict:
    """(a) Opponent q's held starting contract swapped with one left out of the game."""
    twin = copy.deepcopy(data)
    spares = [c for c in twin["removed"] if CARDS.board[c] == START]
    new = int(rng.choice(spares))
    player = twin["players"][q]
    old = player["starting_contract"]
    player["hand"] = sorted([c for c in player["hand"] if c != old] + [new])
    player["starting_contract"] = new
    twin["removed"][twin["removed"].index(new)] = old
    return twin


def swap_starts_between(data: dict, q1: int, q2: int) -> dict:
    """(a') Two opponents' held starting contracts swapped with each other."""
    twin = copy.deepcopy(data)
    p1, p2 = twin["players"][q1], twin["players"][q2]
    s1, s2 = p1["starting_contract"], p2["starting_contract"]
    p1["hand"] = sorted([c for c in p1["hand"] if c != s1] + [s2])
    p2["hand"] = sorted([c for c in p2["hand"] if c != s2] + [s1])
    p1["starting_contract"], p2["starting_contract"] = s2, s1
    return twin


def shuffle_decks(data: dict, rng) -> dict:
    """(b) Every deck's order shuffled."""
    twin = copy.deepcopy(data)
    for board in twin["boards"]:
        board["deck"] = [int(c) for c in rng.permutation(board["deck"])] if board["deck"] else []
    return twin


def redeal_removed(data: dict, rng) -> dict:
    """(c) Two players: each board's removed cards and deck cards re-dealt among themselves (sizes kept)."""
    twin = copy.deepcopy(data)
    for b, board in enumerate(twin["boards"]):
        removed = [c for c in twin["removed"] if CARDS.board[c] == b]
        pool = [int(c) for c in rng.permutation(removed + board["deck"])]
        new_removed, board["deck"] = pool[:len(removed)], pool[len(removed):]
        for old, new in zip(removed, new_removed):
            twin["removed"][twin["removed"].index(old)] = new
    return twin


def twins(data: dict, seat: int, rng, mode: str = "tracked") -> list[tuple[str, dict]]:
    """Named hidden twins of a position for ``seat`` in ``mode``; the last one combines every kind.

    In ``online`` mode the decks' contents are known (R-INFO-4): a re-deal of removed cards is no twin there.
    """
    redeal = data["num_players"] == 2 and mode != "online"
    out = []
    hidden = hidden_starts(data, seat)
    for q in hidden:
        out.append((f"start of seat {q} swapped with a removed one", swap_start_with_removed(data, q, rng)))
    if len(hidden) >= 2:
        out.append((f"starts of seats {hidden[0]} and {hidden[1]} swapped",
                    swap_starts_between(data, hidden[0], hidden[1])))
    out.append(("decks shuffled", shuffle_decks(data, rng)))
    if redeal:
        out.append(("removed cards re-dealt with the decks", redeal_removed(data, rng)))
    combined = shuffle_decks(data, rng)
    if redeal:
        combined = redeal_removed(combined, rng)
    for q in hidden:
        combined = swap_start_with_removed(combined, q, rng)
    out.append(("all of them", combined))
    return out


def assert_no_leak(data: dict, seat: int, rng, env_class=raw_env) -> int:
    """Assert every hidden twin gives ``seat`` the same view in the fair modes; returns the number of twins."""
    count = 0
    for mode in FAIR_MODES:
        base = view(data, seat, mode, env_class)
        built = twins(data, seat, rng, mode)
        for name, twin in built:
            diff = differences(base, view(twin, seat, mode, env_class))
            assert not diff, (name, mode, diff)
        count += len(built)
    return count


positions = st.tuples(st.integers(2, 5), st.integers(0, 2**31 - 1), st.integers(0, 230))


# --------------------------------------------------------------------------- the leak tests
@SETTINGS
@given(positions)
def test_hidden_twins_look_identical_in_tracked_online_and_table_mode(position):
    """R-INFO-2, R-INFO-4: starting contracts, deck order and (but online) removed cards change nothing a fair
    observer gets."""
    n, seed, steps = position
    data = random_position(n, seed, steps)
    rng = np.random.default_rng(seed)
    for seat in range(n):
        assert_no_leak(data, seat, rng)


@SETTINGS
@given(positions)
def test_full_mode_shows_a_changed_starting_contract(position):
    """Full mode is privileged: a swapped opponent starting contract changes the observation."""
    n, seed, steps = position
    data = random_position(n, seed, steps)
    rng = np.random.default_rng(seed)
    for seat in range(n):
        hidden = hidden_starts(data, seat)
        if not hidden:
            continue
        base = view(data, seat, "full")
        for q in hidden:
            diff = differences(base, view(swap_start_with_removed(data, q, rng), seat, "full"))
            assert "observation" in diff and "text" in diff, q


@SETTINGS
@given(positions)
def test_action_mask_of_the_player_to_act_depends_only_on_what_he_knows(position):
    n, seed, steps = position
    data = random_position(n, seed, steps)
    if data["phase"] == "over":
        return
    seat = data["current_player"]
    mask = Game.from_dict(data).legal_action_mask()
    assert mask.any()
    base = view(data, seat, "full")  # the fair modes are checked with the other twin components above
    for name, twin in twins(data, seat, np.random.default_rng(seed)):
        assert np.array_equal(Game.from_dict(twin).legal_action_mask(), mask), name
        twin_view = view(twin, seat, "full")
        assert twin_view["action_mask"] == base["action_mask"] == mask.astype(np.int8).tobytes(), name
        assert twin_view["info"] == base["info"], name


def hand_card_swapped(data: dict, q: int, card: int) -> tuple[dict | None, int | None]:
    """(a copy of ``data`` where seat q's hand card ``card`` is swapped with a deck card of another type of its
    board, that card); (None, None) for a starting card or where the deck has no such card."""
    board = int(CARDS.board[card])
    if board == START:
        return None, None
    new = next((c for c in data["boards"][board]["deck"] if TYPE_OF[c] != TYPE_OF[card] and CARDS.kind[c] != SHIP),
               None)
    if new is None:
        return None, None
    twin = copy.deepcopy(data)
    tp, tb = twin["players"][q], twin["boards"][board]
    tb["deck"][tb["deck"].index(new)] = card
    tp["hand"] = sorted([c for c in tp["hand"] if c != card] + [new])
    return twin, new


def table_twins(data: dict, seat: int) -> list[tuple[str, dict]]:
    """Table mode's own hidden twins: an opponent's hand card (not his starting contract) swapped with a deck card of
    its board of another type (table mode shows no opponent's hand, R-INFO-2), the player to act's included (in phase
    pay: the payer's, whose payment options change). Only before the end: the final scores value the hands."""
    out = []
    if data["phase"] == "over":
        return out
    for q, player in enumerate(data["players"]):
        if q == seat:
            continue
        for card in player["hand"]:
            twin, new = hand_card_swapped(data, q, card)
            if twin is None:
                continue
            try:
                Game.from_dict(twin)
            except ValueError:  # e.g. a payer left with one way to pay, or none
                continue
            out.append((f"seat {q}'s hand card {card} -> {new}", twin))
            if len(out) >= 4:
                return out
    return out


PHASES = ("choose_board", "take", "must_take", "pay", "over")


def phase_positions(seed: int) -> dict[tuple[int, str], dict]:
    """A saved position of each phase for each player count, from random games that stage and ship often."""
    found: dict[tuple[int, str], dict] = {}
    rng = np.random.default_rng(seed)
    for g in range(40):
        n = 2 + g % 4
        game = Game.new(n, seed=seed * 100 + g)
        while not game.is_over:
            legal = game.legal_actions()
            shipping = [a for a in legal if a >= actions.ADD_CONTRACT]
            game.step(int(rng.choice(shipping if shipping and rng.random() < 0.8 else legal)))
            if (n, game.phase) not in found and rng.random() < 0.2 or game.phase == "pay" and (n, "pay") not in found:
                found[(n, game.phase)] = game.to_dict()
        found.setdefault((n, "over"), game.to_dict())
        if len(found) == 4 * len(PHASES):
            break
    return found


@pytest.mark.parametrize("phase", PHASES)
def test_no_leak_in_any_phase_for_any_seat_or_fair_mode(phase):
    """Every phase, the pay phase included, every seat, every fair mode: hidden twins look identical; in table mode
    also an opponent's hand changed (in phase pay, the payer's: his payment options are part of his hand)."""
    found = phase_positions(5)
    table = 0
    for n in range(2, 6):
        data = found[(n, phase)]
        assert data["phase"] == phase
        rng = np.random.default_rng(n)
        for seat in range(n):
            assert assert_no_leak(data, seat, rng) >= 3
            base = view(data, seat, "table")
            for name, twin in table_twins(data, seat):
                assert not differences(base, view(twin, seat, "table")), name
                table += 1
    assert table > 0 or phase == "over"


def test_R_SHIP_7_other_seats_see_the_payment_options_only_where_they_know_the_hand():
    """In phase pay the payer's options are his hand's: table mode shows them to him alone, the modes that track
    hands to everybody (R-INFO-2, R-INFO-3)."""
    from tests.test_rules_pay import staged_and_shipped

    game = staged_and_shipped()
    assert game.phase == "pay" and game.current_player == 0
    enc = encoder()
    for mode in ("tracked", "online", "table", "full"):
        for seat in range(game.num_players):
            pieces = enc.split(enc.encode(game, seat, mode))
            assert pieces["paying"][0] == 1
            shown = pieces["payment_options"][:, 0].sum()
            assert shown == (len(game.payment_options()) if seat == 0 or mode != "table" else 0), (mode, seat)


def test_twins_are_exercised():
    """The twin kinds used above really are produced (guards against a vacuous leak test)."""
    kinds = set()
    for n in range(2, 6):
        data = random_position(n, n, 30)
        for name, _ in twins(data, 0, np.random.default_rng(0)):
            kinds.add(re.sub(r"\d+", "#", name))
    assert kinds == {"start of seat # swapped with a removed one", "starts of seats # and # swapped", "decks shuffled",
                     "removed cards re-dealt with the decks", "all of them"}


@SETTINGS
@given(st.integers(0, 2**31 - 1), st.integers(0, 230))
def test_R_INFO_4_only_online_tells_which_cards_were_removed(seed, steps):
    """R-INFO-4: in a 2-player game a removed card swapped with a deck card of another type changes the online
    observation and text (the deck's contents changed) but nothing tracked or table shows."""
    data = random_position(2, seed, steps)
    rng = np.random.default_rng(seed)
    for seat in range(2):
        for b, board in enumerate(data["boards"]):
            removed = [c for c in data["removed"] if CARDS.board[c] == b]
            pair = next(((r, c) for r in removed for c in board["deck"] if TYPE_OF[r] != TYPE_OF[c]), None)
            if pair is None:
                continue
            old, new = pair
            twin = copy.deepcopy(data)
            deck = twin["boards"][b]["deck"]
            deck[deck.index(new)] = old
            twin["removed"][twin["removed"].index(old)] = new
            for mode in ("tracked", "table"):
                assert not leaks(data, twin, seat, mode), (b, mode)
            assert leaks(data, twin, seat, "online") == ["observation", "text"], b  # the text lists deck contents
            deck_contents = [encoder().split(np.frombuffer(v["observation"], np.float32))["deck_contents"][b]
                             for v in (view(data, seat, "online"), view(twin, seat, "online"))]
            assert deck_contents[1][TYPE_OF[old]] == deck_contents[0][TYPE_OF[old]] + 1
            assert deck_contents[1][TYPE_OF[new]] == deck_contents[0][TYPE_OF[new]] - 1
        # and the online twins proper (deck order, starting contracts) still look the same
        assert not any(leaks(data, twin, seat, "online") for _, twin in twins(data, seat, rng, "online"))


def test_R_INFO_4_removed_card_twins_are_exercised():
    """The online-only twin above is really built (guards against a vacuous test)."""
    data = random_position(2, 1, 10)
    assert any(TYPE_OF[r] != TYPE_OF[c] for r in data["removed"] for c in data["boards"][CARDS.board[r]]["deck"]
               if CARDS.board[r] != START)
    assert all(name != "removed cards re-dealt with the decks" for name, _ in twins(data, 0, np.random.default_rng(0),
                                                                                        "online"))


# --------------------------------------------------------------------------- public changes are seen
def _opponent(data: dict, seat: int) -> int:
    return (seat + 1) % data["num_players"]


def public_changes(data: dict, seat: int) -> list[tuple[str, dict]]:
    """Changes to a position that seat can see (R-INFO-1)."""
    out = []
    q = _opponent(data, seat)
    twin = copy.deepcopy(data)
    twin["players"][q]["cash"] += 3
    out.append(("opponent's cash", twin))
    docks = data["boards"][1]["deck"]
    ship = next((c for c in docks if CARDS.kind[c] == SHIP), None)
    if ship is not None:
        twin = copy.deepcopy(data)
        twin["boards"][1]["deck"].remove(ship)
        twin["players"][q]["ships"] = sorted(twin["players"][q]["ships"] + [ship])
        out.append(("opponent's ships", twin))
    for b, board in enumerate(data["boards"]):
        slot = next((i for i, c in enumerate(board["current"]) if c is not None), None)
        if slot is None:
            continue
        old = board["current"][slot]
        new = next((c for c in board["deck"] if TYPE_OF[c] != TYPE_OF[old]), None)
        if new is None:
            continue
        twin = copy.deepcopy(data)
        tb = twin["boards"][b]
        tb["deck"][tb["deck"].index(new)] = old
        tb["current"][slot] = new
        if data["phase"] != "over":
            try:
                Game.from_dict(twin)
            except ValueError:  # the new card may leave the player to act nothing to do
                continue
        out.append((f"supply card of board {b}", twin))
        break
    return out


def taken_card_swaps(data: dict, seat: int) -> list[tuple[str, dict]]:
    """An opponent's taken (non-starting) hand card swapped with a deck card of another type of its board."""
    out = []
    for q, player in enumerate(data["players"]):
        if q == seat or q == data["current_player"]:
            continue
        for card in player["hand"]:
            twin, new = hand_card_swapped(data, q, card)
            if twin is None:
                continue
            out.append((f"seat {q}'s taken card {card} -> {new}", twin))
            break
    return out


@SETTINGS
@given(positions)
def test_public_changes_change_the_observation(position):
    """R-INFO-1: cash, ships, supplies are seen by every observer in every mode."""
    n, seed, steps = position
    data = random_position(n, seed, steps)
    for seat in range(n):
        changes = public_changes(data, seat)
        for mode in ("tracked", "online", "table", "full"):
            base = view(data, seat, mode)
            for name, twin in changes:
                assert "observation" in differences(base, view(twin, seat, mode)), (name, mode)


@SETTINGS
@given(positions)
def test_an_opponents_taken_card_is_seen_in_tracked_mode_only(position):
    """R-INFO-3: a card an opponent took face up is remembered (tracked, full) but not on the table (table).

    Only before the end: the final scores reveal what the hands were worth.
    """
    n, seed, steps = position
    data = random_position(n, seed, max(steps, 20))
    if data["phase"] == "over":
        return
    for seat in range(n):
        swaps = taken_card_swaps(data, seat)
        if not swaps:
            continue
        base = {mode: view(data, seat, mode) for mode in ("tracked", "online", "table", "full")}
        for name, twin in swaps:
            tracked = differences(base["tracked"], view(twin, seat, "tracked"))
            assert "observation" in tracked and "text" in tracked, name
            online = differences(base["online"], view(twin, seat, "online"))
            assert "observation" in online and "text" in online, name
            assert "observation" in differences(base["full"], view(twin, seat, "full")), name
            assert not differences(base["table"], view(twin, seat, "table")), name


def test_taken_card_swaps_are_exercised():
    found = sum(len(taken_card_swaps(random_position(n, 7, 60), 0)) for n in range(2, 6))
    assert found >= 3


# --------------------------------------------------------------------------- the check can fail
class TopCardEncoder(Encoder):
    """Leaky on purpose: the vector also carries the card type on top of every deck (-1 for an empty deck)."""

    def encode(self, game, seat, mode="tracked"):
        s = game.state
        top = [TYPE_OF[s.deck[b, s.deck_top[b]]] if s.deck_top[b] < s.deck_end[b] else -1 for b in range(4)]
        return np.concatenate([super().encode(game, seat, mode), np.array(top, dtype=np.float32)])


class FullHandsEncoder(Encoder):
    """Leaky on purpose: opponents' hands as full mode shows them (held starting contracts included)."""

    def encode(self, game, seat, mode="tracked"):
        return super().encode(game, seat, "full")


class LeakyEncoderEnv(raw_env):
    """raw_env whose observations come from a (leaky) encoder class."""

    encoder_class = Encoder

    def observe(self, agent):
        obs = super().observe(agent)
        vector = self.encoder_class(self.cards).encode(self.game, self.possible_agents.index(agent),
                                                       self.observation_mode)
        return {**obs, "observation": vector}


class TopCardLeakEnv(LeakyEncoderEnv):
    encoder_class = TopCardEncoder


class FullHandsLeakEnv(LeakyEncoderEnv):
    encoder_class = FullHandsEncoder


class OpenHandsTextEnv(raw_env):
    """Leaky on purpose: the text render shows every opponent's whole hand."""

    def render_text(self, agent=None):
        seat = self.possible_agents.index(agent or self.agent_selection)
        return text.render(self.game, seat=seat, known_hands=[self.game.hand(q) for q in range(self.num_players)])


def test_the_harness_itself_is_not_leaky():
    """LeakyEncoderEnv with the real Encoder gives the env's own observations, so only the leaks differ."""
    data = random_position(3, 5, 40)
    for mode in ("tracked", "online", "table", "full"):
        assert view(data, 1, mode, LeakyEncoderEnv) == view(data, 1, mode)
    assert_no_leak(data, 1, np.random.default_rng(0), LeakyEncoderEnv)


def test_leak_check_catches_a_deck_order_leak():
    data = Game.new(4, seed=0).to_dict()
    twin = copy.deepcopy(data)
    for board in twin["boards"]:
        board["deck"].reverse()
    assert any(TYPE_OF[a["deck"][0]] != TYPE_OF[b["deck"][0]] for a, b in zip(data["boards"], twin["boards"]))
    for mode in FAIR_MODES:
        assert not leaks(data, twin, 1, mode)
        assert leaks(data, twin, 1, mode, TopCardLeakEnv) == ["observation"]
    with pytest.raises(AssertionError):
        assert_no_leak(data, 1, np.random.default_rng(0), TopCardLeakEnv)


def test_leak_check_catches_a_starting_contract_leak():
    data = Game.new(3, seed=1).to_dict()
    twin = swap_start_with_removed(data, 2, np.random.default_rng(0))
    assert not leaks(data, twin, 0, "tracked")
    assert leaks(data, twin, 0, "tracked", FullHandsLeakEnv) == ["observation"]
    assert leaks(data, twin, 0, "tracked", OpenHandsTextEnv) == ["text"]
    for leaky in (FullHandsLeakEnv, OpenHandsTextEnv):
        with pytest.raises(AssertionError):
            assert_no_leak(data, 0, np.random.default_rng(0), leaky)


def test_leak_check_catches_a_removed_card_leak():
    """A leak of the cards removed in a two-player game (R-SETUP-3) is caught by the re-deal twin."""

    class RemovedLeakEnv(raw_env):
        def observe(self, agent):
            obs = super().observe(agent)
            removed = np.flatnonzero((self.game.state.location == REMOVED) & (CARDS.board != START))
            extra = np.bincount(TYPE_OF[removed], minlength=len(encoder(self.cards).type_names))
            return {**obs, "observation": np.concatenate([obs["observation"], extra.astype(np.float32)])}

    data = Game.new(2, seed=3).to_dict()
    twin = redeal_removed(data, np.random.default_rng(0))
    for mode in ("tracked", "table"):  # online shows the decks' contents: there this is no hidden twin (R-INFO-4)
        assert not leaks(data, twin, 0, mode)
        assert leaks(data, twin, 0, mode, RemovedLeakEnv) == ["observation"]
    with pytest.raises(AssertionError):
        assert_no_leak(data, 0, np.random.default_rng(0), RemovedLeakEnv)
