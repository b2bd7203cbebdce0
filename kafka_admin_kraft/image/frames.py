"""Reading the batches of a metadata file for an image, the ordinary ones framed without building
their records.

Almost every batch of a metadata log is uncompressed, not a control batch, and holds records whose
key is null, whose value is a framed metadata record and which have no headers, their offsets one
after the other. Of such a batch the image needs the values alone, so :func:`frame_batch` slices
them straight out of the bytes (no :class:`~kafka_admin_kraft.records.batch.Record` built, which
costs about twice as much per record): a :class:`FramedBatch`. It takes only what
:func:`~kafka_admin_kraft.records.batch.decode_batch_at` accepts, with the same offsets and values;
any other batch (a control or compressed batch, a damaged one, a record of another shape) is decoded
the ordinary way, so what is wrong with it is reported as before.

:class:`FrameReader` reads a file by position (``pread``) in windows, up to the size it had when
opened (a node appending meanwhile is never half-read). A batch whose length field is out of bounds,
or a file that ends inside a batch (a torn tail), is handed with the rest of the file to
:class:`~kafka_admin_kraft.records.reader.BatchReader`, which raises or notes the torn tail as it does
for every other reader.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final, NamedTuple

from kafka_admin_kraft.records.batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    CONTROL_FLAG,
    CRC_START,
    HEADER,
    LOG_OVERHEAD,
    MAGIC,
    MIN_BATCH_LENGTH,
    PREFIX,
    RecordBatch,
    decode_batch_at,
)
from kafka_admin_kraft.records.crc import crc32c
from kafka_admin_kraft.records.reader import DEFAULT_MAX_BATCH_SIZE, BatchReader, TornTail

WINDOW: Final = 8 << 20
"""Bytes read at a time; a batch larger than this is read whole."""
_NOT_ORDINARY: Final = COMPRESSION_MASK | CONTROL_FLAG
_MAX_LENGTH: Final = DEFAULT_MAX_BATCH_SIZE - LOG_OVERHEAD
_unpack_header = HEADER.unpack_from
_unpack_prefix = PREFIX.unpack_from
_new = tuple.__new__
"""Builds a named tuple without calling its ``__new__``, which is Python code: once per batch."""


class FramedBatch(NamedTuple):
    """An ordinary batch's values: record ``i`` is at offset ``first_offset + i``."""

    base_offset: int
    last_offset_delta: int
    partition_leader_epoch: int
    max_timestamp: int
    first_offset: int
    values: list[bytes]
    """At least three bytes each: the frame version, api key and version are there to look at."""
    only_changes: bool
    """Every value is a PartitionChangeRecord v0 to v2 framed in three bytes (``1, 5, version``)."""

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1


def frame_batch(buf: bytes, at: int, end: int) -> FramedBatch | None:
    """The :class:`FramedBatch` of the batch ``buf[at:end]``; None when it is not an ordinary one
    (see the module docstring) or its CRC does not match."""
    (base_offset, _, leader_epoch, magic, crc, attributes, last_offset_delta, _, max_timestamp, _, _, _,
     count) = _unpack_header(buf, at)
    if magic != MAGIC or attributes & _NOT_ORDINARY or not 0 < count <= end - at - BATCH_HEADER_SIZE:
        return None
    if crc32c(memoryview(buf)[at + CRC_START:end]) != crc:
        return None
    values: list[bytes] = []
    append = values.append
    only_changes = True
    q = at + BATCH_HEADER_SIZE
    try:
        for delta in range(0, count << 1, 2):
            # Length: a zig-zag varint of one or two bytes, positive.
            b = buf[q]
            if b < 0x80:
                q += 1
            else:
                c = buf[q + 1]
                if c >= 0x80:
                    return None
                b = (b & 0x7F) | (c << 7)
                q += 2
            if b & 1:
                return None
            record_end = q + (b >> 1)  # past ``end`` or not after the fields: refused below
            # Attributes (any), then the timestamp delta: a varlong of one or two bytes.
            if buf[q + 1] < 0x80:
                p = q + 2
            elif buf[q + 2] < 0x80:
                p = q + 3
            else:
                return None
            # The offset delta must be the record's index (``delta``, zig-zag encoded: twice it).
            b = buf[p]
            if b < 0x80:
                p += 1
            else:
                c = buf[p + 1]
                if c >= 0x80:
                    return None
                b = (b & 0x7F) | (c << 7)
                p += 2
            if b != delta or buf[p] != 1:  # and a null key
                return None
            # The value's length, one or two bytes; the value; no headers.
            b = buf[p + 1]
            if b < 0x80:
                p += 2
            else:
                c = buf[p + 2]
                if c >= 0x80:
                    return None
                b = (b & 0x7F) | (c << 7)
                p += 3
            value_end = p + (b >> 1)
            if b & 1 or b < 6 or value_end + 1 != record_end or buf[value_end] != 0:
                return None
            if only_changes and (buf[p + 1] != 5 or buf[p] != 1 or buf[p + 2] > 2):
                only_changes = False
            append(buf[p:value_end])
            q = record_end
    except IndexError:
        return None
    if q != end:
        return None
    return _new(FramedBatch, (base_offset, last_offset_delta, leader_epoch, max_timestamp, base_offset,
                              values, only_changes))


class _Bounded:
    """The bytes of a file from a position up to a limit: what a segment held when it was opened."""

    def __init__(self, stream: BinaryIO, start: int, limit: int) -> None:
        stream.seek(start)
        self._stream = stream
        self._left = limit - start

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        size = self._left if size < 0 else min(size, self._left)
        data = self._stream.read(size)
        self._left -= len(data)
        return data


class FrameReader:
    """The batches of the first ``size`` bytes of an open file, in order: a :class:`FramedBatch` for
    each ordinary batch, a decoded :class:`~kafka_admin_kraft.records.batch.RecordBatch` for any
    other. ``torn_tail`` is set, as by ``BatchReader``, when the file ends inside a batch."""

    def __init__(self, stream: BinaryIO, path: Path, size: int) -> None:
        self._stream = stream
        self.path = path
        self.size = size
        self.torn_tail: TornTail | None = None

    def __iter__(self) -> Iterator[RecordBatch | FramedBatch]:
        fd = self._stream.fileno()
        what = os.fspath(self.path)
        size = self.size
        position = 0
        need = 0
        while True:
            buf = os.pread(fd, min(max(WINDOW, need), size - position), position)
            at = 0
            while at + LOG_OVERHEAD <= len(buf):
                length = _unpack_prefix(buf, at)[1]
                end = at + LOG_OVERHEAD + length
                if not MIN_BATCH_LENGTH <= length <= _MAX_LENGTH or end > len(buf):
                    break
                framed = frame_batch(buf, at, end)
                yield framed if framed is not None else decode_batch_at(buf, at, end, position + at, what)
                at = end
            if at:
                position += at
                need = 0
                continue
            # No whole batch at ``position``: a batch larger than the window is read whole; a bad
            # length field or a torn tail goes to BatchReader below.
            if (len(buf) < LOG_OVERHEAD or need >= end or not MIN_BATCH_LENGTH <= length <= _MAX_LENGTH
                    or position + end > size):
                break
            need = end
        if position < size:  # a bad length field or a torn tail: reported as every reader does
            reader = BatchReader(_Bounded(self._stream, position, size), path=self.path,  # type: ignore[arg-type]
                                 start=position)
            yield from reader
            self.torn_tail = reader.torn_tail
