"""Records change the image as Kafka's deltas apply them; what Kafka's loader refuses is skipped and
reported."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_admin_kraft.image.model import MIGRATING_DIRECTORY, MetadataImage
from kafka_admin_kraft.image.replay import ImageBuilder, decode_record
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import RawMetadataRecord, encode_metadata_record
from unit.image.image_testlib import (
    TOPIC,
    Entry,
    acl,
    batches,
    broker,
    clear_elr,
    client_quota,
    config,
    controller,
    delegation_token,
    feature,
    partition,
    partition_change,
    producer_ids,
    record,
    remove_topic,
    scram,
    topic,
    voters,
)


def image_of(*groups: Sequence[Entry], last_offset: int | None = None) -> MetadataImage:
    builder = ImageBuilder(last_offset=last_offset)
    for batch in batches(groups):
        builder.apply_batch(batch)
    return builder.image


def test_features_finalize_and_level_zero_removes() -> None:
    image = image_of(
        [feature("metadata.version", 33), feature("group.version", 1)],
        [feature("transaction.version", 2)],
        [feature("group.version", 0)],
    )
    assert image.metadata_version == 33
    assert image.features == {"transaction.version": 2}
    assert image_of([feature("metadata.version", 5)]).metadata_version == 7  # pre-3.3-IV3 levels read as it


def test_broker_fencing_changes_need_the_registered_epoch() -> None:
    image = image_of([broker(1, 10)], [record(messages.UnfenceBrokerRecord(id=1, epoch=10))])
    assert image.brokers[1].fenced is False
    image = image_of(
        [broker(1, 10)],
        [record(messages.FenceBrokerRecord(id=1, epoch=9))],
        [record(messages.UnfenceBrokerRecord(id=2, epoch=1))],
    )
    assert image.brokers[1].fenced is True
    assert image.warnings == [
        "offset 1: tried to fence broker 1, but the given epoch, 9, did not match the current broker "
        "epoch, 10",
        "offset 2: tried to unfence broker 2, but that broker was not registered",
    ]


def test_registration_change_record() -> None:
    directory = Uuid.from_ints(5, 5)
    change = messages.BrokerRegistrationChangeRecord(
        broker_id=1, broker_epoch=10, fenced=-1, in_controlled_shutdown=1, log_dirs=[directory]
    )
    image = image_of([broker(1, 10)], [record(change, 2)])
    registration = image.brokers[1]
    assert (registration.fenced, registration.in_controlled_shutdown, registration.directories) == (
        False,
        True,
        (str(directory),),
    )
    bad = messages.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=7)
    assert "unknown value for fenced field: 7" in image_of([broker(1, 10)], [record(bad, 2)]).warnings[0]


def test_unregistering_removes_whatever_the_epoch() -> None:
    image = image_of(
        [broker(1, 10), controller(3)],
        [record(messages.UnregisterBrokerRecord(broker_id=1, broker_epoch=99))],
        [record(messages.UnregisterControllerRecord(controller_id=3))],
    )
    assert image.brokers == {} and image.controllers == {}


def test_partitions_merge_changes_as_partition_registration_merge() -> None:
    image = image_of(
        [topic("orders"), partition(0, [1, 2, 3], epoch=4)],
        [partition_change(0, isr=[1, 2])],
        [partition_change(0, leader=2, recovery=1)],
        [partition_change(0, replicas=[2, 3], elr=[3])],
    )
    state = image.topics[str(TOPIC)].partitions[0]
    assert state.replicas == (2, 3) and state.isr == (1, 2) and state.elr == (3,)
    assert (state.leader, state.leader_epoch, state.partition_epoch, state.leader_recovery_state) == (
        2,
        5,
        7,
        1,
    )
    assert state.directories == (MIGRATING_DIRECTORY,) * 2  # a record naming no directories: migrating


def test_clear_elr_empties_the_elr_through_a_merge() -> None:
    image = image_of(
        [topic("orders"), partition(0, [1, 2]), partition(1, [2, 1])],
        [partition_change(0, elr=[2])],
        [clear_elr("orders")],
        [clear_elr("missing")],
    )
    partitions = image.topics[str(TOPIC)].partitions
    assert partitions[0].elr == () and partitions[0].partition_epoch == 2
    assert partitions[1].partition_epoch == 0  # nothing to clear: untouched
    assert image.warnings == [
        "offset 5: Unable to clear elr for topic with name missing: no such topic found."
    ]


def test_changes_of_unknown_topics_and_partitions_are_skipped() -> None:
    image = image_of(
        [partition(0, [1])],
        [topic("orders")],
        [partition_change(3, isr=[1])],
        [remove_topic(Uuid.from_ints(1, 1))],
    )
    assert len(image.warnings) == 3
    assert "Unable to find partition" in image.warnings[1]


def test_removing_a_topic_removes_its_configs() -> None:
    image = image_of(
        [topic("orders"), partition(0, [1])],
        [config(2, "orders", "retention.ms", "1")],
        [config(4, "", "log.retention.ms", "5")],
        [remove_topic()],
    )
    assert image.topics == {}
    assert image.configs == {(4, ""): {"log.retention.ms": "5"}}


def test_configs_and_quotas_remove_keys_and_empty_entities() -> None:
    image = image_of(
        [config(2, "t", "a", "1"), config(2, "t", "b", "2")],
        [config(2, "t", "a", None)],
        [client_quota([("user", "alice")], "producer_byte_rate", 1024.0)],
        [client_quota([("client-id", None)], "request_percentage", 50.0)],
        [client_quota([("client-id", None)], "request_percentage", 0.0, remove=True)],
    )
    assert image.configs == {(2, "t"): {"b": "2"}}
    assert image.client_quotas == {(("user", "alice"),): {"producer_byte_rate": 1024.0}}


def test_security_records_and_producer_ids() -> None:
    first, second = Uuid.from_ints(1, 2), Uuid.from_ints(3, 4)
    image = image_of(
        [acl(first), acl(second)],
        [acl(first, remove=True)],
        [scram("alice", b"salt")],
        [delegation_token("tok")],
        [producer_ids(5000)],
        [acl(first, remove=True)],
    )
    assert list(image.acls) == [str(second)]
    assert image.scram[1]["alice"].salt == b"salt"
    assert image.delegation_tokens["tok"].renewers == ("User:carol", "User:dave")
    assert image.next_producer_id == 5000
    assert image.warnings == [f"offset 6: Failed to remove ACL {first}: not found"]


def test_metadata_transactions_apply_at_their_end_and_vanish_at_an_abort() -> None:
    begin = record(messages.BeginTransactionRecord(name="t"))
    image = image_of(
        [begin, feature("group.version", 1)],
        [record(messages.EndTransactionRecord())],
        [begin, feature("share.version", 1), record(messages.AbortTransactionRecord(reason="x"))],
        [begin, feature("streams.version", 1)],
    )
    assert image.features == {"group.version": 1}  # the open transaction at the end is not applied
    assert image.provenance.offset == 5  # the last batch ending outside a transaction


def test_provenance_follows_the_last_data_batch_and_stops_at_an_offset() -> None:
    image = image_of(
        [feature("group.version", 1)],
        [feature("group.version", 2), feature("share.version", 1)],
        last_offset=1,
    )
    assert image.features == {"group.version": 2}
    assert (image.provenance.offset, image.provenance.epoch) == (1, 1)


def test_control_records_set_kraft_version_and_voters() -> None:
    image = image_of(
        [messages.KRaftVersionRecord(version=0, k_raft_version=1), voters(1, 2)], [voters(1, 2, 3)]
    )
    assert image.kraft_version == 1
    assert sorted(image.voters or {}) == [1, 2, 3]
    assert image.provenance.offset == -1  # control batches do not move the image


def test_unreadable_records_are_skipped_with_the_reason() -> None:
    image = image_of(
        [RawMetadataRecord(99, 0, b"\x00")],
        [RawMetadataRecord(12, 9, b"\x00")],
        [RawMetadataRecord(12, 0, b"\x05ab")],
        [feature("group.version", 1)],
    )
    assert image.features == {"group.version": 1}
    assert image.warnings == [
        "offset 0: unknown metadata record type 99",
        "offset 1: record type 12 has no version 9",
        "offset 2: record type 12 v0 ends inside a field",
    ]


def test_decode_record_gives_kafkas_json_form() -> None:
    api_key, data = decode_record(encode_metadata_record(feature("metadata.version", 33)))
    assert (api_key, data) == (12, {"name": "metadata.version", "featureLevel": 33})


def test_changes_read_from_their_bytes_merge_as_through_their_json_form() -> None:
    """PartitionChangeRecords outside a transaction are read straight from their bytes; inside one,
    through Kafka's JSON form: both give the same partition."""
    changes = [
        partition_change(0, isr=[1, 2]),
        partition_change(0, leader=2, recovery=1),
        partition_change(0, replicas=[2, 3], elr=[3]),
    ]
    begin, end = record(messages.BeginTransactionRecord(name="t")), record(messages.EndTransactionRecord())
    direct = image_of([topic("orders"), partition(0, [1, 2, 3], epoch=4)], *[[change] for change in changes])
    through_json = image_of([topic("orders"), partition(0, [1, 2, 3], epoch=4)], [begin, *changes, end])
    assert direct.topics[str(TOPIC)].partitions[0] == through_json.topics[str(TOPIC)].partitions[0]
    broken = RawMetadataRecord(5, 2, encode_metadata_record(changes[0])[3:-1])
    assert (
        image_of([topic("orders"), partition(0, [1])], [broken])
        .warnings[0]
        .startswith("offset 2: record type 5 v2 does not decode")
    )
