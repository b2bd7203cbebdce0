"""BrokerRegistration (API 62) and BrokerHeartbeat (API 63) on the active controller (KIP-631), and the
brokers' sessions: how every broker comes to know every other one.

BrokerRegistration v0-4 (v1 IsMigratingZkBroker, v2 LogDirs, v3 PreviousBrokerEpoch, v4 the same
fields with the Features list including features whose minimum is 0). Checked in this order:

1. not the active controller: NOT_CONTROLLER;
2. a ClusterId other than the cluster's: INCONSISTENT_CLUSTER_ID;
   a listener whose host is no valid host name or IP address: INVALID_REQUEST (logged, since the
   response has no message; Kafka does not check hosts, but one that cannot be dialled or shown
   safely is not written to the metadata log here);
3. the broker id is registered with another incarnation id whose session has not expired:
   DUPLICATE_BROKER_REGISTRATION;
4. the broker does not support the finalized metadata.version: UNSUPPORTED_VERSION;
5. otherwise a RegisterBrokerRecord (Fenced true) is appended and the response, once it is committed,
   carries the broker epoch: the record's offset. The record is v3 (LogDirs, from 3.7-IV2), or v4
   (CordonedLogDirs, KIP-1066, empty here) on a node of Kafka 4.3 or later at 4.3-IV0 or later.

BrokerHeartbeat v0-2 (v1 OfflineLogDirs, v2 CordonedLogDirs from Kafka 4.3, KIP-1066; log directories
are not modelled, so neither list changes the registration): NOT_CONTROLLER from a non-active controller,
BROKER_ID_NOT_REGISTERED for an unknown id, STALE_BROKER_EPOCH for another epoch. Otherwise the
heartbeat renews the session, and a fenced broker that does not want to be fenced and whose
CurrentMetadataOffset reached its own registration (the broker epoch) is unfenced; a broker asking
to be fenced or to shut down is fenced (having no partitions, it may shut down at once). Each change
is a BrokerRegistrationChangeRecord (v0, Fenced -1 or 1) and the answer waits for its commit.

A session expires ``broker.session.timeout.ms`` after the last heartbeat; the controller then fences
the broker (the runtime keeps the sessions). A newly active controller gives every registered broker a
full session first. An answer without error renews the broker's session; a decision with a record is
answered once the record is committed (NOT_CONTROLLER if leadership is lost first).
Controlled shutdown with partitions to move, log directories and ZooKeeper migration are not modelled.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_admin_kraft import features
from kafka_admin_kraft.hosts import host_problem, printable_host
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records import ApiMessageAndVersion

from ..kafka_line import NEWEST, ServerLine
from ..raft.core import NotLeaderError
from ..raft.image import FENCE, UNFENCE
from . import registry
from .registry import Answer, Call, ControllerRole

log = logging.getLogger("kafka.controller.ClusterControlManager")
controller_log = logging.getLogger("kafka.controller.QuorumController")

@dataclass(frozen=True)
class Decision:
    """The answer, and the record to append (and commit) before giving it; None answers at once."""

    response: messages.BrokerRegistrationResponse | messages.BrokerHeartbeatResponse
    record: ApiMessageAndVersion | None = None


def register(request: messages.BrokerRegistrationRequest, *, active: bool, cluster_id: str,
             metadata_version: int, registered: Mapping[int, messages.RegisterBrokerRecord],
             live: frozenset[int], next_offset: int, line: ServerLine = NEWEST) -> Decision:
    """Decide a registration. ``registered``: the committed registrations by broker id; ``live``: the
    ids whose session has not expired; ``next_offset``: where the record would be written; ``line``:
    the node's Kafka line, which picks the RegisterBrokerRecord version (v4 from 4.3 at 4.3-IV0)."""
    def refuse(code: int) -> Decision:
        return Decision(messages.BrokerRegistrationResponse(throttle_time_ms=0, error_code=code))

    if not active:
        return refuse(ErrorCode.NOT_CONTROLLER)
    if request.cluster_id != cluster_id:
        return refuse(ErrorCode.INCONSISTENT_CLUSTER_ID)
    for listener in request.listeners:
        problem = host_problem(listener.host)
        if problem is not None:
            log.warning("Refusing the registration of broker %d: the host %r of its listener %s %s",
                        request.broker_id, listener.host, printable_host(listener.name), problem)
            return refuse(ErrorCode.INVALID_REQUEST)
    existing = registered.get(request.broker_id)
    if (existing is not None and existing.incarnation_id != request.incarnation_id
            and request.broker_id in live):
        return refuse(ErrorCode.DUPLICATE_BROKER_REGISTRATION)
    supported = {f.name: (f.min_supported_version, f.max_supported_version) for f in request.features}
    low, high = supported.get(features.METADATA_VERSION, (0, 0))
    if not low <= metadata_version <= high:
        return refuse(ErrorCode.UNSUPPORTED_VERSION)
    R = messages.RegisterBrokerRecord
    record = R(broker_id=request.broker_id, incarnation_id=request.incarnation_id, broker_epoch=next_offset,
               end_points=[R.BrokerEndpoint(name=e.name, host=e.host, port=e.port,
                                            security_protocol=e.security_protocol)
                           for e in request.listeners],
               features=[R.BrokerFeature(name=f.name, min_supported_version=f.min_supported_version,
                                         max_supported_version=f.max_supported_version)
                         for f in request.features],
               rack=request.rack, fenced=True, in_controlled_shutdown=False, log_dirs=list(request.log_dirs))
    response = messages.BrokerRegistrationResponse(throttle_time_ms=0, error_code=ErrorCode.NONE,
                                                   broker_epoch=next_offset)
    version = line.register_broker_record_version(metadata_version)
    return Decision(response, ApiMessageAndVersion(record, version))


def heartbeat(request: messages.BrokerHeartbeatRequest, *, active: bool,
              registration: messages.RegisterBrokerRecord | None) -> Decision:
    """Decide a heartbeat against the broker's committed registration (the caller renews the session
    of an answer without error)."""
    def answer(code: int, *, fenced: bool = True, caught_up: bool = False,
               shut_down: bool = False) -> messages.BrokerHeartbeatResponse:
        return messages.BrokerHeartbeatResponse(throttle_time_ms=0, error_code=code, is_caught_up=caught_up,
                                                is_fenced=fenced, should_shut_down=shut_down)

    if not active:
        return Decision(answer(ErrorCode.NOT_CONTROLLER))
    if registration is None:
        return Decision(answer(ErrorCode.BROKER_ID_NOT_REGISTERED))
    if registration.broker_epoch != request.broker_epoch:
        return Decision(answer(ErrorCode.STALE_BROKER_EPOCH))
    caught_up = request.current_metadata_offset >= registration.broker_epoch
    wants_fenced = request.want_fence or request.want_shut_down
    fenced = registration.fenced
    change = 0
    if fenced and not wants_fenced and caught_up:
        change, fenced = UNFENCE, False
    elif wants_fenced and (not fenced or request.want_shut_down):
        # a fenced broker granted an immediate shutdown is fenced again, record and all: Kafka's
        # ReplicationControlManager.processBrokerHeartbeat handles SHUTDOWN_NOW as a fencing
        change, fenced = FENCE, True
    response = answer(ErrorCode.NONE, fenced=fenced, caught_up=caught_up, shut_down=request.want_shut_down)
    return Decision(response, fencing_record(registration, change) if change else None)


def fencing_record(registration: messages.RegisterBrokerRecord, change: int) -> ApiMessageAndVersion:
    """The BrokerRegistrationChangeRecord (v0) that fences (1) or unfences (-1) a registration."""
    return ApiMessageAndVersion(messages.BrokerRegistrationChangeRecord(
        broker_id=registration.broker_id, broker_epoch=registration.broker_epoch, fenced=change), 0)


async def on_registration(node: ControllerRole, call: Call) -> Answer:
    request = call.body
    assert isinstance(request, messages.BrokerRegistrationRequest)
    image = node.core.committed_features()
    line = node.view(call.listener).line
    decision = register(
        request, active=node.active, cluster_id=node.identity.cluster_id,
        metadata_version=image.metadata_version or line.features.latest_production_metadata_version,
        registered={r.broker_id: r for r in node.core.registered_brokers()},
        live=node.live_brokers(node.now_ms()), next_offset=node.log.end_offset(), line=line)
    return await _decided(node, call, decision, request.broker_id, "Registering broker")


async def on_heartbeat(node: ControllerRole, call: Call) -> Answer:
    request = call.body
    assert isinstance(request, messages.BrokerHeartbeatRequest)
    registration = controller_registration(node, request.broker_id)
    decision = heartbeat(request, active=node.active, registration=registration)
    return await _decided(node, call, decision, request.broker_id, "Changing the registration of broker")


def controller_registration(node: ControllerRole, broker_id: int) -> messages.RegisterBrokerRecord | None:
    """The broker's registration as the active controller sees it: committed, with its appended
    fencing changes (a heartbeat that arrives before the previous one's change is committed must not
    decide against the older state)."""
    registration = next((r for r in node.core.registered_brokers() if r.broker_id == broker_id), None)
    for record in node.uncommitted_records():
        if (registration is not None and isinstance(record, messages.BrokerRegistrationChangeRecord)
                and record.broker_id == broker_id and record.broker_epoch == registration.broker_epoch
                and record.fenced in (FENCE, UNFENCE)):
            registration = copy.copy(registration)
            registration.fenced = record.fenced == FENCE
    return registration


async def _decided(node: ControllerRole, call: Call, decision: Decision, broker_id: int, what: str) -> Answer:
    """Renew the broker's session when the answer is no error; append the decision's record and
    answer once it is committed."""
    if decision.response.error_code != ErrorCode.NONE:
        return decision.response, call.version
    now = node.now_ms()
    node.renew_session(broker_id, now)
    if decision.record is None:
        return decision.response, call.version
    refused: Struct = type(decision.response)(error_code=ErrorCode.NOT_CONTROLLER)
    try:
        offset = node.core.append([decision.record], now)
    except NotLeaderError:
        return refused, call.version
    controller_log.info("[QuorumController id=%d] %s %d: %s at offset %d", node.identity.node_id, what,
                        broker_id, type(decision.record.message).__name__, offset)
    body = await node.when_committed(offset, decision.response, lambda: refused, records=[decision.record])
    return None if body is None else (body, call.version)


registry.register(ApiKey.BROKER_REGISTRATION, controller=on_registration)
registry.register(ApiKey.BROKER_HEARTBEAT, controller=on_heartbeat)

__all__ = ["Decision", "controller_registration", "fencing_record", "heartbeat", "register"]
