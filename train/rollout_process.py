"""The pipeline's rollouts collected in forked processes: ``RolloutPPO``'s other cores without the GIL.

With ``pipeline: true`` each rollout after the first is collected while the PPO update before it trains
(``RolloutPPO.train``). On a thread, both sides hold the GIL for their Python between compiled calls and each
runs slower than alone, while two processes side by side keep their speed (docs/benchmarks.md, "Behind the training code's choices").
``RolloutWorker`` forks the trainer once (Linux: ``fork`` copies the env, the behaviour policy and the rollout's
torch generator as they are) and collects there, leaving the critic out: the trainer adds the values and the
advantages while the worker collects the next rollout (``RolloutPPO._finish``, as a thread's rollout gets them).
The rollout comes back through shared memory, two buffers in turn, so that one is written while
the update reads the other. The run is the same as on a thread, weight for weight (tests/test_rollout.py):

- the behaviour weights go over a pipe with each request, and what the trainer's callbacks told its env's pool
  since the last request (``JOURNALLED``: snapshots, exploiters, PFSP's results) is told the worker's env first;
- the steps' ``(infos, dones)`` come back with the rollout, for the callbacks on the trainer's side.

With ``workers`` > 1 (more cores), each of the processes steps its own part of the games (``worker_parts``: its own
env, seeded from the run's and its index, and its own torch generator) and writes its columns of the same shared
buffers; the trainer joins their steps' infos, last observations and episode starts in column order. Each
process's rollout is what the same part collects in a single process (tests/test_rollout_workers.py).

The trainer's own env is not stepped meanwhile, so the worker's env is the run's: when the worker stops (at the
end of ``learn``), the trainer's env is behind and its games are dealt afresh at the next ``learn``.

The worker never outlives its trainer, however the trainer ends. Its loop ends when the pipe reaches its end, and
it closes the trainer's end of the pipe that the fork copied into it, so that the end comes when the trainer's
process goes (a copy kept open would hold the pipe open forever); and it asks the kernel to kill it when the
trainer dies (Linux's parent-death signal, ``prctl(PR_SET_PDEATHSIG)``), which also reaches it in the middle of a
rollout and when another process forked from the trainer holds a copy of the pipe.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import signal
import sys
import traceback

import numpy as np
import torch

from packetrow_arena.worker_pool import ctrl_c_held, die_with_parent, name_process

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
    """Forked copies of a RolloutPPO that collect rollouts into shared memory on request: one process stepping
    the trainer's env (``count`` 1), or ``count`` processes each stepping its own part of the games
    (``worker_parts``) into its columns of the same shared buffers."""

    def __init__(self, model, buffer, count: int = 1):
        # two sets of shared arrays shaped as a rollout's (reset: an update leaves the arrays flattened), made
        # before the forks so that every side maps them
        buffer.reset()
        self._shared = [{name: _shared_like(getattr(buffer, name)) for name in BUFFER_ARRAYS} for _ in range(2)]
        self._turn = 0
        self._busy = False  # a request not yet received
        self._journal: list[tuple] = []
        self._env = model.env
        self._processes, self._conns = [], []
        context = multiprocessing.get_context("fork")
        try:
            with ctrl_c_held():  # a Ctrl-C while forking raises here, after the loop
                for index in range(count):
                    parent, child = multiprocessing.Pipe()
                    self._conns.append(parent)
                    part = None if count == 1 else (index, part_columns(buffer.n_envs, index, count))
                    process = context.Process(target=_serve, args=(model, child, list(self._conns), os.getpid(),
                                                                   self._shared, part),
                                              name="packetrow-rollout", daemon=True)
                    process.start()
                    child.close()
                    self._processes.append(process)
        except BaseException:  # a fork refused, Ctrl-C: stop those started
            self.close()
            raise
        # what the callbacks tell the env's pool reaches the workers' envs before their next rollout
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
        for conn in self._conns:
            conn.send((self._journal, weights))
        self._journal = []
        self._busy = True

    def receive(self, buffer) -> tuple[list, np.ndarray, np.ndarray]:
        """Wait for the rollout and put it into ``buffer`` (as views of shared memory); its steps' (infos,
        dones), the last observations and episode starts, each the workers' parts joined in column order."""
        replies = []
        for process, conn in zip(self._processes, self._conns):
            try:
                reply = conn.recv()
            except EOFError:
                code = process.exitcode
                self.close()
                raise RuntimeError(f"the rollout process ended unexpectedly (exit code {code})") from None
            if reply[0] == "error":  # the other workers may still collect: close() does not wait for them
                self.close()
                raise reply[1]
            replies.append(reply[1:])
        self._busy = False
        shared = self._shared[self._turn]
        self._turn = 1 - self._turn
        for name in BUFFER_ARRAYS:
            setattr(buffer, name, shared[name])
        buffer.pos, buffer.full, buffer.generator_ready = buffer.buffer_size, True, False
        if len(replies) == 1:
            return replies[0]
        steps = [([info for infos, _ in step for info in infos], np.concatenate([dones for _, dones in step]))
                 for step in zip(*(reply[0] for reply in replies))]
        return (steps, *(np.concatenate([reply[k] for reply in replies]) for k in (1, 2)))

    def close(self) -> None:
        """Stop the workers; the trainer's env takes its snapshots directly again."""
        if not self._processes:
            return
        for name in JOURNALLED:
            self._env.__dict__.pop(name, None)
        if not self._busy:  # idle: they end at the word; a rollout under way (Ctrl-C, an error) is not waited for
            for conn in self._conns:
                try:
                    conn.send(None)
                except (BrokenPipeError, OSError):
                    pass
            for process in self._processes:
                process.join(timeout=5)
        for process in self._processes:
            if process.is_alive():
                process.terminate()
                process.join()
        for conn in self._conns:
            conn.close()
        self._processes, self._conns = [], []


def part_columns(num_envs: int, index: int, count: int) -> slice:
    """The games (the rollout buffer's columns) of worker ``index`` of ``count``: ``num_envs // count`` each, the
    last worker the remainder too."""
    share = num_envs // count
    return slice(index * share, num_envs if index == count - 1 else (index + 1) * share)


def worker_parts(model, index: int, columns: slice):
    """(env, rollout buffer, torch generator) of worker ``index`` whose games are the buffer's ``columns``: its
    own SelfPlayVecEnv (``SelfPlayVecEnv.part``), an empty rollout buffer of its games and a generator seeded
    from the rollout generator's seed and ``index``; the same in the worker and in a single process that
    collects the parts one after another (tests/test_rollout_workers.py)."""
    _, buffer, generator = model._pipeline_parts()
    size = columns.stop - columns.start
    env = model.env.part(index, size)
    part_buffer = type(buffer)(buffer.buffer_size, buffer.observation_space, buffer.action_space, device="cpu",
                               gae_lambda=buffer.gae_lambda, gamma=buffer.gamma, n_envs=size)
    seed = np.random.SeedSequence([generator.initial_seed(), index]).generate_state(1, np.uint64)[0]
    return env, part_buffer, torch.Generator().manual_seed(int(seed) >> 1)


def _shared_like(array: np.ndarray) -> np.ndarray:
    memory = mmap.mmap(-1, max(array.nbytes, 1))  # anonymous and shared: a forked child writes the same pages
    return np.frombuffer(memory, dtype=array.dtype, count=array.size).reshape(array.shape)


def _serve(model, conn, trainer_ends, trainer: int, shared, part) -> None:
    """The worker's loop: apply the journal, load the weights, collect into the next shared arrays
    (``part``: (index, columns) of a worker with its own games, the arrays' columns; None: the trainer's env,
    all of them), hand the rollout over; it ends with the trainer (the module docstring)."""
    for end in trainer_ends:  # the fork's copies of the trainer's ends: with one open, its pipe never ends
        end.close()
    die_with_parent(trainer)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the trainer's to handle; it stops the worker
    name_process("pr-rollout")
    torch.set_num_threads(1)
    behaviour, buffer, generator = model._pipeline_parts()
    columns = slice(None)
    if part is not None:
        index, columns = part
        model.env, buffer, generator = worker_parts(model, index, columns)
        model._last_obs = model.env.reset()
        model._last_episode_starts = np.ones(model.env.num_envs, dtype=bool)
    turn = 0
    reset = buffer.reset

    def reset_into_shared() -> None:  # the rollout is written where the trainer reads it: no copy
        reset()
        for name in BUFFER_ARRAYS:
            setattr(buffer, name, shared[turn][name][:, columns])

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
            for name, args in journal:  # a worker's own env shares the pool of the env it was made from
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
