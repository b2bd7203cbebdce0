"""DescribeCluster (API 60), versions 0-2, as a Kafka 4.2 controller answers it (KIP-919).

- v0: ClusterId, ControllerId and the nodes (id, host, port, rack), with the cluster's authorized
  operations on request. A v0 request cannot name the controller endpoint type, so a controller
  always answers it INVALID_REQUEST.
- v1: EndpointType in request and response (1 brokers, 2 controllers). A controller answers type 2;
  type 1 gets MISMATCHED_ENDPOINT_TYPE, any other type UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST
  for both at v0).
- v2: IncludeFencedBrokers and IsFenced per node (controllers are never fenced).

The nodes are the registered controllers (the latest RegisterControllerRecord per id in the
committed image, KIP-919: voters and observers, running or not, since Kafka never drops a
registration) that have an endpoint on the listener the request arrived on, by id, as Kafka's
ControllerRegistrationsPublisher lists them. ControllerId is the quorum leader, or -1 when the
leader is unknown or not among them, so a client that only knows bootstrap controllers finds the
leader. Controllers answer only from metadata.version 3.7-IV0 on (UNSUPPORTED_VERSION before).
Without an authorizer every cluster operation is authorized.

One deviation, for start-up: a voter with no registration at all yet is listed with its endpoint
from the voter set. Kafka lists only registered controllers, so on a new cluster (or one just
upgraded to 3.7-IV0) it answers without the leader, ControllerId -1, until the leader's own
registration is committed, and clients ask again after a backoff. Registration here is prompt (each
controller asks as soon as its image holds the metadata.version, about a commit round after the
election), yet a client or tool started the moment a leader is elected, as the tests and the
quickstart do, would then pay that backoff; listing the unregistered voters lets it find the leader
at once, as before controllers registered. Once a voter has registered, its registration (with the
endpoints it registered) is what is listed; observers appear only through their registration.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def handle(request: messages.DescribeClusterRequest, api_version: int, view: ServerView,
           controllers: Sequence[messages.RegisterControllerRecord] = ()) -> messages.DescribeClusterResponse:
    """The answer of a controller whose committed image holds ``controllers`` (by id)."""
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
    found: dict[int, tuple[str, int]] = {}
    for registration in controllers:
        endpoint = next((e for e in registration.end_points if e.name == view.listener), None)
        if endpoint is not None:
            found[registration.controller_id] = (endpoint.host, endpoint.port)
    registered = {registration.controller_id for registration in controllers}
    for voter_id, voter in view.voters.voters.items():
        voter_endpoint = next((e for e in voter.endpoints if e.name == view.listener), None)
        if voter_id not in registered and voter_endpoint is not None:
            found[voter_id] = (voter_endpoint.host, voter_endpoint.port)
    nodes = [Response.DescribeClusterBroker(broker_id=node_id, host=host, port=port, rack=None)
             for node_id, (host, port) in sorted(found.items())]
    operations = CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else -2147483648
    return Response(error_code=0, error_message=None, endpoint_type=CONTROLLER_ENDPOINT,
                    cluster_id=view.cluster_id,
                    controller_id=view.leader_id if view.leader_id in found else -1,
                    brokers=nodes, cluster_authorized_operations=operations)
