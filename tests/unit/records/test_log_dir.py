"""Whole metadata directories: segments and snapshots read in offset order, torn tails."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records import MetadataLogDir, SegmentWriter, SnapshotId, data_batch, list_segments
from unit.records.records_testlib import T, snapshot_batches


def _write_segment(directory: Path, base: int, count: int, epoch: int = 1) -> None:
    with SegmentWriter(directory, base) as writer:
        for offset in range(base, base + count):
            writer.append(data_batch(offset, epoch, T + offset, [b"\x01\x14\x00\x00"]))


def test_metadata_directory_reads_in_offset_order(tmp_path: Path) -> None:
    _write_segment(tmp_path, 10, 5)
    _write_segment(tmp_path, 0, 10)
    _write_segment(tmp_path, 15, 3)
    (tmp_path / "00000000000000000005.log.deleted").write_bytes(b"junk")
    directory = MetadataLogDir(tmp_path)
    assert [segment.base_offset for segment in list_segments(tmp_path)] == [0, 10, 15]
    assert [batch.base_offset for batch in directory.read_log()] == list(range(18))
    assert [batch.base_offset for batch in directory.read_log(12)] == list(range(12, 18))
    snapshot = tmp_path / SnapshotId(4, 1).file_name
    snapshot.write_bytes(b"".join(snapshot_batches(4, 1)))
    assert directory.latest_snapshot() == SnapshotId(4, 1)
    assert [batch.base_offset for batch in directory.read_all()] == [0, 1, 3, *range(4, 18)]
    assert directory.torn_tail is None


def test_only_the_newest_segment_may_be_torn(tmp_path: Path) -> None:
    _write_segment(tmp_path, 0, 3)
    _write_segment(tmp_path, 3, 3)
    newest = tmp_path / "00000000000000000003.log"
    newest.write_bytes(newest.read_bytes() + b"\x00" * 5)
    directory = MetadataLogDir(tmp_path)
    assert len(list(directory.read_log())) == 6
    assert directory.torn_tail is not None and directory.torn_segment == newest
    oldest = tmp_path / "00000000000000000000.log"
    oldest.write_bytes(oldest.read_bytes()[:-1])
    with pytest.raises(CorruptRecordError, match="file ends inside a batch") as info:
        list(MetadataLogDir(tmp_path).read_log())
    assert info.value.what == str(oldest)


def test_offsets_must_grow_across_segments(tmp_path: Path) -> None:
    _write_segment(tmp_path, 0, 5)
    with SegmentWriter(tmp_path, 3) as writer:
        writer.append(data_batch(3, 1, T, [b"\x01\x14\x00\x00"]))
    with pytest.raises(CorruptRecordError, match="below the previous batch") as info:
        list(MetadataLogDir(tmp_path).read_log())
    assert info.value.what.endswith("00000000000000000003.log") and info.value.offset == 0
