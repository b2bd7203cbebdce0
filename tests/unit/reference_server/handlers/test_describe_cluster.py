"""DescribeCluster as a Kafka 4.2 controller answers it: the voters and the registered controllers, the
leader, and the endpoint-type errors."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft_server.handlers import describe_cluster
from unit.reference_server.handlers.handlers_testlib import INCARNATION_A, RECORD, view


def describe(version: int, endpoint_type: int = 2,
             operations: bool = False) -> messages.DescribeClusterRequest:
    return messages.DescribeClusterRequest(endpoint_type=endpoint_type,
                                           include_cluster_authorized_operations=operations)


@pytest.mark.parametrize("version", [1, 2])
def test_describe_cluster_lists_the_voters_and_the_leader(version: int) -> None:
    response = describe_cluster.handle(describe(version), version, view())
    assert response.error_code == 0 and response.endpoint_type == 2
    assert response.cluster_id == "MkU3OEVBNTcwNTJENDM2Qk"
    assert response.controller_id == 2
    assert [(b.broker_id, b.host, b.port, b.rack) for b in response.brokers] == [
        (1, "127.0.0.1", 9094, None), (2, "127.0.0.1", 9095, None), (3, "127.0.0.1", 9096, None)]
    assert response.cluster_authorized_operations == -2147483648
    framing.encode_response(response, version, 1)


def test_describe_cluster_authorized_operations_and_unknown_leader() -> None:
    response = describe_cluster.handle(describe(2, operations=True), 2, view(leader_id=-1))
    assert response.cluster_authorized_operations == 8096
    assert response.controller_id == -1
    response = describe_cluster.handle(describe(2), 2, view(leader_id=7))  # not among the nodes
    assert response.controller_id == -1


MISMATCH = "The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER"


@pytest.mark.parametrize(("version", "endpoint_type", "code", "message"), [
    (0, 1, 42, MISMATCH),
    (1, 1, 114, MISMATCH),
    (2, 3, 115, "Unsupported endpoint type 3"),
    (1, 0, 115, "Unsupported endpoint type 0"),
])
def test_describe_cluster_endpoint_type_errors(version: int, endpoint_type: int, code: int,
                                               message: str) -> None:
    response = describe_cluster.handle(describe(version, endpoint_type), version, view())
    assert (response.error_code, response.error_message) == (code, message)
    assert response.brokers == [] and response.cluster_id == ""


def test_describe_cluster_before_controller_registration_is_unsupported() -> None:
    response = describe_cluster.handle(describe(2), 2, view(metadata_version=14))
    assert response.error_code == 35


def test_describe_cluster_lists_registered_controllers_and_voters_not_registered_yet() -> None:
    controllers = [
        RECORD(controller_id=2, incarnation_id=INCARNATION_A, end_points=[  # a voter: its registration wins
            RECORD.ControllerEndpoint(name="CONTROLLER", host="ctl2", port=7002)]),
        RECORD(controller_id=9, incarnation_id=INCARNATION_A, end_points=[  # an observer, maybe stopped
            RECORD.ControllerEndpoint(name="CONTROLLER", host="ctl9", port=7009)]),
        RECORD(controller_id=8, incarnation_id=INCARNATION_A)]  # no endpoint on this listener
    response = describe_cluster.handle(describe(2), 2, view(leader_id=2), controllers)
    # Voter 1 and 3 have not registered: listed from the voter set (see the handler's docstring).
    assert [(b.broker_id, b.host, b.port) for b in response.brokers] == [
        (1, "127.0.0.1", 9094), (2, "ctl2", 7002), (3, "127.0.0.1", 9096), (9, "ctl9", 7009)]
    assert response.controller_id == 2
    other = describe_cluster.handle(describe(2), 2, view(listener="OTHER", leader_id=2), controllers)
    assert (other.brokers, other.controller_id) == ([], -1)
