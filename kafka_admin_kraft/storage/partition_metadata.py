"""``partition.metadata``: the topic id of a partition directory.

Exactly ``version: 0``, a newline, ``topic_id: <uuid>`` and no trailing newline; for
``__cluster_metadata`` the topic id is the reserved ``AAAAAAAAAAAAAAAAAAAAAQ``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Final

from kafka_admin_kraft.java_text import java_lines, parse_java_int
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID, ZERO_UUID, Uuid
from kafka_admin_kraft.records.fsutil import atomic_write
from kafka_admin_kraft.storage.errors import StorageFormatError

PARTITION_METADATA_FILE: Final = "partition.metadata"
CURRENT_VERSION: Final = 0
_SEPARATOR: Final = re.compile(r":\s+")


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    topic_id: Uuid = METADATA_TOPIC_ID
    version: int = CURRENT_VERSION


def format_partition_metadata(metadata: PartitionMetadata) -> str:
    return f"version: {metadata.version}\ntopic_id: {metadata.topic_id}"


def parse_partition_metadata(text: str, *, what: str = PARTITION_METADATA_FILE) -> PartitionMetadata:
    """Kafka's reader: ``<name>: <value>`` lines, version at least 0, a non-zero topic id."""
    lines = java_lines(text) + ["", ""]
    version_parts = _SEPARATOR.split(lines[0])
    if len(version_parts) != 2:
        raise StorageFormatError(f"Malformed line in checkpoint file: {lines[0]!r}", what=what,
                                 path="version")
    try:
        version = parse_java_int(version_parts[1])
    except ValueError:
        raise StorageFormatError(f"Malformed line in checkpoint file: {lines[0]!r}", what=what,
                                 path="version") from None
    if version < CURRENT_VERSION:
        raise StorageFormatError(f"Unrecognized version of partition metadata file: {version}", what=what,
                                 path="version")
    id_parts = _SEPARATOR.split(lines[1])
    if len(id_parts) != 2:
        raise StorageFormatError(f"Malformed line in checkpoint file: {lines[1]!r}", what=what,
                                 path="topic_id")
    try:
        topic_id = Uuid.from_string(id_parts[1])
    except ValueError as exc:
        raise StorageFormatError(str(exc), what=what, path="topic_id") from None
    if topic_id == ZERO_UUID:
        raise StorageFormatError("Invalid topic ID in partition metadata file", what=what, path="topic_id")
    return PartitionMetadata(topic_id, version)


def read_partition_metadata(path: str | os.PathLike[str]) -> PartitionMetadata:
    with open(path, encoding="utf-8", errors="replace", newline="") as stream:
        return parse_partition_metadata(stream.read(), what=os.fspath(path))


def write_partition_metadata(path: str | os.PathLike[str], metadata: PartitionMetadata) -> None:
    """Replace the file through ``partition.metadata.tmp``, fsync and rename."""
    atomic_write(path, format_partition_metadata(metadata).encode("utf-8"))
