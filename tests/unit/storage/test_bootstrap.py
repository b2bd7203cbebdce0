"""bootstrap.checkpoint and the zero checkpoint, in Kafka 4.3's layout and in Kafka 4.4's (KIP-1170),
against layouts worked out by hand (Kafka's ``BootstrapDirectory``, ``RecordsSnapshotWriter``)."""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import ApiMessageAndVersion, MetadataRecord, encode_batch, metadata_batches
from kafka_admin_kraft.records.builder import MAX_BATCH_SIZE
from kafka_admin_kraft.storage import (
    InitialController,
    StorageFormatError,
    bootstrap_records,
    read_bootstrap_checkpoint,
    read_zero_checkpoint_bootstrap,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
    write_zero_checkpoint,
)
from kafka_admin_kraft.storage.bootstrap import (
    bootstrap_batch_size,
    feature_level_record,
    read_bootstrap_voters,
    zero_checkpoint_batches,
)

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


# Kafka 4.4's zero checkpoint (KIP-1170): RecordsSnapshotWriter's control batch, the bootstrap records
# appended in one call (one batch), the footer batch from freeze.

HEADER_AT_T = hx("""
    2a 00 00 00             # record length 21; attributes, timestamp delta, offset delta 0
    08 00000003             # key: SNAPSHOT_HEADER
    16                      # value length 11
    0000 0000018bcfe56800 00    # Version 0, LastContainedLogTimestamp = format time, no tags
    00                      # no headers
""")
METADATA_VERSION_33 = """
    3a              # record length 29
    00 00 {delta}   # attributes, timestamp delta 0, offset delta
    01              # key null
    2e              # value length 23: ApiMessageAndVersion
    01 0c 00        #   frame version 1, FeatureLevelRecord (12), version 0
    11 6d657461646174612e76657273696f6e     # Name "metadata.version"
    0021            #   FeatureLevel 33
    00              #   no tagged fields
    00              # no headers
"""
SHARE_VERSION_2 = """
    34              # record length 26
    00 00 {delta}   # attributes, timestamp delta 0, offset delta
    01              # key null
    28              # value length 20
    01 0c 00        #   frame version 1, FeatureLevelRecord (12), version 0
    0e 73686172652e76657273696f6e   # Name "share.version"
    0002            #   FeatureLevel 2
    00              #   no tagged fields
    00              # no headers
"""


def footer_at(offset: int) -> bytes:
    return batch(offset, 0x20, [hx("""
        1a 00 00 00             # record length 13; offset delta 0
        08 00000004             # key: SNAPSHOT_FOOTER
        06 0000 00              # value length 3: SnapshotFooterRecord v0
        00                      # no headers
    """)])


ZERO_CHECKPOINT_STATIC = batch(0, 0x20, [HEADER_AT_T]) + batch(1, 0x00, [
    hx(METADATA_VERSION_33.format(delta="00")),   # offset 1
    hx(SHARE_VERSION_2.format(delta="02")),       # offset 2: delta 1, zigzag 2
]) + footer_at(3)
"""A controller of a static quorum (kraft.version 0): no KRaft records after the header."""

ZERO_CHECKPOINT_NO_INITIAL_CONTROLLERS = batch(0, 0x20, [HEADER_AT_T, hx("""
    1e 00 00 02             # record length 15; offset delta 1
    08 00000005             # key: KRAFT_VERSION
    0a 0000 0001 00         # value length 5: Version 0, KRaftVersion 1, no tags
    00                      # no headers
""")]) + batch(2, 0x00, [hx(METADATA_VERSION_33.format(delta="00"))]) + footer_at(3)
"""--no-initial-controllers on a dynamic quorum: kraft.version 1, no voter set."""

ZERO_CHECKPOINT_STANDALONE = SNAPSHOT[:-len(footer_at(3))] + batch(3, 0x00, [
    hx(METADATA_VERSION_33.format(delta="00")),
    hx(SHARE_VERSION_2.format(delta="02")),
]) + footer_at(5)
"""--standalone: Kafka 4.3's control batch (header, KRaftVersionRecord, VotersRecord at offsets 0-2),
then the bootstrap records from offset 3."""


def test_the_control_batch_of_kafka_4_3s_zero_checkpoint_is_kept_in_4_4s() -> None:
    assert SNAPSHOT.endswith(footer_at(3))  # the pieces above are cut from the hand-worked 4.3 file


@pytest.mark.parametrize(("kraft_version", "controllers", "records", "expected"), [
    (0, [], [feature_level_record("metadata.version", 33), feature_level_record("share.version", 2)],
     ZERO_CHECKPOINT_STATIC),
    (1, [], [feature_level_record("metadata.version", 33)], ZERO_CHECKPOINT_NO_INITIAL_CONTROLLERS),
    (1, [InitialController(1, "localhost", 9093, U1)],
     [feature_level_record("metadata.version", 33), feature_level_record("share.version", 2)],
     ZERO_CHECKPOINT_STANDALONE),
], ids=["static", "no-initial-controllers", "standalone"])
def test_kafka_4_4s_zero_checkpoint_layout(tmp_path: Path, kraft_version: int,
                                           controllers: list[InitialController],
                                           records: list[ApiMessageAndVersion], expected: bytes) -> None:
    path = write_zero_checkpoint(tmp_path, records, kraft_version=kraft_version, controllers=controllers,
                                 listener_name="CONTROLLER", timestamp_ms=T)
    assert path == tmp_path / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint"
    assert path.read_bytes() == expected
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # the .part file was renamed
    metadata = read_zero_checkpoint_bootstrap(tmp_path)
    assert metadata is not None and (metadata.records, metadata.metadata_version) == (records, 33)
    voters = read_bootstrap_voters(path)
    assert ([v.voter_id for v in voters.voters] if voters is not None else []) == [
        c.node_id for c in controllers]


def test_kafka_4_3s_zero_checkpoint_holds_no_bootstrap_records(tmp_path: Path) -> None:
    assert read_zero_checkpoint_bootstrap(tmp_path) is None  # no zero checkpoint at all
    write_bootstrap_snapshot(tmp_path, [InitialController(1, "localhost", 9093, U1)], "CONTROLLER",
                             timestamp_ms=T)
    assert read_zero_checkpoint_bootstrap(tmp_path) is None  # Kafka 4.3's layout
    write_zero_checkpoint(tmp_path, [feature_level_record("group.version", 1)], kraft_version=0,
                          timestamp_ms=T)
    with pytest.raises(StorageFormatError, match="No FeatureLevelRecord for metadata.version"):
        read_zero_checkpoint_bootstrap(tmp_path)


def test_the_bootstrap_records_of_the_zero_checkpoint_fit_in_one_batch() -> None:
    """BatchAccumulator keeps one append in one batch: 8 MiB at most, header included (KIP-1170)."""
    def records(name_length: int) -> list[MetadataRecord]:
        return bootstrap_records(33, extra_records=[
            ApiMessageAndVersion(messages.TopicRecord(name="t" * name_length, topic_id=U1), 0)] * 128)

    fits = records(65000)
    size = bootstrap_batch_size(fits)
    assert size == len(encode_batch(zero_checkpoint_batches(fits, kraft_version=0, timestamp_ms=T)[1]))
    assert size <= MAX_BATCH_SIZE
    too_big = records(66000)
    assert bootstrap_batch_size(too_big) > MAX_BATCH_SIZE
    with pytest.raises(ValueError, match="exceeds the maximum allowed batch size of 8388608"):
        zero_checkpoint_batches(too_big, kraft_version=0, timestamp_ms=T)


def test_a_voter_set_needs_kraft_version_1() -> None:
    with pytest.raises(ValueError, match="a voter set needs kraft.version 1"):
        zero_checkpoint_batches([], kraft_version=0, controllers=[InitialController(1, "h", 1, U1)],
                                listener_name="CONTROLLER", timestamp_ms=T)
