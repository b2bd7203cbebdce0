"""Sample batches for the dump's tests: one of each kind a metadata log holds, written as a segment
with the project's record writers, and where a record starts in a batch (to damage it)."""

from __future__ import annotations

from pathlib import Path

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    ControlRecord,
    EndTxnMarker,
    Header,
    RawMetadataRecord,
    Record,
    RecordBatch,
    SegmentWriter,
    UnknownControlValue,
    control_batch,
    encode_batch,
    encode_control_record,
    encode_metadata_record,
    make_attributes,
    metadata_batches,
)
from kafka_admin_kraft.records.batch import TimestampType

T0 = 1_747_299_887_693
TOPIC = Uuid.from_string("tpx8pd1IQDqJwMfGzXj6GA")
DIRECTORY = Uuid.from_string("AAAAAAAAAAAAAAAAAAAAAQ")
SEGMENT = "00000000000000000000.log"


def config_record(name: str, value: str | None) -> RawMetadataRecord:
    """ConfigRecord v0 of topic ``foo`` (the project's codec does not model it)."""
    body = bytearray(b"\x02\x04foo")
    body += bytes([len(name) + 1]) + name.encode()
    body += b"\x00" if value is None else bytes([len(value) + 1]) + value.encode()
    return RawMetadataRecord(4, 0, bytes(body + b"\x00"))


def batches() -> list[bytes]:
    """One of each kind of batch a metadata log holds, and the odd ones Kafka's tool also prints."""
    leader_change = messages.LeaderChangeMessage
    voters = messages.VotersRecord
    no_op = encode_metadata_record(ApiMessageAndVersion(messages.NoOpRecord(), 0))
    return [encode_batch(batch) for batch in [
        control_batch(0, 1, T0, [
            leader_change(leader_id=1, voters=[leader_change.Voter(voter_id=1)],
                          granting_voters=[leader_change.Voter(voter_id=1)]),
            messages.KRaftVersionRecord(k_raft_version=1),
            voters(voters=[voters.Voter(voter_id=1, voter_directory_id=TOPIC,
                                        endpoints=[voters.Endpoint(name="CONTROLLER", host="localhost",
                                                                   port=9093)],
                                        k_raft_version_feature=voters.KRaftVersionFeature(
                                            min_supported_version=0, max_supported_version=1))])]),
        *metadata_batches(3, 1, T0 + 107, [
            ApiMessageAndVersion(messages.FeatureLevelRecord(name="metadata.version", feature_level=21), 0),
            ApiMessageAndVersion(messages.TopicRecord(name="foo", topic_id=TOPIC), 0),
            ApiMessageAndVersion(messages.PartitionRecord(
                partition_id=0, topic_id=TOPIC, replicas=[1, 2], isr=[1], leader=1, leader_epoch=0,
                partition_epoch=0, directories=[DIRECTORY, DIRECTORY]), 1),
            config_record("cleanup.policy", "compact")]),
        # A record with a key and headers, as a non-KRaft producer would write it.
        RecordBatch(base_offset=7, partition_leader_epoch=1, base_timestamp=T0 + 200, max_timestamp=T0 + 200,
                    records=[Record(7, T0 + 200, b"key", no_op, (Header("h1", b"v"), Header("h2", None)))]),
        # A transaction commit marker and a control type Kafka's tool does not know.
        RecordBatch(base_offset=8, partition_leader_epoch=1, base_timestamp=T0 + 300, max_timestamp=T0 + 300,
                    attributes=make_attributes(control=True, transactional=True), producer_id=77,
                    producer_epoch=3,
                    records=[Record(8, T0 + 300, *encode_control_record(ControlRecord(1, EndTxnMarker(5))))]),
        control_batch(9, 1, T0 + 400, [ControlRecord(9, UnknownControlValue(9, b"\x00"))]),
        # An idempotent producer's batch with LogAppendTime: every record shows the batch's max timestamp.
        RecordBatch(base_offset=10, partition_leader_epoch=2, base_timestamp=T0 + 500, max_timestamp=T0 + 999,
                    attributes=make_attributes(timestamp_type=TimestampType.LOG_APPEND_TIME), producer_id=42,
                    producer_epoch=0, base_sequence=2147483647, last_offset_delta=1,
                    records=[Record(10, T0 + 500, None, no_op), Record(11, T0 + 501, None, no_op)]),
    ]]


def write_segment(directory: Path, data: list[bytes] | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    with SegmentWriter(directory, 0, index_interval_bytes=100) as writer:
        for batch in batches() if data is None else data:
            writer.append(batch)
    return directory / SEGMENT


def record_start(batch: bytes, index: int) -> int:
    """Where record ``index`` of a batch starts (its length, a zig-zag varint)."""
    position = 61
    for _ in range(index):
        raw = shift = 0
        while True:
            byte = batch[position]
            position += 1
            raw |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        position += raw >> 1
    return position
