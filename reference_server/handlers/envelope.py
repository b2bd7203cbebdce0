"""Envelope (API 58), version 0: how a broker forwards a client's request to the active controller.

- Request: RequestData (the client's request header and body, without the size prefix),
  RequestPrincipal (the principal the broker authenticated the client as, serialized as Kafka's
  ``DefaultKafkaPrincipalBuilder`` does: an int16 version, 0, then DefaultPrincipalData v0 with Type
  ``User``, the Name and TokenAuthenticated false) and ClientHostAddress (the client's IP address, 4
  or 16 bytes).
- Response: ResponseData (the inner response header and body, without the size prefix) and ErrorCode
  (an error of the envelope itself; ResponseData is then null).

The controller reads the principal (an envelope whose principal does not parse is answered
PRINCIPAL_DESERIALIZATION_FAILURE), decodes RequestData, handles the inner request as if it had
arrived on its own listener, and answers with the inner response encoded at the inner version and
correlation id. The broker decodes that and answers its client, re-encoding with the client's
correlation id. When no controller can be reached the broker answers in the inner API's own shape
with the error that makes clients retry: NOT_CONTROLLER for UpdateFeatures, NOT_LEADER_OR_FOLLOWER
for the raft APIs.
"""

from __future__ import annotations

import ipaddress
from typing import Final

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError
from kafka_admin_kraft.protocol.message import Struct

from ..raft import describe
from . import update_features

API_KEY: Final = 58
NOT_LEADER_OR_FOLLOWER: Final = 6
INVALID_REQUEST: Final = 42
PRINCIPAL_DESERIALIZATION_FAILURE: Final = 97
PRINCIPAL_TYPE: Final = "User"
PRINCIPAL_VERSION: Final = 0

FORWARDED_APIS: Final = frozenset({55, 57, 80, 81})
"""DescribeQuorum, UpdateFeatures, AddRaftVoter and RemoveRaftVoter: what a broker forwards."""


def client_address_bytes(host: str) -> bytes:
    """The packed IP address of a client (``ClientHostAddress``); empty when ``host`` is no IP."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).packed
    except ValueError:
        return b""


def serialize_principal(name: str) -> bytes:
    """``User:<name>`` as a Kafka broker puts it in RequestPrincipal."""
    data = messages.DefaultPrincipalData(type=PRINCIPAL_TYPE, name=name, token_authenticated=False)
    return PRINCIPAL_VERSION.to_bytes(2, "big") + data.encode(PRINCIPAL_VERSION)


def deserialize_principal(data: bytes | None) -> tuple[str, str]:
    """(type, name) of a serialized principal; ValueError when it is not one."""
    if data is None or len(data) < 2 or int.from_bytes(data[:2], "big", signed=True) != PRINCIPAL_VERSION:
        raise ValueError("not a version 0 DefaultPrincipalData")
    try:
        principal = messages.DefaultPrincipalData.decode(data[2:], PRINCIPAL_VERSION)
    except KafkaAdminError as exc:
        raise ValueError(f"invalid DefaultPrincipalData: {exc}") from None
    return principal.type, principal.name


def wrap(request_frame: bytes, client_host: str, principal: str) -> messages.EnvelopeRequest:
    """The EnvelopeRequest carrying ``request_frame`` (a request's header and body, no size prefix)
    for a client authenticated as ``User:<principal>``."""
    return messages.EnvelopeRequest(request_data=request_frame,
                                    request_principal=serialize_principal(principal),
                                    client_host_address=client_address_bytes(client_host))


def unwrap_request(envelope: messages.EnvelopeRequest) -> framing.RequestFrame:
    """The inner request; raises the codec's errors when RequestData is not a request it knows."""
    return framing.decode_request(envelope.request_data)


def wrap_response(body: Struct, api_version: int, correlation_id: int) -> messages.EnvelopeResponse:
    """The EnvelopeResponse carrying the inner response encoded at its version and correlation id."""
    frame = framing.encode_response(body, api_version, correlation_id)
    return messages.EnvelopeResponse(response_data=frame[4:], error_code=0)


def error_response(code: int) -> messages.EnvelopeResponse:
    """An envelope the controller could not handle (no ResponseData)."""
    return messages.EnvelopeResponse(response_data=None, error_code=code)


def unwrap_response(envelope: messages.EnvelopeResponse, api_key: int, api_version: int) -> Struct:
    """The inner response body; ValueError when the envelope carries an error instead."""
    if envelope.error_code != 0 or envelope.response_data is None:
        raise ValueError(f"the controller answered the envelope with error {envelope.error_code}")
    _, body = framing.decode_response(envelope.response_data, api_key, api_version)
    return body


def unreachable(api_key: int, api_version: int, node_id: int) -> Struct:
    """A forwarded API's answer when no controller could be reached, in the shape clients retry on."""
    if api_key == update_features.API_KEY:
        return update_features.not_controller(-1, node_id)
    if api_key == messages.DescribeQuorumRequest.API_KEY:
        return describe.not_leader_response(api_version)
    if api_key == messages.AddRaftVoterRequest.API_KEY:
        return messages.AddRaftVoterResponse(throttle_time_ms=0, error_code=NOT_LEADER_OR_FOLLOWER,
                                             error_message=None)
    if api_key == messages.RemoveRaftVoterRequest.API_KEY:
        return messages.RemoveRaftVoterResponse(throttle_time_ms=0, error_code=NOT_LEADER_OR_FOLLOWER,
                                                error_message=None)
    raise ValueError(f"API {api_key} is not forwarded")
