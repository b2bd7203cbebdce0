"""The walk over a split reports damage by file and position: a CRC mismatch at a split boundary, a
broken length inside a split (the walk then resynchronises on the next batch), a partly written
batch at the end of the newest segment (a torn tail, corruption in an older segment)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kafka_admin_kraft.pipeline.planning import LogDirInfo, plan, split_file
from kafka_admin_kraft.pipeline.schema import COLUMN_INDEX
from kafka_admin_kraft.records import BatchReader
from pipeline.conftest import Damaged, write_topic_segment
from pipeline.row_oracle import columnar_rows

OFFSET = COLUMN_INDEX["offset"]
POSITION = COLUMN_INDEX["batch_position"]
KIND = COLUMN_INDEX["error_kind"]


def test_corruption_at_a_split_boundary_and_inside_a_split(tmp_path: Path) -> None:
    log = write_topic_segment(tmp_path / "p")
    size = log.stat().st_size
    splits = split_file(log, LogDirInfo(str(tmp_path)), split_bytes=size // 5, newest_segment=True)
    with BatchReader.open(log) as reader:
        batches = [(b.position, b.size_in_bytes, [r.offset for r in b.records]) for b in reader]
    boundary = next(b for b in batches if b[0] == splits[2].start)
    inside = batches[len(batches) // 2 + 3]
    assert inside[0] not in {s.start for s in splits}
    with open(log, "r+b") as stream:
        stream.seek(boundary[0] + 80)  # inside the records: CRC mismatch
        stream.write(b"\xff\xff")
        stream.seek(inside[0] + 8)  # the length field: the chain breaks, reading resynchronises
        stream.write(b"\x7f\xff\xff\xff")
    rows = [row for split in splits for row in columnar_rows(split)]
    errors = [(row[KIND], row[POSITION]) for row in rows if row[KIND] is not None]
    assert sorted(errors) == sorted([("corrupt", boundary[0]), ("corrupt", inside[0])])
    expected = [
        o for position, _, offsets in batches if position not in (boundary[0], inside[0]) for o in offsets
    ]
    assert [row[OFFSET] for row in rows if row[KIND] is None] == expected


def test_damaged_directory_rows(damaged: Damaged) -> None:
    rows = [row for split in plan([str(damaged.log_dir)]).splits for row in columnar_rows(split)]
    segment_rows = [r for r in rows if r[COLUMN_INDEX["file_kind"]] == "segment"]
    errors = [(r[KIND], r[POSITION]) for r in segment_rows if r[KIND] is not None]
    assert errors == [("corrupt", damaged.corrupt_position), ("torn_tail", damaged.torn_position)]
    assert sum(1 for r in segment_rows if r[KIND] is None) == damaged.record_count
    # the same bytes as an older segment: the short tail is corruption, not a torn tail
    older = plan([str(damaged.log_dir)]).splits
    stale = [s for s in older if s.kind == "segment"][0]
    kinds = [r[KIND] for r in columnar_rows(dataclasses.replace(stale, newest_segment=False)) if r[KIND]]
    assert kinds == ["corrupt", "corrupt"]


def test_a_file_replaced_by_a_directory_after_planning_is_an_error_row(tmp_path: Path) -> None:
    log = write_topic_segment(tmp_path / "p", batches=3)
    [split] = split_file(log, LogDirInfo(str(tmp_path)))
    log.unlink()
    log.mkdir()
    rows = columnar_rows(split)
    assert [(row[KIND], row[COLUMN_INDEX["error"]]) for row in rows] == [
        ("unreadable_file", f"{log}: cannot be read: Is a directory")]
