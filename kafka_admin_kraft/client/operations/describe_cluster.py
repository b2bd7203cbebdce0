"""describe_cluster: DescribeCluster.

With bootstrap controllers the request (v1+, EndpointType 2) goes to the active controller and lists
the registered controllers, ControllerId being the quorum leader. With bootstrap servers it asks a
broker for broker endpoints (EndpointType 1); ``include_fenced_brokers`` (v2, KIP-1073) has it list the
fenced brokers too, each marked ``is_fenced``. Retriable errors are retried until the deadline.
"""

from __future__ import annotations

from kafka_admin_kraft.client.core import BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS, AdminCore, Op
from kafka_admin_kraft.models import ClusterDescription, ClusterNode

OPERATION = "describe_cluster"


def describe_cluster(
    core: AdminCore, timeout: float | None = None, *, include_fenced_brokers: bool = False
) -> Op[ClusterDescription]:
    endpoint_type = CONTROLLER_ENDPOINTS if core.config.bootstrap_controllers else BROKER_ENDPOINTS

    def attempt(deadline: float) -> Op[ClusterDescription]:
        conn = yield from core.target(deadline)
        response = yield from core.describe_cluster_request(
            conn, OPERATION, deadline, endpoint_type, include_fenced_brokers=include_fenced_brokers
        )
        nodes = tuple(
            ClusterNode(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack, is_fenced=b.is_fenced)
            for b in response.brokers
        )
        controller = next((n for n in nodes if n.node_id == response.controller_id), None)
        return ClusterDescription(cluster_id=response.cluster_id, controller=controller, nodes=nodes)

    return (yield from core.call(OPERATION, attempt, timeout))
