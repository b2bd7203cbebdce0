"""Helpers for the storage and start-up tests: batches as KRaft writes them, snapshot files, and a
directory laid out as ``kafka-storage format`` leaves it; and the malformed hosts that the peer client
and the broker registration refuse."""

from __future__ import annotations

from pathlib import Path

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    RecordBatch,
    SnapshotId,
    control_batch,
    data_batch,
    encode_batch,
    metadata_batches,
)
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion
from kafka_admin_kraft.storage import (
    InitialController,
    MetaProperties,
    bootstrap_records,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
    write_meta_properties,
)

T0 = 1_700_000_000_000
CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"
DIR_IDS = [Uuid.from_string(text) for text in ("3Db5QLSqSZieL3rJBUUegA", "b8tRS7h4TJ2Vt43Dp85v2A",
                                                "J8aAPcfLQt2bqs1JT_rMgQ")]
BAD_HOSTS = ["12..0.0.1", "a" * 300, "n4\x00evil"]
"""Hosts from outside the node that are no valid host name or IP address."""


def noop_batch(base_offset: int, epoch: int, count: int = 1, *, timestamp: int = T0) -> RecordBatch:
    """A data batch of ``count`` NoOpRecords, as the active controller appends them."""
    records = [ApiMessageAndVersion(messages.NoOpRecord(), 0)] * count
    return metadata_batches(base_offset, epoch, timestamp, records)[0]


def value_batch(base_offset: int, epoch: int, sizes: list[int], *, timestamp: int = T0) -> RecordBatch:
    """A data batch with opaque values of the given sizes (the log does not decode values)."""
    return data_batch(base_offset, epoch, timestamp, [bytes([index % 251]) * size
                                                      for index, size in enumerate(sizes)])


def leader_change_batch(base_offset: int, epoch: int, leader: int = 1) -> RecordBatch:
    return control_batch(base_offset, epoch, T0, [messages.LeaderChangeMessage(
        version=0, leader_id=leader, voters=[messages.LeaderChangeMessage.Voter(voter_id=leader)],
        granting_voters=[messages.LeaderChangeMessage.Voter(voter_id=leader)])])


def snapshot_batches(snapshot_id: SnapshotId, *, data: bool = True) -> list[RecordBatch]:
    """A small snapshot: header, one data batch (optional), footer; offsets from 0."""
    header = control_batch(0, snapshot_id.epoch, T0, [
        messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=T0)])
    body = [noop_batch(1, snapshot_id.epoch, 2)] if data else []
    footer = control_batch(1 + 2 * len(body), snapshot_id.epoch, T0,
                           [messages.SnapshotFooterRecord(version=0)])
    return [header, *body, footer]


def snapshot_bytes(snapshot_id: SnapshotId, *, data: bool = True) -> bytes:
    return b"".join(encode_batch(batch) for batch in snapshot_batches(snapshot_id, data=data))


def format_directory(directory: Path, *, node_id: int, directory_id: Uuid | None,
                     cluster_id: str = CLUSTER_ID, metadata_version: int = 29,
                     features: dict[str, int] | None = None,
                     controllers: list[InitialController] | None = None, listener: str = "CONTROLLER",
                     bootstrap_checkpoint: bool = True) -> Path:
    """What ``kafka-storage format`` writes: meta.properties (keys in JDK 17 hash order, as Kafka 3.9/4.x
    on JDK 17 writes them), bootstrap.checkpoint, and for a dynamic quorum the bootstrap snapshot."""
    directory.mkdir(parents=True, exist_ok=True)
    write_meta_properties(directory, MetaProperties(1, cluster_id, node_id, directory_id), key_order="hash")
    if bootstrap_checkpoint:
        write_bootstrap_checkpoint(directory, bootstrap_records(metadata_version, features or {}),
                                   timestamp_ms=T0)
    if controllers:
        write_bootstrap_snapshot(directory, controllers, listener, timestamp_ms=T0)
    return directory
