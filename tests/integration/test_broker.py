"""A ``process.roles=broker`` node joining a three-controller quorum: it replicates the metadata log as
an observer, answers Metadata and DescribeCluster itself and forwards DescribeQuorum, AddRaftVoter,
RemoveRaftVoter and UpdateFeatures to the active controller in an Envelope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from integration.harness import FAST_ELECTIONS, HOST, Cluster, Node, wait_until
from kafka_admin_kraft import Admin, FeatureUpdate
from kafka_admin_kraft.models import UpgradeType
from kafka_admin_kraft.protocol import messages
from reference_server.handlers.describe_cluster import MISMATCHED_ENDPOINT_TYPE
from reference_server.handlers.metadata import BROKER_APIS

Make = Callable[..., Cluster]
BROKER_ID = 100


def start_with_broker(make_cluster: Make) -> tuple[Cluster, int, Node]:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS)).format()
    broker = cluster.add_broker(BROKER_ID)
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(30)
    assert isinstance(broker, Node)

    def observed() -> bool:
        data = cluster.quorum_from(leader)
        return data is not None and any(o.replica_id == BROKER_ID for o in data.observers)

    wait_until(observed, 20, "the broker to fetch as an observer")
    return cluster, leader, broker


def finalized_on(node: Node) -> dict[str, int]:
    with node.client() as client:
        return {f.name: f.max_version_level for f in client.api_versions().finalized_features}


def test_a_broker_observes_the_quorum_and_answers_metadata_and_describe_cluster(make_cluster: Make) -> None:
    cluster, leader, broker = start_with_broker(make_cluster)
    with broker.client() as client:
        versions = client.api_versions()
        assert {a.api_key for a in versions.api_keys} == set(BROKER_APIS)
        metadata = client.request(messages.MetadataRequest(topics=None), 12)
        assert metadata.cluster_id == cluster.cluster_id and metadata.controller_id == BROKER_ID
        assert [(b.node_id, b.host, b.port) for b in metadata.brokers] == [(BROKER_ID, HOST, broker.port)]
        assert metadata.topics == []
        described = client.request(messages.DescribeClusterRequest(endpoint_type=1), 1)
        assert (described.error_code, described.endpoint_type, described.controller_id) == (0, 1, BROKER_ID)
        assert [(b.broker_id, b.port) for b in described.brokers] == [(BROKER_ID, broker.port)]
        refused = client.request(messages.DescribeClusterRequest(endpoint_type=2), 1)
        assert refused.error_code == MISMATCHED_ENDPOINT_TYPE
        # DescribeQuorum, forwarded: the leader's answer, the broker among the observers.
        quorum = client.describe_quorum(2).topics[0].partitions[0]
        assert (quorum.error_code, quorum.leader_id) == (0, leader)
        assert BROKER_ID in {o.replica_id for o in quorum.observers}
        assert {v.replica_id for v in quorum.current_voters} == {1, 2, 3}
    cluster.assert_running()


def test_the_admin_bootstrapping_from_a_broker_is_forwarded_to_the_controller(make_cluster: Make) -> None:
    cluster, leader, broker = start_with_broker(make_cluster)
    with Admin(bootstrap_servers=broker.address, default_api_timeout_ms=30000,
               request_timeout_ms=10000) as admin:
        quorum = admin.describe_metadata_quorum()
        assert quorum.leader_id == leader
        assert BROKER_ID in {o.replica_id for o in quorum.observers}
        description = admin.describe_cluster()
        assert description.cluster_id == cluster.cluster_id
        assert [n.node_id for n in description.nodes] == [BROKER_ID]

        results = admin.update_features({
            "metadata.version": FeatureUpdate(level=28, upgrade_type=UpgradeType.SAFE_DOWNGRADE)})
        assert all(r.ok for r in results.values())
        wait_until(lambda: finalized_on(broker).get("metadata.version") == 28, 20,
                   "the broker's image to finalize metadata.version 28")

        follower = cluster.nodes[next(i for i in (1, 2, 3) if i != leader)]
        admin.remove_raft_voter(follower.node_id, str(follower.directory_id))
        assert follower.node_id not in {v.replica_id for v in admin.describe_metadata_quorum().voters}
        admin.add_raft_voter(follower.node_id, str(follower.directory_id),
                             [{"listener": "CONTROLLER", "host": HOST, "port": follower.port}])
        assert follower.node_id in {v.replica_id for v in admin.describe_metadata_quorum().voters}
    cluster.assert_running()


def test_forwarding_without_a_reachable_controller_answers_retriable_errors(make_cluster: Make) -> None:
    cluster, _, broker = start_with_broker(make_cluster)
    for node_id in (1, 2, 3):
        cluster.kill(node_id)
    with broker.client(timeout=40) as client:
        quorum = client.describe_quorum(2).topics[0].partitions[0]
        assert quorum.error_code == 6  # NOT_LEADER_OR_FOLLOWER: clients retry
        features = client.request(messages.UpdateFeaturesRequest(timeout_ms=1000, feature_updates=[]), 1)
        assert features.error_code == 41  # NOT_CONTROLLER
    assert broker.running


def test_kafka_python_bootstraps_from_the_broker(make_cluster: Make) -> None:
    pytest.importorskip("kafka", minversion="3.0")
    from kafka.admin import KafkaAdminClient

    cluster, leader, broker = start_with_broker(make_cluster)
    admin: Any = KafkaAdminClient(bootstrap_servers=broker.address, request_timeout_ms=10000)
    try:
        theirs = admin.describe_metadata_quorum()
        ours = cluster.describe_quorum(leader, 2).topics[0].partitions[0]
        partition = theirs["topics"][0]["partitions"][0]
        assert partition["error"] is None and partition["leader_id"] == leader == ours.leader_id
        assert [v["replica_id"] for v in partition["current_voters"]] == [
            v.replica_id for v in ours.current_voters]
        assert BROKER_ID in [o["replica_id"] for o in partition["observers"]]
        described = admin.describe_cluster()
        assert described["cluster_id"] == cluster.cluster_id
        assert described["controller_id"] == BROKER_ID
        assert [(b["broker_id"], b["port"]) for b in described["brokers"]] == [(BROKER_ID, broker.port)]
    finally:
        admin.close()
    cluster.assert_running()
