"""The Agent protocol shared by every player: baselines, search and learned policies."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from packetrow_env.seat_view import SeatView


@runtime_checkable
class Agent(Protocol):
    """Chooses a legal action for the seat to act, from that seat's view alone.

    ``act(view)`` receives a ``packetrow_env.seat_view.SeatView``: the seat's legal actions
    (``view.action_mask``), its observation (``view.observation``, encoded on first use), the public
    state, its own hand and what it knows of the others (R-INFO), and determinisations for search
    (``view.sample_determinization(rng)``). The Game itself is not part of it, so an agent cannot read a
    hidden card. ``reset(seed)`` reseeds an agent for a new game.
    """

    name: str

    def act(self, view: SeatView) -> int:
        """A legal action id."""
        ...

    def reset(self, seed: int) -> None:
        """Reseed for a new game."""
        ...
