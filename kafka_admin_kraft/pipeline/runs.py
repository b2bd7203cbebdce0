"""Runs of ordinary batches framed together: the fast path of the split walk.

Nearly every batch of a metadata log is uncompressed, not a control batch, and holds records whose
key is null, whose value is a framed metadata record and which have no headers. Framing such
batches one record at a time in Python costs more than everything else the reader does, so
consecutive batches of that shape in one read window are framed at once: a Python loop goes from
batch to batch and checks each CRC, and numpy reads the batch headers and the fields of all the
records of the run in a handful of array operations, following the record lengths of all the
batches side by side.

A run accepts only what :func:`~kafka_admin_kraft.records.batch.decode_batch_at` accepts, and yields
the same offsets, timestamps and values; anything else (a damaged batch, a control or compressed
batch, a record with a key, headers or a varint longer than four bytes) ends the run before that
batch, and :mod:`~kafka_admin_kraft.pipeline.walk` reads it the ordinary way.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from kafka_admin_kraft.pipeline.planning import MAX_BATCH_LENGTH
from kafka_admin_kraft.records.batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    CONTROL_FLAG,
    CRC_START,
    LOG_OVERHEAD,
    MAGIC,
)
from kafka_admin_kraft.records.crc import crc32c

if TYPE_CHECKING:
    import numpy

RUN_BYTES: Final = 1 << 20
"""A run takes the batches that start in this many bytes from its first (one Arrow record batch)."""

_VARINT_WIDTH: Final = 4
"""Longest varint a run reads: values below 2**27, which every field of a sound metadata record
uses; a longer one sends its batch down the ordinary path."""

_SIDE_BY_SIDE: Final = 48
"""Fewest batches walked side by side with numpy; fewer are finished one by one in Python (a step
of numpy costs about as much as following this many records in Python)."""

_LENGTH_CRC: Final = struct.Struct(">8xi5xI")
"""A batch header's length and CRC (see :mod:`kafka_admin_kraft.records.batch`)."""

_SHORTEST_LENGTH: Final = BATCH_HEADER_SIZE - LOG_OVERHEAD + 1
"""The length field of a batch holding at least one byte of records."""


@functools.cache
def _header_dtype() -> Any:
    """The 61-byte batch header as a numpy record, big-endian and unpadded."""
    import numpy as np

    return np.dtype([
        ("base_offset", ">i8"), ("length", ">i4"), ("leader_epoch", ">i4"), ("magic", "i1"), ("crc", ">u4"),
        ("attributes", ">i2"), ("last_offset_delta", ">i4"), ("base_timestamp", ">i8"),
        ("max_timestamp", ">i8"), ("producer_id", ">i8"), ("producer_epoch", ">i2"),
        ("base_sequence", ">i4"), ("count", ">i4"),
    ])


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
        raw |= np.where(going, (byte & 0x7F) << (7 * shift), 0)
        size[going & (byte < 0x80)] = shift + 1
        going &= byte >= 0x80
        if not going.any():
            break
    return (raw >> 1) ^ -(raw & 1), size


def _bytes_at(u8: numpy.ndarray[Any, Any], at: numpy.ndarray[Any, Any]) -> numpy.ndarray[Any, Any]:
    """``u8[at]``, an index outside ``u8`` (a damaged record's fields) reading its first or last byte."""
    picked: numpy.ndarray[Any, Any] = u8.take(at, mode="clip")
    return picked


def frame_run(buf: bytes, at: int, position: int, end: int) -> BatchRun | None:
    """The run of ordinary batches starting at ``buf[at]`` (file position ``position``), taking
    batches that start before the file position ``end`` and lie wholly in ``buf``; None when the
    first batch there is not an ordinary one.

    The Python loop goes from batch to batch by their length fields and checks each CRC; numpy does
    the rest (:func:`_frame_records`)."""
    batch_at: list[int] = []
    shift = position - at
    limit = len(buf)
    stop = min(end - shift, limit - BATCH_HEADER_SIZE + 1, at + RUN_BYTES)
    view = memoryview(buf)
    unpack = _LENGTH_CRC.unpack_from
    p = at
    while p < stop:
        length, crc = unpack(buf, p)
        following = p + LOG_OVERHEAD + length
        if (
            not _SHORTEST_LENGTH <= length <= MAX_BATCH_LENGTH
            or following > limit
            or crc32c(view[p + CRC_START : following]) != crc
        ):
            break
        batch_at.append(p)
        p = following
    if not batch_at:
        return None
    return _frame_records(buf, batch_at, shift)


def _headers(u8: numpy.ndarray[Any, Any], batch_at: numpy.ndarray[Any, Any]) -> Any:
    """The batch headers at ``batch_at``: rows of a read-only view of ``u8`` that starts a row at every
    byte, gathered at once (an index per header, not per byte)."""
    import numpy as np
    from numpy.lib.stride_tricks import as_strided

    every = as_strided(u8, (len(u8) - BATCH_HEADER_SIZE + 1, BATCH_HEADER_SIZE), (1, 1), writeable=False)
    return np.ascontiguousarray(every[batch_at]).view(_header_dtype())[:, 0]


def _frame_records(buf: bytes, found: list[int], shift: int) -> BatchRun | None:
    """Read the fields of every record of the batches found; cut the run before the first batch the
    run does not take (a control or compressed one, a record the run does not read)."""
    import numpy as np

    u8 = np.frombuffer(buf, np.uint8)
    batch_at = np.array(found, np.int64)
    heads = _headers(u8, batch_at)
    counts = heads["count"].astype(np.int64)
    sizes = heads["length"].astype(np.int64) + LOG_OVERHEAD
    sound = (
        (heads["magic"] == MAGIC)
        & (heads["attributes"] & (COMPRESSION_MASK | CONTROL_FLAG) == 0)
        & (counts > 0)
        & (counts <= sizes - BATCH_HEADER_SIZE)
    )
    if not sound.all():
        cut = int(np.argmin(sound))
        if cut == 0:
            return None
        batch_at, heads, counts, sizes = batch_at[:cut], heads[:cut], counts[:cut], sizes[:cut]
    start, end, framed = _record_bounds(buf, u8, batch_at + BATCH_HEADER_SIZE, counts, batch_at + sizes)
    batch_of_record = np.repeat(np.arange(len(counts)), counts)
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
    taken_batches = framed & np.logical_and.reduceat(taken, np.cumsum(counts) - counts)
    if not taken_batches.all():
        cut = int(np.argmin(taken_batches))
        if cut == 0:
            return None
        kept = int(counts[:cut].sum())
        batch_at, heads, counts, sizes = batch_at[:cut], heads[:cut], counts[:cut], sizes[:cut]
        batch_of_record, timestamp_delta, offset_delta = (
            batch_of_record[:kept], timestamp_delta[:kept], offset_delta[:kept])
        value_start, value_end = value_start[:kept], value_end[:kept]
    base_offsets = heads["base_offset"].astype(np.int64)
    first = np.cumsum(counts) - counts
    return BatchRun(
        buf=buf,
        positions=batch_at + shift,
        batch_at=batch_at,
        sizes=sizes,
        base_offsets=base_offsets,
        last_offsets=base_offsets + heads["last_offset_delta"],
        crcs=heads["crc"].astype(np.int64),
        leader_epochs=heads["leader_epoch"].astype(np.int64),
        batch_of_record=batch_of_record,
        record_index=np.arange(len(batch_of_record)) - first[batch_of_record],
        offsets=base_offsets[batch_of_record] + offset_delta,
        timestamps=heads["base_timestamp"].astype(np.int64)[batch_of_record] + timestamp_delta,
        value_start=value_start,
        value_end=value_end,
    )


def _record_bounds(
    buf: bytes,
    u8: numpy.ndarray[Any, Any],
    first: numpy.ndarray[Any, Any],
    counts: numpy.ndarray[Any, Any],
    batch_end: numpy.ndarray[Any, Any],
) -> tuple[Any, Any, Any]:
    """Where each record's fields start and end (after its length varint), and for each batch
    whether its records, one after the other, fill it exactly.

    A record's place depends on the length of the one before it, so the batches are walked side by
    side: step k reads the k-th record of every batch that has one, in a few array operations.
    Once fewer than :data:`_SIDE_BY_SIDE` batches are left (a few long batches), a Python loop
    finishes each of them."""
    import numpy as np

    firsts = np.cumsum(counts) - counts
    starts = np.zeros(int(counts.sum()), np.int64)
    ends = np.zeros(len(starts), np.int64)
    at = first.copy()
    framed = np.ones(len(counts), bool)
    live = np.nonzero(counts)[0]
    k = 0
    while len(live) >= _SIDE_BY_SIDE:
        here = at[live]
        size, width = _varints(u8, here)
        start = here + width
        end = start + size
        good = (width > 0) & (size > 0) & (end <= batch_end[live])
        rows = firsts[live] + k
        starts[rows] = start
        ends[rows] = end
        at[live] = end
        framed[live[~good]] = False
        k += 1
        live = live[good & (counts[live] > k)]
    for b in live.tolist():
        row = int(firsts[b]) + k
        bounds = _walk_records(buf, int(at[b]), int(counts[b]) - k, int(batch_end[b]))
        if bounds is None:
            framed[b] = False
            continue
        done = len(bounds[0])
        starts[row : row + done] = bounds[0]
        ends[row : row + done] = bounds[1]
        at[b] = bounds[1][-1]
    return starts, ends, framed & (at == batch_end)


def _walk_records(buf: bytes, q: int, count: int, end: int) -> tuple[list[int], list[int]] | None:
    """The bounds of ``count`` records one after the other from ``buf[q]`` up to ``end``; None when
    a length is not a positive varint of at most :data:`_VARINT_WIDTH` bytes or a record passes
    ``end``."""
    starts: list[int] = []
    ends: list[int] = []
    try:
        for _ in range(count):
            b = buf[q]
            q += 1
            if b >= 0x80:
                b &= 0x7F
                for shift in range(7, 7 * _VARINT_WIDTH, 7):
                    c = buf[q]
                    q += 1
                    b |= (c & 0x7F) << shift
                    if c < 0x80:
                        break
                else:
                    return None
            size = (b >> 1) ^ -(b & 1)
            if size <= 0 or q + size > end:
                return None
            starts.append(q)
            q += size
            ends.append(q)
    except IndexError:
        return None
    return starts, ends
