"""kafka-python 3.x's admin client against the reference controllers.

kafka-python has no ``bootstrap.controllers``: ``KafkaAdminClient`` always bootstraps with a
MetadataRequest, which a Kafka controller listener does not serve (Metadata is a broker API; Kafka
closes the connection, and kafka-python gives up with "Unable to bootstrap"). So these tests replace
only that bootstrap step: the admin client's own request building, ApiVersions negotiation, version
choice and response parsing then run unchanged against the controller named in bootstrap_servers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from integration.harness import FAST_ELECTIONS, HOST, Cluster

kafka = pytest.importorskip("kafka", minversion="3.0")

from kafka.admin import KafkaAdminClient  # noqa: E402
from kafka.errors import KafkaTimeoutError, MismatchedEndpointTypeError  # noqa: E402
from kafka.net.manager import KafkaConnectionManager  # noqa: E402
from kafka.protocol.admin import DescribeClusterRequest  # noqa: E402


@pytest.fixture
def controller_admin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], Any]]:
    """``controller_admin(port)``: a KafkaAdminClient whose every request goes to that controller."""
    monkeypatch.setattr(KafkaConnectionManager, "bootstrap", lambda self, timeout_ms=None, refresh=True: None)
    monkeypatch.setattr(KafkaConnectionManager, "least_loaded_node", lambda self: "bootstrap-0")
    clients: list[Any] = []

    def make(port: int) -> Any:
        client = KafkaAdminClient(bootstrap_servers=f"{HOST}:{port}", request_timeout_ms=5000)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def test_the_unpatched_admin_client_cannot_bootstrap_from_a_controller(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1).format().start_all()
    cluster.wait_for_leader(20)
    with pytest.raises(KafkaTimeoutError, match="Unable to bootstrap"):
        KafkaAdminClient(bootstrap_servers=f"{HOST}:{cluster.nodes[1].port}", bootstrap_timeout_ms=1500,
                         request_timeout_ms=1000)
    cluster.assert_running()


def test_describe_metadata_quorum_matches_what_the_project_reads(
        make_cluster: Callable[..., Cluster], controller_admin: Callable[[int], Any]) -> None:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS)).format().start_all()
    leader, _ = cluster.wait_for_leader(30)
    admin = controller_admin(cluster.nodes[leader].port)
    theirs = admin.describe_metadata_quorum()
    ours = cluster.describe_quorum(leader, 2)
    partition = theirs["topics"][0]["partitions"][0]
    mine = ours.topics[0].partitions[0]
    assert theirs["topics"][0]["topic_name"] == "__cluster_metadata" and partition["error"] is None
    assert (partition["leader_id"], partition["leader_epoch"]) == (mine.leader_id, mine.leader_epoch)
    assert partition["high_watermark"] <= mine.high_watermark
    voters = [(v["replica_id"], v["replica_directory_id"].replace("-", ""))
              for v in partition["current_voters"]]
    assert voters == [(v.replica_id, v.replica_directory_id.bytes.hex()) for v in mine.current_voters]
    assert theirs["nodes"] == [{"node_id": n.node_id, "listeners": [
        {"name": e.name, "host": e.host, "port": e.port} for e in n.listeners]} for n in ours.nodes]
    # A follower answers NOT_LEADER_OR_FOLLOWER, which kafka-python reports on the partition.
    follower = next(n for n in cluster.nodes if n != leader)
    answer = controller_admin(cluster.nodes[follower].port).describe_metadata_quorum()
    assert answer["topics"][0]["partitions"][0]["error"].startswith("[Error 6] ")


def test_describe_cluster_and_features(make_cluster: Callable[..., Cluster],
                                       controller_admin: Callable[[int], Any]) -> None:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS)).format().start_all()
    leader, _ = cluster.wait_for_leader(30)
    follower = next(n for n in cluster.nodes if n != leader)
    admin = controller_admin(cluster.nodes[follower].port)
    # describe_cluster() asks for broker endpoints (EndpointType 1); a controller refuses, as Kafka's does.
    with pytest.raises(MismatchedEndpointTypeError, match="endpoint of type CONTROLLER"):
        admin.describe_cluster()
    # The same request for controller endpoints, through kafka-python's own classes, finds the leader.
    request = DescribeClusterRequest(include_cluster_authorized_operations=True, endpoint_type=2,
                                     include_fenced_brokers=True)
    response = admin._manager.run(lambda: admin._manager.send(request))
    assert (response.error_code, response.endpoint_type, response.cluster_id) == (0, 2, cluster.cluster_id)
    assert response.controller_id == leader
    assert [(b.broker_id, b.host, b.port) for b in response.brokers] == [
        (n.node_id, HOST, n.port) for n in cluster.nodes.values()]
    features = admin.describe_features()
    assert features["metadata.version"]["supported"] == (7, 33)
    assert features["kraft.version"]["supported"] == (0, 1)
