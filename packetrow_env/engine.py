"""The rules of Packet Row (docs/rules.md): a new game, legal actions, applying an action, scoring."""

from __future__ import annotations

import operator
from functools import lru_cache
from itertools import combinations

import numpy as np

from . import actions, payment, shipping
from .cards import (ASSISTANT, BANK, BANKER, BOARDS, BUILDING, GUILDHALL, MONEY, NUM_BOARDS, SHIP, START, Catalogue,
                    resolve)
from .scoring import banker_points
from .state import (CHOOSE_BOARD, CURRENT, DECK, DISCARD, END_THRESHOLD, FUTURE, FUTURE_SLOTS, HAND, MAX_PLAYERS,
                    MAX_SUPPLY, MIN_PLAYERS, MUST_TAKE, OVER, PAY, PHASES, REMOVED, SHIPS, STARTING_CASH, TAKE,
                    TWO_PLAYER_REMOVAL, State)


class IllegalActionError(ValueError):
    """An action that is out of range or not legal in the current position."""


class Game:
    """One game of Packet Row: the catalogue, the state, and the rules that move it."""

    __slots__ = ("cards", "state", "_mask", "_hands", "_ships", "_summaries", "_fulfillable", "_scores",
                 "_discard_location", "_options")

    def __init__(self, state: State, cards: Catalogue):
        self.cards = cards
        self.state = state
        self._discard_location = discard_locations(cards)
        self._reset_caches()

    def _reset_caches(self):
        n = self.state.num_players
        self._mask = None
        self._hands = [None] * n
        self._ships = [None] * n
        self._summaries = [None] * n
        self._fulfillable = [None] * n
        self._scores = None
        self._options = None

    # ------------------------------------------------------------------ setup
    @classmethod
    def new(cls, num_players: int = 4, seed: int | None = None, random_start: bool = False,
            cards: "Catalogue | str | None" = None) -> "Game":
        """Deal a new game (R-SETUP-1..7)."""
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) \
                or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}, got {num_players!r}")
        cat = resolve(cards)
        num_players = int(num_players)
        rng = np.random.default_rng(seed)
        s = State(num_players, rng_state={})
        for b in range(NUM_BOARDS):  # R-SETUP-2
            order = rng.permutation(cat.board_cards[b])
            s.deck[b, :len(order)] = order
            s.deck_top[b] = 0
            s.deck_end[b] = len(order)
            s.location[order] = DECK + b
        if num_players == 2:  # R-SETUP-3
            for b in range(NUM_BOARDS):
                top = int(s.deck_top[b])
                s.location[s.deck[b, top:top + TWO_PLAYER_REMOVAL]] = REMOVED
                s.deck_top[b] = top + TWO_PLAYER_REMOVAL
        s.current[:] = -1
        s.future[:] = -1
        s.exhausted[:] = 0
        s.chosen[:] = 0
        for b in range(NUM_BOARDS):  # R-SETUP-4: dealing is a refill of empty supplies
            refill(s, b)
        starts = rng.permutation(cat.start_contracts)  # R-SETUP-5
        s.location[starts[num_players:]] = REMOVED
        s.location[starts[:num_players]] = HAND + np.arange(num_players)
        s.starting_contract[:num_players] = starts[:num_players]
        s.cash[:num_players] = STARTING_CASH  # R-SETUP-6
        s.has_piece[:num_players] = 1
        s.harbour_master = int(rng.integers(num_players)) if random_start else 0  # R-SETUP-7
        s.current_player = s.harbour_master
        s.rng_state = rng.bit_generator.state
        return cls(s, cat)

    # ------------------------------------------------------------- accessors
    @property
    def num_players(self) -> int:
        """The number of seats."""
        return self.state.num_players

    @property
    def current_player(self) -> int | None:
        """The seat to act, or None when the game is over."""
        s = self.state
        return None if s.phase == OVER else s.current_player

    @property
    def phase(self) -> str:
        """The phase name: choose_board, take, must_take, pay or over."""
        return PHASES[self.state.phase]

    @property
    def is_over(self) -> bool:
        """Whether the game has ended and been scored."""
        return self.state.phase == OVER

    def hand(self, seat: int) -> list[int]:
        """The card ids in a seat's hidden hand (sorted; a new list)."""
        return list(self._hand(seat))

    def ships(self, seat: int) -> list[int]:
        """The ship card ids face up in front of a seat (sorted; a new list)."""
        return list(self._ship_cards(seat))

    def _hand(self, seat: int) -> list[int]:
        """The cached sorted hand: shared with clones, so never mutated (a change replaces it)."""
        h = self._hands[seat]
        if h is None:
            h = self._hands[seat] = np.flatnonzero(self.state.location == HAND + seat).tolist()
        return h

    def _ship_cards(self, seat: int) -> list[int]:
        h = self._ships[seat]
        if h is None:
            h = self._ships[seat] = np.flatnonzero(self.state.location == SHIPS + seat).tolist()
        return h

    def clone(self) -> "Game":
        """An independent copy of this game."""
        game = Game.__new__(Game)
        game.cards = self.cards
        game.state = self.state.copy()
        game._discard_location = self._discard_location
        game._mask = self._mask
        game._hands = self._hands.copy()  # cached lists are never mutated in place
        game._ships = self._ships.copy()
        game._summaries = self._summaries.copy()
        game._fulfillable = self._fulfillable.copy()
        game._scores = self._scores
        game._options = self._options
        return game

    def sample_determinization(self, observer: int, rng: np.random.Generator, mode: str = "tracked") -> "Game":
        """A new full game consistent with everything ``observer`` knows in ``mode`` (tracked, online, full),
        the cards he cannot place re-dealt uniformly (``determinization.sample``)."""
        from .determinization import sample
        return Game(sample(self.state, self.cards, observer, rng, mode), self.cards)

    def to_dict(self) -> dict:
        """The position as plain JSON types (schema version 3, docs/design.md "Saved games")."""
        from .saved_game import to_dict
        return to_dict(self)

    @classmethod
    def from_dict(cls, data: dict, cards: "Catalogue | str | None" = None) -> "Game":
        """Rebuild a game from ``to_dict`` output, validating everything first."""
        from .saved_game import from_dict
        return from_dict(cls, data, resolve(cards))

    # ------------------------------------------------------------ legality
    def legal_action_mask(self) -> np.ndarray:
        """A read-only bool array over the actions (actions.NUM_ACTIONS): which are legal for the current player."""
        mask = self._mask
        if mask is None:
            mask = self._mask = self._compute_mask()
            mask.flags.writeable = False
        return mask

    def payment_options(self) -> list[tuple[int, ...]]:
        """In phase pay, every option of the pending shipment (sorted card-id tuples, R-SHIP-7 order); else []."""
        if self.state.phase != PAY:
            return []
        return list(self._payment_options())

    @property
    def payment_page(self) -> int:
        """In phase pay, the page of payment options shown (0 first; ``actions.MORE`` turns it); else 0."""
        return self.state.payment_page

    def payment_page_options(self) -> list[tuple[int, ...]]:
        """In phase pay, the options of the page shown, which ``PAY + k`` pays with; else []."""
        if self.state.phase != PAY:
            return []
        first = self.state.payment_page * actions.MAX_PAYMENT_OPTIONS
        return list(self._payment_options()[first:first + actions.MAX_PAYMENT_OPTIONS])

    def _payment_options(self) -> list[tuple[int, ...]]:
        """Every option of the pending shipment (cached until it is paid)."""
        options = self._options
        if options is None:
            p = self.state.current_player
            options = self._options = payment.payment_options(self.cards, self._hand(p) + self._ship_cards(p),
                                                              self.state.pending)
        return options

    def legal_actions(self) -> list[int]:
        """The legal action ids, ascending."""
        return np.flatnonzero(self.legal_action_mask()).tolist()

    def _compute_mask(self) -> np.ndarray:
        s = self.state
        mask = np.zeros(actions.NUM_ACTIONS, dtype=bool)
        if s.phase == OVER:
            return mask
        p = s.current_player
        number = self.cards.number_of
        if s.phase == PAY:  # R-SHIP-7: only paying the staged shipment, with an option of the page shown
            left = len(self._payment_options()) - s.payment_page * actions.MAX_PAYMENT_OPTIONS
            mask[actions.PAY:actions.PAY + min(left, actions.MAX_PAYMENT_OPTIONS)] = True
            mask[actions.MORE] = left > actions.MAX_PAYMENT_OPTIONS
            return mask
        if s.pending:  # R-SHIP-6: while a shipment is staged, only add or ship
            resources = self._hand(p) + self._ship_cards(p)
            for c in self._summary(p)[2]:
                if c not in s.pending and shipping.can_fulfil(self.cards, resources, s.pending + [c]):
                    mask[actions.ADD_CONTRACT + number[c]] = True
            mask[actions.SHIP] = True
            return mask
        for c in self._fulfillable_contracts(p):
            mask[actions.ADD_CONTRACT + number[c]] = True
        if s.phase == CHOOSE_BOARD:
            for b in self.choosable_boards():
                mask[b] = True
            return mask
        money, has_assistant, _ = self._summary(p)
        budget = int(s.cash[p]) + money
        cost = self.cards.cost_of
        board = s.current_board
        for slot, c in enumerate(s.current[board].tolist()):  # R-TAKE-1, R-TAKE-4
            if c >= 0 and cost[c] <= budget:
                mask[actions.TAKE + slot] = True
        if has_assistant:  # R-TAKE-2
            for slot, c in enumerate(s.future[board].tolist()):
                if c >= 0 and cost[c] <= budget:
                    mask[actions.TAKE_FUTURE + slot] = True
        if s.phase == TAKE:
            mask[actions.PASS] = True
            if p == s.harbour_master and self._others_have_taken():  # R-ROUND-5
                for b in self.choosable_boards():
                    if self._can_take_on(b, budget, has_assistant):
                        mask[b] = True
        return mask

    def choosable_boards(self) -> list[int]:
        """Boards not chosen this round that hold a card in their current or future supply (R-ROUND-1)."""
        s = self.state
        chosen = s.chosen.tolist()
        current = s.current.tolist()
        future = s.future.tolist()
        return [b for b in range(NUM_BOARDS) if not chosen[b] and (max(current[b]) >= 0 or max(future[b]) >= 0)]

    def _can_take_on(self, board: int, budget: int, has_assistant: bool) -> bool:
        cost = self.cards.cost_of
        s = self.state
        if any(c >= 0 and cost[c] <= budget for c in s.current[board].tolist()):
            return True
        return has_assistant and any(c >= 0 and cost[c] <= budget for c in s.future[board].tolist())

    def _others_have_taken(self) -> bool:
        s = self.state
        return s.has_piece[:s.num_players].tolist().count(1) == 1  # only the harbour master holds his piece

    def _summary(self, p: int) -> tuple[int, bool, list[int]]:
        """(money cards' total, holds an assistant, contracts) of a hand, cached until it changes."""
        summary = self._summaries[p]
        if summary is None:
            cards = self.cards
            hand = self._hand(p)
            kind, money, number = cards.kind_of, cards.money_of, cards.number_of
            summary = self._summaries[p] = (sum(money[c] for c in hand), any(kind[c] == ASSISTANT for c in hand),
                                            [c for c in hand if number[c] >= 0])
        return summary

    def _fulfillable_contracts(self, p: int) -> list[int]:
        """Contracts in hand that could be shipped on their own now (cached until the hand changes)."""
        f = self._fulfillable[p]
        if f is None:
            contracts = self._summary(p)[2]
            if contracts and self._ship_cards(p):
                resources = self._hand(p) + self._ship_cards(p)
                f = [c for c in contracts if shipping.can_fulfil(self.cards, resources, (c,))]
            else:
                f = []
            self._fulfillable[p] = f
        return f

    # ---------------------------------------------------------------- step
    def step(self, action) -> None:
        """Apply one action of the current player; an illegal one raises IllegalActionError and changes nothing."""
        try:
            a = None if isinstance(action, (bool, np.bool_)) else operator.index(action)
        except TypeError:
            a = None
        mask = self.legal_action_mask()
        if a is None or not 0 <= a < actions.NUM_ACTIONS or not mask[a]:
            raise IllegalActionError(self._illegal_message(action if a is None else a))
        s = self.state
        self._mask = None
        s.history.append(a)
        p = s.current_player
        if a >= actions.ADD_CONTRACT:
            if a == actions.MORE:
                s.payment_page += 1
            elif a >= actions.PAY:
                self._settle(p, self.payment_page_options()[a - actions.PAY])
                s.phase = s.resume_phase
                s.resume_phase = -1
                s.payment_page = 0
            elif a == actions.SHIP:
                self._ship(p)
            else:
                s.pending.append(int(self.cards.contract_ids[a - actions.ADD_CONTRACT]))
        elif a == actions.PASS:
            self._pass(p)
        elif a >= actions.TAKE:
            if a >= actions.TAKE_FUTURE:
                self._take(p, s.future, a - actions.TAKE_FUTURE, assistant=True)
            else:
                self._take(p, s.current, a - actions.TAKE, assistant=False)
        else:
            self._choose(a)

    def _illegal_message(self, a) -> str:
        if isinstance(a, bool) or not isinstance(a, int):
            what = f"action must be an integer 0-{actions.NUM_ACTIONS - 1}, got {a!r}"
        elif not 0 <= a < actions.NUM_ACTIONS:
            what = f"action {a} is out of range (actions are 0-{actions.NUM_ACTIONS - 1})"
        elif self.is_over:
            what = f"action {a} ({actions.NAMES[a]}) is not legal: the game is over"
        else:
            what = f"action {a} ({actions.NAMES[a]}) is not legal for player {self.state.current_player} " \
                   f"in phase {self.phase}"
        legal = ", ".join(f"{b} ({actions.NAMES[b]})" for b in self.legal_actions())
        return f"{what}; legal actions: {legal or 'none'}"

    def _choose(self, board: int):
        s = self.state
        s.chosen[board] = 1
        s.chosen_order.append(board)
        s.current_board = board
        if s.phase == TAKE:  # R-ROUND-5: the harbour master chose a board to take from
            s.phase = MUST_TAKE
            return
        s.phase = TAKE  # R-ROUND-2: ask from the left of the harbour master
        s.current_player = s.harbour_master
        self._ask_next()

    def _ask_next(self):
        s = self.state
        p = s.current_player
        while True:
            p = (p + 1) % s.num_players
            if p == s.harbour_master or s.has_piece[p]:
                break
        s.current_player = p

    def _pass(self, p: int):
        s = self.state
        if p != s.harbour_master:
            self._ask_next()
        elif self._others_have_taken() or not self.choosable_boards():  # R-ROUND-5, R-ROUND-4
            self._end_round()
        else:
            s.phase = CHOOSE_BOARD
            s.current_board = -1

    def _take(self, p: int, supply: np.ndarray, slot: int, assistant: bool):
        s = self.state
        cards = self.cards
        board = s.current_board
        card = int(supply[board, slot])
        if assistant:  # R-TAKE-2: the lowest assistant goes to the guildhall discard pile
            spent = next(c for c in self._hand(p) if cards.kind_of[c] == ASSISTANT)
            s.location[spent] = DISCARD + GUILDHALL
        cost = int(cards.cost[card])
        if cost:
            self._pay(p, cost)
        supply[board, slot] = -1
        s.location[card] = SHIPS + p if cards.kind_of[card] == SHIP else HAND + p  # R-TAKE-5
        s.has_piece[p] = 0  # R-ROUND-6: his one card this round
        self._hand_changed(p)
        if p == s.harbour_master:  # R-ROUND-3
            self._end_round()
        else:
            self._ask_next()

    def _pay(self, p: int, cost: int):
        """Pay a cost, cashing money cards from hand when cash is short (R-TAKE-3, R-TAKE-4)."""
        s = self.state
        cash = int(s.cash[p])
        if cash < cost:
            cashed = _cheapest_cover(self.cards, self._hand(p), cost - cash)
            s.location[cashed] = DISCARD + BANK
            cash += int(self.cards.money[cashed].sum())
        s.cash[p] = cash - cost

    def _ship(self, p: int):
        """Fulfil the pending shipment: at once with its only payment option, else enter phase pay (R-SHIP-7)."""
        s = self.state
        self._options = None
        options = self._payment_options()
        if len(options) == 1:
            self._settle(p, options[0])
        else:
            s.resume_phase = s.phase
            s.phase = PAY

    def _settle(self, p: int, paid: tuple[int, ...]):
        """Discard the pending contracts and the payment, take the reward (R-SHIP-1, R-SHIP-8)."""
        s = self.state
        contracts = s.pending
        spent = list(paid) + contracts
        s.location[spent] = self._discard_location[spent]
        s.cash[p] += int(self.cards.reward[contracts].sum())
        s.pending = []
        self._options = None
        self._hand_changed(p)

    def _hand_changed(self, p: int):
        self._hands[p] = None
        self._ships[p] = None
        self._summaries[p] = None
        self._fulfillable[p] = None

    # ------------------------------------------------------- end of a round
    def _end_round(self):
        s = self.state
        for b in sorted(s.chosen_order):  # R-REFILL-1, R-REFILL-3: chosen boards only, in board order
            refill(s, b)
        if int(s.exhausted.sum()) >= END_THRESHOLD[s.num_players]:  # R-END-1
            self._finish()
            return
        n = s.num_players
        s.harbour_master = (s.harbour_master + 1) % n  # R-REFILL-4
        s.round += 1
        s.has_piece[:n] = 1
        s.chosen[:] = 0
        s.chosen_order = []
        s.phase = CHOOSE_BOARD
        s.current_board = -1
        s.current_player = s.harbour_master

    def _finish(self):
        """Final fulfilment, cashing and the end of the game (R-SCORE-1)."""
        s = self.state
        cards = self.cards
        for p in range(s.num_players):
            contracts = self._summary(p)[2]
            if contracts and self._ship_cards(p):
                fulfilled, paid = shipping.best_fulfilment(cards, self._hand(p) + self._ship_cards(p), contracts)
                if fulfilled:
                    spent = list(paid) + list(fulfilled)
                    s.location[spent] = self._discard_location[spent]
                    s.cash[p] += int(cards.reward[list(fulfilled)].sum())
                    self._hand_changed(p)
            money = [c for c in self._hand(p) if cards.kind[c] == MONEY]
            if money:
                s.location[money] = DISCARD + BANK
                s.cash[p] += int(cards.money[money].sum())
                self._hand_changed(p)
        s.phase = OVER
        s.current_board = -1
        s.pending = []

    # --------------------------------------------------------------- scores
    def scores(self) -> list[dict]:
        """Per seat: vp, cash, building_vp, money_vp, banker_vp, winner (R-SCORE-2..4).

        After the game these are the final scores; during it, the scores the table shows now
        (no final fulfilment, money cards not yet cashed).
        """
        if self._scores is not None:
            return [dict(row) for row in self._scores]
        s = self.state
        n = s.num_players
        cards = self.cards
        cash = [int(c) for c in s.cash[:n]]
        rows = []
        for p in range(n):
            hand = self._hand(p)
            kinds = cards.kind[hand]
            rows.append({"building_vp": int(cards.vp[hand][kinds == BUILDING].sum()),
                         "money_vp": cash[p] // 10, "bankers": int((kinds == BANKER).sum())})
        per_banker = banker_points(cash)
        for p, row in enumerate(rows):
            row["banker_vp"] = per_banker[p] * row.pop("bankers")
            row["vp"] = row["building_vp"] + row["money_vp"] + row["banker_vp"]
            row["cash"] = cash[p]
        best = max((row["vp"], row["cash"]) for row in rows)  # R-SCORE-4
        result = [{"vp": r["vp"], "cash": r["cash"], "building_vp": r["building_vp"], "money_vp": r["money_vp"],
                   "banker_vp": r["banker_vp"], "winner": (r["vp"], r["cash"]) == best} for r in rows]
        if s.phase == OVER:
            self._scores = result
            return [dict(row) for row in result]
        return result


def refill(s: State, b: int):
    """Refill board ``b`` of ``s`` in place (R-REFILL-1, R-REFILL-2, R-VAR-2); on empty supplies this is the deal
    of R-SETUP-4. Internal API: ``belief`` deals its replays with it and ``vector.rules`` mirrors it."""
    location = s.location
    left = [c for c in s.current[b].tolist() if c >= 0]
    if left:
        location[left] = DISCARD + b
    moved = [c for c in s.future[b].tolist() if c >= 0]
    top, end = int(s.deck_top[b]), int(s.deck_end[b])
    count = min(s.supply_size - len(moved), end - top)  # extra draws when an assistant emptied a future slot
    current = moved + s.deck[b, top:top + count].tolist()
    top += count
    future = s.deck[b, top:min(top + 2, end)].tolist()
    s.deck_top[b] = top + len(future)
    s.current[b] = current + [-1] * (MAX_SUPPLY - len(current))
    s.future[b] = future + [-1] * (FUTURE_SLOTS - len(future))
    if current:
        location[current] = CURRENT + b
    if future:
        location[future] = FUTURE + b
    if len(current) < s.supply_size:  # R-REFILL-2: exhausted for good
        s.exhausted[b] = 1


def _cheapest_cover(cards: Catalogue, hand: list[int], shortfall: int) -> list[int]:
    """The money cards to cash for a shortfall (R-TAKE-4): fewest cards, then least total, then lowest ids."""
    money = [c for c in hand if cards.kind[c] == MONEY]  # hand is sorted, so combinations come in id order
    for count in range(1, len(money) + 1):
        best = None
        for combo in combinations(money, count):
            total = int(cards.money[list(combo)].sum())
            if total >= shortfall and (best is None or total < best[0]):
                best = (total, combo)
        if best is not None:
            return list(best[1])
    raise AssertionError("a take was allowed that the player cannot pay for")  # the mask forbids it


@lru_cache(maxsize=8)
def discard_locations(cards: Catalogue) -> np.ndarray:
    """Each card's discard pile, as a location code; starting contracts have a guildhall back (CARDS.md). Cached,
    read-only. Internal API: the batch's card table (``vector.tables``) reads it."""
    board = cards.board.astype(np.int32)
    piles = np.where(board == START, DISCARD + GUILDHALL, DISCARD + board)
    piles.flags.writeable = False
    return piles


__all__ = ["Game", "IllegalActionError", "BOARDS", "discard_locations", "refill"]
