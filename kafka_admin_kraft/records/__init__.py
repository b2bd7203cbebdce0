"""Record batches, control and metadata records, log segments and snapshot files.

One implementation of Kafka's on-disk record formats, shared by the storage tool, the reference
server and the audit pipeline.

The names below load on first use, so that a tool needing one module of the package (the dump
tool: the batch format) does not load them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_admin_kraft.lazy import lazy_names

if TYPE_CHECKING:
    from kafka_admin_kraft.records.batch import Compression as Compression
    from kafka_admin_kraft.records.batch import Header as Header
    from kafka_admin_kraft.records.batch import Record as Record
    from kafka_admin_kraft.records.batch import RecordBatch as RecordBatch
    from kafka_admin_kraft.records.batch import TimestampType as TimestampType
    from kafka_admin_kraft.records.batch import UnsupportedCompressionError as UnsupportedCompressionError
    from kafka_admin_kraft.records.batch import decode_batch_bytes as decode_batch_bytes
    from kafka_admin_kraft.records.batch import encode_batch as encode_batch
    from kafka_admin_kraft.records.batch import make_attributes as make_attributes
    from kafka_admin_kraft.records.builder import MAX_BATCH_SIZE as MAX_BATCH_SIZE
    from kafka_admin_kraft.records.builder import control_batch as control_batch
    from kafka_admin_kraft.records.builder import data_batch as data_batch
    from kafka_admin_kraft.records.builder import metadata_batches as metadata_batches
    from kafka_admin_kraft.records.control import ControlRecord as ControlRecord
    from kafka_admin_kraft.records.control import ControlRecordType as ControlRecordType
    from kafka_admin_kraft.records.control import EndTxnMarker as EndTxnMarker
    from kafka_admin_kraft.records.control import UnknownControlValue as UnknownControlValue
    from kafka_admin_kraft.records.control import decode_control_record as decode_control_record
    from kafka_admin_kraft.records.control import encode_control_record as encode_control_record
    from kafka_admin_kraft.records.log_dir import METADATA_PARTITION_DIR as METADATA_PARTITION_DIR
    from kafka_admin_kraft.records.log_dir import MetadataLogDir as MetadataLogDir
    from kafka_admin_kraft.records.metadata import ApiMessageAndVersion as ApiMessageAndVersion
    from kafka_admin_kraft.records.metadata import MetadataRecord as MetadataRecord
    from kafka_admin_kraft.records.metadata import RawMetadataRecord as RawMetadataRecord
    from kafka_admin_kraft.records.metadata import decode_control_batch as decode_control_batch
    from kafka_admin_kraft.records.metadata import decode_metadata_batch as decode_metadata_batch
    from kafka_admin_kraft.records.metadata import decode_metadata_record as decode_metadata_record
    from kafka_admin_kraft.records.metadata import encode_metadata_record as encode_metadata_record
    from kafka_admin_kraft.records.metadata import iter_metadata_records as iter_metadata_records
    from kafka_admin_kraft.records.metadata import read_frame as read_frame
    from kafka_admin_kraft.records.reader import BatchReader as BatchReader
    from kafka_admin_kraft.records.reader import TornTail as TornTail
    from kafka_admin_kraft.records.reader import decode_batches as decode_batches
    from kafka_admin_kraft.records.segment import RecoveryResult as RecoveryResult
    from kafka_admin_kraft.records.segment import SegmentFiles as SegmentFiles
    from kafka_admin_kraft.records.segment import SegmentWriter as SegmentWriter
    from kafka_admin_kraft.records.segment import list_segments as list_segments
    from kafka_admin_kraft.records.segment import read_offset_index as read_offset_index
    from kafka_admin_kraft.records.segment import read_time_index as read_time_index
    from kafka_admin_kraft.records.segment import recover_segment as recover_segment
    from kafka_admin_kraft.records.snapshot import SnapshotId as SnapshotId
    from kafka_admin_kraft.records.snapshot import SnapshotStreamChecker as SnapshotStreamChecker
    from kafka_admin_kraft.records.snapshot import SnapshotWriter as SnapshotWriter
    from kafka_admin_kraft.records.snapshot import list_snapshots as list_snapshots
    from kafka_admin_kraft.records.snapshot import parse_snapshot_file_name as parse_snapshot_file_name
    from kafka_admin_kraft.records.snapshot import read_snapshot as read_snapshot

_LAZY = {
    "ApiMessageAndVersion": "kafka_admin_kraft.records.metadata",
    "BatchReader": "kafka_admin_kraft.records.reader",
    "Compression": "kafka_admin_kraft.records.batch",
    "ControlRecord": "kafka_admin_kraft.records.control",
    "ControlRecordType": "kafka_admin_kraft.records.control",
    "EndTxnMarker": "kafka_admin_kraft.records.control",
    "Header": "kafka_admin_kraft.records.batch",
    "MAX_BATCH_SIZE": "kafka_admin_kraft.records.builder",
    "METADATA_PARTITION_DIR": "kafka_admin_kraft.records.log_dir",
    "MetadataLogDir": "kafka_admin_kraft.records.log_dir",
    "MetadataRecord": "kafka_admin_kraft.records.metadata",
    "RawMetadataRecord": "kafka_admin_kraft.records.metadata",
    "Record": "kafka_admin_kraft.records.batch",
    "RecordBatch": "kafka_admin_kraft.records.batch",
    "RecoveryResult": "kafka_admin_kraft.records.segment",
    "SegmentFiles": "kafka_admin_kraft.records.segment",
    "SegmentWriter": "kafka_admin_kraft.records.segment",
    "SnapshotId": "kafka_admin_kraft.records.snapshot",
    "SnapshotStreamChecker": "kafka_admin_kraft.records.snapshot",
    "SnapshotWriter": "kafka_admin_kraft.records.snapshot",
    "TimestampType": "kafka_admin_kraft.records.batch",
    "TornTail": "kafka_admin_kraft.records.reader",
    "UnknownControlValue": "kafka_admin_kraft.records.control",
    "UnsupportedCompressionError": "kafka_admin_kraft.records.batch",
    "control_batch": "kafka_admin_kraft.records.builder",
    "data_batch": "kafka_admin_kraft.records.builder",
    "decode_batch_bytes": "kafka_admin_kraft.records.batch",
    "decode_batches": "kafka_admin_kraft.records.reader",
    "decode_control_batch": "kafka_admin_kraft.records.metadata",
    "decode_control_record": "kafka_admin_kraft.records.control",
    "decode_metadata_batch": "kafka_admin_kraft.records.metadata",
    "decode_metadata_record": "kafka_admin_kraft.records.metadata",
    "encode_batch": "kafka_admin_kraft.records.batch",
    "encode_control_record": "kafka_admin_kraft.records.control",
    "encode_metadata_record": "kafka_admin_kraft.records.metadata",
    "iter_metadata_records": "kafka_admin_kraft.records.metadata",
    "list_segments": "kafka_admin_kraft.records.segment",
    "list_snapshots": "kafka_admin_kraft.records.snapshot",
    "make_attributes": "kafka_admin_kraft.records.batch",
    "metadata_batches": "kafka_admin_kraft.records.builder",
    "parse_snapshot_file_name": "kafka_admin_kraft.records.snapshot",
    "read_frame": "kafka_admin_kraft.records.metadata",
    "read_offset_index": "kafka_admin_kraft.records.segment",
    "read_snapshot": "kafka_admin_kraft.records.snapshot",
    "read_time_index": "kafka_admin_kraft.records.segment",
    "recover_segment": "kafka_admin_kraft.records.segment",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
