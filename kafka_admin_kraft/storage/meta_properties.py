"""``meta.properties``: the identity of a log directory (cluster id, node id, directory id).

Kafka writes it with ``java.util.Properties.store(writer, "")`` in UTF-8: a ``#`` line, a ``#<date>``
line, then ``key=value`` lines, through ``meta.properties.tmp`` and an atomic rename. It reads it with
``Properties.load(InputStream)``, which decodes ISO-8859-1; this reader does the same so that it sees
exactly what Kafka sees. JDK 18 and later write the keys sorted; JDK 17 writes them in hash-table
order, which :func:`~kafka_admin_kraft.config.properties.format_properties` can reproduce for
compatibility tests.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

from kafka_admin_kraft.config.properties import KeyOrder, format_properties, read_properties
from kafka_admin_kraft.java_text import parse_java_int
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records.fsutil import atomic_write
from kafka_admin_kraft.storage.errors import StorageFormatError

META_PROPERTIES_FILE: Final = "meta.properties"
VERSION_KEY: Final = "version"
CLUSTER_ID_KEY: Final = "cluster.id"
NODE_ID_KEY: Final = "node.id"
BROKER_ID_KEY: Final = "broker.id"
DIRECTORY_ID_KEY: Final = "directory.id"

@dataclass(frozen=True, slots=True)
class MetaProperties:
    """Version 1 (KRaft) needs cluster id and node id; version 0 (ZooKeeper era) calls the node id
    ``broker.id`` and may lack both."""

    version: int
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: Uuid | None = None

    def to_properties(self) -> dict[str, str]:
        """The keys in the order Kafka inserts them."""
        props = {VERSION_KEY: str(self.version)}
        if self.cluster_id is not None:
            props[CLUSTER_ID_KEY] = self.cluster_id
        if self.node_id is not None:
            props[BROKER_ID_KEY if self.version == 0 else NODE_ID_KEY] = str(self.node_id)
        if self.directory_id is not None:
            props[DIRECTORY_ID_KEY] = str(self.directory_id)
        return props


# ---------------------------------------------------------------------------- meta.properties


def _int_prop(props: Mapping[str, str], key: str, what: str) -> int:
    text = props.get(key)
    if text is None:
        raise StorageFormatError(f"Failed to find required property {key}.", what=what, path=key)
    try:
        return parse_java_int(text)
    except ValueError:
        raise StorageFormatError(f"Unable to read {key} as a base-10 number: {text!r}", what=what,
                                 path=key) from None


def validate_directory_id(directory_id: Uuid, *, what: str = META_PROPERTIES_FILE) -> None:
    """Kafka refuses the reserved ids (the zero id, the metadata topic id and the rest below 100)."""
    if directory_id.is_reserved():
        raise StorageFormatError(f"directory.id {directory_id} is one of Kafka's reserved ids", what=what,
                                 path=DIRECTORY_ID_KEY)


def meta_properties_from(props: Mapping[str, str], *, what: str = META_PROPERTIES_FILE) -> MetaProperties:
    """Validate loaded properties: version 0 or 1 (missing = 0), required keys, a usable directory id."""
    version_text = props.get(VERSION_KEY, "0")
    try:
        version = parse_java_int(version_text.strip())
    except ValueError:
        raise StorageFormatError(f"Invalid meta.properties version string {version_text!r}", what=what,
                                 path=VERSION_KEY) from None
    if version not in (0, 1):
        raise StorageFormatError(f"Unknown meta.properties version number {version}", what=what,
                                 path=VERSION_KEY)
    if version == 0:
        node_id = _int_prop(props, BROKER_ID_KEY, what) if BROKER_ID_KEY in props else None
    else:
        node_id = _int_prop(props, NODE_ID_KEY, what)
    cluster_id = props.get(CLUSTER_ID_KEY)
    if version == 1 and cluster_id is None:
        raise StorageFormatError("cluster.id was not found.", what=what, path=CLUSTER_ID_KEY)
    directory_id = None
    if DIRECTORY_ID_KEY in props:
        try:
            directory_id = Uuid.from_string(props[DIRECTORY_ID_KEY])
        except ValueError as exc:
            raise StorageFormatError(f"Unable to read directory.id as a Uuid: {exc}", what=what,
                                     path=DIRECTORY_ID_KEY) from None
        validate_directory_id(directory_id, what=what)
    return MetaProperties(version, cluster_id, node_id, directory_id)


def read_meta_properties(path: str | os.PathLike[str]) -> MetaProperties:
    """Read and validate a ``meta.properties`` file (or the one inside a log directory)."""
    target = Path(path)
    if target.is_dir():
        target = target / META_PROPERTIES_FILE
    try:
        props = read_properties(target)
    except ValueError as exc:
        raise StorageFormatError(str(exc), what=str(target)) from None
    return meta_properties_from(props, what=str(target))


def format_meta_properties(meta: MetaProperties, *, moment: datetime | None = None,
                           key_order: KeyOrder = "sorted") -> str:
    return format_properties(meta.to_properties(), moment=moment, key_order=key_order)


def write_meta_properties(path: str | os.PathLike[str], meta: MetaProperties, *,
                          moment: datetime | None = None, key_order: KeyOrder = "sorted") -> Path:
    """Write ``meta.properties`` (into ``path`` if it is a directory) via ``.tmp`` and rename."""
    target = Path(path)
    if target.is_dir():
        target = target / META_PROPERTIES_FILE
    if meta.directory_id is not None:
        validate_directory_id(meta.directory_id, what=str(target))
    text = format_meta_properties(meta, moment=moment, key_order=key_order)
    atomic_write(target, text.encode("utf-8"))
    return target
