"""The data source: Spark reads it through the Python data source API, in several partitions."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_admin_kraft.pipeline.planning import FileSplit
from kafka_admin_kraft.pipeline.source import option_count, pack
from kafka_admin_kraft.records import BatchReader
from pipeline.conftest import write_topic_segment

MIB = 1 << 20


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


def _splits(lengths: Sequence[int]) -> list[FileSplit]:
    return [FileSplit(f"f{i}", "segment", 0, n, n, "d") for i, n in enumerate(lengths)]


def _sizes(groups: list[list[FileSplit]]) -> list[int]:
    return [sum(s.end - s.start for s in group) for group in groups]


def _fewest(lengths: Sequence[int], bound: int) -> int:
    """The fewest contiguous partitions within ``bound`` (a larger split alone), tried one by one."""
    for count in range(1, len(lengths) + 1):
        for cuts in itertools.combinations(range(1, len(lengths)), count - 1):
            edges = (0, *cuts, len(lengths))
            parts = [lengths[a:b] for a, b in itertools.pairwise(edges)]
            if all(sum(p) <= bound or len(p) == 1 for p in parts):
                return count
    return 0


def test_pack_makes_even_partitions_of_a_fleet_in_file_order() -> None:
    # 60 logs a little over 8 MiB, each after its small bootstrap checkpoint: 7 logs fit in 64 MiB
    logs = [411, 8 * MIB + 86] * 60
    splits = _splits(logs)
    groups = pack(splits, 64 * MIB)
    assert [s for group in groups for s in group] == splits
    assert len(groups) == 9  # ceil(60 / 7): the fewest the bound allows
    sizes = _sizes(groups)
    assert max(sizes) <= 64 * MIB
    assert max(sizes) - min(sizes) <= 8 * MIB + 86 + 411  # one log apart at most
    # greedily filled, they were 8 partitions of 7 logs and one of 4
    assert sorted(sum(s.end > MIB for s in group) for group in groups) == [6, 6, 6, 7, 7, 7, 7, 7, 7]


def test_pack_rounds_the_partitions_up_to_a_multiple_of_the_parallelism() -> None:
    splits = _splits([411, 8 * MIB + 86] * 60)
    assert [len(group) for group in pack(splits, 64 * MIB, 2)] == [12] * 10
    assert [len(group) for group in pack(splits, 64 * MIB, 4)] == [10] * 12
    assert len(pack(splits, 64 * MIB, 3)) == 9
    assert [len(group) for group in pack(_splits([100]), 1000, 4)] == [1]  # no more than the splits
    assert sorted(len(group) for group in pack(_splits([100, 100, 100]), 1000, 2)) == [1, 2]


def test_pack_keeps_a_split_larger_than_the_bound_alone_and_an_empty_input_empty() -> None:
    groups = pack(_splits([10, 20, 5000, 30, 40]), 100)
    assert [[s.path for s in group] for group in groups] == [["f0", "f1"], ["f2"], ["f3", "f4"]]
    assert pack(_splits([5000]), 100) == [[_splits([5000])[0]]]
    assert pack([], 100) == []
    assert pack([], 100, 4) == []


@given(
    lengths=st.lists(st.integers(0, 120), min_size=1, max_size=9),
    bound=st.integers(1, 150),
    parallelism=st.integers(1, 4),
)
def test_pack_keeps_order_and_bound_in_the_fewest_partitions(
    lengths: list[int], bound: int, parallelism: int
) -> None:
    splits = _splits(lengths)
    groups = pack(splits, bound, parallelism)
    assert [s for group in groups for s in group] == splits
    assert all(group for group in groups)
    assert all(size <= bound or len(group) == 1 for size, group in zip(_sizes(groups), groups, strict=True))
    fewest = _fewest(lengths, bound)
    assert len(groups) == min(len(lengths), -(-fewest // parallelism) * parallelism)


@pytest.mark.parametrize("text", ["", "0", "-3", "1.5", "64MiB", "２", " "])
def test_count_options_refuse_anything_but_a_whole_number_above_zero(text: str) -> None:
    message = f"option splitBytes is a whole number above 0, not {text.strip()!r}"
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        option_count({"splitBytes": text}, "splitBytes", 1)


def test_count_options_take_their_default_and_whole_numbers() -> None:
    assert option_count({}, "parallelism", 1) == 1
    assert option_count({"parallelism": " 4 "}, "parallelism", 1) == 4


def test_the_parallelism_option_rounds_the_partitions_up(spark: Any, tmp_path: Path) -> None:
    logs = [write_topic_segment(tmp_path / f"logs-{i}" / "__cluster_metadata-0") for i in range(5)]
    reader = spark.read.format("kraft-metadata").option("splitBytes", str(2 * logs[0].stat().st_size))
    paths = [str(log.parent) for log in logs]
    assert reader.load(paths).rdd.getNumPartitions() == 3  # two segments each, then one
    shared = reader.option("parallelism", "2").load(paths)
    assert shared.rdd.getNumPartitions() == 4
    assert shared.count() == 5 * sum(len(b.records) for b in BatchReader.open(logs[0]))
    with pytest.raises(Exception, match="option parallelism is a whole number above 0, not '0'"):
        reader.option("parallelism", "0").load(paths).count()
