"""The data source: splits on batch boundaries (from the index or by walking prefixes), every batch
read once, damage reported by file and position; Spark reads it through the Python data source API;
a missing Java runtime is reported with what to install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.pipeline.planning import LogDirInfo, plan, split_file
from kafka_admin_kraft.pipeline.schema import COLUMN_INDEX, COLUMNS
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import BatchReader, SegmentWriter, metadata_batches
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion
from pipeline.conftest import Damaged
from pipeline.row_oracle import columnar_rows

OFFSET = COLUMN_INDEX["offset"]
POSITION = COLUMN_INDEX["batch_position"]
KIND = COLUMN_INDEX["error_kind"]


def _segment(directory: Path, batches: int = 600) -> Path:
    directory.mkdir(parents=True)
    offset = 0
    with SegmentWriter(directory, 0) as writer:
        for index in range(batches):
            records = [
                ApiMessageAndVersion(messages.TopicRecord(name=f"topic-{index}-{n}"), 0) for n in range(5)
            ]
            for batch in metadata_batches(offset, 1 + index // 100, 1_700_000_000_000 + index, records):
                writer.append(batch)
                offset = batch.next_offset
        return writer.files.log


def _read_all(splits: list[Any]) -> list[tuple[Any, ...]]:
    return [row for split in splits for row in columnar_rows(split)]


@pytest.mark.parametrize("with_index", [True, False])
def test_splits_follow_batch_boundaries_and_read_each_batch_once(tmp_path: Path, with_index: bool) -> None:
    log = _segment(tmp_path / "p")
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
    rows = _read_all(splits)
    assert all(len(row) == len(COLUMNS) for row in rows)
    assert [row[OFFSET] for row in rows] == reader_offsets
    assert all(row[KIND] is None for row in rows)


def test_corruption_at_a_split_boundary_and_inside_a_split(tmp_path: Path) -> None:
    log = _segment(tmp_path / "p")
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
    rows = _read_all(splits)
    errors = [(row[KIND], row[POSITION]) for row in rows if row[KIND] is not None]
    assert sorted(errors) == sorted([("corrupt", boundary[0]), ("corrupt", inside[0])])
    expected = [
        o for position, _, offsets in batches if position not in (boundary[0], inside[0]) for o in offsets
    ]
    assert [row[OFFSET] for row in rows if row[KIND] is None] == expected


def test_damaged_directory_rows(damaged: Damaged) -> None:
    rows = _read_all(plan([str(damaged.log_dir)]).splits)
    segment_rows = [r for r in rows if r[COLUMN_INDEX["file_kind"]] == "segment"]
    errors = [(r[KIND], r[POSITION]) for r in segment_rows if r[KIND] is not None]
    assert errors == [("corrupt", damaged.corrupt_position), ("torn_tail", damaged.torn_position)]
    assert sum(1 for r in segment_rows if r[KIND] is None) == damaged.record_count
    # the same bytes as an older segment: the short tail is corruption, not a torn tail
    older = plan([str(damaged.log_dir)]).splits
    stale = [s for s in older if s.kind == "segment"][0]
    import dataclasses

    kinds = [r[KIND] for r in columnar_rows(dataclasses.replace(stale, newest_segment=False)) if r[KIND]]
    assert kinds == ["corrupt", "corrupt"]


def test_spark_reads_the_data_source_in_several_partitions(spark: Any, tmp_path: Path) -> None:
    log = _segment(tmp_path / "logs" / "__cluster_metadata-0")
    expected = sum(len(b.records) for b in BatchReader.open(log))
    frame = (
        spark.read.format("kraft-metadata")
        .option("splitBytes", str(log.stat().st_size // 3))
        .load(str(log.parent))
    )
    assert frame.rdd.getNumPartitions() >= 3
    row = frame.selectExpr(
        "count(*) AS n",
        "count(DISTINCT offset) AS d",
        "min(offset) AS lo",
        "max(offset) AS hi",
        "count(record_json) AS j",
    ).collect()[0]
    assert (row["n"], row["d"], row["lo"], row["hi"], row["j"]) == (
        expected,
        expected,
        0,
        expected - 1,
        expected,
    )
    topic = frame.where("offset = 7").select("record_type", "record_json").collect()[0]
    assert topic["record_type"] == "TopicRecord" and '"name":"topic-1-2"' in topic["record_json"]


def test_missing_java_is_reported_with_what_to_install(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python")
    if shutil.which("java", path=str(bin_dir)):
        pytest.skip("java next to python")
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_PYTHON")}
    env["PATH"] = str(bin_dir)
    logs = tmp_path / "logs"
    logs.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "kafka_admin_kraft_cli.kafka_metadata_audit", "-o", str(tmp_path / "out"),
         str(logs)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 2, result.stderr
    assert "openjdk-17-jre-headless" in result.stderr and "JAVA_HOME" in result.stderr
