"""The runtime's metadata image: features, transactions, kraft.version, snapshots, bounded replay."""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records import ApiMessageAndVersion, SnapshotId, control_batch, metadata_batches
from reference_server.image import ImageLoader, MetadataImage

from .fakes import MemoryLog


def append(log: MemoryLog, *records: Struct) -> None:
    for batch in metadata_batches(log.end_offset(), 1, 0, [ApiMessageAndVersion(r, 0) for r in records]):
        log.append(batch)


def feature(name: str, level: int) -> messages.FeatureLevelRecord:
    return messages.FeatureLevelRecord(name=name, feature_level=level)


def test_features_apply_only_below_the_committed_offset() -> None:
    log = MemoryLog()
    append(log, feature("metadata.version", 21), messages.NoOpRecord())
    append(log, feature("group.version", 1))
    loader = ImageLoader(log)
    assert loader.catch_up(1)
    assert loader.image.metadata_version == 21 and loader.image.highest_offset == 0
    assert loader.catch_up(3)
    assert loader.image.finalized_features() == {"metadata.version": 21, "group.version": 1}
    assert loader.image.highest_offset == 2


def test_transactions_apply_at_end_and_vanish_at_abort() -> None:
    log = MemoryLog()
    append(log, messages.BeginTransactionRecord(name="Bootstrap records"), feature("metadata.version", 29))
    loader = ImageLoader(log)
    loader.catch_up(log.end_offset())
    assert loader.image.metadata_version is None and loader.image.transaction_start_offset == 0
    append(log, messages.AbortTransactionRecord(reason="Controller failover"),
           messages.BeginTransactionRecord(name="Bootstrap records"), feature("metadata.version", 28),
           feature("share.version", 1), messages.EndTransactionRecord())
    loader.catch_up(log.end_offset())
    assert loader.image.finalized_features() == {"metadata.version": 28, "share.version": 1}
    assert loader.image.transaction_start_offset == -1


def test_kraft_version_from_control_records_and_snapshot() -> None:
    log = MemoryLog()
    log.snapshot_id = SnapshotId(0, 0)
    log.snapshot_data = [control_batch(0, 0, 0, [messages.SnapshotHeaderRecord(),
                                                 messages.KRaftVersionRecord(k_raft_version=1)]),
                         control_batch(2, 0, 0, [messages.SnapshotFooterRecord()])]
    loader = ImageLoader(log)
    assert loader.catch_up(0)
    assert loader.image.kraft_version == 1
    assert loader.image.finalized_features() == {"kraft.version": 1}


def test_snapshot_past_the_applied_offset_replaces_the_image() -> None:
    log = MemoryLog()
    append(log, feature("metadata.version", 20))
    loader = ImageLoader(log)
    loader.catch_up(1)
    snapshot = [control_batch(0, 3, 0, [messages.SnapshotHeaderRecord()]),
                *metadata_batches(1, 3, 0, [ApiMessageAndVersion(feature("metadata.version", 29), 0)]),
                control_batch(2, 3, 0, [messages.SnapshotFooterRecord()])]
    log.batches_.clear()
    log.snapshot_id, log.snapshot_data, log.start = SnapshotId(500, 3), snapshot, 500
    append(log, feature("group.version", 1))
    assert loader.catch_up(501)
    assert loader.image.finalized_features() == {"metadata.version": 29, "group.version": 1}
    assert loader.image.next_offset == 501


def test_replay_is_bounded_by_the_budget() -> None:
    log = MemoryLog()
    for _ in range(10):
        append(log, messages.NoOpRecord())
    loader = ImageLoader(log)
    assert not loader.catch_up(10, budget_bytes=1)
    assert loader.image.next_offset == 1
    while not loader.catch_up(10, budget_bytes=1):
        pass
    assert loader.image.next_offset == 10


def test_reset_forgets_everything() -> None:
    image = MetadataImage()
    image.features["metadata.version"] = 7
    image.kraft_version = 1
    image.next_offset = 10
    image.reset()
    assert (image.features, image.kraft_version, image.next_offset) == ({}, 0, 0)
