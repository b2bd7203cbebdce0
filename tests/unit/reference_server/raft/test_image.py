"""The committed metadata image: compaction, transactions, records kept by reference, broker and
controller registrations."""

from __future__ import annotations

from simulation.memory import MemoryLog

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataRecord,
    SnapshotId,
    decode_metadata_record,
    metadata_batches,
)
from kafka_admin_kraft_server.raft.image import SnapshotImage
from unit.reference_server.handlers.handlers_testlib import INCARNATION_A, INCARNATION_B, RECORD
from unit.reference_server.raft.image_testlib import config, feature


def record(message: Struct) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(message, 0)


def append(log: MemoryLog, epoch: int, *records: MetadataRecord) -> None:
    for batch in metadata_batches(log.end_offset(), epoch, 0, list(records)):
        log.append(batch)


def apply_all(image: SnapshotImage, log: MemoryLog) -> None:
    for batch in log.batches(image.next_offset):
        image.apply_batch(batch)


def read(log: MemoryLog):  # type: ignore[no-untyped-def]
    def source(snapshot: SnapshotId | None, first: int):  # type: ignore[no-untyped-def]
        return log.batches(first) if snapshot is None else log.snapshot_batches(snapshot)
    return source


def test_compaction_keeps_latest_per_key_and_others_by_reference_in_log_order() -> None:
    log = MemoryLog()
    topic = Uuid(bytes(15) + b"\x01")
    append(log, 1, record(feature("metadata.version", 20)), config(1), record(messages.NoOpRecord()),
           record(messages.TopicRecord(name="a", topic_id=topic)), config(2))
    append(log, 1, record(messages.TopicRecord(name="b", topic_id=topic)), config(3),
           record(feature("group.version", 1)), record(feature("group.version", 0)))
    image = SnapshotImage()
    apply_all(image, log)
    assert image.feature_levels() == {"metadata.version": 20}
    assert image.other_count() == 3 and image.keyed_count() == 2
    assert [run.source for run in image.other_runs()] == [None, None, None]  # not kept in memory
    values = [decode_metadata_record(value) for value in image.values(read(log))]
    assert values[0] == record(feature("metadata.version", 20))
    assert values[1] == record(messages.TopicRecord(name="b", topic_id=topic))
    assert values[2:] == [config(1), config(2), config(3)]


def test_transactions_apply_at_end_and_vanish_at_abort() -> None:
    log = MemoryLog()
    append(log, 1, record(messages.BeginTransactionRecord(name="Bootstrap records")),
           record(feature("metadata.version", 29)), config(1))
    image = SnapshotImage()
    apply_all(image, log)
    assert image.metadata_version is None and image.transaction_start_offset == 0 and image.in_transaction
    append(log, 1, record(messages.AbortTransactionRecord(reason="Controller failover")),
           record(messages.BeginTransactionRecord(name="Bootstrap records")),
           record(feature("metadata.version", 28)), config(2), record(feature("share.version", 1)),
           record(messages.EndTransactionRecord()))
    apply_all(image, log)
    assert image.feature_levels() == {"metadata.version": 28, "share.version": 1}
    assert image.transaction_start_offset == -1 and not image.in_transaction
    assert [decode_metadata_record(v) for v in image.values(read(log))][-1:] == [config(2)]


def broker(broker_id: int, epoch: int) -> ApiMessageAndVersion:
    R = messages.RegisterBrokerRecord
    endpoint = R.BrokerEndpoint(name="BROKER", host="h", port=9092, security_protocol=0)
    return ApiMessageAndVersion(R(broker_id=broker_id, incarnation_id=Uuid(bytes(15) + b"\x07"),
                                  broker_epoch=epoch, end_points=[endpoint], fenced=True), 3)


def test_fencing_records_change_the_registration_and_vanish() -> None:
    """BrokerRegistrationChangeRecord (and the older Fence/UnfenceBrokerRecord) flip Fenced on the
    registration with the same broker epoch; the snapshot holds the registrations as they stand."""
    log = MemoryLog()
    change = messages.BrokerRegistrationChangeRecord
    append(log, 1, broker(1, 10), broker(2, 11), record(change(broker_id=1, broker_epoch=10, fenced=-1)),
           record(change(broker_id=2, broker_epoch=99, fenced=-1)),  # another epoch: ignored
           record(messages.UnfenceBrokerRecord(id=2, epoch=11)),
           record(messages.FenceBrokerRecord(id=2, epoch=11)),
           record(change(broker_id=3, broker_epoch=1, fenced=-1)))  # unknown broker: ignored
    image = SnapshotImage()
    apply_all(image, log)
    assert [(b.broker_id, b.fenced) for b in image.broker_registrations()] == [(1, False), (2, True)]
    values = [decode_metadata_record(v) for v in image.values(read(log))]
    assert [(r.message.broker_id, r.message.fenced, r.version) for r in values  # type: ignore[union-attr]
            if isinstance(r, ApiMessageAndVersion)] == [(1, False, 3), (2, True, 3)]
    assert image.other_count() == 0
    # A new registration replaces the old one, fenced again.
    append(log, 1, broker(1, 20))
    apply_all(image, log)
    assert [(b.broker_id, b.broker_epoch, b.fenced) for b in image.broker_registrations()] == [
        (1, 20, True), (2, 11, True)]


def controller_record(controller_id: int, incarnation: Uuid, host: str = "h",
                      port: int = 9093) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(RECORD(controller_id=controller_id, incarnation_id=incarnation, end_points=[
        RECORD.ControllerEndpoint(name="CONTROLLER", host=host, port=port, security_protocol=0)]), 0)


def test_the_image_keeps_the_latest_registration_per_controller_and_snapshots_carry_them() -> None:
    log = MemoryLog()
    append(log, 1, controller_record(2, INCARNATION_A), controller_record(1, INCARNATION_A, port=1))
    append(log, 1, controller_record(1, INCARNATION_B, port=2),
           ApiMessageAndVersion(messages.BeginTransactionRecord(name="t"), 0),
           controller_record(3, INCARNATION_A),
           ApiMessageAndVersion(messages.AbortTransactionRecord(reason="Controller failover"), 0))
    image = SnapshotImage()
    for batch in log.batches(0):
        image.apply_batch(batch)
    latest = [(r.controller_id, r.incarnation_id, r.end_points[0].port)
              for r in image.controller_registrations()]
    assert latest == [(1, INCARNATION_B, 2), (2, INCARNATION_A, 9093)]  # 3 was in an aborted transaction
    assert image.broker_registrations() == []

    values = list(image.values(lambda source, first: log.batches(first)))
    assert [decode_metadata_record(v) for v in values] == [controller_record(2, INCARNATION_A),
                                                           controller_record(1, INCARNATION_B, port=2)]
    snapshot = SnapshotId(image.next_offset, 1)
    loaded = SnapshotImage()
    loaded.load_snapshot(snapshot, metadata_batches(0, 1, 0, [decode_metadata_record(v) for v in values]))
    assert loaded.controller_registrations() == image.controller_registrations()


def test_unregistration_records_remove_the_registration_and_vanish() -> None:
    """UnregisterBrokerRecord and UnregisterControllerRecord (KIP-1312) drop the registration whatever
    its epoch or incarnation, as Kafka's ClusterDelta does, in the log and when a snapshot is loaded;
    a snapshot written afterwards holds neither the registration nor the record. Inside an aborted
    transaction they change nothing."""
    log = MemoryLog()
    append(log, 1, broker(1, 10), broker(2, 11), controller_record(3, INCARNATION_A),
           controller_record(4, INCARNATION_A))
    append(log, 1, record(messages.UnregisterBrokerRecord(broker_id=1, broker_epoch=99)),
           record(messages.UnregisterControllerRecord(controller_id=3)),
           record(messages.BeginTransactionRecord(name="t")),
           record(messages.UnregisterControllerRecord(controller_id=4)),
           record(messages.UnregisterBrokerRecord(broker_id=2, broker_epoch=11)),
           record(messages.AbortTransactionRecord(reason="Controller failover")),
           record(messages.UnregisterControllerRecord(controller_id=5)))  # none registered: no-op
    image = SnapshotImage()
    apply_all(image, log)
    assert [b.broker_id for b in image.broker_registrations()] == [2]
    assert [c.controller_id for c in image.controller_registrations()] == [4]
    assert image.other_count() == 0
    values = [decode_metadata_record(v) for v in image.values(read(log))]
    assert values == [broker(2, 11), controller_record(4, INCARNATION_A)]

    # The same records replayed on top of a snapshot that still holds the registrations.
    snapshot = SnapshotId(4, 1)
    loaded = SnapshotImage()
    loaded.load_snapshot(snapshot, metadata_batches(0, 1, 0, [broker(1, 10), broker(2, 11),
                                                             controller_record(3, INCARNATION_A),
                                                             controller_record(4, INCARNATION_A)]))
    for batch in log.batches(4):
        loaded.apply_batch(batch)
    assert loaded.broker_registrations() == image.broker_registrations()
    assert loaded.controller_registrations() == image.controller_registrations()
    # A registration that comes back after its removal (a running controller registers again) stays.
    append(log, 1, controller_record(3, INCARNATION_B))
    apply_all(image, log)
    assert [(c.controller_id, c.incarnation_id) for c in image.controller_registrations()] == [
        (3, INCARNATION_B), (4, INCARNATION_A)]


def acl_record(acl_id: int, name: str) -> ApiMessageAndVersion:
    return record(messages.AccessControlEntryRecord(
        id=Uuid(bytes(15) + bytes([acl_id])), resource_type=2, resource_name=name, pattern_type=3,
        principal="User:alice", host="*", operation=3, permission_type=3))


def test_acls_are_kept_by_id_removed_by_id_and_snapshotted() -> None:
    """AccessControlEntryRecord per ACL id; RemoveAccessControlEntryRecord drops it and vanishes (Kafka's
    AclsDelta); the snapshot written afterwards holds the ACLs that stand. ``acls`` is the same mapping
    until an ACL changes."""
    log = MemoryLog()
    append(log, 1, acl_record(1, "a"), acl_record(2, "b"), acl_record(3, "c"))
    image = SnapshotImage()
    apply_all(image, log)
    first = image.acls()
    assert sorted(r.resource_name for r in first.values()) == ["a", "b", "c"]
    assert image.acls() is first
    append(log, 1, record(messages.RemoveAccessControlEntryRecord(id=Uuid(bytes(15) + b"\x02"))),
           record(messages.BeginTransactionRecord(name="t")),
           record(messages.RemoveAccessControlEntryRecord(id=Uuid(bytes(15) + b"\x03"))),
           record(messages.AbortTransactionRecord(reason="Controller failover")),
           record(messages.NoOpRecord()))
    apply_all(image, log)
    assert image.acls() is not first
    assert sorted(r.resource_name for r in image.acls().values()) == ["a", "c"]
    assert image.other_count() == 0
    values = [decode_metadata_record(v) for v in image.values(read(log))]
    assert values == [acl_record(1, "a"), acl_record(3, "c")]
    loaded = SnapshotImage()
    loaded.load_snapshot(SnapshotId(log.end_offset(), 1), metadata_batches(0, 1, 0, values))
    assert loaded.acls() == image.acls()
