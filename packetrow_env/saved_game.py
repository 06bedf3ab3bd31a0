"""Saved games: ``Game.to_dict`` (schema version 3 of docs/design.md "Saved games") and a validating
``Game.from_dict``.

Version 2 (rules v1) adds the phase ``pay`` and the key ``resume_phase``: while a shipment waits to be paid
(R-SHIP-7), the phase that goes on once it is paid (``choose_board``, ``take`` or ``must_take``); null in
every other phase. Version 3 adds ``payment_page``: in phase pay, the page of payment options shown (0 first,
``actions.MORE`` turns it); null in every other phase. Version-1 files (no ``resume_phase``, no phase ``pay``)
and version-2 files (no ``payment_page``: the first page) load as the same position.
"""

from __future__ import annotations

import json

import numpy as np

from . import actions, shipping
from .cards import BOARDS, GUILDHALL, KINDS, MONEY, NUM_BOARDS, NUM_CARDS, NUM_CONTRACTS, SHIP, START, Catalogue
from .state import (CHOOSE_BOARD, CURRENT, DECK, DISCARD, END_THRESHOLD, FUTURE, FUTURE_SLOTS, HAND, MAX_PLAYERS,
                    MAX_ROUNDS, MIN_PLAYERS, MUST_TAKE, OVER, PAY, PHASES, REMOVED, SHIPS, STARTING_CASH, SUPPLY_SIZE, TAKE,
                    State, most_cash)

VERSION = 3
VERSIONS = (1, 2, 3)  # versions from_dict reads
# The most actions a game can take: per round at most every board chosen and every player asked on each; an
# "add contract", a "ship" and a "pay" at most once per contract.
MAX_HISTORY = MAX_ROUNDS * NUM_BOARDS * (MAX_PLAYERS + 1) + 3 * NUM_CONTRACTS
# The generators numpy's default_rng uses (the game's own, R-SETUP-2): their states are plain ints, so a
# loaded game saves as JSON again.
RNG_NAMES = ("PCG64", "PCG64DXSM")
_KEYS = ("version", "num_players", "round", "harbour_master", "current_player", "phase", "current_board",
         "chosen_boards", "boards", "removed", "players", "pending_shipment", "rng", "history", "resume_phase",
         "payment_page")
_KEYS_OF = {1: _KEYS[:-2], 2: _KEYS[:-1], 3: _KEYS}
_BOARD_KEYS = ("deck", "discard", "current", "future", "exhausted")
_PLAYER_KEYS = ("cash", "hand", "ships", "has_piece", "starting_contract")


def to_dict(game) -> dict:
    """The game as plain JSON types: card ids everywhere, decks top first, piles sorted by id."""
    s = game.state
    n = s.num_players
    loc = s.location
    over = s.phase == OVER

    def ids(code):
        return np.flatnonzero(loc == code).tolist()

    def slots(row, size):
        return [None if c < 0 else int(c) for c in row[:size]]

    return {
        "version": VERSION,
        "num_players": n,
        "round": s.round,
        "harbour_master": s.harbour_master,
        "current_player": None if over else s.current_player,
        "phase": PHASES[s.phase],
        "current_board": None if s.current_board < 0 else s.current_board,
        "chosen_boards": list(s.chosen_order),
        "boards": [{"deck": s.deck_cards(b).tolist(), "discard": ids(DISCARD + b),
                    "current": slots(s.current[b], s.supply_size), "future": slots(s.future[b], FUTURE_SLOTS),
                    "exhausted": bool(s.exhausted[b])} for b in range(NUM_BOARDS)],
        "removed": ids(REMOVED),
        "players": [{"cash": int(s.cash[p]), "hand": ids(HAND + p), "ships": ids(SHIPS + p),
                     "has_piece": bool(s.has_piece[p]), "starting_contract": int(s.starting_contract[p])}
                    for p in range(n)],
        "pending_shipment": list(s.pending),
        "rng": _plain(s.rng_state),
        "history": list(s.history),
        "resume_phase": PHASES[s.resume_phase] if s.phase == PAY else None,
        "payment_page": s.payment_page if s.phase == PAY else None,
    }


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.integer):
        return int(value)
    return value


class _Invalid(ValueError):
    pass


def _need(condition, message):
    if not condition:
        raise _Invalid(message)


def _int(value, what, low=None, high=None):
    _need(isinstance(value, (int, np.integer)) and not isinstance(value, bool),
          f"{what} must be an integer, got {value!r}")
    if low is not None and high is not None:
        _need(low <= value <= high, f"{what} must be from {low} to {high}, got {value}")
    elif low is not None:
        _need(value >= low, f"{what} must be at least {low}, got {value}")
    return int(value)


def _bool(value, what):
    _need(isinstance(value, (bool, np.bool_)), f"{what} must be true or false, got {value!r}")
    return bool(value)


def _list(value, what):
    _need(isinstance(value, list), f"{what} must be a list, got {type(value).__name__}")
    return value


def _dict(value, what, keys):
    _need(isinstance(value, dict), f"{what} must be an object, got {type(value).__name__}")
    missing = [k for k in keys if k not in value]
    unknown = [k for k in value if k not in keys]
    _need(not missing and not unknown, f"{what}: missing keys {missing or 'none'}, unknown keys {unknown or 'none'}; "
          f"expected exactly {', '.join(keys)}")
    return value


def from_dict(game_class, data: dict, cards: Catalogue):
    """Validate a saved game and build it; raise ValueError naming the first problem."""
    try:
        return _build(game_class, data, cards)
    except _Invalid as error:
        raise ValueError(f"invalid saved game: {error}") from None


def _build(game_class, data, cards: Catalogue):
    version = data.get("version") if isinstance(data, dict) else None
    _dict(data, "the saved game", _KEYS_OF.get(version, _KEYS) if type(version) is int else _KEYS)
    _need(type(data["version"]) is int and data["version"] in VERSIONS,
          f"version must be one of {', '.join(map(str, VERSIONS))}, got {data['version']!r}")
    if version == 1:
        data = {**data, "resume_phase": None}  # version 1 had no pay phase
    if version < 3:  # versions 1 and 2 showed every payment option on one page
        data = {**data, "payment_page": 0 if data["phase"] == PHASES[PAY] else None}
    n = _int(data["num_players"], "num_players", MIN_PLAYERS, MAX_PLAYERS)
    size = SUPPLY_SIZE[n]
    s = State(n, _rng_state(data["rng"]))
    s.round = _int(data["round"], "round", 1, MAX_ROUNDS)
    s.harbour_master = _int(data["harbour_master"], "harbour_master", 0, n - 1)
    _need(data["phase"] in PHASES, f"phase must be one of {', '.join(PHASES)}, got {data['phase']!r}")
    s.phase = PHASES.index(data["phase"])

    seen = {}  # card id -> where it was listed

    def place(card, where, code):
        c = _int(card, f"a card id in {where}", 0, NUM_CARDS - 1)
        _need(c not in seen, f"card {c} is listed twice: in {seen.get(c)} and in {where}")
        seen[c] = where
        s.location[c] = code
        return c

    boards = _list(data["boards"], "boards")
    _need(len(boards) == NUM_BOARDS,
          f"boards must list the {NUM_BOARDS} boards ({', '.join(BOARDS)}), got {len(boards)}")
    s.current[:] = -1
    s.future[:] = -1
    for b, board in enumerate(boards):
        name = BOARDS[b]
        _dict(board, f"boards[{b}] ({name})", _BOARD_KEYS)
        deck = [place(c, f"the {name} deck", DECK + b) for c in _list(board["deck"], f"boards[{b}].deck")]
        s.deck[b, :len(deck)] = deck
        s.deck_top[b] = 0
        s.deck_end[b] = len(deck)
        for c in _list(board["discard"], f"boards[{b}].discard"):
            place(c, f"the {name} discard pile", DISCARD + b)
        for key, array, length, code in (("current", s.current, size, CURRENT), ("future", s.future, FUTURE_SLOTS, FUTURE)):
            row = _list(board[key], f"boards[{b}].{key}")
            _need(len(row) == length, f"boards[{b}].{key} ({name}) must have {length} slots for {n} players "
                  f"(null = empty), got {len(row)}")
            for slot, c in enumerate(row):
                if c is not None:
                    array[b, slot] = place(c, f"the {name} {key} supply slot {slot}", code + b)
        s.exhausted[b] = _bool(board["exhausted"], f"boards[{b}].exhausted")
        for where, code in ((f"the {name} deck", DECK), (f"the {name} current supply", CURRENT),
                            (f"the {name} future supply", FUTURE), (f"the {name} discard pile", DISCARD)):
            on = np.flatnonzero(s.location == code + b)
            own = (cards.board[on] == b) | ((code == DISCARD) & (b == GUILDHALL) & (cards.board[on] == START))
            if not own.all():
                c = int(on[~own][0])
                raise _Invalid(f"card {c} ({cards.names[c]}) is in {where} but belongs to the "
                               f"{_board_name(cards.board[c])} board")
    for c in _list(data["removed"], "removed"):
        place(c, "removed", REMOVED)

    players = _list(data["players"], "players")
    _need(len(players) == n, f"players must have {n} entries (num_players), got {len(players)}")
    for p, player in enumerate(players):
        _dict(player, f"players[{p}]", _PLAYER_KEYS)
        s.cash[p] = _int(player["cash"], f"players[{p}].cash", 0, most_cash(cards))
        s.has_piece[p] = _bool(player["has_piece"], f"players[{p}].has_piece")
        for c in _list(player["hand"], f"players[{p}].hand"):
            c = place(c, f"player {p}'s hand", HAND + p)
            _need(cards.kind[c] != SHIP, f"card {c} is a ship in player {p}'s hand; ships lie face up (players[{p}].ships)")
        for c in _list(player["ships"], f"players[{p}].ships"):
            c = place(c, f"player {p}'s ships", SHIPS + p)
            _need(cards.kind[c] == SHIP, f"card {c} ({KINDS[cards.kind[c]]}) is listed in player {p}'s ships "
                  "but is not a ship")
    missing = sorted(set(range(NUM_CARDS)) - set(seen))
    _need(not missing, f"every card must be somewhere exactly once; missing: {missing[:10]}"
          f"{' ...' if len(missing) > 10 else ''}")
    _check_starting_contracts(s, players, cards)

    chosen = _list(data["chosen_boards"], "chosen_boards")
    for b in chosen:
        _int(b, "a chosen board", 0, NUM_BOARDS - 1)
    _need(len(set(chosen)) == len(chosen), f"chosen_boards must not repeat a board, got {chosen}")
    s.chosen_order = [int(b) for b in chosen]
    s.chosen[:] = 0
    s.chosen[s.chosen_order] = 1
    _check_phase(s, data)
    history = _list(data["history"], "history")
    _need(len(history) <= MAX_HISTORY, f"history holds at most {MAX_HISTORY} actions (the longest game), "
          f"got {len(history)}")
    s.history = [_int(a, "an action in history", 0, actions.NUM_ACTIONS - 1) for a in history]
    _check_cash(s, cards)
    _check_boards(s, cards)

    game = game_class(s, cards)
    pending = _list(data["pending_shipment"], "pending_shipment")
    if pending:
        _need(s.phase != OVER, "pending_shipment must be empty when the game is over")
        p = s.current_player
        hand = game.hand(p)
        for c in pending:
            _int(c, "a pending contract", 0, NUM_CARDS - 1)
            _need(c in hand and cards.contract_number[c] >= 0,
                  f"pending contract {c} is not a contract in the current player's (player {p}) hand")
        _need(len(set(pending)) == len(pending), f"pending_shipment repeats a contract: {pending}")
        _need(shipping.can_fulfil(cards, hand + game.ships(p), pending),
              f"pending_shipment {pending} cannot be fulfilled with player {p}'s hand and ships")
        s.pending = [int(c) for c in pending]
    if s.phase == PAY:
        _need(s.pending, "phase pay needs the pending_shipment to be paid")
        options = len(game._payment_options())
        _need(options > 1, f"pending_shipment {s.pending} has one payment option, so it is paid "
              "at once (R-SHIP-7); phase pay is only for a choice")
        last = (options - 1) // actions.MAX_PAYMENT_OPTIONS
        s.payment_page = _int(data["payment_page"], "in phase pay, payment_page", 0, last)
    else:
        _need(data["payment_page"] is None,
              f"payment_page must be null outside phase pay, got {data['payment_page']!r}")
    _check_decision(game)
    return game


def _board_name(code):
    return "starting contracts" if code == START else BOARDS[code]


def _check_starting_contracts(s: State, players, cards: Catalogue):
    starts = []
    for p, player in enumerate(players):
        c = _int(player["starting_contract"], f"players[{p}].starting_contract", 0, NUM_CARDS - 1)
        _need(cards.board[c] == START, f"players[{p}].starting_contract {c} is not a starting contract")
        _need(s.location[c] in (HAND + p, DISCARD + GUILDHALL),
              f"player {p}'s starting contract {c} must be in his hand or, once shipped, in the guildhall discard pile")
        starts.append(c)
        s.starting_contract[p] = c
    _need(len(set(starts)) == len(starts), f"players share a starting contract: {starts}")
    discarded = np.flatnonzero((cards.board == START) & (s.location == DISCARD + GUILDHALL))
    for c in discarded:
        _need(c in starts, f"starting contract {c} is in the guildhall discard pile but was dealt to nobody; "
              "undealt starting contracts leave the game unseen, in 'removed' (R-SETUP-5)")
    held = np.flatnonzero((cards.board == START) & (s.location >= HAND) & (s.location < SHIPS))
    for c in held:
        owner = int(s.location[c]) - HAND
        _need(c in starts and starts.index(c) == owner,
              f"starting contract {c} is in player {owner}'s hand but was not dealt to him")


def _check_phase(s: State, data):
    resume = data["resume_phase"]
    if s.phase == PAY:  # checked as the phase it resumes, which it shares its pieces and turn with
        allowed = [PHASES[CHOOSE_BOARD], PHASES[TAKE], PHASES[MUST_TAKE]]
        _need(resume in allowed, f"in phase pay, resume_phase must be one of {', '.join(allowed)}, got {resume!r}")
        s.phase = PHASES.index(resume)
        _check_phase(s, {**data, "resume_phase": None})
        s.resume_phase, s.phase = s.phase, PAY
        return
    _need(resume is None, f"resume_phase must be null outside phase pay, got {resume!r}")
    n = s.num_players
    phase = s.phase
    board = data["current_board"]
    player = data["current_player"]
    hm = s.harbour_master
    if phase == OVER:
        _need(player is None and board is None, "a finished game has current_player and current_board null")
        s.current_player, s.current_board = hm, -1
        return
    s.current_player = _int(player, "current_player", 0, n - 1)
    _need(int(s.exhausted.sum()) < END_THRESHOLD[n], f"{int(s.exhausted.sum())} exhausted boards end a {n}-player game "
          f"(R-END-1), so its phase must be 'over', not {data['phase']!r}")
    others_taken = int(s.has_piece[:n].sum()) == 1
    _need(bool(s.has_piece[hm]), "the harbour master still holds his piece until the round ends (R-ROUND-3)")
    if phase == CHOOSE_BOARD:
        _need(board is None, "current_board must be null in phase choose_board")
        _need(s.current_player == hm, f"in phase choose_board the harbour master (player {hm}) acts, "
              f"not player {s.current_player}")
        _need(not others_taken, "phase choose_board cannot follow when everyone but the harbour master has taken: "
              "his pass then ends the round (R-ROUND-5)")
        s.current_board = -1
        return
    s.current_board = _int(board, "current_board", 0, NUM_BOARDS - 1)
    _need(s.chosen_order and s.chosen_order[-1] == s.current_board,
          "current_board must be the last of chosen_boards in phases take and must_take")
    _need(bool(s.has_piece[s.current_player]), f"player {s.current_player} is asked but has already taken a card "
          "this round (R-ROUND-2)")
    if phase == MUST_TAKE:
        _need(s.current_player == hm, "in phase must_take the harbour master acts")
        _need(others_taken, "phase must_take needs every other player to have taken (R-ROUND-5)")
    assert phase == TAKE or phase == MUST_TAKE


def _rng_state(state) -> dict:
    _need(isinstance(state, dict) and "bit_generator" in state,
          "rng must be a numpy bit generator state (a dict with 'bit_generator')")
    name = state["bit_generator"]
    _need(isinstance(name, str) and name in RNG_NAMES,
          f"rng.bit_generator must be one of {', '.join(RNG_NAMES)} (the game's generators), got {name!r}")
    bit_generator = getattr(np.random, name)()
    try:
        bit_generator.state = state
        plain = _plain(bit_generator.state)
        json.dumps(plain)
    except Exception as error:  # numpy raises TypeError, ValueError, KeyError, OverflowError, IndexError...
        raise _Invalid(f"rng is not a valid {name} state: {error}") from None
    return plain


def _check_cash(s: State, cards: Catalogue):
    """Cash comes only from the start, contracts and money cards (R-SETUP-6, R-SHIP-1, R-TAKE-4)."""
    n = s.num_players
    most = STARTING_CASH * n + int(cards.reward.sum()) + int(cards.money.sum())
    total = int(s.cash[:n].sum())
    _need(total <= most, f"the players' cash adds up to {total}, more than the ${most} a game can hand out "
          "(starting cash, every contract's reward and every money card)")


def _check_boards(s: State, cards: Catalogue):
    """Supplies, decks and exhausted flags as the refills leave them (R-SETUP-4, R-REFILL-1, R-REFILL-2)."""
    size = s.supply_size
    for b, name in enumerate(BOARDS):
        current = s.current[b, :size].tolist()
        future = s.future[b].tolist()
        deck = int(s.deck_end[b] - s.deck_top[b])
        held = sum(c >= 0 for c in current)
        where = f"boards[{b}] ({name})"
        if s.exhausted[b]:
            _need(deck == 0 and max(future) < 0 and current[-1] < 0,
                  f"{where} is exhausted, so a refill left its current supply short of {size} cards: its deck and "
                  f"future supply are empty and its last current slot too (R-REFILL-1, R-REFILL-2)")
        if s.chosen[b] and s.phase != OVER:
            continue  # cards may have been taken from it this round (see _check_takes)
        _need(s.exhausted[b] or held == size, f"{where} is not exhausted, so its current supply is full "
              f"({size} cards) since its last refill: a refill that leaves it short exhausts it (R-REFILL-2)")
        _need(deck == 0 or min(future) >= 0, f"{where}: the future supply is full (2 cards) while the deck holds "
              "cards (R-REFILL-1)")
        for key, row in (("current", current), ("future", future)):
            filled = [c >= 0 for c in row]
            _need(filled == sorted(filled, reverse=True), f"{where}: a refill fills {key} slots 0, 1, ... in order "
                  f"(R-REFILL-1); an empty slot before a card means a card was taken, and no card was taken from "
                  f"it since its last refill (it was not chosen this round)")


def _check_decision(game):
    """The player to act has a legal action, and so has every later decision (R-ROUND-1..5, R-END-1, R-SCORE-1).

    Later decisions follow from the checks above: a refilled board that is not exhausted has a full current
    supply, and fewer boards than the end threshold (at most 3) are exhausted while the game runs, so every
    round starts with a board to choose; a pass is legal in phase take; shipping never lowers a budget.
    """
    s = game.state
    cards = game.cards
    n = s.num_players
    if s.phase == OVER:
        exhausted = int(s.exhausted.sum())
        _need(exhausted >= END_THRESHOLD[n], f"a {n}-player game ends when {END_THRESHOLD[n]} boards are exhausted "
              f"(R-END-1); this finished game has {exhausted}")
        _need(any(s.exhausted[b] for b in s.chosen_order), "a game ends at the refill of a board chosen in its last "
              "round (R-END-1), so chosen_boards of a finished game holds an exhausted board")
        for p in range(n):
            hand = game.hand(p)
            money = [c for c in hand if cards.kind[c] == MONEY]
            _need(not money, f"player {p} still holds money cards {money} in a finished game; they are cashed at the "
                  "end (R-SCORE-1)")
        return
    phase = s.resume_phase if s.phase == PAY else s.phase  # after paying, the decision goes on in this phase
    if phase == CHOOSE_BOARD:
        _need(bool(game.choosable_boards()), "in phase choose_board a board not chosen this round must hold a card "
              "(R-ROUND-1); otherwise the harbour master's pass ended the round (R-ROUND-4)")
    if phase == MUST_TAKE:
        money, has_assistant, _ = game._summary(s.current_player)
        _need(game._can_take_on(s.current_board, int(s.cash[s.current_player]) + money, has_assistant),
              "in phase must_take the harbour master can take a card on the chosen board (R-ROUND-5)")
    _need(game.legal_action_mask().any(), "the position leaves the player to act no legal action")
