"""meta.properties, byte for byte: as JDK 17 and 18+ write it, read back as Kafka reads it, refusals."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from kafka_admin_kraft.config.properties import parse_properties
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft.storage import (
    MetaProperties,
    StorageFormatError,
    read_meta_properties,
    write_meta_properties,
)
from unit.storage.storage_testlib import DIR_ID

MOMENT = datetime(2024, 3, 7, 10, 22, 17, tzinfo=timezone.utc)
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
