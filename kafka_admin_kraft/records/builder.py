"""Batches laid out exactly as KRaft writes them (raft leader, snapshot writer, storage formatter).

KRaft batches: magic 2, no compression, CreateTime, every record stamped with the batch's append time
(base = max timestamp, deltas 0), producer id/epoch/sequence -1, not transactional, partition leader
epoch = the raft epoch. Data records have a null key and no headers; control records carry their
4-byte key. A batch is at most 8 MiB; metadata records that do not fit start a new batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from kafka_admin_kraft.protocol.exceptions import EncodeError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import uvarint_size
from kafka_admin_kraft.records.batch import (
    BATCH_HEADER_SIZE,
    CONTROL_FLAG,
    Record,
    RecordBatch,
)
from kafka_admin_kraft.records.control import (
    ControlRecord,
    control_type_of,
    encode_control_record,
)
from kafka_admin_kraft.records.metadata import MetadataRecord, encode_metadata_record

MAX_BATCH_SIZE: Final = 8 * 1024 * 1024
"""KRaft's largest batch in bytes, header included."""


def _batch(base_offset: int, epoch: int, timestamp: int, pairs: Sequence[tuple[bytes | None, bytes | None]],
           control: bool) -> RecordBatch:
    if not pairs:
        raise ValueError("a batch needs at least one record")
    records = [Record(base_offset + index, timestamp, key, value)
               for index, (key, value) in enumerate(pairs)]
    return RecordBatch(base_offset=base_offset, records=records, partition_leader_epoch=epoch,
                       attributes=CONTROL_FLAG if control else 0, last_offset_delta=len(records) - 1,
                       base_timestamp=timestamp, max_timestamp=timestamp)


def data_batch(base_offset: int, epoch: int, timestamp: int, values: Sequence[bytes]) -> RecordBatch:
    """A data batch of already framed values (null keys, no headers)."""
    return _batch(base_offset, epoch, timestamp, [(None, value) for value in values], False)


def control_batch(base_offset: int, epoch: int, timestamp: int,
                  values: Sequence[ControlRecord | Struct]) -> RecordBatch:
    """A control batch; schema messages are wrapped in the control type that carries them."""
    records = [value if isinstance(value, ControlRecord) else ControlRecord(control_type_of(value), value)
               for value in values]
    return _batch(base_offset, epoch, timestamp, [encode_control_record(record) for record in records],
                  True)


def _zigzag_size(value: int) -> int:
    return uvarint_size((value << 1) ^ (value >> 31))


def data_record_size(offset_delta: int, value_size: int) -> int:
    """Bytes of a KRaft data record: null key, zero timestamp delta, no headers."""
    body = 4 + _zigzag_size(offset_delta) + _zigzag_size(value_size) + value_size
    return _zigzag_size(body) + body


def metadata_batches(base_offset: int, epoch: int, timestamp: int, records: Iterable[MetadataRecord], *,
                     max_batch_size: int = MAX_BATCH_SIZE) -> list[RecordBatch]:
    """Metadata records in as few batches as fit in ``max_batch_size``, one record at a time."""
    batches: list[RecordBatch] = []
    values: list[bytes] = []
    size = BATCH_HEADER_SIZE
    next_offset = base_offset
    for record in records:
        value = encode_metadata_record(record)
        needed = data_record_size(len(values), len(value))
        if size + needed > max_batch_size and values:
            batches.append(data_batch(next_offset, epoch, timestamp, values))
            next_offset += len(values)
            values = []
            size = BATCH_HEADER_SIZE
            needed = data_record_size(0, len(value))
        if size + needed > max_batch_size:
            raise EncodeError(f"a {needed}-byte record does not fit in a {max_batch_size}-byte batch")
        values.append(value)
        size += needed
    if values:
        batches.append(data_batch(next_offset, epoch, timestamp, values))
    return batches
