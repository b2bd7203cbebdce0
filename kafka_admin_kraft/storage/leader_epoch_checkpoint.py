"""``leader-epoch-checkpoint``: where each leader epoch starts in a partition's log.

Kafka's checkpoint text format, version 0: a line ``0``, a line with the entry count, then one
``<epoch> <start offset>`` line per entry, every line ending in a newline.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Final, NamedTuple

from kafka_admin_kraft.java_text import java_lines, parse_java_int
from kafka_admin_kraft.records.fsutil import atomic_write
from kafka_admin_kraft.storage.errors import StorageFormatError

LEADER_EPOCH_CHECKPOINT_FILE: Final = "leader-epoch-checkpoint"
CHECKPOINT_VERSION: Final = 0
_WHITESPACE: Final = re.compile(r"\s+")


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


def format_leader_epoch_checkpoint(entries: Sequence[EpochEntry]) -> str:
    lines = [str(CHECKPOINT_VERSION), str(len(entries))]
    lines += [f"{entry.epoch} {entry.start_offset}" for entry in entries]
    return "".join(line + "\n" for line in lines)


def parse_leader_epoch_checkpoint(text: str, *, what: str = LEADER_EPOCH_CHECKPOINT_FILE) -> list[EpochEntry]:
    """Kafka's reader: an empty file means no entries; the count must match the lines."""
    lines = java_lines(text)
    if not lines:
        return []
    try:
        version = parse_java_int(lines[0])
    except ValueError:
        raise StorageFormatError(f"Malformed line in checkpoint file: {lines[0]!r}", what=what,
                                 path="line 1") from None
    if version != CHECKPOINT_VERSION:
        raise StorageFormatError(f"Unrecognised version: {version}, expected version: 0", what=what,
                                 path="line 1")
    if len(lines) < 2:
        return []
    try:
        expected = parse_java_int(lines[1])
    except ValueError:
        raise StorageFormatError(f"Malformed line in checkpoint file: {lines[1]!r}", what=what,
                                 path="line 2") from None
    entries: list[EpochEntry] = []
    for number, line in enumerate(lines[2:], start=3):
        parts = _WHITESPACE.split(line)
        try:
            if len(parts) != 2:
                raise ValueError(line)
            entries.append(EpochEntry(parse_java_int(parts[0]), parse_java_int(parts[1], 64)))
        except ValueError:
            raise StorageFormatError(f"Malformed line in checkpoint file: {line!r}", what=what,
                                     path=f"line {number}") from None
    if len(entries) != expected:
        raise StorageFormatError(f"Expected {expected} entries in checkpoint file, but found only "
                                 f"{len(entries)}", what=what)
    return entries


def read_leader_epoch_checkpoint(path: str | os.PathLike[str]) -> list[EpochEntry]:
    with open(path, encoding="utf-8", errors="replace", newline="") as stream:
        return parse_leader_epoch_checkpoint(stream.read(), what=os.fspath(path))


def write_leader_epoch_checkpoint(path: str | os.PathLike[str], entries: Sequence[EpochEntry]) -> None:
    """Replace the file through ``leader-epoch-checkpoint.tmp``, fsync and rename."""
    atomic_write(path, format_leader_epoch_checkpoint(entries).encode("utf-8"))
