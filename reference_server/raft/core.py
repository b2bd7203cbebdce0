"""The consensus core: KIP-595 Raft with KIP-853 voter sets and KIP-996 pre-vote, as Kafka ships it.

``RaftCore`` is a deterministic state machine. The driver hands it requests (``handle_request``),
responses (``handle_response``) and the time; ``poll`` returns the requests to send, the replies to
deliver and when to poll next. Disk goes through ``ReplicatedLog`` and ``QuorumStateStore``;
randomness comes from the injected ``random.Random``. Nothing here opens a socket, reads a clock or
starts a thread.

Life of a voter (see ``state.py`` for the states)::

    Unattached --election timeout--> Prospective --majority of pre-votes--> Candidate (epoch + 1)
    Candidate --majority of votes--> Leader --resign / check-quorum lost--> Resigned --timeout--> Prospective
    any --higher epoch or a leader of the epoch--> Follower / Unattached
    Follower --fetch timeout--> Prospective

Durability rules:
  1. ``quorum-state`` is written before a vote is granted, a candidacy starts or leadership is acted on.
  2. A follower flushes what it appended before it reports its new end offset in the next Fetch.
  3. The leader counts only its flushed end offset towards the high watermark.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from kafka_admin_kraft.features import KRAFT_VERSION, SUPPORTED_FEATURES
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataRecord,
    RawMetadataRecord,
    RecordBatch,
    SnapshotId,
    control_batch,
    data_batch,
    metadata_batches,
)
from kafka_admin_kraft.records.batch import BATCH_HEADER_SIZE
from kafka_admin_kraft.records.builder import MAX_BATCH_SIZE, data_record_size
from kafka_admin_kraft.storage import QuorumState

from . import changes, describe, rpc
from .api import (
    Address,
    Bootstrap,
    CommittedFeatures,
    Endpoint,
    InboundRequest,
    NodeIdentity,
    OutboundRequest,
    PollResult,
    QuorumStateStore,
    RaftConfig,
    ReplicaKey,
    ReplicatedLog,
    Reply,
    SnapshotWriter,
    VoterInfo,
    VoterSet,
    jitter,
)
from .changes import VoterChange
from .image import SnapshotImage, batch_size
from .leader import CHECK_QUORUM_TIMEOUT_FACTOR, LeaderState
from .state import (
    CandidateState,
    Election,
    EpochState,
    FollowerState,
    ProspectiveState,
    RequestManager,
    ResignedState,
    SnapshotFetch,
    UnattachedState,
    role_name,
)
from .voters import VoterSetHistory, endpoint_for, voters_record, with_local_endpoints

log = logging.getLogger(__name__)

RETRY_BACKOFF_BASE_MS = 100
"""Base of the binary exponential backoff after a failed election (Kafka's KafkaRaftClient)."""
BOOTSTRAP_SNAPSHOT_ID = SnapshotId(0, 0)
MAX_TRANSITIONS_PER_POLL = 8


class NotLeaderError(Exception):
    """``append`` on a replica that is not the leader (or is resigning)."""


class RaftInvariantError(RuntimeError):
    """The local state contradicts a Raft invariant (a bug or corrupted files); Kafka throws too."""


class KRaftUpgradeError(Exception):
    """``upgrade_kraft_version`` refused: some voter has not reported support for kraft.version 1."""


LOCAL_KRAFT_VERSIONS: tuple[int, int] = next((low, high) for name, low, high in SUPPORTED_FEATURES
                                             if name == KRAFT_VERSION)
"""The kraft.version range this replica supports."""


@dataclass
class _Pending:
    api_key: int
    destination: Address
    epoch: int
    pre_vote: bool = False
    fetch_offset: int = -1


@dataclass
class _ParkedFetch:
    request: InboundRequest
    key: ReplicaKey
    partition: messages.FetchRequest.FetchPartition
    deadline_ms: int
    high_watermark: int | None


def _to_metadata_record(record: Struct | MetadataRecord) -> MetadataRecord:
    if isinstance(record, ApiMessageAndVersion | RawMetadataRecord):
        return record
    if isinstance(record, messages.FeatureLevelRecord):
        return ApiMessageAndVersion(record, 0)
    return ApiMessageAndVersion(record, type(record).VERSIONS[1])


class RaftCore:
    """One replica of the ``__cluster_metadata`` partition (implements ``api.RaftDriverFacing``)."""

    def __init__(self, identity: NodeIdentity, config: RaftConfig, bootstrap: Bootstrap, log: ReplicatedLog,
                 store: QuorumStateStore, rng: random.Random, now_ms: int) -> None:
        """Start from the files.

        1. Read the latest snapshot and the log: voter-set history, kraft.version (the metadata image
           is loaded from the snapshot and the committed log over the first polls, a budget at a time).
        2. Read ``quorum-state`` and choose the starting state (as Kafka's ``QuorumState.initialize``):
           leader of the stored epoch -> Resigned; voted for itself without a leader -> Candidate;
           a stored leader with known endpoints -> Follower; otherwise Unattached. A log whose last
           epoch is above the stored one (quorum-state lost) starts Unattached at the log's epoch.
        """
        self._identity = identity
        self._config = config
        self._bootstrap = bootstrap
        self._log = log
        self._store = store
        self._rng = rng
        self._local_key = ReplicaKey(identity.node_id, identity.directory_id)
        self._listener = identity.listeners[0].name if identity.listeners else ""
        self._history = VoterSetHistory(bootstrap.static_voters)
        self._image = SnapshotImage()
        self._requests = RequestManager(config.retry_backoff_ms, config.request_timeout_ms)
        self._pending: dict[int, _Pending] = {}
        self._next_request_id = 1
        self._sends: list[OutboundRequest] = []
        self._replies: list[Reply] = []
        self._parked: list[_ParkedFetch] = []
        self._committed = -1
        self._shutting_down = False
        self._voter_change: VoterChange | None = None
        """The leader's pending AddRaftVoter / RemoveRaftVoter (one at a time)."""
        self._voter_updates: dict[int, VoterInfo] = {}
        """kraft.version 0: what voters told this leader with UpdateRaftVoter (Kafka's in-memory voter
        set), used by ``upgrade_kraft_version``."""
        self._work: Iterator[int] | None = None
        """Image work spread over polls: loading a snapshot into the image, or writing one out."""
        self._work_writer: SnapshotWriter | None = None
        self._reload_image = False
        """The log was replaced by a fetched snapshot: the image must be loaded from it again."""
        self._image_pending = False
        """The last poll ran out of its budget with committed batches still to apply."""
        self._load_partition_state()
        snapshot = log.latest_snapshot()
        if snapshot is not None and snapshot.end_offset > 0:
            self._committed = snapshot.end_offset
        self._persisted: QuorumState | None = store.read()
        self._state: EpochState = self._initial_state(now_ms)

    # =========================================================================================
    # Public surface
    # =========================================================================================

    @property
    def leader_id(self) -> int:
        """The known leader of the current epoch, -1 if none."""
        leader = self._known_leader_id()
        return leader if leader is not None else -1

    @property
    def epoch(self) -> int:
        return self._state.epoch

    @property
    def high_watermark(self) -> int:
        """The highest offset known to be committed here (-1 while unknown); never decreases."""
        return self._committed

    @property
    def leader_high_watermark(self) -> int:
        """The leader's high watermark of its epoch (-1 while not established, or not leader)."""
        state = self._state
        if isinstance(state, LeaderState) and state.high_watermark is not None:
            return state.high_watermark
        return -1

    @property
    def voters(self) -> VoterSet:
        """The current voter set (latest VotersRecord, committed or not; static voters otherwise)."""
        return self._history.last_voter_set()

    @property
    def committed_voters(self) -> VoterSet:
        """The voter set as of the high watermark (the last committed VotersRecord)."""
        if self._committed <= 0:
            return self._history.voter_set_at(-1)
        return self._history.voter_set_at(self._committed - 1)

    @property
    def kraft_version(self) -> int:
        return self._history.kraft_version()

    @property
    def applied_offset(self) -> int:
        """Every committed record below this offset is in the metadata image."""
        return self._image.next_offset

    def committed_features(self) -> CommittedFeatures:
        """Finalized features of the committed image (kraft.version from the control records at or
        below its last applied offset), its highest offset and an open metadata transaction."""
        image = self._image
        levels = image.feature_levels()
        kraft_version = self._history.kraft_version_at(image.highest_offset)
        if kraft_version:
            levels[KRAFT_VERSION] = kraft_version
        return CommittedFeatures(levels, image.highest_offset, image.metadata_version,
                                 image.transaction_start_offset)

    def registered_brokers(self) -> list[messages.RegisterBrokerRecord]:
        """The broker registrations of the committed image, by broker id."""
        return self._image.broker_registrations()

    def registered_controllers(self) -> list[messages.RegisterControllerRecord]:
        """The controller registrations of the committed image, by controller id."""
        return self._image.controller_registrations()

    @property
    def image(self) -> SnapshotImage:
        """The committed metadata image (tests and tools; the driver uses ``committed_features``)."""
        return self._image

    @property
    def role(self) -> str:
        """``unattached``, ``prospective``, ``candidate``, ``leader``, ``follower`` or ``resigned``."""
        return role_name(self._state)

    @property
    def is_leader(self) -> bool:
        return isinstance(self._state, LeaderState)

    @property
    def is_voter(self) -> bool:
        return self._is_voter()

    @property
    def local_key(self) -> ReplicaKey:
        return self._local_key

    @property
    def voted_key(self) -> ReplicaKey | None:
        state = self._state
        if isinstance(state, UnattachedState | ProspectiveState | FollowerState):
            return state.voted_key
        if isinstance(state, CandidateState | LeaderState | ResignedState):
            return self._local_key
        return None

    def leader_endpoints(self) -> tuple[Endpoint, ...]:
        """The known leader's listeners (empty while no leader is known)."""
        return self._leader_endpoints()

    def leader_state(self) -> LeaderState | None:
        """The leader's replica bookkeeping (voters and observers), None when not the leader."""
        return self._state if isinstance(self._state, LeaderState) else None

    def describe_quorum(self, version: int, now_ms: int) -> messages.DescribeQuorumResponse:
        """What DescribeQuorum for ``__cluster_metadata``-0 answers now at ``version``."""
        state = self._state
        if not isinstance(state, LeaderState):
            return describe.not_leader_response(version)
        committed = None
        if state.high_watermark is not None:
            committed = self._history.voter_set_at(state.high_watermark - 1)
        return describe.leader_response(state, version, now_ms, self._config.observer_session_timeout_ms,
                                        committed)

    def handle_request(self, request: InboundRequest, now_ms: int) -> None:
        """Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot or DescribeQuorum; replies come
        out of ``poll`` (a Fetch may wait up to its MaxWaitMs). Other API keys raise ValueError."""
        key = request.api_key
        body = request.body
        if key == rpc.FETCH and isinstance(body, messages.FetchRequest):
            self._handle_fetch(request, body, now_ms)
        elif key == rpc.VOTE and isinstance(body, messages.VoteRequest):
            self._reply(request, self._handle_vote(request, body, now_ms))
        elif key == rpc.BEGIN_QUORUM_EPOCH and isinstance(body, messages.BeginQuorumEpochRequest):
            self._reply(request, self._handle_begin_quorum_epoch(request, body, now_ms))
        elif key == rpc.END_QUORUM_EPOCH and isinstance(body, messages.EndQuorumEpochRequest):
            self._reply(request, self._handle_end_quorum_epoch(request, body, now_ms))
        elif key == rpc.FETCH_SNAPSHOT and isinstance(body, messages.FetchSnapshotRequest):
            self._reply(request, self._handle_fetch_snapshot(request, body, now_ms))
        elif key == rpc.DESCRIBE_QUORUM and isinstance(body, messages.DescribeQuorumRequest):
            if not describe.is_metadata_partition_request(body):
                self._reply(request, describe.unknown_partition_response(body, request.api_version))
            else:
                self._reply(request, self.describe_quorum(request.api_version, now_ms))
        elif key == rpc.ADD_RAFT_VOTER and isinstance(body, messages.AddRaftVoterRequest):
            self._handle_add_voter(request, body, now_ms)
        elif key == rpc.REMOVE_RAFT_VOTER and isinstance(body, messages.RemoveRaftVoterRequest):
            self._handle_remove_voter(request, body, now_ms)
        elif key == rpc.UPDATE_RAFT_VOTER and isinstance(body, messages.UpdateRaftVoterRequest):
            self._reply(request, self._handle_update_voter(request, body, now_ms))
        else:
            raise ValueError(f"the raft core does not serve API key {key} ({type(body).__name__})")
        self._complete_parked_fetches(now_ms)

    def handle_response(self, request_id: int, body: Struct | None, now_ms: int) -> None:
        """The answer to one of our requests; None when it could not be sent or timed out."""
        pending = self._pending.pop(request_id, None)
        if pending is None:
            return  # answered already, timed out, or sent in an earlier state
        success = False
        if pending.api_key == rpc.API_VERSIONS:
            success = body is not None
            self._on_new_voter_api_versions(request_id, body, now_ms)
        elif body is not None:
            try:
                success = self._dispatch_response(pending, body, now_ms)
            except DecodeError as exc:  # corrupt records in a Fetch/FetchSnapshot answer
                log.warning("discarding a corrupt %s response from %s: %s", type(body).__name__,
                            pending.destination, exc)
        self._requests.on_result(pending.destination, request_id, success, now_ms)
        self._complete_parked_fetches(now_ms)

    def poll(self, now_ms: int) -> PollResult:
        """Run the timers of the current state and collect what the driver must do.

        1. Requests past their timeout fail (their connection backs off).
        2. The state's timers run (elections, fetch timeout, check-quorum, BeginQuorumEpoch, resends);
           a transition lets the new state run at once.
        3. The leader flushes its log and counts its durable end offset; the high watermark may move.
        4. Parked fetches whose data, high watermark or wait time arrived are answered.
        5. The committed image advances by at most ``apply_budget_bytes`` (a snapshot being loaded
           into it or written out continues first); a snapshot is started when enough bytes were
           committed since the last one. With work left, the next poll is due at once.
        """
        for request_id in self._requests.expired(now_ms):
            pending = self._pending.pop(request_id, None)
            if pending is not None:
                log.debug("request %d to %s timed out", request_id, pending.destination)
        for _ in range(MAX_TRANSITIONS_PER_POLL):
            before = self._state
            self._poll_state(now_ms)
            if self._state is before:
                break
        self._complete_parked_fetches(now_ms)
        budget = max(self._config.apply_budget_bytes, 1)
        self._image_pending = self._advance_image(budget)
        if (not self._image_pending and self._work is None
                and self._image.bytes_applied >= self._config.snapshot_interval_bytes
                and not self._image.in_transaction and self._start_snapshot(now_ms) is not None):
            self._run_work(budget)
        result = PollResult(sends=self._sends, replies=self._replies, next_poll_ms=self._next_poll_ms(now_ms),
                            committed_offset=self._committed)
        self._sends = []
        self._replies = []
        return result

    def append(self, batch_records: Sequence[Struct | MetadataRecord], now_ms: int) -> int:
        """Leader only: append metadata records in one batch of the current epoch (more only beyond
        8 MiB); return the offset of the last one. Generated record messages are framed at their
        newest version (FeatureLevelRecord at 0). Raises NotLeaderError otherwise."""
        state = self._state
        if not isinstance(state, LeaderState) or self._shutting_down:
            raise NotLeaderError(f"node {self._identity.node_id} is not the leader (epoch {state.epoch}, "
                                 f"{role_name(state)})")
        records = [_to_metadata_record(record) for record in batch_records]
        if not records:
            raise ValueError("append needs at least one record")
        base = self._log.end_offset()
        batches = metadata_batches(base, state.epoch, now_ms, records)
        for batch in batches:
            self._log.append(batch)
        return batches[-1].last_offset

    def resign(self, now_ms: int) -> None:
        """Graceful shutdown: a leader resigns and sends EndQuorumEpoch to the other voters, naming
        them as preferred candidates by descending fetch offset; in every state the replica stops
        starting elections (it still answers requests and votes) until it is dropped."""
        self._shutting_down = True
        if isinstance(self._state, LeaderState):
            self._to_resigned(now_ms)

    def snapshot(self, now_ms: int) -> SnapshotId | None:
        """Take a snapshot at the high watermark now; None if there is nothing new.

        Unlike the periodic snapshots of ``poll`` this runs to the end at once: image work in
        progress finishes, every committed batch is applied, then the snapshot is written
        (``_start_snapshot``, ``_snapshot_steps``).
        """
        self._advance_image(None)
        snapshot_id = self._start_snapshot(now_ms)
        if snapshot_id is not None:
            self._run_work(None)
        return snapshot_id

    def _start_snapshot(self, now_ms: int) -> SnapshotId | None:
        """Start writing the image out as a snapshot (the image stays still until it is done).

        1. Nothing new since the latest snapshot, or a metadata transaction open at that point: None.
        2. Snapshot id = (image end offset, epoch of its last batch).
        3. Batches (``_snapshot_steps``): a control batch with SnapshotHeaderRecord (+ KRaftVersionRecord
           and VotersRecord as of the snapshot when kraft.version >= 1), the image as data batches, a
           control batch with SnapshotFooterRecord; offsets from 0, every batch at the snapshot epoch.
        """
        image = self._image
        end = image.next_offset
        latest = self._log.latest_snapshot()
        if (self._work is not None or self._reload_image or end <= 0 or image.in_transaction
                or (latest is not None and latest.end_offset >= end)):
            return None
        snapshot_id = SnapshotId(end, image.last_epoch)
        writer = self._log.create_snapshot(snapshot_id)
        if writer is None:
            return None
        self._work = self._snapshot_steps(writer, now_ms)
        self._work_writer = writer
        return snapshot_id

    def _snapshot_steps(self, writer: SnapshotWriter, now_ms: int) -> Iterator[int]:
        """Write the image one batch at a time (yielding the bytes of each), then freeze it; the
        image's kept records move onto the new snapshot before retention drops what lies below it
        (segments, older snapshots) and old voter-set history is compacted."""
        image = self._image
        snapshot_id = writer.snapshot_id
        epoch = snapshot_id.epoch
        end = snapshot_id.end_offset
        header: list[Struct] = [messages.SnapshotHeaderRecord(
            version=0, last_contained_log_timestamp=max(image.last_timestamp, 0))]
        kraft_version = self._history.kraft_version_at(end - 1)
        if kraft_version >= 1:
            header.append(messages.KRaftVersionRecord(version=0, k_raft_version=kraft_version))
            header.append(voters_record(self._history.voter_set_at(end - 1)))
        writer.append(control_batch(0, epoch, now_ms, header))
        yield 1
        offset = len(header)
        first_other = offset + image.keyed_count()
        values: list[bytes] = []
        size = BATCH_HEADER_SIZE
        for value in image.values(self._read_source):
            needed = data_record_size(len(values), len(value))
            if values and size + needed > MAX_BATCH_SIZE:
                writer.append(data_batch(offset, epoch, now_ms, values))
                offset += len(values)
                values = []
                yield size
                size = BATCH_HEADER_SIZE
                needed = data_record_size(0, len(value))
            values.append(value)
            size += needed
        if values:
            writer.append(data_batch(offset, epoch, now_ms, values))
            offset += len(values)
        writer.append(control_batch(offset, epoch, now_ms, [messages.SnapshotFooterRecord(version=0)]))
        writer.freeze()
        image.rebase(snapshot_id, first_other)
        self._log.delete_before_snapshot()
        self._history.truncate_old_entries(self._log.start_offset())
        image.bytes_applied = 0
        log.info("node %d wrote snapshot %s", self._identity.node_id, snapshot_id)
        yield size

    def _read_source(self, source: SnapshotId | None, first_offset: int) -> Iterator[RecordBatch]:
        if source is None:
            return iter(self._log.batches(first_offset))
        return iter(self._log.snapshot_batches(source))

    # =========================================================================================
    # Start-up and log-derived state
    # =========================================================================================

    def _load_partition_state(self) -> None:
        """Rebuild the voter-set history from the latest snapshot and the log (the image follows in
        ``_advance_image``, which loads the snapshot when the log starts past the image)."""
        self._history.clear()
        snapshot = self._log.latest_snapshot()
        read_from = self._log.start_offset()
        if snapshot is not None:
            control_batches = getattr(self._log, "snapshot_control_batches", None)
            batches: Iterable[RecordBatch] = (control_batches(snapshot) if callable(control_batches)
                                              else self._log.snapshot_batches(snapshot))
            for batch in batches:
                self._history.apply_batch(batch, offset_override=snapshot.end_offset - 1)
            read_from = max(read_from, snapshot.end_offset)
        self._apply_log_batches(read_from)

    def _apply_log_batches(self, start_offset: int) -> None:
        """Apply the control records of the log from ``start_offset`` to the voter-set history (through
        the log's ``control_batches`` when it has one, which skips the data batches unread)."""
        control_batches = getattr(self._log, "control_batches", None)
        batches: Iterable[RecordBatch] = (control_batches(start_offset) if callable(control_batches)
                                          else self._log.batches(start_offset))
        for batch in batches:
            if batch.is_control:
                self._history.apply_batch(batch, min_offset=start_offset)
        state = getattr(self, "_state", None)
        if isinstance(state, LeaderState) and state.voters != self._history.last_voter_set():
            state.update_voter_set(self._history.last_voter_set())

    def _initial_state(self, now_ms: int) -> EpochState:
        stored = self._persisted
        epoch = max(stored.leader_epoch, 0) if stored is not None else 0
        leader_id = stored.leader_id if stored is not None and stored.leader_id >= 0 else None
        voted = (ReplicaKey(stored.voted_id, stored.voted_directory_id)
                 if stored is not None and stored.voted_id >= 0 else None)
        log_epoch = self._log.last_epoch()
        if log_epoch > epoch:
            log.warning("the log's last epoch %d is above the quorum-state epoch %d", log_epoch, epoch)
            self._write_election(log_epoch, None, None)
            return UnattachedState(log_epoch, election_deadline_ms=self._election_deadline(now_ms))
        if stored is None:
            self._write_election(epoch, None, None)
        if leader_id == self._local_key.id:
            others = {voter for voter in self.voters.ids() if voter != self._local_key.id}
            deadline = now_ms if not others else self._election_deadline(now_ms)
            return ResignedState(epoch, others, [], deadline)
        if voted is not None and voted.id == self._local_key.id and leader_id is None and self._is_voter():
            election = Election(self.voters.ids())
            election.record(self._local_key.id, True)
            return CandidateState(epoch, election, self._election_deadline(now_ms))
        if leader_id is not None:
            endpoints = self._voter_endpoints(leader_id)
            if endpoints:
                return FollowerState(epoch, leader_id, endpoints, now_ms + self._config.fetch_timeout_ms,
                                     voted)
        return UnattachedState(epoch, voted, leader_id, self._election_deadline(now_ms))

    # =========================================================================================
    # Helpers
    # =========================================================================================

    def _is_voter(self) -> bool:
        return self._identity.is_controller and self.voters.is_voter(self._local_key)

    def _is_only_voter(self) -> bool:
        return self._is_voter() and self.voters.ids() == frozenset({self._local_key.id})

    def _election_deadline(self, now_ms: int) -> int:
        if self._is_only_voter():
            return now_ms
        return now_ms + jitter(self._rng, self._config.election_timeout_ms)

    def _backoff_ms(self, retries: int) -> int:
        """Binary exponential backoff after a failed election, capped at election_backoff_max_ms."""
        exponent = min(20, max(retries, 1) - 1)
        return min(RETRY_BACKOFF_BASE_MS * self._rng.randrange(2 << exponent),
                   self._config.election_backoff_max_ms)

    def _voter_endpoints(self, voter_id: int) -> tuple[Endpoint, ...]:
        info = self.voters.voters.get(voter_id)
        return info.endpoints if info is not None else ()

    def _address(self, node_id: int, endpoints: Iterable[Endpoint]) -> Address | None:
        endpoints = tuple(endpoints)
        endpoint = endpoint_for(endpoints, self._listener) or (endpoints[0] if endpoints else None)
        return Address(endpoint.host, endpoint.port, node_id) if endpoint is not None else None

    def _known_leader_id(self) -> int | None:
        state = self._state
        if isinstance(state, LeaderState | ResignedState):
            return self._local_key.id
        if isinstance(state, FollowerState | UnattachedState | ProspectiveState):
            return state.leader_id
        return None

    def _leader_endpoints(self) -> tuple[Endpoint, ...]:
        state = self._state
        if isinstance(state, LeaderState | ResignedState):
            return self._identity.listeners
        if isinstance(state, FollowerState):
            return state.leader_endpoints
        if isinstance(state, ProspectiveState) and state.leader_endpoints:
            return state.leader_endpoints
        leader = self._known_leader_id()
        return self._voter_endpoints(leader) if leader is not None else ()

    def _leader_endpoint_for(self, listener: str) -> Endpoint | None:
        """The leader's endpoint for the listener a request came in on (NodeEndpoints of answers)."""
        return endpoint_for(self._leader_endpoints(), listener or self._listener)

    def _knows_leader(self) -> bool:
        """A leader with usable endpoints is known for the epoch."""
        state = self._state
        if isinstance(state, LeaderState | ResignedState | FollowerState):
            return True
        if isinstance(state, ProspectiveState):
            return state.leader_id is not None and bool(state.leader_endpoints)
        return False

    def _valid_cluster_id(self, cluster_id: str | None) -> bool:
        return cluster_id is None or cluster_id == self._identity.cluster_id

    def _valid_voter_key(self, voter_id: int, directory_id: object) -> bool:
        """A request's VoterId / VoterDirectoryId must name this replica (unset id: no check)."""
        if voter_id < 0:
            return True
        if voter_id != self._local_key.id:
            return False
        return directory_id == ZERO_UUID or directory_id == self._local_key.directory_id

    def _reply(self, request: InboundRequest, body: Struct) -> None:
        self._replies.append(Reply(request.request_id, body))

    def _send(self, destination: Address, api_key: int, body: Struct, now_ms: int, *, pre_vote: bool = False,
              fetch_offset: int = -1) -> int:
        request_id = self._next_request_id
        self._next_request_id += 1
        self._pending[request_id] = _Pending(api_key, destination, self._state.epoch, pre_vote, fetch_offset)
        self._requests.on_sent(destination, request_id, now_ms)
        self._sends.append(OutboundRequest(request_id, destination, api_key, body))
        return request_id

    def _set_committed(self, offset: int) -> None:
        if offset > self._committed:
            self._committed = offset

    def _bootstrap_addresses(self) -> list[Address]:
        """Where a replica that knows no leader looks for one: the bootstrap servers, or the voters."""
        own = {(endpoint.host, endpoint.port) for endpoint in self._identity.listeners}
        if self._bootstrap.bootstrap_servers:
            return [address for address in self._bootstrap.bootstrap_servers
                    if address.node_id != self._local_key.id and (address.host, address.port) not in own]
        addresses = []
        for voter_id in sorted(self.voters.voters):
            if voter_id == self._local_key.id:
                continue
            address = self._address(voter_id, self._voter_endpoints(voter_id))
            if address is not None:
                addresses.append(address)
        return addresses

    # =========================================================================================
    # Transitions
    # =========================================================================================

    def _write_election(self, epoch: int, leader_id: int | None, voted: ReplicaKey | None) -> None:
        """Write quorum-state (data version 1 with kraft.version >= 1, else 0) unless unchanged."""
        if self._history.kraft_version() >= 1:
            state = QuorumState(1, leader_id if leader_id is not None else -1, epoch,
                                voted.id if voted is not None else -1,
                                voted.directory_id if voted is not None else ZERO_UUID)
        else:
            state = QuorumState(0, leader_id if leader_id is not None else -1, epoch,
                                voted.id if voted is not None else -1, ZERO_UUID, "", 0,
                                tuple(sorted(self.voters.ids())))
        if state != self._persisted:
            self._store.write(state)
            self._persisted = state

    def _leave_state(self) -> None:
        """Every transition forgets in-flight requests (late answers are ignored), drops a snapshot
        being copied from the leader, and answers parked fetches against the new state."""
        self._requests.reset_all()
        self._pending.clear()
        change = getattr(self, "_voter_change", None)
        if change is not None:
            self._finish_voter_change(rpc.NOT_LEADER_OR_FOLLOWER)
        state = self._state if hasattr(self, "_state") else None
        if isinstance(state, FollowerState) and state.fetching_snapshot is not None:
            state.fetching_snapshot.abort()
            state.fetching_snapshot = None

    def _to_unattached(self, epoch: int, now_ms: int, leader_id: int | None = None) -> None:
        self._write_election(epoch, leader_id, None)
        self._leave_state()
        self._state = UnattachedState(epoch, None, leader_id, self._election_deadline(now_ms))

    def _to_unattached_voted(self, candidate: ReplicaKey, now_ms: int) -> None:
        epoch = self._state.epoch
        self._write_election(epoch, None, candidate)
        self._leave_state()
        self._state = UnattachedState(epoch, candidate, None, self._election_deadline(now_ms))

    def _to_follower(self, epoch: int, leader_id: int, endpoints: tuple[Endpoint, ...], now_ms: int) -> None:
        state = self._state
        voted = None
        if epoch == state.epoch and isinstance(state, UnattachedState | ProspectiveState | FollowerState):
            voted = state.voted_key
        elif epoch == state.epoch and isinstance(state, CandidateState):
            voted = self._local_key
        self._write_election(epoch, leader_id, voted)
        self._leave_state()
        self._state = FollowerState(epoch, leader_id, endpoints, now_ms + self._config.fetch_timeout_ms,
                                    voted)

    def _to_prospective(self, now_ms: int, retries: int = 1) -> None:
        """Start a pre-vote round at the current epoch (nothing is persisted)."""
        state = self._state
        voted: ReplicaKey | None = None
        leader_id: int | None = None
        endpoints: tuple[Endpoint, ...] = ()
        if isinstance(state, UnattachedState):
            voted, leader_id = state.voted_key, state.leader_id
        elif isinstance(state, FollowerState | ProspectiveState):
            voted, leader_id, endpoints = state.voted_key, state.leader_id, state.leader_endpoints
        elif isinstance(state, CandidateState | ResignedState):
            voted = self._local_key
        self._leave_state()
        election = Election(self.voters.ids())
        election.record(self._local_key.id, True)
        self._state = ProspectiveState(state.epoch, election, self._election_deadline(now_ms), voted,
                                       leader_id, endpoints, None, retries)
        if election.is_won():
            self._to_candidate(now_ms, retries)

    def _to_candidate(self, now_ms: int, retries: int = 1) -> None:
        """Bump the epoch and vote for ourselves, persisted before any Vote request goes out."""
        epoch = self._state.epoch + 1
        self._write_election(epoch, None, self._local_key)
        self._leave_state()
        election = Election(self.voters.ids())
        election.record(self._local_key.id, True)
        self._state = CandidateState(epoch, election, self._election_deadline(now_ms), None, retries)
        if election.is_won():
            self._to_leader(now_ms)

    def _to_leader(self, now_ms: int) -> None:
        """Become leader of the candidate's epoch.

        1. Persist quorum-state (leader = self).
        2. The epoch start offset is the log end offset; append one control batch there:
           LeaderChangeMessage (voters, granting voters) and, with kraft.version >= 1, KRaftVersionRecord +
           VotersRecord when no VotersRecord is in the log yet (only in the bootstrap snapshot) or the
           leader's own endpoints changed.
        3. BeginQuorumEpoch goes to every other voter on the next poll.
        """
        candidate = self._state
        assert isinstance(candidate, CandidateState)
        epoch = candidate.epoch
        self._write_election(epoch, self._local_key.id, self._local_key)
        self._leave_state()
        self._voter_updates = {}
        voters = self.voters
        state = LeaderState(epoch, self._local_key, self._log.end_offset(), voters,
                            frozenset(candidate.election.granted),
                            int(self._config.fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR), now_ms)
        self._state = state
        records: list[Struct] = [messages.LeaderChangeMessage(
            version=0, leader_id=self._local_key.id,
            voters=[messages.LeaderChangeMessage.Voter(voter_id=voter_id)
                    for voter_id in sorted(voters.ids())],
            granting_voters=[messages.LeaderChangeMessage.Voter(voter_id=voter_id)
                             for voter_id in sorted(candidate.election.granted)])]
        kraft_version = self._history.kraft_version()
        if kraft_version >= 1:
            last_voters_offset = self._history.last_voters_offset()
            updated = with_local_endpoints(voters, self._local_key, self._identity.listeners)
            if last_voters_offset is None or last_voters_offset < 0 or updated != voters:
                records.append(messages.KRaftVersionRecord(version=0, k_raft_version=kraft_version))
                records.append(voters_record(updated))
        base = self._log.end_offset()
        self._log.append(control_batch(base, epoch, now_ms, records))
        self._apply_log_batches(base)
        log.info("node %d is leader of epoch %d at offset %d", self._local_key.id, epoch, base)

    def _to_resigned(self, now_ms: int) -> None:
        state = self._state
        assert isinstance(state, LeaderState)
        candidates = state.voters_by_descending_end_offset()
        self._leave_state()
        others = {key.id for key in candidates}
        self._state = ResignedState(state.epoch, others, candidates,
                                    now_ms if not others else self._election_deadline(now_ms))

    # =========================================================================================
    # Responses common to every RPC
    # =========================================================================================

    def _consistent_leader(self, epoch: int, leader_id: int | None) -> bool:
        if leader_id is None:
            return True
        if leader_id == self._local_key.id:
            return epoch == self._state.epoch and isinstance(self._state, LeaderState | ResignedState)
        if epoch != self._state.epoch:
            return True
        known = self._known_leader_id()
        return known is None or known == leader_id

    def _maybe_transition(self, leader_id: int | None, epoch: int, endpoints: tuple[Endpoint, ...],
                          now_ms: int) -> bool:
        """Follow what a request or response says about the epoch and its leader; False when it
        contradicts what this replica knows (two leaders in one epoch)."""
        if not self._consistent_leader(epoch, leader_id):
            log.warning("node %d ignores leader %s of epoch %d: it knows leader %s of epoch %d",
                        self._local_key.id, leader_id, epoch, self._known_leader_id(), self._state.epoch)
            return False
        if epoch > self._state.epoch:
            if leader_id is not None and leader_id != self._local_key.id and endpoints:
                self._to_follower(epoch, leader_id, endpoints, now_ms)
            else:
                self._to_unattached(epoch, now_ms, leader_id if leader_id != self._local_key.id else None)
        elif (leader_id is not None and leader_id != self._local_key.id and endpoints
              and not self._knows_leader()):
            self._to_follower(epoch, leader_id, endpoints, now_ms)
        return True

    def _handle_common_response(self, error: int, leader_id: int | None, epoch: int,
                                endpoints: tuple[Endpoint, ...], now_ms: int) -> bool | None:
        """Kafka's ``maybeHandleCommonResponse``: True/False when handled here (success / back off),
        None when the API-specific handler must look at the response."""
        if leader_id is not None and not endpoints:
            endpoints = self._voter_endpoints(leader_id)
        if epoch < self._state.epoch or error == rpc.UNKNOWN_LEADER_EPOCH:
            return True
        if epoch > self._state.epoch or error in (rpc.FENCED_LEADER_EPOCH, rpc.NOT_LEADER_OR_FOLLOWER):
            before = self._state
            self._maybe_transition(leader_id, epoch, endpoints, now_ms)
            # Nothing learnt (e.g. a voter that follows the same leader): back off before asking again.
            return self._state is not before
        if (leader_id is not None and leader_id != self._local_key.id and endpoints
                and not self._knows_leader()):
            if not self._maybe_transition(leader_id, epoch, endpoints, now_ms):
                return True
            return None if error == rpc.NONE else True
        if error == rpc.BROKER_NOT_AVAILABLE:
            return False
        if error == rpc.INVALID_VOTER_KEY:
            return True
        if error == rpc.INVALID_REQUEST:
            log.warning("node %d: a peer answered INVALID_REQUEST", self._local_key.id)
            return False
        return None

    def _dispatch_response(self, pending: _Pending, body: Struct, now_ms: int) -> bool:
        if pending.api_key == rpc.FETCH and isinstance(body, messages.FetchResponse):
            return self._handle_fetch_response(pending, body, now_ms)
        if pending.api_key == rpc.VOTE and isinstance(body, messages.VoteResponse):
            return self._handle_vote_response(pending, body, now_ms)
        if pending.api_key == rpc.BEGIN_QUORUM_EPOCH and isinstance(body, messages.BeginQuorumEpochResponse):
            return self._handle_begin_quorum_epoch_response(pending, body, now_ms)
        if pending.api_key == rpc.END_QUORUM_EPOCH and isinstance(body, messages.EndQuorumEpochResponse):
            return self._handle_end_quorum_epoch_response(pending, body, now_ms)
        if pending.api_key == rpc.FETCH_SNAPSHOT and isinstance(body, messages.FetchSnapshotResponse):
            return self._handle_fetch_snapshot_response(pending, body, now_ms)
        if pending.api_key == rpc.UPDATE_RAFT_VOTER and isinstance(body, messages.UpdateRaftVoterResponse):
            return self._handle_update_voter_response(pending, body, now_ms)
        if (pending.api_key in (rpc.ADD_RAFT_VOTER, rpc.REMOVE_RAFT_VOTER)
                and isinstance(body, messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse)):
            return self._handle_auto_join_response(pending, body, now_ms)
        log.warning("unexpected %s answering API key %d", type(body).__name__, pending.api_key)
        return False

    # =========================================================================================
    # Vote
    # =========================================================================================

    def _can_grant_vote(self, candidate: ReplicaKey, up_to_date: bool, pre_vote: bool) -> bool:
        """Whether the current state grants a (pre-)vote at its own epoch.

        * Leader: never.
        * Candidate, Resigned: pre-votes when the candidate's log is up to date; votes never (they
          voted for themselves in this epoch).
        * Follower: pre-votes only while no fetch from its leader has succeeded in this state (a live
          leader must not be disrupted) and the log is up to date; votes never.
        * Unattached, Prospective: pre-votes when up to date; a vote when it repeats the vote cast in
          this epoch, or when no vote was cast, no leader is known and the log is up to date.
        """
        state = self._state
        if not self._identity.is_controller or isinstance(state, LeaderState):
            return False
        if isinstance(state, CandidateState | ResignedState):
            return pre_vote and up_to_date
        if isinstance(state, FollowerState):
            return pre_vote and up_to_date and not state.has_fetched
        if pre_vote:
            return up_to_date
        if state.voted_key is not None:
            voted = state.voted_key
            return voted.id == candidate.id and voted.directory_id in (ZERO_UUID, candidate.directory_id)
        if state.leader_id is not None:
            return False
        return up_to_date

    def _handle_vote(self, request: InboundRequest, body: messages.VoteRequest,
                     now_ms: int) -> messages.VoteResponse:
        """Vote (API 52), standard or pre-vote.

        1. ClusterId set and different -> INCONSISTENT_CLUSTER_ID (top level).
        2. Not exactly ``__cluster_metadata``-0 -> INVALID_REQUEST (top level).
        3. Negative last offset or epoch, or a last epoch not below the replica epoch (pre-vote: above)
           -> INVALID_REQUEST.
        4. Replica epoch below ours -> FENCED_LEADER_EPOCH; negative replica id -> INVALID_REQUEST.
        5. Replica epoch above ours -> become Unattached at that epoch (persisted).
        6. VoterId / VoterDirectoryId (v1+) naming another replica -> INVALID_VOTER_KEY.
        7. The candidate's log is up to date when (last epoch, end offset) >= ours.
        8. Grant per state (``_can_grant_vote``); a granted standard vote is persisted before the answer.
        """
        version = request.api_version
        if not self._valid_cluster_id(body.cluster_id):
            return rpc.vote_response(version, rpc.INCONSISTENT_CLUSTER_ID)
        partition = rpc.vote_partition(body)
        if partition is None:
            return rpc.vote_response(version, rpc.INVALID_REQUEST)
        pre_vote = partition.pre_vote
        replica_epoch = partition.replica_epoch
        last_epoch = partition.last_offset_epoch
        illegal = last_epoch > replica_epoch if pre_vote else last_epoch >= replica_epoch
        error = rpc.NONE
        if partition.last_offset < 0 or last_epoch < 0 or illegal:
            error = rpc.INVALID_REQUEST
        elif replica_epoch < self._state.epoch:
            error = rpc.FENCED_LEADER_EPOCH
        elif partition.replica_id < 0:
            error = rpc.INVALID_REQUEST
        if error != rpc.NONE:
            return self._vote_answer(request, error, False)
        if replica_epoch > self._state.epoch:
            self._to_unattached(replica_epoch, now_ms)
        if version >= 1 and not self._valid_voter_key(body.voter_id, partition.voter_directory_id):
            return self._vote_answer(request, rpc.INVALID_VOTER_KEY, False)
        candidate = ReplicaKey(partition.replica_id, partition.replica_directory_id)
        up_to_date = (last_epoch, partition.last_offset) >= (self._log.last_epoch(), self._log.end_offset())
        granted = self._can_grant_vote(candidate, up_to_date, pre_vote)
        state = self._state
        if (granted and not pre_vote and isinstance(state, UnattachedState | ProspectiveState)
                and state.voted_key is None):
            self._to_unattached_voted(candidate, now_ms)
        log.debug("node %d %s %svote of %s in epoch %d", self._local_key.id,
                  "grants" if granted else "rejects", "pre-" if pre_vote else "", candidate, replica_epoch)
        return self._vote_answer(request, rpc.NONE, granted)

    def _vote_answer(self, request: InboundRequest, error: int, granted: bool) -> messages.VoteResponse:
        return rpc.vote_response(request.api_version, rpc.NONE, error, self._state.epoch, self.leader_id,
                                 granted, self._leader_endpoint_for(request.listener))

    def _handle_vote_response(self, pending: _Pending, body: messages.VoteResponse, now_ms: int) -> bool:
        """Count a (pre-)vote.

        1. Errors and news about the epoch are handled in common (a higher epoch moves us on).
        2. Prospective: a majority of pre-votes -> Candidate; no majority possible -> lost.
        3. Candidate: a majority of votes -> Leader; no majority possible -> back off at once.
        """
        if body.error_code != rpc.NONE:
            return False
        if len(body.topics) != 1 or len(body.topics[0].partitions) != 1:
            return False
        partition = body.topics[0].partitions[0]
        leader_id = rpc.optional_id(partition.leader_id)
        endpoints = (rpc.node_endpoint(body.node_endpoints, leader_id, self._listener)
                     if leader_id is not None else ())
        handled = self._handle_common_response(partition.error_code, leader_id, partition.leader_epoch,
                                               endpoints, now_ms)
        if handled is not None:
            return handled
        if partition.error_code != rpc.NONE:
            return False
        state = self._state
        voter_id = pending.destination.node_id
        if voter_id is None or state.epoch != pending.epoch:
            return True
        if isinstance(state, ProspectiveState) and pending.pre_vote and state.backoff_until_ms is None:
            state.election.record(voter_id, partition.vote_granted)
            if state.election.is_won():
                self._to_candidate(now_ms, state.retries)
            elif state.election.is_lost():
                self._prospective_lost(now_ms)
        elif isinstance(state, CandidateState) and not pending.pre_vote and state.backoff_until_ms is None:
            state.election.record(voter_id, partition.vote_granted)
            if state.election.is_won():
                self._to_leader(now_ms)
            elif state.election.is_lost():
                state.backoff_until_ms = now_ms + self._backoff_ms(state.retries)
        return True

    def _prospective_lost(self, now_ms: int) -> None:
        """A pre-vote round failed: follow the leader still known for the epoch, or back off."""
        state = self._state
        assert isinstance(state, ProspectiveState)
        if state.leader_id is not None and state.leader_endpoints:
            self._to_follower(state.epoch, state.leader_id, state.leader_endpoints, now_ms)
        else:
            state.backoff_until_ms = now_ms + self._backoff_ms(state.retries)

    # =========================================================================================
    # BeginQuorumEpoch and EndQuorumEpoch
    # =========================================================================================

    def _request_leader_endpoints(self, leader_id: int, endpoints: Iterable[tuple[str, str, int]]
                                  ) -> tuple[Endpoint, ...]:
        given = tuple(Endpoint(name, host, port) for name, host, port in endpoints)
        return given or self._voter_endpoints(leader_id)

    def _follow_announced_leader(self, leader_id: int, leader_epoch: int,
                                 leader_endpoints: Iterable[messages.BeginQuorumEpochRequest.LeaderEndpoint
                                                            | messages.EndQuorumEpochRequest.LeaderEndpoint],
                                 now_ms: int) -> int:
        """Steps 2-3 that BeginQuorumEpoch and EndQuorumEpoch share: check the announced epoch and
        leader and follow it; the error code for the answer (NONE when followed)."""
        if leader_epoch < self._state.epoch:
            return rpc.FENCED_LEADER_EPOCH
        if leader_id < 0:
            return rpc.INVALID_REQUEST
        endpoints = self._request_leader_endpoints(leader_id,
                                                   ((e.name, e.host, e.port) for e in leader_endpoints))
        if not self._maybe_transition(leader_id, leader_epoch, endpoints, now_ms):
            return rpc.INVALID_REQUEST
        return rpc.NONE

    def _handle_begin_quorum_epoch(self, request: InboundRequest, body: messages.BeginQuorumEpochRequest,
                                   now_ms: int) -> messages.BeginQuorumEpochResponse:
        """BeginQuorumEpoch (API 53): a new leader announces itself.

        1. ClusterId mismatch -> INCONSISTENT_CLUSTER_ID; not the metadata partition -> INVALID_REQUEST.
        2. Epoch below ours -> FENCED_LEADER_EPOCH; negative leader id -> INVALID_REQUEST.
        3. Follow the leader (endpoints from the request, else from the voter set); a leader that
           contradicts the one known for the epoch -> INVALID_REQUEST.
        4. VoterId / VoterDirectoryId (v1+) naming another replica -> INVALID_VOTER_KEY.
        """
        version = request.api_version
        if not self._valid_cluster_id(body.cluster_id):
            return rpc.begin_quorum_epoch_response(version, rpc.INCONSISTENT_CLUSTER_ID)
        partition = rpc.begin_quorum_epoch_partition(body)
        if partition is None:
            return rpc.begin_quorum_epoch_response(version, rpc.INVALID_REQUEST)
        error = self._follow_announced_leader(partition.leader_id, partition.leader_epoch,
                                              body.leader_endpoints, now_ms)
        if error == rpc.NONE and version >= 1 and not self._valid_voter_key(body.voter_id,
                                                                           partition.voter_directory_id):
            error = rpc.INVALID_VOTER_KEY
        return rpc.begin_quorum_epoch_response(version, rpc.NONE, error, self._state.epoch, self.leader_id,
                                               self._leader_endpoint_for(request.listener))

    def _settle_epoch_response(
            self, body: messages.BeginQuorumEpochResponse | messages.EndQuorumEpochResponse,
            now_ms: int) -> bool | None:
        """What BeginQuorumEpoch and EndQuorumEpoch answers share: learn the leader they name; None
        for a success the caller records, else whether the answer was handled."""
        if body.error_code != rpc.NONE or len(body.topics) != 1 or len(body.topics[0].partitions) != 1:
            return False
        partition = body.topics[0].partitions[0]
        leader_id = rpc.optional_id(partition.leader_id)
        endpoints = (rpc.node_endpoint(body.node_endpoints, leader_id, self._listener)
                     if leader_id is not None else ())
        handled = self._handle_common_response(partition.error_code, leader_id, partition.leader_epoch,
                                               endpoints, now_ms)
        if handled is not None:
            return handled
        return False if partition.error_code != rpc.NONE else None

    def _handle_begin_quorum_epoch_response(self, pending: _Pending, body: messages.BeginQuorumEpochResponse,
                                            now_ms: int) -> bool:
        settled = self._settle_epoch_response(body, now_ms)
        if settled is not None:
            return settled
        state = self._state
        if isinstance(state, LeaderState) and pending.destination.node_id is not None:
            state.acknowledged.add(pending.destination.node_id)
        return True

    def _end_epoch_backoff_ms(self, candidates: list[ReplicaKey]) -> int:
        """Kafka's strict exponential backoff by our position among the preferred candidates: the
        first starts an election at once, later ones wait longer, absent ones the maximum."""
        position = len(candidates)
        for index, key in enumerate(candidates):
            if key.id == self._local_key.id and key.directory_id in (ZERO_UUID, self._local_key.directory_id):
                position = index
                break
        maximum = self._config.election_backoff_max_ms
        if position == 0:
            return 0
        if position >= len(candidates):
            return maximum
        base = maximum >> (len(candidates) - 1)
        return min(maximum, base << (position - 1))

    def _handle_end_quorum_epoch(self, request: InboundRequest, body: messages.EndQuorumEpochRequest,
                                 now_ms: int) -> messages.EndQuorumEpochResponse:
        """EndQuorumEpoch (API 54): the leader resigns.

        1. ClusterId mismatch -> INCONSISTENT_CLUSTER_ID; not the metadata partition -> INVALID_REQUEST.
        2. Epoch below ours -> FENCED_LEADER_EPOCH; negative leader id -> INVALID_REQUEST.
        3. Follow what the request says about the epoch and leader.
        4. A follower of that leader moves its fetch timeout to its strict exponential backoff (the
           most caught-up preferred candidate starts at once) and stops vouching for the leader, so
           that it grants pre-votes.
        """
        version = request.api_version
        if not self._valid_cluster_id(body.cluster_id):
            return rpc.end_quorum_epoch_response(version, rpc.INCONSISTENT_CLUSTER_ID)
        partition = rpc.end_quorum_epoch_partition(body)
        if partition is None:
            return rpc.end_quorum_epoch_response(version, rpc.INVALID_REQUEST)
        error = self._follow_announced_leader(partition.leader_id, partition.leader_epoch,
                                              body.leader_endpoints, now_ms)
        state = self._state
        if error == rpc.NONE and isinstance(state, FollowerState) and state.leader_id == partition.leader_id:
            if version >= 1:
                candidates = [ReplicaKey(c.candidate_id, c.candidate_directory_id)
                              for c in partition.preferred_candidates]
            else:
                candidates = [ReplicaKey(voter_id) for voter_id in partition.preferred_successors]
            state.fetch_deadline_ms = now_ms + self._end_epoch_backoff_ms(candidates)
            state.has_fetched = False
        return rpc.end_quorum_epoch_response(version, rpc.NONE, error, self._state.epoch, self.leader_id,
                                             self._leader_endpoint_for(request.listener))

    def _handle_end_quorum_epoch_response(self, pending: _Pending, body: messages.EndQuorumEpochResponse,
                                          now_ms: int) -> bool:
        settled = self._settle_epoch_response(body, now_ms)
        if settled is not None:
            return settled
        state = self._state
        if isinstance(state, ResignedState) and pending.destination.node_id is not None:
            state.unacknowledged.discard(pending.destination.node_id)
        return True

    # =========================================================================================
    # Fetch (leader side)
    # =========================================================================================

    def _handle_fetch(self, request: InboundRequest, body: messages.FetchRequest, now_ms: int) -> None:
        """Fetch (API 1) from a follower, an observer or a replica looking for the leader.

        1. ClusterId mismatch -> INCONSISTENT_CLUSTER_ID; not the metadata partition -> INVALID_REQUEST
           (top level).
        2. Negative MaxWaitMs, fetch offset or last fetched epoch, or a last fetched epoch above the
           request's leader epoch -> INVALID_REQUEST.
        3. Try to answer now (``_try_complete_fetch``); an answer without records, divergence or
           snapshot id waits in purgatory up to MaxWaitMs for new data or a new high watermark.
        """
        version = request.api_version
        if not self._valid_cluster_id(body.cluster_id):
            self._reply(request, rpc.fetch_response(version, rpc.INCONSISTENT_CLUSTER_ID))
            return
        partition = rpc.fetch_partition(body)
        if partition is None:
            self._reply(request, rpc.fetch_response(version, rpc.INVALID_REQUEST))
            return
        if (body.max_wait_ms < 0 or partition.fetch_offset < 0 or partition.last_fetched_epoch < 0
                or partition.last_fetched_epoch > partition.current_leader_epoch):
            self._reply(request, self._fetch_error(request, rpc.INVALID_REQUEST))
            return
        replica_id = body.replica_state.replica_id if body.replica_state.replica_id >= 0 else body.replica_id
        key = ReplicaKey(replica_id, partition.replica_directory_id)
        state = self._state
        if (isinstance(state, LeaderState) and partition.current_leader_epoch == state.epoch
                and state.is_voter(key) and key.id != self._local_key.id):
            # A voter fetching in our epoch follows us (even when it must truncate first): it
            # acknowledged the epoch and counts for check-quorum when the request arrives.
            state.acknowledged.add(key.id)
            state.record_fetching_voter(key.id, now_ms)
        response, final = self._try_complete_fetch(request, key, partition, now_ms)
        if final or body.max_wait_ms == 0:
            self._reply(request, response)
            return
        state = self._state
        hwm = state.high_watermark if isinstance(state, LeaderState) else None
        self._parked.append(_ParkedFetch(request, key, partition, now_ms + body.max_wait_ms, hwm))

    def _fetch_error(self, request: InboundRequest, error: int) -> messages.FetchResponse:
        return rpc.fetch_response(request.api_version, partition_error=error, epoch=self._state.epoch,
                                  leader_id=self.leader_id, log_start_offset=self._log.start_offset(),
                                  leader=self._leader_endpoint_for(request.listener))

    def _validate_fetch_position(self, fetch_offset: int, last_fetched_epoch: int
                                 ) -> tuple[str, int, int]:
        """Kafka's ``validateOffsetAndEpoch``: ("valid"|"diverging"|"snapshot", epoch, offset).

        1. Fetch offset 0 while a snapshot other than the bootstrap one exists -> that snapshot.
        2. Offset 0 of a log starting at 0 -> valid.
        3. Below the log start, or at it with another epoch than the start snapshot's, or a last
           fetched epoch older than that snapshot -> the latest snapshot.
        4. The leader's end offset for the last fetched epoch: another epoch, or an end below the fetch
           offset -> diverging at that (epoch, end offset). Otherwise valid.
        """
        snapshot = self._log.latest_snapshot()
        start = self._log.start_offset()
        if fetch_offset == 0 and snapshot is not None and snapshot != BOOTSTRAP_SNAPSHOT_ID:
            return "snapshot", snapshot.epoch, snapshot.end_offset
        if start == 0 and fetch_offset == 0:
            return "valid", 0, 0
        if start > 0 and snapshot is not None:
            start_epoch = snapshot.epoch if snapshot.end_offset == start else None
            if (fetch_offset < start
                    or (start_epoch is not None
                        and (last_fetched_epoch < start_epoch
                             or (fetch_offset == start and last_fetched_epoch != start_epoch)))):
                return "snapshot", snapshot.epoch, snapshot.end_offset
        epoch, end_offset = self._log.end_offset_for_epoch(last_fetched_epoch)
        if epoch != last_fetched_epoch or end_offset < fetch_offset:
            return "diverging", epoch, end_offset
        return "valid", epoch, fetch_offset

    def _try_complete_fetch(self, request: InboundRequest, key: ReplicaKey,
                            partition: messages.FetchRequest.FetchPartition,
                            now_ms: int, arrived: bool = True) -> tuple[messages.FetchResponse, bool]:
        """The answer to a fetch as of now, and whether it must go out now (error, records,
        divergence or snapshot id).

        1. Epoch below ours -> FENCED_LEADER_EPOCH, above -> UNKNOWN_LEADER_EPOCH, not the leader ->
           NOT_LEADER_OR_FOLLOWER, resigning -> BROKER_NOT_AVAILABLE; the answer names the current
           leader and its endpoint so that the fetcher moves on.
        2. Validate the position (``_validate_fetch_position``).
        3. Valid: read from the fetch offset; when the fetch has just ``arrived`` (not when a parked
           one is answered later), record the replica's progress, which may advance the high
           watermark. The fetch offset, fetch time and caught-up time are those of the arrival
           (Kafka's ``LeaderState.updateReplicaState``): a parked fetch answered after its sender
           died must not make the replica look alive with its old end offset.
        """
        state = self._state
        error = rpc.NONE
        if partition.current_leader_epoch < state.epoch:
            error = rpc.FENCED_LEADER_EPOCH
        elif partition.current_leader_epoch > state.epoch:
            error = rpc.UNKNOWN_LEADER_EPOCH
        elif not isinstance(state, LeaderState):
            error = rpc.NOT_LEADER_OR_FOLLOWER
        elif self._shutting_down:
            error = rpc.BROKER_NOT_AVAILABLE
        if error != rpc.NONE or not isinstance(state, LeaderState):
            return self._fetch_error(request, error), True
        kind, epoch, offset = self._validate_fetch_position(partition.fetch_offset,
                                                            partition.last_fetched_epoch)
        records = b""
        diverging: tuple[int, int] | None = None
        snapshot_id: SnapshotId | None = None
        if kind == "valid":
            # Like Kafka's raft leader, read up to its own fetch size whatever the request asks.
            records = self._log.read(partition.fetch_offset, self._config.max_fetch_bytes)
            if arrived and state.update_replica_state(key, now_ms, partition.fetch_offset,
                                                      self._log.end_offset()):
                self._on_leader_high_watermark(state)
        elif kind == "diverging":
            diverging = (epoch, offset)
        else:
            snapshot_id = SnapshotId(offset, epoch)
        hwm = state.high_watermark if state.high_watermark is not None else -1
        response = rpc.fetch_response(request.api_version, partition_error=rpc.NONE, epoch=state.epoch,
                                      leader_id=self._local_key.id, high_watermark=hwm,
                                      log_start_offset=self._log.start_offset(), records=records,
                                      diverging=diverging, snapshot_id=snapshot_id,
                                      leader=self._leader_endpoint_for(request.listener))
        return response, bool(records) or kind != "valid"

    def _on_leader_high_watermark(self, state: LeaderState) -> None:
        if state.high_watermark is not None:
            self._set_committed(state.high_watermark)
            change = self._voter_change
            if (change is not None and change.record_offset is not None
                    and state.high_watermark > change.record_offset):
                self._finish_voter_change(rpc.NONE)

    def _complete_parked_fetches(self, now_ms: int) -> None:
        """Answer parked fetches whose wait is over: new data, a new high watermark, the wait time
        elapsed, or this replica is no longer the leader of that epoch."""
        if not self._parked:
            return
        state = self._state
        is_leader = isinstance(state, LeaderState)
        hwm = state.high_watermark if isinstance(state, LeaderState) else None
        end = self._log.end_offset()
        still: list[_ParkedFetch] = []
        ready: list[_ParkedFetch] = []
        for parked in self._parked:
            if (not is_leader or now_ms >= parked.deadline_ms or end > parked.partition.fetch_offset
                    or hwm != parked.high_watermark or parked.partition.current_leader_epoch != state.epoch):
                ready.append(parked)
            else:
                still.append(parked)
        self._parked = still
        for parked in ready:
            response, _ = self._try_complete_fetch(parked.request, parked.key, parked.partition, now_ms,
                                                   arrived=False)
            self._reply(parked.request, response)

    # =========================================================================================
    # Fetch (follower side)
    # =========================================================================================

    def _handle_fetch_response(self, pending: _Pending, body: messages.FetchResponse, now_ms: int) -> bool:
        """Handle a Fetch answer.

        1. Top-level error -> back off.
        2. News about the epoch or leader (CurrentLeader, NodeEndpoints) is handled in common: a
           replica that knew no leader follows the one named, and keeps handling the answer.
        3. DivergingEpoch -> truncate to the end offset of that epoch as both logs agree (never below
           the high watermark), forget voter sets read from the truncated records, fetch again.
        4. SnapshotId -> start copying that snapshot with FetchSnapshot.
        5. Records -> append them, flush, apply their control records; the high watermark becomes
           min(leader's high watermark, our end offset).
        6. The fetch succeeded: the fetch timeout restarts.
        """
        if body.error_code != rpc.NONE:
            return False
        if len(body.responses) != 1 or len(body.responses[0].partitions) != 1:
            return False
        partition = body.responses[0].partitions[0]
        leader_id = rpc.optional_id(partition.current_leader.leader_id)
        state = self._state
        if (isinstance(state, FollowerState) and partition.error_code == rpc.NOT_LEADER_OR_FOLLOWER
                and pending.destination.node_id == state.leader_id):
            state.has_fetched = False  # our leader no longer leads (it resigned): stop vouching for it
        endpoints = (rpc.node_endpoint(body.node_endpoints, leader_id, self._listener)
                     if leader_id is not None else ())
        handled = self._handle_common_response(partition.error_code, leader_id,
                                               partition.current_leader.leader_epoch, endpoints, now_ms)
        if handled is not None:
            return handled
        if partition.error_code != rpc.NONE:
            return False
        state = self._state
        if not isinstance(state, FollowerState) or state.leader_id != leader_id:
            return True
        if self._log.end_offset() != pending.fetch_offset:
            return True  # the log moved since the request went out; fetch again from the new end
        diverging = partition.diverging_epoch
        snapshot = partition.snapshot_id
        if diverging.epoch >= 0:
            self._truncate_to_end_offset(diverging.epoch, diverging.end_offset)
        elif snapshot.end_offset >= 0 or snapshot.epoch >= 0:
            if snapshot.end_offset < 0 or snapshot.epoch < 0:
                return False
            if state.fetching_snapshot is not None:
                state.fetching_snapshot.abort()
            state.fetching_snapshot = SnapshotFetch(snapshot.end_offset, snapshot.epoch)
        else:
            if partition.records:
                start = self._log.end_offset()
                try:
                    self._log.append_bytes(partition.records)
                except (DecodeError, ValueError) as exc:
                    log.warning("node %d cannot append the records from leader %d: %s", self._local_key.id,
                                state.leader_id, exc)
                    return False
                self._log.flush()
                self._apply_log_batches(start)
            if partition.high_watermark >= 0:
                self._set_committed(min(partition.high_watermark, self._log.end_offset()))
        state.has_fetched = True
        state.fetch_deadline_ms = now_ms + self._config.fetch_timeout_ms
        return True

    def _truncate_to_end_offset(self, epoch: int, end_offset: int) -> None:
        """Kafka's ``truncateToEndOffset``: truncate to where both logs still agree on ``epoch``."""
        if epoch == 0:
            offset = min(end_offset, self._log.end_offset())
        else:
            local_epoch, local_end = self._log.end_offset_for_epoch(epoch)
            offset = min(local_end, end_offset) if local_epoch == epoch else local_end
        offset = max(offset, self._log.start_offset())
        if end_offset < self._committed or offset < self._committed:
            raise RaftInvariantError(f"node {self._local_key.id}: the leader asks to truncate to "
                                     f"{min(end_offset, offset)}, below the high watermark {self._committed}")
        log.info("node %d truncates its log to %d (diverging epoch %d, end offset %d)", self._local_key.id,
                 offset, epoch, end_offset)
        self._log.truncate_to(offset)
        self._history.truncate_new_entries(self._log.end_offset())
        if isinstance(self._state, LeaderState):
            self._state.update_voter_set(self._history.last_voter_set())

    def _handle_fetch_snapshot_response(self, pending: _Pending, body: messages.FetchSnapshotResponse,
                                        now_ms: int) -> bool:
        """Handle a FetchSnapshot answer.

        1. Top-level error or no metadata partition -> back off; news about the leader in common.
        2. SNAPSHOT_NOT_FOUND (the leader dropped it) -> forget the copy and fetch again.
        3. A chunk for another snapshot or position -> start over.
        4. Append the chunk to the ``receive_snapshot`` writer (a ``.part`` file: nothing of the
           snapshot is held in memory); once the copy has ``Size`` bytes, ``freeze`` installs it and
           replaces the log, the voter-set history is reloaded, the image is reloaded from it over the
           next polls and the high watermark moves to its end.
        """
        if body.error_code != rpc.NONE or len(body.topics) != 1 or len(body.topics[0].partitions) != 1:
            return False
        topic = body.topics[0]
        partition = topic.partitions[0]
        if topic.name != rpc.METADATA_TOPIC or partition.index != rpc.METADATA_PARTITION:
            return False
        leader_id = rpc.optional_id(partition.current_leader.leader_id)
        endpoints = (rpc.node_endpoint(body.node_endpoints, leader_id, self._listener)
                     if leader_id is not None else ())
        handled = self._handle_common_response(partition.error_code, leader_id,
                                               partition.current_leader.leader_epoch, endpoints, now_ms)
        if handled is not None:
            return handled
        state = self._state
        if not isinstance(state, FollowerState) or state.fetching_snapshot is None:
            return True
        fetching = state.fetching_snapshot
        if (partition.error_code == rpc.SNAPSHOT_NOT_FOUND or partition.snapshot_id.end_offset < 0
                or partition.snapshot_id.epoch < 0):
            fetching.abort()
            state.fetching_snapshot = None
            state.fetch_deadline_ms = now_ms + self._config.fetch_timeout_ms
            return True
        if partition.error_code != rpc.NONE:
            return False
        received = (partition.snapshot_id.end_offset, partition.snapshot_id.epoch)
        chunk = partition.unaligned_records or b""
        if (received != (fetching.end_offset, fetching.epoch) or partition.position != fetching.position
                or fetching.position + len(chunk) > partition.size):
            fetching.abort()
            state.fetching_snapshot = None
            return False
        snapshot_id = SnapshotId(fetching.end_offset, fetching.epoch)
        try:
            if fetching.writer is None:
                fetching.writer = self._log.receive_snapshot(snapshot_id)
            fetching.writer.append(chunk)
        except (DecodeError, ValueError) as exc:
            log.warning("node %d cannot copy snapshot %s: %s", self._local_key.id, snapshot_id, exc)
            fetching.abort()
            state.fetching_snapshot = None
            return False
        fetching.position += len(chunk)
        if fetching.position == partition.size:
            state.fetching_snapshot = None
            writer = fetching.writer
            if snapshot_id.end_offset < self._committed:
                writer.abort()
                raise RaftInvariantError(f"node {self._local_key.id}: snapshot {snapshot_id} is below the "
                                         f"high watermark {self._committed}")
            self._abort_work()  # its reads may point into the log and snapshots being replaced
            try:
                writer.freeze()
            except (DecodeError, ValueError) as exc:
                writer.abort()
                log.warning("node %d cannot install snapshot %s: %s", self._local_key.id, snapshot_id, exc)
                return False
            self._reload_image = True
            self._load_partition_state()
            self._set_committed(snapshot_id.end_offset)
            log.info("node %d installed snapshot %s", self._local_key.id, snapshot_id)
        state.has_fetched = True
        state.fetch_deadline_ms = now_ms + self._config.fetch_timeout_ms
        return True

    # =========================================================================================
    # FetchSnapshot (leader side)
    # =========================================================================================

    def _handle_fetch_snapshot(self, request: InboundRequest, body: messages.FetchSnapshotRequest,
                               now_ms: int) -> messages.FetchSnapshotResponse:
        """FetchSnapshot (API 59).

        1. ClusterId mismatch -> INCONSISTENT_CLUSTER_ID; not one topic with one partition ->
           INVALID_REQUEST (top level); another partition -> UNKNOWN_TOPIC_OR_PARTITION.
        2. Leader-only checks as for Fetch (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
           NOT_LEADER_OR_FOLLOWER, BROKER_NOT_AVAILABLE).
        3. Unknown snapshot, or the bootstrap snapshot -> SNAPSHOT_NOT_FOUND.
        4. Position outside [0, size) -> POSITION_OUT_OF_RANGE.
        5. Answer up to MaxBytes from the position; the fetch counts for check-quorum.
        """
        version = request.api_version
        if not self._valid_cluster_id(body.cluster_id):
            return rpc.fetch_snapshot_response(version, rpc.INCONSISTENT_CLUSTER_ID)
        if len(body.topics) != 1 or len(body.topics[0].partitions) != 1:
            return rpc.fetch_snapshot_response(version, rpc.INVALID_REQUEST)
        topic = body.topics[0]
        partition = topic.partitions[0]
        leader = self._leader_endpoint_for(request.listener)
        if topic.name != rpc.METADATA_TOPIC or partition.partition != rpc.METADATA_PARTITION:
            return rpc.fetch_snapshot_response(version, partition_error=rpc.UNKNOWN_TOPIC_OR_PARTITION,
                                               topic=topic.name, partition=partition.partition,
                                               leader_id=self.leader_id, leader=leader)
        state = self._state
        error = rpc.NONE
        if partition.current_leader_epoch < state.epoch:
            error = rpc.FENCED_LEADER_EPOCH
        elif partition.current_leader_epoch > state.epoch:
            error = rpc.UNKNOWN_LEADER_EPOCH
        elif not isinstance(state, LeaderState):
            error = rpc.NOT_LEADER_OR_FOLLOWER
        elif self._shutting_down:
            error = rpc.BROKER_NOT_AVAILABLE
        if error != rpc.NONE or not isinstance(state, LeaderState):
            return rpc.fetch_snapshot_response(version, partition_error=error, epoch=state.epoch,
                                               leader_id=self.leader_id, leader=leader)
        snapshot_id = SnapshotId(partition.snapshot_id.end_offset, partition.snapshot_id.epoch)
        size = self._snapshot_size(snapshot_id)
        if size is None or snapshot_id == BOOTSTRAP_SNAPSHOT_ID:
            return rpc.fetch_snapshot_response(version, partition_error=rpc.SNAPSHOT_NOT_FOUND,
                                               epoch=state.epoch, leader_id=self.leader_id, leader=leader)
        if partition.position < 0 or partition.position >= size:
            return rpc.fetch_snapshot_response(version, partition_error=rpc.POSITION_OUT_OF_RANGE,
                                               epoch=state.epoch, leader_id=self.leader_id, leader=leader)
        max_bytes = min(max(body.max_bytes, 1), self._config.max_fetch_bytes)
        data = self._log.read_snapshot(snapshot_id, partition.position, max_bytes)
        state.record_fetching_voter(body.replica_id, now_ms)
        return rpc.fetch_snapshot_response(version, partition_error=rpc.NONE, epoch=state.epoch,
                                           leader_id=self._local_key.id, snapshot_id=snapshot_id, size=size,
                                           position=partition.position, data=data, leader=leader)

    def _snapshot_size(self, snapshot_id: SnapshotId) -> int | None:
        latest = self._log.latest_snapshot()
        if latest is None or snapshot_id.end_offset > latest.end_offset or snapshot_id.end_offset < 0:
            return None
        try:
            return self._log.snapshot_size(snapshot_id)
        except (LookupError, OSError, ValueError):
            return None

    # =========================================================================================
    # Polling
    # =========================================================================================

    def _poll_state(self, now_ms: int) -> None:
        state = self._state
        if isinstance(state, LeaderState):
            self._poll_leader(state, now_ms)
        elif isinstance(state, CandidateState):
            self._poll_candidate(state, now_ms)
        elif isinstance(state, ProspectiveState):
            self._poll_prospective(state, now_ms)
        elif isinstance(state, FollowerState):
            self._poll_follower(state, now_ms)
        elif isinstance(state, UnattachedState):
            self._poll_unattached(state, now_ms)
        else:
            self._poll_resigned(state, now_ms)

    def _poll_leader(self, state: LeaderState, now_ms: int) -> None:
        """1. Check-quorum lost (no majority fetched within 1.5 x fetch timeout) -> Resigned.
        2. Flush, then count the durable end offset (the high watermark may advance).
        3. BeginQuorumEpoch to voters that have not acknowledged the epoch, every fetch timeout / 2."""
        if state.check_quorum_expired(now_ms):
            log.info("node %d resigns: no majority fetched in epoch %d", self._local_key.id, state.epoch)
            self._to_resigned(now_ms)
            return
        self._expire_voter_change(now_ms)
        if self._log.flushed_offset() < self._log.end_offset():
            self._log.flush()
        if state.update_local_state(self._log.flushed_offset(), now_ms):
            self._on_leader_high_watermark(state)
        last_voters_offset = self._history.last_voters_offset()
        if (not self._is_voter() and state.high_watermark is not None and last_voters_offset is not None
                and last_voters_offset < state.high_watermark):
            log.info("node %d resigns: it was removed from the voter set (committed below %d)",
                     self._local_key.id, state.high_watermark)
            self._to_resigned(now_ms)
            return
        if now_ms >= state.next_begin_quorum_ms:
            unacknowledged = state.unacknowledged_voters()
            for voter_id in unacknowledged:
                info = state.voters.voters[voter_id]
                address = self._address(voter_id, info.endpoints)
                if address is not None and self._requests.is_ready(address, now_ms):
                    self._send(address, rpc.BEGIN_QUORUM_EPOCH, rpc.begin_quorum_epoch_request(
                        self._identity.cluster_id, state.epoch, self._local_key.id, info.key,
                        self._identity.listeners), now_ms)
            state.next_begin_quorum_ms = now_ms + max(self._config.fetch_timeout_ms // 2, 1)

    def _send_votes(self, election: Election, epoch: int, pre_vote: bool, now_ms: int) -> None:
        voters = self.voters
        for voter_id in election.unrecorded():
            info = voters.voters.get(voter_id)
            if info is None or voter_id == self._local_key.id:
                continue
            address = self._address(voter_id, info.endpoints)
            if address is None or not self._requests.is_ready(address, now_ms):
                continue
            body = rpc.vote_request(self._identity.cluster_id, epoch, self._local_key, info.key,
                                    self._log.last_epoch(), self._log.end_offset(), pre_vote)
            self._send(address, rpc.VOTE, body, now_ms, pre_vote=pre_vote)

    def _poll_candidate(self, state: CandidateState, now_ms: int) -> None:
        """1. Backing off after a lost election: when done, start a pre-vote round (Prospective).
        2. Election timeout -> back off (binary exponential, capped).
        3. Otherwise ask the voters that have not answered."""
        if not self._is_voter():
            self._to_unattached(state.epoch, now_ms)
            return
        if state.backoff_until_ms is not None:
            if now_ms >= state.backoff_until_ms and not self._shutting_down:
                self._to_prospective(now_ms, state.retries + 1)
            return
        if now_ms >= state.election_deadline_ms:
            state.backoff_until_ms = now_ms + self._backoff_ms(state.retries)
            return
        self._send_votes(state.election, state.epoch, False, now_ms)

    def _poll_prospective(self, state: ProspectiveState, now_ms: int) -> None:
        """1. Backing off: when done, start a new pre-vote round.
        2. Election timeout -> lost (follow the known leader again, or back off).
        3. Otherwise ask the voters that have not answered."""
        if not self._is_voter():
            self._leave_state()
            self._state = UnattachedState(state.epoch, state.voted_key, state.leader_id,
                                          self._election_deadline(now_ms))
            return
        if state.backoff_until_ms is not None:
            if now_ms >= state.backoff_until_ms and not self._shutting_down:
                self._to_prospective(now_ms, state.retries + 1)
            return
        if now_ms >= state.election_deadline_ms:
            self._prospective_lost(now_ms)
            return
        self._send_votes(state.election, state.epoch, True, now_ms)

    def _poll_follower(self, state: FollowerState, now_ms: int) -> None:
        """1. A voter whose fetch timeout expired starts a pre-vote (Prospective).
        2. An observer whose fetch timeout expired also asks the bootstrap servers.
        3. While the leader's connection backs off, ask the bootstrap servers for news.
        4. Otherwise keep one Fetch (or FetchSnapshot while copying a snapshot) in flight to the leader;
           the log is flushed first so that the fetch offset is durable."""
        if now_ms >= state.fetch_deadline_ms:
            if self._is_voter() and not self._shutting_down:
                log.info("node %d: fetch timeout in epoch %d", self._local_key.id, state.epoch)
                self._to_prospective(now_ms)
                return
            if self._fetch_from_any_bootstrap(now_ms):
                return
        leader = self._address(state.leader_id, state.leader_endpoints)
        if leader is None:
            return
        if self._requests.is_backing_off(leader, now_ms):
            self._fetch_from_any_bootstrap(now_ms)
            return
        if not self._requests.is_ready(leader, now_ms):
            return
        if state.fetching_snapshot is None and self._maybe_send_voter_request(state, leader, now_ms):
            return
        if state.fetching_snapshot is not None:
            fetching = state.fetching_snapshot
            body: Struct = rpc.fetch_snapshot_request(
                self._identity.cluster_id, self._local_key, state.epoch,
                SnapshotId(fetching.end_offset, fetching.epoch), fetching.position,
                self._config.max_fetch_bytes)
            self._send(leader, rpc.FETCH_SNAPSHOT, body, now_ms)
        else:
            self._send_fetch(leader, now_ms)

    def _send_fetch(self, destination: Address, now_ms: int) -> None:
        if self._log.flushed_offset() < self._log.end_offset():
            self._log.flush()
        end = self._log.end_offset()
        body = rpc.fetch_request(self._identity.cluster_id, self._local_key, self._state.epoch, end,
                                 self._log.last_epoch(), self._log.start_offset(),
                                 self._config.fetch_max_wait_ms, self._config.max_fetch_bytes)
        self._send(destination, rpc.FETCH, body, now_ms, fetch_offset=end)

    def _fetch_from_any_bootstrap(self, now_ms: int) -> bool:
        """Send one Fetch to a random ready bootstrap server when nothing else is in flight; the answer
        names the leader (Kafka's ``maybeSendFetchToAnyBootstrap``). True if one was sent."""
        if self._requests.any_in_flight():
            return False
        addresses = self._bootstrap_addresses()
        if not addresses:
            return False
        start = self._rng.randrange(len(addresses))
        for index in range(len(addresses)):
            address = addresses[(start + index) % len(addresses)]
            if self._requests.is_ready(address, now_ms):
                self._send_fetch(address, now_ms)
                return True
        return False

    def _poll_unattached(self, state: UnattachedState, now_ms: int) -> None:
        """A voter whose election timeout expired starts a pre-vote; until then (and for observers
        always) fetch from the bootstrap servers to discover the leader."""
        if self._is_voter() and now_ms >= state.election_deadline_ms and not self._shutting_down:
            self._to_prospective(now_ms)
            return
        self._fetch_from_any_bootstrap(now_ms)

    def _poll_resigned(self, state: ResignedState, now_ms: int) -> None:
        """Send EndQuorumEpoch to the voters that have not acknowledged it; after the election
        timeout, a voter starts a pre-vote round and a non-voter moves to the next epoch."""
        if now_ms >= state.election_deadline_ms and not self._shutting_down:
            if self._is_voter():
                self._to_prospective(now_ms)
            else:
                self._to_unattached(state.epoch + 1, now_ms)
            return
        for voter_id in sorted(state.unacknowledged):
            info = self.voters.voters.get(voter_id)
            if info is None:
                continue
            address = self._address(voter_id, info.endpoints)
            if address is not None and self._requests.is_ready(address, now_ms):
                self._send(address, rpc.END_QUORUM_EPOCH, rpc.end_quorum_epoch_request(
                    self._identity.cluster_id, state.epoch, self._local_key.id, state.preferred_candidates,
                    self._identity.listeners), now_ms)

    def _next_poll_ms(self, now_ms: int) -> int:
        if self._image_pending or self._work is not None:
            return now_ms  # image work left: poll again at once (the driver serves its sockets first)
        state = self._state
        deadlines: list[int] = [now_ms + max(self._config.election_timeout_ms, 1)]
        if isinstance(state, LeaderState):
            deadlines.append(state.check_quorum_deadline_ms)
            if state.unacknowledged_voters():
                deadlines.append(state.next_begin_quorum_ms)
            if self._voter_change is not None:
                deadlines.append(self._voter_change.deadline_ms)
        elif isinstance(state, CandidateState | ProspectiveState):
            deadlines.append(state.backoff_until_ms if state.backoff_until_ms is not None
                             else state.election_deadline_ms)
        elif isinstance(state, FollowerState):
            deadlines.append(state.fetch_deadline_ms)
            if state.next_voter_request_ms > now_ms and (self._wants_auto_join() or (
                    not state.has_updated_leader and self._needs_voter_update())):
                deadlines.append(state.next_voter_request_ms)
        elif isinstance(state, UnattachedState):
            if self._is_voter():
                deadlines.append(state.election_deadline_ms)
        elif not self._shutting_down:
            deadlines.append(state.election_deadline_ms)
        request_deadline = self._requests.next_deadline_ms(now_ms)
        if request_deadline is not None:
            deadlines.append(request_deadline)
        deadlines.extend(parked.deadline_ms for parked in self._parked)
        # Deadlines already past were acted on in this poll, or wait for a request in flight (an
        # observer past its fetch timeout asks the bootstrap servers one request at a time).
        return min(deadline for deadline in deadlines if deadline > now_ms)

    # =========================================================================================
    # Voter changes: AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter (Kafka's AddVoterHandler,
    # RemoveVoterHandler and UpdateVoterHandler)
    # =========================================================================================

    def upgrade_kraft_version(self, now_ms: int) -> int:
        """kraft.version 0 -> 1 on the leader (see ``api.RaftDriverFacing.upgrade_kraft_version``).

        1. Not the leader (or resigning) -> NotLeaderError; kraft.version already 1 -> -1.
        2. Every voter must support kraft.version 1: the leader by its own range, the others by the
           range they sent in UpdateRaftVoter to this leader; otherwise KRaftUpgradeError names them.
        3. One control batch: KRaftVersionRecord(1) and a VotersRecord of the voters with the
           directory ids, endpoints and ranges they reported (ZERO and the static endpoint otherwise);
           both apply at once.
        """
        state = self._state
        if not isinstance(state, LeaderState) or self._shutting_down:
            raise NotLeaderError(f"node {self._identity.node_id} is not the leader (epoch {state.epoch}, "
                                 f"{role_name(state)})")
        if self._history.kraft_version() >= 1:
            return -1
        current = self.voters
        voters: dict[int, VoterInfo] = {}
        unsupported: list[int] = []
        for voter_id in sorted(current.voters):
            info = current.voters[voter_id]
            if voter_id == self._local_key.id:
                low, high = LOCAL_KRAFT_VERSIONS
                voters[voter_id] = VoterInfo(self._local_key, self._identity.listeners or info.endpoints,
                                             low, high)
            else:
                reported = self._voter_updates.get(voter_id)
                voters[voter_id] = reported if reported is not None else VoterInfo(
                    ReplicaKey(voter_id, info.key.directory_id), info.endpoints, info.min_kraft_version,
                    info.max_kraft_version)
            if not voters[voter_id].min_kraft_version <= 1 <= voters[voter_id].max_kraft_version:
                unsupported.append(voter_id)
        if unsupported:
            raise KRaftUpgradeError(
                f"Cannot upgrade kraft.version to 1: voters {unsupported} have not reported support for "
                f"kraft.version 1 (they send UpdateRaftVoter to the leader once they follow it)")
        base = self._log.end_offset()
        batch = control_batch(base, state.epoch, now_ms, [
            messages.KRaftVersionRecord(version=0, k_raft_version=1), voters_record(VoterSet(voters))])
        self._log.append(batch)
        self._apply_log_batches(base)
        log.info("node %d upgrades kraft.version to 1 at offset %d", self._local_key.id, base)
        return batch.last_offset

    def _finish_voter_change(self, error: int, message: str | None = None) -> None:
        """End the pending operation, answering its request when someone still waits for it."""
        change = self._voter_change
        if change is None:
            return
        self._voter_change = None
        if change.request is not None:
            self._reply(change.request, changes.change_response(change.kind, error, message))

    def _expire_voter_change(self, now_ms: int) -> None:
        change = self._voter_change
        if change is not None and now_ms >= change.deadline_ms:
            log.info("node %d: the %s of voter %s timed out", self._local_key.id, change.kind, change.key)
            self._finish_voter_change(rpc.REQUEST_TIMED_OUT)

    def _voter_change_blocked(self, state: LeaderState, now_ms: int, action: str) -> tuple[int, str] | None:
        """Add steps 5-8 / remove steps 4-7: a pending change, no high watermark in this epoch,
        kraft.version 0, or the latest VotersRecord not committed."""
        self._expire_voter_change(now_ms)
        if self._voter_change is not None:
            return rpc.REQUEST_TIMED_OUT, changes.PENDING_CHANGE
        if state.high_watermark is None:
            return rpc.REQUEST_TIMED_OUT, changes.NO_HIGH_WATERMARK
        if self._history.kraft_version() == 0:
            return rpc.UNSUPPORTED_VERSION, changes.unsupported_kraft_version(action)
        last = self._history.last_voters_offset()
        if last is None or last >= state.high_watermark:
            return rpc.REQUEST_TIMED_OUT, changes.uncommitted_voters(last, state.high_watermark)
        return None

    def _append_voters(self, state: LeaderState, voters: VoterSet, now_ms: int) -> int:
        """Append a control batch with the VotersRecord of ``voters``; it applies at once."""
        base = self._log.end_offset()
        self._log.append(control_batch(base, state.epoch, now_ms, [voters_record(voters)]))
        self._apply_log_batches(base)
        return base

    def _handle_add_voter(self, request: InboundRequest, body: messages.AddRaftVoterRequest,
                          now_ms: int) -> None:
        """AddRaftVoter, checks in the order of Kafka's ``AddVoterHandler``:

        1. ClusterId mismatch -> INCONSISTENT_CLUSTER_ID. 2. Not the leader -> NOT_LEADER_OR_FOLLOWER,
        resigning -> BROKER_NOT_AVAILABLE. 3. Invalid voter key, 4. no default-listener endpoint ->
        INVALID_REQUEST; before 4, an endpoint whose host is no valid host name or IP address ->
        INVALID_REQUEST (not a Kafka check). 5-8. ``_voter_change_blocked``. 9. Already a voter ->
        DUPLICATE_VOTER.
        10. ApiVersions cannot go to the new voter now -> REQUEST_TIMED_OUT. 11. Otherwise the change is
        pending (deadline: request timeout) and goes on in ``_on_new_voter_api_versions``.
        """
        def answer(error: int, message: str | None = None) -> None:
            self._reply(request, changes.add_response(error, message))

        state = self._voter_change_leader(body.cluster_id, body.voter_id, body.voter_directory_id, "Add")
        if not isinstance(state, LeaderState):
            answer(*state)
            return
        key = ReplicaKey(body.voter_id, body.voter_directory_id)
        endpoints = tuple(Endpoint(item.name, item.host, item.port) for item in body.listeners)
        invalid = changes.invalid_endpoint("Add", endpoints)
        if invalid is not None:
            answer(rpc.INVALID_REQUEST, invalid)
            return
        default = next((endpoint for endpoint in endpoints if endpoint.name == self._listener), None)
        if default is None:
            answer(rpc.INVALID_REQUEST, changes.missing_default_endpoint(endpoints, self._listener))
            return
        blocked = self._voter_change_blocked(state, now_ms, "adding")
        if blocked is not None:
            answer(*blocked)
            return
        voters = self.voters
        if key.id in voters.voters:
            answer(rpc.DUPLICATE_VOTER, changes.duplicate_voter(key, voters))
            return
        address = Address(default.host, default.port, key.id)
        if not self._requests.is_ready(address, now_ms):
            answer(rpc.REQUEST_TIMED_OUT, changes.not_ready(key))
            return
        request_id = self._send(address, rpc.API_VERSIONS, messages.ApiVersionsRequest(
            client_software_name=changes.CLIENT_SOFTWARE_NAME,
            client_software_version=changes.CLIENT_SOFTWARE_VERSION), now_ms)
        self._voter_change = VoterChange(changes.ADD, key, now_ms + self._config.request_timeout_ms, request,
                                         request.api_version < 1 or body.ack_when_committed, endpoints,
                                         request_id)

    def _on_new_voter_api_versions(self, request_id: int, body: Struct | None, now_ms: int) -> None:
        """The new voter's ApiVersions answer (add steps 12-16).

        12. An error (None: the send failed, BROKER_NOT_AVAILABLE as Kafka's network channel says)
            -> REQUEST_TIMED_OUT. 13. Its kraft.version range excludes the finalized one ->
            INVALID_REQUEST. 14. Not caught up as an observer with exactly this replica key ->
            REQUEST_TIMED_OUT. 15. Append the VotersRecord with the new voter (it counts for the high
            watermark at once). 16. AckWhenCommitted = false answers now; the change stays pending.
        """
        change = self._voter_change
        state = self._state
        if (change is None or change.api_versions_request_id != request_id
                or not isinstance(state, LeaderState)):
            return
        change.api_versions_request_id = None
        if not isinstance(body, messages.ApiVersionsResponse) or body.error_code != rpc.NONE:
            error = (body.error_code if isinstance(body, messages.ApiVersionsResponse)
                     else rpc.BROKER_NOT_AVAILABLE)
            self._finish_voter_change(rpc.REQUEST_TIMED_OUT,
                                      changes.api_versions_error(rpc.error_name(error)))
            return
        finalized = self._history.kraft_version()
        feature = next((entry for entry in body.supported_features if entry.name == KRAFT_VERSION), None)
        low, high = (feature.min_version, feature.max_version) if feature is not None else (0, 0)
        if not low <= finalized <= high:
            self._finish_voter_change(rpc.INVALID_REQUEST,
                                      changes.kraft_version_range(change.key, low, high, finalized))
            return
        observer = state.observer_states.get(change.key)
        if (observer is None or observer.last_caught_up_ms < 0 or observer.last_fetch_ms < 0
                or now_ms - observer.last_fetch_ms >= changes.CAUGHT_UP_MAX_AGE_MS):
            self._finish_voter_change(rpc.REQUEST_TIMED_OUT, changes.lagging(change.key))
            return
        voters = self.voters
        new_voter = VoterInfo(change.key, change.endpoints, low, high)
        updated = VoterSet({**voters.voters, change.key.id: new_voter})
        change.record_offset = self._append_voters(state, updated, now_ms)
        log.info("node %d adds voter %s at offset %d", self._local_key.id, change.key, change.record_offset)
        if not change.ack_when_committed and change.request is not None:
            self._reply(change.request, changes.add_response(rpc.NONE))
            change.request = None

    def _voter_change_leader(self, cluster_id: str | None, voter_id: int, directory_id: Uuid,
                             verb: str) -> LeaderState | tuple[int, str | None]:
        """Steps 1-3 that AddRaftVoter and RemoveRaftVoter share: the leader's state, or the refusal."""
        if not self._valid_cluster_id(cluster_id):
            return rpc.INCONSISTENT_CLUSTER_ID, changes.cluster_id_mismatch(cluster_id,
                                                                            self._identity.cluster_id)
        state = self._state
        if not isinstance(state, LeaderState):
            return rpc.NOT_LEADER_OR_FOLLOWER, None
        if self._shutting_down:
            return rpc.BROKER_NOT_AVAILABLE, None
        if voter_id < 0 or directory_id == ZERO_UUID:
            return rpc.INVALID_REQUEST, f"{verb} voter request didn't include a valid voter"
        return state

    def _handle_remove_voter(self, request: InboundRequest, body: messages.RemoveRaftVoterRequest,
                             now_ms: int) -> None:
        """RemoveRaftVoter (Kafka's ``RemoveVoterHandler``): steps 1-2 as AddRaftVoter; 3. invalid
        voter key -> INVALID_REQUEST; 4-7. ``_voter_change_blocked``; 8. the exact key is no voter, or
        the only one -> VOTER_NOT_FOUND; 9. append the VotersRecord without it (pending until
        committed, then the answer; a removed leader resigns once it commits, see ``_poll_leader``)."""
        def answer(error: int, message: str | None = None) -> None:
            self._reply(request, changes.remove_response(error, message))

        state = self._voter_change_leader(body.cluster_id, body.voter_id, body.voter_directory_id, "Remove")
        if not isinstance(state, LeaderState):
            answer(*state)
            return
        key = ReplicaKey(body.voter_id, body.voter_directory_id)
        blocked = self._voter_change_blocked(state, now_ms, "removing")
        if blocked is not None:
            answer(*blocked)
            return
        voters = self.voters
        info = voters.voters.get(key.id)
        if info is None or info.key != key or len(voters.voters) == 1:
            answer(rpc.VOTER_NOT_FOUND, changes.voter_not_found(key, voters))
            return
        updated = VoterSet({voter_id: voter for voter_id, voter in voters.voters.items()
                            if voter_id != key.id})
        offset = self._append_voters(state, updated, now_ms)
        log.info("node %d removes voter %s at offset %d", self._local_key.id, key, offset)
        self._voter_change = VoterChange(changes.REMOVE, key, now_ms + self._config.request_timeout_ms,
                                         request, record_offset=offset)

    def _update_voter_answer(self, request: InboundRequest, error: int) -> messages.UpdateRaftVoterResponse:
        leader = self._leader_endpoint_for(request.listener)
        return messages.UpdateRaftVoterResponse(
            throttle_time_ms=0, error_code=error,
            current_leader=messages.UpdateRaftVoterResponse.CurrentLeader(
                leader_id=self.leader_id, leader_epoch=self._state.epoch,
                host=leader.host if leader is not None else "",
                port=leader.port if leader is not None else 0))

    def _handle_update_voter(self, request: InboundRequest, body: messages.UpdateRaftVoterRequest,
                             now_ms: int) -> messages.UpdateRaftVoterResponse:
        """UpdateRaftVoter (Kafka's ``UpdateVoterHandler``), answered at once, CurrentLeader in every answer:

        1. ClusterId mismatch -> INCONSISTENT_CLUSTER_ID. 2. Epoch below ours -> FENCED_LEADER_EPOCH,
        above -> UNKNOWN_LEADER_EPOCH, not leader -> NOT_LEADER_OR_FOLLOWER, resigning ->
        BROKER_NOT_AVAILABLE. 3-5. Invalid voter key, an endpoint whose host is no valid host name or
        IP address (not a Kafka check), no default-listener endpoint, invalid kraft.version range ->
        INVALID_REQUEST. 6. Pending change or no high watermark ->
        REQUEST_TIMED_OUT. 7. kraft.version 1: latest VotersRecord uncommitted -> REQUEST_TIMED_OUT.
        8. Finalized kraft.version outside the range -> INVALID_REQUEST. 9. Not a voter (kraft.version
        1: id and directory id; 0: id) -> VOTER_NOT_FOUND. 10. kraft.version 1: append the VotersRecord
        with the updated voter; 0: remember it in memory (for ``upgrade_kraft_version``).
        """
        def answer(error: int) -> messages.UpdateRaftVoterResponse:
            return self._update_voter_answer(request, error)

        if not self._valid_cluster_id(body.cluster_id):
            return answer(rpc.INCONSISTENT_CLUSTER_ID)
        state = self._state
        if body.current_leader_epoch < state.epoch:
            return answer(rpc.FENCED_LEADER_EPOCH)
        if body.current_leader_epoch > state.epoch:
            return answer(rpc.UNKNOWN_LEADER_EPOCH)
        if not isinstance(state, LeaderState):
            return answer(rpc.NOT_LEADER_OR_FOLLOWER)
        if self._shutting_down:
            return answer(rpc.BROKER_NOT_AVAILABLE)
        if body.voter_id < 0 or body.voter_directory_id == ZERO_UUID:
            return answer(rpc.INVALID_REQUEST)
        endpoints = tuple(Endpoint(item.name, item.host, item.port) for item in body.listeners)
        invalid = changes.invalid_endpoint("Update", endpoints)
        if invalid is not None:
            log.warning("node %d: %s", self._local_key.id, invalid)
            return answer(rpc.INVALID_REQUEST)
        if not any(endpoint.name == self._listener for endpoint in endpoints):
            return answer(rpc.INVALID_REQUEST)
        feature = body.k_raft_version_feature
        low, high = feature.min_supported_version, feature.max_supported_version
        if low < 0 or high < 0 or high < low:
            return answer(rpc.INVALID_REQUEST)
        self._expire_voter_change(now_ms)
        if self._voter_change is not None or state.high_watermark is None:
            return answer(rpc.REQUEST_TIMED_OUT)
        kraft_version = self._history.kraft_version()
        last = self._history.last_voters_offset()
        if kraft_version >= 1 and (last is None or last >= state.high_watermark):
            return answer(rpc.REQUEST_TIMED_OUT)
        if not low <= kraft_version <= high:
            return answer(rpc.INVALID_REQUEST)
        key = ReplicaKey(body.voter_id, body.voter_directory_id)
        voters = self.voters
        info = voters.voters.get(key.id)
        if info is None or (kraft_version >= 1 and info.key != key):
            return answer(rpc.VOTER_NOT_FOUND)
        updated = VoterInfo(key if kraft_version == 0 else info.key, endpoints, low, high)
        if kraft_version >= 1:
            self._append_voters(state, VoterSet({**voters.voters, key.id: updated}), now_ms)
        else:
            self._voter_updates[key.id] = updated
        return answer(rpc.NONE)

    def _needs_voter_update(self) -> bool:
        """i.6: this voter's endpoints or kraft.version range differ from its voter-set entry."""
        if not self._is_voter():
            return False
        info = self.voters.voters[self._local_key.id]
        return (info.endpoints != self._identity.listeners
                or (info.min_kraft_version, info.max_kraft_version) != LOCAL_KRAFT_VERSIONS)

    def _wants_auto_join(self) -> bool:
        return (self._config.auto_join_enable and self._identity.is_controller and not self._is_voter()
                and self._history.kraft_version() >= 1 and not self._shutting_down)

    def _maybe_send_voter_request(self, state: FollowerState, leader: Address, now_ms: int) -> bool:
        """Instead of a Fetch (one request in flight to the leader):

        1. A voter whose entry differs from what it is sends UpdateRaftVoter once per leader (again,
           a request timeout later, after a retriable error such as the leader's missing HWM).
        2. An observer controller with auto-join, once it fetched from the leader, removes a voter
           entry with its id and another directory id, else adds itself (AckWhenCommitted = false),
           then waits a fetch timeout before the next attempt.
        """
        if not state.has_fetched:
            return False
        if self._is_voter():
            if (state.has_updated_leader or now_ms < state.next_voter_request_ms
                    or not self._needs_voter_update()):
                return False
            # Fetches go on between attempts (one request in flight to the leader).
            state.next_voter_request_ms = now_ms + self._config.request_timeout_ms
            low, high = LOCAL_KRAFT_VERSIONS
            self._send(leader, rpc.UPDATE_RAFT_VOTER, messages.UpdateRaftVoterRequest(
                cluster_id=self._identity.cluster_id, current_leader_epoch=state.epoch,
                voter_id=self._local_key.id, voter_directory_id=self._local_key.directory_id,
                listeners=[messages.UpdateRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                           for e in self._identity.listeners],
                k_raft_version_feature=messages.UpdateRaftVoterRequest.KRaftVersionFeature(
                    min_supported_version=low, max_supported_version=high)), now_ms)
            return True
        if not self._wants_auto_join() or now_ms < state.next_voter_request_ms:
            return False
        state.next_voter_request_ms = now_ms + self._config.fetch_timeout_ms
        stale = self.voters.voters.get(self._local_key.id)
        body: Struct
        if stale is not None and stale.key.directory_id != self._local_key.directory_id:
            body = messages.RemoveRaftVoterRequest(cluster_id=self._identity.cluster_id,
                                                   voter_id=stale.key.id,
                                                   voter_directory_id=stale.key.directory_id)
            self._send(leader, rpc.REMOVE_RAFT_VOTER, body, now_ms)
        else:
            body = messages.AddRaftVoterRequest(
                cluster_id=self._identity.cluster_id, timeout_ms=self._config.request_timeout_ms,
                voter_id=self._local_key.id, voter_directory_id=self._local_key.directory_id,
                listeners=[messages.AddRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                           for e in self._identity.listeners],
                ack_when_committed=False)
            self._send(leader, rpc.ADD_RAFT_VOTER, body, now_ms)
        return True

    def _handle_update_voter_response(self, pending: _Pending, body: messages.UpdateRaftVoterResponse,
                                      now_ms: int) -> bool:
        """NONE, or an error retrying cannot fix, ends the update for this leader; news about the
        leader is handled in common; REQUEST_TIMED_OUT and the rest retry after a backoff."""
        current = body.current_leader
        leader_id = rpc.optional_id(current.leader_id)
        endpoints = (Endpoint(self._listener, current.host, current.port),) if current.host else ()
        handled = self._handle_common_response(body.error_code, leader_id, current.leader_epoch, endpoints,
                                               now_ms)
        if handled is not None and body.error_code != rpc.NONE:
            return handled
        state = self._state
        if body.error_code in (rpc.NONE, rpc.VOTER_NOT_FOUND, rpc.INVALID_REQUEST, rpc.UNSUPPORTED_VERSION,
                               rpc.INCONSISTENT_CLUSTER_ID):
            if isinstance(state, FollowerState) and state.epoch == pending.epoch:
                state.has_updated_leader = True
            if body.error_code != rpc.NONE:
                log.warning("node %d: UpdateRaftVoter answered %s", self._local_key.id,
                            rpc.error_name(body.error_code))
            return True
        return False

    def _handle_auto_join_response(self, pending: _Pending,
                                   body: messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse,
                                   now_ms: int) -> bool:
        """Auto-join: whatever the answer, the next attempt waits for the follower's timer."""
        if body.error_code != rpc.NONE:
            log.info("node %d: auto-join %s answered %s: %s", self._local_key.id,
                     "AddRaftVoter" if pending.api_key == rpc.ADD_RAFT_VOTER else "RemoveRaftVoter",
                     rpc.error_name(body.error_code), body.error_message)
        return body.error_code in (rpc.NONE, rpc.REQUEST_TIMED_OUT, rpc.DUPLICATE_VOTER, rpc.VOTER_NOT_FOUND)

    # =========================================================================================
    # Committed image
    # =========================================================================================

    def _advance_image(self, budget: int | None) -> bool:
        """Bring the image up to the high watermark, reading at most ``budget`` bytes of batches
        (None: all); True when work is left for the next poll.

        1. Work in progress (a snapshot being loaded into the image or written out) continues first.
        2. The log starts past the image, or was replaced by a fetched snapshot: load the latest
           snapshot into a new image, which replaces the current one once complete.
        3. Apply the committed batches (wholly below the high watermark) from the image's end.
        """
        used = self._run_work(budget)
        if self._work is not None:
            return True
        image = self._image
        start = self._log.start_offset()
        if self._reload_image or image.next_offset < start:
            snapshot = self._log.latest_snapshot()
            if snapshot is None or snapshot.end_offset < start:
                return False
            self._reload_image = False
            self._work = self._load_steps(snapshot)
            used += self._run_work(None if budget is None else max(budget - used, 1))
            if self._work is not None:
                return True
            image = self._image
        if self._committed <= image.next_offset:
            return False
        batches = iter(self._log.batches(image.next_offset))
        try:
            for batch in batches:
                if batch.next_offset > self._committed or batch.base_offset != image.next_offset:
                    break
                image.apply_batch(batch)
                used += batch_size(batch)
                if budget is not None and used >= budget:
                    return image.next_offset < self._committed
        finally:
            close = getattr(batches, "close", None)
            if callable(close):
                close()
        return False

    def _load_steps(self, snapshot: SnapshotId) -> Iterator[int]:
        """Load ``snapshot`` into a new image one batch at a time; it replaces the image at the end."""
        image = SnapshotImage()
        image.start_snapshot(snapshot)
        batches = iter(self._log.snapshot_batches(snapshot))
        try:
            for batch in batches:
                image.apply_snapshot_batch(batch)
                yield batch_size(batch)
        finally:
            close = getattr(batches, "close", None)
            if callable(close):
                close()
        image.finish_snapshot()
        self._image = image

    def _run_work(self, budget: int | None) -> int:
        """Run the image work in progress until ``budget`` bytes were read (None: to the end)."""
        used = 0
        while self._work is not None:
            try:
                used += next(self._work)
            except StopIteration:
                self._work = None
                self._work_writer = None
                break
            except BaseException:
                self._abort_work()
                raise
            if budget is not None and used >= budget:
                break
        return used

    def _abort_work(self) -> None:
        """Stop the image work in progress; an unfinished snapshot is dropped."""
        work, writer = self._work, self._work_writer
        self._work = None
        self._work_writer = None
        if work is not None:
            close = getattr(work, "close", None)
            if callable(close):
                close()
        if writer is not None:
            writer.abort()
