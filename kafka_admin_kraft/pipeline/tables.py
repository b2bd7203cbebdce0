"""The tables the audit builds on the driver from its findings, one function each
(:data:`DRIVER_TABLES`): the voter sets, the leader epochs, the feature changes, the voters
anomalies, the replicas and the clusters. Plain Python over the findings' rows, without Spark; the
audit (:mod:`~kafka_admin_kraft.pipeline.audit`) hands them to Spark to write, beside the two tables
it builds on Spark frames (the divergence and the errors). Their columns are declared in
:data:`~kafka_admin_kraft.pipeline.schema.OUTPUT_TABLES`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from kafka_admin_kraft.pipeline.findings import Findings, Row, cluster_key, effective_offset
from kafka_admin_kraft.pipeline.rules import (
    BOOTSTRAP_STATUS,
    COMMITTED,
    FAR_OFFSET,
    UNCOMMITTED,
    UNVERIFIED,
)
from kafka_admin_kraft.pipeline.schema import (
    BOOTSTRAP,
    CLUSTERS,
    DUPLICATE_VOTER_IDS,
    FEATURE_CHANGES,
    FEATURE_LEVEL,
    KRAFT_VERSION,
    LEADER_CHANGE,
    LEADER_EPOCHS,
    REPLICAS,
    SEGMENT,
    SNAPSHOT,
    VOTER_SETS,
    VOTERS,
    VOTERS_WITHOUT_DIRECTORY_ID,
    Table,
)
from kafka_admin_kraft.values import ZERO_UUID_TEXT

REFERENCE_HELD: Final = (COMMITTED, UNCOMMITTED)
"""The statuses of the batches the reference log holds."""


def voter_sets_table(found: Findings) -> list[Row]:
    """Every distinct VotersRecord of the logs, plus the snapshot or bootstrap set that the logs do
    not repeat (the initial voters, or those of a log whose head was deleted); each with the voters
    added and removed since the set before it that the reference holds."""
    events, statuses = found.scan.events, found.statuses
    voter_rows: list[Row] = []
    for (cluster, offset, epoch, _crc), group in _distinct_log_events(events, VOTERS).items():
        first = group[0]
        status, holders = statuses.of(first)
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
            snapshot_voters[(e["cluster"], effective_offset(e))].append(e)
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
                "status": statuses.of(first)[0],
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
        if row["status"] in REFERENCE_HELD:
            current[row["cluster_id"]] = ids
    return voter_rows


def leader_epochs_table(found: Findings) -> list[Row]:
    """Each epoch's LeaderChangeMessage, plus the highest epoch from quorum-state when no log holds
    its record; an epoch lasts until the next one the reference holds starts (the last one until
    the cluster's latest batch)."""
    events, statuses = found.scan.events, found.statuses
    last_ts: dict[str, int] = defaultdict(int)
    for summary in found.scan.summaries:
        last_ts[summary["cluster"]] = max(last_ts[summary["cluster"]], int(summary["max_ts"] or 0))
    epoch_rows: list[Row] = []
    for (cluster, offset, epoch, _crc), group in _distinct_log_events(events, LEADER_CHANGE).items():
        first = group[0]
        status, holders = statuses.of(first)
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
    for cluster, ref in found.references.items():
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
        kept = [r for r in rows if r["status"] in REFERENCE_HELD and r["start_timestamp"] is not None]
        for row in rows:
            later = [r["start_timestamp"] for r in kept if r["leader_epoch"] > row["leader_epoch"]]
            if row["start_timestamp"] is None:
                row["end_timestamp"] = row["duration_ms"] = None
                continue
            end = min(later) if later else (last_ts.get(cluster) or None)
            row["end_timestamp"] = end
            row["duration_ms"] = None if end is None else max(0, end - row["start_timestamp"])
    return epoch_rows


def feature_changes_table(found: Findings) -> list[Row]:
    """The feature levels of ``bootstrap.checkpoint``, then every change appended to the logs: a
    record that repeats the level in force is left out unless the reference lost it."""
    events, statuses = found.scan.events, found.statuses
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
            status, holders = statuses.of(first)
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
        if row["status"] in (*REFERENCE_HELD, UNVERIFIED):
            if previous == row["level"]:
                continue
            level_now[feature_key] = row["level"]
        feature_rows.append(row)
    return feature_rows


def duplicate_voter_ids_table(found: Findings) -> list[Row]:
    """Voter ids a VotersRecord lists more than once."""
    rows: list[Row] = []
    for e, status, voters in _voters_record_versions(found):
        listed = [voter_id for voter_id, _ in voters]
        for voter_id in sorted({v for v in listed if listed.count(v) > 1}):
            rows.append(
                _voter_row(e, status, voter_id)
                | {
                    "occurrences": listed.count(voter_id),
                    "directory_ids": [d for v, d in voters if v == voter_id],
                }
            )
    return rows


def voters_without_directory_id_table(found: Findings) -> list[Row]:
    """Voters of a VotersRecord with no directory id, or the zero one."""
    return [
        _voter_row(e, status, voter_id)
        for e, status, voters in _voters_record_versions(found)
        for voter_id, dir_id in voters
        if dir_id is None or dir_id == ZERO_UUID_TEXT
    ]


def _voter_row(e: Row, status: str, voter_id: int) -> Row:
    """The columns the voter tables share: where the VotersRecord stands, the voter, its status."""
    return {
        "cluster_id": e["cluster"],
        "file": e["file"],
        "offset": effective_offset(e),
        "leader_epoch": e["leader_epoch"],
        "voter_id": voter_id,
        "status": status,
    }


def _voters_record_versions(found: Findings) -> Iterator[tuple[Row, str, list[tuple[int, str | None]]]]:
    """Every VotersRecord version once (a log's record once however many replicas hold it; each
    snapshot's and bootstrap snapshot's own), with its status and its (voter id, directory id)
    pairs."""
    seen: set[tuple[Any, ...]] = set()
    for e in found.scan.events:
        if e["record_type"] != VOTERS:
            continue
        key: tuple[Any, ...] = (
            (e["cluster"], "log", e["offset"], e["leader_epoch"], e["batch_crc"])
            if e["file_kind"] == SEGMENT
            else (e["cluster"], e["file"], e["offset"])
        )
        if key not in seen:
            seen.add(key)
            listed: list[int] = list(e["voter_ids"] or [])
            dir_ids = list(e["voter_directory_ids"] or [None] * len(listed))
            yield e, found.statuses.of(e)[0], list(zip(listed, dir_ids, strict=False))


def replicas_table(found: Findings) -> list[Row]:
    """Every log directory given, by cluster and node id."""
    by_dir = {row["log_dir"]: row for row in found.scan.summaries}
    count_by_dir = {row["log_dir"]: row for row in found.replica_counts}
    rows: list[Row] = []
    for info in found.dirs:
        cluster = cluster_key(info.cluster_id)
        s = by_dir.get(info.path, {})
        c = count_by_dir.get(info.path, {})
        mine = [e for e in found.scan.errors if e["log_dir"] == info.path]
        ref = found.references.get(cluster)
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


def clusters_table(found: Findings) -> list[Row]:
    """Each cluster's reference log and committed end, by cluster."""
    ends = found.ends
    return [
        {
            "cluster_id": c,
            "reference_log_dir": r.log_dir,
            "reference_node_id": r.node_id,
            "highest_epoch": r.highest_epoch,
            "leader_id": r.leader_id,
            "reference_is_leader": r.is_leader_log,
            "committed_end": ends.committed_end[c],
            "majority_end": ends.majority_end.get(c),
            "snapshot_end": ends.snapshot_end.get(c),
        }
        for c, r in sorted(found.references.items())
    ]


def _distinct_log_events(events: Iterable[Row], record_type: str) -> dict[tuple[Any, ...], list[Row]]:
    """Segment records of one type, grouped by (cluster, offset, epoch, batch CRC)."""
    grouped: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for e in events:
        if e["record_type"] == record_type and e["file_kind"] == SEGMENT:
            grouped[(e["cluster"], e["offset"], e["leader_epoch"], e["batch_crc"])].append(e)
    return grouped


DRIVER_TABLES: Final[tuple[tuple[Table, Callable[[Findings], list[Row]]], ...]] = (
    (VOTER_SETS, voter_sets_table),
    (LEADER_EPOCHS, leader_epochs_table),
    (FEATURE_CHANGES, feature_changes_table),
    (DUPLICATE_VOTER_IDS, duplicate_voter_ids_table),
    (VOTERS_WITHOUT_DIRECTORY_ID, voters_without_directory_id_table),
    (REPLICAS, replicas_table),
    (CLUSTERS, clusters_table),
)
"""The tables built on the driver from the findings, each by its function, in this order."""
