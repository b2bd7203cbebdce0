"""Durable file replacement, as Kafka does it: write ``<name>.tmp``, fsync, rename, fsync the directory.

A crash then leaves either the old file or the new one, never a mix.
"""

from __future__ import annotations

import os
from pathlib import Path


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` through ``<path>.tmp``."""
    target = Path(path)
    temporary = target.with_name(target.name + ".tmp")
    with open(temporary, "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, target)
    fsync_directory(target.parent)
