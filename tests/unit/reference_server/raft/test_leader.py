"""The leader's high watermark (also across voter changes), fetch bookkeeping, observers and check-quorum
(Kafka's ``LeaderState``)."""

from __future__ import annotations

from kafka_admin_kraft_server.raft.api import ReplicaKey
from kafka_admin_kraft_server.raft.leader import LeaderState, ReplicaProgress, majority_end_offset
from unit.reference_server.raft.raft_testlib import uuid, voter_set


def leader(voters: list[int], epoch_start: int = 5, local: int = 1) -> LeaderState:
    return LeaderState(
        epoch=3,
        local_key=ReplicaKey(local, uuid(local)),
        epoch_start_offset=epoch_start,
        voters=voter_set(voters),
        granting_voters=frozenset(voters),
        check_quorum_timeout_ms=3000,
        now_ms=0,
    )


def key(node: int) -> ReplicaKey:
    return ReplicaKey(node, uuid(node))


def test_majority_offset_is_the_entry_at_half_of_the_descending_order() -> None:
    def progress(*ends: int | None) -> list[ReplicaProgress]:
        return [ReplicaProgress(key(i + 1), end) for i, end in enumerate(ends)]

    assert majority_end_offset(progress(10, 8, 5)) == 8
    assert majority_end_offset(progress(5, 10, 8)) == 8
    assert majority_end_offset(progress(10, 8, 5, 3)) == 5  # 4 voters: index 2, held by 3 of them
    assert majority_end_offset(progress(10, None, None)) is None  # unknown offsets sort last
    assert majority_end_offset(progress(10, 9, None)) == 9
    assert majority_end_offset(progress(7)) == 7
    assert majority_end_offset([]) is None


def test_high_watermark_needs_a_majority_past_the_epoch_start() -> None:
    state = leader([1, 2, 3], epoch_start=5)
    assert not state.update_local_state(10, now_ms=1)
    assert state.high_watermark is None  # only the leader holds anything yet
    assert not state.update_replica_state(key(2), 2, 5, leader_end_offset=10)
    assert state.high_watermark is None  # 5 is the LeaderChange offset: not past the epoch start
    assert state.update_replica_state(key(2), 3, 6, leader_end_offset=10)
    assert state.high_watermark == 6
    assert state.update_replica_state(key(3), 4, 10, leader_end_offset=10)
    assert state.high_watermark == 10


def test_high_watermark_never_decreases() -> None:
    state = leader([1, 2, 3])
    state.update_local_state(20, 1)
    state.update_replica_state(key(2), 2, 20, 20)
    assert state.high_watermark == 20
    assert not state.update_replica_state(key(2), 3, 12, 20)  # a fetch offset going back
    assert state.high_watermark == 20


def test_adding_a_lagging_voter_raises_the_threshold_and_keeps_the_old_high_watermark() -> None:
    state = leader([1, 2, 3])
    state.update_local_state(20, 1)
    state.update_replica_state(key(2), 2, 18, 20)
    assert state.high_watermark == 18
    state.update_voter_set(voter_set([1, 2, 3, 4, 5]))  # two new voters that never fetched
    assert not state.update_local_state(30, 3)
    assert state.high_watermark == 18  # candidate is None now; the old value stays
    state.update_replica_state(key(3), 4, 30, 30)
    assert state.high_watermark == 18  # 30, 30, 18, ?, ?: index 2 is 18, not above 18
    state.update_replica_state(key(2), 5, 25, 30)
    assert state.high_watermark == 25


def test_removing_voters_lowers_the_threshold() -> None:
    state = leader([1, 2, 3, 4, 5])
    state.update_local_state(30, 1)
    state.update_replica_state(key(2), 2, 28, 30)
    assert state.high_watermark is None  # 30, 28, ?, ?, ?: index 2 unknown
    state.update_voter_set(voter_set([1, 2, 3]))
    assert state.maybe_update_high_watermark()
    assert state.high_watermark == 28
    assert ReplicaKey(4, uuid(4)) not in state.observer_states  # never fetched: not an observer either


def test_observers_never_move_the_high_watermark() -> None:
    state = leader([1, 2, 3])
    state.update_local_state(20, 1)
    assert not state.update_replica_state(key(7), 2, 20, 20)
    assert state.high_watermark is None
    assert key(7) in state.observer_states
    # A voter id with another directory id is a different replica: an observer too.
    assert not state.update_replica_state(ReplicaKey(2, uuid(99)), 3, 20, 20)
    assert state.high_watermark is None
    assert not state.update_replica_state(ReplicaKey(-1), 3, 20, 20)  # consumers are not tracked
    assert ReplicaKey(-1) not in state.observer_states


def test_caught_up_timestamps_follow_kafka_rules() -> None:
    progress = ReplicaProgress(key(2))
    progress.update_fetch(now_ms=100, fetch_offset=10, leader_end_offset=10)
    assert (progress.last_fetch_ms, progress.last_caught_up_ms) == (100, 100)
    progress.update_fetch(now_ms=200, fetch_offset=12, leader_end_offset=15)  # behind, but reached 10
    assert (progress.last_fetch_ms, progress.last_caught_up_ms) == (200, 100)
    progress.update_fetch(now_ms=300, fetch_offset=15, leader_end_offset=20)  # reached the end seen at 200
    assert (progress.last_fetch_ms, progress.last_caught_up_ms) == (300, 200)
    progress.update_fetch(now_ms=400, fetch_offset=16, leader_end_offset=25)  # not even that
    assert (progress.last_fetch_ms, progress.last_caught_up_ms) == (400, 200)
    assert progress.end_offset == 16


def test_check_quorum_needs_a_majority_of_fetching_voters() -> None:
    state = leader([1, 2, 3, 4, 5])
    assert not state.check_quorum_expired(2999)
    assert state.check_quorum_expired(3000)
    state.record_fetching_voter(2, 1000)
    assert state.check_quorum_expired(3000)  # leader + 1 of 5 is no majority
    state.record_fetching_voter(3, 1500)
    assert not state.check_quorum_expired(4499)
    assert state.check_quorum_expired(4500)
    assert not leader([1]).check_quorum_expired(10**9)  # a single voter never loses its quorum


def test_a_lone_leader_gives_the_voter_it_adds_a_whole_timeout_to_fetch() -> None:
    state = leader([1])
    assert not state.check_quorum_expired(60_000)  # alone for a minute
    state.update_voter_set(voter_set([1, 2]))
    assert not state.check_quorum_expired(62_999)
    assert state.check_quorum_expired(63_000)


def test_acknowledgements_and_preferred_candidates() -> None:
    state = leader([1, 2, 3])
    assert state.unacknowledged_voters() == [2, 3]
    state.update_replica_state(key(3), 1, 9, 10)
    state.update_replica_state(key(2), 1, 4, 10)
    assert state.unacknowledged_voters() == []
    assert state.voters_by_descending_end_offset() == [key(3), key(2)]


def _leader_state(ids: list[int]) -> LeaderState:
    state = LeaderState(1, ReplicaKey(1, uuid(1)), 10, voter_set(ids), frozenset(ids), 3000, 0)
    return state


def test_hwm_adding_a_lagging_voter_raises_the_threshold_but_never_goes_back() -> None:
    state = _leader_state([1, 2, 3])
    state.update_local_state(100, 0)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 0, 100, 100)
    assert state.high_watermark == 100
    state.update_replica_state(ReplicaKey(4, uuid(4)), 0, 20, 100)  # observer: never moves the HWM
    state.update_voter_set(voter_set([1, 2, 3, 4, 5]))  # 4 at 20, 3 and 5 unknown
    state.update_local_state(120, 1)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 1, 120, 120)
    assert state.high_watermark == 100  # candidate = 20 (index 2): kept, never decreases
    state.update_replica_state(ReplicaKey(4, uuid(4)), 2, 120, 120)
    assert state.high_watermark == 120


def test_hwm_removing_a_voter_lowers_the_threshold_and_a_non_voter_leader_is_not_counted() -> None:
    state = _leader_state([1, 2, 3, 4])
    state.update_local_state(50, 0)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 0, 50, 50)
    assert state.high_watermark is None  # 2 of 4
    state.update_voter_set(voter_set([1, 2, 3]))
    assert state.maybe_update_high_watermark() and state.high_watermark == 50
    state.update_voter_set(voter_set([2, 3, 4]))  # the leader removed itself
    state.update_local_state(80, 1)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 1, 80, 80)
    assert state.high_watermark == 50  # only 2 of {2, 3, 4} at 80
    state.update_replica_state(ReplicaKey(3, uuid(3)), 1, 70, 80)
    assert state.high_watermark == 70


def test_idle_observers_are_dropped_after_the_session_timeout() -> None:
    state = LeaderState(
        epoch=5,
        local_key=ReplicaKey(1, uuid(1)),
        epoch_start_offset=0,
        voters=voter_set([1]),
        granting_voters=frozenset({1}),
        check_quorum_timeout_ms=3000,
        now_ms=0,
    )
    state.update_replica_state(ReplicaKey(7, uuid(7)), 1000, 0, 5)
    assert [o.key.id for o in state.observers(1000 + 299_999, 300_000)] == [7]
    assert state.observers(1000 + 300_000, 300_000) == []
