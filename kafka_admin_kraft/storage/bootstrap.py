"""The files ``kafka-storage format`` writes besides meta.properties.

``bootstrap.checkpoint`` (every formatted directory): snapshot-format batches, offsets from 0, epoch
0 - a control batch with SnapshotHeaderRecord(LastContainedLogTimestamp 0), the bootstrap metadata
records (FeatureLevelRecord metadata.version first, then the other features above level 0 sorted by
name, then any SCRAM records) in one data batch per 8 MiB, and a control batch with
SnapshotFooterRecord. kraft.version never gets a FeatureLevelRecord.

``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`` (dynamic quorums only): one
control batch with SnapshotHeaderRecord(format time), KRaftVersionRecord(1) and VotersRecord (the
initial controllers), then a control batch with SnapshotFooterRecord; no metadata records.

That is the layout of Kafka 4.3 and older, which this package writes. Kafka 4.4's formatter writes no
``bootstrap.checkpoint`` and puts the bootstrap records into the zero checkpoint instead, after its
control batch (KIP-1170, PR #20707); :func:`read_zero_checkpoint_bootstrap` reads them back.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from kafka_admin_kraft.features import KRAFT_VERSION, METADATA_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records.batch import RecordBatch, encode_batch
from kafka_admin_kraft.records.builder import MAX_BATCH_SIZE, control_batch, metadata_batches
from kafka_admin_kraft.records.fsutil import atomic_write
from kafka_admin_kraft.records.log_dir import METADATA_PARTITION_DIR
from kafka_admin_kraft.records.metadata import (
    ApiMessageAndVersion,
    MetadataRecord,
    decode_control_batch,
    iter_metadata_records,
)
from kafka_admin_kraft.records.snapshot import BOOTSTRAP_SNAPSHOT_ID, SnapshotWriter, read_snapshot
from kafka_admin_kraft.storage.errors import StorageFormatError

BOOTSTRAP_FILE: Final = "bootstrap.checkpoint"
KRAFT_VERSION_LATEST: Final = 1


def feature_level_record(name: str, level: int) -> ApiMessageAndVersion:
    """FeatureLevelRecord, always written at version 0."""
    return ApiMessageAndVersion(messages.FeatureLevelRecord(name=name, feature_level=level), 0)


def bootstrap_records(metadata_version: int, features: Mapping[str, int] | None = None,
                      extra_records: Sequence[MetadataRecord] = ()) -> list[MetadataRecord]:
    """The formatter's record list: metadata.version, other features above 0 by name, then extras.

    ``features`` may include metadata.version or kraft.version; both are ignored there.
    """
    records: list[MetadataRecord] = [feature_level_record(METADATA_VERSION, metadata_version)]
    for name in sorted(features or {}):
        level = (features or {})[name]
        if name not in (METADATA_VERSION, KRAFT_VERSION) and level > 0:
            records.append(feature_level_record(name, level))
    records.extend(extra_records)
    return records


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def bootstrap_checkpoint_batches(records: Sequence[MetadataRecord], *, timestamp_ms: int,
                                 max_batch_size: int = MAX_BATCH_SIZE) -> list[RecordBatch]:
    """Header control batch at offset 0, the records from offset 1, footer control batch last."""
    if not records:
        raise ValueError("bootstrap metadata needs at least the metadata.version record")
    header = control_batch(0, 0, timestamp_ms, [
        messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=0)])
    data = metadata_batches(1, 0, timestamp_ms, records, max_batch_size=max_batch_size)
    footer = control_batch(data[-1].next_offset, 0, timestamp_ms, [messages.SnapshotFooterRecord(version=0)])
    return [header, *data, footer]


def write_bootstrap_checkpoint(directory: str | os.PathLike[str], records: Sequence[MetadataRecord], *,
                               timestamp_ms: int | None = None) -> Path:
    """Write ``<directory>/bootstrap.checkpoint`` through ``.tmp``, fsync and rename."""
    stamp = _now_ms() if timestamp_ms is None else timestamp_ms
    batches = bootstrap_checkpoint_batches(records, timestamp_ms=stamp)
    data = b"".join(encode_batch(batch) for batch in batches)
    target = Path(directory) / BOOTSTRAP_FILE
    atomic_write(target, data)
    return target


@dataclass(frozen=True, slots=True)
class BootstrapMetadata:
    """The records of a bootstrap.checkpoint and the metadata.version among them."""

    records: list[MetadataRecord]
    metadata_version: int


def read_bootstrap_checkpoint(path: str | os.PathLike[str]) -> BootstrapMetadata:
    """Read a bootstrap.checkpoint (a file or the directory holding it); only data batches count and
    a metadata.version FeatureLevelRecord is required."""
    target = Path(path)
    if target.is_dir():
        target = target / BOOTSTRAP_FILE
    return _bootstrap_metadata(_data_records(target), str(target))


def read_zero_checkpoint_bootstrap(metadata_dir: str | os.PathLike[str]) -> BootstrapMetadata | None:
    """The bootstrap records Kafka 4.4's formatter writes into the zero checkpoint of the metadata
    directory (KIP-1170, PR #20707): its metadata records, after KRaft's control records. None when
    the file is absent or holds only control records (the layout of Kafka 4.3 and older); a
    metadata.version FeatureLevelRecord is required otherwise."""
    target = Path(metadata_dir) / METADATA_PARTITION_DIR / BOOTSTRAP_SNAPSHOT_ID.file_name
    if not target.is_file():
        return None
    records = _data_records(target)
    return _bootstrap_metadata(records, str(target)) if records else None


def _data_records(target: Path) -> list[MetadataRecord]:
    return list(iter_metadata_records(read_snapshot(target, check_structure=False), what=str(target)))


def _bootstrap_metadata(records: list[MetadataRecord], what: str) -> BootstrapMetadata:
    for record in records:
        if (isinstance(record, ApiMessageAndVersion)
                and isinstance(record.message, messages.FeatureLevelRecord)
                and record.message.name == METADATA_VERSION):
            return BootstrapMetadata(records, record.message.feature_level)
    raise StorageFormatError("No FeatureLevelRecord for metadata.version was found in the bootstrap "
                             "metadata", what=what)


@dataclass(frozen=True, slots=True)
class InitialController:
    """One entry of ``--initial-controllers``: ``<node id>@<host>:<port>:<directory id>``."""

    node_id: int
    host: str
    port: int
    directory_id: Uuid


def voters_record(controllers: Sequence[InitialController], listener_name: str) -> messages.VotersRecord:
    """The VotersRecord the formatter writes: one endpoint per voter, kraft.version 0..1 supported."""
    return messages.VotersRecord(version=0, voters=[
        messages.VotersRecord.Voter(
            voter_id=controller.node_id,
            voter_directory_id=controller.directory_id,
            endpoints=[messages.VotersRecord.Endpoint(name=listener_name, host=controller.host,
                                                      port=controller.port)],
            k_raft_version_feature=messages.VotersRecord.KRaftVersionFeature(
                min_supported_version=0, max_supported_version=KRAFT_VERSION_LATEST))
        for controller in controllers])


def bootstrap_snapshot_batches(controllers: Sequence[InitialController], listener_name: str, *,
                               timestamp_ms: int) -> list[RecordBatch]:
    """Control batch (header, kraft.version 1, voters) at offsets 0-2, footer batch at offset 3."""
    if not controllers:
        raise ValueError("the bootstrap snapshot needs at least one initial controller")
    first = control_batch(0, 0, timestamp_ms, [
        messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=timestamp_ms),
        messages.KRaftVersionRecord(version=0, k_raft_version=KRAFT_VERSION_LATEST),
        voters_record(controllers, listener_name),
    ])
    footer = control_batch(first.next_offset, 0, timestamp_ms, [messages.SnapshotFooterRecord(version=0)])
    return [first, footer]


def write_bootstrap_snapshot(metadata_dir: str | os.PathLike[str], controllers: Sequence[InitialController],
                             listener_name: str, *, timestamp_ms: int | None = None) -> Path:
    """Write the (0, 0) snapshot into ``<metadata dir>/__cluster_metadata-0`` (created if missing)."""
    partition_dir = Path(metadata_dir) / METADATA_PARTITION_DIR
    partition_dir.mkdir(parents=True, exist_ok=True)
    stamp = _now_ms() if timestamp_ms is None else timestamp_ms
    with SnapshotWriter(partition_dir, BOOTSTRAP_SNAPSHOT_ID) as writer:
        for batch in bootstrap_snapshot_batches(controllers, listener_name, timestamp_ms=stamp):
            writer.append(batch)
    return writer.path


def read_bootstrap_voters(path: str | os.PathLike[str]) -> messages.VotersRecord | None:
    """The last VotersRecord of a snapshot file (the bootstrap snapshot holds exactly one)."""
    voters: messages.VotersRecord | None = None
    for batch in read_snapshot(path):
        if batch.is_control:
            for control in decode_control_batch(batch, what=os.fspath(path)):
                if isinstance(control.value, messages.VotersRecord):
                    voters = control.value
    return voters
