"""Faults a test injects into a running node, read from a file: ``kraft-server --faults FILE``.

Kafka has no such switch; the reference server has it so that tests (the pytest plugin's quorums,
``kafka_admin_kraft_server.testing``) can script failures that need no privileges: a network
partition without iptables and a full disk without a small filesystem. One fault a line, ``#``
comments and blank lines ignored::

    unreachable 127.0.0.1:40123
    disk-full

* ``unreachable HOST:PORT``: this node neither sends to that address nor takes an answer from it. A
  connection open to it is closed at its next use, and a request for it fails as a refused connection
  does (``peers`` for the raft requests, ``broker.ControllerChannels`` for registrations and
  heartbeats). Since every exchange between two nodes is a request one of them sends, listing each
  node's address in the other's file cuts them apart both ways.
* ``disk-full``: every write to the metadata log directory (appends, snapshots, ``quorum-state``)
  fails with ENOSPC, as on a full disk; the node then stops as it does on any failure of that
  directory, and started again while the fault stays, it stops at its first write.

The file is checked (one ``stat``) at each such use and read again whenever it changed; no file means
no fault. Writers replace it atomically (``write_faults``).
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger("kafka.server.Faults")

UNREACHABLE = "unreachable"
DISK_FULL = "disk-full"


def _address(text: str) -> tuple[str, int] | None:
    host, _, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return (host, int(port)) if host and port.isdigit() else None


class FaultFile:
    """The faults a file names, read again whenever the file changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.unreachable: frozenset[tuple[str, int]] = frozenset()
        self.disk_full = False
        self._seen: tuple[int, int, int] | None = None

    def refresh(self) -> None:
        try:
            stat = os.stat(self.path)
            seen: tuple[int, int, int] | None = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            seen = None
        if seen == self._seen:
            return
        self._seen = seen
        try:
            text = self.path.read_text(encoding="utf-8") if seen is not None else ""
        except FileNotFoundError:
            text = ""
        unreachable: set[tuple[str, int]] = set()
        disk_full = False
        for number, raw in enumerate(text.splitlines(), 1):
            words = raw.split("#", 1)[0].split()
            address = _address(words[1]) if len(words) == 2 and words[0] == UNREACHABLE else None
            if address is not None:
                unreachable.add(address)
            elif words == [DISK_FULL]:
                disk_full = True
            elif words:
                log.warning("Ignoring line %d of the fault file %s: %r is neither 'unreachable HOST:PORT' "
                            "nor 'disk-full'", number, self.path, raw.strip())
        if (frozenset(unreachable), disk_full) == (self.unreachable, self.disk_full):
            return
        self.unreachable, self.disk_full = frozenset(unreachable), disk_full
        shown = [f"{UNREACHABLE} {host}:{port}" for host, port in sorted(unreachable)]
        log.warning("Injected faults from %s: %s", self.path,
                    ", ".join(shown + ([DISK_FULL] if disk_full else [])) or "none")


_active: FaultFile | None = None


def install(path: Path | None) -> None:
    """Read faults from ``path`` from now on (None: no faults, the default)."""
    global _active
    _active = FaultFile(path) if path is not None else None
    if _active is not None:
        _active.refresh()


def unreachable(host: str, port: int) -> bool:
    """Whether the fault file cuts this node off from ``host:port``."""
    if _active is None:
        return False
    _active.refresh()
    return (host, port) in _active.unreachable


def check_disk(directory: Path) -> None:
    """Raise ENOSPC when the fault file says the disk holding ``directory`` is full."""
    if _active is None:
        return
    _active.refresh()
    if _active.disk_full:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory))


def write_faults(path: Path, unreachable: Iterable[tuple[str, int]] = (), disk_full: bool = False) -> None:
    """Replace the fault file at once (a temporary file renamed over it), so a node never reads half."""
    lines = [f"{UNREACHABLE} {f'[{host}]' if ':' in host else host}:{port}"
             for host, port in sorted(unreachable)]
    lines += [DISK_FULL] if disk_full else []
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(temporary, path)
