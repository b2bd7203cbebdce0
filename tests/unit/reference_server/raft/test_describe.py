"""DescribeQuorum answers, v0-v3, as Kafka's ``KafkaRaftClient`` gives them."""

from __future__ import annotations

import pytest
from simulation.memory import MemoryLog

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft_server.raft import describe
from kafka_admin_kraft_server.raft.api import Address, ReplicaKey
from kafka_admin_kraft_server.raft.leader import LeaderState
from unit.reference_server.raft.raft_testlib import (
    Network,
    describe_request,
    make_replica,
    request,
    single_reply,
    uuid,
    voter_set,
)

DQ = messages.DescribeQuorumResponse
VOTERS = voter_set([1, 2, 3])


@pytest.fixture(scope="module")
def cluster() -> Network:
    replicas = [make_replica(node, VOTERS, seed=node) for node in (1, 2, 3)]
    observer = make_replica(4, VOTERS, seed=4, log=MemoryLog(), bootstrap_servers=(Address("n1", 9001),))
    network = Network([*replicas, observer])
    network.run(until=6000)
    return network


def ask(network: Network, node: int, version: int, body: messages.DescribeQuorumRequest | None = None) -> DQ:
    replica = network.replicas[node]
    replica.core.handle_request(request(55, body or describe_request(), version), network.now)
    response = single_reply(replica, network.now)
    assert isinstance(response, DQ)
    response.encode(version)  # the shape fits the version
    return response


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_leader_answer(cluster: Network, version: int) -> None:
    leader = cluster.leader()
    assert leader is not None
    response = ask(cluster, leader.node_id, version)
    assert response.error_code == 0 and response.error_message == ""  # Kafka's generated default
    [topic] = response.topics
    assert topic.topic_name == "__cluster_metadata"
    [partition] = topic.partitions
    assert (partition.partition_index, partition.error_code, partition.error_message) == (0, 0, "")
    assert (partition.leader_id, partition.leader_epoch) == (leader.node_id, leader.core.epoch)
    assert partition.high_watermark == leader.core.leader_high_watermark > 0
    assert [v.replica_id for v in partition.current_voters] == [1, 2, 3]
    assert [o.replica_id for o in partition.observers] == [4]
    own = next(v for v in partition.current_voters if v.replica_id == leader.node_id)
    assert own.log_end_offset == leader.log.end_offset()
    assert own.last_fetch_timestamp == own.last_caught_up_timestamp == cluster.now  # the leader: now
    for state in [*partition.current_voters, *partition.observers]:
        assert state.log_end_offset == leader.log.end_offset()  # everyone caught up
        assert 0 < state.last_fetch_timestamp <= cluster.now and state.last_caught_up_timestamp > 0
        expected_directory = uuid(state.replica_id) if version >= 2 else ZERO_UUID
        assert state.replica_directory_id == expected_directory
    if version >= 2:
        assert [
            (n.node_id, [(lis.name, lis.host, lis.port) for lis in n.listeners]) for n in response.nodes
        ] == [(i, [("CONTROLLER", f"n{i}", 9000 + i)]) for i in (1, 2, 3)]
    else:
        assert response.nodes == []
    if version >= 3:
        assert partition.committed_voters == partition.current_voters
    else:
        assert partition.committed_voters == []
    decoded = DQ.decode(response.encode(version), version)
    assert [v.replica_id for v in decoded.topics[0].partitions[0].current_voters] == [1, 2, 3]


@pytest.mark.parametrize("version", [0, 2])
def test_non_leader_answers_not_leader_or_follower(cluster: Network, version: int) -> None:
    follower = next(r for r in cluster.replicas.values() if not r.core.is_leader)
    response = ask(cluster, follower.node_id, version)
    [partition] = response.topics[0].partitions
    assert response.topics[0].topic_name == "__cluster_metadata"
    assert partition.error_code == 6
    assert partition.error_message == (
        "For requests intended only for the leader, this error indicates that the "
        "broker is not the current leader. For requests intended for any replica, "
        "this error indicates that the broker is not a replica of the topic "
        "partition."
    )
    assert DQ.decode(response.encode(version), version).topics[0].partitions[0].error_message == (
        partition.error_message if version >= 2 else ""
    )
    assert (partition.leader_id, partition.leader_epoch, partition.high_watermark) == (0, 0, 0)
    assert partition.current_voters == [] and partition.observers == []


def test_other_partitions_are_unknown(cluster: Network) -> None:
    leader = cluster.leader()
    assert leader is not None
    response = ask(cluster, leader.node_id, 2, describe_request("other-topic", (0, 1)))
    assert [
        (t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics
    ] == [("other-topic", [(0, 3), (1, 3)])]
    assert response.topics[0].partitions[0].error_message == "This server does not host this topic-partition."
    response = ask(cluster, leader.node_id, 1, describe_request("__cluster_metadata", (1,)))
    assert [(p.partition_index, p.error_code) for p in response.topics[0].partitions] == [(1, 3)]


def test_committed_voters_copy_states_and_use_sentinels() -> None:
    current = voter_set([1, 2])
    state = LeaderState(
        epoch=5,
        local_key=ReplicaKey(1, uuid(1)),
        epoch_start_offset=10,
        voters=current,
        granting_voters=frozenset({1, 2}),
        check_quorum_timeout_ms=3000,
        now_ms=0,
    )
    state.update_local_state(20, 100)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 150, 20, 20)
    state.update_replica_state(ReplicaKey(5, uuid(5)), 160, 12, 20)  # an observer
    committed = voter_set([1, 2, 3, 5])  # 3 was removed (uncommitted) and never seen; 5 observes
    response = describe.leader_response(state, 3, 200, 300_000, committed)
    [partition] = response.topics[0].partitions
    rows = [
        (v.replica_id, v.log_end_offset, v.last_fetch_timestamp, v.last_caught_up_timestamp)
        for v in partition.committed_voters
    ]
    assert rows == [(1, 20, 200, 200), (2, 20, 150, 150), (3, -1, -1, -1), (5, 12, 160, -1)]
    assert partition.committed_voters[2].replica_directory_id == uuid(3)
    assert partition.high_watermark == 20
    # No high watermark yet: CommittedVoters is empty.
    fresh = LeaderState(
        epoch=6,
        local_key=ReplicaKey(1, uuid(1)),
        epoch_start_offset=30,
        voters=current,
        granting_voters=frozenset({1}),
        check_quorum_timeout_ms=3000,
        now_ms=0,
    )
    response = describe.leader_response(fresh, 3, 200, 300_000, None)
    [partition] = response.topics[0].partitions
    assert partition.high_watermark == -1 and partition.committed_voters == []
    assert [v.log_end_offset for v in partition.current_voters] == [-1, -1]
