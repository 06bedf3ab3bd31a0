"""What the browser is sent: a position as JSON, built only from a ``SeatView`` (what one seat may know).

Every card shown to the page is a card the viewing seat may locate (R-INFO): the supplies, ships and the
hands as ``packetrow_env.knowledge`` (through the SeatView) gives them; the Game itself is never read here.
Decks are sent as sizes (public), never as contents; an opponent's held starting contract is sent as "one
hidden card". Card ids are never sent: the page needs only what a card is. The ``full`` view (watching a
recorded game) shows every hand and says so.
"""

from __future__ import annotations

import re

from packetrow_env import actions
from packetrow_env.cards import (ASSISTANT, BANKER, BOARDS, BUILDING, CAPTAIN, CONTRACT, GOLD, GOODS, GOODS_KIND,
                                 KINDS, MONEY, SHIP, START, TRADER, place_name)
from packetrow_env.render import card_text, last_round, phase_text, runs_out, seat_label, shipment_text
from packetrow_env.state import END_THRESHOLD

RULE_ID = re.compile(r"\s*\bR-[A-Z]+-\d+:?\s*")  # the rule ids the engine's texts cite for developers


def plain(text: str) -> str:
    """A text for players: rule ids ("R-SHIP-7: ...") left out, the words kept."""
    return RULE_ID.sub(" ", text).replace("( ", "(").strip()


# How a hand is grouped on the page (the order of the terminal's view): (label, kinds).
HAND_GROUPS = (("contracts", (CONTRACT,)), ("goods", (GOODS_KIND, GOLD)), ("helpers", (TRADER, CAPTAIN, ASSISTANT)),
               ("money", (MONEY, BANKER)), ("buildings", (BUILDING,)))


def card_json(view, card: int) -> dict:
    """What one card is: kind, short name, price and the facts the page draws (never its id)."""
    cards = view.cards
    kind = int(cards.kind[card])
    out = {"kind": KINDS[kind], "name": cards.describe(card), "text": card_text(view, card),
           "price": int(cards.cost[card])}
    if kind == CONTRACT:
        out.update(good=GOODS[cards.good[card]], quantity=int(cards.quantity[card]),
                   destination=place_name(cards.destination[card]), reward=int(cards.reward[card]),
                   starting=bool(cards.board[card] == START))
    elif kind == GOODS_KIND:
        out.update(good=GOODS[cards.good[card]], quantity=int(cards.quantity[card]))
    elif kind == GOLD:
        out.update(quantity=int(cards.quantity[card]))
    elif kind == SHIP:
        out.update(destination=place_name(cards.destination[card]))
    elif kind == BUILDING:
        out.update(vp=int(cards.vp[card]))
    elif kind == MONEY:
        out.update(money=int(cards.money[card]))
    return out


def hand_groups(view, hand) -> list[dict]:
    """A hand grouped by kind (contracts, goods, helpers, money, buildings), empty groups left out."""
    cards = view.cards
    kinds = cards.kind
    groups = []
    for label, group in HAND_GROUPS:
        members = sorted((c for c in hand if kinds[c] in group), key=lambda c: (int(kinds[c]), cards.describe(c)))
        if members:
            groups.append({"label": label, "cards": [card_json(view, c) for c in members]})
    return groups


def board_json(view, b: int) -> dict:
    """One board: public supplies, deck size and flags."""
    s = view.state

    def slot(c):
        return None if c < 0 else card_json(view, int(c))

    return {"index": b, "name": BOARDS[b], "deck": int(s.deck_end[b] - s.deck_top[b]), "chosen": bool(s.chosen[b]),
            "active": bool(s.current_board == b), "exhausted": bool(s.exhausted[b]),
            "runs_out": bool(runs_out(view, b)),
            "current": [slot(c) for c in s.current[b, :s.supply_size].tolist()],
            "future": [slot(c) for c in s.future[b].tolist()]}


def action_json(view, action: int) -> dict:
    """A legal action of the seat to act: id, name, words, and what it points at (board slot, contract, payment
    and its number among all the options)."""
    s = view.state
    out = {"id": int(action), "name": actions.name(action), "text": plain(view.describe_action(action))}
    if action < actions.TAKE:
        out.update(group="choose", board=int(action))
    elif action < actions.TAKE_FUTURE:
        out.update(group="take", board=int(s.current_board), slot=int(action - actions.TAKE))
    elif action < actions.PASS:
        out.update(group="future", board=int(s.current_board), slot=int(action - actions.TAKE_FUTURE))
    elif action == actions.PASS:
        out.update(group="pass")
    elif action < actions.SHIP:
        card = int(view.cards.contract_ids[action - actions.ADD_CONTRACT])
        out.update(group="contract", card=card_json(view, card))
    elif action == actions.SHIP:
        out.update(group="ship")
    elif action == actions.MORE:
        out.update(group="more")
    else:
        k = action - actions.PAY
        option = view.payment_page_options()[k]
        out.update(group="pay", option=view.state.payment_page * actions.MAX_PAYMENT_OPTIONS + k,
                   payment=[card_json(view, int(c)) for c in option])
    return out


def table_json(view, names, you: bool = True) -> dict:
    """The table as a SeatView knows it (``mode`` ``full``: everything); ``you``: the viewer is the person playing.

    Everything comes from the view: public state, the seat's own hand and what it knows of the others.
    """
    s = view.state
    cards = view.cards
    n = view.num_players
    seat = view.seat if you else None
    hands = view.known_hands()
    holds = view.holds_starting_contract()
    over = view.is_over
    players = []
    for p in range(n):
        hand = hands[p] or []
        # an opponent's starting contract this seat cannot locate: he holds it, and no starting contract is known
        hidden = holds[p] == 1 and not any(cards.board[c] == START for c in hand)
        players.append({
            "seat": p, "label": seat_label(p, seat, names), "agent": names[p] if names else None,
            "you": p == seat, "cash": int(s.cash[p]), "money_cards": int(sum(int(cards.money[c]) for c in hand)),
            "ships": [card_json(view, c) for c in sorted(view.ships(p), key=lambda c: int(cards.destination[c]))],
            "has_taken": not bool(s.has_piece[p]), "harbour_master": p == s.harbour_master,
            "to_act": (not over) and p == s.current_player,
            "hand": hand_groups(view, hand), "hidden_cards": int(hidden),
            "holds_starting_contract": None if holds[p] is None else bool(holds[p])})
    out = {"num_players": n, "round": int(s.round), "phase": view.phase, "over": bool(over),
           "harbour_master": int(s.harbour_master), "current_player": None if over else int(s.current_player),
           "you": seat, "mode": view.mode, "phase_text": plain(phase_text(view)),
           "end_threshold": int(END_THRESHOLD[n]),
           "exhausted": int(s.exhausted.sum()), "last_round": bool(last_round(view)),
           "boards": [board_json(view, b) for b in range(len(BOARDS))], "players": players,
           "pending": [card_json(view, c) for c in s.pending],
           "pending_text": shipment_text(view, s.pending) if s.pending else None,
           "actions": [], "scores": None}
    if you and not over and s.current_player == view.seat:
        out["actions"] = [action_json(view, a) for a in view.legal_actions()]
        if [a["group"] for a in out["actions"]] == ["pass"]:
            out["pass_reason"] = pass_reason(view, players[view.seat])
    if over:
        out["scores"] = [dict(row, seat=p, label=seat_label(p, seat, names)) for p, row in enumerate(view.scores())]
    return out


def pass_reason(view, you: dict) -> str:
    """Why passing is the only move: the board's cards are gone or cost more than cash and money cards cover."""
    s = view.state
    board = int(s.current_board)
    cards = [int(c) for c in s.current[board, :s.supply_size].tolist() if c >= 0]
    name = BOARDS[board]
    if not cards:
        return f"Only passing is possible: the {name} has no card left to take."
    cheapest = min(int(view.cards.cost[c]) for c in cards)
    return (f"Only passing is possible: the cheapest card on the {name} costs ${cheapest}, more than your "
            f"${you['cash']} cash and ${you['money_cards']} in money cards cover.")


def end_hands(full_view, names) -> dict:
    """Every hand of a finished game, face up (a ``full`` view): the starting contracts nobody could see before."""
    cards = full_view.cards
    players = []
    for p, hand in enumerate(full_view.known_hands()):
        start = [card_json(full_view, c) for c in hand if cards.kind[c] == CONTRACT and cards.board[c] == START]
        players.append({"seat": p, "label": seat_label(p, full_view.seat, names), "starting": start,
                        "hand": hand_groups(full_view, hand)})
    return {"players": players}
