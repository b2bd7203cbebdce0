"""The row layout of the ``kraft-metadata`` data source: one row per record (or per error).

The layout is plain Python data so that the reader, the single-process loop of the benchmarks and
the Spark side (DDL string, Arrow schema) all derive from one list.
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
        "corrupt, torn_tail, undecodable, unreadable_quorum_state, missing_meta_properties or "
        "invalid_meta_properties; null for records",
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

COLUMN_NAMES: Final[tuple[str, ...]] = tuple(column.name for column in COLUMNS)
COLUMN_INDEX: Final[dict[str, int]] = {name: index for index, name in enumerate(COLUMN_NAMES)}
SCHEMA_DDL: Final = ", ".join(f"{column.name} {column.ddl}" for column in COLUMNS)

SEGMENT: Final = "segment"
SNAPSHOT: Final = "snapshot"
BOOTSTRAP: Final = "bootstrap"

CORRUPT: Final = "corrupt"
TORN_TAIL: Final = "torn_tail"
UNDECODABLE: Final = "undecodable"
UNREADABLE_QUORUM_STATE: Final = "unreadable_quorum_state"
MISSING_META_PROPERTIES: Final = "missing_meta_properties"
INVALID_META_PROPERTIES: Final = "invalid_meta_properties"

LEADER_CHANGE: Final = "LeaderChangeMessage"
VOTERS: Final = "VotersRecord"
KRAFT_VERSION: Final = "KRaftVersionRecord"
FEATURE_LEVEL: Final = "FeatureLevelRecord"
AUDITED_TYPES: Final = (LEADER_CHANGE, VOTERS, KRAFT_VERSION, FEATURE_LEVEL)
"""Record types whose typed columns the audit jobs read."""
