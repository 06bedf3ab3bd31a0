"""What one seat may know of a game (R-INFO): agents read hidden information only through here."""

from __future__ import annotations


def known_hand(game, observer: int, seat: int) -> list[int]:
    """The cards of ``seat``'s hand that ``observer`` knows: all of his own; another's minus his held starting contract."""
    hand = game.hand(seat)
    if seat == observer:
        return hand
    start = int(game.state.starting_contract[seat])
    return [c for c in hand if c != start]  # every other hand card was taken face up (R-INFO-3)
