"""The leader's bookkeeping: replica progress, the high watermark, check-quorum, BeginQuorumEpoch acks.

Mirrors Kafka's ``LeaderState``; the rules are its ``updateReplicaState`` (fetch-time bookkeeping) and
(high watermark with voter changes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_admin_kraft.protocol.primitives import ZERO_UUID

from .api import ReplicaKey, VoterSet

CHECK_QUORUM_TIMEOUT_FACTOR = 1.5
"""The leader resigns when no majority fetched within fetch timeout x 1.5 (Kafka's LeaderState)."""


@dataclass
class ReplicaProgress:
    """What the leader knows of one replica in its epoch."""

    key: ReplicaKey
    end_offset: int | None = None
    """The replica's last fetch offset (the leader's own flushed end offset for itself)."""
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1
    last_fetch_leader_end_offset: int = -1
    """The leader's log end offset when this replica last fetched."""

    def update_fetch(self, now_ms: int, fetch_offset: int, leader_end_offset: int) -> None:
        """Record a fetch (Kafka's ``LeaderState.updateReplicaState``).

        1. If the fetch offset reaches the leader's end offset now, the replica is caught up now.
        2. Otherwise, if it reaches the leader end offset seen at the previous fetch (when > 0), the
           replica was caught up at the previous fetch time.
        3. The fetch time, fetch offset and current leader end offset are remembered.
        """
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now_ms)
        elif self.last_fetch_leader_end_offset > 0 and fetch_offset >= self.last_fetch_leader_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.last_fetch_ms = now_ms
        self.last_fetch_leader_end_offset = leader_end_offset
        self.end_offset = fetch_offset


def sort_key(progress: ReplicaProgress) -> tuple[int, int, int, bytes]:
    """Descending end offset, unknown last, ties by replica key."""
    end = progress.end_offset
    return (0 if end is not None else 1, -(end if end is not None else 0), progress.key.id,
            progress.key.directory_id.bytes)


def majority_end_offset(progress: list[ReplicaProgress]) -> int | None:
    """The largest end offset held by a majority of ``progress`` (Kafka's
    ``LeaderState.maybeUpdateHighWatermark``).

    1. Sort the voters by end offset descending, unknown last, ties by replica key.
    2. Take the entry at index floor(n / 2): a majority holds at least its end offset.
    """
    if not progress:
        return None
    ordered = sorted(progress, key=sort_key)
    return ordered[len(ordered) // 2].end_offset


@dataclass
class LeaderState:
    """The leader of ``epoch``; ``epoch_start_offset`` is the offset of its LeaderChange batch."""

    epoch: int
    local_key: ReplicaKey
    epoch_start_offset: int
    voters: VoterSet
    granting_voters: frozenset[int]
    check_quorum_timeout_ms: int
    now_ms: int
    high_watermark: int | None = None
    voter_states: dict[int, ReplicaProgress] = field(default_factory=dict)
    observer_states: dict[ReplicaKey, ReplicaProgress] = field(default_factory=dict)
    acknowledged: set[int] = field(default_factory=set)
    """Voters that answered BeginQuorumEpoch or fetched in this epoch."""
    fetched_voters: set[int] = field(default_factory=set)
    check_quorum_deadline_ms: int = 0
    next_begin_quorum_ms: int = 0
    resign_requested: bool = False

    def __post_init__(self) -> None:
        self.check_quorum_deadline_ms = self.now_ms + self.check_quorum_timeout_ms
        self.next_begin_quorum_ms = self.now_ms
        self.update_voter_set(self.voters)

    # -- voters -------------------------------------------------------------------------------

    def update_voter_set(self, voters: VoterSet) -> None:
        """Follow a new (possibly uncommitted) voter set: new voters start from their observer state
        when they had one, removed voters become observers."""
        old = self.voter_states
        self.voters = voters
        self.voter_states = {}
        for voter_id, info in voters.voters.items():
            state = old.get(voter_id)
            if state is None or not same_replica(state.key, info.key):
                state = self.observer_states.pop(info.key, None) or ReplicaProgress(info.key)
            state.key = info.key
            self.voter_states[voter_id] = state
        for voter_id, state in old.items():
            removed = voter_id not in self.voter_states and voter_id != self.local_key.id
            if removed and state.last_fetch_ms >= 0:
                self.observer_states[state.key] = state
        self.acknowledged &= set(voters.ids())

    def is_voter(self, key: ReplicaKey) -> bool:
        return self.voters.is_voter(key)

    def unacknowledged_voters(self) -> list[int]:
        return sorted(voter_id for voter_id in self.voters.ids()
                      if voter_id != self.local_key.id and voter_id not in self.acknowledged)

    # -- progress -----------------------------------------------------------------------------

    def update_local_state(self, flushed_end_offset: int, now_ms: int) -> bool:
        """The leader's own durable end offset moved; True if the high watermark advanced."""
        state = self.voter_states.get(self.local_key.id)
        if state is None:
            return False
        state.end_offset = flushed_end_offset
        state.last_fetch_ms = now_ms
        state.last_caught_up_ms = now_ms
        return self.maybe_update_high_watermark()

    def update_replica_state(self, key: ReplicaKey, now_ms: int, fetch_offset: int,
                             leader_end_offset: int) -> bool:
        """A replica fetched at ``fetch_offset``; True if the high watermark advanced.

        1. Fetches with a negative replica id (consumers) or from the leader's own id are ignored.
        2. A voter (id and directory id match the voter set) updates its voter state and acknowledged
           the epoch (check-quorum counts fetches when they arrive, see ``record_fetching_voter``).
        3. Anyone else is tracked as an observer (kept for DescribeQuorum), never moving the HWM.
        4. The high watermark is recomputed from the voters.
        """
        if key.id < 0 or key.id == self.local_key.id:
            return False
        if self.is_voter(key):
            state = self.voter_states[key.id]
            state.update_fetch(now_ms, fetch_offset, leader_end_offset)
            self.acknowledged.add(key.id)
            return self.maybe_update_high_watermark()
        observer = self.observer_states.get(key)
        if observer is None:
            observer = self.observer_states[key] = ReplicaProgress(key)
        observer.update_fetch(now_ms, fetch_offset, leader_end_offset)
        return False

    def maybe_update_high_watermark(self) -> bool:
        """Recompute the high watermark (Kafka's ``LeaderState.maybeUpdateHighWatermark``).

        1. Candidate = the largest end offset held by a majority of the current voters.
        2. It counts only once it passes the epoch start offset (the LeaderChange batch is committed).
        3. The high watermark never decreases: a smaller candidate is ignored.
        """
        candidate = majority_end_offset(list(self.voter_states.values()))
        if candidate is None or candidate <= self.epoch_start_offset:
            return False
        if self.high_watermark is None or candidate > self.high_watermark:
            self.high_watermark = candidate
            return True
        return False

    # -- check quorum -------------------------------------------------------------------------

    def record_fetching_voter(self, voter_id: int, now_ms: int) -> None:
        """A voter fetched (Fetch or FetchSnapshot): once a majority did, restart the check-quorum timer."""
        if voter_id == self.local_key.id or voter_id not in self.voters.voters:
            return
        self.fetched_voters.add(voter_id)
        needed = self.voters.majority()
        if self.local_key.id in self.voters.voters:
            needed -= 1
        if len(self.fetched_voters) >= needed:
            self.fetched_voters.clear()
            self.check_quorum_deadline_ms = now_ms + self.check_quorum_timeout_ms

    def check_quorum_expired(self, now_ms: int) -> bool:
        """Whether no majority fetched in time. A leader that is the only voter never expires, and its
        timer restarts meanwhile (Kafka's ``timeUntilCheckQuorumExpires``), so that the voter it adds
        next gets a whole timeout to start fetching."""
        if set(self.voters.ids()) <= {self.local_key.id}:
            self.check_quorum_deadline_ms = now_ms + self.check_quorum_timeout_ms
            return False
        return now_ms >= self.check_quorum_deadline_ms

    def observers(self, now_ms: int, session_timeout_ms: int) -> list[ReplicaProgress]:
        """Observers that fetched within the session timeout, by replica key; idle ones are dropped."""
        for key in [key for key, state in self.observer_states.items()
                    if state.last_fetch_ms < 0 or now_ms - state.last_fetch_ms >= session_timeout_ms]:
            del self.observer_states[key]
        ordered = sorted(self.observer_states, key=lambda key: (key.id, key.directory_id.bytes))
        return [self.observer_states[key] for key in ordered]

    def voters_by_descending_end_offset(self) -> list[ReplicaKey]:
        """Other voters, most caught up first (EndQuorumEpoch's preferred candidates)."""
        others = [state for voter_id, state in self.voter_states.items() if voter_id != self.local_key.id]
        return [state.key for state in sorted(others, key=sort_key)]


def same_replica(old: ReplicaKey, new: ReplicaKey) -> bool:
    """True when two keys may name the same replica: same id, and the same directory id unless one
    of them is unknown."""
    return old.id == new.id and (ZERO_UUID in (old.directory_id, new.directory_id)
                                 or old.directory_id == new.directory_id)
