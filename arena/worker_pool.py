"""Worker processes that play chunks of games and notice when one of them dies.

``multiprocessing.Pool`` waits forever for a chunk whose worker was killed (the out-of-memory killer, a crash
in native code): the chunk never comes back and nothing says so. ``WorkerPool`` hands each worker one chunk at
a time over the worker's own pipe, so it always knows which games each worker holds, and waits on the
workers' pipes and their process sentinels together. The contract:

- Chunks come back through ``on_chunk`` as they finish, in finishing order, each exactly as ``play_chunk`` of
  the runner returns it in one process; the caller orders them (games are seeded by their index alone).
- A worker that ends without handing back its chunk stops the run at once: ``play`` raises ``WorkerDied``,
  naming the worker's pid, how it ended (the signal that killed it, or its exit status) and the games it held.
  The other workers are terminated, so the run loses the chunks in flight and nothing that came back.
  The chunk is not retried: its games are seeded, so a chunk that crashed its worker (an agent's bug, a
  model too big for memory) would crash it again, and a caller that records finished games resumes the run.
- An exception raised by a game in a worker (an agent's bug) is raised again by ``play`` with its notes, the
  worker's traceback added as one more.
- Workers ignore Ctrl-C (SIGINT): it interrupts the parent, whose ``with`` block terminates them. A worker
  never outlives its parent: on Linux the kernel kills it when the parent dies, however it dies (the
  parent-death signal, ``die_with_parent``), in the middle of a game too; elsewhere each worker closes every pipe
  end but its own, so a dead parent leaves its workers a closed pipe, and a worker ends at its next read or
  write, after the chunk it is playing at most. Workers are named ``pr-games`` (``ps``, ``top``; Linux).

Workers are forked where the platform allows, so a runner's factories (lambdas) and live agent objects need
not pickle.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import wait

_JOIN_SECONDS = 5.0  # how long a worker told to stop (its pipe closed) may take to end before it is terminated


class WorkerDied(RuntimeError):
    """A worker process ended while the pool was playing; ``pid``, ``exitcode`` and the ``games`` it held say which."""

    def __init__(self, pid: int, exitcode: int | None, games: Sequence[int]):
        self.pid, self.exitcode, self.games = pid, exitcode, list(games)
        held = f"while playing {describe_games(self.games)}" if self.games else "between chunks of games"
        super().__init__(f"a worker process (pid {pid}) died ({describe_exit(exitcode)}) {held}")


def describe_exit(exitcode: int | None) -> str:
    """How a process ended, from ``multiprocessing``'s exit code: "killed by SIGKILL", "exit status 3"."""
    if exitcode is None:
        return "its exit status unknown"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


def describe_games(indices: Sequence[int]) -> str:
    """Game indices as text, runs joined: "game 7", "games 40-49", "games 3-5, 8"."""
    ordered = sorted(indices)
    runs: list[list[int]] = []
    for index in ordered:
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    text = ", ".join(str(low) if low == high else f"{low}-{high}" for low, high in runs)
    return ("game " if len(ordered) == 1 else "games ") + text


def start_method_context():
    """The ``multiprocessing`` context workers start in: fork where the platform has it."""
    # fork passes factories and agent objects to workers without pickling them (lambdas, live models)
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that comes during the block back until the block ends, then deliver it (to the
    handler there was before): for blocks that fork. ``os.fork`` runs hooks written in Python in the parent
    (``logging``'s lock), and a KeyboardInterrupt raised inside one is printed as "Exception ignored" and lost, so
    a Ctrl-C at that instant would not stop the program. A forked child starts with the holding handler: it
    records a Ctrl-C and does nothing, until the child sets its own. Outside the main thread, which alone runs
    Python's signal handlers, the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: held.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            signal.raise_signal(signal.SIGINT)


# prctl's options (linux/prctl.h): the signal a process gets when its parent dies; the process's name
PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15


def _prctl(option: int, value) -> bool:
    """Linux's prctl(option, value); False where it cannot be asked (another system, no C library) or failed."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent: int) -> bool:
    """Have the kernel SIGKILL this process when its parent, the process ``parent``, ends (Linux); False where
    that cannot be asked (another system, no C library). For workers that hold nothing to clean up (what they
    produce goes to the parent, which has gone): SIGKILL, which no handler or compiled loop can delay. (The kernel
    sends it when the thread that forked ends: fork in the thread that also stops the children, as ``WorkerPool``
    and ``RolloutPPO.learn`` do.)"""
    if not _prctl(PR_SET_PDEATHSIG, signal.SIGKILL):
        return False
    # the parent may have died between the fork and the prctl, which then never fires
    if os.getppid() != parent:
        os._exit(1)
    return True


def name_process(name: str) -> None:
    """Name this process as ``ps``, ``top`` and /proc/PID/comm show it (Linux: its first 15 bytes), where a forked
    child would show its parent's name ("python"); nothing elsewhere."""
    _prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]))


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, process, connection):
        self.process, self.connection = process, connection


class WorkerPool:
    """``size`` worker processes, each playing whole chunks of game indices with ``runner.play_chunk``.

    Use it as a context manager: the workers start on entry (start them before any thread, such as a progress
    bar's, since forking a threaded process is fragile) and are stopped on exit, terminated if the block
    raised.
    """

    def __init__(self, runner, size: int):
        if size < 1:
            raise ValueError(f"a worker pool needs at least one worker, got {size}")
        self.runner, self.size = runner, size
        self.workers: list[_Worker] = []

    def __enter__(self) -> WorkerPool:
        context = start_method_context()
        pipes = [context.Pipe() for _ in range(self.size)]
        try:
            with ctrl_c_held():  # a Ctrl-C while forking raises here, after the loop: the workers are stopped
                for own, (parent_end, child_end) in enumerate(pipes):
                    others = [end for pair in pipes for end in pair if end is not child_end]
                    process = context.Process(target=_serve, args=(self.runner, child_end, others, os.getpid()),
                                              daemon=True,
                                              name=f"packetrow-games-{own}")
                    process.start()
                    self.workers.append(_Worker(process, parent_end))
        except BaseException as error:  # a fork refused (no memory), Ctrl-C: stop the workers already started
            self.__exit__(type(error), error, error.__traceback__)
            for parent_end, _ in pipes:
                parent_end.close()  # those of workers never started (closing twice does nothing)
            raise
        finally:
            for _, child_end in pipes:
                child_end.close()  # the parent keeps only its ends: a worker's end closes when the worker ends
        return self

    def __exit__(self, kind, error, trace) -> None:
        for worker in self.workers:
            worker.connection.close()  # a worker reading its pipe sees it closed and ends
        for worker in self.workers:
            if error is not None:
                worker.process.terminate()
            worker.process.join(_JOIN_SECONDS)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
        self.workers = []

    def play(self, chunks: Sequence[list[int]], on_chunk: Callable[[list[dict]], None]) -> None:
        """Play every chunk, calling ``on_chunk`` with each one's records as it comes back; see the module
        docstring for what a dead worker or a failing game does."""
        if not self.workers:
            raise RuntimeError("the worker pool is not started: use it in a with block")
        waiting = deque(chunks)
        held: dict[_Worker, list[int]] = {}
        idle = list(self.workers)
        while waiting or held:
            while waiting and idle:
                worker = idle.pop()
                chunk = waiting.popleft()
                held[worker] = chunk
                try:
                    worker.connection.send(chunk)
                except OSError:  # its pipe is closed: the worker has died; the sentinel below says how
                    pass
            ready = set(wait([w.connection for w in held] + [w.process.sentinel for w in self.workers]))
            for worker in [w for w in held if w.connection in ready]:  # results first: one may precede a death
                try:
                    reply = worker.connection.recv()
                except (EOFError, OSError):  # it ended mid-send or before sending: a death
                    worker.process.join(_JOIN_SECONDS)
                    raise WorkerDied(worker.process.pid, worker.process.exitcode, held[worker]) from None
                _raise_failure(reply, worker.process.pid)
                del held[worker]
                idle.append(worker)
                on_chunk(reply[1])
            for worker in self.workers:
                if worker.process.sentinel in ready:
                    worker.process.join(_JOIN_SECONDS)
                    raise WorkerDied(worker.process.pid, worker.process.exitcode, held.get(worker, []))


def _raise_failure(reply: tuple, pid: int) -> None:
    if reply[0] == "error":
        _, error, trace = reply
        error.add_note(f"raised in worker process {pid}:\n{trace}")
        raise error


def _serve(runner, connection, others: list, parent: int) -> None:
    """A worker's loop: read a chunk of game indices, play it, send back ("games", records) or ("error",
    exception, traceback text); end when the parent's end of the pipe is closed, or at once when the parent dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it terminates the workers
    for end in others:
        end.close()  # inherited by the fork; held open, they would keep other pipes from closing when the parent ends
    die_with_parent(parent)
    name_process("pr-games")
    while True:
        try:
            chunk = connection.recv()
        except (EOFError, OSError):
            return
        try:
            reply = ("games", runner.play_chunk(chunk))
        except Exception as error:
            reply = ("error", _picklable(error), traceback.format_exc())
        try:
            connection.send(reply)
        except OSError:  # the parent has gone
            return


def _picklable(error: Exception) -> Exception:
    """``error`` if it survives pickling back to the parent, else a RuntimeError that says what it was."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        substitute = RuntimeError(f"{type(error).__name__}: {error}")
        for note in getattr(error, "__notes__", []):
            substitute.add_note(note)
        return substitute
