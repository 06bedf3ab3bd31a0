"""A test agent that kills the worker process playing a chosen game: a worker lost to the out-of-memory killer.

``DyingAgent`` plays the lowest legal action. Its ``reset(seed)`` ends its own process when ``seed`` is one of
``DYING_SEEDS`` (the agent seeds of the chosen games, ``game_seeds``), before the game's first move: by SIGKILL,
or with ``os._exit(EXIT_STATUS)`` when ``HOW`` is "exit". Tests set both with ``monkeypatch`` before the run, so
that the forked workers see them, and clear them to resume. It never ends the test process itself: there it
raises instead. ``fails_if_hung`` turns a run that hangs into a failed test.
"""

import contextlib
import os
import signal

import numpy as np

DYING_SEEDS: frozenset[int] = frozenset()
HOW = "kill"
EXIT_STATUS = 3
_TEST_PROCESS = os.getpid()  # the process that imported this module; workers are forked from it


class DyingAgent:
    """The lowest legal action; its process dies when it is reset with one of ``DYING_SEEDS``."""

    name = "dying"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def reset(self, seed: int) -> None:
        if seed in DYING_SEEDS:
            if os.getpid() == _TEST_PROCESS:
                raise RuntimeError("DyingAgent was asked to die in the test process; give the run workers")
            if HOW == "exit":
                os._exit(EXIT_STATUS)
            os.kill(os.getpid(), signal.SIGKILL)
        self.seed = seed

    def act(self, view) -> int:
        return int(np.flatnonzero(view.action_mask)[0])


@contextlib.contextmanager
def fails_if_hung(seconds: int = 60):
    """Raise TimeoutError in the block after ``seconds`` (SIGALRM; forked workers do not inherit the alarm)."""
    def hung(signum, frame):
        raise TimeoutError(f"the run hung for {seconds} s: a dead worker was not noticed")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
