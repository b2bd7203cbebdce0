"""A ``process.roles=broker`` node joining a three-controller quorum: it replicates the metadata log as
an observer, answers Metadata and DescribeCluster itself and forwards DescribeQuorum, AddRaftVoter,
RemoveRaftVoter and UpdateFeatures to the active controller in an Envelope."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from integration.client import ConnectionClosed, KafkaClient
from integration.harness import FAST_ELECTIONS, HOST, Cluster, Node, wait_until
from kafka_admin_kraft import Admin, FeatureUpdate
from kafka_admin_kraft.models import UpgradeType
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft_server.handlers import BROKER_APIS

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
        assert refused.error_code == ErrorCode.MISMATCHED_ENDPOINT_TYPE
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
            "share.version": FeatureUpdate(level=1, upgrade_type=UpgradeType.SAFE_DOWNGRADE)})
        assert all(r.ok for r in results.values())
        wait_until(lambda: finalized_on(broker).get("share.version") == 1, 20,
                   "the broker's image to finalize share.version 1")

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


def test_a_combined_node_is_a_voter_and_serves_broker_listeners(make_cluster: Make) -> None:
    """``process.roles=broker,controller``: node 1 votes on its CONTROLLER listener and answers
    broker clients on its BROKER listener, forwarding controller-bound requests."""
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS), combined_ids={1}).format()
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(30)
    combined = cluster.nodes[1]
    assert combined.broker_port is not None
    partition = cluster.describe_quorum(leader, 2).topics[0].partitions[0]
    assert {v.replica_id for v in partition.current_voters} == {1, 2, 3}
    with combined.client() as controller_side:
        controller_apis = {a.api_key for a in controller_side.api_versions().api_keys}
        assert messages.MetadataRequest.API_KEY not in controller_apis
    with KafkaClient(HOST, combined.broker_port) as client:
        assert {a.api_key for a in client.api_versions().api_keys} == set(BROKER_APIS)
        metadata = client.request(messages.MetadataRequest(topics=None), 12)
        assert (1, HOST, combined.broker_port) in [(b.node_id, b.host, b.port) for b in metadata.brokers]
        quorum = client.describe_quorum(2).topics[0].partitions[0]
        assert (quorum.error_code, quorum.leader_id) == (0, leader)
    # The broker role keeps working with the node as the active controller or as a follower, and its
    # vote counts: kill a controller-only node and the other two still commit.
    other = next(i for i in (2, 3) if i != leader)
    with Admin(bootstrap_servers=combined.broker_address, default_api_timeout_ms=30000,
               request_timeout_ms=10000) as admin:
        assert admin.describe_metadata_quorum().leader_id == leader
        results = admin.update_features({
            "share.version": FeatureUpdate(level=1, upgrade_type=UpgradeType.SAFE_DOWNGRADE)})
        assert all(r.ok for r in results.values())
        cluster.kill(other)
        results = admin.update_features({"share.version": 2})
        assert all(r.ok for r in results.values())
    wait_until(lambda: finalized_on(combined).get("share.version") == 2, 20,
               "the combined node to finalize share.version 2")
    cluster.assert_running()


def brokers_on(port: int, version: int = 12) -> list[tuple[int, int]]:
    with KafkaClient(HOST, port) as client:
        metadata = client.request(messages.MetadataRequest(topics=None), version)
    return [(b.node_id, b.port) for b in metadata.brokers]


def test_brokers_register_and_every_broker_lists_the_live_ones(make_cluster: Make) -> None:
    """Two brokers and a combined node register with the active controller (RegisterBrokerRecord),
    are unfenced once caught up, and each one's Metadata lists all three; a broker that stops
    heartbeating is fenced after its session timeout and comes back when restarted."""
    sessions = {"broker.heartbeat.interval.ms": "300", "broker.session.timeout.ms": "2500"}
    cluster = make_cluster(3, properties={**FAST_ELECTIONS, **sessions}, combined_ids={1}).format()
    first, second = cluster.add_broker(BROKER_ID), cluster.add_broker(BROKER_ID + 1)
    cluster.start_all()
    combined = cluster.nodes[1]
    assert combined.broker_port is not None
    everyone = [(1, combined.broker_port), (BROKER_ID, first.port), (BROKER_ID + 1, second.port)]
    for port in (first.port, second.port, combined.broker_port):
        wait_until(lambda p=port: brokers_on(p) == everyone, 30,  # type: ignore[misc]
                   f"the broker on port {port} to list every broker")
    with Admin(bootstrap_servers=first.address, default_api_timeout_ms=30000) as admin:
        assert sorted(n.node_id for n in admin.describe_cluster().nodes) == [1, BROKER_ID, BROKER_ID + 1]
    cluster.kill(BROKER_ID + 1)
    alive = [(1, combined.broker_port), (BROKER_ID, first.port)]
    wait_until(lambda: brokers_on(first.port) == alive, 20, "the stopped broker to be fenced")
    with KafkaClient(HOST, first.port) as client:
        R = messages.DescribeClusterRequest
        with_fenced = client.request(R(endpoint_type=1, include_fenced_brokers=True), 2)
        without = client.request(R(endpoint_type=1), 2)
    assert [(b.broker_id, b.is_fenced) for b in with_fenced.brokers] == [
        (1, False), (BROKER_ID, False), (BROKER_ID + 1, True)]
    assert [b.broker_id for b in without.brokers] == [1, BROKER_ID]
    cluster.start(BROKER_ID + 1)
    wait_until(lambda: brokers_on(first.port) == everyone, 30, "the restarted broker to be unfenced")
    cluster.assert_running()


def test_a_broker_stopped_with_sigterm_is_fenced_at_once_by_a_controlled_shutdown(make_cluster: Make) -> None:
    """SIGTERM: the broker asks the controller to fence it (WantShutDown) and waits for its approval, so
    the other brokers stop listing it at once; its session (a minute here) never has to expire."""
    sessions = {"broker.heartbeat.interval.ms": "300", "broker.session.timeout.ms": "60000"}
    cluster = make_cluster(3, properties={**FAST_ELECTIONS, **sessions}).format()
    first, second = cluster.add_broker(BROKER_ID), cluster.add_broker(BROKER_ID + 1)
    cluster.start_all()
    both = [(BROKER_ID, first.port), (BROKER_ID + 1, second.port)]
    wait_until(lambda: brokers_on(first.port) == both, 30, "both brokers to be unfenced")
    assert cluster.kill(BROKER_ID + 1, signal.SIGTERM) == 0
    wait_until(lambda: brokers_on(first.port) == both[:1], 10, "the stopped broker to be fenced")
    said = second.log_path.read_text()
    assert "Beginning controlled shutdown." in said
    assert "The controller has approved our controlled shutdown." in said
    cluster.assert_running()


def test_secured_broker_listener_forwards_the_client_principal(make_cluster: Make, tmp_path: Path) -> None:
    """SASL_SSL on the broker listener, SASL_PLAINTEXT between the nodes and the controllers: the
    broker registers and forwards over authenticated connections, and the controller receives the
    client's principal in the Envelope."""
    pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test certificates")
    from integration_sdk.test_security import PLAIN, Pki

    pki = Pki(tmp_path / "pki")
    keystore = pki.keystore("broker.pem", ["localhost"], [HOST])
    users = 'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret"'
    properties = {
        **FAST_ELECTIONS,
        "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT,BROKER:SASL_SSL",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.mechanism.controller.protocol": "PLAIN",
        "listener.name.controller.plain.sasl.jaas.config": f"{PLAIN} required {users};",
        "listener.name.broker.plain.sasl.jaas.config": f"{PLAIN} required {users};",
        "listener.name.broker.ssl.keystore.location": str(keystore),
        "ssl.truststore.location": str(pki.truststore),
    }
    cluster = make_cluster(3, properties=properties).format()
    broker = cluster.add_broker(BROKER_ID)
    for node_id in (1, 2, 3):
        cluster.start(node_id, "--log-level", "DEBUG")
    cluster.start(BROKER_ID)
    with Admin(bootstrap_servers=broker.address, default_api_timeout_ms=30000, request_timeout_ms=10000,
               security_protocol="SASL_SSL", ssl_truststore_location=str(pki.truststore),
               sasl_mechanism="PLAIN",
               sasl_jaas_config=f'{PLAIN} required username="alice" password="alice-secret";') as admin:
        quorum = wait_until(lambda: (q := admin.describe_metadata_quorum()).high_watermark > 0 and q, 30,
                            "the quorum through the secured broker")
        assert sorted(v.replica_id for v in quorum.voters) == [1, 2, 3]
        wait_until(lambda: [n.node_id for n in admin.describe_cluster().nodes] == [BROKER_ID], 20,
                   "the broker's own registration")
        results = admin.update_features({"streams.version": FeatureUpdate(
            level=0, upgrade_type=UpgradeType.SAFE_DOWNGRADE)})
        assert results["streams.version"].ok
    assert any("for User:alice" in cluster.nodes[i].output() for i in (1, 2, 3))
    # A plaintext client gets nowhere on the SASL_SSL listener; the broker carries on.
    with pytest.raises((OSError, ConnectionClosed)), broker.client(timeout=2) as client:
        client.api_versions()
    cluster.assert_running()
