"""Agents that play Packet Row: the Agent protocol and baselines of rising strength."""

from .base import Agent
from .random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent"]
