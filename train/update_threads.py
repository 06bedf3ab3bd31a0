"""How many threads each part of training gets: the PPO update's torch threads (``UpdateThreads``, the faster, as
measured, of the rollouts' count and a larger one) and numpy's BLAS (``single_threaded_openblas``).

While rollouts are collected the environment steps on the learner's core, and one torch thread is fastest
there. During the update nothing else of the run works, so a second thread can share the matrix products and
train faster on an idle machine. But an OpenMP parallel region waits for its slowest thread: when another
process holds the second core, two-thread updates run many times slower (docs/benchmarks.md, "Behind the training code's choices"). So the update's
threads are a measured choice, not a setting: each count is tried once, then the faster one is used, and
the other is tried again after 8, 16, 32, ... updates (the interval doubles while it keeps losing).
"""

from __future__ import annotations

import time

from threadpoolctl import ThreadpoolController

PROBE_EVERY = 8  # updates before the first re-trial of the slower thread count


class UpdateThreads:
    """Picks the torch threads of each PPO update from ``(rollout_threads, update_threads)`` by their measured
    update times; ``before_update()`` returns the count to use, ``after_update()`` records how long it took."""

    def __init__(self, rollout_threads: int, update_threads: int, clock=time.perf_counter):
        self.choices = sorted({rollout_threads, update_threads or rollout_threads})
        self.seconds: dict[int, float] = {}  # thread count -> its last update's seconds
        self.clock = clock
        self.updates = 0
        self.interval = PROBE_EVERY
        self.next_probe = PROBE_EVERY
        self.current: int | None = None
        self._started = 0.0

    def fastest(self) -> int | None:
        """The thread count with the shortest last measured update (None before any)."""
        return min(self.seconds, key=self.seconds.get) if self.seconds else None

    def before_update(self) -> int:
        """The thread count for the next update (and start timing it)."""
        untried = [c for c in self.choices if c not in self.seconds]
        if untried:
            self.current = untried[0]
        elif self.updates >= self.next_probe:
            self.current = max(self.choices, key=self.seconds.get)  # re-try the slower one
        else:
            self.current = self.fastest()
        self._started = self.clock()
        return self.current

    def after_update(self) -> None:
        """Record the update that ``before_update`` started."""
        if self.current is None:
            return
        was_fastest = self.fastest()
        probe = len(self.seconds) == len(self.choices) and self.current != was_fastest
        self.seconds[self.current] = self.clock() - self._started
        self.updates += 1
        if probe:  # a re-trial: wait longer before the next while the fastest stays the fastest
            self.interval = self.interval * 2 if self.fastest() == was_fastest else PROBE_EVERY
            self.next_probe = self.updates + self.interval
        self.current = None


def single_threaded_openblas():
    """A context in which numpy's OpenBLAS (if that is its BLAS) uses one thread.

    The snapshot opponents' small numpy products leave OpenBLAS's second thread spinning, which takes the core that
    a two-thread PPO update (``update_threads: 2``) needs; one BLAS thread costs the env nothing.
    """
    return ThreadpoolController().select(internal_api="openblas").limit(limits=1)
