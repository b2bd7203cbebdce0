"""Record batches, control and metadata records, log segments and snapshot files.

One implementation of Kafka's on-disk record formats, shared by the storage tool, the reference
server and the audit pipeline.
"""

from kafka_admin_kraft.records.batch import (
    Compression,
    Header,
    Record,
    RecordBatch,
    TimestampType,
    UnsupportedCompressionError,
    decode_batch_bytes,
    encode_batch,
    make_attributes,
)
from kafka_admin_kraft.records.builder import (
    MAX_BATCH_SIZE,
    control_batch,
    data_batch,
    metadata_batches,
)
from kafka_admin_kraft.records.control import (
    ControlRecord,
    ControlRecordType,
    EndTxnMarker,
    UnknownControlValue,
    decode_control_record,
    encode_control_record,
)
from kafka_admin_kraft.records.log_dir import METADATA_PARTITION_DIR, MetadataLogDir
from kafka_admin_kraft.records.metadata import (
    ApiMessageAndVersion,
    MetadataRecord,
    RawMetadataRecord,
    decode_control_batch,
    decode_metadata_batch,
    decode_metadata_record,
    encode_metadata_record,
    iter_metadata_records,
    read_frame,
)
from kafka_admin_kraft.records.reader import BatchReader, TornTail, decode_batches
from kafka_admin_kraft.records.segment import (
    RecoveryResult,
    SegmentFiles,
    SegmentWriter,
    list_segments,
    read_offset_index,
    read_time_index,
    recover_segment,
)
from kafka_admin_kraft.records.snapshot import (
    SnapshotId,
    SnapshotStreamChecker,
    SnapshotWriter,
    list_snapshots,
    parse_snapshot_file_name,
    read_snapshot,
)

__all__ = [
    "MAX_BATCH_SIZE",
    "METADATA_PARTITION_DIR",
    "ApiMessageAndVersion",
    "BatchReader",
    "Compression",
    "ControlRecord",
    "ControlRecordType",
    "EndTxnMarker",
    "Header",
    "MetadataLogDir",
    "MetadataRecord",
    "RawMetadataRecord",
    "Record",
    "RecordBatch",
    "RecoveryResult",
    "SegmentFiles",
    "SegmentWriter",
    "SnapshotId",
    "SnapshotStreamChecker",
    "SnapshotWriter",
    "TimestampType",
    "TornTail",
    "UnknownControlValue",
    "UnsupportedCompressionError",
    "control_batch",
    "data_batch",
    "decode_batch_bytes",
    "decode_batches",
    "decode_control_batch",
    "decode_control_record",
    "decode_metadata_batch",
    "decode_metadata_record",
    "encode_batch",
    "encode_control_record",
    "encode_metadata_record",
    "iter_metadata_records",
    "list_segments",
    "list_snapshots",
    "make_attributes",
    "metadata_batches",
    "parse_snapshot_file_name",
    "read_frame",
    "read_offset_index",
    "read_snapshot",
    "read_time_index",
    "recover_segment",
]
