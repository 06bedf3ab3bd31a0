"""Packet Row: an exact, fast reinforcement-learning environment for the card-drafting game."""

from .engine import Game, IllegalActionError
from .env import env, raw_env

__all__ = ["Game", "IllegalActionError", "env", "raw_env"]
__version__ = "0.1.0"
