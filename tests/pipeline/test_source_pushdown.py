"""What a Spark query tells the data source: filters on record_type, file_kind and cluster_id are
pushed down (and leave the rows a filter in Spark would leave), also when the source is registered
the plain Spark way, which works without pushdown too; the ``columns`` option leaves the other
columns null, and a schema given to the reader leaves them out."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft.pipeline.planning import plan
from kafka_admin_kraft.pipeline.schema import COLUMN_INDEX, COLUMN_NAMES
from pipeline.conftest import DAMAGED_CLUSTER, Damaged
from pipeline.row_oracle import oracle_rows
from pipeline.scenario import Truth

WHERE = (
    "record_type IN ('VotersRecord', 'LeaderChangeMessage', 'FeatureLevelRecord') "
    "AND file_kind IN ('segment', 'snapshot') AND cluster_id = '{cluster}'"
)


def _paths(scenario: Truth, damaged: Damaged) -> list[str]:
    return [str(scenario.root / "cluster"), str(damaged.log_dir)]


def _frame(spark: Any, paths: list[str], **options: str) -> Any:
    reader = spark.read.format("kraft-metadata").option("splitBytes", "8192")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(paths)


def _key(row: Any) -> tuple[Any, ...]:
    return tuple(row[COLUMN_INDEX[name]] for name in ("file", "batch_position", "record_index"))


def _spark_filters(query: Any) -> list[str]:
    """The Filter lines of the executed plan: the filters Spark applies itself."""
    plan_text = query._jdf.queryExecution().executedPlan().toString()
    return [line for line in plan_text.splitlines() if "Filter" in line]


def _kept_rows(paths: list[str], cluster: str) -> list[Any]:
    """The rows ``WHERE`` keeps, from the oracle."""
    kept = {"VotersRecord", "LeaderChangeMessage", "FeatureLevelRecord"}
    return sorted(
        (
            row
            for split in plan(paths, split_bytes=8192).splits
            for row in oracle_rows(split)
            if row[COLUMN_INDEX["record_type"]] in kept
            and row[COLUMN_INDEX["file_kind"]] in ("segment", "snapshot")
            and row[COLUMN_INDEX["cluster_id"]] == cluster
        ),
        key=_key,
    )


def test_pushed_filters_leave_the_rows_the_filter_keeps(
    spark: Any, scenario: Truth, damaged: Damaged
) -> None:
    paths = _paths(scenario, damaged)
    query = _frame(spark, paths).where(WHERE.format(cluster=scenario.cluster_id))
    spark_filters = _spark_filters(query)
    assert all(" IN " not in line and " = " not in line for line in spark_filters), spark_filters
    got = sorted((tuple(row) for row in query.collect()), key=_key)
    expected = _kept_rows(paths, scenario.cluster_id)
    assert len(expected) > 10
    assert got == expected


@pytest.mark.parametrize("pushdown", [False, True], ids=["default session", "pushdown session"])
def test_the_plain_spark_registration_reads_with_pushdown_when_the_session_allows_it(
    spark: Any, scenario: Truth, damaged: Damaged, pushdown: bool
) -> None:
    """``spark.dataSource.register(KRaftMetadataDataSource)``, as Spark documents it, in a session
    without Python filter pushdown (Spark's default) and in one with it."""
    from kafka_admin_kraft.pipeline.source import PUSHDOWN_CONF, KRaftMetadataDataSource, register

    paths = _paths(scenario, damaged)
    spark.conf.set(PUSHDOWN_CONF, str(pushdown).lower())
    try:
        spark.dataSource.register(KRaftMetadataDataSource)
        query = _frame(spark, paths).where(WHERE.format(cluster=scenario.cluster_id))
        applied_by_spark = any(" IN " in line for line in _spark_filters(query))
        assert applied_by_spark is not pushdown
        got = sorted((tuple(row) for row in query.collect()), key=_key)
        assert got == _kept_rows(paths, scenario.cluster_id)
    finally:
        register(spark)


def test_a_pushed_file_kind_or_cluster_reads_fewer_splits(
    spark: Any, scenario: Truth, damaged: Damaged
) -> None:
    frame = _frame(spark, _paths(scenario, damaged))
    every = frame.rdd.getNumPartitions()
    snapshots = frame.where("file_kind = 'snapshot'")
    assert 0 < snapshots.rdd.getNumPartitions() < every
    assert {row["file_kind"] for row in snapshots.select("file_kind").distinct().collect()} == {"snapshot"}
    damaged_only = frame.where(f"cluster_id = '{DAMAGED_CLUSTER}'")
    assert damaged_only.rdd.getNumPartitions() < every
    expected = [
        row
        for split in plan([str(damaged.log_dir)], split_bytes=8192).splits
        for row in oracle_rows(split)
        if row[COLUMN_INDEX["cluster_id"]] == DAMAGED_CLUSTER
    ]
    assert damaged_only.count() == len(expected) > 0


def test_the_columns_option_reads_those_columns_only(
    spark: Any, scenario: Truth, damaged: Damaged
) -> None:
    paths = _paths(scenario, damaged)
    wanted = ["offset", "record_type", "error_kind"]
    narrow = _frame(spark, paths, columns=",".join(wanted)).collect()
    full = _frame(spark, paths, json="false").collect()
    assert len(narrow) == len(full) > 100
    others = [name for name in COLUMN_NAMES if name not in wanted]
    assert all(row[name] is None for row in narrow for name in others)
    pairs = sorted((row["offset"], row["record_type"]) for row in narrow if row["error_kind"] is None)
    assert pairs == sorted((row["offset"], row["record_type"]) for row in full if row["error_kind"] is None)
    assert all(row["record_json"] is None for row in full)
    assert any(row["record_value"] is not None for row in full)


def test_an_unknown_column_is_a_clear_error(spark: Any, scenario: Truth) -> None:
    with pytest.raises(Exception, match="no column nonsense"):
        _frame(spark, [str(scenario.root / "cluster")], columns="offset,nonsense").count()


def test_a_schema_given_to_the_reader_hands_spark_those_columns_only(
    spark: Any, scenario: Truth, damaged: Damaged
) -> None:
    paths = _paths(scenario, damaged)
    wanted = ["record_type", "offset", "voter_ids", "error_kind"]
    schema = "record_type string, offset bigint, voter_ids array<int>, error_kind string"
    narrow = spark.read.format("kraft-metadata").option("splitBytes", "8192").schema(schema).load(paths)
    assert narrow.columns == wanted
    rows = sorted((tuple(row) for row in narrow.collect()), key=repr)
    full = _frame(spark, paths, json="false").collect()
    assert rows == sorted((tuple(row[name] for name in wanted) for row in full), key=repr)
    assert any(voters for _, _, voters, _ in rows) and any(error for *_, error in rows)


@pytest.mark.parametrize("schema, message", [
    ("offset string", "column offset is bigint, not string"),
    ("offset bigint, nonsense int", "no column nonsense"),
])
def test_a_schema_the_source_cannot_fill_is_a_clear_error(spark: Any, scenario: Truth, schema: str,
                                                         message: str) -> None:
    with pytest.raises(Exception, match=message):
        spark.read.format("kraft-metadata").schema(schema).load(str(scenario.root / "cluster")).count()


def test_a_directory_without_metadata_logs_has_no_rows(spark: Any, tmp_path: Any) -> None:
    (tmp_path / "not-a-log-dir").mkdir()
    assert _frame(spark, [str(tmp_path)]).count() == 0


def test_small_splits_share_a_partition_and_keep_their_order(tmp_path: Any) -> None:
    from kafka_admin_kraft.pipeline.planning import FileSplit
    from kafka_admin_kraft.pipeline.source import pack

    lengths = [300, 900, 50, 1000, 2500, 10, 0, 700, 400]
    splits = [FileSplit(f"f{i}", "segment", 0, n, n, "d") for i, n in enumerate(lengths)]
    groups = pack(splits, 1000)
    assert [s for group in groups for s in group] == splits
    assert all(sum(s.end for s in group) <= 1000 or len(group) == 1 for group in groups)
    assert [[s.path for s in group] for group in groups] == [
        ["f0"], ["f1", "f2"], ["f3"], ["f4"], ["f5", "f6", "f7"], ["f8"]
    ]
