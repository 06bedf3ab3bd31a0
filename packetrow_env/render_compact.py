"""The table in at most 80 columns and few lines, for small terminals (an 80x24 screen): ``compact(view)``.

``view`` is a ``SeatView``: the table shows only what that seat knows. The same facts as ``render.render``
for the same seat, shorter: cards by short names (``2 fur $6``,
``3 grain>NL $25`` for a contract, ``bldg 4VP $18``, ``ship>GB``), destinations by two-letter codes
(``LEGEND``), one line per opponent, the legal actions packed several to a line. No line is longer than
``WIDTH``: a longer one wraps, indented.
"""

from __future__ import annotations

from . import actions
from .cards import (ASSISTANT, BANKER, BOARDS, BUILDING, CAPTAIN, CONTRACT, DESTINATIONS, GOLD, GOODS, GOODS_KIND,
                    KINDS, MONEY, NUM_BOARDS, SHIP, START, TRADER)
from .render import last_round, phase_text, runs_out
from .state import END_THRESHOLD

WIDTH = 80
DESTINATION_CODES = ("GB", "FR", "NL", "SE", "ES", "DE")  # in DESTINATIONS order
LEGEND = ("Compact view: destinations GB Great Britain, FR France, NL the Netherlands,\n"
          "SE Sweden, ES Spain, DE the German Confederation; '3 grain>NL$25' a contract\n"
          "(* your starting one); 'bldg 4VP $18' a building; (N) the cards in a deck;\n"
          "$5 (+8) cash and money cards; HM the harbour master; 'start?' a hidden starting\n"
          "contract; 'took' has taken a card this round.")
_TITLES = ("Guildhall", "Docks", "Market", "Bank")
assert len(DESTINATION_CODES) == len(DESTINATIONS) and len(_TITLES) == len(BOARDS)


def short_card(view, card: int) -> str:
    """A card in a few characters, e.g. '2 fur $6', '3 grain>NL $25', 'bldg 4VP $18', 'ship>GB', 'money $5'."""
    if card < 0:
        return "-"
    cards = view.cards
    kind = cards.kind[card]
    cost = int(cards.cost[card])
    price = f" ${cost}" if cost else ""
    if kind == CONTRACT:
        start = "*" if cards.board[card] == START else ""
        return (f"{cards.quantity[card]} {GOODS[cards.good[card]]}>{DESTINATION_CODES[cards.destination[card]]}"
                f"${cards.reward[card]}{start}")
    if kind == GOODS_KIND:
        return f"{cards.quantity[card]} {GOODS[cards.good[card]]}{price}"
    if kind == GOLD:
        return f"gold x{cards.quantity[card]}{price}"
    if kind == SHIP:
        return f"ship>{DESTINATION_CODES[cards.destination[card]]}"
    if kind == BUILDING:
        return f"bldg {cards.vp[card]}VP{price}"
    if kind == MONEY:
        return f"money ${cards.money[card]}"
    return KINDS[kind] + price


def hand_text(view, hand) -> str:
    """A hand on few characters: each contract, goods as units per good, gold, helpers, bankers, buildings' VP.

    Money cards are left out: their total is shown beside the cash.
    """
    cards = view.cards
    kinds = [int(cards.kind[c]) for c in hand]
    parts = [short_card(view, c).replace(" ", "", 1) for c in sorted(hand, key=lambda c: (cards.board[c] != START, c))
             if cards.kind[c] == CONTRACT]
    for g, good in enumerate(GOODS):
        units = sum(int(cards.quantity[c]) for c, k in zip(hand, kinds) if k == GOODS_KIND and cards.good[c] == g)
        if units:
            parts.append(f"{units} {good}")
    gold = sorted(int(cards.quantity[c]) for c, k in zip(hand, kinds) if k == GOLD)
    if gold:
        parts.append("gold " + "+".join(map(str, gold)))
    for kind in (TRADER, CAPTAIN, ASSISTANT, BANKER):
        count = kinds.count(kind)
        if count:
            parts.append(KINDS[kind] + (f" x{count}" if count > 1 else ""))
    buildings = [c for c, k in zip(hand, kinds) if k == BUILDING]
    if buildings:
        parts.append(f"{len(buildings)} bldg{'s' if len(buildings) > 1 else ''} {int(cards.vp[buildings].sum())}VP")
    return ", ".join(parts)


def wrap(line: str, width: int = WIDTH, indent: str = "    ") -> list[str]:
    """``line`` cut at spaces into lines of at most ``width`` characters, the later ones indented."""
    out: list[str] = []
    while len(line) > width:
        cut = line.rfind(" ", len(indent) + 1 if out else 1, width + 1)
        if cut <= 0:
            cut = width
        out.append(line[:cut].rstrip())
        line = indent + line[cut:].lstrip()
    out.append(line)
    return out


def pack(first: str, items: list[str], width: int = WIDTH, indent: str = "  ", sep: str = " | ") -> list[str]:
    """``first`` followed by ``items`` joined by ``sep``, a new (indented) line where the next item would not fit."""
    lines, line = [], first
    for i, item in enumerate(items):
        piece = item if i == 0 else sep + item
        if i and len(line) + len(piece) > width:
            lines += wrap(line + sep.rstrip(), width, indent)
            line, piece = indent, item
        line += piece
    return lines + wrap(line, width, indent)


def label(p: int, seat: int, names=None, limit: int = 10) -> str:
    """'you' or 'P2 heuristic' (the name cut to ``limit`` characters)."""
    if p == seat:
        return "you"
    name = (names[p] if names is not None and names[p] else "") or ""
    name = name if len(name) <= limit else name[:limit - 1] + "~"
    return f"P{p} {name}".rstrip()


def _board_lines(view, b: int) -> list[str]:
    s = view.state
    flags = []
    if s.current_board == b:
        flags.append("taking")
    elif s.chosen[b]:
        flags.append("chosen")
    if s.exhausted[b]:
        flags.append("EXHAUSTED")
    elif runs_out(view, b):
        flags.append("runs out")
    deck = int(s.deck_end[b] - s.deck_top[b])
    head = f"{_TITLES[b]} ({deck})" + (f" [{', '.join(flags)}]" if flags else "")
    current, future = s.current[b, :s.supply_size], s.future[b]
    if (current < 0).all() and (future < 0).all():
        return [f"{head}: empty"]
    now = " ".join(f"{i}:{short_card(view, int(c))}" for i, c in enumerate(current))
    nxt = " ".join(f"{i}:{short_card(view, int(c))}" for i, c in enumerate(future))
    one = f"{head}: {now} | next {nxt}"
    return [one] if len(one) <= WIDTH else wrap(f"{head}  next {nxt}") + wrap(f"   now {now}")


def _action_text(view, a: int) -> str:
    """An action as '7 take:3 ship>NL': its number, name and, for takes and contracts, the card."""
    s = view.state
    name = actions.name(a)
    if actions.TAKE <= a < actions.PASS and s.current_board >= 0:
        future = a >= actions.TAKE_FUTURE
        slot = a - (actions.TAKE_FUTURE if future else actions.TAKE)
        card = int((s.future if future else s.current)[s.current_board, slot])
        return f"{a} {name} {short_card(view, card)}"
    if actions.ADD_CONTRACT <= a < actions.SHIP:
        return f"{a} {name} {short_card(view, int(view.cards.contract_ids[a - actions.ADD_CONTRACT]))}"
    return f"{a} {name}"


def compact(view, names=None) -> str:
    """The table as ``view``'s seat knows it (a ``SeatView``), in at most ``WIDTH`` columns: boards, players, actions."""
    s = view.state
    n = s.num_players
    seat = view.seat
    lines = wrap(f"Round {s.round}, HM {label(s.harbour_master, seat, names)}; exhausted "
                 f"{int(s.exhausted.sum())} of the {END_THRESHOLD[n]} that end the game"
                 + ("; LAST ROUND" if last_round(view) else ""))
    for b in range(NUM_BOARDS):
        lines += _board_lines(view, b)
    holds_start = view.holds_starting_contract()
    for p in [(seat + k) % n for k in range(n)]:
        mark = "*" if p == s.current_player and not view.is_over else " "
        held = view.known_hand(p) or []
        money = sum(int(view.cards.money[c]) for c in held)
        ships = " ".join(DESTINATION_CODES[view.cards.destination[c]] for c in view.ships(p)) or "-"
        facts = [f"${int(s.cash[p])}" + (f" (+{money})" if money else ""), f"ships {ships}"]
        if p == s.harbour_master:
            facts.append("HM")
        if not s.has_piece[p]:
            facts.append("took")
        if p == seat:
            hand = hand_text(view, held) or "no cards"
        else:
            hidden = "start?" if holds_start[p] else ""  # he still hides his starting contract
            hand = ", ".join(filter(None, [hidden, hand_text(view, held)])) or "nothing known"
        lines += wrap(f"{mark}{label(p, seat, names)}: {', '.join(facts)} | {hand}")
    if s.pending:
        lines += wrap("pending shipment: " + ", ".join(short_card(view, c) for c in s.pending))
    if view.is_over:
        rows = view.scores()
        lines += wrap("Final: " + "; ".join(f"{label(p, seat, names)} {row['vp']} VP ${row['cash']}"
                                             + (" WINNER" if row["winner"] else "") for p, row in enumerate(rows)))
    elif s.current_player == seat:
        # the phase without its explanation in brackets, then the actions
        lines += pack(f"YOUR TURN, {phase_text(view).split(' (')[0]}: ",
                      [_action_text(view, a) for a in view.legal_actions()])
    else:
        lines += wrap(f"{label(s.current_player, seat, names)} to act: {phase_text(view)}")
    return "\n".join(lines)
