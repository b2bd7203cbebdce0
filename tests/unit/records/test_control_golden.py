"""Golden bytes of control records (leader change, snapshot header and footer, kraft.version, voters,
transaction markers), worked out by hand from Kafka's control record layout and schemas.

Every vector is written field by field; the code under test must both decode it to the expected
values and encode those values back to the same bytes.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records import (
    ControlRecord,
    ControlRecordType,
    EndTxnMarker,
    Record,
    UnknownControlValue,
    control_batch,
    decode_batch_bytes,
    decode_control_record,
    encode_batch,
    encode_control_record,
)
from unit.records.records_testlib import U1, T, hand_batch, hx, varint


def _control_record(type_id: int, offset_delta: int, value: bytes) -> bytes:
    """Record layout of d.2 with the 4-byte control key of d.3."""
    body = bytes([0, 0, offset_delta * 2, 8]) + bytes([0, 0, 0, type_id]) + varint(len(value)) + value
    body += b"\x00"
    return varint(len(body)) + body


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
