"""The audit jobs: from the ``kraft-metadata`` rows to Parquet tables and the report's data.

One pass over the data source, which hands over only what the audit needs (``rows=batches`` and a
few columns): one row per batch (offsets, epoch, CRC, replica), the records of the audited types
(LeaderChangeMessage, VotersRecord, KRaftVersionRecord, FeatureLevelRecord), the only values it
decodes, and the error rows. The batch rows stay
distributed: holders of every distinct batch, majority checks against the voter sets, commit
status of every batch and divergence are Spark joins and aggregations. Only per-cluster summaries,
the audited records and the errors reach the driver. The commit rule is in
:mod:`~kafka_admin_kraft.pipeline.rules`.

Tables written under the output directory (Parquet, one directory each):

* ``voter_sets``: every VotersRecord version of each cluster with its status;
* ``leader_epochs``: each epoch's leader, start, end and duration;
* ``feature_changes``: feature levels from ``bootstrap.checkpoint`` and every level change appended;
* ``divergence``: batches of a replica that differ from the reference below the committed offset;
* ``duplicate_voter_ids`` and ``voters_without_directory_id``: voter-set anomalies;
* ``replicas``: every log directory, its range, election state and agreement with the reference;
* ``errors``: corrupt batches, torn tails, undecodable records and missing or damaged node files
  (``meta.properties``, ``quorum-state``);
* ``records`` (only when asked): every row of the data source.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from kafka_admin_kraft.pipeline.planning import DEFAULT_SPLIT_BYTES, LogDirInfo, discover
from kafka_admin_kraft.pipeline.rules import (
    BOOTSTRAP_STATUS,
    COMMITTED,
    FAR_OFFSET,
    TRUNCATED,
    UNCOMMITTED,
    UNVERIFIED,
    ZERO_UUID_TEXT,
    Reference,
    ReplicaLog,
    choose_reference,
    voter_intervals,
)
from kafka_admin_kraft.pipeline.schema import (
    AUDITED_TYPES,
    BOOTSTRAP,
    FEATURE_LEVEL,
    KRAFT_VERSION,
    LEADER_CHANGE,
    SEGMENT,
    SNAPSHOT,
    TYPED_COLUMNS,
    UNDECODABLE,
    VOTERS,
)
from kafka_admin_kraft.pipeline.storage import storage_options

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Row = dict[str, Any]
ERRORS_COLLECTED: Final = 10_000

TABLE_SCHEMAS: Final[dict[str, str]] = {
    "voter_sets": "cluster_id string, offset bigint, leader_epoch int, timestamp bigint, "
    "voter_ids array<int>, "
    "voter_directory_ids array<string>, added_ids array<int>, removed_ids array<int>, "
    "status string, source string, held_by array<int>, files array<string>",
    "leader_epochs": "cluster_id string, leader_epoch int, leader_id int, offset bigint, "
    "start_timestamp bigint, "
    "end_timestamp bigint, duration_ms bigint, voter_ids array<int>, "
    "granting_voter_ids array<int>, status string, held_by array<int>, source string",
    "feature_changes": "cluster_id string, feature string, level int, previous_level int, offset bigint, "
    "leader_epoch int, timestamp bigint, status string, source string, "
    "held_by array<int>",
    "duplicate_voter_ids": "cluster_id string, file string, offset bigint, leader_epoch int, voter_id int, "
    "occurrences int, directory_ids array<string>, status string",
    "voters_without_directory_id": "cluster_id string, file string, offset bigint, leader_epoch int, "
    "voter_id int, status string",
    "replicas": "cluster_id string, node_id int, directory_id string, log_dir string, log_start bigint, "
    "log_end bigint, last_epoch int, batches bigint, quorum_leader_id int, "
    "quorum_leader_epoch int, is_reference boolean, committed_batches bigint, "
    "uncommitted_batches bigint, truncated_batches bigint, diverging_batches bigint, "
    "first_divergent_offset bigint, agrees boolean, torn_tail boolean, errors bigint",
    "clusters": "cluster_id string, reference_log_dir string, reference_node_id int, highest_epoch int, "
    "leader_id int, reference_is_leader boolean, committed_end bigint, majority_end bigint, "
    "snapshot_end bigint",
}


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


def _cluster_key(value: str | None) -> str:
    return value or ""


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
"""What the audit reads of every row: values are decoded only for the typed columns of its record types."""


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
    ``storage`` holds the data source's storage options (``s3.endpoint``, ...) for URI paths."""
    reader = spark.read.format("kraft-metadata").option("splitBytes", str(split_bytes))
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
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    result = AuditResult(paths=list(paths), output=output)
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
    audited = F.col("record_type").isin(*AUDITED_TYPES)
    slim = (
        records.where(
            (F.col("record_index") == 0)
            | audited
            | F.col("error_kind").isNotNull()
            | F.col("record_index").isNull()
        )
        .withColumn("cluster", F.coalesce(F.col("cluster_id"), F.lit("")))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    try:
        _audit(spark, slim, dirs, output, result)
    finally:
        slim.unpersist()
    return result


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


def _rows(frame: DataFrame) -> list[Row]:
    return [row.asDict(recursive=True) for row in frame.collect()]


def _audit(
    spark: SparkSession, slim: DataFrame, dirs: list[LogDirInfo], output: str, result: AuditResult
) -> None:
    from pyspark.sql import functions as F

    col = F.col
    events = _rows(
        slim.where(col("record_type").isin(*AUDITED_TYPES) & col("error_kind").isNull()).select(
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
    )
    errors_frame = slim.where(col("error_kind").isNotNull()).select(
        "cluster_id",
        "node_id",
        "log_dir",
        "file",
        "file_kind",
        "batch_position",
        "batch_base_offset",
        "offset",
        "leader_epoch",
        "error_kind",
        "error",
    )
    result.errors = _rows(errors_frame.limit(ERRORS_COLLECTED))
    result.error_count = len(result.errors) if len(result.errors) < ERRORS_COLLECTED else errors_frame.count()
    batches = slim.where(
        (col("file_kind") == SEGMENT)
        & col("batch_last_offset").isNotNull()
        & ((col("record_index") == 0) | col("record_index").isNull())
        & (col("error_kind").isNull() | (col("error_kind") == UNDECODABLE))
    ).select(
        "cluster",
        "node_id",
        "log_dir",
        col("batch_base_offset").alias("base"),
        col("batch_last_offset").alias("last"),
        col("leader_epoch").alias("epoch"),
        col("batch_crc").alias("crc"),
        "timestamp",
        "file",
    )
    summary = _rows(
        batches.groupBy("cluster", "log_dir", "node_id").agg(
            F.min("base").alias("start"),
            (F.max("last") + 1).alias("end"),
            F.count(F.lit(1)).alias("batches"),
            F.max_by("epoch", "base").alias("last_epoch"),
            F.max("timestamp").alias("max_ts"),
        )
    )
    result.batch_count = sum(int(row["batches"]) for row in summary)

    # ---- step 1: the reference of each cluster (driver, small)
    clusters = sorted({_cluster_key(d.cluster_id) for d in dirs} | {row["cluster"] for row in summary})
    replicas_by_cluster: dict[str, list[ReplicaLog]] = defaultdict(list)
    for row in summary:
        replicas_by_cluster[row["cluster"]].append(
            ReplicaLog(
                row["cluster"], row["log_dir"], row["node_id"], row["start"], row["end"], row["last_epoch"]
            )
        )
    epoch_evidence: dict[str, list[tuple[int, int | None]]] = defaultdict(list)
    for event in events:
        if event["record_type"] == LEADER_CHANGE and event["file_kind"] == SEGMENT:
            epoch_evidence[event["cluster"]].append((event["leader_epoch"], event["leader_id"]))
    for info in dirs:
        if info.quorum_leader_epoch is not None and info.quorum_leader_epoch >= 0:
            leader = info.quorum_leader_id if (info.quorum_leader_id or -1) >= 0 else None
            epoch_evidence[_cluster_key(info.cluster_id)].append((info.quorum_leader_epoch, leader))
    references = {c: choose_reference(c, replicas_by_cluster[c], epoch_evidence[c]) for c in clusters}

    # ---- step 2: voter sets of the reference
    interval_rows: list[tuple[str, int, int, list[int]]] = []
    for cluster, ref in references.items():
        points = _voter_points(events, ref)
        for interval in voter_intervals(points):
            interval_rows.append((cluster, interval.start, interval.end, list(interval.voter_ids)))
    intervals_df = spark.createDataFrame(
        interval_rows or [("", -1, -1, [])],
        "cluster string, v_start bigint, v_end bigint, voter_ids array<int>",
    )
    ref_df = spark.createDataFrame(
        [(c, r.log_dir or "", r.start, r.end, r.is_leader_log) for c, r in references.items()]
        or [("", "", 0, 0, False)],
        "cluster string, ref_log_dir string, ref_start bigint, ref_end bigint, ref_is_leader boolean",
    )

    # ---- step 3: holders of every distinct batch, majority, committed end (one shuffle: the
    # distinct batches, each with the replicas holding it and whether the reference is one of them)
    ref_dirs = F.broadcast(ref_df.select("cluster", "ref_log_dir"))
    holders = batches.join(ref_dirs, "cluster", "left").withColumn(
        "is_ref", F.coalesce(col("log_dir") == col("ref_log_dir"), F.lit(False))
    )
    keyed = holders.groupBy("cluster", "base", "last", "epoch", "crc").agg(
        F.array_sort(F.collect_set("node_id")).alias("holders"),
        F.max("is_ref").alias("in_ref"),
        F.collect_list(F.struct("log_dir", "node_id", "file")).alias("copies"),
    )
    keyed = (
        keyed.join(
            F.broadcast(intervals_df),
            (keyed["cluster"] == intervals_df["cluster"])
            & (keyed["base"] >= intervals_df["v_start"])
            & (keyed["base"] < intervals_df["v_end"]),
            "left",
        )
        .drop(intervals_df["cluster"])
        .withColumn(
            "majority",
            F.coalesce(
                F.size(F.array_intersect(col("holders"), col("voter_ids"))) * 2 > F.size(col("voter_ids")),
                F.lit(False),
            ),
        )
        .persist()
    )
    try:
        majority_end = {
            row["cluster"]: int(row["end"])
            for row in keyed.where(col("in_ref") & col("majority"))
            .groupBy("cluster")
            .agg((F.max("last") + 1).alias("end"))
            .collect()
        }
        snapshot_end, snapshot_status = _agreeing_snapshots(events, references, keyed)
        committed_end = {c: max(majority_end.get(c, 0), snapshot_end.get(c, 0)) for c in clusters}
        cluster_df = spark.createDataFrame(
            [(c, committed_end[c], r.start, r.end, r.is_leader_log) for c, r in references.items()]
            or [("", 0, 0, 0, False)],
            "cluster string, committed_end bigint, ref_start bigint, ref_end bigint, ref_is_leader boolean",
        )
        # ---- step 4: status of every batch
        status = (
            F.when(col("in_ref") & (col("base") < col("committed_end")), COMMITTED)
            .when(col("in_ref"), UNCOMMITTED)
            .when((col("base") < col("ref_start")) & col("majority"), COMMITTED)
            .when(col("base") < col("ref_start"), UNVERIFIED)
            .when((col("base") >= col("ref_end")) & ~col("ref_is_leader"), UNCOMMITTED)
            .otherwise(TRUNCATED)
        )
        key_status = (
            keyed.join(F.broadcast(cluster_df), "cluster")
            .withColumn("status", status)
            .withColumn("diverges", (col("status") == TRUNCATED) & (col("base") < col("committed_end")))
        )
        per_copy = key_status.select(
            "cluster", "base", "last", "epoch", "crc", "status", "diverges", "committed_end",
            F.explode("copies").alias("copy"),
        ).select("*", "copy.log_dir", "copy.node_id", "copy.file")
        replica_counts = _rows(
            per_copy.groupBy("cluster", "log_dir").agg(
                F.sum(F.when(col("status") == COMMITTED, 1).otherwise(0)).alias("committed"),
                F.sum(F.when(col("status") == UNCOMMITTED, 1).otherwise(0)).alias("uncommitted"),
                F.sum(F.when(col("status") == TRUNCATED, 1).otherwise(0)).alias("truncated"),
                F.sum(F.when(col("diverges"), 1).otherwise(0)).alias("diverging"),
                F.min(F.when(col("diverges"), col("base"))).alias("first_divergent"),
            )
        )
        # The reference's own batch at each diverging offset, for the divergence table.
        ref_batches = holders.where(col("is_ref")).select(
            "cluster", "base", col("epoch").alias("reference_epoch"), col("crc").alias("reference_crc")
        )
        divergence = (
            per_copy.where(col("diverges"))
            .join(ref_batches, ["cluster", "base"], "left")
            .select(
                col("cluster").alias("cluster_id"),
                "node_id",
                "log_dir",
                "file",
                col("base").alias("base_offset"),
                col("last").alias("last_offset"),
                col("epoch").alias("leader_epoch"),
                "crc",
                "reference_epoch",
                "reference_crc",
                "committed_end",
            )
        )
        divergence.write.mode("overwrite").parquet(_join(output, "divergence"))
        result.divergence = _rows(divergence.orderBy("cluster_id", "base_offset", "log_dir").limit(1000))
        result.divergence_count = sum(int(row["diverging"] or 0) for row in replica_counts)
        event_keys = {
            (e["cluster"], e["batch_base_offset"], e["leader_epoch"], e["batch_crc"])
            for e in events
            if e["file_kind"] == SEGMENT
        }
        status_of: dict[tuple[str, int, int, int], Row] = {}
        if event_keys:
            wanted = spark.createDataFrame(
                list(event_keys), "cluster string, base bigint, epoch int, crc bigint"
            )
            statuses = key_status.select("cluster", "base", "epoch", "crc", "holders", "status")
            for row in _rows(statuses.join(F.broadcast(wanted), ["cluster", "base", "epoch", "crc"])):
                status_of[(row["cluster"], row["base"], row["epoch"], row["crc"])] = row
    finally:
        keyed.unpersist()

    tables = _driver_tables(events, references, status_of, snapshot_status, summary)
    tables["replicas"] = _replicas_table(dirs, summary, replica_counts, references, result.errors)
    tables["clusters"] = [
        {
            "cluster_id": c,
            "reference_log_dir": r.log_dir,
            "reference_node_id": r.node_id,
            "highest_epoch": r.highest_epoch,
            "leader_id": r.leader_id,
            "reference_is_leader": r.is_leader_log,
            "committed_end": committed_end[c],
            "majority_end": majority_end.get(c),
            "snapshot_end": snapshot_end.get(c),
        }
        for c, r in sorted(references.items())
    ]
    result.tables = tables
    errors_frame.write.mode("overwrite").parquet(_join(output, "errors"))
    for name, rows in tables.items():
        frame = spark.createDataFrame(
            [tuple(row[f] for f in _fields(name)) for row in rows], TABLE_SCHEMAS[name]
        )
        frame.coalesce(1).write.mode("overwrite").parquet(_join(output, name))


def _fields(name: str) -> list[str]:
    return [part.strip().split(" ")[0] for part in _split_ddl(TABLE_SCHEMAS[name])]


def _split_ddl(ddl: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for char in ddl:
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _effective_offset(event: Row) -> int:
    """Where a record takes effect in the log: its offset, or a snapshot's last offset."""
    if event["file_kind"] == SNAPSHOT:
        return int(event["snapshot_end_offset"]) - 1
    return int(event["offset"])


def _voter_points(events: Iterable[Row], ref: Reference) -> list[tuple[int, Sequence[int]]]:
    mine = [
        e
        for e in events
        if e["cluster"] == ref.cluster
        and e["log_dir"] == ref.log_dir
        and e["file_kind"] in (SEGMENT, SNAPSHOT)
    ]
    points = [(_effective_offset(e), e["voter_ids"]) for e in mine if e["record_type"] == VOTERS]
    if not points:
        points = [
            (_effective_offset(e), e["voter_ids"])
            for e in mine
            if e["record_type"] == LEADER_CHANGE and e["voter_ids"]
        ]
    return points


SnapshotKey = tuple[str, str, int]


def _agreeing_snapshots(
    events: list[Row], references: dict[str, Reference], keyed: DataFrame
) -> tuple[dict[str, int], dict[SnapshotKey, str]]:
    """The largest end offset of a snapshot that agrees with its cluster's reference, and the status
    of every snapshot's records: committed when it agrees (or is the reference's own), truncated when
    the reference holds something else at its last offset, unverified when the reference cannot tell."""
    from pyspark.sql import functions as F

    snapshots = {
        (e["cluster"], e["log_dir"], e["snapshot_end_offset"], e["snapshot_epoch"])
        for e in events
        if e["file_kind"] == SNAPSHOT
    }
    best: dict[str, int] = {}
    statuses: dict[SnapshotKey, str] = {}
    probe: list[tuple[str, int, int]] = []
    owners: dict[tuple[str, int, int], list[str]] = defaultdict(list)
    for cluster, log_dir, end, epoch in snapshots:
        ref = references.get(cluster)
        key = (cluster, log_dir, end)
        if ref is None or not end:
            statuses[key] = COMMITTED if end == 0 else UNVERIFIED
            continue
        if log_dir == ref.log_dir:
            statuses[key] = COMMITTED
            best[cluster] = max(best.get(cluster, 0), end)
            continue
        if end - 1 < ref.start:
            statuses[key] = UNVERIFIED
            continue
        statuses[key] = TRUNCATED
        probe.append((cluster, end, epoch))
        owners[(cluster, end, epoch)].append(log_dir)
    if probe:
        spark = keyed.sparkSession
        wanted = spark.createDataFrame(probe, "cluster string, s_end bigint, s_epoch int")
        hits = (
            keyed.where(F.col("in_ref"))
            .join(
                F.broadcast(wanted),
                (keyed["cluster"] == wanted["cluster"])
                & (keyed["base"] <= wanted["s_end"] - 1)
                & (keyed["last"] >= wanted["s_end"] - 1)
                & (keyed["epoch"] == wanted["s_epoch"]),
            )
            .select(wanted["cluster"], "s_end", "s_epoch")
            .collect()
        )
        for row in hits:
            best[row["cluster"]] = max(best.get(row["cluster"], 0), int(row["s_end"]))
            for log_dir in owners[(row["cluster"], int(row["s_end"]), int(row["s_epoch"]))]:
                statuses[(row["cluster"], log_dir, int(row["s_end"]))] = COMMITTED
    return best, statuses


def _status_for(
    event: Row, status_of: dict[tuple[str, int, int, int], Row], snapshot_status: dict[SnapshotKey, str]
) -> tuple[str, list[int]]:
    if event["file_kind"] == BOOTSTRAP:
        return BOOTSTRAP_STATUS, []
    if event["file_kind"] == SNAPSHOT:
        key = (event["cluster"], event["log_dir"], int(event["snapshot_end_offset"]))
        return snapshot_status.get(key, UNVERIFIED), []
    row = status_of.get(
        (event["cluster"], event["batch_base_offset"], event["leader_epoch"], event["batch_crc"])
    )
    if row is None:
        return UNVERIFIED, []
    return str(row["status"]), list(row["holders"] or [])


def _distinct_log_events(events: Iterable[Row], record_type: str) -> dict[tuple[Any, ...], list[Row]]:
    """Segment records of one type, grouped by (cluster, offset, epoch, batch CRC)."""
    grouped: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for e in events:
        if e["record_type"] == record_type and e["file_kind"] == SEGMENT:
            grouped[(e["cluster"], e["offset"], e["leader_epoch"], e["batch_crc"])].append(e)
    return grouped


def _driver_tables(
    events: list[Row],
    references: dict[str, Reference],
    status_of: dict[tuple[str, int, int, int], Row],
    snapshot_status: dict[SnapshotKey, str],
    summary: list[Row],
) -> dict[str, list[Row]]:
    tables: dict[str, list[Row]] = {
        "voter_sets": [],
        "leader_epochs": [],
        "feature_changes": [],
        "duplicate_voter_ids": [],
        "voters_without_directory_id": [],
    }
    in_ref = {COMMITTED, UNCOMMITTED}
    last_ts: dict[str, int] = defaultdict(int)
    for row in summary:
        last_ts[row["cluster"]] = max(last_ts[row["cluster"]], int(row["max_ts"] or 0))

    # voter sets: every distinct VotersRecord of the logs, plus the snapshot/bootstrap set that the
    # log does not repeat (the initial voters, or those of a log whose head was deleted)
    voter_rows: list[Row] = []
    for (cluster, offset, epoch, _crc), group in _distinct_log_events(events, VOTERS).items():
        first = group[0]
        status, holders = _status_for(first, status_of, snapshot_status)
        voter_rows.append(
            {
                "cluster_id": cluster,
                "offset": offset,
                "leader_epoch": epoch,
                "timestamp": first["timestamp"],
                "voter_ids": first["voter_ids"],
                "voter_directory_ids": first["voter_directory_ids"],
                "status": status,
                "source": "log",
                "held_by": holders,
                "files": sorted({e["file"] for e in group}),
            }
        )
    snapshot_voters: dict[tuple[str, int], list[Row]] = defaultdict(list)
    for e in events:
        if e["record_type"] == VOTERS and e["file_kind"] == SNAPSHOT:
            snapshot_voters[(e["cluster"], _effective_offset(e))].append(e)
    for (cluster, offset), group in sorted(snapshot_voters.items()):
        earliest_log = min(
            (r["offset"] for r in voter_rows if r["cluster_id"] == cluster), default=FAR_OFFSET
        )
        if offset >= earliest_log:
            continue
        first = group[0]
        voter_rows.append(
            {
                "cluster_id": cluster,
                "offset": offset,
                "leader_epoch": first["leader_epoch"],
                "timestamp": None,
                "voter_ids": first["voter_ids"],
                "voter_directory_ids": first["voter_directory_ids"],
                "status": _status_for(first, status_of, snapshot_status)[0],
                "source": "snapshot",
                "held_by": sorted({e["node_id"] for e in group if e["node_id"] is not None}),
                "files": sorted({e["file"] for e in group}),
            }
        )
    voter_rows.sort(key=lambda r: (r["cluster_id"], r["offset"], r["leader_epoch"]))
    current: dict[str, set[int]] = {}
    for row in voter_rows:
        before = current.get(row["cluster_id"], set())
        ids = set(row["voter_ids"] or [])
        row["added_ids"] = sorted(ids - before) if row["cluster_id"] in current else sorted(ids)
        row["removed_ids"] = sorted(before - ids)
        if row["status"] in in_ref:
            current[row["cluster_id"]] = ids
    tables["voter_sets"] = voter_rows

    # leader epochs
    epoch_rows: list[Row] = []
    for (cluster, offset, epoch, _crc), group in _distinct_log_events(events, LEADER_CHANGE).items():
        first = group[0]
        status, holders = _status_for(first, status_of, snapshot_status)
        epoch_rows.append(
            {
                "cluster_id": cluster,
                "leader_epoch": epoch,
                "leader_id": first["leader_id"],
                "offset": offset,
                "start_timestamp": first["timestamp"],
                "voter_ids": first["voter_ids"],
                "granting_voter_ids": first["granting_voter_ids"],
                "status": status,
                "held_by": holders,
                "source": "log",
            }
        )
    for cluster, ref in references.items():
        seen = {r["leader_epoch"] for r in epoch_rows if r["cluster_id"] == cluster}
        if ref.highest_epoch >= 0 and ref.highest_epoch not in seen and ref.leader_id is not None:
            epoch_rows.append(
                {
                    "cluster_id": cluster,
                    "leader_epoch": ref.highest_epoch,
                    "leader_id": ref.leader_id,
                    "offset": None,
                    "start_timestamp": None,
                    "voter_ids": None,
                    "granting_voter_ids": None,
                    "status": UNVERIFIED,
                    "held_by": [],
                    "source": "quorum-state",
                }
            )
    epoch_rows.sort(
        key=lambda r: (
            r["cluster_id"],
            r["leader_epoch"],
            r["offset"] if r["offset"] is not None else FAR_OFFSET,
        )
    )
    by_cluster: dict[str, list[Row]] = defaultdict(list)
    for row in epoch_rows:
        by_cluster[row["cluster_id"]].append(row)
    for cluster, rows in by_cluster.items():
        kept = [r for r in rows if r["status"] in in_ref and r["start_timestamp"] is not None]
        for row in rows:
            later = [r["start_timestamp"] for r in kept if r["leader_epoch"] > row["leader_epoch"]]
            if row["start_timestamp"] is None:
                row["end_timestamp"] = row["duration_ms"] = None
                continue
            end = min(later) if later else (last_ts.get(cluster) or None)
            row["end_timestamp"] = end
            row["duration_ms"] = None if end is None else max(0, end - row["start_timestamp"])
    tables["leader_epochs"] = epoch_rows

    # feature levels: bootstrap, then every change appended to the logs
    feature_rows: list[Row] = []
    bootstrap_seen: set[tuple[str, str, int]] = set()
    for e in events:
        if e["file_kind"] == BOOTSTRAP and e["record_type"] in (FEATURE_LEVEL, KRAFT_VERSION):
            key = (e["cluster"], e["feature_name"], e["feature_level"])
            if key not in bootstrap_seen:
                bootstrap_seen.add(key)
                feature_rows.append(
                    {
                        "cluster_id": e["cluster"],
                        "feature": e["feature_name"],
                        "level": e["feature_level"],
                        "offset": None,
                        "leader_epoch": None,
                        "timestamp": None,
                        "status": BOOTSTRAP_STATUS,
                        "source": "bootstrap",
                        "held_by": sorted(
                            {
                                x["node_id"]
                                for x in events
                                if x["file_kind"] == BOOTSTRAP
                                and x["cluster"] == e["cluster"]
                                and x["node_id"] is not None
                            }
                        ),
                    }
                )
    log_features: list[Row] = []
    for record_type in (FEATURE_LEVEL, KRAFT_VERSION):
        for (cluster, offset, epoch, _crc), group in _distinct_log_events(events, record_type).items():
            first = group[0]
            status, holders = _status_for(first, status_of, snapshot_status)
            log_features.append(
                {
                    "cluster_id": cluster,
                    "feature": first["feature_name"],
                    "level": first["feature_level"],
                    "offset": offset,
                    "leader_epoch": epoch,
                    "timestamp": first["timestamp"],
                    "status": status,
                    "source": "log",
                    "held_by": holders,
                }
            )
    log_features.sort(key=lambda r: (r["cluster_id"], r["offset"], r["leader_epoch"]))
    level_now: dict[tuple[str, str], int] = {}
    for row in feature_rows:
        level_now[(row["cluster_id"], row["feature"])] = row["level"]
        row["previous_level"] = None
    for row in log_features:
        feature_key = (row["cluster_id"], row["feature"])
        previous = level_now.get(feature_key)
        row["previous_level"] = previous
        if row["status"] in in_ref or row["status"] == UNVERIFIED:
            if previous == row["level"]:
                continue
            level_now[feature_key] = row["level"]
        feature_rows.append(row)
    tables["feature_changes"] = feature_rows

    # voter-set anomalies, in every VotersRecord version (logs, snapshots, bootstrap snapshots)
    seen_records: set[tuple[Any, ...]] = set()
    for e in events:
        if e["record_type"] != VOTERS:
            continue
        record_key: tuple[Any, ...] = (
            (e["cluster"], "log", e["offset"], e["leader_epoch"], e["batch_crc"])
            if e["file_kind"] == SEGMENT
            else (e["cluster"], e["file"], e["offset"])
        )
        if record_key in seen_records:
            continue
        seen_records.add(record_key)
        status = _status_for(e, status_of, snapshot_status)[0]
        listed: list[int] = list(e["voter_ids"] or [])
        dir_ids = list(e["voter_directory_ids"] or [None] * len(listed))
        offset = _effective_offset(e)
        for voter_id in sorted({v for v in listed if listed.count(v) > 1}):
            tables["duplicate_voter_ids"].append(
                {
                    "cluster_id": e["cluster"],
                    "file": e["file"],
                    "offset": offset,
                    "leader_epoch": e["leader_epoch"],
                    "voter_id": voter_id,
                    "occurrences": listed.count(voter_id),
                    "directory_ids": [d for v, d in zip(listed, dir_ids, strict=False) if v == voter_id],
                    "status": status,
                }
            )
        for voter_id, dir_id in zip(listed, dir_ids, strict=False):
            if dir_id is None or dir_id == ZERO_UUID_TEXT:
                tables["voters_without_directory_id"].append(
                    {
                        "cluster_id": e["cluster"],
                        "file": e["file"],
                        "offset": offset,
                        "leader_epoch": e["leader_epoch"],
                        "voter_id": voter_id,
                        "status": status,
                    }
                )
    return tables


def _replicas_table(
    dirs: list[LogDirInfo],
    summary: list[Row],
    counts: list[Row],
    references: dict[str, Reference],
    errors: list[Row],
) -> list[Row]:
    by_dir = {row["log_dir"]: row for row in summary}
    count_by_dir = {row["log_dir"]: row for row in counts}
    rows: list[Row] = []
    for info in dirs:
        cluster = _cluster_key(info.cluster_id)
        s = by_dir.get(info.path, {})
        c = count_by_dir.get(info.path, {})
        mine = [e for e in errors if e["log_dir"] == info.path]
        ref = references.get(cluster)
        diverging = int(c.get("diverging") or 0)
        rows.append(
            {
                "cluster_id": cluster,
                "node_id": info.node_id,
                "directory_id": info.directory_id,
                "log_dir": info.path,
                "log_start": s.get("start"),
                "log_end": s.get("end"),
                "last_epoch": s.get("last_epoch"),
                "batches": s.get("batches", 0),
                "quorum_leader_id": info.quorum_leader_id,
                "quorum_leader_epoch": info.quorum_leader_epoch,
                "is_reference": ref is not None and ref.log_dir == info.path,
                "committed_batches": int(c.get("committed") or 0),
                "uncommitted_batches": int(c.get("uncommitted") or 0),
                "truncated_batches": int(c.get("truncated") or 0),
                "diverging_batches": diverging,
                "first_divergent_offset": c.get("first_divergent"),
                "agrees": diverging == 0 and int(c.get("truncated") or 0) == 0,
                "torn_tail": any(e["error_kind"] == "torn_tail" for e in mine),
                "errors": len(mine),
            }
        )
    rows.sort(key=lambda r: (r["cluster_id"], r["node_id"] if r["node_id"] is not None else -1, r["log_dir"]))
    return rows


def local_path(output: str) -> str | None:
    """The local directory of ``output`` (a path or ``file:`` URI), None for other file systems."""
    if output.startswith("file://"):
        return output[len("file://") :]
    if output.startswith("file:"):
        return output[len("file:") :]
    if "://" in output:
        return None
    return os.path.abspath(output)
