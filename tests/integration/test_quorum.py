"""1-, 3- and 5-node quorums as real processes: election, DescribeQuorum, DescribeCluster, ApiVersions."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from integration.harness import (
    FAST_ELECTIONS,
    HOST,
    NOT_LEADER_OR_FOLLOWER,
    UNSTABLE_API_VERSIONS,
    Cluster,
    wait_until,
)
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft.storage import read_quorum_state
from kafka_admin_kraft_server.handlers import CONTROLLER_APIS

NOT_LEADER_TEXT = ("For requests intended only for the leader, this error indicates that the broker is not "
                   "the current leader. For requests intended for any replica, this error indicates that the "
                   "broker is not a replica of the topic partition.")


def describe_cluster(cluster: Cluster, node_id: int) -> messages.DescribeClusterResponse:
    with cluster.nodes[node_id].client() as client:
        response = client.request(messages.DescribeClusterRequest(endpoint_type=2))
    assert isinstance(response, messages.DescribeClusterResponse)
    return response


def test_single_controller_leads_serves_every_describe_quorum_version_and_grows_its_log(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1, properties=dict(UNSTABLE_API_VERSIONS)).format().start_all()  # v3 too
    node = cluster.nodes[1]
    leader, partition = cluster.wait_for_leader(20)
    assert leader == 1 and partition.leader_epoch >= 1
    with node.client() as client:
        for version in range(4):
            response = client.describe_quorum(version)
            data = response.topics[0].partitions[0]
            assert (response.error_code, data.error_code, data.leader_id) == (0, 0, 1)
            assert [v.replica_id for v in data.current_voters] == [1]
            if version >= 2:
                assert data.current_voters[0].replica_directory_id == node.directory_id
                nodes = [(n.node_id, [(e.name, e.host, e.port) for e in n.listeners]) for n in response.nodes]
                assert nodes == [(1, [("CONTROLLER", HOST, node.port)])]
            if version >= 1:
                assert data.current_voters[0].last_fetch_timestamp > 0
    # NoOpRecords every metadata.max.idle.interval.ms move the high watermark of an idle quorum.
    first = partition.high_watermark
    wait_until(lambda: (p := cluster.quorum_from(1)) is not None and p.high_watermark >= first + 3, 10,
               "the high watermark to move")


def test_api_versions_reports_the_committed_features(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1).format().start_all()
    cluster.wait_for_leader(20)

    def features() -> messages.ApiVersionsResponse | None:
        with cluster.nodes[1].client() as client:
            response = client.api_versions(4)
        return response if response.finalized_features_epoch >= 0 else None

    response = wait_until(features, 10, "finalized features")
    assert {f.name: f.max_version_level for f in response.finalized_features} == {
        "metadata.version": 33, "kraft.version": 1, "transaction.version": 2, "group.version": 1,
        "eligible.leader.replicas.version": 1, "share.version": 2, "streams.version": 1}
    assert {a.api_key for a in response.api_keys} == set(CONTROLLER_APIS)
    assert {1, 18, 52, 53, 54, 55, 59, 60, 80, 81, 82} <= set(CONTROLLER_APIS)
    supported = [(f.name, f.min_version, f.max_version) for f in response.supported_features]
    assert ("metadata.version", 7, 33) in supported


def test_three_controllers_elect_one_leader_and_the_others_say_so(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(3, properties={**FAST_ELECTIONS, **UNSTABLE_API_VERSIONS}).format().start_all()
    leader, partition = cluster.wait_for_leader(30)
    assert sorted(v.replica_id for v in partition.current_voters) == [1, 2, 3]
    assert {v.replica_id: v.replica_directory_id for v in partition.current_voters} == {
        n.node_id: n.directory_id for n in cluster.nodes.values()}
    for node_id in cluster.nodes:
        if node_id == leader:
            continue
        for version in range(4):
            response = cluster.describe_quorum(node_id, version)
            data = response.topics[0].partitions[0]
            assert (response.topics[0].topic_name, data.partition_index) == ("__cluster_metadata", 0)
            assert data.error_code == NOT_LEADER_OR_FOLLOWER
            assert data.error_message == (NOT_LEADER_TEXT if version >= 2 else "")
            assert (data.leader_id, data.high_watermark, data.current_voters) == (0, 0, [])
    # Every controller points a client at the leader through DescribeCluster.
    for node_id in cluster.nodes:
        answer = wait_until(lambda n=node_id: (r := describe_cluster(cluster, n)).controller_id == leader
                            and r, 10, f"node {node_id} to know the leader")
        assert answer.endpoint_type == 2
        assert answer.cluster_id == cluster.cluster_id
        assert [(b.broker_id, b.host, b.port) for b in answer.brokers] == [
            (n.node_id, HOST, n.port) for n in cluster.nodes.values()]
    # The followers replicate: their log end offsets reach the high watermark.
    def caught_up() -> bool:
        data = cluster.quorum_from(leader)
        return data is not None and all(v.log_end_offset >= data.high_watermark > 0
                                        for v in data.current_voters)

    wait_until(caught_up, 10, "every voter to reach the high watermark")


def test_five_controllers_with_a_static_quorum(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(5, dynamic=False, properties=dict(FAST_ELECTIONS)).format().start_all()
    leader, _ = cluster.wait_for_leader(40)
    response = cluster.describe_quorum(leader, 2)
    data = response.topics[0].partitions[0]
    assert sorted(v.replica_id for v in data.current_voters) == [1, 2, 3, 4, 5]
    assert all(v.replica_directory_id == ZERO_UUID for v in data.current_voters)
    assert sorted(n.node_id for n in response.nodes) == [1, 2, 3, 4, 5]
    with cluster.nodes[leader].client() as client:
        finalized = wait_until(lambda: {f.name for f in client.api_versions(4).finalized_features}, 10,
                               "features")
    assert "kraft.version" not in finalized and "metadata.version" in finalized
    state = read_quorum_state(cluster.nodes[leader].partition_dir / "quorum-state")
    assert (state.data_version, state.leader_id) == (0, leader)
    assert state.current_voters == (1, 2, 3, 4, 5)


@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster_wrong_endpoint_type(make_cluster: Callable[..., Cluster], version: int) -> None:
    cluster = make_cluster(1).format().start_all()
    cluster.wait_ready(1)
    with cluster.nodes[1].client() as client:
        response = client.request(messages.DescribeClusterRequest(endpoint_type=1), version)
    assert response.error_code == (42 if version == 0 else 114)
    assert response.error_message == ("The request was sent to an endpoint of type CONTROLLER, but we wanted "
                                      "an endpoint of type BROKER")
