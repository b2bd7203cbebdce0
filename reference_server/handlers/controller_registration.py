"""ControllerRegistration (API 70), version 0, on the active controller (KIP-919, Kafka 3.7+).

Every controller, voter or observer, registers its controller listeners and supported features with
the active controller (``kafka_admin_kraft_server.registration``), which writes them to the metadata
log as a RegisterControllerRecord; the committed image keeps the latest one per controller id and
DescribeCluster on a controller lists them (``handlers.describe_cluster``). Checked in this order:

1. not the active controller: NOT_CONTROLLER;
2. a metadata.version below 3.7-IV0: UNSUPPORTED_VERSION (ClusterControlManager.registerController);
3. a negative ControllerId, two listeners with one name, or a listener host that is no valid host
   name or IP address: INVALID_REQUEST, with the reason as ErrorMessage (and logged). Kafka checks
   none of these, but a registration that cannot be dialled or shown safely is not written to the
   metadata log here (BrokerRegistration's hosts are refused the same way);
4. otherwise a RegisterControllerRecord (v0) with the request's listeners and features is appended,
   and the answer (no error) comes once it is committed; NOT_CONTROLLER if leadership is lost first.

Like Kafka 4, the record says ZkMigrationReady false whatever the request says, and the supported
feature ranges are stored but not checked against the finalized levels (Kafka checks them the other
way round, when a feature is upgraded). Kafka's error answers carry the error code's default message
(``ControllerRegistrationRequest.getErrorResponse``); its success answer leaves ErrorMessage at its
default, the empty string. Registering again with the same or a new incarnation id simply writes a
new record: the latest one wins.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Final

from kafka_admin_kraft import features
from kafka_admin_kraft.hosts import host_problem, printable_host
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records import ApiMessageAndVersion

from ..raft.core import NotLeaderError
from . import registry
from .registry import Answer, Call, ControllerRole

log = logging.getLogger("kafka.controller.ClusterControlManager")
controller_log = logging.getLogger("kafka.controller.QuorumController")

RECORD_VERSION: Final = 0

Response = messages.ControllerRegistrationResponse


@dataclass(frozen=True)
class Decision:
    """The answer, and the record to append (and commit) before giving it; None answers at once."""

    response: Response
    record: ApiMessageAndVersion | None = None


def error(code: ErrorCode, message: str | None = None) -> Response:
    """An error answer; the message defaults to the code's own, as Kafka's ``getErrorResponse``."""
    return Response(throttle_time_ms=0, error_code=code,
                    error_message=code.message if message is None else message)


def handle(request: messages.ControllerRegistrationRequest, *, active: bool,
           metadata_version: int) -> Decision:
    """Decide a registration. ``metadata_version``: the active controller's finalized level."""
    if not active:
        return Decision(error(ErrorCode.NOT_CONTROLLER))
    if metadata_version < features.CONTROLLER_REGISTRATION_VERSION:
        return Decision(error(ErrorCode.UNSUPPORTED_VERSION))
    problem = _problem(request)
    if problem is not None:
        log.warning("Refusing the registration of controller %d: %s", request.controller_id, problem)
        return Decision(error(ErrorCode.INVALID_REQUEST, problem))
    R = messages.RegisterControllerRecord
    record = R(controller_id=request.controller_id, incarnation_id=request.incarnation_id,
               zk_migration_ready=False,
               end_points=[R.ControllerEndpoint(name=listener.name, host=listener.host, port=listener.port,
                                                security_protocol=listener.security_protocol)
                           for listener in request.listeners],
               features=[R.ControllerFeature(name=feature.name,
                                             min_supported_version=feature.min_supported_version,
                                             max_supported_version=feature.max_supported_version)
                         for feature in request.features])
    return Decision(Response(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=""),
                    ApiMessageAndVersion(record, RECORD_VERSION))


def _problem(request: messages.ControllerRegistrationRequest) -> str | None:
    if request.controller_id < 0:
        return f"the controller id {request.controller_id} is negative"
    names = set()
    for listener in request.listeners:
        shown = printable_host(listener.name)
        if listener.name in names:
            return f"the listener {shown} is given twice"
        names.add(listener.name)
        reason = host_problem(listener.host)
        if reason is not None:
            return f"the host {listener.host!r} of its listener {shown} {reason}"
    return None


async def serve_registration(node: ControllerRole, request: messages.ControllerRegistrationRequest,
                             listener: str) -> Struct | None:
    """Decide with ``handle`` (against the metadata.version this controller has finalized, appended
    changes included); append the RegisterControllerRecord and answer once it is committed,
    NOT_CONTROLLER if leadership is lost first. The active controller registers itself this way too."""
    level = node.view(listener).metadata_version
    assert level is not None  # the view falls back to the bootstrap's level
    level = node.uncommitted_levels().get(features.METADATA_VERSION, level)
    decision = handle(request, active=node.active, metadata_version=level)
    if decision.record is None:
        return decision.response

    def refused() -> Struct:
        return error(ErrorCode.NOT_CONTROLLER)

    try:
        offset = node.core.append([decision.record], node.now_ms())
    except NotLeaderError:
        return refused()
    node.wake()
    controller_log.info("[QuorumController id=%d] Registering controller %d (incarnation %s) at "
                        "offset %d", node.identity.node_id, request.controller_id, request.incarnation_id,
                        offset)
    return await node.when_committed(offset, decision.response, refused)


async def on_controller(node: ControllerRole, call: Call) -> Answer:
    assert isinstance(call.body, messages.ControllerRegistrationRequest)
    body = await serve_registration(node, call.body, call.listener)
    return None if body is None else (body, call.version)


registry.register(ApiKey.CONTROLLER_REGISTRATION, controller=on_controller)

__all__ = ["Decision", "error", "handle", "serve_registration"]
