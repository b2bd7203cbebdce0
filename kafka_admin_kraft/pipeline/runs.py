"""Runs of ordinary batches framed together: the fast path of the split walk.

Nearly every batch of a metadata log is uncompressed, not a control batch, and holds records whose
key is null, whose value is a framed metadata record and which have no headers. Framing such
batches one record at a time in Python costs more than everything else the reader does, so
consecutive batches of that shape in one read window are framed at once: a Python loop checks each
batch header and CRC and follows the record lengths, and numpy reads every other field of all the
records of the run in a handful of array operations.

A run accepts only what :func:`~kafka_admin_kraft.records.batch.decode_batch_at` accepts, and yields
the same offsets, timestamps and values; anything else (a damaged batch, a control or compressed
batch, a record with a key, headers or a varint longer than four bytes) ends the run before that
batch, and :mod:`~kafka_admin_kraft.pipeline.walk` reads it the ordinary way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from crc32c import crc32c

from kafka_admin_kraft.pipeline.planning import MAX_BATCH_LENGTH
from kafka_admin_kraft.records.batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    CONTROL_FLAG,
    CRC_START,
    HEADER,
    LOG_OVERHEAD,
    MAGIC,
)

if TYPE_CHECKING:
    import numpy

RUN_RECORDS: Final = 8192
"""A run stops once it holds this many records (one Arrow record batch's worth)."""

_VARINT_WIDTH: Final = 4
"""Longest varint a run reads: values below 2**27, which every field of a sound metadata record
uses; a longer one sends its batch down the ordinary path."""


@dataclass(frozen=True)
class BatchRun:
    """Consecutive sound batches of one buffer, their records framed.

    Batch arrays have one entry per batch, record arrays one per record in file order; ``batch_at``,
    ``value_start`` and ``value_end`` index ``buf``."""

    buf: bytes
    positions: numpy.ndarray[Any, Any]
    """Byte position of each batch in its file."""
    batch_at: numpy.ndarray[Any, Any]
    sizes: numpy.ndarray[Any, Any]
    base_offsets: numpy.ndarray[Any, Any]
    last_offsets: numpy.ndarray[Any, Any]
    crcs: numpy.ndarray[Any, Any]
    leader_epochs: numpy.ndarray[Any, Any]
    batch_of_record: numpy.ndarray[Any, Any]
    record_index: numpy.ndarray[Any, Any]
    offsets: numpy.ndarray[Any, Any]
    timestamps: numpy.ndarray[Any, Any]
    value_start: numpy.ndarray[Any, Any]
    value_end: numpy.ndarray[Any, Any]

    @property
    def end_position(self) -> int:
        """Where the batch after the run starts in its file."""
        return int(self.positions[-1] + self.sizes[-1])


def _varints(u8: numpy.ndarray[Any, Any], at: numpy.ndarray[Any, Any]) -> tuple[Any, Any]:
    """The zig-zag varints starting at ``at``: (values, byte sizes); size 0 where a varint is longer
    than :data:`_VARINT_WIDTH` bytes."""
    import numpy as np

    first = _bytes_at(u8, at).astype(np.int64)
    if not (first & 0x80).any():
        return (first >> 1) ^ -(first & 1), np.ones(len(at), np.int64)
    raw = first & 0x7F
    size = np.where(first < 0x80, 1, 0)
    going = first >= 0x80
    for shift in range(1, _VARINT_WIDTH):
        byte = _bytes_at(u8, at + shift).astype(np.int64)
        raw = np.where(going, raw | ((byte & 0x7F) << (7 * shift)), raw)
        ends = going & (byte < 0x80)
        size = np.where(ends, shift + 1, size)
        going &= byte >= 0x80
    return (raw >> 1) ^ -(raw & 1), size


def _bytes_at(u8: numpy.ndarray[Any, Any], at: numpy.ndarray[Any, Any]) -> numpy.ndarray[Any, Any]:
    """``u8[at]``, an index outside ``u8`` (a damaged record's fields) reading its first or last byte."""
    import numpy as np

    picked: numpy.ndarray[Any, Any] = u8[np.clip(at, 0, len(u8) - 1)]
    return picked


def frame_run(buf: bytes, at: int, position: int, end: int) -> BatchRun | None:
    """The run of ordinary batches starting at ``buf[at]`` (file position ``position``), taking
    batches that start before the file position ``end`` and lie wholly in ``buf``; None when the
    first batch there is not an ordinary one."""
    heads: list[tuple[int, ...]] = []
    batch_at: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    shift = position - at
    limit = len(buf)
    view = memoryview(buf)
    unpack = HEADER.unpack_from
    records = 0
    p = at
    while p + shift < end and records < RUN_RECORDS and p + BATCH_HEADER_SIZE <= limit:
        fields = unpack(buf, p)
        total = LOG_OVERHEAD + fields[1]
        count = fields[12]
        if (
            not BATCH_HEADER_SIZE < total <= LOG_OVERHEAD + MAX_BATCH_LENGTH
            or p + total > limit
            or fields[3] != MAGIC
            or fields[5] & (COMPRESSION_MASK | CONTROL_FLAG)
            or not 0 < count <= total - BATCH_HEADER_SIZE
            or crc32c(view[p + CRC_START : p + total]) != fields[4]
        ):
            break
        batch_end = p + total
        q = p + BATCH_HEADER_SIZE
        mark = len(starts)
        try:
            for _ in range(count):
                b = buf[q]
                if b < 0x80:
                    q += 1
                else:
                    c = buf[q + 1]
                    if c >= 0x80:
                        break
                    b = (b & 0x7F) | (c << 7)
                    q += 2
                size = (b >> 1) ^ -(b & 1)
                if size <= 0:
                    break
                starts.append(q)
                q += size
                ends.append(q)
        except IndexError:
            pass
        if len(starts) - mark != count or q != batch_end:
            del starts[mark:], ends[mark:]
            break
        heads.append(fields)
        batch_at.append(p)
        records += count
        p = batch_end
    if not heads:
        return None
    return _frame_records(buf, heads, batch_at, starts, ends, shift)


def _frame_records(
    buf: bytes,
    heads: list[tuple[int, ...]],
    batch_at: list[int],
    starts: list[int],
    ends: list[int],
    shift: int,
) -> BatchRun | None:
    """Read the fields of every record of the batches found; cut the run before the first batch
    holding a record the run does not take."""
    import numpy as np

    u8 = np.frombuffer(buf, np.uint8)
    start = np.array(starts, np.int64)
    end = np.array(ends, np.int64)
    counts = np.array([fields[12] for fields in heads], np.int64)
    batch_of_record = np.repeat(np.arange(len(heads)), counts)
    timestamp_delta, timestamp_size = _varints(u8, start + 1)
    offset_at = start + 1 + timestamp_size
    offset_delta, offset_size = _varints(u8, offset_at)
    key_at = offset_at + offset_size
    value_length, length_size = _varints(u8, key_at + 1)
    value_start = key_at + 1 + length_size
    value_end = value_start + value_length
    taken = (
        (timestamp_size > 0)
        & (offset_size > 0)
        & (length_size > 0)
        & (_bytes_at(u8, key_at) == 1)  # a null key
        & (value_length >= 3)  # at least a frame header
        & (value_end + 1 == end)
        & (_bytes_at(u8, value_end) == 0)  # no headers
    )
    if not taken.all():
        cut = int(batch_of_record[int(np.argmin(taken))])
        if cut == 0:
            return None
        kept = int(counts[:cut].sum())
        heads, batch_at, counts = heads[:cut], batch_at[:cut], counts[:cut]
        batch_of_record, timestamp_delta, offset_delta = (
            batch_of_record[:kept], timestamp_delta[:kept], offset_delta[:kept])
        value_start, value_end = value_start[:kept], value_end[:kept]
    columns = np.array(heads, np.int64).T  # the HEADER fields, one row per field
    first = np.cumsum(counts) - counts
    return BatchRun(
        buf=buf,
        positions=np.array(batch_at, np.int64) + shift,
        batch_at=np.array(batch_at, np.int64),
        sizes=columns[1] + LOG_OVERHEAD,
        base_offsets=columns[0],
        last_offsets=columns[0] + columns[6],
        crcs=columns[4],
        leader_epochs=columns[2],
        batch_of_record=batch_of_record,
        record_index=np.arange(len(batch_of_record)) - first[batch_of_record],
        offsets=columns[0][batch_of_record] + offset_delta,
        timestamps=columns[7][batch_of_record] + timestamp_delta,
        value_start=value_start,
        value_end=value_end,
    )
