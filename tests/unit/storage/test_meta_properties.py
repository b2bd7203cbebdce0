"""meta.properties, quorum-state, partition.metadata and leader-epoch-checkpoint, byte for byte."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kafka_admin_kraft.config.properties import format_properties, parse_properties
from kafka_admin_kraft.protocol.exceptions import EncodeError
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID, ZERO_UUID, Uuid
from kafka_admin_kraft.storage import (
    EpochEntry,
    MetaProperties,
    PartitionMetadata,
    QuorumState,
    StorageFormatError,
    read_leader_epoch_checkpoint,
    read_meta_properties,
    read_partition_metadata,
    read_quorum_state,
    write_leader_epoch_checkpoint,
    write_meta_properties,
    write_partition_metadata,
    write_quorum_state,
)

MOMENT = datetime(2024, 3, 7, 10, 22, 17, tzinfo=timezone.utc)
DIR_ID = Uuid.from_string("3Db5QLSqSZieL3rJBUUegA")
META = MetaProperties(version=1, cluster_id="XcZZOzUqS4yHOjhMQB6JLQ", node_id=1, directory_id=DIR_ID)


def test_meta_properties_as_jdk18_and_later_write_it(tmp_path: Path) -> None:
    path = write_meta_properties(tmp_path, META, moment=MOMENT)
    assert path == tmp_path / "meta.properties"
    assert path.read_bytes() == (
        b"#\n"                                    # Properties.store(writer, ""): empty comment line
        b"#Thu Mar 07 10:22:17 UTC 2024\n"        # Date.toString()
        b"cluster.id=XcZZOzUqS4yHOjhMQB6JLQ\n"    # keys sorted (JDK 18+)
        b"directory.id=3Db5QLSqSZieL3rJBUUegA\n"
        b"node.id=1\n"
        b"version=1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.properties"]  # the .tmp is gone
    assert read_meta_properties(tmp_path) == META


def test_meta_properties_in_jdk17_hash_order(tmp_path: Path) -> None:
    # String.hashCode spread into a 16-bin table: node.id -> bin 0, broker.id 6, directory.id 9,
    # version 13, cluster.id 14.
    path = write_meta_properties(tmp_path, META, moment=MOMENT, key_order="hash")
    assert path.read_text().splitlines()[2:] == [
        "node.id=1", "directory.id=3Db5QLSqSZieL3rJBUUegA", "version=1", "cluster.id=XcZZOzUqS4yHOjhMQB6JLQ"]
    v0 = MetaProperties(version=0, cluster_id="c", node_id=4)
    path = write_meta_properties(tmp_path, v0, moment=MOMENT, key_order="hash")
    assert path.read_text().splitlines()[2:] == ["broker.id=4", "version=0", "cluster.id=c"]
    assert read_meta_properties(path) == v0


def test_date_line_uses_the_local_zone_name() -> None:
    zone = timezone(timedelta(hours=1), "CET")
    text = format_properties({}, moment=datetime(2025, 12, 31, 23, 5, 0, tzinfo=zone))
    assert text == "#\n#Wed Dec 31 23:05:00 CET 2025\n"


def test_properties_escapes_are_written_like_java() -> None:
    text = format_properties({"a key": " lead = a:b#c!d\\e\tf"}, moment=MOMENT)
    assert text.splitlines()[2] == "a\\ key=\\ lead \\= a\\:b\\#c\\!d\\\\e\\tf"
    assert parse_properties(text) == {"a key": " lead = a:b#c!d\\e\tf"}


def test_properties_reader_is_tolerant_like_java(tmp_path: Path) -> None:
    path = tmp_path / "meta.properties"
    path.write_bytes(
        b"# written by hand\r\n"
        b"  ! another comment\n"
        b"\n"
        b"   cluster.id = abc\\\n"
        b"        def\n"
        b"node.id:7\n"
        b"version 1\n"
        b"directory.id=3Db5QLSqSZieL3rJ\\u0042UUegA\n"
        b"extra\\ key=\\u0041\\n")
    assert read_meta_properties(path) == MetaProperties(1, "abcdef", 7, DIR_ID)
    assert parse_properties(path.read_text())["extra key"] == "A\n"


def test_properties_are_read_as_iso_8859_1_like_kafka(tmp_path: Path) -> None:
    path = tmp_path / "meta.properties"
    write_meta_properties(path, MetaProperties(1, "caf\u00e9", 1), moment=MOMENT)
    assert b"cluster.id=caf\xc3\xa9\n" in path.read_bytes()  # written as UTF-8 ...
    assert read_meta_properties(path).cluster_id == "caf\u00c3\u00a9"  # ... read back as Latin-1


@pytest.mark.parametrize(("content", "key", "text"), [
    ("version=1\ncluster.id=c\n", "node.id", "Failed to find required property node.id."),
    ("version=1\ncluster.id=c\nnode.id=x\n", "node.id", "Unable to read node.id as a base-10 number"),
    ("version=1\ncluster.id=c\nnode.id=99999999999\n", "node.id", "Unable to read node.id"),
    ("version=1\nnode.id=1\n", "cluster.id", "cluster.id was not found."),
    ("version=2\nnode.id=1\n", "version", "Unknown meta.properties version number 2"),
    ("version=one\n", "version", "Invalid meta.properties version string"),
    ("version=1\ncluster.id=c\nnode.id=1\ndirectory.id=nope\n", "directory.id",
     "Unable to read directory.id"),
    ("version=1\ncluster.id=c\nnode.id=1\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAA\n", "directory.id", "reserved"),
    ("version=1\ncluster.id=c\nnode.id=1\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n", "directory.id", "reserved"),
    ("cluster.id=\\uZZZZ\n", "", "Malformed \\uxxxx encoding."),
])
def test_bad_meta_properties(tmp_path: Path, content: str, key: str, text: str) -> None:
    path = tmp_path / "meta.properties"
    path.write_text(content)
    with pytest.raises(StorageFormatError) as info:
        read_meta_properties(path)
    assert info.value.what == str(path)
    assert info.value.path == key
    assert text in info.value.reason


def test_version_0_needs_nothing() -> None:
    assert parse_and_validate("broker.id=3\n") == MetaProperties(0, None, 3, None)
    assert parse_and_validate("") == MetaProperties(0)


def parse_and_validate(text: str) -> MetaProperties:
    from kafka_admin_kraft.storage.meta_properties import meta_properties_from

    return meta_properties_from(parse_properties(text))


def test_writing_a_reserved_directory_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StorageFormatError, match="reserved"):
        write_meta_properties(tmp_path, MetaProperties(1, "c", 1, ZERO_UUID))
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------ quorum-state

V0_LINE = ('{"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,'
           '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')
V1_LINE = ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA",'
           '"data_version":1}')


def test_quorum_state_v0_and_v1_lines(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    v0 = QuorumState(data_version=0, leader_id=1, leader_epoch=5, current_voters=(1, 2, 3))
    write_quorum_state(path, v0)
    assert path.read_bytes() == V0_LINE.encode()
    assert read_quorum_state(path) == v0
    v1 = QuorumState(leader_id=1, leader_epoch=5)
    write_quorum_state(path, v1)
    assert path.read_bytes() == V1_LINE.encode()
    assert read_quorum_state(path) == v1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quorum-state"]


def test_quorum_state_details(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    voted = QuorumState(leader_id=-1, leader_epoch=6, voted_id=2, voted_directory_id=DIR_ID)
    write_quorum_state(path, voted)
    assert path.read_text() == ('{"leaderId":-1,"leaderEpoch":6,"votedId":2,'
                                '"votedDirectoryId":"3Db5QLSqSZieL3rJBUUegA","data_version":1}')
    odd = QuorumState(data_version=0, cluster_id='q"\\\u00e9\n\x01', current_voters=None)
    write_quorum_state(path, odd)
    expected_start = '{"clusterId":"q\\"\\\\\u00e9\\n\\u0001","leaderId":-1'
    assert path.read_text(encoding="utf-8").startswith(expected_start)
    assert '"currentVoters":null' in path.read_text()
    assert read_quorum_state(path) == odd
    path.write_text(V1_LINE + "\nignored second line")
    assert read_quorum_state(path).leader_epoch == 5
    path.write_text('{"data_version":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","votedId":"3",'
                    '"leaderEpoch":5,"leaderId":1,"unknown":true}')
    assert read_quorum_state(path) == QuorumState(leader_id=1, leader_epoch=5, voted_id=3)


@pytest.mark.parametrize(("content", "text"), [
    ("", "File ended prematurely."),
    ("[1]", "is not an object node"),
    ("{not json", "not JSON"),
    ('{"leaderId":1}', "does not have data_version field"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":2}', "data_version (2) is not within"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":-1}', "data_version (-1) is not within"),
    ('{"leaderId":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}',
     "unable to locate field 'leaderEpoch'"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":1}',
     "unable to locate field 'votedDirectoryId'"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"x","data_version":1}', "uuid"),
    ('{"leaderId":true,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"x","data_version":1}', "int32"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":0}', "unable to locate field 'clusterId'"),
    ('{"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":[1],'
     '"data_version":0}', "expected an object"),
    ("[" * 100000, "not JSON"),
])
def test_bad_quorum_state(tmp_path: Path, content: str, text: str) -> None:
    path = tmp_path / "quorum-state"
    path.write_text(content)
    with pytest.raises(StorageFormatError, match=None) as info:
        read_quorum_state(path)
    assert text in str(info.value)
    assert info.value.what == str(path)


# -------------------------------------------------------------------------- partition.metadata


def test_partition_metadata(tmp_path: Path) -> None:
    path = tmp_path / "partition.metadata"
    write_partition_metadata(path, PartitionMetadata())
    assert path.read_bytes() == b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    assert read_partition_metadata(path) == PartitionMetadata(METADATA_TOPIC_ID, 0)
    path.write_bytes(b"version:   0\r\ntopic_id: 3Db5QLSqSZieL3rJBUUegA\n")
    assert read_partition_metadata(path) == PartitionMetadata(DIR_ID, 0)


@pytest.mark.parametrize(("content", "text"), [
    (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "Invalid topic ID"),
    (b"version: -1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", "Unrecognized version"),
    (b"version 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", "Malformed line"),
    (b"version: x\n", "Malformed line"),
    (b"version: 0\n", "Malformed line"),
    (b"version: 0\ntopic_id: short", "uuid"),
    (b"", "Malformed line"),
])
def test_bad_partition_metadata(tmp_path: Path, content: bytes, text: str) -> None:
    path = tmp_path / "partition.metadata"
    path.write_bytes(content)
    with pytest.raises(StorageFormatError, match=None) as info:
        read_partition_metadata(path)
    assert text in info.value.reason


# ---------------------------------------------------------------------- leader-epoch-checkpoint


def test_leader_epoch_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "leader-epoch-checkpoint"
    write_leader_epoch_checkpoint(path, [EpochEntry(0, 0), EpochEntry(5, 120)])
    assert path.read_bytes() == b"0\n2\n0 0\n5 120\n"
    assert read_leader_epoch_checkpoint(path) == [(0, 0), (5, 120)]
    write_leader_epoch_checkpoint(path, [])
    assert path.read_bytes() == b"0\n0\n"
    assert read_leader_epoch_checkpoint(path) == []
    path.write_bytes(b"")
    assert read_leader_epoch_checkpoint(path) == []


@pytest.mark.parametrize(("content", "text"), [
    (b"1\n0\n", "Unrecognised version: 1"),
    (b"0\n2\n0 0\n", "Expected 2 entries in checkpoint file, but found only 1"),
    (b"0\n1\n0 0\n1 5\n", "Expected 1 entries"),
    (b"0\n1\n0,0\n", "Malformed line"),
    (b"0\n1\n0 x\n", "Malformed line"),
    (b"zero\n", "Malformed line"),
])
def test_bad_leader_epoch_checkpoint(tmp_path: Path, content: bytes, text: str) -> None:
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_bytes(content)
    with pytest.raises(StorageFormatError) as info:
        read_leader_epoch_checkpoint(path)
    assert text in info.value.reason


@pytest.mark.parametrize("state", [
    QuorumState(data_version=1, cluster_id="c"),
    QuorumState(data_version=1, applied_offset=5),
    QuorumState(data_version=1, current_voters=(1,)),
    QuorumState(data_version=0, voted_directory_id=DIR_ID),
    QuorumState(data_version=2),
])
def test_quorum_state_fields_must_fit_the_version(tmp_path: Path, state: QuorumState) -> None:
    with pytest.raises(EncodeError):
        write_quorum_state(tmp_path / "quorum-state", state)
    assert list(tmp_path.iterdir()) == []
