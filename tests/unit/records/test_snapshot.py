"""Snapshot files: names, the writer's part file and rename, and the structure check."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records import (
    SnapshotId,
    SnapshotWriter,
    list_snapshots,
    parse_snapshot_file_name,
    read_snapshot,
)
from unit.records.records_testlib import snapshot_batches


def test_snapshot_names() -> None:
    snapshot = SnapshotId(1234, 5)
    assert snapshot.file_name == "00000000000000001234-0000000005.checkpoint"
    assert parse_snapshot_file_name("00000000000000001234-0000000005.checkpoint") == snapshot
    for name in ("00000000000000001234-0000000005.checkpoint.part",
                 "00000000000000001234-0000000005-123.checkpoint.part",
                 "00000000000000001234-0000000005.checkpoint.deleted", "1234-5.checkpoint"):
        assert parse_snapshot_file_name(name) is None
    assert SnapshotId(10, 1) < SnapshotId(10, 2) < SnapshotId(11, 0)


def test_snapshot_writer_uses_a_part_file_then_renames(tmp_path: Path) -> None:
    snapshot = SnapshotId(40, 3)
    writer = SnapshotWriter(tmp_path, snapshot)
    part = writer.partial_path.name
    assert part.startswith("00000000000000000040-0000000003-") and part.endswith(".checkpoint.part")
    assert part[len("00000000000000000040-0000000003-"):-len(".checkpoint.part")].isdigit()
    for batch in snapshot_batches(40, 3):
        writer.append(batch)
    assert list_snapshots(tmp_path) == []
    path = writer.freeze()
    assert path == tmp_path / "00000000000000000040-0000000003.checkpoint"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert list_snapshots(tmp_path) == [snapshot]
    assert [batch.base_offset for batch in read_snapshot(path)] == [0, 1, 3]


def test_aborted_snapshot_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), SnapshotWriter(tmp_path, SnapshotId(1, 1)) as writer:
        writer.append(snapshot_batches(1, 1)[0])
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []


def test_snapshot_structure_is_checked(tmp_path: Path) -> None:
    header, data, footer = snapshot_batches(4, 1)
    path = tmp_path / "00000000000000000004-0000000001.checkpoint"
    for content, text in ((data + footer, "first record is not a SnapshotHeaderRecord"),
                          (header + data, "last record is not a SnapshotFooterRecord"),
                          (b"", "holds no batches"),
                          (header + data + footer[:-3], "file ends inside a batch")):
        path.write_bytes(content)
        with pytest.raises(CorruptRecordError, match=text) as info:
            list(read_snapshot(path))
        assert info.value.what == str(path)
