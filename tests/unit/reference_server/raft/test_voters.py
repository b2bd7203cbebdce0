"""Voter-set history: values keyed by offset, reverted when the log is truncated (KIP-853)."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft.records import control_batch
from kafka_admin_kraft_server.raft.api import Endpoint, ReplicaKey
from kafka_admin_kraft_server.raft.voters import (
    LogHistory,
    VoterSetHistory,
    voter_set_from_record,
    voters_record,
    with_local_endpoints,
)
from unit.reference_server.raft.raft_testlib import endpoint, uuid, voter_set


def test_log_history_values_by_offset() -> None:
    history: LogHistory[str] = LogHistory()
    assert history.last_value() is None and history.value_at_or_before(100) is None
    history.add_at(-1, "bootstrap")
    history.add_at(10, "a")
    history.add_at(20, "b")
    assert history.value_at_or_before(-1) == "bootstrap"
    assert history.value_at_or_before(9) == "bootstrap"
    assert history.value_at_or_before(10) == "a"
    assert history.value_at_or_before(19) == "a"
    assert history.value_at_or_before(1000) == "b"
    assert history.last_offset() == 20
    with pytest.raises(ValueError):
        history.add_at(20, "again")


def test_truncate_new_entries_reverts_to_the_previous_value() -> None:
    history: LogHistory[str] = LogHistory()
    for offset, value in ((-1, "v0"), (5, "v1"), (9, "v2")):
        history.add_at(offset, value)
    history.truncate_new_entries(9)  # the log now ends at 9: the record at 9 is gone
    assert history.last_value() == "v1"
    history.truncate_new_entries(6)
    assert history.last_value() == "v1"
    history.truncate_new_entries(5)
    assert history.last_value() == "v0"


def test_truncate_old_entries_keeps_the_value_in_force() -> None:
    history: LogHistory[str] = LogHistory()
    for offset, value in ((1, "a"), (3, "b"), (7, "c"), (12, "d")):
        history.add_at(offset, value)
    history.truncate_old_entries(10)
    assert history.entries() == [(7, "c"), (12, "d")]
    assert history.value_at_or_before(10) == "c"


def test_voters_record_round_trip() -> None:
    voters = voter_set([1, 2, 3])
    record = voters_record(voters)
    assert [v.voter_id for v in record.voters] == [1, 2, 3]
    decoded = messages.VotersRecord.decode(record.encode(0), 0)
    assert voter_set_from_record(decoded) == voters


def test_uncommitted_voters_record_is_reverted_when_truncated() -> None:
    """The latest VotersRecord counts at once, committed or not, and vanishes with truncation."""
    static = voter_set([1, 2, 3], directories=False)
    history = VoterSetHistory(static)
    assert history.last_voter_set() == static and history.kraft_version() == 0
    snapshot_voters = voter_set([1, 2, 3])
    history.apply_batch(
        control_batch(
            0,
            0,
            0,
            [
                messages.SnapshotHeaderRecord(version=0),
                messages.KRaftVersionRecord(version=0, k_raft_version=1),
                voters_record(snapshot_voters),
            ],
        ),
        offset_override=-1,
    )
    assert history.last_voter_set() == snapshot_voters and history.kraft_version() == 1
    assert history.last_voters_offset() == -1
    grown = voter_set([1, 2, 3, 4])
    history.apply_batch(
        control_batch(40, 2, 0, [messages.LeaderChangeMessage(version=0, leader_id=1), voters_record(grown)])
    )
    assert history.last_voters_offset() == 41
    assert history.last_voter_set() == grown  # uncommitted, yet in force
    assert history.voter_set_at(40) == snapshot_voters
    history.truncate_new_entries(41)  # the follower truncates at the VotersRecord
    assert history.last_voter_set() == snapshot_voters
    history.truncate_new_entries(0)
    assert history.last_voter_set() == snapshot_voters  # the snapshot's entry (-1) stays
    history.clear()
    assert history.last_voter_set() == static


def test_apply_batch_skips_records_below_min_offset_and_data_batches() -> None:
    history = VoterSetHistory()
    batch = control_batch(10, 1, 0, [voters_record(voter_set([1])), voters_record(voter_set([1, 2]))])
    history.apply_batch(batch, min_offset=11)
    assert history.voters.entries() == [(11, voter_set([1, 2]))]


def test_with_local_endpoints_updates_only_the_local_voter() -> None:
    voters = voter_set([1, 2], directories=False)
    moved = (Endpoint("CONTROLLER", "new-host", 1234),)
    updated = with_local_endpoints(voters, ReplicaKey(1, uuid(1)), moved)
    assert updated.voters[1].endpoints == moved
    assert updated.voters[1].key == ReplicaKey(1, uuid(1))  # the unknown directory id is filled in
    assert updated.voters[2] == voters.voters[2]
    same = with_local_endpoints(voter_set([1, 2]), ReplicaKey(1, uuid(1)), (endpoint(1),))
    assert same == voter_set([1, 2])
    assert with_local_endpoints(voters, ReplicaKey(9, ZERO_UUID), moved) == voters
