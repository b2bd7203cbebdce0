"""Epoch states of a replica (Kafka's ``QuorumState`` family) and the outbound request manager.

A replica is in exactly one state; every transition that changes the epoch, the vote or the leader
is written to ``quorum-state`` before the replica acts on it (see ``RaftCore._transition``).

=============  ===============================================================  =========
state          meaning                                                          persisted
=============  ===============================================================  =========
Unattached     knows the epoch, not (yet) a leader; may hold a vote              yes
Prospective    pre-vote (KIP-996): asks for non-binding votes at its own epoch   no
Candidate      epoch + 1, voted for itself, asks for votes                       yes
Leader         won the epoch                                                     yes
Follower       fetches from the epoch's leader                                   yes
Resigned       former leader of the epoch, sending EndQuorumEpoch                no (= leader)
=============  ===============================================================  =========
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .api import Address, Endpoint, ReplicaKey, SnapshotWriter, majority
from .leader import LeaderState


@dataclass
class Election:
    """Votes collected by a prospective or a candidate among ``voters`` (its own vote included)."""

    voters: frozenset[int]
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)

    @property
    def majority(self) -> int:
        return majority(len(self.voters))

    def record(self, voter_id: int, granted: bool) -> None:
        if voter_id not in self.voters or voter_id in self.granted or voter_id in self.rejected:
            return
        (self.granted if granted else self.rejected).add(voter_id)

    def is_won(self) -> bool:
        return len(self.granted) >= self.majority

    def is_lost(self) -> bool:
        """No majority is possible any more."""
        return len(self.voters) - len(self.rejected) < self.majority

    def unrecorded(self) -> list[int]:
        return sorted(self.voters - self.granted - self.rejected)


@dataclass
class UnattachedState:
    epoch: int
    voted_key: ReplicaKey | None = None
    leader_id: int | None = None
    """A leader known for the epoch whose endpoints are not (only after a restart)."""
    election_deadline_ms: int = 0


@dataclass
class ProspectiveState:
    epoch: int
    election: Election
    election_deadline_ms: int
    voted_key: ReplicaKey | None = None
    leader_id: int | None = None
    leader_endpoints: tuple[Endpoint, ...] = ()
    backoff_until_ms: int | None = None
    retries: int = 1


@dataclass
class CandidateState:
    epoch: int
    election: Election
    election_deadline_ms: int
    backoff_until_ms: int | None = None
    retries: int = 1


@dataclass
class SnapshotFetch:
    """A snapshot being copied from the leader with FetchSnapshot."""

    end_offset: int
    epoch: int
    writer: SnapshotWriter | None = None
    """Where the chunks go (``ReplicatedLog.receive_snapshot``), opened with the first one."""
    position: int = 0
    """Bytes received so far (the position of the next FetchSnapshot)."""

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()
            self.writer = None


@dataclass
class FollowerState:
    epoch: int
    leader_id: int
    leader_endpoints: tuple[Endpoint, ...]
    fetch_deadline_ms: int
    voted_key: ReplicaKey | None = None
    has_fetched: bool = False
    """A fetch from the leader succeeded since this state began (KIP-996 pre-vote rule)."""
    fetching_snapshot: SnapshotFetch | None = None
    has_updated_leader: bool = False
    """This voter's UpdateRaftVoter reached the leader of this epoch (or needs no sending)."""
    next_voter_request_ms: int = 0
    """An observer with auto-join sends its next AddRaftVoter / RemoveRaftVoter at this time."""


@dataclass
class ResignedState:
    epoch: int
    unacknowledged: set[int]
    preferred_candidates: list[ReplicaKey]
    election_deadline_ms: int


EpochState = UnattachedState | ProspectiveState | CandidateState | LeaderState | FollowerState | ResignedState


def role_name(state: EpochState) -> str:
    return {UnattachedState: "unattached", ProspectiveState: "prospective", CandidateState: "candidate",
            LeaderState: "leader", FollowerState: "follower", ResignedState: "resigned"}[type(state)]


@dataclass
class _Connection:
    in_flight: int | None = None
    deadline_ms: int = 0
    backoff_until_ms: int = 0


class RequestManager:
    """One request in flight per destination, a timeout per request and a backoff after failures
    (Kafka's ``RequestManager``)."""

    def __init__(self, retry_backoff_ms: int, request_timeout_ms: int) -> None:
        self.retry_backoff_ms = retry_backoff_ms
        self.request_timeout_ms = request_timeout_ms
        self._connections: dict[object, _Connection] = {}

    @staticmethod
    def key(address: Address) -> object:
        return address.node_id if address.node_id is not None else (address.host, address.port)

    def is_ready(self, address: Address, now_ms: int) -> bool:
        connection = self._connections.get(self.key(address))
        return connection is None or (connection.in_flight is None and now_ms >= connection.backoff_until_ms)

    def is_backing_off(self, address: Address, now_ms: int) -> bool:
        connection = self._connections.get(self.key(address))
        return (connection is not None and connection.in_flight is None
                and now_ms < connection.backoff_until_ms)

    def has_in_flight(self, address: Address) -> bool:
        connection = self._connections.get(self.key(address))
        return connection is not None and connection.in_flight is not None

    def any_in_flight(self) -> bool:
        return any(connection.in_flight is not None for connection in self._connections.values())

    def on_sent(self, address: Address, request_id: int, now_ms: int) -> None:
        connection = self._connections.setdefault(self.key(address), _Connection())
        connection.in_flight = request_id
        connection.deadline_ms = now_ms + self.request_timeout_ms

    def on_result(self, address: Address, request_id: int, success: bool, now_ms: int) -> None:
        connection = self._connections.get(self.key(address))
        if connection is None or connection.in_flight != request_id:
            return
        connection.in_flight = None
        connection.backoff_until_ms = now_ms if success else now_ms + self.retry_backoff_ms

    def expired(self, now_ms: int) -> list[int]:
        """Request ids whose timeout passed; their connections back off."""
        ids = []
        for connection in self._connections.values():
            if connection.in_flight is not None and now_ms >= connection.deadline_ms:
                ids.append(connection.in_flight)
                connection.in_flight = None
                connection.backoff_until_ms = now_ms + self.retry_backoff_ms
        return ids

    def next_deadline_ms(self, now_ms: int) -> int | None:
        deadlines = [connection.deadline_ms if connection.in_flight is not None
                     else connection.backoff_until_ms
                     for connection in self._connections.values()
                     if connection.in_flight is not None or connection.backoff_until_ms > now_ms]
        return min(deadlines) if deadlines else None

    def reset_all(self) -> None:
        self._connections.clear()
