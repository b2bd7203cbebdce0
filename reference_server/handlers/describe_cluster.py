"""DescribeCluster (API 60), versions 0-2, as a Kafka 4.2 controller answers it (KIP-919).

- v0: ClusterId, ControllerId and the nodes (id, host, port, rack), with the cluster's authorized
  operations on request. A v0 request cannot name the controller endpoint type, so a controller
  always answers it INVALID_REQUEST.
- v1: EndpointType in request and response (1 brokers, 2 controllers). A controller answers type 2;
  type 1 gets MISMATCHED_ENDPOINT_TYPE, any other type UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST
  for both at v0).
- v2: IncludeFencedBrokers and IsFenced per node (controllers are never fenced).

The nodes are the voters' endpoints on the listener the request arrived on (Kafka lists the
registered controllers; the reference server takes them from the voter set), and ControllerId is
the quorum leader, or -1 when the leader is unknown or not among them, so a client that only knows
bootstrap controllers finds the leader. Controllers answer only from metadata.version 3.7-IV0 on
(UNSUPPORTED_VERSION before). Without an authorizer every cluster operation is authorized.
"""

from __future__ import annotations

from typing import Final

from kafka_admin_kraft.features import CONTROLLER_REGISTRATION_VERSION
from kafka_admin_kraft.protocol import messages

from . import ServerView

API_KEY: Final = 60
BROKER_ENDPOINT: Final = 1
CONTROLLER_ENDPOINT: Final = 2
_ENDPOINT_NAMES: Final = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}

UNSUPPORTED_VERSION: Final = 35
INVALID_REQUEST: Final = 42
MISMATCHED_ENDPOINT_TYPE: Final = 114
UNSUPPORTED_ENDPOINT_TYPE: Final = 115

CLUSTER_OPERATIONS: Final = sum(1 << code for code in (5, 7, 8, 9, 10, 11, 12))
"""CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS and IDEMPOTENT_WRITE: the
operations of the CLUSTER resource, all authorized when no authorizer is configured (8096)."""

Response = messages.DescribeClusterResponse


def handle(request: messages.DescribeClusterRequest, api_version: int,
           view: ServerView) -> messages.DescribeClusterResponse:
    if view.metadata_version is not None and view.metadata_version < CONTROLLER_REGISTRATION_VERSION:
        return Response(error_code=UNSUPPORTED_VERSION, error_message=(
            "Direct-to-controller communication is not supported with the current MetadataVersion."))
    requested = request.endpoint_type
    if requested not in _ENDPOINT_NAMES:
        return Response(error_code=INVALID_REQUEST if api_version == 0 else UNSUPPORTED_ENDPOINT_TYPE,
                        error_message=f"Unsupported endpoint type {requested}")
    if requested != CONTROLLER_ENDPOINT:
        return Response(error_code=INVALID_REQUEST if api_version == 0 else MISMATCHED_ENDPOINT_TYPE,
                        error_message=("The request was sent to an endpoint of type CONTROLLER, but we "
                                       f"wanted an endpoint of type {_ENDPOINT_NAMES[requested]}"))
    nodes = []
    for voter_id in sorted(view.voters.voters):
        voter = view.voters.voters[voter_id]
        endpoint = next((e for e in voter.endpoints if e.name == view.listener), None)
        if endpoint is not None:
            nodes.append(Response.DescribeClusterBroker(broker_id=voter_id, host=endpoint.host,
                                                        port=endpoint.port, rack=None))
    listed = {node.broker_id for node in nodes}
    operations = CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else -2147483648
    return Response(error_code=0, error_message=None, endpoint_type=CONTROLLER_ENDPOINT,
                    cluster_id=view.cluster_id,
                    controller_id=view.leader_id if view.leader_id in listed else -1,
                    brokers=nodes, cluster_authorized_operations=operations)
