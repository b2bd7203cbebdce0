"""bootstrap.checkpoint and the bootstrap snapshot against layouts worked out by hand (Kafka's
``BootstrapDirectory``)."""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import ApiMessageAndVersion, metadata_batches
from kafka_admin_kraft.storage import (
    InitialController,
    StorageFormatError,
    bootstrap_records,
    read_bootstrap_checkpoint,
    read_zero_checkpoint_bootstrap,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
)
from kafka_admin_kraft.storage.bootstrap import feature_level_record, read_bootstrap_voters
from unit.storage.storage_testlib import write_kip1170_zero_checkpoint

T = 1_700_000_000_000  # 0000018bcfe56800
U1 = Uuid.from_string("3Db5QLSqSZieL3rJBUUegA")


def hx(text: str) -> bytes:
    return bytes.fromhex("".join(line.split("#", 1)[0] for line in text.splitlines()))


def batch(base_offset: int, attributes: int, records: list[bytes]) -> bytes:
    """Batch header per d.1: epoch 0, CreateTime, base = max timestamp = T, no producer."""
    body = b"".join(records)
    after_crc = struct.pack(">hiqqqhii", attributes, len(records) - 1, T, T, -1, -1, -1, len(records)) + body
    return struct.pack(">qiibI", base_offset, 49 + len(body), 0, 2, crc32c.crc32c(after_crc)) + after_crc


BOOTSTRAP_CHECKPOINT = batch(0, 0x20, [hx("""
    2a              # record length 21
    00 00 00        # attributes, timestamp delta 0, offset delta 0 (offset 0)
    08 00000003     # key length 4: control key version 0, type 3 SNAPSHOT_HEADER
    16              # value length 11: SnapshotHeaderRecord v0
    0000            #   Version 0
    0000000000000000    # LastContainedLogTimestamp 0
    00              #   no tagged fields
    00              # no headers
""")]) + batch(1, 0x00, [hx("""
    3a              # record length 29
    00 00 00        # attributes, timestamp delta 0, offset delta 0 (offset 1)
    01              # key null
    2e              # value length 23: ApiMessageAndVersion
    01 0c 00        #   frame version 1, FeatureLevelRecord (12), version 0
    11 6d657461646174612e76657273696f6e     # Name "metadata.version"
    0015            #   FeatureLevel 21
    00              #   no tagged fields
    00              # no headers
"""), hx("""
    34              # record length 26
    00 00 02        # attributes, timestamp delta 0, offset delta 1 (offset 2)
    01              # key null
    28              # value length 20
    01 0c 00        #   frame version 1, FeatureLevelRecord (12), version 0
    0e 67726f75702e76657273696f6e   # Name "group.version"
    0001            #   FeatureLevel 1
    00              #   no tagged fields
    00              # no headers
""")]) + batch(3, 0x20, [hx("""
    1a              # record length 13
    00 00 00        # attributes, timestamp delta 0, offset delta 0 (offset 3)
    08 00000004     # key: control key version 0, type 4 SNAPSHOT_FOOTER
    06 0000 00      # value length 3: SnapshotFooterRecord v0
    00              # no headers
""")])


def test_bootstrap_records_order_and_filtering() -> None:
    records = bootstrap_records(21, {"transaction.version": 2, "kraft.version": 1, "share.version": 0,
                                     "group.version": 1, "metadata.version": 99})
    assert records == [feature_level_record("metadata.version", 21),
                       feature_level_record("group.version", 1),
                       feature_level_record("transaction.version", 2)]


def test_bootstrap_checkpoint_layout(tmp_path: Path) -> None:
    records = bootstrap_records(21, {"group.version": 1, "kraft.version": 1})
    path = write_bootstrap_checkpoint(tmp_path, records, timestamp_ms=T)
    assert path == tmp_path / "bootstrap.checkpoint"
    assert path.read_bytes() == BOOTSTRAP_CHECKPOINT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bootstrap.checkpoint"]
    metadata = read_bootstrap_checkpoint(tmp_path)
    assert metadata.metadata_version == 21
    assert metadata.records == records


def test_bootstrap_checkpoint_needs_metadata_version(tmp_path: Path) -> None:
    path = tmp_path / "bootstrap.checkpoint"
    no_version = [feature_level_record("group.version", 1)]
    write_bootstrap_checkpoint(tmp_path, no_version, timestamp_ms=T)
    with pytest.raises(StorageFormatError, match="No FeatureLevelRecord for metadata.version") as info:
        read_bootstrap_checkpoint(path)
    assert info.value.what == str(path)
    path.write_bytes(BOOTSTRAP_CHECKPOINT[:-1])
    with pytest.raises(CorruptRecordError, match="file ends inside a batch"):
        read_bootstrap_checkpoint(path)


def test_large_bootstrap_metadata_spans_batches(tmp_path: Path) -> None:
    scram_like = [ApiMessageAndVersion(messages.TopicRecord(name="t" * 60000, topic_id=U1), 0)] * 200
    records = bootstrap_records(21, extra_records=scram_like)
    write_bootstrap_checkpoint(tmp_path, records, timestamp_ms=T)
    assert read_bootstrap_checkpoint(tmp_path).records == records
    assert len(metadata_batches(1, 0, T, records)) == 2


SNAPSHOT = batch(0, 0x20, [hx("""
    2a 00 00 00             # record length 21; attributes, timestamp delta, offset delta 0
    08 00000003             # key: SNAPSHOT_HEADER
    16                      # value length 11
    0000 0000018bcfe56800 00    # Version 0, LastContainedLogTimestamp = format time, no tags
    00                      # no headers
"""), hx("""
    1e 00 00 02             # record length 15; offset delta 1
    08 00000005             # key: KRAFT_VERSION
    0a 0000 0001 00         # value length 5: Version 0, KRaftVersion 1, no tags
    00                      # no headers
"""), hx("""
    8201 00 00 04           # record length 65 (two-byte varint); offset delta 2
    08 00000006             # key: KRAFT_VOTERS
    6e                      # value length 55: VotersRecord v0
    0000                    #   Version 0
    02                      #   Voters: 1 entry
    00000001                #     VoterId 1
    dc36f940b4aa49989e2f7ac905451e80    # VoterDirectoryId
    02                      #     Endpoints: 1 entry
    0b 434f4e54524f4c4c4552 #       Name "CONTROLLER" (first controller.listener.names entry)
    0a 6c6f63616c686f7374   #       Host "localhost"
    2385                    #       Port 9093
    00                      #       no tagged fields
    0000 0001 00            #     KRaftVersionFeature min 0, max 1, no tags
    00                      #     Voter: no tagged fields
    00                      #   no tagged fields
    00                      # no headers
""")]) + batch(3, 0x20, [hx("""
    1a 00 00 00             # record length 13; offset delta 0 (offset 3)
    08 00000004             # key: SNAPSHOT_FOOTER
    06 0000 00              # value length 3: SnapshotFooterRecord v0
    00                      # no headers
""")])


def test_bootstrap_snapshot_layout(tmp_path: Path) -> None:
    controllers = [InitialController(1, "localhost", 9093, U1)]
    path = write_bootstrap_snapshot(tmp_path, controllers, "CONTROLLER", timestamp_ms=T)
    assert path == tmp_path / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint"
    assert path.read_bytes() == SNAPSHOT
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # the .part file was renamed
    voters = read_bootstrap_voters(path)
    assert voters is not None and [v.voter_id for v in voters.voters] == [1]
    assert voters.voters[0].endpoints[0].port == 9093


def test_bootstrap_snapshot_with_three_voters(tmp_path: Path) -> None:
    controllers = [InitialController(i, f"controller-{i}", 1234, Uuid.random()) for i in range(3)]
    path = write_bootstrap_snapshot(tmp_path, controllers, "CONTROLLER", timestamp_ms=T)
    voters = read_bootstrap_voters(path)
    assert voters is not None
    assert [(v.voter_id, v.voter_directory_id, v.endpoints[0].host) for v in voters.voters] == [
        (c.node_id, c.directory_id, c.host) for c in controllers]


def test_the_zero_checkpoint_of_kafka_4_4_holds_the_bootstrap_records(tmp_path: Path) -> None:
    """KIP-1170 (Kafka 4.4, PR #20707): the formatter appends the bootstrap records to the zero
    checkpoint after KRaft's control records; Kafka 4.3's zero checkpoint holds control records only."""
    assert read_zero_checkpoint_bootstrap(tmp_path) is None  # no zero checkpoint at all
    controllers = [InitialController(1, "localhost", 9093, U1)]
    write_bootstrap_snapshot(tmp_path, controllers, "CONTROLLER", timestamp_ms=T)
    assert read_zero_checkpoint_bootstrap(tmp_path) is None  # Kafka 4.3's layout
    records = bootstrap_records(33, {"share.version": 2, "group.version": 1, "kraft.version": 1})
    path = write_kip1170_zero_checkpoint(tmp_path, records, kraft_version=1, controllers=controllers,
                                         timestamp_ms=T)
    metadata = read_zero_checkpoint_bootstrap(tmp_path)
    assert metadata is not None and (metadata.records, metadata.metadata_version) == (records, 33)
    voters = read_bootstrap_voters(path)
    assert voters is not None and [v.voter_id for v in voters.voters] == [1]

    static = tmp_path / "static"
    write_kip1170_zero_checkpoint(static, records[:1], timestamp_ms=T)  # a static quorum: no KRaft records
    metadata = read_zero_checkpoint_bootstrap(static)
    assert metadata is not None and metadata.metadata_version == 33 and len(metadata.records) == 1
    write_kip1170_zero_checkpoint(static, records[1:], timestamp_ms=T)
    with pytest.raises(StorageFormatError, match="No FeatureLevelRecord for metadata.version"):
        read_zero_checkpoint_bootstrap(static)
