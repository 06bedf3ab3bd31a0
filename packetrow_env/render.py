"""Text rendering of a position and of actions, from one seat's point of view (never showing hidden cards)."""

from __future__ import annotations

from collections import Counter

from . import actions
from .cards import (ASSISTANT, BANKER, BOARDS, BUILDING, CAPTAIN, CONTRACT, GOLD, GOODS, GOODS_KIND, MONEY, START,
                    TRADER, place_name)
from .state import END_THRESHOLD, HAND, NUM_BOARDS

_BOARD_TITLES = tuple(b.capitalize() for b in BOARDS)
# Hand groups in the order they are shown: (label, kinds).
_HAND_GROUPS = (("contracts", (CONTRACT,)), ("goods", (GOODS_KIND, GOLD)), ("helpers", (TRADER, CAPTAIN, ASSISTANT)),
                ("money", (MONEY, BANKER)), ("buildings", (BUILDING,)))


def card_text(game, card: int) -> str:
    """A card's name with its price, e.g. '3 cotton ($10)'."""
    cards = game.cards
    cost = int(cards.cost[card])
    if cards.kind[card] == CONTRACT:
        return "contract " + contract_text(game, card)
    return cards.describe(card) + (f" (${cost})" if cost else "")


def shipment_text(game, contracts) -> str:
    """A shipment in words, e.g. 'ship 3 cotton to the Netherlands for $25'."""
    cards = game.cards
    parts = [f"{cards.quantity[c]} {GOODS[cards.good[c]]} to {place_name(cards.destination[c])}" for c in contracts]
    reward = int(sum(int(cards.reward[c]) for c in contracts))
    return "ship " + " and ".join(parts) + f" for ${reward}"


def contract_text(game, card: int) -> str:
    """A contract in words, e.g. '3 cotton to the Netherlands for $25' (+ ' [starting]' for a starting contract)."""
    cards = game.cards
    start = " [starting]" if cards.board[card] == START else ""
    return (f"{cards.quantity[card]} {GOODS[cards.good[card]]} to {place_name(cards.destination[card])} "
            f"for ${cards.reward[card]}{start}")


def describe_action(game, action: int) -> str:
    """What an action does in this position, in words (for the player to act)."""
    s = game.state
    name = actions.name(action)
    if action == actions.MORE:
        total = len(game.payment_options())
        first = (game.payment_page + 1) * actions.MAX_PAYMENT_OPTIONS
        if first >= total:
            return "show more payment options (there are no more now)"
        return (f"show the next payment options ({first + 1}-{min(first + actions.MAX_PAYMENT_OPTIONS, total)} "
                f"of {total})")
    if action >= actions.PAY:
        options = game.payment_page_options()
        k = action - actions.PAY
        if k >= len(options):
            return f"pay with option {k} (there is no such option now)"
        return f"pay {shipment_text(game, s.pending)[5:]} with {payment_text(game, options[k])}"
    if action < actions.TAKE:
        ending = " (its refill at the end of this round ends the game)" if choosing_ends_game(game, action) else ""
        if game.phase == "take":  # R-ROUND-5: the harbour master's last word
            return f"choose the {BOARDS[action]} and take a card there{ending}"
        return f"choose the {BOARDS[action]}{ending}"
    if action == actions.PASS:
        if game.phase == "take" and s.current_player == s.harbour_master:
            others_taken = s.has_piece[:s.num_players].tolist().count(1) == 1
            if others_taken or not game.choosable_boards():
                return "pass (the round ends" + (", and with it the game)" if last_round(game) else ")")
            return "pass (then choose another board)"
        return "pass"
    if action == actions.SHIP:
        return shipment_text(game, s.pending) if s.pending else "ship (nothing is pending)"
    if action >= actions.ADD_CONTRACT:
        card = int(game.cards.contract_ids[action - actions.ADD_CONTRACT])
        return f"add the contract {contract_text(game, card)} to the shipment"
    board = s.current_board
    if board < 0:
        return name
    if action >= actions.TAKE_FUTURE:
        card = int(s.future[board, action - actions.TAKE_FUTURE])
        what = "nothing" if card < 0 else "the " + card_text(game, card)
        return f"use an assistant to take {what} from {future_supply(board)}"
    card = int(s.current[board, action - actions.TAKE])
    return f"take {'nothing' if card < 0 else 'the ' + card_text(game, card)} from the {BOARDS[board]}"


def payment_text(game, option) -> str:
    """The cards of a payment option in words, counted, e.g. 'captain, cotton x2, ship to Spain'."""
    return _counted(game.cards.describe(c) for c in option) or "nothing"


def runs_out(game, board: int) -> bool:
    """Whether a board not yet exhausted will be exhausted by its next refill (R-REFILL-2; deck sizes are public)."""
    s = game.state
    if s.exhausted[board]:
        return False
    future = int((s.future[board] >= 0).sum())
    return future + int(s.deck_end[board] - s.deck_top[board]) < s.supply_size


def _refills_end_game(game, boards) -> bool:
    """Whether refilling ``boards`` at the end of this round ends the game (R-END-1)."""
    s = game.state
    running_out = sum(runs_out(game, b) for b in set(boards))
    return int(s.exhausted.sum()) + running_out >= END_THRESHOLD[s.num_players]


def last_round(game) -> bool:
    """Whether the boards chosen so far already make this round the last one."""
    return not game.is_over and _refills_end_game(game, game.state.chosen_order)


def choosing_ends_game(game, board: int) -> bool:
    """Whether choosing ``board`` now makes this round the last one (when it was not already)."""
    return not last_round(game) and _refills_end_game(game, list(game.state.chosen_order) + [board])


def future_supply(board: int) -> str:
    """A board's future supply in words, e.g. "the docks' future supply"."""
    name = BOARDS[board]
    return f"the {name}' future supply" if name.endswith("s") else f"the {name}'s future supply"


def phase_text(game) -> str:
    """What the player to act must do now, in words, e.g. 'take a card from the market or pass'."""
    s = game.state
    if game.is_over:
        return "the game is over"
    if game.phase == "pay":
        return "choose how to pay the shipment (R-SHIP-7: which cards to discard)"
    if s.pending:
        return "add contracts to the shipment or ship it"
    board = BOARDS[s.current_board] if s.current_board >= 0 else None
    if game.phase == "choose_board":
        return "choose a board (as harbour master)"
    if game.phase == "must_take":
        return f"take a card from the {board}"
    if s.current_player == s.harbour_master:
        return f"take a card from the {board} or pass (as harbour master, last on this board)"
    return f"take a card from the {board} or pass"


def _boards(count: int) -> str:
    return f"{count} board" + ("" if count == 1 else "s")


def _counted(texts) -> str:
    counts = Counter(texts)
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(counts.items()))


def _goods_text(game, members) -> str:
    """Goods cards as units per good, e.g. '3 grain (1+2), 2 fur'."""
    cards = game.cards
    parts = []
    for g, good in enumerate(GOODS):
        units = sorted(int(cards.quantity[c]) for c in members if cards.kind[c] == GOODS_KIND and cards.good[c] == g)
        if units:
            parts.append(f"{sum(units)} {good}" + (f" ({'+'.join(map(str, units))})" if len(units) > 1 else ""))
    return ", ".join(parts)


def _gold_text(game, members) -> str:
    """Gold nuggets with the units they give, e.g. '1 double + 1 single gold nugget (= 3 units of any good)'."""
    quantity = [int(game.cards.quantity[c]) for c in members if game.cards.kind[c] == GOLD]
    if not quantity:
        return ""
    doubles, singles = quantity.count(2), quantity.count(1)
    parts = [f"{k} {label}" for k, label in ((doubles, "double"), (singles, "single")) if k]
    units = sum(quantity)
    return (" + ".join(parts) + f" gold nugget{'s' if len(quantity) > 1 else ''} "
            f"(= {units} unit{'s' if units > 1 else ''} of any good)")


def _too_expensive(game) -> list[str]:
    """The cards on the board being taken from that the player to act cannot afford (so no take is listed)."""
    s = game.state
    board = s.current_board
    if board < 0 or s.pending or game.is_over:
        return []
    mask = game.legal_action_mask()
    short = [f"{card_text(game, int(c))} in slot {slot}" for slot, c in enumerate(s.current[board, :s.supply_size])
             if c >= 0 and not mask[actions.TAKE + slot]]
    if any(game.cards.kind[c] == ASSISTANT for c in game.hand(s.current_player)):
        short += [f"{card_text(game, int(c))} in future slot {slot}" for slot, c in enumerate(s.future[board])
                  if c >= 0 and not mask[actions.TAKE_FUTURE + slot]]
    return short


def hand_lines(game, hand, hidden_starting: bool = False, indent: str = "    ") -> list[str]:
    """A hand grouped by kind, one line per group; ``hidden_starting`` adds an unknown starting contract."""
    cards = game.cards
    kinds = cards.kind
    lines = []
    for label, group in _HAND_GROUPS:
        members = [c for c in hand if kinds[c] in group]
        if label == "goods":
            text = "; ".join(filter(None, (_goods_text(game, members), _gold_text(game, members))))
        elif label == "contracts":
            texts = [contract_text(game, c) for c in sorted(members, key=lambda c: (cards.board[c] != START, c))]
            if hidden_starting:
                texts.append("1 hidden starting contract")
            text = "; ".join(texts)
        else:
            text = _counted(cards.describe(c) for c in members)
            if label == "buildings" and len(members) > 1:
                text += f"  (= {int(cards.vp[members].sum())} VP)"
        if text:
            lines.append(f"{indent}{label + ':':11s}{text}")
    return lines or [f"{indent}(no cards)"]


def seat_label(seat: int, viewer: int | None = None, names=None) -> str:
    """'player 2 (heuristic)', 'player 0 (you)' or 'player 1'."""
    if names is not None and names[seat]:
        return f"player {seat} ({names[seat]})"
    return f"player {seat} (you)" if seat == viewer else f"player {seat}"


def render(game, seat: int | None = None, known_hands=None, names=None) -> str:
    """The table as text for ``seat`` (None: the player to act): supplies, own hand, opponents' public info.

    ``known_hands[p]`` (optional) lists the cards of opponent p the viewer knows; ``names`` (optional) labels seats.
    """
    s = game.state
    n = s.num_players
    if seat is None:
        seat = s.current_player
    exhausted = int(s.exhausted.sum())
    if game.is_over:
        turn = " - the game is over"
    elif s.current_player == seat:
        turn = f" - YOUR TURN: {phase_text(game)}"
    else:
        turn = f" - {seat_label(s.current_player, seat, names)} to act: {phase_text(game)}"
    lines = [f"Round {s.round} - harbour master: {seat_label(s.harbour_master, seat, names)}{turn}",
             f"(the game ends after a round that leaves {_boards(END_THRESHOLD[n])} exhausted; "
             f"exhausted now: {exhausted})"]
    if last_round(game):
        lines.append("THIS IS THE LAST ROUND: the refills at its end exhaust "
                     + " and ".join(f"the {BOARDS[b]}" for b in sorted(set(s.chosen_order)) if runs_out(game, b)) + ".")
    for b in range(NUM_BOARDS):
        flags = []
        if s.chosen[b]:
            flags.append("chosen this round")
        if s.current_board == b:
            flags.append("being taken from now")
        if s.exhausted[b]:
            flags.append("EXHAUSTED")
        elif runs_out(game, b):
            flags.append("runs out at its next refill")
        deck = int(s.deck_end[b] - s.deck_top[b])
        lines.append(f"{_BOARD_TITLES[b]} (deck {deck}){' [' + ', '.join(flags) + ']' if flags else ''}")
        current = [("(empty)" if c < 0 else card_text(game, int(c))) for c in s.current[b, :s.supply_size]]
        future = [("(empty)" if c < 0 else card_text(game, int(c))) for c in s.future[b]]
        lines.append("  now:    " + " | ".join(f"{i}: {t}" for i, t in enumerate(current)))
        lines.append("  future: " + " | ".join(f"{i}: {t}" for i, t in enumerate(future)))
    for p in [(seat + k) % n for k in range(n)]:
        ships = _counted(place_name(game.cards.destination[c]) for c in game.ships(p)) or "none"
        piece = "has taken a card this round" if not s.has_piece[p] else "has not taken this round"
        hm = ", harbour master" if p == s.harbour_master else ""
        held = game.hand(p) if p == seat else (known_hands[p] if known_hands is not None else [])
        money = sum(int(game.cards.money[c]) for c in held)
        cash = f"${int(s.cash[p])} cash" + (f" (+ ${money} in money cards)" if money else "")
        lines.append(f"{'*' if p == s.current_player and not game.is_over else ' '} {seat_label(p, seat, names)}: "
                     f"{cash}, ships to: {ships}; {piece}{hm}")
        if p == seat:
            lines.extend(hand_lines(game, game.hand(p)))
        elif known_hands is not None:
            start = int(s.starting_contract[p])
            hidden = start >= 0 and int(s.location[start]) == HAND + p and start not in known_hands[p]
            lines.append("    known cards (from his takes):")
            lines.extend(hand_lines(game, known_hands[p], hidden_starting=hidden, indent="      "))
    if s.pending:
        lines.append("pending shipment: " + shipment_text(game, s.pending))
    if game.is_over:
        lines.extend(scores_lines(game, seat, names))
    elif seat == s.current_player:
        lines.append("legal actions:")
        lines.extend(f"  {a:2d}  {actions.name(a):16s} {describe_action(game, a)}" for a in game.legal_actions())
        short = _too_expensive(game)
        if short:
            lines.append("  (you cannot afford: " + "; ".join(short) + ")")
    return "\n".join(lines)


def scores_lines(game, seat: int | None = None, names=None) -> list[str]:
    """The scores as a table (final after the game, the table's current standing during it), winners marked."""
    rows = game.scores()
    labels = [seat_label(p, seat, names) for p in range(len(rows))]
    width = max(len("player"), *(len(label) for label in labels))
    lines = [f"{'player':{width}s}  {'VP':>3s}  {'buildings':>9s}  {'money':>5s}  {'bankers':>7s}  {'cash':>5s}"]
    for label, row in zip(labels, rows):
        lines.append(f"{label:{width}s}  {row['vp']:3d}  {row['building_vp']:9d}  {row['money_vp']:5d}  "
                     f"{row['banker_vp']:7d}  {'$' + str(row['cash']):>5s}{'  WINNER' if row['winner'] else ''}")
    return lines
