"""The row layout of the ``kraft-metadata`` data source (one row per record, or per error) and of
the tables the audit writes.

Both are plain Python data: the reader, the single-process loop of the benchmarks and the Spark side
(DDL string, Arrow schema) derive from :data:`COLUMNS`; the audit builds its tables' Spark schemas
from :data:`OUTPUT_TABLES`, whose column docs are the reference for what each table holds.
"""

from __future__ import annotations

from typing import Final, NamedTuple


class Column(NamedTuple):
    name: str
    ddl: str
    """Spark SQL type."""
    doc: str


COLUMNS: Final[tuple[Column, ...]] = (
    Column("cluster_id", "string", "cluster.id of the log directory's meta.properties (null if absent)"),
    Column("node_id", "int", "node.id of the log directory's meta.properties (null if absent)"),
    Column("directory_id", "string", "directory.id of the log directory's meta.properties"),
    Column("log_dir", "string", "the metadata log directory (holding meta.properties)"),
    Column("file", "string", "path of the file the row comes from"),
    Column("file_kind", "string", "segment, snapshot, bootstrap, meta.properties or quorum-state"),
    Column("snapshot_end_offset", "bigint", "snapshots: the end offset in the file name"),
    Column("snapshot_epoch", "int", "snapshots: the epoch in the file name"),
    Column(
        "batch_position",
        "bigint",
        "byte position of the batch (or of the error) in the file; null for a damaged or missing "
        "meta.properties or quorum-state",
    ),
    Column("batch_base_offset", "bigint", "base offset of the batch"),
    Column("batch_last_offset", "bigint", "last offset of the batch"),
    Column("batch_crc", "bigint", "CRC-32C stored in the batch"),
    Column("record_index", "int", "index of the record inside its batch"),
    Column("offset", "bigint", "offset of the record"),
    Column("leader_epoch", "int", "partition leader epoch of the batch"),
    Column("timestamp", "bigint", "record timestamp (ms)"),
    Column("is_control", "boolean", "the batch has the control flag"),
    Column("record_type", "string", "schema name: LeaderChangeMessage, VotersRecord, ..."),
    Column("record_version", "int", "version of the record schema"),
    Column("record_json", "string", "the decoded record as JSON (snake_case keys)"),
    Column(
        "record_value",
        "binary",
        "the record's value bytes as stored (a metadata record with its frame header), to decode later",
    ),
    Column("leader_id", "int", "LeaderChangeMessage: the new leader"),
    Column("voter_ids", "array<int>", "VotersRecord / LeaderChangeMessage: voter ids"),
    Column("voter_directory_ids", "array<string>", "VotersRecord: directory id of each voter"),
    Column("granting_voter_ids", "array<int>", "LeaderChangeMessage: voters that granted the vote"),
    Column("feature_name", "string", "FeatureLevelRecord name; kraft.version for KRaftVersionRecord"),
    Column("feature_level", "int", "FeatureLevelRecord / KRaftVersionRecord level"),
    Column(
        "error_kind",
        "string",
        "corrupt, torn_tail, undecodable, unreadable_file, unreadable_quorum_state, "
        "missing_meta_properties or invalid_meta_properties; null for records",
    ),
    Column("error", "string", "what is wrong, with file and position"),
)

TYPED_COLUMNS: Final = (
    "leader_id",
    "voter_ids",
    "voter_directory_ids",
    "granting_voter_ids",
    "feature_name",
    "feature_level",
)
"""Columns filled from the decoded value of the record types in :data:`AUDITED_TYPES`."""


def ddl(columns: tuple[Column, ...]) -> str:
    """The Spark DDL schema of ``columns`` (every field nullable)."""
    return ", ".join(f"{column.name} {column.ddl}" for column in columns)


COLUMN_NAMES: Final[tuple[str, ...]] = tuple(column.name for column in COLUMNS)
COLUMN_INDEX: Final[dict[str, int]] = {name: index for index, name in enumerate(COLUMN_NAMES)}
SCHEMA_DDL: Final = ddl(COLUMNS)

SEGMENT: Final = "segment"
SNAPSHOT: Final = "snapshot"
BOOTSTRAP: Final = "bootstrap"

CORRUPT: Final = "corrupt"
TORN_TAIL: Final = "torn_tail"
UNDECODABLE: Final = "undecodable"
UNREADABLE_QUORUM_STATE: Final = "unreadable_quorum_state"
UNREADABLE_FILE: Final = "unreadable_file"
"""A segment, snapshot or bootstrap.checkpoint that is no regular file (a directory, a named pipe...)."""
MISSING_META_PROPERTIES: Final = "missing_meta_properties"
INVALID_META_PROPERTIES: Final = "invalid_meta_properties"

LEADER_CHANGE: Final = "LeaderChangeMessage"
VOTERS: Final = "VotersRecord"
KRAFT_VERSION: Final = "KRaftVersionRecord"
FEATURE_LEVEL: Final = "FeatureLevelRecord"
AUDITED_TYPES: Final = (LEADER_CHANGE, VOTERS, KRAFT_VERSION, FEATURE_LEVEL)
"""Record types whose typed columns the audit jobs read."""


class Table(NamedTuple):
    """One table the audit writes (a Parquet directory of that name under the output)."""

    name: str
    doc: str
    columns: tuple[Column, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)


def _input(name: str) -> Column:
    """An input column carried unchanged into an output table (same type, same meaning)."""
    return COLUMNS[COLUMN_INDEX[name]]


_STATUS_DOC: Final = (
    "committed, uncommitted, truncated or unverified (see kafka_admin_kraft.pipeline.rules); "
    "bootstrap for bootstrap.checkpoint"
)
_CLUSTER = Column("cluster_id", "string", "cluster.id of the log directories ('' when unknown)")
_OFFSET = Column("offset", "bigint", "offset of the record; a snapshot's record counts at its last offset")
_EPOCH = Column("leader_epoch", "int", "leader epoch of the batch holding the record")
_STATUS = Column("status", "string", _STATUS_DOC)
_HELD_BY = Column("held_by", "array<int>", "node ids of the replicas holding the batch identically")

VOTER_SETS: Final = Table(
    "voter_sets",
    "every VotersRecord version of each cluster: those of the logs, then a snapshot's or bootstrap "
    "set the logs do not repeat",
    (
        _CLUSTER,
        _OFFSET,
        _EPOCH,
        Column("timestamp", "bigint", "record timestamp (ms); null for a snapshot's set"),
        Column("voter_ids", "array<int>", "the voters, in the record's order"),
        Column("voter_directory_ids", "array<string>", "directory id of each voter"),
        Column("added_ids", "array<int>", "voters not in the previous committed or uncommitted set"),
        Column("removed_ids", "array<int>", "voters of the previous committed or uncommitted set left out"),
        _STATUS,
        Column("source", "string", "log, or snapshot for a set read from a snapshot"),
        Column("held_by", "array<int>", "node ids holding the record (for a snapshot: its holders)"),
        Column("files", "array<string>", "files holding the record"),
    ),
)
LEADER_EPOCHS: Final = Table(
    "leader_epochs",
    "each epoch's leader, from its LeaderChangeMessage, or from quorum-state for the highest epoch "
    "when no log holds its record",
    (
        _CLUSTER,
        Column("leader_epoch", "int", "the epoch"),
        Column("leader_id", "int", "the epoch's leader"),
        Column("offset", "bigint", "offset of the LeaderChangeMessage; null from quorum-state"),
        Column("start_timestamp", "bigint", "timestamp of the LeaderChangeMessage (ms)"),
        Column(
            "end_timestamp",
            "bigint",
            "start of the first later committed or uncommitted epoch, else the cluster's last batch time",
        ),
        Column("duration_ms", "bigint", "end_timestamp - start_timestamp, at least 0"),
        Column("voter_ids", "array<int>", "voters named by the LeaderChangeMessage"),
        Column("granting_voter_ids", "array<int>", "voters that granted the vote"),
        _STATUS,
        _HELD_BY,
        Column("source", "string", "log or quorum-state"),
    ),
)
FEATURE_CHANGES: Final = Table(
    "feature_changes",
    "feature levels from bootstrap.checkpoint, then every level change appended to the logs",
    (
        _CLUSTER,
        Column("feature", "string", "feature name (kraft.version for KRaftVersionRecord)"),
        Column("level", "int", "the level set"),
        Column("previous_level", "int", "the level before; null for bootstrap rows and a first level"),
        Column("offset", "bigint", "offset of the record; null for bootstrap rows"),
        Column("leader_epoch", "int", "leader epoch of the batch; null for bootstrap rows"),
        Column("timestamp", "bigint", "record timestamp (ms); null for bootstrap rows"),
        _STATUS,
        Column("source", "string", "bootstrap or log"),
        Column("held_by", "array<int>", "node ids holding the record (for bootstrap: holding the file)"),
    ),
)
DIVERGENCE: Final = Table(
    "divergence",
    "batches of a replica that differ from the reference log below the committed offset",
    (
        Column("cluster_id", "string", "cluster.id of the log directory ('' when unknown); never null"),
        _input("node_id"),
        _input("log_dir"),
        _input("file"),
        Column("base_offset", "bigint", "base offset of the diverging batch"),
        Column("last_offset", "bigint", "last offset of the diverging batch"),
        Column("leader_epoch", "int", "leader epoch of the diverging batch"),
        Column("crc", "bigint", "CRC-32C of the diverging batch"),
        Column("reference_epoch", "int", "leader epoch of the reference's batch at that base offset"),
        Column("reference_crc", "bigint", "CRC-32C of the reference's batch at that base offset"),
        Column("committed_end", "bigint", "the cluster's committed end offset"),
    ),
)
DUPLICATE_VOTER_IDS: Final = Table(
    "duplicate_voter_ids",
    "voter ids listed more than once in one VotersRecord (logs, snapshots, bootstrap snapshots)",
    (
        _CLUSTER,
        Column("file", "string", "a file holding the record"),
        _OFFSET,
        _EPOCH,
        Column("voter_id", "int", "the repeated voter id"),
        Column("occurrences", "int", "how often the record lists it"),
        Column("directory_ids", "array<string>", "the directory id of each occurrence"),
        _STATUS,
    ),
)
VOTERS_WITHOUT_DIRECTORY_ID: Final = Table(
    "voters_without_directory_id",
    "voters whose directory id is absent or zero in a VotersRecord",
    (
        _CLUSTER,
        Column("file", "string", "a file holding the record"),
        _OFFSET,
        _EPOCH,
        Column("voter_id", "int", "the voter"),
        _STATUS,
    ),
)
REPLICAS: Final = Table(
    "replicas",
    "every log directory: its segments' range, election state and agreement with the reference",
    (
        _CLUSTER,
        _input("node_id"),
        _input("directory_id"),
        _input("log_dir"),
        Column("log_start", "bigint", "base offset of the first segment batch; null without segments"),
        Column("log_end", "bigint", "last offset of the last segment batch + 1"),
        Column("last_epoch", "int", "leader epoch of the last segment batch"),
        Column("batches", "bigint", "segment batches read"),
        Column("quorum_leader_id", "int", "leaderId of quorum-state"),
        Column("quorum_leader_epoch", "int", "leaderEpoch of quorum-state"),
        Column("is_reference", "boolean", "this is the cluster's reference log"),
        Column("committed_batches", "bigint", "batches with status committed"),
        Column("uncommitted_batches", "bigint", "batches with status uncommitted"),
        Column("truncated_batches", "bigint", "batches with status truncated"),
        Column("diverging_batches", "bigint", "truncated batches below the committed end offset"),
        Column("first_divergent_offset", "bigint", "base offset of the first diverging batch"),
        Column("agrees", "boolean", "no truncated batch: the log is a prefix of the reference or extends it"),
        Column("torn_tail", "boolean", "the newest segment ends in a partly written batch"),
        Column("errors", "bigint", "error rows of the directory (among those collected)"),
    ),
)
CLUSTERS: Final = Table(
    "clusters",
    "each cluster's reference log and committed end offset",
    (
        _CLUSTER,
        Column("reference_log_dir", "string", "the reference log directory"),
        Column("reference_node_id", "int", "node.id of the reference log directory"),
        Column("highest_epoch", "int", "the highest leader epoch evidenced"),
        Column("leader_id", "int", "leader of the highest epoch, when known"),
        Column("reference_is_leader", "boolean", "the reference is that leader's log (not a stand-in)"),
        Column("committed_end", "bigint", "the committed end offset: the larger of the two below"),
        Column("majority_end", "bigint", "end of the last reference batch a majority of voters holds"),
        Column("snapshot_end", "bigint", "end offset of the furthest snapshot agreeing with the reference"),
    ),
)
ERRORS: Final = Table(
    "errors",
    "corrupt batches, torn tails, undecodable records and missing or damaged node files",
    tuple(
        _input(name)
        for name in (
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
    ),
)
RECORDS: Final = Table("records", "every row of the data source (only when asked)", COLUMNS)

OUTPUT_TABLES: Final[tuple[Table, ...]] = (
    VOTER_SETS,
    LEADER_EPOCHS,
    FEATURE_CHANGES,
    DIVERGENCE,
    DUPLICATE_VOTER_IDS,
    VOTERS_WITHOUT_DIRECTORY_ID,
    REPLICAS,
    CLUSTERS,
    ERRORS,
    RECORDS,
)
"""Every table the audit writes, in the order the README lists them."""
