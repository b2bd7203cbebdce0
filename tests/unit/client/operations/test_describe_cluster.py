"""describe_cluster (``client/operations/describe_cluster.py``) through the in-memory network."""

from __future__ import annotations

import pytest

from kafka_admin_kraft import Admin
from kafka_admin_kraft.errors import UnsupportedOperationError, UnsupportedVersionError
from kafka_admin_kraft.protocol import messages
from unit.client.fake import FAST, FakeNetwork, admin


def test_describe_cluster_with_controllers() -> None:
    net = FakeNetwork(3, leader=3)
    with admin(net) as a:
        cluster = a.describe_cluster()
    assert cluster.cluster_id == "MkU3OEVBNTcwNTJENDM2Qg"
    assert cluster.controller is not None and cluster.controller.node_id == 3
    assert [(n.node_id, n.port) for n in cluster.nodes] == [(1, 9091), (2, 9092), (3, 9093)]
    assert net.sent("DescribeCluster")[-1][0] == 3


def test_describe_cluster_mismatched_endpoint_type() -> None:
    net = FakeNetwork(1, leader=1, brokers=1)
    with (
        Admin(bootstrap_servers=net.controllers(), transport=net, **FAST) as a,
        pytest.raises(Exception, match="MISMATCHED_ENDPOINT_TYPE"),
    ):
        a.describe_cluster()


def test_describe_cluster_unsupported_version_on_old_metadata_version_is_not_retried() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[60] = lambda n, v, b: messages.DescribeClusterResponse(
        error_code=35, error_message="old"
    )
    with admin(net) as a, pytest.raises(UnsupportedVersionError):
        a.describe_cluster()
    assert net.sleeps == []


def test_describe_cluster_lists_fenced_brokers_only_when_asked() -> None:
    net = FakeNetwork(1, leader=1, brokers=3)
    net.nodes[102].fenced = True
    with admin(net, brokers=True) as a:
        live = a.describe_cluster()
        every = a.describe_cluster(include_fenced_brokers=True)
    assert [(n.node_id, n.is_fenced) for n in live.nodes] == [(101, False), (103, False)]
    assert [(n.node_id, n.is_fenced) for n in every.nodes] == [(101, False), (102, True), (103, False)]
    sent = net.sent("DescribeCluster")
    assert [(version, body.include_fenced_brokers) for _, version, body in sent] == [(2, False), (2, True)]


def test_describe_cluster_fenced_brokers_need_describe_cluster_v2() -> None:
    net = FakeNetwork(1, leader=1, brokers=1)
    net.nodes[101].versions[60] = (0, 1)  # a Kafka 3.9 broker
    with (
        admin(net, brokers=True) as a,
        pytest.raises(UnsupportedOperationError, match=r"v0-1, this request needs v2-2 \(include_fenced"),
    ):
        a.describe_cluster(include_fenced_brokers=True)
    assert net.sent("DescribeCluster") == []


def test_describe_cluster_fenced_brokers_are_refused_with_bootstrap_controllers() -> None:
    net = FakeNetwork(3, leader=1)
    with admin(net) as a, pytest.raises(ValueError, match="only bootstrap_servers reach"):
        a.describe_cluster(include_fenced_brokers=True)
    with admin(net) as a, pytest.raises(TypeError, match="include_fenced_brokers must be True or False"):
        a.describe_cluster(include_fenced_brokers=1)  # type: ignore[arg-type]
    assert net.requests == []


def test_the_plain_answer_holds_what_the_cluster_description_holds() -> None:
    from kafka_admin_kraft.client.answers import ClusterAnswer
    from kafka_admin_kraft.client.operations.describe_cluster import describe_cluster_answer
    from kafka_admin_kraft.models import ClusterDescription

    net = FakeNetwork(3, leader=3)
    with admin(net) as a:
        answer = a.run(describe_cluster_answer)
        cluster = a.describe_cluster()
    assert isinstance(answer, ClusterAnswer) and answer.cluster_id == "MkU3OEVBNTcwNTJENDM2Qg"
    assert ClusterDescription.model_validate(answer, from_attributes=True) == cluster
