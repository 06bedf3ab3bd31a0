"""Hand-made positions for the tests, built through ``Game.from_dict``.

    pos = Position(4, seed=0)              # the deal Game.new(4, seed=0) makes
    pos.hand(1, 85, 80).ships(1, 41)       # move cards (ids of CARDS.md) to seat 1's hand / ship row
    pos.supply(2, current=[85, None, 90])  # the market's current supply, slot by slot (None = empty)
    pos.cash(1, 40).turn("take", player=1, board=2, chosen=[2])
    game = pos.game()                      # Game.from_dict validates the position

Every mover first takes the card out of wherever it is, so each card stays
exactly once; a card taken out of a supply slot leaves the deck's top card in
its place (so the supplies stay as a refill leaves them, R-REFILL-1). A card pushed out of a supply slot goes to the bottom of its
own deck (a starting contract: out of the game). ``place(game, card)`` says
where a card is, for assertions.
"""

from __future__ import annotations

import copy

import numpy as np

from packetrow_env import actions
from packetrow_env import cards as catalogue
from packetrow_env.cards import BANK
from packetrow_env.engine import Game
from packetrow_env.state import END_THRESHOLD

CARDS = catalogue.load()
BOARD = {name: b for b, name in enumerate(catalogue.BOARDS)}  # 'guildhall' -> 0, ...


class Position:
    """A saved-game dict being edited; ``game()`` turns it into a validated Game."""

    def __init__(self, num_players: int = 4, seed: int = 0, random_start: bool = False):
        self.data = Game.new(num_players, seed, random_start=random_start).to_dict()

    @property
    def num_players(self) -> int:
        return self.data["num_players"]

    # ------------------------------------------------------------ moving cards
    def take_out(self, card: int) -> "Position":
        """Take a card out of whatever pile, slot, hand or ship row holds it."""
        d = self.data
        for board in d["boards"]:
            for key in ("deck", "discard"):
                if card in board[key]:
                    board[key].remove(card)
                    return self
            for key in ("current", "future"):
                if card in board[key]:  # the deck's top card takes its place, as a refill would have dealt it
                    board[key][board[key].index(card)] = board["deck"].pop(0) if board["deck"] else None
                    return self
        if card in d["removed"]:
            d["removed"].remove(card)
            return self
        for player in d["players"]:
            for key in ("hand", "ships"):
                if card in player[key]:
                    player[key].remove(card)
                    return self
        raise ValueError(f"card {card} is nowhere in the position")

    def _park(self, card: int):
        board = int(CARDS.board[card])
        if board == catalogue.START:
            self.data["removed"].append(card)
        else:
            self.data["boards"][board]["deck"].append(card)

    def hand(self, seat: int, *cards: int) -> "Position":
        """Put cards into a seat's hidden hand."""
        for c in cards:
            self.take_out(c)
            self.data["players"][seat]["hand"].append(c)
        self.data["players"][seat]["hand"].sort()
        return self

    def ships(self, seat: int, *cards: int) -> "Position":
        """Put ships face up in front of a seat."""
        for c in cards:
            self.take_out(c)
            self.data["players"][seat]["ships"].append(c)
        self.data["players"][seat]["ships"].sort()
        return self

    def discard(self, board: int, *cards: int) -> "Position":
        """Put cards onto a board's discard pile."""
        for c in cards:
            self.take_out(c)
            self.data["boards"][board]["discard"].append(c)
        self.data["boards"][board]["discard"].sort()
        return self

    def remove(self, *cards: int) -> "Position":
        """Put cards out of the game (unseen)."""
        for c in cards:
            self.take_out(c)
            self.data["removed"].append(c)
        return self

    def deck(self, board: int, cards) -> "Position":
        """Make a board's deck exactly ``cards`` (top first); the rest of its old deck goes to its discard pile."""
        cards = list(cards)
        for c in cards:
            self.take_out(c)
        pile = self.data["boards"][board]
        pile["discard"] = sorted(pile["discard"] + pile["deck"])
        pile["deck"] = cards
        return self

    def deck_top(self, board: int, *cards: int) -> "Position":
        """Put cards on top of a board's deck, the first one on top."""
        for c in cards:
            self.take_out(c)
        pile = self.data["boards"][board]
        pile["deck"] = list(cards) + pile["deck"]
        return self

    def supply(self, board: int, current=None, future=None) -> "Position":
        """Set a board's current and/or future supply slot by slot (None = empty slot)."""
        pile = self.data["boards"][board]
        for key, row in (("current", current), ("future", future)):
            if row is None:
                continue
            row = list(row)
            if len(row) != len(pile[key]):
                raise ValueError(f"the {key} supply has {len(pile[key])} slots, got {row}")
            for c in row:
                if c is not None:
                    self.take_out(c)
            for old in pile[key]:
                if old is not None:
                    self._park(old)
            pile[key] = row
        return self

    def starting_contract(self, seat: int, card: int) -> "Position":
        """Deal a seat a different starting contract (the old one leaves the game, or goes to the seat that had it)."""
        players = self.data["players"]
        old = players[seat]["starting_contract"]
        holder = next((p for p, row in enumerate(players) if row["starting_contract"] == card), None)
        if holder == seat:
            return self
        if old in players[seat]["hand"]:
            self.remove(old)
        if holder is not None:  # it was dealt to another seat: he gets the old one instead
            self.hand(holder, old)
            players[holder]["starting_contract"] = old
        self.hand(seat, card)
        players[seat]["starting_contract"] = card
        return self

    # --------------------------------------------------------------- scalars
    def cash(self, seat: int, amount: int) -> "Position":
        """Set a seat's cash."""
        self.data["players"][seat]["cash"] = amount
        return self

    def exhausted(self, board: int, flag: bool = True) -> "Position":
        """Mark a board exhausted (or not). Exhausting one also empties what a refill would have emptied
        (R-REFILL-2): its deck and future supply go to its discard pile, and so does its last current card."""
        pile = self.data["boards"][board]
        pile["exhausted"] = flag
        if flag:
            moved = pile["deck"] + [c for c in pile["future"] + pile["current"][-1:] if c is not None]
            pile["deck"] = []
            pile["future"] = [None, None]
            pile["current"][-1] = None
            pile["discard"] = sorted(pile["discard"] + [c for c in moved if CARDS.board[c] != catalogue.START])
            self.data["removed"] += [c for c in moved if CARDS.board[c] == catalogue.START]
        return self

    def harbour_master(self, seat: int) -> "Position":
        """Give the harbour master token to a seat (and the choice of board, in phase choose_board)."""
        self.data["harbour_master"] = seat
        if self.data["phase"] == "choose_board":
            self.data["current_player"] = seat
        return self

    def turn(self, phase: str = "choose_board", player: int | None = None, board: int | None = None,
             chosen=(), taken=()) -> "Position":
        """Set whose decision it is: the phase, the player asked (default: the HM), the board being played
        (default: the last chosen one), the boards chosen this round, the seats that already took a card."""
        d = self.data
        chosen = list(chosen)
        if board is None and phase != "choose_board" and chosen:
            board = chosen[-1]
        d["phase"] = phase
        d["current_player"] = d["harbour_master"] if player is None else player
        d["current_board"] = board
        d["chosen_boards"] = chosen
        for p, row in enumerate(d["players"]):
            row["has_piece"] = p not in taken
        return self

    def last_round(self, board: int = BANK) -> "Position":
        """Make the current round the last: the HM is asked on ``board`` after every other player took a card,
        ``board`` has no deck and no future supply left, and enough other boards are already exhausted, so that
        his pass (or take) ends the round and, with the refill exhausting ``board``, the game (R-END-1)."""
        n = self.num_players
        others = [b for b in range(4) if b != board][:END_THRESHOLD[n] - 1]
        for b in others:
            self.exhausted(b)
        self.supply(board, future=[None, None])
        self.deck(board, [])
        hm = self.data["harbour_master"]
        return self.turn("take", board=board, chosen=[board], taken=[p for p in range(n) if p != hm])

    # ------------------------------------------------------------------ build
    def game(self) -> Game:
        """The position as a Game (validated by Game.from_dict)."""
        return Game.from_dict(copy.deepcopy(self.data))


def place(game_or_dict, card: int) -> tuple:
    """Where a card is: ('deck', b), ('discard', b), ('current', b, slot), ('future', b, slot), ('removed',),
    ('hand', seat) or ('ships', seat)."""
    d = game_or_dict if isinstance(game_or_dict, dict) else game_or_dict.to_dict()
    for b, board in enumerate(d["boards"]):
        for key in ("deck", "discard"):
            if card in board[key]:
                return (key, b)
        for key in ("current", "future"):
            if card in board[key]:
                return (key, b, board[key].index(card))
    if card in d["removed"]:
        return ("removed",)
    for p, player in enumerate(d["players"]):
        for key in ("hand", "ships"):
            if card in player[key]:
                return (key, p)
    raise AssertionError(f"card {card} is nowhere")


def without_rng(d: dict) -> dict:
    """A saved game without its generator state and history, to compare positions."""
    return {k: v for k, v in d.items() if k not in ("rng", "history")}


def take(slot):
    """The action taking current-supply slot ``slot``."""
    return actions.TAKE + slot


def add(card):
    """The 'add contract' action for a contract card id (k = id for 0-23, k = 24.. for 160-171)."""
    return actions.ADD_CONTRACT + (card if card < 24 else card - 160 + 24)


def random_play(game, steps: int, seed: int):
    """``game`` after up to ``steps`` uniformly random legal actions (a generator seeded with ``seed``)."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if game.is_over:
            break
        game.step(int(rng.choice(game.legal_actions())))
    return game
