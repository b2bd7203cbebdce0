"""describe_cluster (``client/operations/describe_cluster.py``) through the in-memory network."""

from __future__ import annotations

import pytest

from kafka_admin_kraft import Admin
from kafka_admin_kraft.errors import UnsupportedVersionError
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
