"""The audit: from the ``kraft-metadata`` rows to Parquet tables and the report's data.

One pass over the data source, which hands over only what the audit needs (``rows=batches`` and a
few columns): one row per batch (offsets, epoch, CRC, replica), the records of the audited types
(LeaderChangeMessage, VotersRecord, KRaftVersionRecord, FeatureLevelRecord), the only values it
decodes, and the error rows. The batch rows stay distributed: holders of every distinct batch,
majority checks against the voter sets, commit status of every batch and divergence are Spark
aggregations. Only per-directory and per-cluster summaries, the audited records, their batches'
statuses and the errors reach the driver. The commit rule is in
:mod:`~kafka_admin_kraft.pipeline.rules`; :func:`_audit` runs the steps in order:

1. :func:`_scan_log_dirs`: each log directory's segment range and error count, then the audited
   records and the errors in one collect;
2. :func:`_choose_references`: each cluster's reference log (rules step 1);
3. :func:`_judge_snapshots`: what the driver can tell of each snapshot, and which ones the
   reference must confirm;
4. :func:`_distinct_batches`: every distinct batch with its holders, whether the reference holds
   it and whether a majority of the voters in effect does (rules step 2);
5. :func:`_committed_ends`: each cluster's committed end offset (rules step 3);
6. :func:`_batch_statuses`: the status of every distinct batch (rules step 4);
   :func:`_tally_replicas` counts them per replica and brings back those of the batches holding
   audited records, in one aggregation;
7. :func:`_write_tables`: the tables, one function each: those built on the driver from the
   findings (:data:`~kafka_admin_kraft.pipeline.tables.DRIVER_TABLES`), and the two queries of
   the steps' Spark frames (:func:`divergence_table`, :func:`errors_table`), written under the
   output directory as Parquet, one directory each.

The tables and their columns are declared in :data:`~kafka_admin_kraft.pipeline.schema.OUTPUT_TABLES`.
Each Spark job has a fixed cost (a tenth of a second to a second), so the per-cluster facts the
driver decides reach Spark as one small broadcast table per step, joined into a cached result that
the later queries read, and the small results come back in as few collects as the steps allow.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

from kafka_admin_kraft.pipeline.findings import (
    BatchKey,
    CommittedEnds,
    Findings,
    LogDirScan,
    RecordStatuses,
    Row,
    SnapshotKey,
    cluster_key,
    effective_offset,
)
from kafka_admin_kraft.pipeline.planning import DEFAULT_SPLIT_BYTES, LogDirInfo, discover
from kafka_admin_kraft.pipeline.rules import (
    COMMITTED,
    TRUNCATED,
    UNCOMMITTED,
    UNVERIFIED,
    Reference,
    ReplicaLog,
    choose_reference,
    voter_intervals,
)
from kafka_admin_kraft.pipeline.schema import (
    AUDITED_TYPES,
    DIVERGENCE,
    ERRORS,
    LEADER_CHANGE,
    SEGMENT,
    SNAPSHOT,
    TYPED_COLUMNS,
    UNDECODABLE,
    VOTERS,
    Column,
    Table,
    ddl,
)
from kafka_admin_kraft.pipeline.storage import storage_options
from kafka_admin_kraft.pipeline.tables import DRIVER_TABLES

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame, SparkSession

ERRORS_COLLECTED: Final = 10_000
DIVERGENCE_COLLECTED: Final = 1000
"""Rows of the errors and of the divergence that reach the driver (for the report); the tables hold all."""
WRITERS: Final = 4
"""Tables written at the same time."""


@dataclass
class AuditResult:
    """The small tables (also written as Parquet) and the counts the report shows."""

    tables: dict[str, list[Row]] = field(default_factory=dict)
    errors: list[Row] = field(default_factory=list)
    error_count: int = 0
    divergence: list[Row] = field(default_factory=list)
    divergence_count: int = 0
    batch_count: int = 0
    paths: list[str] = field(default_factory=list)
    output: str = ""


AUDIT_COLUMNS: Final = (
    "cluster_id",
    "node_id",
    "log_dir",
    "file",
    "file_kind",
    "snapshot_end_offset",
    "snapshot_epoch",
    "batch_position",
    "batch_base_offset",
    "batch_last_offset",
    "batch_crc",
    "record_index",
    "offset",
    "leader_epoch",
    "timestamp",
    "record_type",
    *TYPED_COLUMNS,
    "error_kind",
    "error",
)
"""What the audit reads of every row, and all it caches: values are decoded only for the typed columns
of its record types."""

EVENT_COLUMNS: Final = (
    "cluster",
    "node_id",
    "log_dir",
    "file",
    "file_kind",
    "snapshot_end_offset",
    "snapshot_epoch",
    "batch_base_offset",
    "batch_crc",
    "offset",
    "leader_epoch",
    "timestamp",
    "record_type",
    *TYPED_COLUMNS,
)
"""What the driver keeps of each audited record (an event): ``cluster`` is ``cluster_id`` or ''."""


def load_records(
    spark: SparkSession,
    paths: Sequence[str],
    *,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    columns: Sequence[str] | None = None,
    batches_with: Sequence[str] | None = None,
    storage: Mapping[str, str] | None = None,
) -> DataFrame:
    """The data source's DataFrame over ``paths``. ``columns`` limits what is read (the rest is null);
    ``batches_with`` keeps one row per batch and every error row, plus the records of those types;
    ``storage`` holds the data source's storage options (``s3.endpoint``, ...) for URI paths. The
    partitions come in a multiple of the session's parallelism, so that no core idles at the end."""
    reader = (
        spark.read.format("kraft-metadata")
        .option("splitBytes", str(split_bytes))
        .option("parallelism", str(spark.sparkContext.defaultParallelism))
    )
    for key, value in (storage or {}).items():
        reader = reader.option(key, value)
    if columns is not None:
        reader = reader.option("columns", ",".join(columns))
    if batches_with is not None:
        reader = reader.option("rows", "batches").option("recordTypes", ",".join(batches_with))
    return reader.load(list(paths))


def run_audit(
    spark: SparkSession,
    paths: Sequence[str],
    output: str,
    *,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    write_records: bool = False,
    storage: Mapping[str, str] | None = None,
) -> AuditResult:
    """Run every audit job over ``paths``; write the tables under ``output``. ``storage``: the storage
    options of URI paths (see :data:`~kafka_admin_kraft.pipeline.storage.OPTION_NAMES`)."""
    from pyspark.sql import functions as F

    dirs = [info for info, _ in discover(paths, storage_options(storage or {}))]
    if write_records:
        load_records(spark, paths, split_bytes=split_bytes, storage=storage).write.mode("overwrite").parquet(
            _join(output, "records")
        )
    records = load_records(
        spark,
        paths,
        split_bytes=split_bytes,
        columns=AUDIT_COLUMNS,
        batches_with=AUDITED_TYPES,
        storage=storage,
    )
    slim = records.where(
        (F.col("record_index") == 0)
        | F.col("record_type").isin(*AUDITED_TYPES)
        | F.col("error_kind").isNotNull()
        | F.col("record_index").isNull()
    ).select(*AUDIT_COLUMNS, F.coalesce(F.col("cluster_id"), F.lit("")).alias("cluster"))
    with _cached(slim) as rows:
        result = _audit(spark, rows, dirs, output)
    result.paths = list(paths)
    return result


def _audit(spark: SparkSession, slim: DataFrame, dirs: list[LogDirInfo], output: str) -> AuditResult:
    """The steps of the audit, in order (numbered in the module docstring)."""
    scan = _scan_log_dirs(slim)
    references = _choose_references(dirs, scan)
    snapshots = _judge_snapshots(scan.events, references)
    facts = _cluster_facts(spark, scan.events, references, snapshots)
    with _cached(_distinct_batches(slim, facts)) as batches:
        ends = _committed_ends(batches, references, snapshots)
        with _cached(_batch_statuses(spark, batches, ends)) as statuses:
            replica_counts, record_statuses = _tally_replicas(statuses, snapshots)
            found = Findings(dirs, scan, references, ends, record_statuses, replica_counts)
            return _write_tables(spark, slim, statuses, found, output)


@contextmanager
def _cached(frame: DataFrame) -> Iterator[DataFrame]:
    """``frame`` kept (in memory, spilling to disk) while the block's queries read it more than once."""
    from pyspark import StorageLevel

    frame.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        yield frame
    finally:
        frame.unpersist()


def _local_frame(spark: SparkSession, schema: str, rows: Sequence[Sequence[Any]]) -> DataFrame:
    """``rows`` (tuples in the order of the DDL ``schema``) as a DataFrame, handed over as Arrow:
    Spark keeps it on the driver as a local relation, where a list of rows would be read back
    through a Python worker by a Spark job of its own (with a worker to start the first time)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    struct = cast(StructType, StructType.fromDDL(schema))
    arrow = to_arrow_schema(struct)
    arrays = [pa.array([row[i] for row in rows], field.type) for i, field in enumerate(arrow)]
    return spark.createDataFrame(pa.Table.from_arrays(arrays, schema=arrow), struct)


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


def _rows(frame: DataFrame) -> list[Row]:
    return [row.asDict(recursive=True) for row in frame.collect()]


# ---- step 1: what reaches the driver of the rows


def _is_segment_batch() -> SparkColumn:
    """The row standing for a segment batch: its first record, or its undecodable record."""
    from pyspark.sql import functions as F

    col = F.col
    return (
        (col("file_kind") == SEGMENT)
        & col("batch_last_offset").isNotNull()
        & ((col("record_index") == 0) | col("record_index").isNull())
        & (col("error_kind").isNull() | (col("error_kind") == UNDECODABLE))
    )


def _is_event() -> SparkColumn:
    from pyspark.sql import functions as F

    return F.col("record_type").isin(*AUDITED_TYPES) & F.col("error_kind").isNull()


def _scan_log_dirs(slim: DataFrame) -> LogDirScan:
    """Step 1. The per-directory aggregation counts the errors too: when they are fewer than
    :data:`ERRORS_COLLECTED` (nearly always) they come back with the audited records in one collect."""
    from pyspark.sql import functions as F

    col = F.col
    batch = _is_segment_batch()

    def of_batches(column: SparkColumn) -> SparkColumn:
        return F.when(batch, column)

    per_dir = _rows(
        slim.groupBy("cluster", "log_dir", "node_id").agg(
            F.min(of_batches(col("batch_base_offset"))).alias("start"),
            (F.max(of_batches(col("batch_last_offset"))) + 1).alias("end"),
            F.count(of_batches(F.lit(1))).alias("batches"),
            F.max_by(of_batches(col("leader_epoch")), of_batches(col("batch_base_offset"))).alias(
                "last_epoch"
            ),
            F.max(of_batches(col("timestamp"))).alias("max_ts"),
            F.count("error_kind").alias("error_rows"),
        )
    )
    error_count = sum(int(row["error_rows"]) for row in per_dir)
    is_error = col("error_kind").isNotNull()
    if error_count < ERRORS_COLLECTED:
        wanted = dict.fromkeys([*EVENT_COLUMNS, *ERRORS.column_names])
        rows = _rows(slim.where(_is_event() | is_error).select(*wanted))
        events = [_pick(row, EVENT_COLUMNS) for row in rows if row["error_kind"] is None]
        errors = [_pick(row, ERRORS.column_names) for row in rows if row["error_kind"] is not None]
    else:
        events = _rows(slim.where(_is_event()).select(*EVENT_COLUMNS))
        errors = _rows(slim.where(is_error).select(*ERRORS.column_names).limit(ERRORS_COLLECTED))
    return LogDirScan([row for row in per_dir if row["batches"]], events, errors, error_count)


def _pick(row: Row, names: Sequence[str]) -> Row:
    return {name: row[name] for name in names}


# ---- step 2: the reference log of each cluster


def _choose_references(dirs: list[LogDirInfo], scan: LogDirScan) -> dict[str, Reference]:
    """Step 2: by cluster (sorted), from the segment ranges and every epoch evidenced by a
    LeaderChangeMessage of a segment or by quorum-state."""
    clusters = sorted({cluster_key(d.cluster_id) for d in dirs} | {row["cluster"] for row in scan.summaries})
    replicas_by_cluster: dict[str, list[ReplicaLog]] = defaultdict(list)
    for row in scan.summaries:
        replicas_by_cluster[row["cluster"]].append(
            ReplicaLog(
                row["cluster"], row["log_dir"], row["node_id"], row["start"], row["end"], row["last_epoch"]
            )
        )
    epoch_evidence: dict[str, list[tuple[int, int | None]]] = defaultdict(list)
    for event in scan.events:
        if event["record_type"] == LEADER_CHANGE and event["file_kind"] == SEGMENT:
            epoch_evidence[event["cluster"]].append((event["leader_epoch"], event["leader_id"]))
    for info in dirs:
        if info.quorum_leader_epoch is not None and info.quorum_leader_epoch >= 0:
            leader = info.quorum_leader_id if (info.quorum_leader_id or -1) >= 0 else None
            epoch_evidence[cluster_key(info.cluster_id)].append((info.quorum_leader_epoch, leader))
    return {c: choose_reference(c, replicas_by_cluster[c], epoch_evidence[c]) for c in clusters}


# ---- step 3: the snapshots


@dataclass
class SnapshotVerdicts:
    """Rules step 3 for snapshots: committed when one agrees with the reference (or is the
    reference's own), truncated when the reference holds something else at its last offset,
    unverified when the reference cannot tell."""

    statuses: dict[SnapshotKey, str] = field(default_factory=dict)
    agreeing_end: dict[str, int] = field(default_factory=dict)
    """By cluster: the largest end offset of an agreeing snapshot."""
    unconfirmed: dict[tuple[str, int, int], list[str]] = field(default_factory=lambda: defaultdict(list))
    """(cluster, end offset, epoch) -> log directories of the snapshots that are truncated unless the
    reference's batch holding their last offset has their epoch."""

    def to_confirm(self, cluster: str) -> list[tuple[int, int]]:
        """(end offset, epoch) of the snapshots of ``cluster`` the reference must confirm."""
        return [(end, epoch) for c, end, epoch in self.unconfirmed if c == cluster]

    def confirm(self, cluster: str, end: int, epoch: int) -> None:
        """The reference holds the last offset of the snapshots ending at ``end`` in ``epoch``."""
        self.agreeing_end[cluster] = max(self.agreeing_end.get(cluster, 0), end)
        for log_dir in self.unconfirmed[(cluster, end, epoch)]:
            self.statuses[(cluster, log_dir, end)] = COMMITTED


def _judge_snapshots(events: list[Row], references: dict[str, Reference]) -> SnapshotVerdicts:
    """Step 3, as far as the driver can go: the reference's own snapshots (and empty ones) are
    committed, those without a reference or ending before the reference log starts unverified; the
    others truncated until :func:`_committed_ends` finds the reference agreeing."""
    verdicts = SnapshotVerdicts()
    snapshots = {
        (e["cluster"], e["log_dir"], e["snapshot_end_offset"], e["snapshot_epoch"])
        for e in events
        if e["file_kind"] == SNAPSHOT
    }
    for cluster, log_dir, end, epoch in snapshots:
        ref = references.get(cluster)
        key = (cluster, log_dir, end)
        if ref is None or not end:
            verdicts.statuses[key] = COMMITTED if end == 0 else UNVERIFIED
        elif log_dir == ref.log_dir:
            verdicts.statuses[key] = COMMITTED
            verdicts.agreeing_end[cluster] = max(verdicts.agreeing_end.get(cluster, 0), end)
        elif end - 1 < ref.start:
            verdicts.statuses[key] = UNVERIFIED
        else:
            verdicts.statuses[key] = TRUNCATED
            verdicts.unconfirmed[(cluster, end, epoch)].append(log_dir)
    return verdicts


# ---- step 4: the distinct batches

CLUSTER_FACTS: Final = (
    Column("cluster", "string", "cluster.id or ''"),
    Column("ref_log_dir", "string", "the reference log directory"),
    Column("ref_start", "bigint", "first offset of the reference log's segments"),
    Column("ref_end", "bigint", "end offset of the reference log's segments"),
    Column("ref_is_leader", "boolean", "the reference is the highest epoch leader's log"),
    Column(
        "voter_sets",
        "array<struct<start_offset: bigint, end_offset: bigint, voter_ids: array<int>>>",
        "the voter set in effect for offsets [start_offset, end_offset) (rules step 2)",
    ),
    Column(
        "snapshot_probes",
        "array<struct<end_offset: bigint, epoch: int>>",
        "snapshots the reference must confirm (SnapshotVerdicts.to_confirm)",
    ),
)
"""What the driver decided of each cluster that the distinct batches are checked against."""


def _in_reference_log(copy: SparkColumn) -> SparkColumn:
    """A copy (an element of ``copies``) is in its cluster's reference log directory."""
    from pyspark.sql import functions as F

    return copy["log_dir"] == F.col("ref_log_dir")


def _voter_points(events: Iterable[Row], ref: Reference) -> list[tuple[int, Sequence[int]]]:
    """(effective offset, voter ids) of the reference's VotersRecords, or with none (kraft.version 0)
    of its LeaderChangeMessages."""
    mine = [
        e
        for e in events
        if e["cluster"] == ref.cluster
        and e["log_dir"] == ref.log_dir
        and e["file_kind"] in (SEGMENT, SNAPSHOT)
    ]
    points = [(effective_offset(e), e["voter_ids"]) for e in mine if e["record_type"] == VOTERS]
    if not points:
        points = [
            (effective_offset(e), e["voter_ids"])
            for e in mine
            if e["record_type"] == LEADER_CHANGE and e["voter_ids"]
        ]
    return points


def _cluster_facts(
    spark: SparkSession, events: list[Row], references: dict[str, Reference], snapshots: SnapshotVerdicts
) -> DataFrame:
    """One row of :data:`CLUSTER_FACTS` per cluster."""
    rows = [
        (
            cluster,
            ref.log_dir,
            ref.start,
            ref.end,
            ref.is_leader_log,
            [(i.start, i.end, list(i.voter_ids)) for i in voter_intervals(_voter_points(events, ref))],
            snapshots.to_confirm(cluster),
        )
        for cluster, ref in references.items()
    ]
    return _local_frame(spark, ddl(CLUSTER_FACTS), rows)


def _distinct_batches(slim: DataFrame, facts: DataFrame) -> DataFrame:
    """Step 4: every distinct segment batch (cluster, base, last, epoch, crc), one shuffle of the
    batch rows: ``holders`` (node ids holding it), ``copies`` (log directory, node id and file of
    each copy), ``audited`` (it holds an audited record, whose status a table shows), ``in_ref``
    (the reference holds it), ``voter_ids`` (the voter set in effect at its base offset),
    ``majority`` (a majority of those voters holds it) and ``confirms`` (the snapshots to confirm
    whose last offset it holds in their epoch); with its cluster's reference log and range."""
    from pyspark.sql import functions as F

    col = F.col
    rows = slim.where(
        (col("file_kind") == SEGMENT)
        & col("batch_last_offset").isNotNull()
        & (col("error_kind").isNull() | (col("error_kind") == UNDECODABLE))
    ).select(
        "cluster",
        col("batch_base_offset").alias("base"),
        col("batch_last_offset").alias("last"),
        col("leader_epoch").alias("epoch"),
        col("batch_crc").alias("crc"),
        "node_id",
        "log_dir",
        "file",
        _is_segment_batch().alias("is_batch"),
        _is_event().alias("is_event"),
    )
    copy = col("is_batch")
    grouped = (
        rows.where(copy | col("is_event"))
        .groupBy("cluster", "base", "last", "epoch", "crc")
        .agg(
            F.array_sort(F.collect_set(F.when(copy, col("node_id")))).alias("holders"),
            F.collect_list(F.when(copy, F.struct("log_dir", "node_id", "file"))).alias("copies"),
            F.max("is_event").alias("audited"),
        )
        .where(F.size("copies") > 0)
    )
    in_effect = F.filter(
        "voter_sets", lambda v: (col("base") >= v["start_offset"]) & (col("base") < v["end_offset"])
    )
    confirms = F.filter(
        "snapshot_probes",
        lambda p: (
            (col("base") <= p["end_offset"] - 1)
            & (col("last") >= p["end_offset"] - 1)
            & (col("epoch") == p["epoch"])
        ),
    )
    return (
        grouped.join(F.broadcast(facts), "cluster", "left")
        .withColumn(
            "in_ref",
            F.coalesce(F.exists("copies", _in_reference_log), F.lit(False)),
        )
        .withColumn("voter_ids", F.get(in_effect, 0)["voter_ids"])
        .withColumn(
            "majority",
            F.coalesce(
                F.size(F.array_intersect(col("holders"), col("voter_ids"))) * 2 > F.size(col("voter_ids")),
                F.lit(False),
            ),
        )
        .withColumn("confirms", confirms)
        .drop("voter_sets", "snapshot_probes")
    )


# ---- step 5: the committed end of each cluster


def _committed_ends(
    batches: DataFrame, references: dict[str, Reference], snapshots: SnapshotVerdicts
) -> CommittedEnds:
    """Step 5, one aggregation of the reference's batches per cluster: the majority end, and the
    snapshots the reference confirms (its batch holding a snapshot's last offset has its epoch)."""
    from pyspark.sql import functions as F

    col = F.col
    per_cluster = _rows(
        batches.where(col("in_ref"))
        .groupBy("cluster")
        .agg(
            (F.max(F.when(col("majority"), col("last"))) + 1).alias("majority_end"),
            F.array_distinct(F.flatten(F.collect_list("confirms"))).alias("confirmed"),
        )
    )
    majority_end: dict[str, int] = {}
    for row in per_cluster:
        if row["majority_end"] is not None:
            majority_end[row["cluster"]] = int(row["majority_end"])
        for probe in row["confirmed"]:
            snapshots.confirm(row["cluster"], int(probe["end_offset"]), int(probe["epoch"]))
    snapshot_end = snapshots.agreeing_end
    return CommittedEnds(
        {c: max(majority_end.get(c, 0), snapshot_end.get(c, 0)) for c in references},
        majority_end,
        snapshot_end,
    )


# ---- step 6: the status of every distinct batch


def _batch_statuses(spark: SparkSession, batches: DataFrame, ends: CommittedEnds) -> DataFrame:
    """Step 6: ``status`` (rules step 4) and ``diverges`` (truncated below the committed end) of every
    distinct batch."""
    from pyspark.sql import functions as F

    col = F.col
    committed = _local_frame(spark, "cluster string, committed_end bigint", list(ends.committed_end.items()))
    status = (
        F.when(col("in_ref") & (col("base") < col("committed_end")), COMMITTED)
        .when(col("in_ref"), UNCOMMITTED)
        .when((col("base") < col("ref_start")) & col("majority"), COMMITTED)
        .when(col("base") < col("ref_start"), UNVERIFIED)
        .when((col("base") >= col("ref_end")) & ~col("ref_is_leader"), UNCOMMITTED)
        .otherwise(TRUNCATED)
    )
    return (
        batches.join(F.broadcast(committed), "cluster")
        .withColumn("status", status)
        .withColumn("diverges", (col("status") == TRUNCATED) & (col("base") < col("committed_end")))
    )


def _copies(statuses: DataFrame) -> DataFrame:
    """One row per copy of every distinct batch: its status in that replica."""
    from pyspark.sql import functions as F

    return statuses.select(
        "cluster",
        "base",
        "last",
        "epoch",
        "crc",
        "status",
        "diverges",
        "committed_end",
        "audited",
        "holders",
        F.explode("copies").alias("copy"),
    ).select("*", "copy.log_dir", "copy.node_id", "copy.file")


def _tally_replicas(statuses: DataFrame, snapshots: SnapshotVerdicts) -> tuple[list[Row], RecordStatuses]:
    """One aggregation per log directory: its batches by status, the diverging ones and the first
    of those; and the statuses of the batches holding audited records, which each holder reports."""
    from pyspark.sql import functions as F

    col = F.col
    per_replica = _rows(
        _copies(statuses)
        .groupBy("cluster", "log_dir")
        .agg(
            F.sum(F.when(col("status") == COMMITTED, 1).otherwise(0)).alias("committed"),
            F.sum(F.when(col("status") == UNCOMMITTED, 1).otherwise(0)).alias("uncommitted"),
            F.sum(F.when(col("status") == TRUNCATED, 1).otherwise(0)).alias("truncated"),
            F.sum(F.when(col("diverges"), 1).otherwise(0)).alias("diverging"),
            F.min(F.when(col("diverges"), col("base"))).alias("first_divergent"),
            F.collect_list(
                F.when(col("audited"), F.struct("cluster", "base", "epoch", "crc", "status", "holders"))
            ).alias("audited_batches"),
        )
    )
    by_batch: dict[BatchKey, tuple[str, list[int]]] = {}
    for row in per_replica:
        for batch in row.pop("audited_batches"):
            key = (batch["cluster"], batch["base"], batch["epoch"], batch["crc"])
            by_batch[key] = (str(batch["status"]), batch["holders"] or [])
    return per_replica, RecordStatuses(by_batch, snapshots.statuses)


# ---- step 7: the tables


def _write_tables(
    spark: SparkSession, slim: DataFrame, statuses: DataFrame, found: Findings, output: str
) -> AuditResult:
    """Step 7: every table built and written under ``output``; the small ones, the first rows of
    the others and their counts returned for the report. The divergence is rebalanced before it is
    written: adaptive execution then cuts it into files of its advisory size (one for a few rows)."""
    tables = {table.name: build(found) for table, build in DRIVER_TABLES}
    divergence_count = sum(int(row["diverging"] or 0) for row in found.replica_counts)
    divergence = divergence_table(statuses)
    if not divergence_count:
        divergence = divergence.limit(0)  # written empty, with its schema, without running its join
    frames = [
        (divergence.hint("rebalance"), DIVERGENCE),
        (errors_table(slim), ERRORS),
        *((_driver_frame(spark, table, tables[table.name]), table) for table, _ in DRIVER_TABLES),
    ]
    _write(spark, frames, output)
    return AuditResult(
        tables=tables,
        errors=found.scan.errors,
        error_count=found.scan.error_count,
        divergence=_rows(
            divergence.orderBy("cluster_id", "base_offset", "log_dir").limit(DIVERGENCE_COLLECTED)
        )
        if divergence_count
        else [],
        divergence_count=divergence_count,
        batch_count=sum(int(row["batches"]) for row in found.scan.summaries),
        output=output,
    )


def _write(spark: SparkSession, frames: Sequence[tuple[DataFrame, Table]], output: str) -> None:
    """Each table under ``output``, several at once: a small table's write is a Spark job whose
    time goes mostly to fixed costs (planning, committing the files), which overlap. The writing
    threads carry the caller's job group and tags."""
    from pyspark import inheritable_thread_target

    @inheritable_thread_target(spark)
    def write(frame: DataFrame, table: Table) -> None:
        frame.write.mode("overwrite").parquet(_join(output, table.name))

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        for done in [pool.submit(write, frame, table) for frame, table in frames]:
            done.result()


def _driver_frame(spark: SparkSession, table: Table, rows: list[Row]) -> DataFrame:
    """A table built on the driver as a DataFrame of its declared schema, in one Parquet file."""
    return _local_frame(
        spark, ddl(table.columns), [tuple(row[name] for name in table.column_names) for row in rows]
    ).coalesce(1)


def divergence_table(statuses: DataFrame) -> DataFrame:
    """Every copy of a batch diverging below the committed end, beside the reference's batch at the
    same base offset (one row per copy the reference log holds there, or nulls)."""
    from pyspark.sql import functions as F

    col = F.col
    reference_batches = (
        statuses.where(col("in_ref"))
        .select(
            "cluster",
            "base",
            col("epoch").alias("reference_epoch"),
            col("crc").alias("reference_crc"),
            F.explode(F.filter("copies", _in_reference_log)).alias("reference_copy"),
        )
        .drop("reference_copy")
    )
    diverging = _copies(statuses).where(col("diverges")).join(reference_batches, ["cluster", "base"], "left")
    source = {
        "cluster_id": col("cluster"),
        "base_offset": col("base"),
        "last_offset": col("last"),
        "leader_epoch": col("epoch"),
    }
    return diverging.select(*(source.get(name, col(name)).alias(name) for name in DIVERGENCE.column_names))


def errors_table(slim: DataFrame) -> DataFrame:
    """Every error row, in the data source's order."""
    from pyspark.sql import functions as F

    return slim.where(F.col("error_kind").isNotNull()).select(*ERRORS.column_names)
