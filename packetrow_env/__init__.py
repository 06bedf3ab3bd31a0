"""Packet Row: an exact, fast reinforcement-learning environment for the card-drafting game."""

from .engine import Game, IllegalActionError

__all__ = ["Game", "IllegalActionError"]
__version__ = "0.1.0"
