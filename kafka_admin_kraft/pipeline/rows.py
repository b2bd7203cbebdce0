"""Decoding one split into rows (tuples in :data:`~kafka_admin_kraft.pipeline.schema.COLUMNS` order).

Plain Python on top of :mod:`kafka_admin_kraft.records`: the Spark data source calls
:func:`read_split` on the executors, the benchmarks call it in a loop.

Damage does not stop a file:

* a batch whose length field is impossible, or whose magic, CRC or records fail a check, becomes an
  error row (``error_kind`` ``corrupt``) naming the file and byte position. Reading goes on at the
  end the length field gives when a valid batch starts there, else at the next position where a
  whole batch with a good CRC starts (a resynchronising scan);
* a file that ends inside a batch is a ``torn_tail`` when it is the newest segment of its directory
  (what a crash during an append leaves; Kafka cuts it at start-up) and ``corrupt`` anywhere else
  (snapshots and bootstrap files are renamed into place only when complete);
* a record whose value does not decode (the batch itself is intact) becomes an ``undecodable`` row
  and the other records of the batch are still read;
* a missing or damaged ``meta.properties`` or ``quorum-state``, found while planning, comes as a split
  of its own that yields its one error row.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from typing import Any, Final

from crc32c import crc32c

from kafka_admin_kraft.pipeline.planning import MAX_BATCH_LENGTH, FileSplit
from kafka_admin_kraft.pipeline.schema import (
    CORRUPT,
    FEATURE_LEVEL,
    KRAFT_VERSION,
    LEADER_CHANGE,
    SNAPSHOT,
    TORN_TAIL,
    UNDECODABLE,
    VOTERS,
)
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records.batch import (
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
from kafka_admin_kraft.records.control import CONTROL_VALUE_VERSION, ControlRecordType, decode_control_record
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion, decode_metadata_record

READ_WINDOW: Final = 4 << 20

RECORD_NAMES: Final[dict[int, str]] = {
    0: "RegisterBrokerRecord",
    1: "UnregisterBrokerRecord",
    2: "TopicRecord",
    3: "PartitionRecord",
    4: "ConfigRecord",
    5: "PartitionChangeRecord",
    7: "FenceBrokerRecord",
    8: "UnfenceBrokerRecord",
    9: "RemoveTopicRecord",
    10: "DelegationTokenRecord",
    11: "UserScramCredentialRecord",
    12: "FeatureLevelRecord",
    14: "ClientQuotaRecord",
    15: "ProducerIdsRecord",
    17: "BrokerRegistrationChangeRecord",
    18: "AccessControlEntryRecord",
    19: "RemoveAccessControlEntryRecord",
    20: "NoOpRecord",
    21: "ZkMigrationRecord",
    22: "RemoveUserScramCredentialRecord",
    23: "BeginTransactionRecord",
    24: "EndTransactionRecord",
    25: "AbortTransactionRecord",
    26: "RemoveDelegationTokenRecord",
    27: "RegisterControllerRecord",
    28: "ClearElrRecord",
}
"""Metadata record api key -> schema name, also for record types the codec keeps raw."""

CONTROL_NAMES: Final[dict[int, str]] = {
    ControlRecordType.ABORT: "AbortMarker",
    ControlRecordType.COMMIT: "CommitMarker",
    ControlRecordType.LEADER_CHANGE: LEADER_CHANGE,
    ControlRecordType.SNAPSHOT_HEADER: "SnapshotHeaderRecord",
    ControlRecordType.SNAPSHOT_FOOTER: "SnapshotFooterRecord",
    ControlRecordType.KRAFT_VERSION: KRAFT_VERSION,
    ControlRecordType.KRAFT_VOTERS: VOTERS,
}

Row = tuple[Any, ...]


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def _plain(value: object) -> Any:
    """JSON-friendly form of a control value that is not a schema message (markers, unknown types)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            key: (item.hex() if isinstance(item, bytes) else item)
            for key, item in dataclasses.asdict(value).items()
        }
    return str(value)


class _Ids:
    """The per-split constants at the head of every row."""

    def __init__(self, split: FileSplit) -> None:
        self.head = (
            split.cluster_id,
            split.node_id,
            split.directory_id,
            split.log_dir,
            split.path,
            split.kind,
            split.snapshot_end_offset,
            split.snapshot_epoch,
        )


def _error_row(
    head: Row,
    position: int | None,
    kind: str,
    message: str,
    *,
    base_offset: int | None = None,
    offset: int | None = None,
    epoch: int | None = None,
) -> Row:
    return (
        *head,
        position,
        base_offset,
        None,
        None,
        None,
        offset,
        epoch,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        kind,
        message,
    )


def _typed(record_type: str, message: Any) -> tuple[Any, Any, Any, Any, Any, Any]:
    """(leader_id, voter_ids, voter_directory_ids, granting_voter_ids, feature_name, feature_level)."""
    if record_type == VOTERS:
        voters = message.voters
        return (
            None,
            [v.voter_id for v in voters],
            [str(v.voter_directory_id) for v in voters],
            None,
            None,
            None,
        )
    if record_type == LEADER_CHANGE:
        return (
            message.leader_id,
            [v.voter_id for v in message.voters],
            None,
            [v.voter_id for v in message.granting_voters],
            None,
            None,
        )
    if record_type == FEATURE_LEVEL:
        return None, None, None, None, message.name, message.feature_level
    if record_type == KRAFT_VERSION:
        return None, None, None, None, "kraft.version", message.k_raft_version
    return None, None, None, None, None, None


_NO_TYPED: Final = (None, None, None, None, None, None)


def batch_rows(batch: RecordBatch, head: Row, *, with_json: bool = True) -> Iterator[Row]:
    """The rows of one decoded batch."""
    position = batch.position
    base = batch.base_offset
    last = batch.last_offset
    crc = batch.crc
    epoch = batch.partition_leader_epoch
    control = bool(batch.attributes & CONTROL_FLAG)
    what = head[4]

    def row(index: int | None, offset: int | None, timestamp: int, record_type: str | None,
            version: int | None, text: str | None, typed: tuple[Any, ...],
            error_kind: str | None = None, error: str | None = None) -> Row:
        return (*head, position, base, last, crc, index, offset, epoch, timestamp, control, record_type,
                version, text, *typed, error_kind, error)

    if not batch.records:
        yield row(None, None, batch.max_timestamp, None, None, None, _NO_TYPED)
        return
    for index, record in enumerate(batch.records):
        try:
            if control:
                decoded = decode_control_record(record)
                record_type = CONTROL_NAMES.get(decoded.type_id, f"ControlType{decoded.type_id}")
                version: int | None = CONTROL_VALUE_VERSION
                value = decoded.value
                if isinstance(value, Struct):
                    typed = _typed(record_type, value)
                    text = _json(value.to_dict()) if with_json else None
                else:
                    typed = _NO_TYPED
                    text = _json(_plain(value)) if with_json else None
            else:
                meta = decode_metadata_record(record.value)
                if isinstance(meta, ApiMessageAndVersion):
                    record_type = meta.message.NAME
                    version = meta.version
                    typed = _typed(record_type, meta.message) if record_type == FEATURE_LEVEL else _NO_TYPED
                    text = _json(meta.message.to_dict()) if with_json else None
                else:
                    record_type = RECORD_NAMES.get(meta.api_key, f"ApiKey{meta.api_key}")
                    version = meta.version
                    typed = _NO_TYPED
                    raw = {"api_key": meta.api_key, "body_hex": meta.body.hex()}
                    text = _json(raw) if with_json else None
        except (DecodeError, ValueError, IndexError) as exc:
            yield row(index, record.offset, record.timestamp, None, None, None, _NO_TYPED, UNDECODABLE,
                      f"{what}: batch at position {position}, record at offset {record.offset}: {exc}")
            continue
        yield row(index, record.offset, record.timestamp, record_type, version, text, typed)


class _Window:
    """Buffered positional reads of one file."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size
        self.buf = b""
        self.start = 0

    def get(self, position: int, count: int) -> tuple[bytes, int]:
        """A buffer holding ``[position, position + count)`` (cut at the file end) and the index of
        ``position`` in it."""
        count = min(count, self.size - position)
        offset = position - self.start
        if offset < 0 or offset + count > len(self.buf):
            self.buf = os.pread(self.fd, max(count, READ_WINDOW), position)
            self.start = position
            offset = 0
        return self.buf, offset


def _valid_batch_at(window: _Window, position: int) -> bool:
    """A whole batch with a correct CRC starts at ``position``."""
    if position + 61 > window.size:
        return False
    buf, at = window.get(position, 61)
    fields = HEADER.unpack_from(buf, at)
    length = fields[1]
    if fields[3] != MAGIC or not MIN_BATCH_LENGTH <= length <= MAX_BATCH_LENGTH or fields[6] < 0:
        return False
    total = LOG_OVERHEAD + length
    if position + total > window.size:
        return False
    buf, at = window.get(position, total)
    return bool(crc32c(memoryview(buf)[at + CRC_START : at + total]) == fields[4])


def _resync(window: _Window, start: int, limit: int) -> int | None:
    """The first position in ``[start, limit)`` where a valid batch starts, None if there is none.

    Candidates are the positions whose byte 16 (the magic byte) is 2; each is checked by its CRC."""
    position = start
    while position < limit:
        available = min(READ_WINDOW, window.size - position)
        if available < HEADER.size:
            return None
        buf, at = window.get(position, available)
        span = min(limit - position, available - 16)
        hit = buf.find(b"\x02", at + 16, at + 16 + span)
        if hit < 0:
            position += max(1, span)
            continue
        candidate = position + hit - 16 - at
        if _valid_batch_at(window, candidate):
            return candidate
        position = candidate + 1
    return None


def read_split(split: FileSplit, *, with_json: bool = True) -> Iterator[Row]:
    """Rows of the batches starting in ``[split.start, split.end)``, plus error rows."""
    head = _Ids(split).head
    if split.error_kind is not None:
        yield _error_row(head, None, split.error_kind, split.error or "")
        return
    what = split.path
    fd = os.open(split.path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        window = _Window(fd, size)
        end = min(split.end, size)
        position = split.start
        while position < end:
            left = size - position
            if left < LOG_OVERHEAD:
                yield _tail_row(
                    split,
                    head,
                    position,
                    f"{left} bytes after the last batch, fewer than the 12-byte batch prefix",
                )
                return
            buf, at = window.get(position, LOG_OVERHEAD)
            base_offset, length = PREFIX.unpack_from(buf, at)
            if not MIN_BATCH_LENGTH <= length <= MAX_BATCH_LENGTH:
                yield _error_row(
                    head,
                    position,
                    CORRUPT,
                    f"{what}: batch at position {position} (offset {base_offset}): length "
                    f"{length} is outside {MIN_BATCH_LENGTH}..{MAX_BATCH_LENGTH}",
                    base_offset=base_offset,
                )
                resumed = _resync(window, position + 1, end)
                if resumed is None:
                    return
                position = resumed
                continue
            total = LOG_OVERHEAD + length
            if position + total > size:
                yield _tail_row(
                    split,
                    head,
                    position,
                    f"batch at offset {base_offset} declares {total} bytes, {left} are left in the file",
                    base_offset=base_offset,
                )
                return
            buf, at = window.get(position, total)
            try:
                batch = decode_batch_at(buf, at, at + total, position, what)
            except DecodeError as exc:
                epoch = HEADER.unpack_from(buf, at)[2] if total >= HEADER.size else None
                yield _error_row(head, position, CORRUPT, str(exc), base_offset=base_offset, epoch=epoch)
                following = position + total
                if following >= size or _valid_batch_at(window, following):
                    position = following
                    continue
                resumed = _resync(window, position + 1, end)
                if resumed is None:
                    return
                position = resumed
                continue
            yield from batch_rows(batch, head, with_json=with_json)
            position += total
    finally:
        os.close(fd)


def _tail_row(
    split: FileSplit, head: Row, position: int, message: str, *, base_offset: int | None = None
) -> Row:
    if split.kind == "segment" and split.newest_segment:
        return _error_row(
            head,
            position,
            TORN_TAIL,
            f"{split.path}: torn tail at position {position} (a crash during an append): {message}",
            base_offset=base_offset,
        )
    what = "snapshot" if split.kind == SNAPSHOT else split.kind
    return _error_row(
        head,
        position,
        CORRUPT,
        f"{split.path}: {what} is truncated at position {position}: {message}",
        base_offset=base_offset,
    )
