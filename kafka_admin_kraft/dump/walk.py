"""The batches of a log segment or snapshot file as Kafka's ``FileLogInputStream`` finds them, read at
positions (``pread``, so that forked workers share the file), and :class:`DumpError`, where the dump
stops as Kafka's tool dies.

A batch is yielded once its 17 bytes up to the magic byte and its whole declared length are
present; the walk stops before fewer bytes at the end (the dump reports them as invalid bytes) and
raises Kafka's ``CorruptRecordException`` at a length field below 14.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import BinaryIO, Final

from kafka_admin_kraft.records.batch import LOG_OVERHEAD, PREFIX

HEADER_SIZE_UP_TO_MAGIC: Final = 17
"""``FileLogInputStream`` needs these bytes (offset, length, leader epoch, magic) to read a batch."""
MIN_RECORD_OVERHEAD: Final = 14
"""``LegacyRecord.RECORD_OVERHEAD_V0``: the smallest length field ``FileLogInputStream`` accepts."""
READ_WINDOW: Final = 8 << 20


class DumpError(Exception):
    """Where Kafka's tool dies with an exception: the dump stops, the message goes to stderr."""


def java_path(arg: str) -> str:
    """``new File(arg).toString()``: repeated slashes collapsed, a trailing one dropped."""
    path = re.sub("/+", "/", arg)
    return path[:-1] if len(path) > 1 and path.endswith("/") else path


def absolute_path(path: str) -> str:
    """``File.getAbsolutePath``: relative paths joined to the working directory, nothing resolved."""
    return path if path.startswith("/") else java_path(os.getcwd() + "/" + path)


ReadAt = Callable[[int, int], bytes]
"""Reads up to ``size`` bytes at a position of a file."""


def file_reader(stream: BinaryIO, start: int = 0) -> ReadAt:
    """Positioned reads (``pread``, so that forked workers can share the file), positions counted
    from ``start``."""
    fd = stream.fileno()

    def read_at(position: int, size: int) -> bytes:
        return os.pread(fd, size, start + position)

    return read_at


class BatchWalk:
    """The batches up to ``end`` as ``FileLogInputStream.nextBatch`` finds them; yields (buffer, start
    of the batch in it, batch size) with the batch whole in the buffer. ``position`` is the file
    position of the batch yielded last (after the loop: where the walk stopped)."""

    def __init__(self, read_at: ReadAt, path: str, end: int, start: int = 0) -> None:
        self.read_at = read_at
        self.path = path
        self.end = end
        self.start = start
        self.position = start

    def __iter__(self) -> Iterator[tuple[bytes, int, int]]:
        end = self.end
        buf = b""
        buf_start = 0
        unpack_prefix = PREFIX.unpack_from
        position = self.start
        while position < end - HEADER_SIZE_UP_TO_MAGIC:
            at = position - buf_start
            if at + HEADER_SIZE_UP_TO_MAGIC > len(buf):
                buf, buf_start, at = self._refill(buf, buf_start, position, HEADER_SIZE_UP_TO_MAGIC)
            length = unpack_prefix(buf, at)[1]
            if length < MIN_RECORD_OVERHEAD:
                self.position = position
                raise DumpError(f"org.apache.kafka.common.errors.CorruptRecordException: Found record size "
                                f"{length} smaller than minimum record overhead ({MIN_RECORD_OVERHEAD}) in "
                                f"file {absolute_path(self.path)}.")
            total = LOG_OVERHEAD + length
            if position > end - total:
                break
            if at + total > len(buf):
                buf, buf_start, at = self._refill(buf, buf_start, position, total)
            self.position = position
            yield buf, at, total
            position += total
        self.position = position

    def _refill(self, buf: bytes, buf_start: int, position: int, need: int) -> tuple[bytes, int, int]:
        """Read on from ``position``: a window, but not past ``end`` (a worker's chunk ends there, and
        each byte read past it is read again by the next chunk's worker)."""
        return self.read_at(position, max(min(READ_WINDOW, self.end - position), need)), position, 0
