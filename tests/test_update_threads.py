"""The PPO update's torch threads: the faster of two counts, as measured, re-tried with back-off."""

from packetrow_train.update_threads import PROBE_EVERY, UpdateThreads


class Clock:
    """A clock that advances by the update time of the thread count in use."""

    def __init__(self, seconds: dict):
        self.now, self.seconds, self.chooser = 0.0, seconds, None

    def __call__(self) -> float:
        return self.now

    def run(self, chooser: UpdateThreads) -> int:
        threads = chooser.before_update()
        self.now += self.seconds[threads]
        chooser.after_update()
        return threads


def test_each_count_is_tried_then_the_faster_is_used():
    clock = Clock({1: 1.0, 2: 0.8})
    chooser = UpdateThreads(1, 2, clock)
    used = [clock.run(chooser) for _ in range(PROBE_EVERY + 4)]
    assert used[:2] == [1, 2]
    assert used[2:PROBE_EVERY] == [2] * (PROBE_EVERY - 2)
    assert used[PROBE_EVERY] == 1  # the slower count is tried again
    assert used[PROBE_EVERY + 1:] == [2] * 3


def test_a_losing_count_is_retried_ever_less_often():
    """With the second core busy, two threads are ten times slower: after the first trials, re-trials come at the
    8th update and then 16, 32, ... updates after the previous one."""
    clock = Clock({1: 1.0, 2: 10.0})
    chooser = UpdateThreads(1, 2, clock)
    used = [clock.run(chooser) for _ in range(120)]
    retrials = [i for i, threads in enumerate(used) if threads == 2]
    assert PROBE_EVERY == 8
    assert retrials == [1, 8, 8 + 1 + 16, 25 + 1 + 32]


def test_a_retrial_that_wins_takes_over():
    clock = Clock({1: 1.0, 2: 10.0})
    chooser = UpdateThreads(1, 2, clock)
    for _ in range(PROBE_EVERY):
        clock.run(chooser)
    clock.seconds[2] = 0.5  # the other process has ended
    assert clock.run(chooser) == 2
    assert [clock.run(chooser) for _ in range(3)] == [2, 2, 2]


def test_one_count_needs_no_measurement():
    for rollout, update in [(1, 0), (2, 2)]:
        chooser = UpdateThreads(rollout, update, Clock({rollout: 1.0}))
        assert {chooser.before_update() for _ in range(3)} == {rollout}
