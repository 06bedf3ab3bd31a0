"""What the compiled opponents of training (``opponents_batch.OpponentKernel``) can play: an agent's compiled form.

An agent's ``compiled_form(observation_mode, observation_encoding, observation_size)`` (the agent protocol,
``packetrow_env.agent_protocol``) returns a ``CompiledOpponent``, or None where the kernel cannot play it. The kernel
knows three kinds, each the compiled twin of a shipped agent's rules: a uniformly random legal action (``RANDOM``),
the heuristic's rules with its take threshold (``HEURISTIC``, ``heuristic_batch``), and a policy export's masked
argmax or sample on the compact observation (``POLICY``, ``policy_batch``). Kept apart from the kernel so that
agents describe themselves without loading numba.
"""

from __future__ import annotations

from typing import NamedTuple

# How an entry (one agent of the table) moves: ELSEWHERE is left to the caller (no compiled form).
ELSEWHERE, RANDOM, HEURISTIC, POLICY = range(4)


class CompiledOpponent(NamedTuple):
    """One agent as the kernel plays it: its kind and that kind's parameters."""

    kind: int  # RANDOM, HEURISTIC or POLICY
    threshold: float = 0.0  # HEURISTIC: the take threshold in dollars (HeuristicAgent's)
    policy: object = None  # POLICY: the NumpyPolicy, reading the compact observation of the kernel's mode
    deterministic: bool = True  # POLICY: its masked argmax (True) or a sample from it
