"""Golden bytes worked out by hand from Kafka's ``DefaultRecordBatch`` and ``DefaultRecord``
layouts and the record schemas.

Every vector is written field by field; the code under test must both decode it to the expected
values and encode those values back to the same bytes.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    Compression,
    ControlRecord,
    ControlRecordType,
    EndTxnMarker,
    Header,
    Record,
    RecordBatch,
    TimestampType,
    UnknownControlValue,
    control_batch,
    data_batch,
    decode_batch_bytes,
    decode_control_record,
    decode_metadata_record,
    encode_batch,
    encode_control_record,
    encode_metadata_record,
)
from unit.records.records_testlib import hand_batch, hx

T = 1_700_000_000_000  # 0x0000018BCFE56800
U1 = Uuid.from_string("3Db5QLSqSZieL3rJBUUegA")  # dc36f940b4aa49989e2f7ac905451e80
U2 = Uuid(bytes(range(16)))  # 000102030405060708090a0b0c0d0e0f

NOOP_BATCH = hx("""
    0000000000000010    # BaseOffset 16
    0000003c            # Length 60 = 72 - 12
    00000003            # PartitionLeaderEpoch 3
    02                  # Magic 2
    b03bfe3d            # CRC-32C of bytes 21..71
    0000                # Attributes: no compression, CreateTime, not transactional, not control
    00000000            # LastOffsetDelta 0
    0000018bcfe56800    # BaseTimestamp 1700000000000
    0000018bcfe56800    # MaxTimestamp 1700000000000
    ffffffffffffffff    # ProducerId -1
    ffff                # ProducerEpoch -1
    ffffffff            # BaseSequence -1
    00000001            # RecordsCount 1
    14                  # record Length: zig-zag 20 -> 10 bytes follow
    00                  #   Attributes 0
    00                  #   TimestampDelta 0
    00                  #   OffsetDelta 0
    01                  #   KeyLength -1 (null)
    08                  #   ValueLength 4
    01140000            #   Value: frame version 1, api key 20 (NoOpRecord), version 0, no tagged fields
    00                  #   HeadersCount 0
""")


def test_kraft_data_batch_decodes_field_by_field() -> None:
    batch = decode_batch_bytes(NOOP_BATCH)
    assert batch.base_offset == 16
    assert batch.partition_leader_epoch == 3
    assert batch.magic == 2
    assert batch.crc == 0xB03BFE3D
    assert batch.attributes == 0
    assert batch.compression is Compression.NONE
    assert batch.timestamp_type is TimestampType.CREATE_TIME
    assert not batch.is_transactional and not batch.is_control
    assert batch.last_offset_delta == 0 and batch.last_offset == 16 and batch.next_offset == 17
    assert batch.base_timestamp == batch.max_timestamp == T
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.records == [Record(16, T, None, hx("01140000"), (), 0)]
    assert batch.size_in_bytes == 72


def test_kraft_data_batch_is_built_byte_for_byte() -> None:
    assert encode_batch(data_batch(16, 3, T, [hx("01140000")])) == NOOP_BATCH


# A non-KRaft batch exercising keys, headers, null values, timestamp deltas and LogAppendTime.
RECORD_0 = hx("""
    20          # Length 16
    00          # Attributes
    00          # TimestampDelta 0
    00          # OffsetDelta 0
    02 6b       # KeyLength 1, "k"
    04 7631     # ValueLength 2, "v1"
    04          # HeadersCount 2
    02 68       #   key length 1, "h"
    02 76       #   value length 1, "v"
    02 6e       #   key length 1, "n"
    01          #   value length -1 (null)
""")
RECORD_1 = hx("""
    0c          # Length 6
    00          # Attributes
    0a          # TimestampDelta 5
    02          # OffsetDelta 1
    01          # KeyLength -1
    01          # ValueLength -1
    00          # HeadersCount 0
""")


def test_batch_with_keys_headers_and_log_append_time() -> None:
    data = hand_batch(base_offset=100, epoch=7, attributes=0x08, last_offset_delta=1, timestamp=T,
                      max_timestamp=T + 5, records=[RECORD_0, RECORD_1])
    expected = RecordBatch(base_offset=100, partition_leader_epoch=7, attributes=0x08, last_offset_delta=1,
                           base_timestamp=T, max_timestamp=T + 5, records=[
                               Record(100, T, b"k", b"v1", (Header("h", b"v"), Header("n", None))),
                               Record(101, T + 5, None, None)])
    batch = decode_batch_bytes(data)
    assert batch == expected
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert encode_batch(expected) == data


def _control_record(type_id: int, offset_delta: int, value: bytes) -> bytes:
    """Record layout of d.2 with the 4-byte control key of d.3."""
    body = bytes([0, 0, offset_delta * 2, 8]) + bytes([0, 0, 0, type_id]) + _varint(len(value)) + value
    body += b"\x00"
    return _varint(len(body)) + body


CONTROL_VALUES: list[tuple[ControlRecordType, bytes, Any]] = [
    (ControlRecordType.LEADER_CHANGE, hx("""
        0000                # Version 0
        00000001            # LeaderId 1
        04                  # Voters: 3 entries
        00000001 00         #   VoterId 1, no tagged fields (v0 has no VoterDirectoryId)
        00000002 00         #   VoterId 2
        00000003 00         #   VoterId 3
        02                  # GrantingVoters: 1 entry
        00000002 00         #   VoterId 2
        00                  # no tagged fields
    """), messages.LeaderChangeMessage(
        version=0, leader_id=1,
        voters=[messages.LeaderChangeMessage.Voter(voter_id=i) for i in (1, 2, 3)],
        granting_voters=[messages.LeaderChangeMessage.Voter(voter_id=2)])),
    (ControlRecordType.SNAPSHOT_HEADER, hx("""
        0000                # Version 0
        0000018bcfe56800    # LastContainedLogTimestamp
        00                  # no tagged fields
    """), messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=T)),
    (ControlRecordType.SNAPSHOT_FOOTER, hx("""
        0000                # Version 0
        00                  # no tagged fields
    """), messages.SnapshotFooterRecord(version=0)),
    (ControlRecordType.KRAFT_VERSION, hx("""
        0000                # Version 0
        0001                # KRaftVersion 1
        00                  # no tagged fields
    """), messages.KRaftVersionRecord(version=0, k_raft_version=1)),
    (ControlRecordType.KRAFT_VOTERS, hx("""
        0000                                # Version 0
        02                                  # Voters: 1 entry
        00000001                            #   VoterId 1
        dc36f940b4aa49989e2f7ac905451e80    #   VoterDirectoryId 3Db5QLSqSZieL3rJBUUegA
        02                                  #   Endpoints: 1 entry
        0b 434f4e54524f4c4c4552             #     Name "CONTROLLER"
        0a 6c6f63616c686f7374               #     Host "localhost"
        2385                                #     Port 9093
        00                                  #     no tagged fields
        0000                                #   KRaftVersionFeature.MinSupportedVersion 0
        0001                                #   KRaftVersionFeature.MaxSupportedVersion 1
        00                                  #   KRaftVersionFeature: no tagged fields
        00                                  #   Voter: no tagged fields
        00                                  # no tagged fields
    """), messages.VotersRecord(version=0, voters=[messages.VotersRecord.Voter(
        voter_id=1, voter_directory_id=U1,
        endpoints=[messages.VotersRecord.Endpoint(name="CONTROLLER", host="localhost", port=9093)],
        k_raft_version_feature=messages.VotersRecord.KRaftVersionFeature(
            min_supported_version=0, max_supported_version=1))])),
]


@pytest.mark.parametrize(("type_id", "value", "message"), CONTROL_VALUES,
                         ids=[kind.name for kind, _, _ in CONTROL_VALUES])
def test_kraft_control_batches(type_id: ControlRecordType, value: bytes, message: Any) -> None:
    data = hand_batch(base_offset=5, epoch=2, attributes=0x20, last_offset_delta=0, timestamp=T,
                      records=[_control_record(type_id, 0, value)])
    batch = decode_batch_bytes(data)
    assert batch.is_control
    (record,) = batch.records
    assert record.key == bytes([0, 0, 0, type_id])
    decoded = decode_control_record(record)
    assert decoded.type is type_id
    assert decoded.key_version == 0
    assert decoded.value == message
    assert encode_control_record(decoded) == (record.key, value)
    assert encode_batch(control_batch(5, 2, T, [message])) == data


@pytest.mark.parametrize("type_id", [ControlRecordType.ABORT, ControlRecordType.COMMIT])
def test_transaction_marker_batches(type_id: ControlRecordType) -> None:
    marker = hx("""
        0000        # marker version 0
        00000005    # coordinator epoch 5
    """)
    data = hand_batch(base_offset=40, epoch=1, attributes=0x30, last_offset_delta=0, timestamp=T,
                      producer_id=1000, producer_epoch=2, records=[_control_record(type_id, 0, marker)])
    batch = decode_batch_bytes(data)
    assert batch.is_control and batch.is_transactional
    assert (batch.producer_id, batch.producer_epoch) == (1000, 2)
    decoded = decode_control_record(batch.records[0])
    assert decoded == ControlRecord(type_id, EndTxnMarker(coordinator_epoch=5))
    assert encode_control_record(decoded) == (bytes([0, 0, 0, type_id]), marker)


def test_unknown_control_type_is_kept() -> None:
    record = Record(0, T, hx("0000 0009"), b"\x01\x02")  # key version 0, type 9
    decoded = decode_control_record(record)
    assert decoded.type is None
    assert decoded.value == UnknownControlValue(9, b"\x01\x02")
    assert encode_control_record(decoded) == (record.key, record.value)


def test_unknown_control_key_version_reads_as_version_zero() -> None:
    record = Record(0, T, hx("0003 0004"), hx("0000 00"))  # key version 3, SNAPSHOT_FOOTER
    decoded = decode_control_record(record)
    assert decoded.key_version == 3
    assert decoded.value == messages.SnapshotFooterRecord(version=0)


@pytest.mark.parametrize("key", [hx("ffff 0002"), hx("0000"), None])
def test_bad_control_keys_are_corruption(key: bytes | None) -> None:
    with pytest.raises(CorruptRecordError, match="control record"):
        decode_control_record(Record(0, T, key, hx("0000 00")))


METADATA_VECTORS: list[tuple[str, bytes, Any, int]] = [
    ("NoOpRecord", hx("""
        01      # frame version 1
        14      # api key 20
        00      # record version 0
        00      # no tagged fields
    """), messages.NoOpRecord(), 0),
    ("FeatureLevelRecord", hx("""
        01 0c 00                                # frame 1, api key 12, version 0
        11 6d657461646174612e76657273696f6e     # Name "metadata.version" (16 bytes, uvarint 17)
        0015                                    # FeatureLevel 21
        00                                      # no tagged fields
    """), messages.FeatureLevelRecord(name="metadata.version", feature_level=21), 0),
    ("TopicRecord", hx("""
        01 02 00                                # frame 1, api key 2, version 0
        04 666f6f                               # Name "foo"
        dc36f940b4aa49989e2f7ac905451e80        # TopicId
        00                                      # no tagged fields
    """), messages.TopicRecord(name="foo", topic_id=U1), 0),
    ("PartitionRecord v0", hx("""
        01 03 00                                # frame 1, api key 3, version 0
        00000000                                # PartitionId 0
        dc36f940b4aa49989e2f7ac905451e80        # TopicId
        04 00000001 00000002 00000003           # Replicas [1, 2, 3]
        03 00000001 00000002                    # Isr [1, 2]
        01                                      # RemovingReplicas []
        01                                      # AddingReplicas []
        00000001                                # Leader 1
        00000000                                # LeaderEpoch 0
        00000000                                # PartitionEpoch 0
        00                                      # tagged: LeaderRecoveryState at default 0, not written
    """), messages.PartitionRecord(partition_id=0, topic_id=U1, replicas=[1, 2, 3], isr=[1, 2], leader=1,
                                   leader_epoch=0, partition_epoch=0), 0),
    ("PartitionRecord v2", hx("""
        01 03 02                                # frame 1, api key 3, version 2
        00000001                                # PartitionId 1
        dc36f940b4aa49989e2f7ac905451e80        # TopicId
        02 00000002                             # Replicas [2]
        02 00000002                             # Isr [2]
        01                                      # RemovingReplicas []
        01                                      # AddingReplicas []
        00000002                                # Leader 2
        00000004                                # LeaderEpoch 4
        00000007                                # PartitionEpoch 7
        02 000102030405060708090a0b0c0d0e0f     # Directories (v1+) [U2]
        02                                      # tagged fields: 2
        00 01 01                                #   tag 0 LeaderRecoveryState, 1 byte: 1
        01 05 02 00000002                       #   tag 1 EligibleLeaderReplicas, 5 bytes: [2]
    """), messages.PartitionRecord(partition_id=1, topic_id=U1, replicas=[2], isr=[2], leader=2,
                                   leader_recovery_state=1, leader_epoch=4, partition_epoch=7,
                                   directories=[U2], eligible_leader_replicas=[2]), 2),
    ("RegisterBrokerRecord v3", hx("""
        01 00 03                                # frame 1, api key 0, version 3
        00000001                                # BrokerId 1
        00                                      # IsMigratingZkBroker false (v2+)
        dc36f940b4aa49989e2f7ac905451e80        # IncarnationId
        0000000000000005                        # BrokerEpoch 5
        02                                      # EndPoints: 1 entry
        0a 504c41494e54455854                   #   Name "PLAINTEXT"
        0a 6c6f63616c686f7374                   #   Host "localhost"
        2384                                    #   Port 9092
        0000                                    #   SecurityProtocol 0
        00                                      #   no tagged fields
        02                                      # Features: 1 entry
        11 6d657461646174612e76657273696f6e     #   Name "metadata.version"
        0007                                    #   MinSupportedVersion 7
        001d                                    #   MaxSupportedVersion 29
        00                                      #   no tagged fields
        00                                      # Rack null
        01                                      # Fenced true
        00                                      # InControlledShutdown false (v1+)
        01                                      # tagged fields: 1
        00 11 02 000102030405060708090a0b0c0d0e0f   # tag 0 LogDirs, 17 bytes: [U2]
    """), messages.RegisterBrokerRecord(
        broker_id=1, incarnation_id=U1, broker_epoch=5,
        end_points=[messages.RegisterBrokerRecord.BrokerEndpoint(
            name="PLAINTEXT", host="localhost", port=9092, security_protocol=0)],
        features=[messages.RegisterBrokerRecord.BrokerFeature(
            name="metadata.version", min_supported_version=7, max_supported_version=29)],
        rack=None, fenced=True, in_controlled_shutdown=False, log_dirs=[U2]), 3),
    ("RegisterControllerRecord", hx("""
        01 1b 00                                # frame 1, api key 27, version 0
        00000bb8                                # ControllerId 3000
        dc36f940b4aa49989e2f7ac905451e80        # IncarnationId
        00                                      # ZkMigrationReady false
        02                                      # EndPoints: 1 entry
        0b 434f4e54524f4c4c4552                 #   Name "CONTROLLER"
        0a 6c6f63616c686f7374                   #   Host "localhost"
        2385                                    #   Port 9093
        0000                                    #   SecurityProtocol 0
        00                                      #   no tagged fields
        02                                      # Features: 1 entry
        0e 6b726166742e76657273696f6e           #   Name "kraft.version"
        0000                                    #   MinSupportedVersion 0
        0001                                    #   MaxSupportedVersion 1
        00                                      #   no tagged fields
        00                                      # no tagged fields
    """), messages.RegisterControllerRecord(
        controller_id=3000, incarnation_id=U1, zk_migration_ready=False,
        end_points=[messages.RegisterControllerRecord.ControllerEndpoint(
            name="CONTROLLER", host="localhost", port=9093, security_protocol=0)],
        features=[messages.RegisterControllerRecord.ControllerFeature(
            name="kraft.version", min_supported_version=0, max_supported_version=1)]), 0),
    ("BeginTransactionRecord", hx("""
        01 17 00                                # frame 1, api key 23, version 0
        01                                      # tagged fields: 1
        00 04 04 74786e                         #   tag 0 Name, 4 bytes: "txn"
    """), messages.BeginTransactionRecord(name="txn"), 0),
    ("EndTransactionRecord", hx("""
        01 18 00                                # frame 1, api key 24, version 0
        00                                      # no tagged fields
    """), messages.EndTransactionRecord(), 0),
    ("AbortTransactionRecord", hx("""
        01 19 00                                # frame 1, api key 25, version 0
        00                                      # tagged: Reason null (the default), not written
    """), messages.AbortTransactionRecord(reason=None), 0),
]


@pytest.mark.parametrize(("value", "message", "version"), [v[1:] for v in METADATA_VECTORS],
                         ids=[v[0] for v in METADATA_VECTORS])
def test_metadata_record_frames(value: bytes, message: Any, version: int) -> None:
    decoded = decode_metadata_record(value)
    assert decoded == ApiMessageAndVersion(message, version)
    assert decoded.api_key == type(message).API_KEY
    assert encode_metadata_record(ApiMessageAndVersion(message, version)) == value


def test_metadata_records_in_a_kraft_batch() -> None:
    values = [vector[1] for vector in METADATA_VECTORS]
    records = []
    for index, value in enumerate(values):
        body = bytes([0, 0, index * 2, 1]) + _varint(len(value)) + value + b"\x00"
        records.append(_varint(len(body)) + body)
    data = hand_batch(base_offset=0, epoch=1, attributes=0, last_offset_delta=len(values) - 1, timestamp=T,
                      records=records)
    batch = decode_batch_bytes(data)
    assert [decode_metadata_record(record.value) for record in batch.records] == [
        ApiMessageAndVersion(vector[2], vector[3]) for vector in METADATA_VECTORS]
    assert encode_batch(data_batch(0, 1, T, values)) == data


def _varint(value: int) -> bytes:
    """Zig-zag varint for small non-negative test values (below 8192)."""
    raw = value * 2
    return bytes([raw]) if raw < 0x80 else bytes([(raw & 0x7F) | 0x80, raw >> 7])
