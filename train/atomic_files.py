"""Files a training run writes, whole or not at all: a temporary file beside the target, flushed, fsynced, renamed.

Every file under a run's directory (checkpoints, exports, snapshots, eval.csv, config.yaml, versions.yaml) is
written through ``atomic_write``: the bytes go to a new temporary file in the target's directory, are flushed and
fsynced, and the file is renamed over the target (``os.replace``, atomic on POSIX and Windows within one file
system). A kill, a crash or a full disk therefore leaves the old file or the new one under the final name, never a
torn one; what it can leave is a temporary file, named ``.NAME.RANDOM.partial``, which ``leftovers`` finds and
nothing else reads (the run's readers glob ``step_*`` names and read fixed names).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

LEFTOVER_SUFFIX = ".partial"  # the suffix of a temporary file (and nothing else a run writes)


@contextlib.contextmanager
def atomic_write(path) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content into; on a clean exit it replaces ``path``, durably.

    On an error (a full disk, an exception or Ctrl-C inside the block) the temporary file is removed and ``path``
    is untouched; a kill leaves the temporary file (``leftovers``), never a torn ``path``. The directory is
    created if missing.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=LEFTOVER_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())  # the bytes on disk before the rename makes them the file
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_directory(path.parent)


def write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (``atomic_write``); returns ``path``."""
    with atomic_write(path) as file:
        file.write(data)
    return Path(path)


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (``atomic_write``); returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def leftovers(directory) -> list[Path]:
    """The temporary files that interrupted writes left under ``directory`` (recursively), sorted; ignored by
    every reader of a run, safe to delete."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.rglob(f".*{LEFTOVER_SUFFIX}") if p.is_file())


def _sync_directory(directory: Path) -> None:
    """fsync a directory so that a rename in it survives a power cut (POSIX; elsewhere a no-op)."""
    try:
        handle = os.open(directory, os.O_RDONLY)
    except OSError:  # Windows cannot open a directory; its rename is durable on its own
        return
    try:
        os.fsync(handle)
    except OSError:  # some file systems refuse fsync on a directory: the rename itself was done
        pass
    finally:
        os.close(handle)
