"""What the audit's steps find: the values one step hands to the next and the tables built on the
driver read (:mod:`~kafka_admin_kraft.pipeline.tables`), without Spark. The steps that find them
are in :mod:`~kafka_admin_kraft.pipeline.audit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_admin_kraft.pipeline.planning import LogDirInfo
from kafka_admin_kraft.pipeline.rules import BOOTSTRAP_STATUS, UNVERIFIED, Reference
from kafka_admin_kraft.pipeline.schema import BOOTSTRAP, SNAPSHOT

Row = dict[str, Any]
BatchKey = tuple[str, int, int, int]
"""(cluster, base offset, leader epoch, CRC): a batch, the same in every replica holding it."""
SnapshotKey = tuple[str, str, int]
"""(cluster, log directory, end offset) of a snapshot."""


def cluster_key(value: str | None) -> str:
    """How a cluster is named in the findings: its ``cluster.id``, '' for a directory without one."""
    return value or ""


@dataclass(frozen=True)
class LogDirScan:
    """What reaches the driver of the rows themselves (the audit's step 1)."""

    summaries: list[Row]
    """Per log directory holding segment batches: cluster, log_dir, node_id, start, end, batches,
    last_epoch, max_ts (its latest batch timestamp) and error_rows."""
    events: list[Row]
    """The audited records (:data:`~kafka_admin_kraft.pipeline.audit.EVENT_COLUMNS`), in the data source's
    order."""
    errors: list[Row]
    """The first :data:`~kafka_admin_kraft.pipeline.audit.ERRORS_COLLECTED` error rows (the columns of the
    errors table)."""
    error_count: int


@dataclass(frozen=True)
class CommittedEnds:
    """Rules step 3's answer for every cluster (the audit's step 5)."""

    committed_end: dict[str, int]
    """By cluster (every one): the larger of the two below, 0 without either."""
    majority_end: dict[str, int]
    """By cluster: the end of the last reference batch held by a majority of its voters."""
    snapshot_end: dict[str, int]
    """By cluster: the end offset of the furthest snapshot agreeing with the reference."""


@dataclass(frozen=True)
class RecordStatuses:
    """The status of each audited record: a segment record has its batch's, a snapshot's record its
    snapshot's, a record of ``bootstrap.checkpoint`` is ``bootstrap`` (the audit's step 6)."""

    batches: dict[BatchKey, tuple[str, list[int]]]
    """(status, holders) of the batches holding audited records."""
    snapshots: dict[SnapshotKey, str]

    def of(self, event: Row) -> tuple[str, list[int]]:
        """(status, node ids holding the record's batch identically; none for snapshots)."""
        if event["file_kind"] == BOOTSTRAP:
            return BOOTSTRAP_STATUS, []
        if event["file_kind"] == SNAPSHOT:
            key = (event["cluster"], event["log_dir"], int(event["snapshot_end_offset"]))
            return self.snapshots.get(key, UNVERIFIED), []
        status, holders = self.batches.get(
            (event["cluster"], event["batch_base_offset"], event["leader_epoch"], event["batch_crc"]),
            (UNVERIFIED, []),
        )
        return status, list(holders)


@dataclass(frozen=True)
class Findings:
    """What the steps found, from which the tables built on the driver come."""

    dirs: list[LogDirInfo]
    scan: LogDirScan
    references: dict[str, Reference]
    ends: CommittedEnds
    statuses: RecordStatuses
    replica_counts: list[Row]


def effective_offset(event: Row) -> int:
    """Where a record takes effect in the log: its offset, or a snapshot's last offset."""
    if event["file_kind"] == SNAPSHOT:
        return int(event["snapshot_end_offset"]) - 1
    return int(event["offset"])

