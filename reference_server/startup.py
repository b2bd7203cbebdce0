"""What a KRaft controller checks and opens before it starts: log directories, the ``.lock`` file,
the metadata log, kraft.version and the bootstrap metadata.

The steps follow Kafka's start-up (``KafkaRaftServer.initializeLogDirs``,
``MetaPropertiesEnsemble.verify``, ``BootstrapDirectory.read``, ``KafkaRaftManager``,
``KafkaMetadataLog.apply``) and fail with Kafka's messages:

1. Every log directory (``log.dirs`` plus ``metadata.log.dir``, sorted) is loaded: a missing
   ``meta.properties`` makes it empty, an unreadable one makes it an error directory.
2. ``verify``: at least one ``meta.properties`` (``No readable meta.properties files found.``), cluster
   ids agree (``Invalid cluster.id in: ...``), stored node ids match ``node.id`` (``Stored node id ...
   doesn't match previous node id ...``), directory ids are not reserved and not repeated, the
   metadata directory is readable.
3. ``__cluster_metadata-0`` may exist only in the metadata directory.
4. Each directory must be formatted (``No `meta.properties` found in ...``) and name a node id and a
   cluster id; a directory without ``directory.id`` gets a new random one and its ``meta.properties``
   is rewritten, as Kafka does.
5. The bootstrap metadata gives metadata.version and the feature levels: the metadata records of the
   zero checkpoint, where Kafka 4.4's formatter writes them (KIP-1170), else ``bootstrap.checkpoint``
   (Kafka 4.3 and older), else the latest production metadata.version of the node's Kafka line alone;
   a level the line does not define refuses the start with the line's text (``kafka_line``).
6. ``<metadata dir>/.lock`` is locked (``Failed to acquire lock on file .lock in ...``).
7. The metadata log is opened (recovering a torn tail) and scanned for KRaftVersionRecord /
   VotersRecord: kraft.version 1 and the voter set come from there; without them the node runs at
   kraft.version 0 with ``controller.quorum.voters``, or as an observer that finds the quorum through
   ``controller.quorum.bootstrap.servers``.
8. ``quorum-state`` must be readable when it exists (``Error while reading the Quorum status from the
   file ...``).
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Final

from kafka_admin_kraft.config.server import (
    PROCESS_ROLES,
    QUORUM_BOOTSTRAP_SERVERS,
    QUORUM_VOTERS,
    ServerConfig,
)
from kafka_admin_kraft.features import METADATA_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    METADATA_PARTITION_DIR,
    ApiMessageAndVersion,
    RecordBatch,
    RecoveryResult,
    decode_control_batch,
)
from kafka_admin_kraft.records.snapshot import BOOTSTRAP_SNAPSHOT_ID
from kafka_admin_kraft.storage import (
    BootstrapMetadata,
    MetaProperties,
    StorageFormatError,
    read_bootstrap_checkpoint,
    read_meta_properties,
    read_zero_checkpoint_bootstrap,
    write_meta_properties,
)
from kafka_admin_kraft.storage.bootstrap import BOOTSTRAP_FILE, feature_level_record
from kafka_admin_kraft.storage.meta_properties import META_PROPERTIES_FILE

from . import settings
from .kafka_line import NEWEST, ServerLine
from .raft.api import (
    Bootstrap,
    Endpoint,
    NodeIdentity,
    RaftConfig,
    ReplicaKey,
    VoterInfo,
    VoterSet,
)
from .storage import FileQuorumStateStore, FileReplicatedLog

log = logging.getLogger(__name__)

LOCK_FILE: Final = ".lock"


class StartupError(RuntimeError):
    """The node must not start; the message is Kafka's."""


class DirectoryLockedError(StartupError):
    """Another process (or another log object in this one) holds the directory's ``.lock``."""


# --------------------------------------------------------------------------- the .lock file


class DirectoryLock:
    """An exclusive, non-blocking lock on ``<directory>/.lock``, held until :meth:`release`.

    ``flock`` excludes other holders in this and other processes; a POSIX record lock (``lockf``) is
    taken too, because that is what Java's ``FileChannel.tryLock`` uses, so a Kafka broker on the
    same directory is excluded as well.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILE
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise DirectoryLockedError(
                    f"Failed to acquire lock on file .lock in {self.directory}. A Kafka instance in another "
                    "process or thread is using this directory.") from None
            raise
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                fcntl.lockf(fd, fcntl.LOCK_UN)
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def lock_directory(directory: str | os.PathLike[str]) -> DirectoryLock:
    """Lock ``<directory>/.lock`` or raise :class:`DirectoryLockedError`."""
    return DirectoryLock(directory)


# --------------------------------------------------------------------------- meta.properties


@dataclass(frozen=True)
class LogDirsState:
    """The verified identity of the node's log directories."""

    cluster_id: str
    node_id: int
    metadata_dir: Path
    directory_id: Uuid
    """The metadata directory's directory.id."""
    meta_properties: dict[str, MetaProperties]
    """Per formatted directory (as configured), after any rewrite."""
    rewritten: tuple[str, ...] = ()
    """Directories whose meta.properties got a new directory.id."""
    failed_dirs: tuple[str, ...] = ()
    """Directories whose meta.properties could not be read (offline), never the metadata dir."""


def check_log_dirs(config: ServerConfig, *, rewrite: bool = True) -> LogDirsState:
    """Steps 1-4: load, verify and complete the ``meta.properties`` of every log directory.

    With ``rewrite`` false a missing directory.id is an error instead of being generated (for tools
    that must not write).
    """
    metadata_dir = config.metadata_log_dir
    empty: list[str] = []
    errors: list[str] = []
    props: dict[str, MetaProperties] = {}
    for directory in config.all_log_dirs:
        target = Path(directory) / META_PROPERTIES_FILE
        try:
            props[directory] = read_meta_properties(target)
        except (FileNotFoundError, NotADirectoryError):
            empty.append(directory)
        except Exception as exc:  # Kafka logs any failure and treats the directory as failed
            log.error("Error while reading meta.properties file %s: %s", target.absolute(), exc)
            errors.append(directory)

    # MetaPropertiesEnsemble.verify(Optional.empty(), OptionalInt.of(node.id), REQUIRE_AT_LEAST_ONE_VALID,
    # REQUIRE_METADATA_LOG_DIR)
    if not props:
        raise StartupError("No readable meta.properties files found.")
    expected_cluster: str | None = None
    expected_node = config.node_id
    seen: dict[Uuid, str] = {}
    for directory in sorted(props):
        meta = props[directory]
        path = os.path.join(directory, META_PROPERTIES_FILE)
        if meta.cluster_id is None:
            if meta.version == 1:
                raise StartupError(f"cluster.id was not specified in the v1 file: {path}")
        elif expected_cluster is None:
            expected_cluster = meta.cluster_id
        elif meta.cluster_id != expected_cluster:
            raise StartupError(f"Invalid cluster.id in: {path}. Expected {expected_cluster}, but read "
                               f"{meta.cluster_id}")
        if meta.node_id is None:
            if meta.version == 1:
                raise StartupError(f"node.id was not specified in {path}")
        elif meta.node_id != expected_node:
            raise StartupError(
                f"Stored node id {meta.node_id} doesn't match previous node id {expected_node} in {path}. If "
                "you moved your data, make sure your configured node id matches. If you intend to create a "
                "new node, you should remove all data in your data directories.")
        if meta.directory_id is not None:
            if meta.directory_id.is_reserved():
                raise StartupError(f"Invalid resrved directory ID {meta.directory_id} found in {directory}")
            previous = seen.get(meta.directory_id)
            if previous is not None:
                raise StartupError(f"Duplicate directory ID Optional[{meta.directory_id}] found. It was the "
                                   f"ID of {previous}, but also of {directory}")
            seen[meta.directory_id] = directory
    if metadata_dir in errors:
        raise StartupError(f"Encountered I/O error in metadata log directory {metadata_dir}. "
                           "Cannot continue.")

    # The metadata partition must not appear in any other directory.
    for directory in sorted(props):
        if directory != metadata_dir:
            stray = Path(directory) / METADATA_PARTITION_DIR
            if stray.exists():
                raise StartupError(f"Found unexpected metadata location in data directory `{stray}` (the "
                                   f"configured metadata directory is {metadata_dir}).")

    # Every non-failed directory must be formatted; give directory ids to those without.
    rewritten: list[str] = []
    for directory in sorted(empty):
        raise StartupError(f"No `meta.properties` found in {directory} (have you run `kafka-storage.sh` to "
                           "format the directory?)")
    for directory in sorted(props):
        meta = props[directory]
        if meta.node_id is None:
            raise StartupError(f"Error: node ID not found in {directory}")
        if meta.cluster_id is None:
            raise StartupError(f"Error: cluster ID not found in {directory}")
        if meta.directory_id is None:
            if not rewrite:
                raise StartupError(f"Error: directory ID not found in {directory}")
            new_id = _new_directory_id(seen)
            seen[new_id] = directory
            meta = MetaProperties(meta.version, meta.cluster_id, meta.node_id, new_id)
            log.info("Rewriting %s%smeta.properties", directory, os.sep)
            write_meta_properties(Path(directory) / META_PROPERTIES_FILE, meta)
            props[directory] = meta
            rewritten.append(directory)
    metadata_meta = props[metadata_dir]
    assert metadata_meta.cluster_id is not None and metadata_meta.directory_id is not None
    return LogDirsState(cluster_id=metadata_meta.cluster_id, node_id=config.node_id,
                        metadata_dir=Path(metadata_dir),
                        directory_id=metadata_meta.directory_id, meta_properties=props,
                        rewritten=tuple(rewritten), failed_dirs=tuple(sorted(errors)))


def _new_directory_id(taken: Iterable[Uuid]) -> Uuid:
    used = set(taken)
    while True:
        candidate = Uuid.random()
        if candidate not in used:
            return candidate


# --------------------------------------------------------------------------- bootstrap metadata


def read_bootstrap_metadata(metadata_dir: str | os.PathLike[str],
                            line: ServerLine = NEWEST) -> BootstrapMetadata:
    """The records the first active controller writes to an empty log, from a directory formatted by
    any Kafka line: the metadata records of the zero checkpoint (Kafka 4.4's formatter, KIP-1170: they
    win over a ``bootstrap.checkpoint``), else ``bootstrap.checkpoint`` (``BootstrapDirectory.read``),
    else the line's latest production metadata.version alone. The metadata.version level must be one
    the node's line knows (``MetadataVersion.fromFeatureLevel``)."""
    directory = Path(metadata_dir)
    if not directory.is_dir():
        if directory.exists():
            raise StartupError(f"Path {directory} exists, but is not a directory.")
        raise StartupError(f"No such directory as {directory}")
    target = directory / BOOTSTRAP_FILE
    zero = read_zero_checkpoint_bootstrap(directory)
    if zero is None and not target.exists():
        latest = line.features.latest_production_metadata_version
        return BootstrapMetadata([feature_level_record(METADATA_VERSION, latest)], latest)
    metadata = zero if zero is not None else read_bootstrap_checkpoint(target)
    problem = unknown_metadata_version(metadata.metadata_version, line)
    if problem is not None:
        raise StartupError(problem)
    return metadata


def unknown_metadata_version(level: int, line: ServerLine) -> str | None:
    """Kafka's refusal of a metadata.version level its line does not define, None for a known one.
    3.9 names the level alone; from 4.0 on the text gives the valid range (KAFKA-18601's
    ``MINIMUM_VERSION`` to ``latestTesting``)."""
    kafka = line.features
    if line.name == "3.9":
        known = kafka.is_known_metadata_version(level)
        return None if known else f"No MetadataVersion with feature level {level}"
    low, high = kafka.minimum_metadata_version, kafka.latest_testing_metadata_version
    if low <= level <= high:
        return None
    return f"No MetadataVersion with feature level {level}. Valid feature levels are from {low} to {high}."


def feature_levels(metadata: BootstrapMetadata) -> dict[str, int]:
    """The FeatureLevelRecords of bootstrap metadata as {name: level} (metadata.version included)."""
    levels: dict[str, int] = {}
    for record in metadata.records:
        message = record.message if isinstance(record, ApiMessageAndVersion) else None
        if isinstance(message, messages.FeatureLevelRecord):
            levels[message.name] = message.feature_level
    return levels


# --------------------------------------------------------------------------- kraft.version


@dataclass(frozen=True)
class ControlState:
    """What the control records of the latest snapshot and the log say about the quorum."""

    kraft_version: int = 0
    voters: VoterSet | None = None
    """The latest VotersRecord's voter set, None when there is none."""
    has_kraft_version_record: bool = False


def voter_set_of(record: messages.VotersRecord) -> VoterSet:
    voters: dict[int, VoterInfo] = {}
    for voter in record.voters:
        endpoints = tuple(Endpoint(item.name, item.host, item.port) for item in voter.endpoints)
        feature = voter.k_raft_version_feature
        voters[voter.voter_id] = VoterInfo(ReplicaKey(voter.voter_id, voter.voter_directory_id), endpoints,
                                           feature.min_supported_version, feature.max_supported_version)
    return VoterSet(voters)


def read_control_state(log: FileReplicatedLog) -> ControlState:
    """Replay the KRaftVersionRecord and VotersRecord control records of the latest snapshot, then
    of the log from the snapshot's end offset (only control batches are decoded)."""
    kraft_version = 0
    found = False
    voters: VoterSet | None = None

    def replay(batches: Iterable[RecordBatch], what: str) -> None:
        nonlocal kraft_version, found, voters
        for batch in batches:
            for control in decode_control_batch(batch, what=what):
                if isinstance(control.value, messages.KRaftVersionRecord):
                    kraft_version = control.value.k_raft_version
                    found = True
                elif isinstance(control.value, messages.VotersRecord):
                    voters = voter_set_of(control.value)

    snapshot = log.latest_snapshot()
    start = 0
    if snapshot is not None:
        replay(log.snapshot_control_batches(snapshot), str(log.snapshot_path(snapshot)))
        start = snapshot.end_offset
    replay(log.control_batches(start), str(log.path))
    return ControlState(kraft_version, voters, found)


# --------------------------------------------------------------------------- start-up


@dataclass
class StartupState:
    """Everything the runtime needs to start the raft core; owns the lock and the open log."""

    config: ServerConfig
    cluster_id: str
    node_id: int
    directory_id: Uuid
    metadata_dir: Path
    partition_dir: Path
    kraft_version: int
    """1 when the latest snapshot or the log holds a KRaftVersionRecord at 1, else 0."""
    voters: VoterSet | None
    """The voter set from the latest VotersRecord (kraft.version 1), None without one."""
    bootstrap: Bootstrap
    identity: NodeIdentity
    raft_config: RaftConfig
    bootstrap_metadata: BootstrapMetadata
    features: dict[str, int]
    """Bootstrap feature levels by name, metadata.version included."""
    log_empty: bool
    """No metadata (non-control) record in the log or in a snapshot other than the zero checkpoint
    (whose records are bootstrap metadata, not committed state): the first leader writes the bootstrap
    metadata."""
    log: FileReplicatedLog
    store: FileQuorumStateStore
    lock: DirectoryLock
    recovery: RecoveryResult | None = None
    rewritten_dirs: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)

    @property
    def metadata_version(self) -> int:
        return self.bootstrap_metadata.metadata_version

    def close(self) -> None:
        """Close the log cleanly and release the lock."""
        try:
            self.log.close()
        finally:
            self.lock.release()

    def __enter__(self) -> StartupState:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def start_storage(config: ServerConfig, line: ServerLine = NEWEST) -> StartupState:
    """Run every start-up check, lock the metadata directory and open the log and quorum-state.

    Raises :class:`StartupError` (Kafka's message) when the node must not start; the caller should
    print it and exit with status 1, as ``kafka-server-start`` does. ``line``: the Kafka line the node
    runs as, which decides the bootstrap levels it accepts and how it holds elections.
    """
    dirs = check_log_dirs(config)
    bootstrap_metadata = read_bootstrap_metadata(config.metadata_log_dir, line)
    lock = lock_directory(config.metadata_log_dir)
    try:
        log_ = FileReplicatedLog(config.metadata_log_dir, segment_bytes=config.metadata_log_segment_bytes)
        try:
            state = _finish(config, line, dirs, bootstrap_metadata, log_, lock)
        except BaseException:
            log_.close()
            raise
    except BaseException:
        lock.release()
        raise
    return state


def check_quorum_state(store: FileQuorumStateStore) -> None:
    """A ``quorum-state`` that cannot be read refuses the start, as Kafka's ``FileQuorumStateStore``
    does (``Error while reading the Quorum status from the file ...``); a missing one is fine."""
    try:
        store.read()
    except StorageFormatError as exc:  # the message starts with the file's path
        raise StartupError(f"Error while reading the Quorum status from the file {exc}") from None
    except OSError as exc:
        raise StartupError(f"Error while reading the Quorum status from the file {store.path}: "
                           f"{exc.strerror or exc}") from None


def _finish(config: ServerConfig, line: ServerLine, dirs: LogDirsState, bootstrap_metadata: BootstrapMetadata,
            log_: FileReplicatedLog, lock: DirectoryLock) -> StartupState:
    warnings: list[str] = []
    control = read_control_state(log_)
    kraft_version = control.kraft_version
    static_voters = settings.static_voter_set(config)
    if control.voters is None and static_voters is None and not config.quorum_bootstrap_servers:
        raise StartupError(f"If using {PROCESS_ROLES}, either {QUORUM_BOOTSTRAP_SERVERS} must contain the "
                           f"set of bootstrap controllers or {QUORUM_VOTERS} must contain a parseable set of "
                           "controllers.")
    if control.voters is not None and static_voters is not None:
        warnings.append(f"{QUORUM_VOTERS} is set but the metadata log holds a voter set (kraft.version "
                        f"{kraft_version}); the log's voter set is used")
    if control.voters is not None and dirs.node_id in control.voters.voters:
        voter = control.voters.voters[dirs.node_id]
        if not voter.key.directory_id.is_reserved() and voter.key.directory_id != dirs.directory_id:
            warnings.append(f"the voter set lists node {dirs.node_id} with directory id "
                            f"{voter.key.directory_id}, this directory is {dirs.directory_id}: the node "
                            "starts as an observer")
    for warning in warnings:
        log.warning("%s", warning)
    bootstrap = Bootstrap(static_voters=static_voters if control.voters is None else None,
                          bootstrap_servers=settings.bootstrap_servers(config))
    snapshot = log_.latest_snapshot()
    committed = None if snapshot == BOOTSTRAP_SNAPSHOT_ID else snapshot  # the zero checkpoint: bootstrap
    log_empty = not log_.has_data_batches() and not (
        committed is not None and log_.snapshot_has_data_batches(committed))
    store = FileQuorumStateStore(log_.path, kraft_version=kraft_version,
                                 voter_ids=[voter.node_id for voter in config.quorum_voters])
    check_quorum_state(store)
    return StartupState(
        config=config, cluster_id=dirs.cluster_id, node_id=dirs.node_id, directory_id=dirs.directory_id,
        metadata_dir=dirs.metadata_dir, partition_dir=log_.path, kraft_version=kraft_version,
        voters=control.voters, bootstrap=bootstrap,
        identity=settings.node_identity(config, dirs.cluster_id, dirs.directory_id),
        raft_config=settings.raft_config(config, line),
        bootstrap_metadata=bootstrap_metadata, features=feature_levels(bootstrap_metadata),
        log_empty=log_empty,
        log=log_, store=store, lock=lock, recovery=log_.recovery, rewritten_dirs=dirs.rewritten,
        warnings=warnings)
