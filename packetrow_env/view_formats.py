"""A seat's view as text and as JSON, with its legal moves as move strings: what a language model or a tool
client reads.

Both are built from a ``SeatView`` alone, so they hold what the seat knows and nothing else (R-INFO): the text is
the table as ``SeatView.render_text`` draws it, with the seat's legal moves listed as numbered move strings
(``move_text``) in place of the action ids; the JSON holds the same facts as plain values, cards as their words
(``render.card_text``), never as ids.
"""

from __future__ import annotations

from .cards import BOARDS, START
from .move_text import LegalMoves
from .render import card_text, last_round, phase_text, runs_out, seat_label, shipment_text
from .state import END_THRESHOLD

MOVES_HEADING = "your legal moves (answer with one of them, or its number):"


def view_text(view, names=None) -> str:
    """The table as ``view``'s seat sees it and, on its turn, its legal moves numbered from 1 (``names``: seat
    labels, as ``render.render`` takes them)."""
    table, marker, legal = view.render_text(names).partition("\nlegal actions:\n")
    if not marker:
        return table
    notes = [line.strip() for line in legal.splitlines() if line.strip().startswith("(")]  # what it cannot afford
    return "\n".join([table, MOVES_HEADING, LegalMoves(view).numbered(), *notes])


def view_json(view, names=None) -> dict:
    """The table as ``view``'s seat knows it, as JSON values; ``legal_moves`` (on its turn) are the move strings."""
    s = view.state
    n = view.num_players
    over = view.is_over
    hands = view.known_hands()
    holds = view.holds_starting_contract()

    def cards(ids):
        return [card_text(view, int(c)) for c in ids]

    def slots(row):
        return [None if c < 0 else card_text(view, int(c)) for c in row.tolist()]

    boards = [{"name": BOARDS[b], "deck": s.deck_size(b), "chosen_this_round": bool(s.chosen[b]),
               "being_taken_from": bool(s.current_board == b), "exhausted": bool(s.exhausted[b]),
               "runs_out_at_next_refill": bool(runs_out(view, b)), "now": slots(s.current[b, :s.supply_size]),
               "future": slots(s.future[b])} for b in range(len(BOARDS))]
    players = []
    for p in range(n):
        player = {"seat": p, "label": seat_label(p, view.seat, names), "cash": int(s.cash[p]),
                  "ships": cards(view.ships(p)), "has_taken_this_round": not s.has_piece[p],
                  "harbour_master": p == s.harbour_master}
        if p == view.seat:
            player["hand"] = cards(hands[p])
        elif hands[p] is not None:
            player["known_cards"] = cards(hands[p])
            # he holds his starting contract and this seat has not seen it
            player["holds_unseen_starting_contract"] = bool(holds[p]) and not any(
                view.cards.board[c] == START for c in hands[p])
        players.append(player)
    out = {"seat": view.seat, "num_players": n, "round": int(s.round), "harbour_master": int(s.harbour_master),
           "to_act": None if over else int(s.current_player), "game_over": bool(over), "what_to_do": phase_text(view),
           "boards_exhausted": int(s.exhausted.sum()), "boards_exhausted_to_end": int(END_THRESHOLD[n]),
           "last_round": bool(last_round(view)), "boards": boards, "players": players,
           "pending_shipment": shipment_text(view, s.pending) if s.pending else None}
    if not over and s.current_player == view.seat:
        out["legal_moves"] = LegalMoves(view).texts
    if over:
        out["scores"] = [dict(row, seat=p) for p, row in enumerate(view.scores())]
    return out
