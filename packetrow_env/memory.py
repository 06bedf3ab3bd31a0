"""Sizes checked against the machine's memory before anything is allocated.

A request for more than the machine holds (a batch of ten million games, a rollout of a billion steps, a
trillion tournament games) would otherwise grow until the allocator or the kernel's out-of-memory killer stops
it, minutes later and with a traceback. A caller estimates what a request needs in bytes and calls
``check_fits`` first: the estimate is compared with the memory available now, and a request that cannot fit is
a ``ValueError`` giving both figures. Estimates are about right, not exact: they catch sizes that cannot work,
not sizes that are merely tight.
"""

from __future__ import annotations

import os

MEMINFO = "/proc/meminfo"
CGROUP = "/sys/fs/cgroup"  # a container's own limit (cgroup v2), lower than the machine's


class TooLargeError(ValueError):
    """A request needs more memory than is available; the message gives the estimate and what is available."""


def available_memory() -> int | None:
    """Bytes a new allocation may use now: Linux's ``MemAvailable`` (less within a container's cgroup limit), else
    the physical memory (``os.sysconf``); None where neither is known (then nothing is refused)."""
    found = [value for value in (_meminfo_available(), _cgroup_room()) if value is not None]
    if found:
        return min(found)
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # no sysconf (Windows), or no such name
        return None


def _meminfo_available() -> int | None:
    try:
        with open(MEMINFO, encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # the file counts kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> int | None:
    try:
        with open(f"{CGROUP}/memory.max", encoding="ascii") as limit, \
                open(f"{CGROUP}/memory.current", encoding="ascii") as used:
            return max(0, int(limit.read()) - int(used.read()))
    except (OSError, ValueError):  # no cgroup v2 here, or "max": no limit
        return None


def format_bytes(count: int) -> str:
    """A byte count for people: '512 B', '3.4 KiB', '14.5 GiB', '28.4 TiB' (one decimal, cut, not rounded; whole
    integers, so that a count past float's range still prints)."""
    for power, unit in enumerate(("B", "KiB", "MiB", "GiB", "TiB")):
        if count < 1024 ** (power + 1) or unit == "TiB":
            whole, part = divmod(int(count), 1024 ** power)
            return f"{whole} B" if power == 0 else f"{whole:,}.{part * 10 // 1024 ** power} {unit}"
    raise AssertionError  # the loop returns at TiB


def most_that_fit(bytes_each: int) -> int | None:
    """How many items of ``bytes_each`` bytes fit in the memory available now (None: unknown, no limit)."""
    available = available_memory()
    return None if available is None else available // max(1, bytes_each)


def check_fits(what: str, nbytes: int, error: type[ValueError] = TooLargeError, hint: str = "") -> None:
    """Raise ``error`` unless ``nbytes`` fit in the memory available now; the message says about how much ``what``
    would take, how much is available, then ``hint`` (what to lower, e.g. '; give fewer games')."""
    available = available_memory()
    if available is not None and nbytes > available:
        raise error(f"{what} would take about {format_bytes(nbytes)} of memory, more than the "
                    f"{format_bytes(available)} available on this machine{hint}")
