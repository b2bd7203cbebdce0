"""The data source: Spark reads it through the Python data source API, in several partitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafka_admin_kraft.records import BatchReader
from pipeline.conftest import write_topic_segment


def test_spark_reads_the_data_source_in_several_partitions(spark: Any, tmp_path: Path) -> None:
    log = write_topic_segment(tmp_path / "logs" / "__cluster_metadata-0")
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
