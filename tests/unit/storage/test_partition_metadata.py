"""partition.metadata, byte for byte, and its refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID
from kafka_admin_kraft.storage import (
    PartitionMetadata,
    StorageFormatError,
    read_partition_metadata,
    write_partition_metadata,
)
from unit.storage.storage_testlib import DIR_ID


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
