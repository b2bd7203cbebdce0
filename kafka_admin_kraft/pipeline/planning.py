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
of a directory whose ``meta.properties`` is damaged stay unknown. So does a segment, snapshot or
bootstrap file that is no regular file this process can read (a directory, a named pipe, which
would block the reader for ever, a broken symbolic link...): an ``unreadable_file`` row.

Splits. A file larger than ``split_bytes`` is cut into byte ranges whose starts are batch starts,
so that every batch is decoded by exactly one split: the split ``[start, end)`` decodes the batches
that *start* in that range, following the chain of batch lengths from ``start`` (the last one may
end beyond ``end``). Cut points come from the segment's ``.index`` (each entry names the position
of a batch); a point is used only after the batch header found there checks out (magic, length,
offsets, CRC). When the index is missing, short or wrong, and for snapshots, the planner walks the
12-byte batch prefixes of the file instead, which reads the file once but decodes nothing.

Paths may be URIs (``s3://``, ``gs://``, ``hdfs://``, ``file://``): every look at a file system goes
through :mod:`~kafka_admin_kraft.pipeline.storage`, which lists an object store's prefixes once and
reads byte ranges; local paths are read as before.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from kafka_admin_kraft.config.properties import parse_properties
from kafka_admin_kraft.pipeline.schema import (
    INVALID_META_PROPERTIES,
    MISSING_META_PROPERTIES,
    UNREADABLE_FILE,
    UNREADABLE_QUORUM_STATE,
)
from kafka_admin_kraft.pipeline.storage import (
    DIRECTORY,
    FILE,
    NO_OPTIONS,
    RandomInput,
    StorageOptions,
    StorageView,
    base_name,
    identity,
    join,
    normalize,
    open_input,
    parent,
)
from kafka_admin_kraft.pipeline.text import has_control, one_line
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.records.batch import CRC_START, HEADER, LOG_OVERHEAD, MAGIC, MIN_BATCH_LENGTH, PREFIX
from kafka_admin_kraft.records.crc import crc32c
from kafka_admin_kraft.records.log_dir import METADATA_PARTITION_DIR
from kafka_admin_kraft.records.reader import DEFAULT_MAX_BATCH_SIZE
from kafka_admin_kraft.records.segment import INDEX_SUFFIX, LOG_SUFFIX, OFFSET_ENTRY, parse_log_file_name
from kafka_admin_kraft.records.snapshot import parse_snapshot_file_name

if TYPE_CHECKING:
    from kafka_admin_kraft.storage import MetaProperties, QuorumState

DEFAULT_SPLIT_BYTES: Final = 64 * 1024 * 1024
META_PROPERTIES: Final = "meta.properties"
BOOTSTRAP_CHECKPOINT: Final = "bootstrap.checkpoint"
QUORUM_STATE: Final = "quorum-state"
MAX_BATCH_LENGTH: Final = DEFAULT_MAX_BATCH_SIZE - LOG_OVERHEAD
_WALK_CHUNK: Final = 4 << 20
_CHECKPOINT_RE: Final = re.compile(r"^\d{20}-\d{10}\.checkpoint$")


@dataclass(frozen=True, slots=True)
class NodeFileProblem:
    """A ``meta.properties`` or ``quorum-state`` that is missing or damaged, or a segment, snapshot or
    bootstrap file that cannot be read."""

    path: str
    file_kind: str
    """The file's name (meta.properties or quorum-state), or segment, snapshot or bootstrap."""
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


def _problem(path: str, file_kind: str, error_kind: str, message: str) -> NodeFileProblem:
    return NodeFileProblem(path, file_kind, error_kind, one_line(message))


def _read_meta_properties(view: StorageView, path: str) -> MetaProperties:
    """``read_meta_properties`` on bytes from any file system: ISO-8859-1, as Kafka loads it."""
    from kafka_admin_kraft.storage.errors import StorageFormatError
    from kafka_admin_kraft.storage.meta_properties import meta_properties_from

    try:
        props = parse_properties(view.read_bytes(path).decode("iso-8859-1"))
    except ValueError as exc:
        raise StorageFormatError(str(exc), what=path) from None
    return meta_properties_from(props, what=path)


def _read_quorum_state(view: StorageView, path: str) -> QuorumState:
    """``read_quorum_state`` on bytes from any file system."""
    from kafka_admin_kraft.storage.errors import StorageFormatError
    from kafka_admin_kraft.storage.quorum_state import parse_quorum_state

    try:
        text = view.read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StorageFormatError(f"not UTF-8: {exc.reason}", what=path, offset=exc.start) from None
    return parse_quorum_state(text, what=path)


def _read_log_dir_info(view: StorageView, path: str) -> LogDirInfo:
    problems: list[NodeFileProblem] = []
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    meta_path = join(path, META_PROPERTIES)
    partition = join(path, METADATA_PARTITION_DIR)
    if view.kind(meta_path) != FILE and view.exists(meta_path):
        problems.append(
            _problem(meta_path, META_PROPERTIES, INVALID_META_PROPERTIES, _not_readable(view, meta_path))
        )
    elif view.kind(meta_path) != FILE:
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
            meta = _read_meta_properties(view, meta_path)
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
    partition_dir = partition if view.kind(partition) == DIRECTORY else None
    leader_id = leader_epoch = voted_id = None
    state_path = join(partition, QUORUM_STATE)
    if view.kind(state_path) == FILE:
        try:
            state = _read_quorum_state(view, state_path)
            leader_id, leader_epoch, voted_id = state.leader_id, state.leader_epoch, state.voted_id
        except (OSError, DecodeError) as exc:
            problems.append(_problem(state_path, QUORUM_STATE, UNREADABLE_QUORUM_STATE, str(exc)))
    elif view.exists(state_path):
        problems.append(
            _problem(state_path, QUORUM_STATE, UNREADABLE_QUORUM_STATE, _not_readable(view, state_path))
        )
    return LogDirInfo(
        path,
        cluster_id,
        node_id,
        directory_id,
        partition_dir,
        leader_id,
        leader_epoch,
        voted_id,
        tuple(problems),
    )


def discover(
    paths: Iterable[str | os.PathLike[str]], options: StorageOptions = NO_OPTIONS
) -> list[tuple[LogDirInfo, list[str]]]:
    """Log directories under ``paths`` and the files to read in each (bootstrap, snapshots, segments)."""
    return _discover(StorageView(options), paths)


def _discover(
    view: StorageView, paths: Iterable[str | os.PathLike[str]]
) -> list[tuple[LogDirInfo, list[str]]]:
    found: dict[str, tuple[LogDirInfo, list[str]]] = {}

    def add_dir(root: str) -> None:
        key = identity(root)
        if key in found:
            return
        if view.exists(join(root, META_PROPERTIES)) or (
            view.kind(join(root, METADATA_PARTITION_DIR)) == DIRECTORY
        ):
            info = _read_log_dir_info(view, root)
            files: list[str] = []
            if view.exists(join(root, BOOTSTRAP_CHECKPOINT)):
                files.append(join(root, BOOTSTRAP_CHECKPOINT))
            if info.partition_dir is not None:
                files.extend(_partition_files(view, info.partition_dir))
        else:  # a bare partition directory
            info = LogDirInfo(root, partition_dir=root)
            files = _partition_files(view, root)
        found[key] = (info, files)

    for item in paths:
        path = normalize(os.fspath(item))
        kind = view.kind(path)
        if kind != DIRECTORY and view.exists(path):  # a file, or something in its place
            folder = parent(path)
            root = parent(folder) if base_name(folder) == METADATA_PARTITION_DIR else folder
            formatted = view.exists(join(root, META_PROPERTIES))
            info = _read_log_dir_info(view, root) if formatted else LogDirInfo(folder)
            found.setdefault(identity(path), (info, [path]))
            continue
        if kind != DIRECTORY:
            raise FileNotFoundError(f"{path}: no such file or directory")
        holder = parent(path)
        if base_name(path) == METADATA_PARTITION_DIR and view.exists(join(holder, META_PROPERTIES)):
            add_dir(holder)
            continue
        for here, dirs, names in view.walk(path):
            bare = base_name(here) == METADATA_PARTITION_DIR and not view.exists(
                join(parent(here), META_PROPERTIES)
            )
            if META_PROPERTIES in names or METADATA_PARTITION_DIR in dirs or bare:
                add_dir(here)
            dirs[:] = sorted(d for d in dirs if d != METADATA_PARTITION_DIR)
    return [found[key] for key in sorted(found)]


def _partition_files(view: StorageView, partition: str) -> list[str]:
    names = sorted(view.names(partition))
    snapshots = [join(partition, n) for n in names if _CHECKPOINT_RE.match(n)]
    segments = [join(partition, n) for n in names if parse_log_file_name(n) is not None]
    return snapshots + segments


def plan(
    paths: Iterable[str | os.PathLike[str]],
    *,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    options: StorageOptions = NO_OPTIONS,
) -> Plan:
    """Discover the log directories under ``paths`` and split their files."""
    view = StorageView(options)
    result = Plan()
    reported: set[str] = set()
    for info, files in _discover(view, paths):
        result.log_dirs.append(info)
        for problem in info.problems:
            if problem.path not in reported:  # a file given next to its directory is reported once
                reported.add(problem.path)
                result.splits.append(_problem_split(problem, info))
        segments = [f for f in files if parse_log_file_name(base_name(f)) is not None]
        newest = max(segments, key=lambda f: parse_log_file_name(base_name(f)) or 0) if segments else None
        for path in files:
            result.splits.extend(_split_file(view, path, info, split_bytes, path == newest))
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
    path: str | os.PathLike[str],
    info: LogDirInfo,
    *,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    newest_segment: bool = False,
    options: StorageOptions = NO_OPTIONS,
) -> list[FileSplit]:
    """The splits of one file; cut points only at verified batch starts."""
    return _split_file(StorageView(options), normalize(os.fspath(path)), info, split_bytes, newest_segment)


def _not_readable(view: StorageView, path: str) -> str:
    """Why the audit does not read ``path`` (see ``StorageView.not_readable``)."""
    return f"{path}: cannot be read: it is {view.not_readable(path)}; the audit reads regular files only"


def _split_file(
    view: StorageView, path: str, info: LogDirInfo, split_bytes: int, newest_segment: bool
) -> list[FileSplit]:
    name = base_name(path)
    base_offset = parse_log_file_name(name)
    snapshot = parse_snapshot_file_name(name)
    if base_offset is not None:
        kind = "segment"
    elif name == BOOTSTRAP_CHECKPOINT:
        kind = "bootstrap"
    else:
        kind = "snapshot"
    if view.not_readable(path) is not None:
        problem = _problem(path, kind, UNREADABLE_FILE, _not_readable(view, path))
        return [_problem_split(problem, info)]
    size = view.size(path)
    cuts: list[int] = [0]
    if size > split_bytes and split_bytes > 0:
        cuts = plan_cut_points(view, path, size, split_bytes, base_offset)
    bounds = [*cuts, size]
    return [
        FileSplit(
            path,
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


def _batch_at(source: RandomInput, position: int, size: int) -> tuple[int, int, int] | None:
    """(base offset, last offset, total size) of a whole, valid batch at ``position``, else None."""
    if position + HEADER.size > size:
        return None
    head = source.read_at(position, HEADER.size)
    if len(head) < HEADER.size:
        return None
    fields = HEADER.unpack_from(head, 0)
    base_offset, length, magic, last_delta = fields[0], fields[1], fields[3], fields[6]
    if magic != MAGIC or not MIN_BATCH_LENGTH <= length <= MAX_BATCH_LENGTH:
        return None
    total = LOG_OVERHEAD + length
    if position + total > size or last_delta < 0:
        return None
    data = source.read_at(position, total)
    if len(data) < total or crc32c(memoryview(data)[CRC_START:]) != fields[4]:
        return None
    return base_offset, base_offset + last_delta, total


def plan_cut_points(
    view: StorageView, path: str, size: int, split_bytes: int, base_offset: int | None
) -> list[int]:
    """Batch starts near every ``split_bytes`` of the file, from the offset index when it can be
    trusted, else from walking the batch prefixes. Always begins with 0."""
    targets = list(range(split_bytes, size, split_bytes))
    with open_input(path, view.options) as source:
        if base_offset is not None:
            cuts = _cuts_from_index(view, source, path, size, base_offset, targets)
            if cuts is not None:
                return cuts
        return _cuts_from_prefixes(source, size, targets)


def _offset_index(view: StorageView, log_path: str) -> list[tuple[int, int]] | None:
    """(relative offset, position) entries of the segment's ``.index``, None when it is missing or
    not a whole number of entries."""
    index_path = log_path[: -len(LOG_SUFFIX)] + INDEX_SUFFIX
    if view.kind(index_path) != FILE:
        return None
    try:
        data = view.read_bytes(index_path)
    except OSError:
        return None
    if len(data) % OFFSET_ENTRY.size:
        return None
    return list(OFFSET_ENTRY.iter_unpack(data))


def _cuts_from_index(
    view: StorageView, source: RandomInput, path: str, size: int, base_offset: int, targets: Sequence[int]
) -> list[int] | None:
    entries = _offset_index(view, path)
    if entries is None:
        return None
    positions: list[tuple[int, int]] = []
    last = -1
    for relative, position in entries:
        if position <= last or position >= size:
            break  # preallocated zero entries, or an index longer than its log
        positions.append((position, base_offset + relative))
        last = position
    cuts = [0]
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
                + _cuts_from_prefixes(source, size, [t for t in targets if t >= target], start=cuts[-1])[1:]
            )
        position, offset = positions[cursor]
        if position <= cuts[-1]:
            continue
        batch = _batch_at(source, position, size)
        if batch is None or not batch[0] <= offset <= batch[1]:
            return None
        cuts.append(position)
    return cuts


def _iter_prefixes(source: RandomInput, start: int) -> Iterator[int]:
    """Positions of the batches from ``start``, following lengths; stops at anything odd."""
    buf = b""
    pos = 0
    file_pos = start
    read_pos = start
    while True:
        if len(buf) - pos < LOG_OVERHEAD:
            chunk = source.read_at(read_pos, _WALK_CHUNK)
            read_pos += len(chunk)
            buf = buf[pos:] + chunk
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
            read_pos = file_pos
            buf = b""
            pos = 0


def _cuts_from_prefixes(source: RandomInput, size: int, targets: Sequence[int], start: int = 0) -> list[int]:
    cuts = [start]
    pending = [t for t in targets if t > start]
    index = 0
    for position in _iter_prefixes(source, start):
        if index >= len(pending):
            break
        if position >= pending[index]:
            if position > cuts[-1] and _batch_at(source, position, size) is not None:
                cuts.append(position)
            while index < len(pending) and pending[index] <= position:
                index += 1
    return cuts
