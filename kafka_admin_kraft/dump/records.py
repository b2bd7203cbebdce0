"""Records of one batch as Kafka's ``DefaultRecordBatch`` iterator hands them to ``DumpLogSegments``.

The project's ``decode_batch_at`` reads a sound batch; this module covers what it refuses, so that
the dump prints what Kafka prints up to the damage. Kafka's iterator is lazy: the records before a
bad one are returned (and printed) before it fails, a batch whose count is 0 yields nothing whatever
follows, the last record fails when bytes remain after it, header keys decode malformed UTF-8 to
U+FFFD. A compressed batch is decompressed and read whole first, so any damage in it fails before
its first record.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from kafka_admin_kraft.dump.json_text import Malformed


class KafkaRecord(NamedTuple):
    """One record as ``DumpLogSegments`` sees it: LogAppendTime batches give every record the
    batch's max timestamp, ``sequence`` is derived from the batch's base sequence."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    header_keys: tuple[str, ...]
    sequence: int


class RecordFailure(Exception):
    """The iterator failed on a record: Kafka's exception message, and how many records came before."""


INT32_MAX = 0x7FFFFFFF


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence``: sequences wrap to 0 after Integer.MAX_VALUE."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def _varint(buf: bytes, pos: int, end: int, bits: int) -> tuple[int, int]:
    """A zig-zag varint (``bits`` 32) or varlong (64) as ``ByteUtils`` reads it."""
    raw = 0
    shift = 0
    limit = 35 if bits == 32 else 70
    while True:
        if pos >= end:
            raise IndexError("the buffer ends inside a varint")
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if byte < 0x80:
            break
        shift += 7
        if shift >= limit:
            raise Malformed(f"var{'int' if bits == 32 else 'long'} is too long")
    raw &= (1 << bits) - 1
    return (raw >> 1) ^ -(raw & 1), pos


def kafka_records(buf: bytes, pos: int, end: int, count: int, base_offset: int, base_timestamp: int,
                  base_sequence: int, log_append_time: int | None) -> Iterator[KafkaRecord]:
    """The records of an uncompressed batch whose records section is ``buf[pos:end]``; raises
    :class:`RecordFailure` where Kafka's iterator throws."""
    if count == 0:
        return
    if count < 0:
        raise RecordFailure(f"Found invalid record count {count} in magic v2 batch")
    for index in range(count):
        try:
            size, pos = _varint(buf, pos, end, 32)
        except IndexError:
            raise RecordFailure("Incorrect declared batch size, premature EOF reached") from None
        except Malformed as exc:
            raise RecordFailure(str(exc)) from None
        if end - pos < size:
            raise RecordFailure(f"Invalid record size: expected {size} bytes in record payload, but instead "
                                f"the buffer has only {end - pos} remaining bytes.")
        start = pos
        try:
            record, pos = _read_body(buf, pos, end, base_offset, base_timestamp, base_sequence,
                                     log_append_time)
        except (IndexError, ValueError) as exc:
            reason = exc.args[0] if isinstance(exc, RecordFailure) else "Found invalid record structure"
            raise RecordFailure(reason) from None
        if pos - start != size:
            raise RecordFailure(f"Invalid record size: expected to read {size} bytes in record payload, but "
                                f"instead read {pos - start}")
        if index == count - 1 and pos != end:
            raise RecordFailure("Incorrect declared batch size, records still remaining in file")
        yield record


class _Refused(RecordFailure, ValueError):
    """A record field Kafka refuses with its own message (not ``Found invalid record structure``)."""


def _sized(buf: bytes, pos: int, end: int, size: int) -> tuple[bytes | None, int]:
    if size < 0:
        return None, pos
    if pos + size > end:
        raise IndexError("field runs past the batch")
    return buf[pos:pos + size], pos + size


def _read_body(buf: bytes, pos: int, end: int, base_offset: int, base_timestamp: int, base_sequence: int,
               log_append_time: int | None) -> tuple[KafkaRecord, int]:
    if pos >= end:
        raise IndexError("the record has no attributes")
    pos += 1
    timestamp_delta, pos = _varint(buf, pos, end, 64)
    offset_delta, pos = _varint(buf, pos, end, 32)
    size, pos = _varint(buf, pos, end, 32)
    key, pos = _sized(buf, pos, end, size)
    size, pos = _varint(buf, pos, end, 32)
    value, pos = _sized(buf, pos, end, size)
    header_count, pos = _varint(buf, pos, end, 32)
    if header_count < 0:
        raise _Refused(f"Found invalid number of record headers {header_count}")
    if header_count > end - pos:
        raise _Refused(f"Found invalid number of record headers. {header_count} is larger than the remaining "
                       "size of the buffer")
    header_keys = []
    for _ in range(header_count):
        size, pos = _varint(buf, pos, end, 32)
        if size < 0:
            raise _Refused(f"Invalid negative header key size {size}")
        header_key, pos = _sized(buf, pos, end, size)
        assert header_key is not None
        header_keys.append(header_key.decode("utf-8", "replace"))
        size, pos = _varint(buf, pos, end, 32)
        _, pos = _sized(buf, pos, end, size)
    timestamp = base_timestamp + timestamp_delta if log_append_time is None else log_append_time
    sequence = increment_sequence(base_sequence, offset_delta) if base_sequence >= 0 else -1
    return KafkaRecord(base_offset + offset_delta, timestamp, key, value, tuple(header_keys), sequence), pos
