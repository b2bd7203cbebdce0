"""Cluster authorization of each request, before its handler runs, as Kafka's ``ControllerApis`` and
``KafkaApis`` do it with ``AuthHelper.authorizeClusterOperation``.

The operation each API needs on the CLUSTER resource (``kafka-cluster``) is the SDK's table,
``kafka_admin_kraft.acl.cluster_operation``: on a controller listener the replication and registration
APIs and Envelope need CLUSTER_ACTION, DescribeQuorum and DescribeAcls DESCRIBE, DescribeCluster,
AddRaftVoter, RemoveRaftVoter, UpdateFeatures, UnregisterBroker, UnregisterController, CreateAcls and
DeleteAcls ALTER. A broker checks only what it answers itself (DescribeAcls: DESCRIBE; ApiVersions,
Metadata and DescribeCluster need nothing); what it forwards is authorized by the controller, for the
client's principal and address that the Envelope carries, after the controller has checked the broker's
own principal for CLUSTER_ACTION on the Envelope.

A refusal is CLUSTER_AUTHORIZATION_FAILED in the API's own error response
(``handlers.error_responses``); where that carries the exception's message it is Kafka's
``Request <request> is not authorized.``, the request printed as ``RequestChannel.Request`` prints
itself: its network processor, connection id, session object, listener, security protocol, buffer and,
for a forwarded request, the Envelope's request. Without an authorizer nothing is refused.
"""

from __future__ import annotations

from kafka_admin_kraft.acl import CLUSTER_NAME, FORWARDED, ResourceType, cluster_operation
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct

from ..authorizer import Action, StandardAuthorizer
from .error_responses import error_response
from .registry import BROKER, Call

KEEPS_BUFFER = FORWARDED | {ApiKey.ENVELOPE}
"""Requests whose bytes Kafka keeps after parsing (``ApiKeys.requiresDelayedAllocation``: forwardable
APIs, and Envelope for its bytes field), so that their ``buffer`` prints as a HeapByteBuffer."""


def api_name(api_key: int) -> str:
    """Kafka's name of an API (``ApiKeys.name``): DescribeCluster."""
    return messages.request_class(api_key).NAME.removesuffix("Request")


def request_text(call: Call) -> str:
    """The request as Kafka's ``RequestChannel.Request.toString`` prints it."""
    size = len(call.frame)
    buffer = f"java.nio.HeapByteBuffer[pos={size} lim={size} cap={size}]" if call.api_key in KEEPS_BUFFER \
        else "null"
    envelope = f"Some({request_text(call.envelope)})" if call.envelope is not None else "None"
    return (f"Request(processor={call.processor}, connectionId={call.connection_id}, "
            f"session=org.apache.kafka.network.Session@{call.session:x}, "
            f"listenerName=ListenerName({call.listener}), securityProtocol={call.protocol}, "
            f"buffer={buffer}, envelope={envelope})")


def denied(call: Call) -> str:
    """The message of Kafka's ClusterAuthorizationException for a refused request."""
    return f"Request {request_text(call)} is not authorized."


def check(authorizer: StandardAuthorizer | None, call: Call, kind: str) -> Struct | None:
    """The refusal of ``call`` arriving on a ``kind`` listener, None when it may go on."""
    if authorizer is None or (kind == BROKER and call.api_key in FORWARDED):
        return None
    operation = cluster_operation(call.api_key, kind)
    if operation is None:
        return None
    action = Action(operation, ResourceType.CLUSTER, CLUSTER_NAME, api_name(call.api_key))
    if authorizer.authorize(call.kafka_principal, call.client_host, action):
        return None
    return error_response(call.api_key, call.body, call.version, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                          denied(call))


__all__ = ["api_name", "check", "denied", "request_text"]
