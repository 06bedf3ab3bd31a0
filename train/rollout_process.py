"""The pipeline's rollouts collected in a forked process: ``RolloutPPO``'s second core without the GIL.

With ``pipeline: true`` each rollout after the first is collected while the PPO update before it trains
(``RolloutPPO.train``). On a thread, both sides hold the GIL for their Python between compiled calls and each
runs slower than alone, while two processes side by side keep their speed (docs/benchmarks.md, "Behind the training code's choices").
``RolloutWorker`` forks the trainer once (Linux: ``fork`` copies the env, the behaviour policy and the rollout's
torch generator as they are) and collects there, leaving the critic out: the trainer adds the values and the
advantages while the worker collects the next rollout (``RolloutPPO._finish``, in the rollout's batches, so the
same sums). The rollout comes back through shared memory, two buffers in turn, so that one is written while
the update reads the other. The run is the same as on a thread, weight for weight (tests/test_rollout.py):

- the behaviour weights go over a pipe with each request, and what the trainer's callbacks told its env's pool
  since the last request (``JOURNALLED``: snapshots, exploiters, PFSP's results) is told the worker's env first;
- the steps' ``(infos, dones)`` come back with the rollout, for the callbacks on the trainer's side.

The trainer's own env is not stepped meanwhile, so the worker's env is the run's: when the worker stops (at the
end of ``learn``), the trainer's env is behind and its games are dealt afresh at the next ``learn``.

The worker never outlives its trainer, however the trainer ends. Its loop ends when the pipe reaches its end, and
it closes the trainer's end of the pipe that the fork copied into it, so that the end comes when the trainer's
process goes (a copy kept open would hold the pipe open forever); and it asks the kernel to kill it when the
trainer dies (Linux's parent-death signal, ``prctl(PR_SET_PDEATHSIG)``), which also reaches it in the middle of a
rollout and when another process forked from the trainer holds a copy of the pipe.
"""

from __future__ import annotations

import ctypes
import mmap
import multiprocessing
import os
import signal
import sys
import traceback

import numpy as np
import torch

# the env's methods through which the trainer's callbacks change its opponent pool (snapshots, a league's
# exploiters, PFSP's results): journalled, and replayed in order in the worker's env
JOURNALLED = ("add_snapshot", "add_exploiter", "record_results")
# the arrays of a MaskableRolloutBuffer that a rollout fills
BUFFER_ARRAYS = ("observations", "actions", "rewards", "returns", "episode_starts", "values", "log_probs",
                 "advantages", "action_masks")


def available() -> bool:
    """Whether rollouts can be collected in a forked process here (Linux, outside a daemonic worker process,
    which may not start processes; elsewhere the pipeline uses a thread: macOS's system libraries are not safe
    to fork in a process that has run them, and Windows has no fork)."""
    return (sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
            and not multiprocessing.current_process().daemon)


class RolloutWorker:
    """A forked copy of a RolloutPPO that collects rollouts into shared memory on request."""

    def __init__(self, model, buffer):
        # two sets of shared arrays shaped as a rollout's (reset: an update leaves the arrays flattened), made
        # before the fork so that both sides map them
        buffer.reset()
        self._shared = [{name: _shared_like(getattr(buffer, name)) for name in BUFFER_ARRAYS} for _ in range(2)]
        self._turn = 0
        self._busy = False  # a request not yet received
        self._journal: list[tuple] = []
        self._env = model.env
        parent, child = multiprocessing.Pipe()
        self._process = multiprocessing.get_context("fork").Process(
            target=_serve, args=(model, child, parent, os.getpid(), self._shared), name="packetrow-rollout",
            daemon=True)
        self._process.start()
        child.close()
        self._conn = parent
        # what the callbacks tell the env's pool reaches the worker's env before its next rollout
        for name in JOURNALLED:
            setattr(self._env, name, self._journalled(name, getattr(self._env, name)))

    def _journalled(self, name: str, method):
        def call(*args) -> None:
            method(*args)
            self._journal.append((name, args))

        return call

    def request(self, weights: dict) -> None:
        """Start collecting the next rollout with the behaviour ``weights`` (a policy's state_dict as numpy
        arrays: plain pickles, where tensors would go through torch's shared-memory files)."""
        self._conn.send((self._journal, weights))
        self._journal = []
        self._busy = True

    def receive(self, buffer) -> tuple[list, np.ndarray, np.ndarray]:
        """Wait for the rollout and put it into ``buffer`` (as views of shared memory); its steps' (infos,
        dones), the last observations and episode starts."""
        try:
            reply = self._conn.recv()
        except EOFError:
            code = self._process.exitcode
            self.close()
            raise RuntimeError(f"the rollout process ended unexpectedly (exit code {code})") from None
        self._busy = False
        if reply[0] == "error":
            self.close()
            raise reply[1]
        shared = self._shared[self._turn]
        self._turn = 1 - self._turn
        for name in BUFFER_ARRAYS:
            setattr(buffer, name, shared[name])
        buffer.pos, buffer.full, buffer.generator_ready = buffer.buffer_size, True, False
        return reply[1:]

    def close(self) -> None:
        """Stop the worker; the trainer's env takes its snapshots directly again."""
        if self._process is None:
            return
        for name in JOURNALLED:
            self._env.__dict__.pop(name, None)
        if not self._busy:  # idle: it ends at the word; a rollout under way (Ctrl-C, an error) is not waited for
            try:
                self._conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join()
        self._conn.close()
        self._process = None


def _shared_like(array: np.ndarray) -> np.ndarray:
    memory = mmap.mmap(-1, max(array.nbytes, 1))  # anonymous and shared: a forked child writes the same pages
    return np.frombuffer(memory, dtype=array.dtype, count=array.size).reshape(array.shape)


# prctl's option: the signal a process gets when its parent dies (linux/prctl.h)
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> bool:
    """Have the kernel SIGKILL this process when its parent, the process ``parent``, ends (Linux); False where
    that cannot be asked (another system, no C library). SIGKILL: the worker holds nothing to clean up (its shared
    memory is anonymous), and no handler or compiled loop can delay it. (The kernel sends it when the thread that
    forked ends: ``RolloutPPO.learn`` starts and stops the worker in one thread, so that is the trainer's end.)"""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    # the parent may have died between the fork and the prctl, which then never fires
    if os.getppid() != parent:
        os._exit(1)
    return True


def _serve(model, conn, trainer_end, trainer: int, shared) -> None:
    """The worker's loop: apply the journal, load the weights, collect into the next shared arrays,
    hand the rollout over; it ends with the trainer (the module docstring)."""
    trainer_end.close()  # the fork's copy of the trainer's end: with it open, the pipe never ends here
    die_with_parent(trainer)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the trainer's to handle; it stops the worker
    torch.set_num_threads(1)
    behaviour, buffer, generator = model._pipeline_parts()
    turn = 0
    reset = buffer.reset

    def reset_into_shared() -> None:  # the rollout is written where the trainer reads it: no copy
        reset()
        for name in BUFFER_ARRAYS:
            setattr(buffer, name, shared[turn][name])

    buffer.reset = reset_into_shared
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        journal, weights = request
        try:
            for name, args in journal:
                getattr(model.env, name)(*args)
            behaviour.load_state_dict({name: torch.from_numpy(array) for name, array in weights.items()})
            steps = []
            model._collect(behaviour, model.env, buffer, model.n_steps,
                           lambda infos, dones: steps.append((infos, dones)) or True, generator, values=False)
            turn = 1 - turn
            reply = ("rollout", steps, model._last_obs, model._last_episode_starts)
        except BaseException as error:  # the trainer raises it
            reply = ("error", error)
        if not _hand_over(conn, reply) or reply[0] == "error":
            return


def _hand_over(conn, reply) -> bool:
    """Send ``reply`` to the trainer; False if the trainer is gone."""
    try:
        conn.send(reply)
    except ConnectionError:  # a broken pipe: nobody to hand the rollout to
        return False
    except Exception:  # an error that does not pickle (nothing was sent yet) goes as its text
        text = "".join(traceback.format_exception(type(reply[1]), reply[1], reply[1].__traceback__))
        return _hand_over(conn, ("error", RuntimeError("in the rollout process:\n" + text)))
    return True
