"""describe_cluster: DescribeCluster.

With bootstrap controllers the request (v1+, EndpointType 2) goes to the active controller and lists
the registered controllers, ControllerId being the quorum leader. With bootstrap servers it asks a
broker for broker endpoints (EndpointType 1); ``include_fenced_brokers`` (v2, KIP-1073) has it list the
fenced brokers too, each marked ``is_fenced``. Retriable errors are retried until the deadline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_admin_kraft.client.answers import ClusterAnswer, ClusterNodeAnswer
from kafka_admin_kraft.client.core import BROKER_ENDPOINTS, CONTROLLER_ENDPOINTS, AdminCore, Op

if TYPE_CHECKING:
    from kafka_admin_kraft.models import ClusterDescription

OPERATION = "describe_cluster"


def describe_cluster_answer(
    core: AdminCore, timeout: float | None = None, *, include_fenced_brokers: bool = False
) -> Op[ClusterAnswer]:
    """The operation, its answer left plain (what the tools print)."""
    endpoint_type = CONTROLLER_ENDPOINTS if core.config.bootstrap_controllers else BROKER_ENDPOINTS

    def attempt(deadline: float) -> Op[ClusterAnswer]:
        conn = yield from core.target(deadline)
        response = yield from core.describe_cluster_request(
            conn, OPERATION, deadline, endpoint_type, include_fenced_brokers=include_fenced_brokers
        )
        nodes = tuple(
            ClusterNodeAnswer(
                node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack, is_fenced=b.is_fenced
            )
            for b in response.brokers
        )
        controller = next((n for n in nodes if n.node_id == response.controller_id), None)
        return ClusterAnswer(cluster_id=response.cluster_id, controller=controller, nodes=nodes)

    return (yield from core.call(OPERATION, attempt, timeout))


def describe_cluster(
    core: AdminCore, timeout: float | None = None, *, include_fenced_brokers: bool = False
) -> Op[ClusterDescription]:
    from kafka_admin_kraft.models import ClusterDescription

    answer = yield from describe_cluster_answer(core, timeout, include_fenced_brokers=include_fenced_brokers)
    return ClusterDescription.model_validate(answer, from_attributes=True)
