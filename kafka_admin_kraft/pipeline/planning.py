"""Finding metadata log directories and cutting their files into splits.

Discovery walks the given paths. A directory holding ``meta.properties`` is a log directory: its
``bootstrap.checkpoint`` and, when present, its ``__cluster_metadata-0`` segments and snapshots are
read, with cluster id, node id and directory id from ``meta.properties`` and the election state from
``quorum-state``. A bare ``__cluster_metadata-0`` directory or a single file is read too, with the
ids left unknown.

Damaged node files. A log directory without ``meta.properties``, a ``meta.properties`` that Kafka
would refuse or that lacks the cluster id or the node id (KRaft always writes both), one whose
cluster id holds control characters (no Kafka tool writes one: it is damage), and a
``quorum-state`` that cannot be read are findings: each becomes a split that reads nothing and
yields one error row, so that they reach the ``errors`` table the way corrupt batches do. The ids
of a directory whose ``meta.properties`` is damaged stay unknown.

Splits. A file larger than ``split_bytes`` is cut into byte ranges whose starts are batch starts,
so that every batch is decoded by exactly one split: the split ``[start, end)`` decodes the batches
that *start* in that range, following the chain of batch lengths from ``start`` (the last one may
end beyond ``end``). Cut points come from the segment's ``.index`` (each entry names the position
of a batch); a point is used only after the batch header found there checks out (magic, length,
offsets, CRC). When the index is missing, short or wrong, and for snapshots, the planner walks the
12-byte batch prefixes of the file instead, which reads the file once but decodes nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from crc32c import crc32c

from kafka_admin_kraft.pipeline.schema import (
    INVALID_META_PROPERTIES,
    MISSING_META_PROPERTIES,
    UNREADABLE_QUORUM_STATE,
)
from kafka_admin_kraft.pipeline.text import has_control, one_line
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.records.batch import CRC_START, HEADER, LOG_OVERHEAD, MAGIC, MIN_BATCH_LENGTH, PREFIX
from kafka_admin_kraft.records.log_dir import METADATA_PARTITION_DIR
from kafka_admin_kraft.records.reader import DEFAULT_MAX_BATCH_SIZE
from kafka_admin_kraft.records.segment import parse_log_file_name, read_offset_index
from kafka_admin_kraft.records.snapshot import parse_snapshot_file_name

DEFAULT_SPLIT_BYTES: Final = 64 * 1024 * 1024
META_PROPERTIES: Final = "meta.properties"
BOOTSTRAP_CHECKPOINT: Final = "bootstrap.checkpoint"
QUORUM_STATE: Final = "quorum-state"
MAX_BATCH_LENGTH: Final = DEFAULT_MAX_BATCH_SIZE - LOG_OVERHEAD
_WALK_CHUNK: Final = 4 << 20
_CHECKPOINT_RE: Final = re.compile(r"^\d{20}-\d{10}\.checkpoint$")


@dataclass(frozen=True, slots=True)
class NodeFileProblem:
    """A ``meta.properties`` or ``quorum-state`` that is missing or damaged."""

    path: str
    file_kind: str
    """The file's name: meta.properties or quorum-state."""
    error_kind: str
    error: str
    """One line naming the file and what is wrong, control characters escaped."""


@dataclass(frozen=True, slots=True)
class LogDirInfo:
    """A metadata log directory: its ids and election state (None where unknown)."""

    path: str
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    partition_dir: str | None = None
    quorum_leader_id: int | None = None
    quorum_leader_epoch: int | None = None
    quorum_voted_id: int | None = None
    problems: tuple[NodeFileProblem, ...] = ()


@dataclass(frozen=True, slots=True)
class FileSplit:
    """One unit of reading: bytes ``[start, end)`` of one file (batches starting in that range)."""

    path: str
    kind: str
    start: int
    end: int
    file_size: int
    log_dir: str
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    newest_segment: bool = False
    """The newest segment of its directory: a torn tail there is what a crash leaves, not corruption."""
    snapshot_end_offset: int | None = None
    snapshot_epoch: int | None = None
    error_kind: str | None = None
    """Set for a damaged or missing node file: the split reads nothing and yields one error row."""
    error: str | None = None


@dataclass
class Plan:
    """What discovery found: log directories and the splits of their files."""

    log_dirs: list[LogDirInfo] = field(default_factory=list)
    splits: list[FileSplit] = field(default_factory=list)


def _meta_problem(cluster_id: str | None, node_id: int | None) -> str | None:
    """Why readable ``meta.properties`` content does not identify a KRaft log directory, None if it does."""
    if cluster_id is None or node_id is None:
        absent = " and ".join(key for key, value in (("cluster.id", cluster_id), ("node.id", node_id))
                              if value is None)
        return f"no {absent}, which the meta.properties of a KRaft log directory always has (version=1)"
    if has_control(cluster_id):
        return f"cluster.id {cluster_id!r} holds control characters, which no Kafka tool writes"
    return None


def _problem(path: Path, file_kind: str, error_kind: str, message: str) -> NodeFileProblem:
    return NodeFileProblem(str(path), file_kind, error_kind, one_line(message))


def _read_log_dir_info(path: Path) -> LogDirInfo:
    from kafka_admin_kraft.storage import read_meta_properties, read_quorum_state

    problems: list[NodeFileProblem] = []
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    meta_path = path / META_PROPERTIES
    partition = path / METADATA_PARTITION_DIR
    if not meta_path.is_file():
        problems.append(
            _problem(
                meta_path,
                META_PROPERTIES,
                MISSING_META_PROPERTIES,
                f"{meta_path}: missing, so this log directory's cluster id and node id are unknown (it was "
                "never formatted with kafka-storage format, or the file was lost)",
            )
        )
    else:
        try:
            meta = read_meta_properties(meta_path)
        except (OSError, DecodeError) as exc:  # a damaged file must not stop the audit of the others
            problems.append(_problem(meta_path, META_PROPERTIES, INVALID_META_PROPERTIES, str(exc)))
        else:
            reason = _meta_problem(meta.cluster_id, meta.node_id)
            if reason is None:
                cluster_id, node_id = meta.cluster_id, meta.node_id
                directory_id = None if meta.directory_id is None else str(meta.directory_id)
            else:
                problems.append(
                    _problem(meta_path, META_PROPERTIES, INVALID_META_PROPERTIES, f"{meta_path}: {reason}")
                )
    partition_dir = str(partition) if partition.is_dir() else None
    leader_id = leader_epoch = voted_id = None
    state_path = partition / QUORUM_STATE
    if state_path.is_file():
        try:
            state = read_quorum_state(state_path)
            leader_id, leader_epoch, voted_id = state.leader_id, state.leader_epoch, state.voted_id
        except (OSError, DecodeError) as exc:
            problems.append(_problem(state_path, QUORUM_STATE, UNREADABLE_QUORUM_STATE, str(exc)))
    return LogDirInfo(
        str(path),
        cluster_id,
        node_id,
        directory_id,
        partition_dir,
        leader_id,
        leader_epoch,
        voted_id,
        tuple(problems),
    )


def discover(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[LogDirInfo, list[Path]]]:
    """Log directories under ``paths`` and the files to read in each (bootstrap, snapshots, segments)."""
    found: dict[str, tuple[LogDirInfo, list[Path]]] = {}

    def add_dir(root: Path) -> None:
        key = str(root.resolve())
        if key in found:
            return
        if (root / META_PROPERTIES).is_file() or (root / METADATA_PARTITION_DIR).is_dir():
            info = _read_log_dir_info(root)
            files: list[Path] = []
            if (root / BOOTSTRAP_CHECKPOINT).is_file():
                files.append(root / BOOTSTRAP_CHECKPOINT)
            if info.partition_dir is not None:
                files.extend(_partition_files(Path(info.partition_dir)))
        else:  # a bare partition directory
            info = LogDirInfo(str(root), partition_dir=str(root))
            files = _partition_files(root)
        found[key] = (info, files)

    for item in paths:
        path = Path(item)
        if path.is_file():
            parent = path.parent
            root = parent.parent if parent.name == METADATA_PARTITION_DIR else parent
            info = _read_log_dir_info(root) if (root / META_PROPERTIES).is_file() else LogDirInfo(str(parent))
            key = str(path.resolve())
            found.setdefault(key, (info, [path]))
            continue
        if not path.is_dir():
            raise FileNotFoundError(f"{path}: no such file or directory")
        if path.name == METADATA_PARTITION_DIR and (path.parent / META_PROPERTIES).is_file():
            add_dir(path.parent)
            continue
        for current, dirs, names in os.walk(path):
            here = Path(current)
            bare = here.name == METADATA_PARTITION_DIR and not (here.parent / META_PROPERTIES).is_file()
            if META_PROPERTIES in names or METADATA_PARTITION_DIR in dirs or bare:
                add_dir(here)
            dirs[:] = sorted(d for d in dirs if d != METADATA_PARTITION_DIR)
    return [found[key] for key in sorted(found)]


def _partition_files(partition: Path) -> list[Path]:
    names = sorted(os.listdir(partition))
    snapshots = [partition / n for n in names if _CHECKPOINT_RE.match(n)]
    segments = [partition / n for n in names if parse_log_file_name(n) is not None]
    return snapshots + segments


def plan(paths: Iterable[str | os.PathLike[str]], *, split_bytes: int = DEFAULT_SPLIT_BYTES) -> Plan:
    """Discover the log directories under ``paths`` and split their files."""
    result = Plan()
    reported: set[str] = set()
    for info, files in discover(paths):
        result.log_dirs.append(info)
        for problem in info.problems:
            if problem.path not in reported:  # a file given next to its directory is reported once
                reported.add(problem.path)
                result.splits.append(_problem_split(problem, info))
        segments = [f for f in files if parse_log_file_name(f.name) is not None]
        newest = max(segments, key=lambda f: parse_log_file_name(f.name) or 0) if segments else None
        for path in files:
            result.splits.extend(
                split_file(path, info, split_bytes=split_bytes, newest_segment=path == newest)
            )
    return result


def _problem_split(problem: NodeFileProblem, info: LogDirInfo) -> FileSplit:
    """The split that reports a damaged or missing node file."""
    return FileSplit(
        problem.path,
        problem.file_kind,
        0,
        0,
        0,
        info.path,
        info.cluster_id,
        info.node_id,
        info.directory_id,
        error_kind=problem.error_kind,
        error=problem.error,
    )


def split_file(
    path: Path, info: LogDirInfo, *, split_bytes: int = DEFAULT_SPLIT_BYTES, newest_segment: bool = False
) -> list[FileSplit]:
    """The splits of one file; cut points only at verified batch starts."""
    size = path.stat().st_size
    base_offset = parse_log_file_name(path.name)
    snapshot = parse_snapshot_file_name(path.name)
    if base_offset is not None:
        kind = "segment"
    elif path.name == BOOTSTRAP_CHECKPOINT:
        kind = "bootstrap"
    else:
        kind = "snapshot"
    cuts: list[int] = [0]
    if size > split_bytes and split_bytes > 0:
        cuts = plan_cut_points(path, size, split_bytes, base_offset)
    bounds = [*cuts, size]
    return [
        FileSplit(
            str(path),
            kind,
            start,
            end,
            size,
            info.path,
            info.cluster_id,
            info.node_id,
            info.directory_id,
            newest_segment,
            snapshot.end_offset if snapshot else None,
            snapshot.epoch if snapshot else None,
        )
        for start, end in zip(bounds, bounds[1:], strict=False)
        if end > start or size == 0
    ]


def _batch_at(stream: int, position: int, size: int) -> tuple[int, int, int] | None:
    """(base offset, last offset, total size) of a whole, valid batch at ``position``, else None."""
    if position + HEADER.size > size:
        return None
    head = os.pread(stream, HEADER.size, position)
    if len(head) < HEADER.size:
        return None
    fields = HEADER.unpack_from(head, 0)
    base_offset, length, magic, last_delta = fields[0], fields[1], fields[3], fields[6]
    if magic != MAGIC or not MIN_BATCH_LENGTH <= length <= MAX_BATCH_LENGTH:
        return None
    total = LOG_OVERHEAD + length
    if position + total > size or last_delta < 0:
        return None
    data = os.pread(stream, total, position)
    if len(data) < total or crc32c(memoryview(data)[CRC_START:]) != fields[4]:
        return None
    return base_offset, base_offset + last_delta, total


def plan_cut_points(path: Path, size: int, split_bytes: int, base_offset: int | None) -> list[int]:
    """Batch starts near every ``split_bytes`` of the file, from the offset index when it can be
    trusted, else from walking the batch prefixes. Always begins with 0."""
    targets = list(range(split_bytes, size, split_bytes))
    if base_offset is not None:
        cuts = _cuts_from_index(path, size, base_offset, targets)
        if cuts is not None:
            return cuts
    return _cuts_from_prefixes(path, size, targets)


def _cuts_from_index(path: Path, size: int, base_offset: int, targets: Sequence[int]) -> list[int] | None:
    index_path = path.with_suffix(".index")
    if not index_path.is_file():
        return None
    try:
        entries = read_offset_index(index_path)
    except Exception:
        return None
    positions: list[tuple[int, int]] = []
    last = -1
    for relative, position in entries:
        if position <= last or position >= size:
            break  # preallocated zero entries, or an index longer than its log
        positions.append((position, base_offset + relative))
        last = position
    cuts = [0]
    fd = os.open(path, os.O_RDONLY)
    try:
        cursor = 0
        for target in targets:
            while cursor < len(positions) and positions[cursor][0] < target:
                cursor += 1
            if cursor == len(positions):
                # the index stops early (e.g. not flushed): walk prefixes for the rest
                return (
                    None
                    if len(cuts) == 1
                    else cuts
                    + _cuts_from_prefixes(path, size, [t for t in targets if t >= target], start=cuts[-1])[1:]
                )
            position, offset = positions[cursor]
            if position <= cuts[-1]:
                continue
            batch = _batch_at(fd, position, size)
            if batch is None or not batch[0] <= offset <= batch[1]:
                return None
            cuts.append(position)
    finally:
        os.close(fd)
    return cuts


def _iter_prefixes(path: Path, start: int) -> Iterator[int]:
    """Positions of the batches of ``path`` from ``start``, following lengths; stops at anything odd."""
    with open(path, "rb") as stream:
        stream.seek(start)
        buf = b""
        pos = 0
        file_pos = start
        while True:
            if len(buf) - pos < LOG_OVERHEAD:
                buf = buf[pos:] + stream.read(_WALK_CHUNK)
                pos = 0
                if len(buf) < LOG_OVERHEAD:
                    return
            length = PREFIX.unpack_from(buf, pos)[1]
            if not MIN_BATCH_LENGTH <= length <= MAX_BATCH_LENGTH:
                return
            yield file_pos
            step = LOG_OVERHEAD + length
            file_pos += step
            pos += step
            if pos > len(buf):
                stream.seek(file_pos)
                buf = b""
                pos = 0


def _cuts_from_prefixes(path: Path, size: int, targets: Sequence[int], start: int = 0) -> list[int]:
    cuts = [start]
    pending = [t for t in targets if t > start]
    index = 0
    fd = os.open(path, os.O_RDONLY)
    try:
        for position in _iter_prefixes(path, start):
            if index >= len(pending):
                break
            if position >= pending[index]:
                if position > cuts[-1] and _batch_at(fd, position, size) is not None:
                    cuts.append(position)
                while index < len(pending) and pending[index] <= position:
                    index += 1
    finally:
        os.close(fd)
    return cuts
