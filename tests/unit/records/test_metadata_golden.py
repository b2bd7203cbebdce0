"""Golden bytes of metadata record frames (``ApiMessageAndVersion``), worked out by hand from the
record schemas, alone and in a KRaft batch.

Every vector is written field by field; the code under test must both decode it to the expected
values and encode those values back to the same bytes.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    data_batch,
    decode_batch_bytes,
    decode_metadata_record,
    encode_batch,
    encode_metadata_record,
)
from unit.records.records_testlib import U1, U2, T, hand_batch, hx, varint

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
        body = bytes([0, 0, index * 2, 1]) + varint(len(value)) + value + b"\x00"
        records.append(varint(len(body)) + body)
    data = hand_batch(base_offset=0, epoch=1, attributes=0, last_offset_delta=len(values) - 1, timestamp=T,
                      records=records)
    batch = decode_batch_bytes(data)
    assert [decode_metadata_record(record.value) for record in batch.records] == [
        ApiMessageAndVersion(vector[2], vector[3]) for vector in METADATA_VECTORS]
    assert encode_batch(data_batch(0, 1, T, values)) == data
