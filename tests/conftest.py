"""The suite's session and its shared fixtures.

Under pytest-xdist, the batched engine's kernels are compiled before the workers start. A fresh checkout (CI's)
has no numba cache, so every kernel compiles at its first call. The batched engine's and the compiled opponents'
kernels, which most of the suite's modules reach, take about two minutes on one core, and each xdist worker would
compile them for itself, at the same time. With ``-n``, the controller first compiles the main job's kernels on
every core, as ``packetrow compile`` does; the workers then load them from the cache. Without the training extra,
or without ``-n``, nothing happens here.
"""

import os
import signal
from pathlib import Path

import pytest

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def pytest_sessionstart(session):
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    try:
        from packetrow_train.compile_command import compile_kernels
    except ImportError:  # the training extra is not installed: its tests are skipped
        return
    compile_kernels(CONFIGS / "quick.yaml")


# --------------------------------------------------------------------------- Ctrl-C while forking
_ARMED: list[bool] = []  # the hook below interrupts while this holds an entry (hooks cannot be unregistered)
_HOOKED: list[bool] = []


def _interrupt_if_armed() -> None:
    if _ARMED:
        _ARMED.clear()
        os.kill(os.getpid(), signal.SIGINT)


@pytest.fixture
def ctrl_c_at_next_fork():
    """Ctrl-C (SIGINT to this process) at the next fork, in the parent's after-fork hooks, where Python runs its
    own (logging's lock): the instant at which a KeyboardInterrupt raised in a hook is printed as "Exception
    ignored" and lost. Ctrl-C raises KeyboardInterrupt meanwhile (xdist's workers may ignore it)."""
    if not _HOOKED:
        os.register_at_fork(after_in_parent=_interrupt_if_armed)
        _HOOKED.append(True)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    _ARMED.append(True)
    try:
        yield
    finally:
        _ARMED.clear()
        signal.signal(signal.SIGINT, previous)
