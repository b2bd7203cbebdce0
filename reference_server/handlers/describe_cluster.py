"""DescribeCluster (API 60), versions 0-2 (0-1 on Kafka 3.9), as a controller answers it (KIP-919),
and as a KRaft broker answers it from its metadata cache.

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
A controller answers only a principal allowed ALTER on the cluster (``handlers.authorization``); a
broker answers anyone. The cluster's authorized operations, when asked for, are every one without an
authorizer, and with one 0 unless the principal may DESCRIBE the cluster, else those it may do.

One deviation, for start-up: a voter with no registration at all yet is listed with its endpoint
from the voter set. Kafka lists only registered controllers, so on a new cluster (or one just
upgraded to 3.7-IV0) it answers without the leader, ControllerId -1, until the leader's own
registration is committed, and clients ask again after a backoff. Registration here is prompt (each
controller asks as soon as its image holds the metadata.version, about a commit round after the
election), yet a client or tool started the moment a leader is elected, as the tests and the
quickstart do, would then pay that backoff; listing the unregistered voters lets it find the leader
at once, as before controllers registered. Once a voter has registered, its registration (with the
endpoints it registered) is what is listed; observers appear only through their registration.

On a broker listener (``handle_broker``): the registered, unfenced brokers with an endpoint on the
listener and the broker's controller id (``handlers.metadata``), plus the fenced ones with IsFenced
when a v2 request sets IncludeFencedBrokers; EndpointType 1 (brokers). A v1+ request naming
EndpointType 2 gets MISMATCHED_ENDPOINT_TYPE, any other type UNSUPPORTED_ENDPOINT_TYPE. A broker
needs no metadata.version check (that one is for controllers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kafka_admin_kraft import acl
from kafka_admin_kraft.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafka_admin_kraft.features import CONTROLLER_REGISTRATION_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode

from ..authorizer import Action, StandardAuthorizer
from . import authorization, registry
from .registry import Answer, BrokerRole, Call, ControllerRole
from .view import BrokerView, ServerView

BROKER_ENDPOINT: Final = 1
CONTROLLER_ENDPOINT: Final = 2
_ENDPOINT_NAMES: Final = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}

CLUSTER_OPERATIONS: Final = sum(1 << operation for operation in acl.CLUSTER_OPERATIONS)
"""CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS and IDEMPOTENT_WRITE: the
operations of the CLUSTER resource, all authorized when no authorizer is configured (8096)."""
NO_OPERATIONS: Final = -2147483648
"""Authorized operations not asked for (Kafka's ``Integer.MIN_VALUE``)."""

Response = messages.DescribeClusterResponse


def handle(request: messages.DescribeClusterRequest, api_version: int, view: ServerView,
           controllers: Sequence[messages.RegisterControllerRecord] = (),
           authorized: int = CLUSTER_OPERATIONS) -> messages.DescribeClusterResponse:
    """The answer of a controller whose committed image holds ``controllers`` (by id); ``authorized``:
    the cluster operations the client may do, the bit field answered when it asks for them."""
    if view.metadata_version is not None and view.metadata_version < CONTROLLER_REGISTRATION_VERSION:
        return Response(error_code=ErrorCode.UNSUPPORTED_VERSION, error_message=(
            "Direct-to-controller communication is not supported with the current MetadataVersion."))
    requested = request.endpoint_type
    if requested not in _ENDPOINT_NAMES:
        return Response(error_code=ErrorCode.INVALID_REQUEST if api_version == 0
                        else ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
                        error_message=f"Unsupported endpoint type {requested}")
    if requested != CONTROLLER_ENDPOINT:
        return Response(error_code=ErrorCode.INVALID_REQUEST if api_version == 0
                        else ErrorCode.MISMATCHED_ENDPOINT_TYPE,
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
    operations = authorized if request.include_cluster_authorized_operations else NO_OPERATIONS
    return Response(error_code=ErrorCode.NONE, error_message=None, endpoint_type=CONTROLLER_ENDPOINT,
                    cluster_id=view.cluster_id,
                    controller_id=view.leader_id if view.leader_id in found else -1,
                    brokers=nodes, cluster_authorized_operations=operations)


def handle_broker(request: messages.DescribeClusterRequest, api_version: int, view: BrokerView,
                  authorized: int = CLUSTER_OPERATIONS) -> messages.DescribeClusterResponse:
    """The answer of a broker whose metadata cache is ``view``; ``authorized`` as for ``handle``."""
    requested = request.endpoint_type if api_version >= 1 else BROKER_ENDPOINT
    if requested == CONTROLLER_ENDPOINT:
        return Response(error_code=ErrorCode.MISMATCHED_ENDPOINT_TYPE, error_message=(
            "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
            "CONTROLLER"))
    if requested != BROKER_ENDPOINT:
        return Response(error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
                        error_message=f"Unsupported endpoint type {requested}")
    listed = view.brokers if api_version >= 2 and request.include_fenced_brokers else view.live
    brokers = [Response.DescribeClusterBroker(broker_id=b.node_id, host=b.host, port=b.port, rack=b.rack,
                                              is_fenced=b.fenced) for b in listed]
    operations = authorized if request.include_cluster_authorized_operations else NO_OPERATIONS
    return Response(error_code=ErrorCode.NONE, error_message=None, endpoint_type=BROKER_ENDPOINT,
                    cluster_id=view.cluster_id, controller_id=view.controller_id, brokers=brokers,
                    cluster_authorized_operations=operations)


def authorized_operations(authorizer: StandardAuthorizer | None, call: Call) -> int:
    """The cluster operations the caller may do, as a bit field (Kafka's ``AuthHelper``): every one
    without an authorizer; else 0 unless DESCRIBE is allowed, and then the allowed ones."""
    request = call.body
    assert isinstance(request, messages.DescribeClusterRequest)
    if authorizer is None or not request.include_cluster_authorized_operations:
        return CLUSTER_OPERATIONS
    api = authorization.api_name(call.api_key)
    if not authorizer.authorize(call.kafka_principal, call.client_host,
                                Action(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME, api)):
        return 0
    allowed = authorizer.authorized_operations(call.kafka_principal, call.client_host, acl.CLUSTER_OPERATIONS,
                                               ResourceType.CLUSTER, CLUSTER_NAME, api)
    return sum(1 << operation for operation in allowed)


async def on_controller(node: ControllerRole, call: Call) -> Answer:
    assert isinstance(call.body, messages.DescribeClusterRequest)
    response = handle(call.body, call.version, node.view(call.listener), node.core.registered_controllers(),
                      authorized_operations(node.authorizer, call))
    return response, call.version


async def on_broker(node: BrokerRole, call: Call) -> Answer:
    assert isinstance(call.body, messages.DescribeClusterRequest)
    operations = authorized_operations(node.authorizer, call)
    return handle_broker(call.body, call.version, node.view(call.listener), operations), call.version


registry.register(ApiKey.DESCRIBE_CLUSTER, controller=on_controller, broker=on_broker)
