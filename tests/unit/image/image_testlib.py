"""Test helpers for metadata images: records written by hand for the types the codec has no class for,
records of the codec's classes, and snapshot files and log segments built from lists of them."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid, write_uvarint
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataRecord,
    RawMetadataRecord,
    RecordBatch,
    SegmentWriter,
    SnapshotWriter,
    control_batch,
    metadata_batches,
)
from kafka_admin_kraft.records.snapshot import SnapshotId

T = 1_700_000_000_000
TOPIC = Uuid.from_string("MTAyNDAyNDAyNDAyNDAyNA")
INCARNATION = Uuid.from_string("MJkaH0j0RwuC3W2GHQHtWA")

Entry = MetadataRecord | Struct
"""A metadata record, or a control record's message (LeaderChange, KRaftVersion, Voters)."""


# --------------------------------------------------------------------------- hand-made bodies


def _string(out: bytearray, text: str | None) -> None:
    if text is None:
        out.append(0)
        return
    data = text.encode()
    write_uvarint(out, len(data) + 1)
    out += data


def _int32_array(values: Sequence[int] | None) -> bytes:
    out = bytearray()
    if values is None:
        out.append(0)
        return bytes(out)
    write_uvarint(out, len(values) + 1)
    for value in values:
        out += struct.pack(">i", value)
    return bytes(out)


def _tagged(out: bytearray, fields: dict[int, bytes]) -> None:
    write_uvarint(out, len(fields))
    for tag in sorted(fields):
        write_uvarint(out, tag)
        write_uvarint(out, len(fields[tag]))
        out += fields[tag]


def config(resource_type: int, resource: str, name: str, value: str | None) -> RawMetadataRecord:
    """ConfigRecord v0 (4)."""
    body = bytearray([resource_type])
    _string(body, resource)
    _string(body, name)
    _string(body, value)
    body.append(0)
    return RawMetadataRecord(4, 0, bytes(body))


def partition_change(
    partition: int,
    *,
    topic: Uuid = TOPIC,
    isr: Sequence[int] | None = None,
    leader: int = -2,
    replicas: Sequence[int] | None = None,
    removing: Sequence[int] | None = None,
    adding: Sequence[int] | None = None,
    elr: Sequence[int] | None = None,
    last_known_elr: Sequence[int] | None = None,
    recovery: int = -1,
    directories: Sequence[Uuid] | None = None,
    version: int = 2,
) -> RawMetadataRecord:
    """PartitionChangeRecord (5), v2 unless said: only the fields given are written (the others mean
    no change); ELRs need v2, directories v1."""
    body = bytearray(struct.pack(">i", partition)) + topic.bytes
    fields: dict[int, bytes] = {}
    for tag, values in ((0, isr), (2, replicas), (3, removing), (4, adding), (6, elr), (7, last_known_elr)):
        if values is not None:
            fields[tag] = _int32_array(values)
    if leader != -2:
        fields[1] = struct.pack(">i", leader)
    if recovery != -1:
        fields[5] = struct.pack(">b", recovery)
    if directories is not None:
        out = bytearray()
        write_uvarint(out, len(directories) + 1)
        for directory in directories:
            out += directory.bytes
        fields[8] = bytes(out)
    _tagged(body, fields)
    return RawMetadataRecord(5, version, bytes(body))


def remove_topic(topic: Uuid = TOPIC) -> RawMetadataRecord:
    return RawMetadataRecord(9, 0, topic.bytes + b"\x00")


def clear_elr(topic_name: str) -> RawMetadataRecord:
    body = bytearray()
    _string(body, topic_name)
    body.append(0)
    return RawMetadataRecord(28, 0, bytes(body))


def client_quota(
    entity: Sequence[tuple[str, str | None]], key: str, value: float, remove: bool = False
) -> RawMetadataRecord:
    """ClientQuotaRecord v0 (14)."""
    body = bytearray()
    write_uvarint(body, len(entity) + 1)
    for kind, name in entity:
        _string(body, kind)
        _string(body, name)
        body.append(0)
    _string(body, key)
    body += struct.pack(">d?", value, remove)
    body.append(0)
    return RawMetadataRecord(14, 0, bytes(body))


def producer_ids(next_id: int) -> RawMetadataRecord:
    return RawMetadataRecord(15, 0, struct.pack(">iqq", 1, 5, next_id) + b"\x00")


def acl(
    acl_id: Uuid, *, name: str = "orders", principal: str = "User:alice", remove: bool = False
) -> RawMetadataRecord:
    """AccessControlEntryRecord v0 (18): READ on a literal topic for ``principal`` from any host; with
    ``remove``, a RemoveAccessControlEntryRecord (19)."""
    if remove:
        return RawMetadataRecord(19, 0, acl_id.bytes + b"\x00")
    body = bytearray(acl_id.bytes) + bytes([2])
    _string(body, name)
    body.append(3)
    _string(body, principal)
    _string(body, "*")
    body += bytes([3, 3, 0])
    return RawMetadataRecord(18, 0, bytes(body))


def scram(name: str, salt: bytes, iterations: int = 4096) -> RawMetadataRecord:
    """UserScramCredentialRecord v0 (11), SCRAM-SHA-256."""
    body = bytearray()
    _string(body, name)
    body.append(1)
    for blob in (salt, b"\x01" * 32, b"\x02" * 32):
        write_uvarint(body, len(blob) + 1)
        body += blob
    body += struct.pack(">i", iterations) + b"\x00"
    return RawMetadataRecord(11, 0, bytes(body))


def delegation_token(token_id: str) -> RawMetadataRecord:
    body = bytearray()
    _string(body, "User:alice")
    _string(body, "User:bob")
    write_uvarint(body, 3)
    _string(body, "User:carol")
    _string(body, "User:dave")
    body += struct.pack(">qqq", 1, 2, 3)
    _string(body, token_id)
    body.append(0)
    return RawMetadataRecord(10, 0, bytes(body))


# --------------------------------------------------------------------------- the codec's records


def feature(name: str, level: int) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(messages.FeatureLevelRecord(name=name, feature_level=level), 0)


def broker(
    broker_id: int,
    epoch: int = 10,
    *,
    fenced: bool = True,
    directories: Sequence[Uuid] = (),
    rack: str | None = None,
) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(
        messages.RegisterBrokerRecord(
            broker_id=broker_id,
            incarnation_id=INCARNATION,
            broker_epoch=epoch,
            end_points=[
                messages.RegisterBrokerRecord.BrokerEndpoint(
                    name="INTERNAL", host="localhost", port=9090 + broker_id, security_protocol=0
                )
            ],
            features=[
                messages.RegisterBrokerRecord.BrokerFeature(
                    name="metadata.version", min_supported_version=1, max_supported_version=4
                )
            ],
            rack=rack,
            fenced=fenced,
            log_dirs=list(directories),
        ),
        3,
    )


def controller(controller_id: int) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(
        messages.RegisterControllerRecord(
            controller_id=controller_id,
            incarnation_id=INCARNATION,
            end_points=[
                messages.RegisterControllerRecord.ControllerEndpoint(
                    name="CONTROLLER", host="localhost", port=9093, security_protocol=0
                )
            ],
            features=[
                messages.RegisterControllerRecord.ControllerFeature(
                    name="kraft.version", min_supported_version=0, max_supported_version=1
                )
            ],
        ),
        0,
    )


def topic(name: str, topic_id: Uuid = TOPIC) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(messages.TopicRecord(name=name, topic_id=topic_id), 0)


def partition(
    partition_id: int,
    replicas: Sequence[int],
    *,
    topic_id: Uuid = TOPIC,
    leader: int | None = None,
    epoch: int = 0,
    directories: Sequence[Uuid] = (),
) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(
        messages.PartitionRecord(
            partition_id=partition_id,
            topic_id=topic_id,
            replicas=list(replicas),
            isr=list(replicas),
            leader=replicas[0] if leader is None else leader,
            leader_epoch=epoch,
            partition_epoch=epoch,
            directories=list(directories),
        ),
        1,
    )


def record(message: Struct, version: int = 0) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(message, version)


def voters(*ids: int) -> messages.VotersRecord:
    return messages.VotersRecord(
        version=0,
        voters=[
            messages.VotersRecord.Voter(
                voter_id=node,
                voter_directory_id=Uuid.from_ints(0, 100 + node),
                endpoints=[
                    messages.VotersRecord.Endpoint(name="CONTROLLER", host="localhost", port=9092 + node)
                ],
                k_raft_version_feature=messages.VotersRecord.KRaftVersionFeature(
                    min_supported_version=0, max_supported_version=1
                ),
            )
            for node in ids
        ],
    )


# --------------------------------------------------------------------------- files


def batches(
    entries: Sequence[Sequence[Entry]], *, base: int = 0, epoch: int = 1, time: int = T
) -> list[RecordBatch]:
    """One batch per group of entries (control messages and metadata records may not be mixed)."""
    out: list[RecordBatch] = []
    offset = base
    for group in entries:
        if all(isinstance(entry, Struct) for entry in group):
            batch = control_batch(offset, epoch, time, list(group))  # type: ignore[arg-type]
        else:
            batch = metadata_batches(offset, epoch, time, list(group))[0]  # type: ignore[arg-type]
        out.append(batch)
        offset = batch.next_offset
    return out


def write_snapshot(
    directory: Path,
    entries: Sequence[Sequence[Entry]],
    *,
    end_offset: int | None = None,
    epoch: int = 1,
    time: int = T,
    kraft: Sequence[Struct] = (),
) -> Path:
    """A snapshot: header (with ``kraft`` control records), the groups of entries, footer. Its id is
    ``end_offset`` (default: the number of records written) and ``epoch``."""
    header = messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=time)
    body = batches(
        [[header, *kraft], *entries, [messages.SnapshotFooterRecord(version=0)]], epoch=epoch, time=time
    )
    end = body[-1].next_offset if end_offset is None else end_offset
    writer = SnapshotWriter(directory, SnapshotId(end, epoch))
    for batch in body:
        writer.append(batch)
    return writer.freeze()


def write_segment(
    directory: Path, entries: Sequence[Sequence[Entry]], *, base: int = 0, epoch: int = 1, time: int = T
) -> Path:
    """A log segment starting at offset ``base``."""
    writer = SegmentWriter(directory, base)
    for batch in batches(entries, base=base, epoch=epoch, time=time):
        writer.append(batch)
    writer.close()
    return writer.files.log
