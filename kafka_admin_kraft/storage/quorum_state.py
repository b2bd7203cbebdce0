"""``quorum-state``: a raft node's durable election state (leader, epoch, vote).

One line of compact JSON, no trailing newline: the QuorumStateData fields of the data version as
camelCase keys in schema order, then ``"data_version"``. Version 0 is used with kraft.version 0 and
version 1 with kraft.version 1. Written through ``quorum-state.tmp``, fsync and an atomic rename.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from kafka_admin_kraft.java_text import java_lines, parse_java_int
from kafka_admin_kraft.protocol.exceptions import EncodeError
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.records.fsutil import atomic_write
from kafka_admin_kraft.storage.errors import StorageFormatError

QUORUM_STATE_FILE: Final = "quorum-state"
DATA_VERSION_KEY: Final = "data_version"
LOWEST_DATA_VERSION: Final = 0
HIGHEST_DATA_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class QuorumState:
    """Election state. -1 means no known leader / no vote. ``cluster_id``, ``applied_offset`` and
    ``current_voters`` exist in data version 0 only, ``voted_directory_id`` in version 1 only."""

    data_version: int = HIGHEST_DATA_VERSION
    leader_id: int = -1
    leader_epoch: int = -1
    voted_id: int = -1
    voted_directory_id: Uuid = ZERO_UUID
    cluster_id: str = ""
    applied_offset: int = 0
    current_voters: tuple[int, ...] | None = None


def _jackson_string(text: str) -> str:
    """A JSON string as Jackson writes it: UTF-8 kept, control characters as upper-case \\u00XX."""
    out = ['"']
    for char in text:
        if char == '"' or char == "\\":
            out.append("\\" + char)
        elif char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif ord(char) < 0x20:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES: Final = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def format_quorum_state(state: QuorumState) -> str:
    """The file content for ``state`` at its data version.

    Like Kafka's JSON converter, a non-default value in a field the version lacks is refused.
    """
    if state.data_version == 0:
        if state.voted_directory_id != ZERO_UUID:
            raise EncodeError("quorum-state version 0 has no votedDirectoryId", path="votedDirectoryId")
        voters = ("null" if state.current_voters is None else
                  "[" + ",".join(f'{{"voterId":{voter}}}' for voter in state.current_voters) + "]")
        return (f'{{"clusterId":{_jackson_string(state.cluster_id)},"leaderId":{state.leader_id},'
                f'"leaderEpoch":{state.leader_epoch},"votedId":{state.voted_id},'
                f'"appliedOffset":{state.applied_offset},"currentVoters":{voters},"data_version":0}}')
    if state.data_version == 1:
        for name, value, default in (("clusterId", state.cluster_id, ""),
                                     ("appliedOffset", state.applied_offset, 0),
                                     ("currentVoters", state.current_voters, None)):
            if value != default:
                raise EncodeError(f"quorum-state version 1 has no {name}", path=name)
        return (f'{{"leaderId":{state.leader_id},"leaderEpoch":{state.leader_epoch},'
                f'"votedId":{state.voted_id},"votedDirectoryId":"{state.voted_directory_id}",'
                f'"data_version":1}}')
    raise EncodeError(f"quorum-state data version {state.data_version} is not 0 or 1")


def _field(node: dict[str, Any], key: str, version: int, what: str) -> Any:
    if key not in node:
        raise StorageFormatError(f"unable to locate field '{key}', which is mandatory in version {version}",
                                 what=what, path=key)
    return node[key]


def _int_field(node: dict[str, Any], key: str, version: int, what: str, bits: int = 32) -> int:
    value = _field(node, key, version, what)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = parse_java_int(value, bits)
    if not isinstance(value, int) or isinstance(value, bool) or not (
            -(1 << (bits - 1)) <= value < (1 << (bits - 1))):
        raise StorageFormatError(f"expected an int{bits}, got {value!r}", what=what, path=key)
    return value


def parse_quorum_state(text: str, *, what: str = QUORUM_STATE_FILE) -> QuorumState:
    """Parse the first line, as Kafka does; data_version must be 0 or 1."""
    lines = java_lines(text)
    if not lines:
        raise StorageFormatError("File ended prematurely.", what=what)
    try:
        node = json.loads(lines[0])
    except (ValueError, RecursionError) as exc:
        raise StorageFormatError(f"not JSON: {exc}", what=what) from None
    if not isinstance(node, dict):
        raise StorageFormatError(f"Deserialized node {lines[0]} is not an object node", what=what)
    if DATA_VERSION_KEY not in node:
        raise StorageFormatError(f"Deserialized node {lines[0]} does not have data_version field",
                                 what=what, path=DATA_VERSION_KEY)
    version = _int_field(node, DATA_VERSION_KEY, 0, what, bits=16)
    if not LOWEST_DATA_VERSION <= version <= HIGHEST_DATA_VERSION:
        raise StorageFormatError(f"data_version ({version}) is not within the min (0) and max (1) "
                                 "supported version", what=what, path=DATA_VERSION_KEY)
    leader_id = _int_field(node, "leaderId", version, what)
    leader_epoch = _int_field(node, "leaderEpoch", version, what)
    voted_id = _int_field(node, "votedId", version, what)
    if version == 1:
        text_id = _field(node, "votedDirectoryId", version, what)
        try:
            if not isinstance(text_id, str):
                raise ValueError(f"expected a string, got {text_id!r}")
            voted_directory_id = Uuid.from_string(text_id)
        except ValueError as exc:
            raise StorageFormatError(str(exc), what=what, path="votedDirectoryId") from None
        return QuorumState(1, leader_id, leader_epoch, voted_id, voted_directory_id)
    cluster_id = _field(node, "clusterId", version, what)
    if not isinstance(cluster_id, str):
        raise StorageFormatError(f"expected a string, got {cluster_id!r}", what=what, path="clusterId")
    applied_offset = _int_field(node, "appliedOffset", version, what, bits=64)
    raw_voters = _field(node, "currentVoters", version, what)
    voters: tuple[int, ...] | None = None
    if raw_voters is not None:
        if not isinstance(raw_voters, list):
            raise StorageFormatError(f"expected an array, got {raw_voters!r}", what=what,
                                     path="currentVoters")
        items = []
        for index, item in enumerate(raw_voters):
            if not isinstance(item, dict):
                raise StorageFormatError(f"expected an object, got {item!r}", what=what,
                                         path=f"currentVoters[{index}]")
            items.append(_int_field(item, "voterId", version, what))
        voters = tuple(items)
    return QuorumState(0, leader_id, leader_epoch, voted_id, ZERO_UUID, cluster_id, applied_offset, voters)


def read_quorum_state(path: str | os.PathLike[str]) -> QuorumState:
    target = Path(path)
    try:
        text = target.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StorageFormatError(f"not UTF-8: {exc.reason}", what=str(target), offset=exc.start) from None
    return parse_quorum_state(text, what=str(target))


def write_quorum_state(path: str | os.PathLike[str], state: QuorumState) -> None:
    """Replace the file through ``quorum-state.tmp``, fsync and rename."""
    atomic_write(path, format_quorum_state(state).encode("utf-8"))
