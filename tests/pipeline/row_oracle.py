"""The rows of a split built one tuple at a time, the plain way: every value decoded, every column
filled. It is the reader the columnar one replaced, kept as the oracle the columnar reader
(:mod:`kafka_admin_kraft.pipeline.columnar`) is checked against, and a helper turning Arrow record
batches back into tuples."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

from kafka_admin_kraft.pipeline.columnar import CONTROL_NAMES, RECORD_NAMES, Projection, read_arrow
from kafka_admin_kraft.pipeline.planning import FileSplit
from kafka_admin_kraft.pipeline.schema import (
    COLUMN_NAMES,
    FEATURE_LEVEL,
    KRAFT_VERSION,
    LEADER_CHANGE,
    UNDECODABLE,
    VOTERS,
)
from kafka_admin_kraft.pipeline.storage import NO_OPTIONS, StorageOptions
from kafka_admin_kraft.pipeline.walk import SplitError, walk_split
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records.batch import CONTROL_FLAG, RecordBatch
from kafka_admin_kraft.records.control import CONTROL_VALUE_VERSION, decode_control_record
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion, decode_metadata_record

Row = tuple[Any, ...]
NO_TYPED = (None, None, None, None, None, None)


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def _plain(value: object) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            key: (item.hex() if isinstance(item, bytes) else item)
            for key, item in dataclasses.asdict(value).items()
        }
    return str(value)


def _typed(record_type: str, message: Any) -> tuple[Any, ...]:
    if record_type == VOTERS:
        voters = message.voters
        ids = [v.voter_id for v in voters]
        return None, ids, [str(v.voter_directory_id) for v in voters], None, None, None
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
    return NO_TYPED


def _head(split: FileSplit) -> Row:
    return (
        split.cluster_id,
        split.node_id,
        split.directory_id,
        split.log_dir,
        split.path,
        split.kind,
        split.snapshot_end_offset,
        split.snapshot_epoch,
    )


def _error_row(head: Row, error: SplitError) -> Row:
    position, kind, message, base_offset, offset, epoch = error
    return (*head, position, base_offset, None, None, None, offset, epoch, None, None, None, None,
            None, None, *NO_TYPED, kind, message)


def _batch_rows(batch: RecordBatch, head: Row) -> Iterator[Row]:
    position = batch.position
    control = bool(batch.attributes & CONTROL_FLAG)

    def row(index: int | None, offset: int | None, timestamp: int, record_type: str | None,
            version: int | None, text: str | None, value: bytes | None, typed: tuple[Any, ...],
            error_kind: str | None = None, error: str | None = None) -> Row:
        return (*head, position, batch.base_offset, batch.last_offset, batch.crc, index, offset,
                batch.partition_leader_epoch, timestamp, control, record_type, version, text, value,
                *typed, error_kind, error)

    if not batch.records:
        yield row(None, None, batch.max_timestamp, None, None, None, None, NO_TYPED)
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
                    text = _json(value.to_dict())
                else:
                    typed = NO_TYPED
                    text = _json(_plain(value))
            else:
                meta = decode_metadata_record(record.value)
                version = meta.version
                if isinstance(meta, ApiMessageAndVersion):
                    record_type = meta.message.NAME
                    typed = _typed(record_type, meta.message) if record_type == FEATURE_LEVEL else NO_TYPED
                    text = _json(meta.message.to_dict())
                else:
                    record_type = RECORD_NAMES.get(meta.api_key, f"ApiKey{meta.api_key}")
                    typed = NO_TYPED
                    text = _json({"api_key": meta.api_key, "body_hex": meta.body.hex()})
        except (DecodeError, ValueError, IndexError) as exc:
            yield row(index, record.offset, record.timestamp, None, None, None, record.value, NO_TYPED,
                      UNDECODABLE,
                      f"{head[4]}: batch at position {position}, record at offset {record.offset}: {exc}")
            continue
        yield row(index, record.offset, record.timestamp, record_type, version, text, record.value, typed)


def oracle_rows(split: FileSplit) -> list[Row]:
    """Every row of ``split``, in :data:`~kafka_admin_kraft.pipeline.schema.COLUMNS` order."""
    head = _head(split)
    rows: list[Row] = []
    for item in walk_split(split):
        if isinstance(item, SplitError):
            rows.append(_error_row(head, item))
        else:
            rows.extend(_batch_rows(item, head))
    return rows


def columnar_rows(
    split: FileSplit, projection: Projection | None = None, options: StorageOptions = NO_OPTIONS
) -> list[Row]:
    """The rows the columnar reader gives for ``split``, as tuples in column order."""
    rows: list[Row] = []
    for batch in read_arrow(split, projection or Projection(), options):
        columns = [batch.column(name).to_pylist() for name in COLUMN_NAMES]
        rows.extend(zip(*columns, strict=True))
    return rows
