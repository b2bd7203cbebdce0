"""Voters added with no endpoint given: the executor takes each new voter's endpoint from the
controllers the quorum lists as registered (DescribeCluster on a controller, KIP-919)."""

from __future__ import annotations

from collections.abc import Callable

from integration.harness import HOST, LISTENER, Cluster, wait_until
from integration.test_voters import standalone
from kafka_admin_kraft import Admin


def test_new_voters_are_added_at_their_registered_endpoints(make_cluster: Callable[..., Cluster]) -> None:
    cluster = standalone(make_cluster, 3)
    cluster.start_all()
    cluster.wait_for_leader()
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), request_timeout_ms=5000,
               default_api_timeout_ms=20000) as admin:
        wait_until(lambda: {n.node_id for n in admin.describe_cluster().nodes} == {1, 2, 3}, 20,
                   "every controller registered")
        result = admin.reconcile_voters([1, 2, 3])
        quorum = admin.describe_metadata_quorum()
    assert [(o.step.action, o.step.node_id) for o in result.completed] == [("add", 2), ("add", 3)]
    assert {v.replica_id for v in quorum.voters} == {1, 2, 3}
    for node_id in (2, 3):
        (endpoint,) = quorum.nodes[node_id].endpoints
        assert (endpoint.listener, endpoint.host) == (LISTENER, HOST)
        assert endpoint.port == cluster.nodes[node_id].port
