"""The contract between the consensus core and what drives it.

The core (``kafka_admin_kraft_server.raft.core.RaftCore``) is a deterministic state machine: it owns no
sockets, threads, clocks or randomness. The driver (the asyncio runtime in a server process, or the
seeded simulator in tests) gives it requests, responses and the current time, and takes from
``poll`` the requests to send and the responses to deliver. The core reads and writes the metadata
log through ``ReplicatedLog`` and its election state through ``QuorumStateStore``; the server backs
both with files in Kafka's format, the simulator with memory.

Messages are the generated Kafka messages (``kafka_admin_kraft.protocol.messages``), built for the
newest version; the driver encodes them at the version negotiated with the peer.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.records import MetadataRecord, RecordBatch, SnapshotId
from kafka_admin_kraft.storage import QuorumState


@dataclass(frozen=True, order=True)
class ReplicaKey:
    """A replica: its node id and the directory id of its metadata log (ZERO_UUID when unknown)."""

    id: int
    directory_id: Uuid = ZERO_UUID

    def __str__(self) -> str:
        directory = "<undefined>" if self.directory_id == ZERO_UUID else str(self.directory_id)
        return f"ReplicaKey(id={self.id}, directoryId={directory})"


@dataclass(frozen=True)
class Endpoint:
    """A listener of a controller: name (``CONTROLLER``), host and port."""

    name: str
    host: str
    port: int


@dataclass(frozen=True)
class VoterInfo:
    """One voter: its key, its listeners and the kraft.version range it supports."""

    key: ReplicaKey
    endpoints: tuple[Endpoint, ...]
    min_kraft_version: int = 0
    max_kraft_version: int = 0


def majority(voter_count: int) -> int:
    """How many of ``voter_count`` voters elect a leader or commit an offset: more than half."""
    return voter_count // 2 + 1


@dataclass(frozen=True)
class VoterSet:
    """An immutable voter set, keyed by voter id."""

    voters: Mapping[int, VoterInfo]

    def ids(self) -> frozenset[int]:
        return frozenset(self.voters)

    def is_voter(self, key: ReplicaKey) -> bool:
        """True for a voter id whose directory id matches, or is unknown on either side."""
        voter = self.voters.get(key.id)
        if voter is None:
            return False
        known = voter.key.directory_id
        return ZERO_UUID in (known, key.directory_id) or known == key.directory_id

    def majority(self) -> int:
        return majority(len(self.voters))


@dataclass(frozen=True)
class Address:
    """Where a request goes: a node's endpoint, or a bootstrap server whose node id is unknown."""

    host: str
    port: int
    node_id: int | None = None


class SnapshotWriter(Protocol):
    """A snapshot being written: batches go to a ``.part`` file (or its stand-in) as they come, and
    nothing is visible under the snapshot's id until ``freeze``.

    ``ReplicatedLog.create_snapshot`` gives one for a snapshot the core generates from its image;
    ``ReplicatedLog.receive_snapshot`` one for a snapshot copied from the leader with FetchSnapshot,
    whose chunks are appended as they arrive (checked as they come: CRCs, whole batches, header
    first) and whose ``freeze`` also installs it.
    """

    @property
    def snapshot_id(self) -> SnapshotId:
        ...

    @property
    def size(self) -> int:
        """Bytes appended so far."""
        ...

    def append(self, data: RecordBatch | bytes) -> None:
        """Append a batch, or raw bytes (any slice of a snapshot file for a received snapshot).
        Raises CorruptRecordError when received bytes are not a valid snapshot."""
        ...

    def freeze(self) -> None:
        """Make the snapshot durable under its id (created: the log keeps its records; received:
        the log restarts at the snapshot's end offset, every record and older snapshot is dropped).
        Raises CorruptRecordError (and aborts) when a received snapshot is incomplete."""
        ...

    def abort(self) -> None:
        """Drop the unfinished snapshot (no effect after ``freeze``)."""
        ...


class ReplicatedLog(Protocol):
    """The ``__cluster_metadata`` partition: log segments plus snapshots.

    Offsets are Kafka's: ``end_offset`` is the next offset to be written; a snapshot with id
    (end offset E, epoch P) holds everything below E. Appends must be durable after ``flush``.
    """

    def start_offset(self) -> int:
        """First offset still in the log (the latest snapshot's end offset, or 0)."""
        ...

    def end_offset(self) -> int:
        """Offset the next appended record gets (Kafka's log end offset)."""
        ...

    def flushed_offset(self) -> int:
        """Offsets below this are on disk (fsync'ed)."""
        ...

    def last_epoch(self) -> int:
        """Epoch of the last batch, or of the latest snapshot when the log is empty, or 0."""
        ...

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch <= ``epoch`` in the log, the end offset of that epoch), as Kafka's leader
        epoch cache answers; (snapshot epoch, snapshot end offset) below the log start."""
        ...

    def append(self, batch: RecordBatch) -> None:
        """Append a batch whose base offset equals ``end_offset()`` (leader writes)."""
        ...

    def append_bytes(self, data: bytes) -> int:
        """Append whole batches received from the leader (validated: CRC, contiguous offsets,
        non-decreasing epochs); return the new end offset. Raises CorruptRecordError."""
        ...

    def read(self, start_offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one containing ``start_offset``, at least one batch even if larger
        than ``max_bytes``; empty at the end of the log."""
        ...

    def batches(self, start_offset: int) -> Iterator[RecordBatch]:
        """Decoded batches from ``start_offset`` on (used to apply control records)."""
        ...

    def truncate_to(self, offset: int) -> None:
        """Remove every record at or above ``offset`` (follower divergence)."""
        ...

    def flush(self) -> None:
        """Make everything appended durable."""
        ...

    def latest_snapshot(self) -> SnapshotId | None:
        ...

    def read_snapshot(self, snapshot_id: SnapshotId, position: int, max_bytes: int) -> bytes:
        """A chunk of a frozen snapshot file."""
        ...

    def snapshot_size(self, snapshot_id: SnapshotId) -> int:
        ...

    def snapshot_batches(self, snapshot_id: SnapshotId) -> Iterator[RecordBatch]:
        ...

    def create_snapshot(self, snapshot_id: SnapshotId) -> SnapshotWriter | None:
        """Start writing a snapshot the core generates (``KafkaMetadataLog.createNewSnapshot``):
        None when it exists already or lies below the log start; ValueError when the id is beyond
        the log end or its epoch is not the log's epoch at that offset."""
        ...

    def receive_snapshot(self, snapshot_id: SnapshotId) -> SnapshotWriter:
        """Start copying a snapshot from the leader; its ``freeze`` installs it, as a follower does
        after FetchSnapshot. ValueError when it is older than the latest snapshot."""
        ...

    def delete_before_snapshot(self) -> None:
        """Drop log segments and older snapshots wholly below the latest snapshot (retention)."""
        ...


class QuorumStateStore(Protocol):
    """The ``quorum-state`` file: written atomically before any vote or leadership is acted on."""

    def read(self) -> QuorumState | None:
        ...

    def write(self, state: QuorumState) -> None:
        ...


@dataclass(frozen=True)
class RaftConfig:
    """``controller.quorum.*`` settings, with Kafka's defaults."""

    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    request_timeout_ms: int = 2000
    retry_backoff_ms: int = 20
    append_linger_ms: int = 25
    fetch_max_wait_ms: int = 500
    max_fetch_bytes: int = 8 * 1024 * 1024
    snapshot_interval_bytes: int = 20 * 1024 * 1024
    """Take a snapshot when this many bytes were appended since the last one (Kafka's
    ``metadata.log.max.record.bytes.between.snapshots``)."""
    apply_budget_bytes: int = 2 * 1024 * 1024
    """Most bytes of batches one ``poll`` reads to apply committed batches to the image, load a
    snapshot into it, or write a snapshot out (at least one batch); the rest waits for the next poll,
    which is due at once, so replies and sends keep flowing on a large log."""
    observer_session_timeout_ms: int = 300_000
    auto_join_enable: bool = False
    """``controller.quorum.auto.join.enable``: an observer controller adds itself to the voter set
    (removing an older directory id of its node id first)."""
    pre_vote: bool = True
    """Whether an election starts with a KIP-996 pre-vote round (Prospective), as from Kafka 4.0 on;
    off, the election timer starts a standard election at once (Candidate, epoch + 1), as Kafka 3.9
    does."""
    update_voter_at_kraft_version_0: bool = True
    """Whether UpdateRaftVoter also works at kraft.version 0, as from Kafka 4.1 on (KAFKA-16538): a
    voter of a static quorum reports its kraft.version range to the leader, which keeps it for the
    kraft.version upgrade. Off, as in Kafka 3.9 and 4.0, a voter sends it only at kraft.version 1 and
    a leader answers it UNSUPPORTED_VERSION at 0."""


@dataclass(frozen=True)
class NodeIdentity:
    """Who this replica is and where it listens."""

    node_id: int
    directory_id: Uuid
    cluster_id: str
    listeners: tuple[Endpoint, ...]
    """This node's controller listeners, the default (first ``controller.listener.names``) first."""
    is_controller: bool = True


@dataclass(frozen=True)
class Bootstrap:
    """Where the voter set comes from at start-up.

    kraft.version 1: the voter set is read from the log and snapshots (bootstrap snapshot written by
    ``kafka-storage format``); ``static_voters`` is empty. kraft.version 0: ``static_voters`` from
    ``controller.quorum.voters`` (no directory ids). ``bootstrap_servers`` from
    ``controller.quorum.bootstrap.servers`` let a replica that knows no voter find the leader.
    """

    static_voters: VoterSet | None = None
    bootstrap_servers: tuple[Address, ...] = ()


@dataclass(frozen=True)
class InboundRequest:
    """A request a client or peer sent us; ``request_id`` is the driver's token for the reply."""

    request_id: int
    api_key: int
    api_version: int
    body: Struct
    listener: str = ""


@dataclass(frozen=True)
class OutboundRequest:
    """A request the core wants sent; its answer comes back through ``handle_response`` with the
    same ``request_id`` (or ``None`` when the send failed or timed out)."""

    request_id: int
    destination: Address
    api_key: int
    body: Struct


@dataclass(frozen=True)
class Reply:
    """A response for an ``InboundRequest``."""

    request_id: int
    body: Struct


@dataclass
class PollResult:
    """What the driver must do now, and when to call ``poll`` again at the latest."""

    sends: list[OutboundRequest] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    next_poll_ms: int = 0
    committed_offset: int = -1
    """The high watermark after this poll (-1 while unknown)."""


@dataclass(frozen=True)
class CommittedFeatures:
    """What the committed metadata image says about features (ApiVersions, controller activation)."""

    levels: Mapping[str, int]
    """Finalized features whose level is not 0, kraft.version included when it is 1 or more."""
    highest_offset: int
    """Offset of the last record applied to the image, -1 before any (FinalizedFeaturesEpoch)."""
    metadata_version: int | None
    """The committed metadata.version, None when none was ever committed."""
    transaction_start_offset: int = -1
    """Offset of a committed BeginTransactionRecord without its End/Abort yet, -1 when none."""


class RaftDriverFacing(Protocol):
    """The core's surface; ``kafka_admin_kraft_server.raft.core.RaftCore`` implements it.

    Construction: ``RaftCore(identity, config, bootstrap, log, store, rng, now_ms)``.
    """

    def handle_request(self, request: InboundRequest, now_ms: int) -> None:
        """Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot, DescribeQuorum, AddRaftVoter,
        RemoveRaftVoter and UpdateRaftVoter; the reply comes out of ``poll`` (Fetch may wait up to its
        MaxWaitMs for new data, AddRaftVoter / RemoveRaftVoter until their VotersRecord commits)."""
        ...

    def handle_response(self, request_id: int, body: Struct | None, now_ms: int) -> None:
        ...

    def poll(self, now_ms: int) -> PollResult:
        ...

    def append(self, batch_records: Sequence[Struct | MetadataRecord], now_ms: int) -> int:
        """Leader only: append metadata records (generated record messages) in one batch of the
        current epoch; return the offset of the last one. Raises NotLeaderError otherwise."""
        ...

    def snapshot(self, now_ms: int) -> SnapshotId | None:
        """Take a snapshot at the high watermark now (on demand); None if there is nothing new."""
        ...

    def upgrade_kraft_version(self, now_ms: int) -> int:
        """Leader only: kraft.version 0 -> 1 (static quorum to dynamic). Appends ONE control batch with
        KRaftVersionRecord(1) and a VotersRecord of the current voters (endpoints, directory ids and
        kraft.version ranges as learnt from their UpdateRaftVoter, else the static ones and ZERO);
        returns its last offset, or -1 when kraft.version is already 1 or more (nothing appended).
        Raises NotLeaderError when not the leader, and KRaftUpgradeError naming the voters that have
        not reported support for kraft.version 1. (A downgrade is the caller's to refuse.)"""
        ...

    def resign(self, now_ms: int) -> None:
        """Graceful shutdown: a leader hands over with EndQuorumEpoch; no node starts elections."""
        ...

    @property
    def is_leader(self) -> bool:
        """True while this node leads its epoch (a resigned leader still reports itself as leader_id)."""
        ...

    @property
    def leader_id(self) -> int:
        ...

    @property
    def epoch(self) -> int:
        ...

    @property
    def high_watermark(self) -> int:
        ...

    @property
    def voters(self) -> VoterSet:
        ...

    @property
    def applied_offset(self) -> int:
        """Every committed record below this offset has been applied to the metadata image (the
        image catches up with the high watermark a bounded amount per poll)."""
        ...

    def committed_features(self) -> CommittedFeatures:
        """The features of the committed metadata image, as of ``applied_offset``."""
        ...

    def registered_brokers(self) -> list[messages.RegisterBrokerRecord]:
        """The broker registrations of the committed metadata image (Fenced as it stands), by id."""
        ...

    def registered_controllers(self) -> list[messages.RegisterControllerRecord]:
        """The latest controller registration (KIP-919) per id in the committed metadata image."""
        ...

    def acls(self) -> Mapping[Uuid, messages.AccessControlEntryRecord]:
        """The ACLs of the committed metadata image, by id (what the authorizer enforces)."""
        ...


def jitter(rng: random.Random, base_ms: int) -> int:
    """An election timeout: ``base_ms`` plus a random share of it, as Kafka randomises it."""
    return base_ms + rng.randrange(max(base_ms, 1))
