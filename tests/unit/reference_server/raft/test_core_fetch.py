"""Fetch on both sides: diverging-epoch truncation, the fetch purgatory, wrong-leader answers and the
follower's high watermark."""

from __future__ import annotations

import pytest
from simulation.memory import MemoryLog, MemoryStore

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID
from kafka_admin_kraft.records import decode_batches, encode_batch
from kafka_admin_kraft.storage import QuorumState
from kafka_admin_kraft_server.raft.api import Address
from kafka_admin_kraft_server.raft.core import NotLeaderError, RaftInvariantError
from unit.reference_server.raft.raft_testlib import (
    LISTENER,
    STATIC_ONE,
    Network,
    Replica,
    describe_request,
    endpoint,
    fetch,
    leader_with_log,
    make_replica,
    noop_batch,
    request,
    single_reply,
    voter_set,
)

FETCH = 1


def fetch_answer(
    replica: Replica, body: messages.FetchRequest, now: int = 0, version: int = 17
) -> messages.FetchResponse.PartitionData:
    replica.core.handle_request(request(FETCH, body, version), now)
    response = single_reply(replica, now)
    assert isinstance(response, messages.FetchResponse) and response.error_code == 0
    return response.responses[0].partitions[0]


def test_leader_answers_with_the_diverging_epoch() -> None:
    leader = leader_with_log([1, 1, 3, 3, 3])  # then its LeaderChange at offset 5, epoch 4
    epoch = leader.core.epoch
    assert epoch == 4 and leader.log.end_offset() == 6
    answer = fetch_answer(leader, fetch(epoch, 2, fetch_offset=3, last_epoch=2))
    assert (answer.diverging_epoch.epoch, answer.diverging_epoch.end_offset) == (1, 2)
    assert answer.records == b"" and answer.error_code == 0
    answer = fetch_answer(leader, fetch(epoch, 2, fetch_offset=7, last_epoch=3))
    assert (answer.diverging_epoch.epoch, answer.diverging_epoch.end_offset) == (3, 5)
    answer = fetch_answer(leader, fetch(epoch, 2, fetch_offset=4, last_epoch=3))
    assert answer.diverging_epoch.epoch == -1
    assert [batch.base_offset for batch in decode_batches(answer.records)] == [4, 5]
    assert answer.current_leader.leader_id == 1 and answer.current_leader.leader_epoch == epoch
    assert answer.high_watermark == 6  # a single voter commits its own flushed log


def test_follower_truncates_to_the_diverging_epoch_and_fetches_again() -> None:
    log = MemoryLog()
    for offset, epoch in enumerate([1, 1, 2, 2]):
        log.append(noop_batch(offset, epoch))
    log.flush()
    store = MemoryStore()
    store.write(QuorumState(0, 1, 4, -1, current_voters=(1,)))
    follower = make_replica(2, STATIC_ONE, kraft_version=0, log=log, store=store)
    assert follower.core.role == "follower" and follower.core.leader_id == 1
    sent = follower.core.poll(0).sends
    assert len(sent) == 1 and sent[0].api_key == FETCH and sent[0].destination == Address("n1", 9001, 1)
    body = sent[0].body
    assert isinstance(body, messages.FetchRequest)
    partition = body.topics[0].partitions[0]
    assert (partition.fetch_offset, partition.last_fetched_epoch, partition.current_leader_epoch) == (4, 2, 4)
    assert body.replica_state.replica_id == 2 and body.topics[0].topic_id == METADATA_TOPIC_ID
    diverging = messages.FetchResponse(
        responses=[
            messages.FetchResponse.FetchableTopicResponse(
                topic_id=METADATA_TOPIC_ID,
                partitions=[
                    messages.FetchResponse.PartitionData(
                        high_watermark=-1,
                        current_leader=messages.FetchResponse.LeaderIdAndEpoch(leader_id=1, leader_epoch=4),
                        diverging_epoch=messages.FetchResponse.EpochEndOffset(epoch=1, end_offset=2),
                    )
                ],
            )
        ]
    )
    follower.core.handle_response(sent[0].request_id, diverging, 1)
    assert follower.log.end_offset() == 2 and follower.log.last_epoch() == 1
    again = follower.core.poll(1).sends
    assert len(again) == 1
    body = again[0].body
    assert isinstance(body, messages.FetchRequest)
    assert (body.topics[0].partitions[0].fetch_offset, body.topics[0].partitions[0].last_fetched_epoch) == (
        2,
        1,
    )


def response(
    epoch: int, *, high_watermark: int = -1, records: bytes = b"", diverging: tuple[int, int] | None = None
) -> messages.FetchResponse:
    partition = messages.FetchResponse.PartitionData(
        high_watermark=high_watermark,
        records=records,
        current_leader=messages.FetchResponse.LeaderIdAndEpoch(leader_id=1, leader_epoch=epoch),
    )
    if diverging is not None:
        partition.diverging_epoch = messages.FetchResponse.EpochEndOffset(
            epoch=diverging[0], end_offset=diverging[1]
        )
    return messages.FetchResponse(
        responses=[
            messages.FetchResponse.FetchableTopicResponse(topic_id=METADATA_TOPIC_ID, partitions=[partition])
        ]
    )


def test_truncation_below_the_high_watermark_is_refused() -> None:
    log = MemoryLog()
    for offset, epoch in enumerate([1, 1, 2, 2]):
        log.append(noop_batch(offset, epoch))
    log.flush()
    store = MemoryStore()
    store.write(QuorumState(0, 1, 4, -1, current_voters=(1,)))
    follower = make_replica(2, STATIC_ONE, kraft_version=0, log=log, store=store)
    first = follower.core.poll(0).sends[0]
    follower.core.handle_response(first.request_id, response(4, high_watermark=3), 1)
    assert follower.core.high_watermark == 3
    second = follower.core.poll(1).sends[0]
    with pytest.raises(RaftInvariantError):
        follower.core.handle_response(second.request_id, response(4, diverging=(1, 2)), 2)
    assert follower.log.end_offset() == 4  # nothing was truncated


def test_observer_replicates_and_its_high_watermark_is_capped_by_its_log() -> None:
    leader = leader_with_log([1, 1, 2])
    observer = make_replica(2, STATIC_ONE, kraft_version=0)
    network = Network([leader, observer])
    network.run(until=100)
    assert observer.core.role == "follower" and observer.core.leader_id == 1 and not observer.core.is_voter
    assert observer.log.all_keys() == leader.log.all_keys()
    assert observer.core.high_watermark == leader.core.high_watermark == 4
    for _ in range(3):
        leader.core.append([messages.NoOpRecord()], network.now)
    network.run(until=200)
    assert observer.log.all_keys() == leader.log.all_keys() and observer.core.high_watermark == 7


def test_follower_high_watermark_is_the_leader_one_capped_by_its_log_end() -> None:
    log = MemoryLog()
    for offset, epoch in enumerate([1, 1, 2]):
        log.append(noop_batch(offset, epoch))
    log.flush()
    store = MemoryStore()
    store.write(QuorumState(0, 1, 4, -1, current_voters=(1,)))
    follower = make_replica(2, STATIC_ONE, kraft_version=0, log=log, store=store)
    first = follower.core.poll(0).sends[0]
    follower.core.handle_response(first.request_id, response(4, high_watermark=100), 1)
    assert follower.core.high_watermark == 3
    second = follower.core.poll(1).sends[0]
    records = noop_batch(3, 4)
    follower.core.handle_response(
        second.request_id, response(4, high_watermark=100, records=encode_batch(records)), 2
    )
    assert follower.log.end_offset() == 4 and follower.log.flushed_offset() == 4
    assert follower.core.high_watermark == 4
    third = follower.core.poll(2).sends[0]
    follower.core.handle_response(third.request_id, response(4, high_watermark=2), 3)
    assert follower.core.high_watermark == 4  # never goes back
    # A late answer to a request that is no longer in flight is ignored.
    follower.core.handle_response(third.request_id, response(4, high_watermark=100, records=b"junk"), 4)
    assert follower.log.end_offset() == 4


def test_parked_fetch_is_answered_on_new_data_or_when_its_wait_ends() -> None:
    leader = leader_with_log([1])
    end = leader.log.end_offset()
    epoch = leader.core.epoch
    leader.core.handle_request(
        request(FETCH, fetch(epoch, 2, end, epoch, max_wait=500), 17, request_id=7), 10
    )
    assert leader.core.poll(10).replies == []
    result = leader.core.poll(20)
    assert result.replies == [] and result.next_poll_ms <= 510
    leader.core.append([messages.NoOpRecord()], 30)
    replies = leader.core.poll(30).replies
    assert [reply.request_id for reply in replies] == [7]
    body = replies[0].body
    assert isinstance(body, messages.FetchResponse)
    assert [b.base_offset for b in decode_batches(body.responses[0].partitions[0].records or b"")] == [end]
    leader.core.handle_request(request(FETCH, fetch(epoch, 2, end + 1, epoch, max_wait=500), 17, 8), 40)
    assert leader.core.poll(100).replies == []
    replies = leader.core.poll(540).replies
    assert [reply.request_id for reply in replies] == [8]
    body = replies[0].body
    assert isinstance(body, messages.FetchResponse) and body.responses[0].partitions[0].records == b""


def test_non_leader_answers_fetch_with_the_current_leader() -> None:
    network = Network([make_replica(node, voter_set([1, 2, 3]), seed=node) for node in (1, 2, 3)])
    network.run(until=5000)
    leader = network.leader()
    assert leader is not None
    follower = next(r for r in network.replicas.values() if r is not leader)
    epoch = follower.core.epoch
    for version, expect_endpoint in ((17, True), (15, False)):
        answer = fetch_answer(follower, fetch(epoch, 9, 0, 0), network.now, version=version)
        assert answer.error_code == 6  # NOT_LEADER_OR_FOLLOWER
        assert (answer.current_leader.leader_id, answer.current_leader.leader_epoch) == (
            leader.node_id,
            epoch,
        )
        follower.core.handle_request(request(FETCH, fetch(epoch, 9, 0, 0), version), network.now)
        response = single_reply(follower, network.now)
        assert isinstance(response, messages.FetchResponse)
        nodes = [(n.node_id, n.host, n.port) for n in response.node_endpoints]
        expected = endpoint(leader.node_id)
        assert nodes == ([(leader.node_id, expected.host, expected.port)] if expect_endpoint else [])
        response.encode(version)
    stale = fetch_answer(follower, fetch(epoch - 1, 9, 0, 0), network.now)
    assert stale.error_code == 74 and stale.current_leader.leader_epoch == epoch
    assert fetch_answer(follower, fetch(epoch + 1, 9, 0, 0), network.now).error_code == 75
    bad = fetch_answer(follower, fetch(epoch, 9, 0, epoch + 1), network.now)
    assert bad.error_code == 42  # last fetched epoch above the request's epoch
    with pytest.raises(NotLeaderError):
        follower.core.append([messages.NoOpRecord()], network.now)


def test_observer_finds_the_leader_through_bootstrap_servers() -> None:
    voters = voter_set([1, 2, 3])
    replicas = [make_replica(node, voters, seed=node) for node in (1, 2, 3)]
    observer = make_replica(
        4, voters, seed=4, log=MemoryLog(), bootstrap_servers=(Address("n2", 9002), Address("n3", 9003))
    )
    network = Network([*replicas, observer])
    network.run(until=6000)
    leader = network.leader()
    assert leader is not None
    assert observer.core.role == "follower" and observer.core.leader_id == leader.node_id
    assert observer.core.voters == voters  # learnt from the VotersRecord the leader wrote
    state = leader.core.leader_state()
    assert state is not None and [k.id for k in state.observer_states] == [4]


def test_listener_of_the_request_picks_the_node_endpoint() -> None:
    network = Network([make_replica(node, voter_set([1, 2, 3]), seed=node) for node in (1, 2, 3)])
    network.run(until=5000)
    leader = network.leader()
    assert leader is not None
    follower = next(r for r in network.replicas.values() if r is not leader)
    follower.core.handle_request(request(FETCH, fetch(follower.core.epoch, 9, 0, 0), 17), network.now)
    response = single_reply(follower, network.now)
    assert isinstance(response, messages.FetchResponse)
    assert [n.host for n in response.node_endpoints] == [f"n{leader.node_id}"]
    other = request(FETCH, fetch(follower.core.epoch, 9, 0, 0), 17)
    follower.core.handle_request(type(other)(2, FETCH, 17, other.body, "NO_SUCH_LISTENER"), network.now)
    response = single_reply(follower, network.now)
    assert isinstance(response, messages.FetchResponse) and response.node_endpoints == []
    assert LISTENER == "CONTROLLER"


def test_a_parked_fetch_answered_later_does_not_refresh_the_replica_state() -> None:
    """Regression: a follower's long-poll Fetch parked at the leader, answered after the follower died
    (its wait ends, or new data arrives), stamped the replica with the answer time and its old fetch
    offset, so DescribeQuorum showed a restarted follower as freshly fetched at its old end offset.
    The bookkeeping is the fetch's arrival (Kafka's ``LeaderState.updateReplicaState``), never the
    delayed answer."""
    leader = leader_with_log([1])
    end = leader.log.end_offset()
    epoch = leader.core.epoch
    leader.core.handle_request(request(FETCH, fetch(epoch, 2, end, epoch, max_wait=500), 17, 7), 100)
    assert leader.core.poll(100).replies == []

    def follower_state(now: int) -> messages.DescribeQuorumResponse.ReplicaState:
        leader.core.handle_request(request(55, describe_request(), 2, request_id=99), now)
        replies = [r for r in leader.core.poll(now).replies if r.request_id == 99]
        body = replies[0].body
        assert isinstance(body, messages.DescribeQuorumResponse)
        partition = body.topics[0].partitions[0]
        return next(v for v in [*partition.current_voters, *partition.observers] if v.replica_id == 2)

    assert (follower_state(200).last_fetch_timestamp, follower_state(200).log_end_offset) == (100, end)
    # The follower dies; its parked fetch is answered when the wait ends, then when data arrives.
    assert [r.request_id for r in leader.core.poll(600).replies] == [7]
    state = follower_state(650)
    assert (state.last_fetch_timestamp, state.last_caught_up_timestamp) == (100, 100)
    assert state.log_end_offset == end
    leader.core.handle_request(request(FETCH, fetch(epoch, 2, end, epoch, max_wait=500), 17, 8), 700)
    leader.core.append([messages.NoOpRecord()], 800)
    assert [r.request_id for r in leader.core.poll(800).replies] == [8]
    assert follower_state(900).last_fetch_timestamp == 700
