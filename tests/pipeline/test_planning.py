"""Planning cuts a file into splits on batch boundaries, from its offset index or by walking the
batches' prefixes, and the splits read every batch once."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft.pipeline.planning import LogDirInfo, split_file
from kafka_admin_kraft.pipeline.schema import COLUMN_INDEX, COLUMNS
from kafka_admin_kraft.records import BatchReader
from pipeline.conftest import write_topic_segment
from pipeline.row_oracle import columnar_rows

OFFSET = COLUMN_INDEX["offset"]
KIND = COLUMN_INDEX["error_kind"]


@pytest.mark.parametrize("with_index", [True, False])
def test_splits_follow_batch_boundaries_and_read_each_batch_once(tmp_path: Path, with_index: bool) -> None:
    log = write_topic_segment(tmp_path / "p")
    if not with_index:
        log.with_suffix(".index").unlink()
    size = log.stat().st_size
    splits = split_file(log, LogDirInfo(str(tmp_path)), split_bytes=size // 7, newest_segment=True)
    assert len(splits) >= 6
    assert splits[0].start == 0 and splits[-1].end == size
    assert all(a.end == b.start for a, b in zip(splits, splits[1:], strict=False))
    with BatchReader.open(log) as reader:
        positions = {batch.position for batch in reader}
        reader_offsets = [r.offset for batch in BatchReader.open(log) for r in batch.records]
    assert {s.start for s in splits} <= positions
    rows = [row for split in splits for row in columnar_rows(split)]
    assert all(len(row) == len(COLUMNS) for row in rows)
    assert [row[OFFSET] for row in rows] == reader_offsets
    assert all(row[KIND] is None for row in rows)
