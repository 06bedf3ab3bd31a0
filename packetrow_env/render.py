"""Text rendering of a position and of actions, from one seat's point of view (never showing hidden cards)."""

from __future__ import annotations

from collections import Counter

from . import actions
from .cards import BOARDS, GOODS, place_name

_BOARD_TITLES = tuple(b.capitalize() for b in BOARDS)


def card_text(game, card: int) -> str:
    """A card's name with its price, e.g. '3 cotton ($10)'."""
    cards = game.cards
    cost = int(cards.cost[card])
    return cards.describe(card) + (f" (${cost})" if cost else "")


def shipment_text(game, contracts) -> str:
    """A shipment in words, e.g. 'ship 3 cotton to the Netherlands for $25'."""
    cards = game.cards
    parts = [f"{cards.quantity[c]} {GOODS[cards.good[c]]} to {place_name(cards.destination[c])}" for c in contracts]
    reward = int(sum(int(cards.reward[c]) for c in contracts))
    return "ship " + " and ".join(parts) + f" for ${reward}"


def describe_action(game, action: int) -> str:
    """What an action does in this position, in words (for the player to act)."""
    s = game.state
    name = actions.name(action)
    if action < actions.TAKE:
        return f"choose the {BOARDS[action]}"
    if action == actions.PASS:
        return "pass"
    if action == actions.SHIP:
        return shipment_text(game, s.pending) if s.pending else "ship (nothing is pending)"
    if action >= actions.ADD_CONTRACT:
        card = int(game.cards.contract_ids[action - actions.ADD_CONTRACT])
        return f"add {game.cards.describe(card)} to the shipment"
    board = s.current_board
    if board < 0:
        return name
    if action >= actions.TAKE_FUTURE:
        card = int(s.future[board, action - actions.TAKE_FUTURE])
        what = "nothing" if card < 0 else card_text(game, card)
        return f"take {what} from the {BOARDS[board]}'s future supply with an assistant"
    card = int(s.current[board, action - actions.TAKE])
    return f"take {'nothing' if card < 0 else card_text(game, card)} from the {BOARDS[board]}"


def _hand_summary(game, hand) -> str:
    counts = Counter(card_text(game, c) for c in hand)
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(counts.items())) or "(empty)"


def render(game, seat: int | None = None, known_hands=None) -> str:
    """The table as text for ``seat`` (None: the player to act): supplies, own hand, opponents' public info."""
    s = game.state
    n = s.num_players
    if seat is None:
        seat = s.current_player
    lines = [f"Round {s.round} - harbour master: player {s.harbour_master}"
             + ("" if game.is_over else f" - player {s.current_player} to act ({game.phase})")]
    for b in range(4):
        flags = []
        if s.chosen[b]:
            flags.append("chosen")
        if s.current_board == b:
            flags.append("current")
        if s.exhausted[b]:
            flags.append("exhausted")
        deck = int(s.deck_end[b] - s.deck_top[b])
        lines.append(f"{_BOARD_TITLES[b]} (deck {deck}){' [' + ', '.join(flags) + ']' if flags else ''}")
        current = [("-" if c < 0 else card_text(game, int(c))) for c in s.current[b, :s.supply_size]]
        future = [("-" if c < 0 else card_text(game, int(c))) for c in s.future[b]]
        lines.append("  now:    " + " | ".join(f"{i}: {t}" for i, t in enumerate(current)))
        lines.append("  future: " + " | ".join(f"{i}: {t}" for i, t in enumerate(future)))
    for p in [(seat + k) % n for k in range(n)]:
        who = "you" if p == seat else f"player {p}"
        ships = ", ".join(place_name(game.cards.destination[c]) for c in game.ships(p)) or "none"
        piece = "has taken" if not s.has_piece[p] else "to take"
        lines.append(f"{'*' if p == s.current_player and not game.is_over else ' '} player {p} ({who}): "
                     f"${int(s.cash[p])}, ships: {ships}, {piece}")
        if p == seat:
            lines.append("    hand: " + _hand_summary(game, game.hand(p)))
        elif known_hands is not None:
            lines.append("    known hand: " + _hand_summary(game, known_hands[p]))
    if s.pending:
        lines.append("pending shipment: " + shipment_text(game, s.pending))
    if game.is_over:
        for p, row in enumerate(game.scores()):
            lines.append(f"player {p}: {row['vp']} VP (buildings {row['building_vp']}, money {row['money_vp']}, "
                         f"bankers {row['banker_vp']}), ${row['cash']}{' - WINNER' if row['winner'] else ''}")
    elif seat == s.current_player:
        lines.append("legal actions:")
        lines.extend(f"  {a:2d} {actions.name(a):12s} {describe_action(game, a)}" for a in game.legal_actions())
    return "\n".join(lines)

