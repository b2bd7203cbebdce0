"""Voter changes on real processes (KIP-853 scenarios): a standalone controller grows to three, a
wiped controller is replaced under a new directory id, refusals reach the Admin client with Kafka's
errors, DescribeQuorum v3 shows CommittedVoters while a change is pending, and a leader killed with
an uncommitted VotersRecord leaves one voter set everywhere."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import pytest

from integration.harness import FAST_ELECTIONS, HOST, LISTENER, UNSTABLE_API_VERSIONS, Cluster, wait_until
from kafka_admin_kraft import Admin
from kafka_admin_kraft.protocol.exceptions import KafkaApiError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.local import LocalNode

FAST = {**FAST_ELECTIONS, "controller.quorum.request.timeout.ms": "2000", **UNSTABLE_API_VERSIONS}
"""With DescribeQuorum v3, which these tests (and those of reconcile and auto-join removal) read
CommittedVoters from."""


def format_observer(cluster: Cluster, node: LocalNode) -> None:
    """``kafka-storage format --no-initial-controllers``: meta.properties and bootstrap.checkpoint,
    no bootstrap snapshot (the node starts as an observer)."""
    dynamic = cluster.dynamic
    cluster.dynamic = False
    try:
        cluster.format_node(node)
    finally:
        cluster.dynamic = dynamic


def standalone(make_cluster: Callable[..., Cluster], size: int) -> Cluster:
    """Node 1 formatted with ``--standalone``, the others as observers."""
    cluster = make_cluster(size, properties=dict(FAST))
    first = cluster.nodes[1]
    others = {i: n for i, n in cluster.nodes.items() if i != 1}
    for node in cluster.nodes.values():
        cluster.write_config(node)
    cluster.nodes = {1: first}
    cluster.format_node(first)  # the bootstrap snapshot names node 1 only
    cluster.nodes = {1: first, **others}
    for node in others.values():
        format_observer(cluster, node)
    return cluster


def admin(cluster: Cluster) -> Admin:
    return Admin(bootstrap_controllers=cluster.bootstrap_servers(), request_timeout_ms=5000,
                 default_api_timeout_ms=15000)


def endpoints(node: LocalNode) -> list[dict[str, Any]]:
    return [{"listener": LISTENER, "host": HOST, "port": node.port}]


def observer_seen(cluster: Cluster, node: LocalNode) -> Callable[[], bool]:
    def seen() -> bool:
        found = cluster.find_leader()
        if found is None:
            return False
        _, partition = found
        return any(o.replica_id == node.node_id and o.replica_directory_id == node.directory_id
                   and o.last_caught_up_timestamp > 0 for o in partition.observers)
    return seen


def add_when_caught_up(cluster: Cluster, client: Admin, node: LocalNode, **kwargs: Any) -> None:
    wait_until(observer_seen(cluster, node), 20, f"node {node.node_id} fetching as an observer")

    def added() -> bool:
        try:
            client.add_raft_voter(node.node_id, node.directory_id, endpoints(node), **kwargs)
        except KafkaApiError as exc:
            if exc.code == 7:  # REQUEST_TIMED_OUT: not caught up yet / previous change not committed
                return False
            raise
        return True
    wait_until(added, 20, f"adding node {node.node_id}", interval=0.2)


def voter_keys(cluster: Cluster) -> set[tuple[int, str]]:
    found = cluster.find_leader()
    assert found is not None
    return {(v.replica_id, str(v.replica_directory_id)) for v in found[1].current_voters}


def error_of(call: Callable[[], Any]) -> tuple[int, str]:
    with pytest.raises(KafkaApiError) as info:
        call()
    return info.value.code, str(info.value)


def test_standalone_controller_grows_to_three_and_refusals(make_cluster: Callable[..., Cluster]) -> None:
    cluster = standalone(make_cluster, 3)
    cluster.start_all()
    cluster.wait_for_leader()
    with admin(cluster) as client:
        for node_id in (2, 3):
            add_when_caught_up(cluster, client, cluster.nodes[node_id])
        expected = {(i, str(n.directory_id)) for i, n in cluster.nodes.items()}
        wait_until(lambda: voter_keys(cluster) == expected, 10, "three voters")
        quorum = client.describe_metadata_quorum()
        assert {v.replica_id for v in quorum.voters} == {1, 2, 3}
        if quorum.committed_voters is not None:
            assert {v.replica_id for v in quorum.committed_voters} == {1, 2, 3}
        node2 = cluster.nodes[2]
        code, text = error_of(lambda: client.add_raft_voter(2, node2.directory_id, endpoints(node2)))
        assert code == 126 and "is already part of the set of voters" in text
        code, text = error_of(lambda: client.remove_raft_voter(2, Uuid.random()))
        assert code == 127 and "Cannot remove voter ReplicaKey(id=2" in text
        code, text = error_of(lambda: client.add_raft_voter(
            9, Uuid.random(), [{"listener": "OTHER", "host": HOST, "port": 1}]))
        assert code == 42 and "for the default listener ListenerName(CONTROLLER)" in text
        code, text = error_of(lambda: client.remove_raft_voter(2, node2.directory_id, cluster_id="wrong-id"))
        assert code == 104 and f'doesn\'t match the cluster id "{cluster.cluster_id}"' in text
    cluster.assert_running()


def test_replace_a_wiped_controller_under_a_new_directory_id(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(3, properties=dict(FAST)).format().start_all()
    leader_id, _ = cluster.wait_for_leader()
    victim = next(i for i in (3, 2) if i != leader_id)
    node = cluster.nodes[victim]
    old_directory = node.directory_id
    cluster.kill(victim)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = Uuid.random()
    format_observer(cluster, node)
    cluster.start(victim)
    with admin(cluster) as client:
        def removed() -> bool:
            try:
                client.remove_raft_voter(victim, old_directory)
            except KafkaApiError as exc:
                if exc.code == 7:  # the leader's first high watermark is not known yet
                    return False
                raise
            return True
        wait_until(removed, 20, f"removing the old directory of node {victim}", interval=0.2)
        add_when_caught_up(cluster, client, node)
    wait_until(lambda: (victim, str(node.directory_id)) in voter_keys(cluster), 10, "the new directory id")
    assert (victim, str(old_directory)) not in voter_keys(cluster)
    cluster.assert_running()


def test_static_quorum_refuses_voter_changes(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(3, dynamic=False, properties=dict(FAST)).format().start_all()
    # Kafka checks the leader's high watermark (REQUEST_TIMED_OUT) before kraft.version.
    wait_until(lambda: (found := cluster.find_leader()) is not None and found[1].high_watermark > 0, 20,
               "a leader with a high watermark")
    with admin(cluster) as client:
        code, text = error_of(lambda: client.add_raft_voter(4, Uuid.random(), [
            {"listener": LISTENER, "host": HOST, "port": 1}]))
        assert code == 35 and ("Cluster doesn't support adding voter because the kraft.version "
                                     "feature is 0") in text


def test_leader_killed_with_an_uncommitted_voters_record(make_cluster: Callable[..., Cluster]) -> None:
    """Node 4 is added while two voters are down: the change cannot commit (2 of 4), DescribeQuorum
    v3 shows CommittedVoters != CurrentVoters; then the leader dies and the two come back: they elect
    a leader without the record, and everybody ends with the same voter set."""
    cluster = standalone(make_cluster, 4)
    cluster.start_all()
    cluster.wait_for_leader()
    with admin(cluster) as client:
        for node_id in (2, 3):
            add_when_caught_up(cluster, client, cluster.nodes[node_id])
        wait_until(lambda: {k[0] for k in voter_keys(cluster)} == {1, 2, 3}, 10, "three voters")
        leader_id, _ = cluster.wait_for_leader()
        down = [i for i in (1, 2, 3) if i != leader_id]
        wait_until(observer_seen(cluster, cluster.nodes[4]), 20, "node 4 as an observer")
        for node_id in down:
            cluster.kill(node_id)
        new = cluster.nodes[4]
        client.add_raft_voter(4, new.directory_id, endpoints(new), ack_when_committed=False)
    partition = cluster.describe_quorum(leader_id, 3).topics[0].partitions[0]
    assert {v.replica_id for v in partition.current_voters} == {1, 2, 3, 4}
    assert {v.replica_id for v in partition.committed_voters} == {1, 2, 3}
    cluster.kill(leader_id)
    for node_id in down:
        cluster.start(node_id)
    cluster.start(leader_id)

    def agreed() -> bool:
        found = cluster.find_leader()
        if found is None:
            return False
        partition = cluster.describe_quorum(found[0], 3).topics[0].partitions[0]
        keys = {v.replica_id for v in partition.current_voters}
        committed = {v.replica_id for v in partition.committed_voters}
        return keys in ({1, 2, 3}, {1, 2, 3, 4}) and committed == keys
    wait_until(agreed, 30, "one voter set after the failover")
    cluster.assert_running()
