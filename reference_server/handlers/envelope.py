"""Envelope (API 58), version 0: how a broker forwards a client's request to the active controller.

- Request: RequestData (the client's request header and body, without the size prefix),
  RequestPrincipal (the principal the broker authenticated the client as, serialized as Kafka's
  ``DefaultKafkaPrincipalBuilder`` does: an int16 version, 0, then DefaultPrincipalData v0 with Type
  ``User``, the Name and TokenAuthenticated false) and ClientHostAddress (the client's IP address, 4
  or 16 bytes).
- Response: ResponseData (the inner response header and body, without the size prefix) and ErrorCode
  (an error of the envelope itself; ResponseData is then null).

The controller authorizes the Envelope itself first (CLUSTER_ACTION on the cluster for the broker's
principal, ``handlers.authorization``; a refusal is the ErrorCode alone). It then reads the principal
(an envelope whose principal does not parse is answered PRINCIPAL_DESERIALIZATION_FAILURE), decodes
RequestData, handles the inner request as if it had arrived on its own listener from the client (its
principal and address, which the authorizer decides for), and answers with the inner response encoded
at the inner version and correlation id. The broker decodes that and answers its client, re-encoding
with the client's correlation id; an error of the Envelope itself is UNKNOWN_SERVER_ERROR in the inner
API's response (Kafka's ``ForwardingManager``), and UNSUPPORTED_VERSION closes the client's connection.
When no controller can be reached the broker answers in the inner API's own shape with the error that
makes clients retry, as the API's row of the table says (``registry``):
NOT_CONTROLLER for UpdateFeatures, NOT_LEADER_OR_FOLLOWER for the raft APIs. A controller accepts in an
Envelope only the APIs a broker forwards (INVALID_REQUEST otherwise).
"""

from __future__ import annotations

import ipaddress
import logging
import random
from typing import Final

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError
from kafka_admin_kraft.protocol.message import Struct

from . import registry
from .registry import Answer, Call, ControllerRole

log = logging.getLogger("kafka.network.SocketServer")

PRINCIPAL_TYPE: Final = "User"
PRINCIPAL_VERSION: Final = 0


def client_host(address: bytes) -> str:
    """The client's IP address in text from ClientHostAddress (empty when it is no address)."""
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return ""


def client_address_bytes(host: str) -> bytes:
    """The packed IP address of a client (``ClientHostAddress``); empty when ``host`` is no IP."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).packed
    except ValueError:
        return b""


def serialize_principal(name: str, kind: str = PRINCIPAL_TYPE) -> bytes:
    """``<kind>:<name>`` as a Kafka broker puts it in RequestPrincipal."""
    data = messages.DefaultPrincipalData(type=kind, name=name, token_authenticated=False)
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


def wrap(request_frame: bytes, client_host: str, principal: str,
         principal_type: str = PRINCIPAL_TYPE) -> messages.EnvelopeRequest:
    """The EnvelopeRequest carrying ``request_frame`` (a request's header and body, no size prefix)
    for a client authenticated as ``<principal_type>:<principal>``."""
    return messages.EnvelopeRequest(request_data=request_frame,
                                    request_principal=serialize_principal(principal, principal_type),
                                    client_host_address=client_address_bytes(client_host))


def unwrap_request(envelope: messages.EnvelopeRequest) -> framing.RequestFrame:
    """The inner request; raises the codec's errors when RequestData is not a request it knows."""
    return framing.decode_request(envelope.request_data)


def wrap_response(body: Struct, api_version: int, correlation_id: int) -> messages.EnvelopeResponse:
    """The EnvelopeResponse carrying the inner response encoded at its version and correlation id."""
    frame = framing.encode_response(body, api_version, correlation_id)
    return messages.EnvelopeResponse(response_data=frame[4:], error_code=ErrorCode.NONE)


def error_response(code: ErrorCode) -> messages.EnvelopeResponse:
    """An envelope the controller could not handle (no ResponseData)."""
    return messages.EnvelopeResponse(response_data=None, error_code=code)


def unwrap_response(envelope: messages.EnvelopeResponse, api_key: int, api_version: int) -> Struct:
    """The inner response body; ValueError when the envelope carries an error instead."""
    if envelope.error_code != ErrorCode.NONE or envelope.response_data is None:
        raise ValueError(f"the controller answered the envelope with error {envelope.error_code}")
    _, body = framing.decode_response(envelope.response_data, api_key, api_version)
    return body


def unreachable(api_key: int, api_version: int, node_id: int, request: Struct | None = None) -> Struct:
    """A forwarded API's answer to ``request`` when no controller could be reached, in the shape
    clients retry on."""
    entry = registry.api(api_key)
    if entry is None or entry.unreachable is None:
        raise ValueError(f"API {api_key} is not forwarded")
    return entry.unreachable(api_version, node_id, request)


async def on_controller(node: ControllerRole, call: Call) -> Answer:
    """A request a broker forwarded: handle the inner request as if it came on this listener."""
    wrapped = call.body
    assert isinstance(wrapped, messages.EnvelopeRequest)
    try:
        principal = deserialize_principal(wrapped.request_principal)
    except ValueError as exc:
        log.warning("Envelope from %s with an unreadable principal: %s", call.peer, exc)
        return error_response(ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE), call.version
    try:
        inner = unwrap_request(wrapped)
    except Exception as exc:
        log.warning("Invalid request forwarded by %s in an Envelope: %s", call.peer, exc)
        return error_response(ErrorCode.INVALID_REQUEST), call.version
    if not registry.forwarded(inner.header.request_api_key):
        return error_response(ErrorCode.INVALID_REQUEST), call.version
    log.debug("%s forwarded API %d for %s:%s", call.peer, inner.header.request_api_key, *principal)
    forwarded = Call(inner, call.listener, call.peer, frame=wrapped.request_data,
                     client_host=client_host(wrapped.client_host_address), principal=principal[1],
                     principal_type=principal[0], protocol=call.protocol, connection_id=call.connection_id,
                     processor=call.processor, session=random.getrandbits(31), envelope=call)
    answer = await node.dispatch(forwarded)
    if answer is None:
        return None
    return wrap_response(answer[0], answer[1], inner.header.correlation_id), call.version


registry.register(ApiKey.ENVELOPE, controller=on_controller)
