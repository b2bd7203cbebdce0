"""The consensus core: KIP-595 Raft with KIP-853 voter sets and KIP-996 pre-vote, as Kafka ships it.

``RaftCore`` is a deterministic state machine. The driver hands it requests (``handle_request``),
responses (``handle_response``) and the time; ``poll`` returns the requests to send, the replies to
deliver and when to poll next. Disk goes through ``ReplicatedLog`` and ``QuorumStateStore``;
randomness comes from the injected ``random.Random``. Nothing here opens a socket, reads a clock or
starts a thread.

Life of a voter (see ``state.py`` for the states)::

    Unattached --election timeout--> Prospective --majority of pre-votes--> Candidate (epoch + 1)
    Prospective --a voter without Vote v2 (UNSUPPORTED_VERSION)--> Candidate (epoch + 1)
    Candidate --majority of votes--> Leader --resign / check-quorum lost--> Resigned --timeout--> Prospective
    any --higher epoch or a leader of the epoch--> Follower / Unattached
    Follower --fetch timeout--> Prospective

Without pre-vote (``RaftConfig.pre_vote`` off, Kafka 3.9) every timeout that leads to Prospective
above leads to Candidate instead.

Durability rules:
  1. ``quorum-state`` is written before a vote is granted, a candidacy starts or leadership is acted on.
  2. A follower flushes what it appended before it reports its new end offset in the next Fetch.
  3. The leader counts only its flushed end offset towards the high watermark.

This module is election (the states and their transitions, Vote, BeginQuorumEpoch, EndQuorumEpoch and
their timers) and replication (Fetch on both sides, the high watermark). Beside it, each with its
numbered steps and seeing the core only through ``context.RaftContext``:

- ``add_voter``, ``remove_voter``, ``update_voter``: the leader's voter changes and the kraft.version
  upgrade (``changes``: the pending change and the answers' texts);
- ``follower_voter``: a follower's UpdateRaftVoter and auto-join;
- ``fetch_snapshot``: FetchSnapshot, both sides;
- ``image_work``: the committed image (loading snapshots, applying batches, writing snapshots).

It stays above the project's 1,200 lines on purpose: what is left shares the epoch state, the
outbound requests and the transitions that reset both, and a handler for Vote, BeginQuorumEpoch,
EndQuorumEpoch or Fetch would call back into those transitions at nearly every step.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafka_admin_kraft.features import KRAFT_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
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
    metadata_batches,
)
from kafka_admin_kraft.records.snapshot import BOOTSTRAP_SNAPSHOT_ID
from kafka_admin_kraft.storage import QuorumState

from . import describe, rpc
from .add_voter import AddVoterHandler
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
    VoterSet,
    jitter,
)
from .changes import PendingChange
from .context import RaftContext
from .errors import KRaftUpgradeError, NotLeaderError, RaftInvariantError
from .fetch_snapshot import FetchSnapshotHandler
from .follower_voter import FollowerVoterRequests
from .image import SnapshotImage
from .image_work import ImageWork
from .leader import CHECK_QUORUM_TIMEOUT_FACTOR, LeaderState
from .remove_voter import RemoveVoterHandler
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
from .update_voter import KRaftVersionUpgrade, UpdateVoterHandler
from .voters import VoterSetHistory, endpoint_for, voters_record, with_local_endpoints

__all__ = ["KRaftUpgradeError", "NotLeaderError", "RaftCore", "RaftInvariantError"]

log = logging.getLogger(__name__)

RETRY_BACKOFF_BASE_MS = 100
"""Base of the binary exponential backoff after a failed election (Kafka's KafkaRaftClient)."""
MAX_TRANSITIONS_PER_POLL = 8


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
        self._requests = RequestManager(config.retry_backoff_ms, config.request_timeout_ms)
        self._pending: dict[int, _Pending] = {}
        self._next_request_id = 1
        self._sends: list[OutboundRequest] = []
        self._replies: list[Reply] = []
        self._parked: list[_ParkedFetch] = []
        self._committed = -1
        self._shutting_down = False
        # Beside the core (see the module docstring); each sees it through ``context``.
        context = _CoreContext(self)
        self._image_work = ImageWork(log, self._history, identity.node_id)
        self._pending_change = PendingChange(context, identity.node_id)
        self._add_voter = AddVoterHandler(context, config, identity.cluster_id, self._history,
                                          self._pending_change)
        self._remove_voter = RemoveVoterHandler(context, config, identity.cluster_id, self._history,
                                                self._pending_change)
        self._update_voter = UpdateVoterHandler(context, self._history, self._pending_change,
                                                at_kraft_version_0=config.update_voter_at_kraft_version_0)
        self._kraft_upgrade = KRaftVersionUpgrade(context, identity, self._history,
                                                  self._update_voter.reported)
        self._follower_voter = FollowerVoterRequests(context, identity, config, self._history)
        self._fetch_snapshot = FetchSnapshotHandler(context, identity, config, log, self._image_work)
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
        return self._image_work.image.next_offset

    def committed_features(self) -> CommittedFeatures:
        """Finalized features of the committed image (kraft.version from the control records at or
        below its last applied offset), its highest offset and an open metadata transaction."""
        image = self._image_work.image
        levels = image.feature_levels()
        # A FeatureLevelRecord for kraft.version (what a 3.9 or 4.0 controller writes for an update of it)
        # changes nothing: the level is the control records' (KAFKA-18979).
        levels.pop(KRAFT_VERSION, None)
        kraft_version = self._history.kraft_version_at(image.highest_offset)
        if kraft_version:
            levels[KRAFT_VERSION] = kraft_version
        return CommittedFeatures(levels, image.highest_offset, image.metadata_version,
                                 image.transaction_start_offset)

    def registered_brokers(self) -> list[messages.RegisterBrokerRecord]:
        """The broker registrations of the committed image, by broker id."""
        return self._image_work.image.broker_registrations()

    def registered_controllers(self) -> list[messages.RegisterControllerRecord]:
        """The controller registrations of the committed image, by controller id."""
        return self._image_work.image.controller_registrations()

    def acls(self) -> Mapping[Uuid, messages.AccessControlEntryRecord]:
        """The ACLs of the committed image, by id."""
        return self._image_work.image.acls()

    @property
    def image(self) -> SnapshotImage:
        """The committed metadata image (tests and tools; the driver uses ``committed_features``)."""
        return self._image_work.image

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
        """Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot, DescribeQuorum, AddRaftVoter,
        RemoveRaftVoter or UpdateRaftVoter; replies come out of ``poll`` (a Fetch may wait up to its
        MaxWaitMs, AddRaftVoter / RemoveRaftVoter until their VotersRecord commits). Other API keys
        raise ValueError."""
        key = request.api_key
        body = request.body
        if key == ApiKey.FETCH and isinstance(body, messages.FetchRequest):
            self._handle_fetch(request, body, now_ms)
        elif key == ApiKey.VOTE and isinstance(body, messages.VoteRequest):
            self._reply(request, self._handle_vote(request, body, now_ms))
        elif key == ApiKey.BEGIN_QUORUM_EPOCH and isinstance(body, messages.BeginQuorumEpochRequest):
            self._reply(request, self._handle_begin_quorum_epoch(request, body, now_ms))
        elif key == ApiKey.END_QUORUM_EPOCH and isinstance(body, messages.EndQuorumEpochRequest):
            self._reply(request, self._handle_end_quorum_epoch(request, body, now_ms))
        elif key == ApiKey.FETCH_SNAPSHOT and isinstance(body, messages.FetchSnapshotRequest):
            self._reply(request, self._fetch_snapshot.handle(request, body, now_ms))
        elif key == ApiKey.DESCRIBE_QUORUM and isinstance(body, messages.DescribeQuorumRequest):
            if not describe.is_metadata_partition_request(body):
                self._reply(request, describe.unknown_partition_response(body, request.api_version))
            else:
                self._reply(request, self.describe_quorum(request.api_version, now_ms))
        elif key == ApiKey.ADD_RAFT_VOTER and isinstance(body, messages.AddRaftVoterRequest):
            self._add_voter.handle(request, body, now_ms)
        elif key == ApiKey.REMOVE_RAFT_VOTER and isinstance(body, messages.RemoveRaftVoterRequest):
            self._remove_voter.handle(request, body, now_ms)
        elif key == ApiKey.UPDATE_RAFT_VOTER and isinstance(body, messages.UpdateRaftVoterRequest):
            self._reply(request, self._update_voter.handle(request, body, now_ms))
        else:
            raise ValueError(f"the raft core does not serve API key {key} ({type(body).__name__})")
        self._complete_parked_fetches(now_ms)

    def handle_response(self, request_id: int, body: Struct | None, now_ms: int) -> None:
        """The answer to one of our requests; None when it could not be sent or timed out."""
        pending = self._pending.pop(request_id, None)
        if pending is None:
            return  # answered already, timed out, or sent in an earlier state
        success = False
        if pending.api_key == ApiKey.API_VERSIONS:
            success = body is not None
            self._add_voter.on_api_versions(request_id, body, now_ms)
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
        self._image_work.poll(self._committed, max(self._config.apply_budget_bytes, 1),
                              self._config.snapshot_interval_bytes, now_ms)
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
        (``ImageWork.snapshot_now``).
        """
        return self._image_work.snapshot_now(self._committed, now_ms)

    def upgrade_kraft_version(self, now_ms: int) -> int:
        """kraft.version 0 -> 1 on the leader (see ``api.RaftDriverFacing.upgrade_kraft_version``);
        the steps are ``update_voter.KRaftVersionUpgrade``'s."""
        return self._kraft_upgrade.upgrade(now_ms)

    # =========================================================================================
    # Start-up and log-derived state
    # =========================================================================================

    def _load_partition_state(self) -> None:
        """Rebuild the voter-set history from the latest snapshot and the log (the image follows in
        ``ImageWork``, which loads the snapshot when the log starts past the image)."""
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

    def _append_control(self, records: Sequence[Struct], now_ms: int) -> RecordBatch:
        """Append one control batch of the current epoch at the log end and apply its records."""
        batch = control_batch(self._log.end_offset(), self._state.epoch, now_ms, records)
        self._log.append(batch)
        self._apply_log_batches(batch.base_offset)
        return batch

    def _snapshot_installed(self, snapshot_id: SnapshotId) -> None:
        """A fetched snapshot replaced the log: its voter sets and its end become ours."""
        self._load_partition_state()
        self._set_committed(snapshot_id.end_offset)

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
        """Every transition forgets in-flight requests (late answers are ignored), ends a pending voter
        change (NOT_LEADER_OR_FOLLOWER), drops a snapshot being copied from the leader, and answers
        parked fetches against the new state."""
        self._requests.reset_all()
        self._pending.clear()
        self._pending_change.finish(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        state = self._state if hasattr(self, "_state") else None
        if isinstance(state, FollowerState) and state.fetching_snapshot is not None:
            state.fetching_snapshot.abort()
            state.fetching_snapshot = None

    def _to_unattached(self, epoch: int, now_ms: int, leader_id: int | None = None) -> None:
        """Move to a new epoch with no leader (or one whose endpoints are unknown).

        A voter already waiting for an election (Unattached, Candidate, Resigned, or Prospective with
        its round not lost) keeps the deadline it had, as Kafka's ``QuorumState.transitionToUnattached``
        does; the others draw a new one. Otherwise a candidate whose votes are refused (a stale log)
        would hold every other election off by bumping the epoch before their timers expire, which a
        pre-vote round no longer prevents once a voter without Vote v2 takes part.
        """
        state = self._state
        if (isinstance(state, UnattachedState | CandidateState | ResignedState)
                or (isinstance(state, ProspectiveState) and not state.election.is_lost())):
            deadline = state.election_deadline_ms
        else:
            deadline = self._election_deadline(now_ms)
        self._write_election(epoch, leader_id, None)
        self._leave_state()
        self._state = UnattachedState(epoch, None, leader_id, deadline)

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

    def _start_election(self, now_ms: int, retries: int = 1) -> None:
        """A voter's timer ran out: a pre-vote round, or a standard election at once on a node that
        runs no pre-vote (Kafka 3.9)."""
        if self._config.pre_vote:
            self._to_prospective(now_ms, retries)
        else:
            self._to_candidate(now_ms, retries)

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
        self._update_voter.forget_reports()
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
        base = self._append_control(records, now_ms).base_offset
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
        if epoch < self._state.epoch or error == ErrorCode.UNKNOWN_LEADER_EPOCH:
            return True
        if epoch > self._state.epoch or error in (ErrorCode.FENCED_LEADER_EPOCH,
                                                  ErrorCode.NOT_LEADER_OR_FOLLOWER):
            before = self._state
            self._maybe_transition(leader_id, epoch, endpoints, now_ms)
            # Nothing learnt (e.g. a voter that follows the same leader): back off before asking again.
            return self._state is not before
        if (leader_id is not None and leader_id != self._local_key.id and endpoints
                and not self._knows_leader()):
            if not self._maybe_transition(leader_id, epoch, endpoints, now_ms):
                return True
            return None if error == ErrorCode.NONE else True
        if error == ErrorCode.BROKER_NOT_AVAILABLE:
            return False
        if error == ErrorCode.INVALID_VOTER_KEY:
            return True
        if error == ErrorCode.INVALID_REQUEST:
            log.warning("node %d: a peer answered INVALID_REQUEST", self._local_key.id)
            return False
        return None

    def _dispatch_response(self, pending: _Pending, body: Struct, now_ms: int) -> bool:
        if pending.api_key == ApiKey.FETCH and isinstance(body, messages.FetchResponse):
            return self._handle_fetch_response(pending, body, now_ms)
        if pending.api_key == ApiKey.VOTE and isinstance(body, messages.VoteResponse):
            return self._handle_vote_response(pending, body, now_ms)
        if (pending.api_key == ApiKey.BEGIN_QUORUM_EPOCH
                and isinstance(body, messages.BeginQuorumEpochResponse)):
            return self._handle_begin_quorum_epoch_response(pending, body, now_ms)
        if pending.api_key == ApiKey.END_QUORUM_EPOCH and isinstance(body, messages.EndQuorumEpochResponse):
            return self._handle_end_quorum_epoch_response(pending, body, now_ms)
        if pending.api_key == ApiKey.FETCH_SNAPSHOT and isinstance(body, messages.FetchSnapshotResponse):
            return self._fetch_snapshot.on_response(body, now_ms)
        if pending.api_key == ApiKey.UPDATE_RAFT_VOTER and isinstance(body, messages.UpdateRaftVoterResponse):
            return self._follower_voter.on_update_response(pending.epoch, body, now_ms)
        if (pending.api_key in (ApiKey.ADD_RAFT_VOTER, ApiKey.REMOVE_RAFT_VOTER)
                and isinstance(body, messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse)):
            return self._follower_voter.on_auto_join_response(pending.api_key, body)
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
            return rpc.vote_response(version, ErrorCode.INCONSISTENT_CLUSTER_ID)
        partition = rpc.vote_partition(body)
        if partition is None:
            return rpc.vote_response(version, ErrorCode.INVALID_REQUEST)
        pre_vote = partition.pre_vote
        replica_epoch = partition.replica_epoch
        last_epoch = partition.last_offset_epoch
        illegal = last_epoch > replica_epoch if pre_vote else last_epoch >= replica_epoch
        error = ErrorCode.NONE
        if partition.last_offset < 0 or last_epoch < 0 or illegal:
            error = ErrorCode.INVALID_REQUEST
        elif replica_epoch < self._state.epoch:
            error = ErrorCode.FENCED_LEADER_EPOCH
        elif partition.replica_id < 0:
            error = ErrorCode.INVALID_REQUEST
        if error != ErrorCode.NONE:
            return self._vote_answer(request, error, False)
        if replica_epoch > self._state.epoch:
            self._to_unattached(replica_epoch, now_ms)
        if version >= 1 and not self._valid_voter_key(body.voter_id, partition.voter_directory_id):
            return self._vote_answer(request, ErrorCode.INVALID_VOTER_KEY, False)
        candidate = ReplicaKey(partition.replica_id, partition.replica_directory_id)
        up_to_date = (last_epoch, partition.last_offset) >= (self._log.last_epoch(), self._log.end_offset())
        granted = self._can_grant_vote(candidate, up_to_date, pre_vote)
        state = self._state
        if (granted and not pre_vote and isinstance(state, UnattachedState | ProspectiveState)
                and state.voted_key is None):
            self._to_unattached_voted(candidate, now_ms)
        log.debug("node %d %s %svote of %s in epoch %d", self._local_key.id,
                  "grants" if granted else "rejects", "pre-" if pre_vote else "", candidate, replica_epoch)
        return self._vote_answer(request, ErrorCode.NONE, granted)

    def _vote_answer(self, request: InboundRequest, error: int, granted: bool) -> messages.VoteResponse:
        return rpc.vote_response(request.api_version, ErrorCode.NONE, error, self._state.epoch,
                                 self.leader_id, granted, self._leader_endpoint_for(request.listener))

    def _handle_vote_response(self, pending: _Pending, body: messages.VoteResponse, now_ms: int) -> bool:
        """Count a (pre-)vote.

        1. UNSUPPORTED_VERSION answering a pre-vote: that voter speaks no Vote v2 (a Kafka 3.9 node),
           so pre-vote cannot succeed; a Prospective starts a standard election at once (Candidate,
           epoch + 1), as Kafka's ``KafkaRaftClient.handleVoteResponse`` does. The driver gives this
           answer for a request it could not send (``rpc.lowest_version``); the peer never sees it.
        2. Other errors and news about the epoch are handled in common (a higher epoch moves us on).
        3. Prospective: a majority of pre-votes -> Candidate; no majority possible -> lost.
        4. Candidate: a majority of votes -> Leader; no majority possible -> back off at once.
        """
        state = self._state
        if (body.error_code == ErrorCode.UNSUPPORTED_VERSION and pending.pre_vote
                and isinstance(state, ProspectiveState)):
            log.info("node %d: voter %s does not support pre-vote (Vote v2); starting a standard election "
                     "from epoch %d", self._local_key.id, pending.destination.node_id, state.epoch)
            self._to_candidate(now_ms, state.retries)
            return True
        if body.error_code != ErrorCode.NONE:
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
        if partition.error_code != ErrorCode.NONE:
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
            return ErrorCode.FENCED_LEADER_EPOCH
        if leader_id < 0:
            return ErrorCode.INVALID_REQUEST
        endpoints = self._request_leader_endpoints(leader_id,
                                                   ((e.name, e.host, e.port) for e in leader_endpoints))
        if not self._maybe_transition(leader_id, leader_epoch, endpoints, now_ms):
            return ErrorCode.INVALID_REQUEST
        return ErrorCode.NONE

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
            return rpc.begin_quorum_epoch_response(version, ErrorCode.INCONSISTENT_CLUSTER_ID)
        partition = rpc.begin_quorum_epoch_partition(body)
        if partition is None:
            return rpc.begin_quorum_epoch_response(version, ErrorCode.INVALID_REQUEST)
        error = self._follow_announced_leader(partition.leader_id, partition.leader_epoch,
                                              body.leader_endpoints, now_ms)
        if error == ErrorCode.NONE and version >= 1 and not self._valid_voter_key(body.voter_id,
                                                                           partition.voter_directory_id):
            error = ErrorCode.INVALID_VOTER_KEY
        return rpc.begin_quorum_epoch_response(version, ErrorCode.NONE, error, self._state.epoch,
                                               self.leader_id, self._leader_endpoint_for(request.listener))

    def _settle_epoch_response(
            self, body: messages.BeginQuorumEpochResponse | messages.EndQuorumEpochResponse,
            now_ms: int) -> bool | None:
        """What BeginQuorumEpoch and EndQuorumEpoch answers share: learn the leader they name; None
        for a success the caller records, else whether the answer was handled."""
        if body.error_code != ErrorCode.NONE or len(body.topics) != 1 or len(body.topics[0].partitions) != 1:
            return False
        partition = body.topics[0].partitions[0]
        leader_id = rpc.optional_id(partition.leader_id)
        endpoints = (rpc.node_endpoint(body.node_endpoints, leader_id, self._listener)
                     if leader_id is not None else ())
        handled = self._handle_common_response(partition.error_code, leader_id, partition.leader_epoch,
                                               endpoints, now_ms)
        if handled is not None:
            return handled
        return False if partition.error_code != ErrorCode.NONE else None

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
            return rpc.end_quorum_epoch_response(version, ErrorCode.INCONSISTENT_CLUSTER_ID)
        partition = rpc.end_quorum_epoch_partition(body)
        if partition is None:
            return rpc.end_quorum_epoch_response(version, ErrorCode.INVALID_REQUEST)
        error = self._follow_announced_leader(partition.leader_id, partition.leader_epoch,
                                              body.leader_endpoints, now_ms)
        state = self._state
        if (error == ErrorCode.NONE and isinstance(state, FollowerState)
                and state.leader_id == partition.leader_id):
            if version >= 1:
                candidates = [ReplicaKey(c.candidate_id, c.candidate_directory_id)
                              for c in partition.preferred_candidates]
            else:
                candidates = [ReplicaKey(voter_id) for voter_id in partition.preferred_successors]
            state.fetch_deadline_ms = now_ms + self._end_epoch_backoff_ms(candidates)
            state.has_fetched = False
        return rpc.end_quorum_epoch_response(version, ErrorCode.NONE, error, self._state.epoch,
                                             self.leader_id, self._leader_endpoint_for(request.listener))

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
            self._reply(request, rpc.fetch_response(version, ErrorCode.INCONSISTENT_CLUSTER_ID))
            return
        partition = rpc.fetch_partition(body)
        if partition is None:
            self._reply(request, rpc.fetch_response(version, ErrorCode.INVALID_REQUEST))
            return
        if (body.max_wait_ms < 0 or partition.fetch_offset < 0 or partition.last_fetched_epoch < 0
                or partition.last_fetched_epoch > partition.current_leader_epoch):
            self._reply(request, self._fetch_error(request, ErrorCode.INVALID_REQUEST))
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
        error = ErrorCode.NONE
        if partition.current_leader_epoch < state.epoch:
            error = ErrorCode.FENCED_LEADER_EPOCH
        elif partition.current_leader_epoch > state.epoch:
            error = ErrorCode.UNKNOWN_LEADER_EPOCH
        elif not isinstance(state, LeaderState):
            error = ErrorCode.NOT_LEADER_OR_FOLLOWER
        elif self._shutting_down:
            error = ErrorCode.BROKER_NOT_AVAILABLE
        if error != ErrorCode.NONE or not isinstance(state, LeaderState):
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
        response = rpc.fetch_response(request.api_version, partition_error=ErrorCode.NONE, epoch=state.epoch,
                                      leader_id=self._local_key.id, high_watermark=hwm,
                                      log_start_offset=self._log.start_offset(), records=records,
                                      diverging=diverging, snapshot_id=snapshot_id,
                                      leader=self._leader_endpoint_for(request.listener))
        return response, bool(records) or kind != "valid"

    def _on_leader_high_watermark(self, state: LeaderState) -> None:
        if state.high_watermark is not None:
            self._set_committed(state.high_watermark)
            self._pending_change.committed(state.high_watermark)

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
        if body.error_code != ErrorCode.NONE:
            return False
        if len(body.responses) != 1 or len(body.responses[0].partitions) != 1:
            return False
        partition = body.responses[0].partitions[0]
        leader_id = rpc.optional_id(partition.current_leader.leader_id)
        state = self._state
        if (isinstance(state, FollowerState) and partition.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
                and pending.destination.node_id == state.leader_id):
            state.has_fetched = False  # our leader no longer leads (it resigned): stop vouching for it
        endpoints = (rpc.node_endpoint(body.node_endpoints, leader_id, self._listener)
                     if leader_id is not None else ())
        handled = self._handle_common_response(partition.error_code, leader_id,
                                               partition.current_leader.leader_epoch, endpoints, now_ms)
        if handled is not None:
            return handled
        if partition.error_code != ErrorCode.NONE:
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
        self._pending_change.expire(now_ms)
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
                    self._send(address, ApiKey.BEGIN_QUORUM_EPOCH, rpc.begin_quorum_epoch_request(
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
            self._send(address, ApiKey.VOTE, body, now_ms, pre_vote=pre_vote)

    def _poll_candidate(self, state: CandidateState, now_ms: int) -> None:
        """1. Backing off after a lost election: when done, start the next election (a pre-vote round).
        2. Election timeout -> back off (binary exponential, capped).
        3. Otherwise ask the voters that have not answered."""
        if not self._is_voter():
            self._to_unattached(state.epoch, now_ms)
            return
        if state.backoff_until_ms is not None:
            if now_ms >= state.backoff_until_ms and not self._shutting_down:
                self._start_election(now_ms, state.retries + 1)
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
        """1. A voter whose fetch timeout expired starts an election (a pre-vote round first).
        2. An observer whose fetch timeout expired also asks the bootstrap servers.
        3. While the leader's connection backs off, ask the bootstrap servers for news.
        4. Otherwise keep one Fetch (or FetchSnapshot while copying a snapshot) in flight to the leader;
           the log is flushed first so that the fetch offset is durable."""
        if now_ms >= state.fetch_deadline_ms:
            if self._is_voter() and not self._shutting_down:
                log.info("node %d: fetch timeout in epoch %d", self._local_key.id, state.epoch)
                self._start_election(now_ms)
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
        if state.fetching_snapshot is None and self._follower_voter.maybe_send(state, leader, now_ms):
            return
        if state.fetching_snapshot is not None:
            self._fetch_snapshot.send(state, leader, now_ms)
        else:
            self._send_fetch(leader, now_ms)

    def _send_fetch(self, destination: Address, now_ms: int) -> None:
        if self._log.flushed_offset() < self._log.end_offset():
            self._log.flush()
        end = self._log.end_offset()
        body = rpc.fetch_request(self._identity.cluster_id, self._local_key, self._state.epoch, end,
                                 self._log.last_epoch(), self._log.start_offset(),
                                 self._config.fetch_max_wait_ms, self._config.max_fetch_bytes)
        self._send(destination, ApiKey.FETCH, body, now_ms, fetch_offset=end)

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
        """A voter whose election timeout expired starts an election (a pre-vote round first); until
        then (and for observers always) fetch from the bootstrap servers to discover the leader."""
        if self._is_voter() and now_ms >= state.election_deadline_ms and not self._shutting_down:
            self._start_election(now_ms)
            return
        self._fetch_from_any_bootstrap(now_ms)

    def _poll_resigned(self, state: ResignedState, now_ms: int) -> None:
        """Send EndQuorumEpoch to the voters that have not acknowledged it; after the election
        timeout, a voter starts an election (a pre-vote round first) and a non-voter moves to the next
        epoch."""
        if now_ms >= state.election_deadline_ms and not self._shutting_down:
            if self._is_voter():
                self._start_election(now_ms)
            else:
                self._to_unattached(state.epoch + 1, now_ms)
            return
        for voter_id in sorted(state.unacknowledged):
            info = self.voters.voters.get(voter_id)
            if info is None:
                continue
            address = self._address(voter_id, info.endpoints)
            if address is not None and self._requests.is_ready(address, now_ms):
                self._send(address, ApiKey.END_QUORUM_EPOCH, rpc.end_quorum_epoch_request(
                    self._identity.cluster_id, state.epoch, self._local_key.id, state.preferred_candidates,
                    self._identity.listeners), now_ms)

    def _next_poll_ms(self, now_ms: int) -> int:
        if self._image_work.has_work:
            return now_ms  # image work left: poll again at once (the driver serves its sockets first)
        state = self._state
        deadlines: list[int] = [now_ms + max(self._config.election_timeout_ms, 1)]
        if isinstance(state, LeaderState):
            deadlines.append(state.check_quorum_deadline_ms)
            if state.unacknowledged_voters():
                deadlines.append(state.next_begin_quorum_ms)
            if self._pending_change.deadline_ms is not None:
                deadlines.append(self._pending_change.deadline_ms)
        elif isinstance(state, CandidateState | ProspectiveState):
            deadlines.append(state.backoff_until_ms if state.backoff_until_ms is not None
                             else state.election_deadline_ms)
        elif isinstance(state, FollowerState):
            deadlines.append(state.fetch_deadline_ms)
            voter_request_ms = self._follower_voter.next_attempt_ms(state, now_ms)
            if voter_request_ms is not None:
                deadlines.append(voter_request_ms)
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


class _CoreContext(RaftContext):
    """The core as the handlers beside it see it: a narrow view that keeps its attributes private."""

    def __init__(self, core: RaftCore) -> None:
        self._core = core

    @property
    def epoch(self) -> int:
        return self._core.epoch

    @property
    def leader_id(self) -> int:
        return self._core.leader_id

    @property
    def voters(self) -> VoterSet:
        return self._core.voters

    @property
    def is_voter(self) -> bool:
        return self._core.is_voter

    @property
    def role(self) -> str:
        return self._core.role

    @property
    def shutting_down(self) -> bool:
        return self._core._shutting_down

    @property
    def high_watermark(self) -> int:
        return self._core.high_watermark

    @property
    def default_listener(self) -> str:
        return self._core._listener

    def leader_state(self) -> LeaderState | None:
        return self._core.leader_state()

    def follower_state(self) -> FollowerState | None:
        state = self._core._state
        return state if isinstance(state, FollowerState) else None

    def valid_cluster_id(self, cluster_id: str | None) -> bool:
        return self._core._valid_cluster_id(cluster_id)

    def leader_endpoint_for(self, listener: str) -> Endpoint | None:
        return self._core._leader_endpoint_for(listener)

    def is_ready(self, destination: Address, now_ms: int) -> bool:
        return self._core._requests.is_ready(destination, now_ms)

    def send(self, destination: Address, api_key: int, body: Struct, now_ms: int) -> int:
        return self._core._send(destination, api_key, body, now_ms)

    def reply(self, request: InboundRequest, body: Struct) -> None:
        self._core._reply(request, body)

    def append_control(self, records: Sequence[Struct], now_ms: int) -> RecordBatch:
        return self._core._append_control(records, now_ms)

    def handle_common_response(self, error: int, leader_id: int | None, epoch: int,
                               endpoints: tuple[Endpoint, ...], now_ms: int) -> bool | None:
        return self._core._handle_common_response(error, leader_id, epoch, endpoints, now_ms)

    def snapshot_installed(self, snapshot_id: SnapshotId) -> None:
        self._core._snapshot_installed(snapshot_id)
