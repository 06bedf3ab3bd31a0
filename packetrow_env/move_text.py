"""The legal moves of the seat to act as strings: one unique, stable, readable string per legal action.

A move string is a *key*, or a key and a *detail* after ``": "``. The key names the move and is unique among the
legal moves of a position by construction (a board, a slot, a contract or a payment option number):

- choose board b: ``choose the market`` (``: its refill at the end of this round ends the game`` where it does)
- take from slot s: ``take slot 1 of the market: 2 fur ($6)``
- take from future slot s: ``take future slot 0 of the bank with an assistant: library (3 VP) ($15)``
- pass: ``pass``
- add contract k: ``add contract 3: 3 grain to Sweden for $25``
- ship: ``ship 3 grain to Sweden for $25``
- pay with option k of the page: ``pay with option 13: captain, cotton x2, ship to Spain`` (over all the pages)
- more: ``show more payment options: 13-24 of 30``

Slots and contracts are numbered from 0, as the table's text shows the slots (``render``) and as the actions' short
names count them (``take:1``, ``contract:3``); payment options from 1, as ``more`` counts them (``13-24 of 30``), so
that on the first page option k is the k-th move listed. Strings are built from the seat's view alone
(the public state, its own hand, the payment options it chooses among), so the same position gives the same
strings, and a string read back names the same action. A list of them is numbered from 1 (``LegalMoves.numbered``),
the numbers a reply may answer with. ``packetrow_env.move_reader`` reads replies against them.
"""

from __future__ import annotations

from . import actions
from .cards import BOARDS
from .move_reader import Reading, read_move
from .render import card_text, choosing_ends_game, contract_text, payment_text, shipment_text

KEY_END = ": "  # a move string's key ends here, where it has a detail


def move_text(view, action: int) -> str:
    """The move string of one of the seat's legal actions (``view``: a ``SeatView`` of a game, or a ``Game``)."""
    s = view.state
    if action < actions.TAKE:
        ending = KEY_END + "its refill at the end of this round ends the game" \
            if choosing_ends_game(view, action) else ""
        return f"choose the {BOARDS[action]}{ending}"
    if action == actions.PASS:
        return "pass"
    if action == actions.SHIP:
        return shipment_text(view, s.pending)
    if action == actions.MORE:
        total = len(view.payment_options())
        first = (s.payment_page + 1) * actions.MAX_PAYMENT_OPTIONS
        return f"show more payment options{KEY_END}{first + 1}-{min(first + actions.MAX_PAYMENT_OPTIONS, total)} " \
               f"of {total}"
    if action >= actions.PAY:
        k = action - actions.PAY
        option = view.payment_page_options()[k]
        number = s.payment_page * actions.MAX_PAYMENT_OPTIONS + k + 1
        return f"pay with option {number}{KEY_END}{payment_text(view, option)}"
    if action >= actions.ADD_CONTRACT:
        k = action - actions.ADD_CONTRACT
        return f"add contract {k}{KEY_END}{contract_text(view, int(view.cards.contract_ids[k]))}"
    board = BOARDS[s.current_board]
    if action >= actions.TAKE_FUTURE:
        slot = action - actions.TAKE_FUTURE
        card = int(s.future[s.current_board, slot])
        return f"take future slot {slot} of the {board} with an assistant{KEY_END}{card_text(view, card)}"
    slot = action - actions.TAKE
    return f"take slot {slot} of the {board}{KEY_END}{card_text(view, int(s.current[s.current_board, slot]))}"


class LegalMoves:
    """The legal moves of the seat to act in ``view``, in action order: ``actions[i]`` is move ``texts[i]``.

    ``read(reply)`` reads a reply against them (``move_reader.read_move``, with the actions' short names such as
    ``take:1`` as aliases); ``numbered()`` lists them from 1, as a reply may number them.
    """

    def __init__(self, view):
        self.actions = [int(a) for a in view.legal_actions()]
        self.texts = [move_text(view, a) for a in self.actions]

    def __len__(self) -> int:
        return len(self.texts)

    def numbered(self) -> str:
        """The moves one a line, numbered from 1: ``1. pass``."""
        return "\n".join(f"{number}. {text}" for number, text in enumerate(self.texts, start=1))

    def read(self, reply) -> Reading:
        """The move a reply names, or why none could be read (``move_reader.read_move``)."""
        names = {actions.name(a): i for i, a in enumerate(self.actions)}
        return read_move(reply, self.texts, names, known_names=actions.NAMES)
