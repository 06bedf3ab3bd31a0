"""numba kernels compiled on every core before a run needs them, not one after another at their first calls.

The batched engine and the compiled opponents are numba kernels cached on disk (``cache=True``). A fresh install,
or a change to their source, compiles them at their first calls, one after another on the one core that makes
them, while the other cores idle: for the main job about two minutes, half of its five (``rules.step`` alone about
50 s; docs/benchmarks.md, "Compiling the kernels ahead"). ``compile_ahead`` takes the kernels with examples of
the arguments their calls will pass (``(kernel, args)``, as ``SelfPlayVecEnv.compile_jobs`` lists them: a kernel
is compiled for its arguments' numba types) and compiles them in forked processes, a share each, which write
numba's disk cache; this process then loads what they compiled. Where the cache holds them already, every process
only loads (under a second). Where processes cannot be forked (see ``rollout_process.available``) or one core is
usable, this process compiles them in turn, as their first calls would have.

Each process compiles what its kernels call too, so two shares may compile a shared callee twice: the wall time is
the slowest share's (in the job list's order, the first kernel of each share is the heaviest: list them
heaviest first). A forked compiler dies with its parent (``packetrow_arena.worker_pool.die_with_parent``) and leaves Ctrl-C to
it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time

import numba

from packetrow_arena.worker_pool import ctrl_c_held, die_with_parent, name_process

from . import rollout_process
from .machine import usable_cores

# a compile that takes longer than this says so on stderr (a warm cache loads in a fraction of a second)
NOTICE_AFTER_SECONDS = 3.0


def compile_ahead(jobs, processes: int | None = None) -> float:
    """Compile (or load from numba's disk cache) each ``(kernel, example arguments)`` of ``jobs`` for its
    arguments' types, in ``processes`` processes (default: the usable cores; this one and forked ones), the i-th
    job in process ``i % processes``; the seconds it took. Afterwards every kernel is compiled in this process, so
    its first call with arguments of those types compiles nothing."""
    signatures = [(kernel, tuple(numba.typeof(a) for a in args)) for kernel, args in jobs]
    if not signatures:
        return 0.0
    if processes is None:
        processes = usable_cores()
    if not rollout_process.available():
        processes = 1
    processes = max(1, min(int(processes), len(signatures)))
    started = time.perf_counter()
    shares = [signatures[k::processes] for k in range(processes)]
    context = multiprocessing.get_context("fork")
    children = [context.Process(target=_compile_share, args=(share, os.getpid()), name="packetrow-compile",
                                daemon=True) for share in shares[1:]]
    notice = threading.Timer(NOTICE_AFTER_SECONDS, print, args=(
        f"(compiling the engine's numba kernels on {processes} core{'s' if processes > 1 else ''}: once after an "
        "install or an update, then cached)",), kwargs={"file": sys.stderr, "flush": True})
    notice.daemon = True
    try:
        with ctrl_c_held():  # a Ctrl-C while forking raises here, after the loop
            for child in children:
                child.start()
        notice.start()  # after the forks: a forked child holds no copy of its thread
        _compile(shares[0])
        for child in children:
            child.join()
    finally:
        notice.cancel()
        for child in children:
            if child.is_alive():  # interrupted (Ctrl-C) or an error here: nothing waits for their work
                child.terminate()
                child.join()
    _compile(signatures)  # the forked shares from the disk cache (compiled here if a share failed)
    return time.perf_counter() - started


def _compile(signatures) -> None:
    for kernel, types in signatures:
        kernel.compile(types)


def _compile_share(signatures, parent: int) -> None:
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it ends this process
    name_process("pr-compile")
    _compile(signatures)
