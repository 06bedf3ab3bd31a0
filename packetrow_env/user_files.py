"""Paths a user names: files read as text, and outputs checked writable, each failure one line of the caller's kind.

Every reader of a file a user gives (training configs, record files, reference ladders) reads it here, so that
a missing, unreadable, binary or misplaced path is a ``ValueError`` of the caller's class naming the path and what
was expected, never a traceback. Every command that writes (``--out``, ``--save``, ``--save-dir``) checks its
output here at start-up, before anything runs or is created, so that a run is not refused only at its end.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def read_text(path, error: type[ValueError], expected: str) -> str:
    """The text of the file ``path``; ``error`` naming the path and ``expected`` (e.g. 'a YAML training config')
    if there is no such file, it cannot be read, or it is not UTF-8 text."""
    with _reading(path, error, expected) as handle:
        return handle.read()


def read_versioned_json(path, error: type[ValueError], expected: str, file_format: str, version: int,
                        kind: str) -> dict:
    """The JSON object in the file ``path`` whose ``format`` is ``file_format`` and ``version`` is ``version``;
    ``read_text``'s errors, and ``error`` naming the path where it is not JSON, not that format or another version
    (``kind`` names the format in that message, e.g. "ladder")."""
    try:
        data = json.loads(read_text(path, error, expected))
    except json.JSONDecodeError as problem:
        raise error(f"{path}, line {problem.lineno}: not JSON ({problem.msg})") from None
    if not isinstance(data, dict) or data.get("format") != file_format:
        raise error(f"{path}: not a {file_format} file ({expected})")
    if data.get("version") != version:
        raise error(f"{path}: {kind} format version {data.get('version')!r}; this packetrow reads version {version}")
    return data


def text_lines(path, error: type[ValueError], expected: str) -> Iterator[str]:
    """The lines of the file ``path``, read as they are asked for, with ``read_text``'s errors."""
    with _reading(path, error, expected) as handle:
        yield from handle


@contextlib.contextmanager
def _reading(path, error: type[ValueError], expected: str):
    """The file opened as UTF-8 text; a failure to open it, or to read it in the ``with`` block, is ``error``."""
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such file (expected {expected})") from None
    except IsADirectoryError:
        raise error(f"{path}: a folder, not a file (expected {expected})") from None
    except OSError as problem:
        raise error(f"{path}: cannot read it ({problem.strerror or problem})") from None
    except ValueError as problem:  # a path the OS cannot take, e.g. with a null byte
        raise error(f"{path!r}: cannot read it ({problem})") from None
    with handle:
        try:
            yield handle
        except UnicodeDecodeError:
            raise error(f"{path}: not UTF-8 text (a binary file?); expected {expected}") from None
        except OSError as problem:
            raise error(f"{path}: cannot read it ({problem.strerror or problem})") from None


def check_output_folder(path, error: type[ValueError], what: str) -> None:
    """Raise ``error`` ('{what}: cannot write to PATH: why') unless ``path`` is a folder this process may write in,
    or one it may create (the nearest existing folder above it is writable). Creates nothing."""
    path = Path(path)
    try:
        reason = _folder_problem(path)
    except ValueError as problem:  # a path the OS cannot take, e.g. with a null byte
        reason = str(problem)
    if reason:
        raise error(f"{what}: cannot write to {path}: {reason}")


def check_output_file(path, error: type[ValueError], what: str, makes_folders: bool = False) -> None:
    """Raise ``error`` ('{what}: cannot write to PATH: why') unless the file ``path`` can be written: not a folder,
    in a writable folder (``makes_folders``: the writer creates missing folders, so a folder it may create will
    do; else the folder must exist). Creates nothing."""
    path = Path(path)
    try:
        reason = _file_problem(path, makes_folders)
    except ValueError as problem:  # a path the OS cannot take, e.g. with a null byte
        reason = str(problem)
    if reason:
        raise error(f"{what}: cannot write to {path}: {reason}")


def _file_problem(path: Path, makes_folders: bool) -> str | None:
    """Why the file ``path`` cannot be written, or None."""
    if path.is_dir():
        return "it is a folder; name a file"
    if not makes_folders and not path.parent.exists():
        return f"the folder {path.parent} does not exist"
    if path.exists() and not os.access(path, os.W_OK):
        return "no permission to write that file"
    return _folder_problem(path.parent)


def _folder_problem(path: Path) -> str | None:
    """Why files cannot be written in the folder ``path`` (existing or to be created), or None."""
    existing = path
    while not existing.exists():  # the nearest part of the path that exists: the rest would be created in it
        if existing.parent == existing:
            return "no part of the path exists"
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:  # tried, not asked of os.access: root passes that on a read-only or virtual file system
        with tempfile.TemporaryFile(dir=existing):  # on Linux an unnamed file (O_TMPFILE): nothing appears
            pass
    except OSError as problem:
        return f"cannot create files in {existing} ({problem.strerror or problem})"
    return None
