"""Agents that play Packet Row: the Agent protocol and baselines of rising strength."""

from .base import Agent
from .heuristic import HeuristicAgent
from .ismcts import ISMCTSAgent
from .policy import PolicyAgent
from .random_agent import RandomAgent
from .registry import make_agent

__all__ = ["Agent", "HeuristicAgent", "ISMCTSAgent", "PolicyAgent", "RandomAgent", "make_agent"]
