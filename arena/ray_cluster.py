"""Ray for packetrow: connect to a cluster (or start a local instance) and play tournament games as Ray tasks.

Ray is the optional extra ``pip install "packetrow[ray]"``; nothing else in packetrow imports it. A
tournament on Ray plays the same games as a local one: each game is seeded from the tournament seed and
its index alone, and the records are sorted by index, so the table is the same whatever ran them.

Every machine of a cluster needs packetrow installed (the same version as the driver): the entries'
agents travel to the workers pickled by Ray (a policy loaded from a file goes as its arrays, so the
file need not exist on the workers).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

INSTALL_HINT = 'Ray is not installed; install the extra: pip install "packetrow[ray]"'


class RayUnavailableError(ImportError):
    """Ray is not installed, or the cluster could not be reached."""


def import_ray():
    """The ``ray`` module, or a RayUnavailableError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(INSTALL_HINT) from None
    return ray


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[object]:
    """Ray connected for the block: to the cluster at ``address`` or, when None, a local instance started and stopped here.

    When Ray is already initialised (a caller's own session), it is used and left running.
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    options = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address is None:
        options["num_cpus"] = num_cpus
    else:
        _check_reachable(address)
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise RayUnavailableError(f"could not connect to a Ray cluster at {address!r}: {error}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a host:port nobody listens on (Ray itself retries for minutes)."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto" and other forms Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise RayUnavailableError(f"could not connect to a Ray cluster at {address!r}: {error}; start one with "
                                  "`ray start --head` or check the address (host:port of the head node)") from None


def play_chunks(runner, chunks: Sequence[list[int]], on_chunk=None) -> tuple[list[dict], set[str]]:
    """Play the games of ``chunks`` (lists of game indices) as Ray tasks with ``runner``, calling ``on_chunk``
    with each chunk's records as it finishes.

    Returns the records (in finishing order) and the ids of the nodes that played them.
    """
    import ray

    runner_ref = ray.put(runner)  # shipped once, not once per task
    # SPREAD: games go to every node of a cluster, not first to fill the driver's
    remote = ray.remote(_play_chunk).options(scheduling_strategy="SPREAD")
    pending = [remote.remote(runner_ref, chunk) for chunk in chunks]
    records: list[dict] = []
    nodes: set[str] = set()
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        node, finished = ray.get(done[0])
        records += finished
        nodes.add(node)
        if on_chunk is not None:
            on_chunk(finished)
    return records, nodes


def _play_chunk(runner, indices: list[int]) -> tuple[str, list[dict]]:
    import ray

    return ray.get_runtime_context().get_node_id(), runner.play_chunk(indices)

