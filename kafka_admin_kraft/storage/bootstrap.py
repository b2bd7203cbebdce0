"""The files ``kafka-storage format`` writes besides meta.properties, in the two layouts of Kafka's tool.

Kafka 4.3 and older (``BootstrapDirectory``, ``Formatter.writeDynamicQuorumSnapshot``):

* ``bootstrap.checkpoint`` (every formatted directory): snapshot-format batches, offsets from 0,
  epoch 0 - a control batch with SnapshotHeaderRecord(LastContainedLogTimestamp 0), the bootstrap
  metadata records (FeatureLevelRecord metadata.version first, then the other features above level 0
  sorted by name, then any SCRAM records) in one data batch per 8 MiB, and a control batch with
  SnapshotFooterRecord. kraft.version never gets a FeatureLevelRecord.
* ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`` (dynamic quorums with initial
  controllers only): one control batch with SnapshotHeaderRecord(format time), KRaftVersionRecord(1)
  and VotersRecord (the initial controllers), then a control batch with SnapshotFooterRecord.

Kafka 4.4 (KIP-1170; apache/kafka PR #20707, PR #22418): no ``bootstrap.checkpoint``; on a controller
the metadata directory's zero checkpoint is always written and holds the bootstrap records too.
``Formatter.writeBoostrapSnapshot`` builds it with ``RecordsSnapshotWriter``: the builder's control
batch (SnapshotHeaderRecord with the format time; from kraft.version 1 on a KRaftVersionRecord, then
the initial controllers' VotersRecord when there are any), the bootstrap records in one ``append``
call, which KRaft's ``BatchAccumulator`` keeps in a single batch (so at most 8 MiB of them, as KIP-1170
says), and the footer batch written by ``freeze``. :func:`zero_checkpoint_batches` lays out both
forms; :func:`read_zero_checkpoint_bootstrap` reads the records back.
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
from kafka_admin_kraft.records.batch import BATCH_HEADER_SIZE, RecordBatch, encode_batch
from kafka_admin_kraft.records.builder import (
    MAX_BATCH_SIZE,
    control_batch,
    data_batch,
    data_record_size,
    metadata_batches,
)
from kafka_admin_kraft.records.fsutil import atomic_write
from kafka_admin_kraft.records.log_dir import METADATA_PARTITION_DIR
from kafka_admin_kraft.records.metadata import (
    ApiMessageAndVersion,
    MetadataRecord,
    decode_control_batch,
    encode_metadata_record,
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


def _batch_size(values: Sequence[bytes]) -> int:
    return BATCH_HEADER_SIZE + sum(data_record_size(index, len(value)) for index, value in enumerate(values))


def bootstrap_batch_size(records: Sequence[MetadataRecord]) -> int:
    """Bytes of the single batch the zero checkpoint of Kafka 4.4 holds ``records`` in, header
    included: what KRaft's ``BatchAccumulator`` compares with its 8 MiB limit."""
    return _batch_size([encode_metadata_record(record) for record in records])


def zero_checkpoint_batches(records: Sequence[MetadataRecord] = (), *, kraft_version: int,
                            controllers: Sequence[InitialController] = (), listener_name: str = "",
                            timestamp_ms: int) -> list[RecordBatch]:
    """The zero checkpoint as ``RecordsSnapshotWriter`` lays it out, offsets from 0, epoch 0.

    The control batch holds SnapshotHeaderRecord(LastContainedLogTimestamp = ``timestamp_ms``), and
    from kraft.version 1 on KRaftVersionRecord, then VotersRecord when ``controllers`` are given (a
    voter set at kraft.version 0 is refused, as the writer's builder refuses it); ``records`` (Kafka
    4.4's bootstrap records, none in Kafka 4.3's file) follow in one data batch; the footer control
    batch ends it. Raises ValueError when the records do not fit in one 8 MiB batch."""
    if controllers and kraft_version == 0:
        raise ValueError("a voter set needs kraft.version 1")
    control: list[messages.SnapshotHeaderRecord | messages.KRaftVersionRecord | messages.VotersRecord] = [
        messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=timestamp_ms)]
    if kraft_version > 0:
        control.append(messages.KRaftVersionRecord(version=0, k_raft_version=kraft_version))
        if controllers:
            control.append(voters_record(controllers, listener_name))
    batches = [control_batch(0, 0, timestamp_ms, control)]
    if records:
        values = [encode_metadata_record(record) for record in records]
        size = _batch_size(values)
        if size > MAX_BATCH_SIZE:
            raise ValueError(f"The total record(s) size of {size} exceeds the maximum allowed batch size of "
                             f"{MAX_BATCH_SIZE}")
        batches.append(data_batch(batches[0].next_offset, 0, timestamp_ms, values))
    footer = control_batch(batches[-1].next_offset, 0, timestamp_ms,
                           [messages.SnapshotFooterRecord(version=0)])
    return [*batches, footer]


def write_zero_checkpoint(metadata_dir: str | os.PathLike[str], records: Sequence[MetadataRecord] = (), *,
                          kraft_version: int, controllers: Sequence[InitialController] = (),
                          listener_name: str = "", timestamp_ms: int | None = None) -> Path:
    """Write the (0, 0) snapshot of :func:`zero_checkpoint_batches` into
    ``<metadata dir>/__cluster_metadata-0`` (created if missing), through a ``.part`` file renamed once
    synced."""
    stamp = _now_ms() if timestamp_ms is None else timestamp_ms
    batches = zero_checkpoint_batches(records, kraft_version=kraft_version, controllers=controllers,
                                      listener_name=listener_name, timestamp_ms=stamp)
    partition_dir = Path(metadata_dir) / METADATA_PARTITION_DIR
    partition_dir.mkdir(parents=True, exist_ok=True)
    with SnapshotWriter(partition_dir, BOOTSTRAP_SNAPSHOT_ID) as writer:
        for batch in batches:
            writer.append(batch)
    return writer.path


def write_bootstrap_snapshot(metadata_dir: str | os.PathLike[str], controllers: Sequence[InitialController],
                             listener_name: str, *, timestamp_ms: int | None = None) -> Path:
    """Kafka 4.3's zero checkpoint of a dynamic quorum: kraft.version 1 and the initial voters, no
    metadata records."""
    if not controllers:
        raise ValueError("the bootstrap snapshot needs at least one initial controller")
    return write_zero_checkpoint(metadata_dir, kraft_version=KRAFT_VERSION_LATEST, controllers=controllers,
                                 listener_name=listener_name, timestamp_ms=timestamp_ms)


def read_bootstrap_voters(path: str | os.PathLike[str]) -> messages.VotersRecord | None:
    """The last VotersRecord of a snapshot file (the bootstrap snapshot holds exactly one)."""
    voters: messages.VotersRecord | None = None
    for batch in read_snapshot(path):
        if batch.is_control:
            for control in decode_control_batch(batch, what=os.fspath(path)):
                if isinstance(control.value, messages.VotersRecord):
                    voters = control.value
    return voters
