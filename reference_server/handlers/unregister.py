"""UnregisterBroker (API 64) and UnregisterController (API 94, KIP-1312, Kafka 4.4), version 0: an
operator removes the registration of a broker or controller that is gone for good, so that it stops
being listed and its supported feature ranges stop counting in UpdateFeatures (``update_features``'s
``Registered``). Both are answered by the active controller; a broker forwards them to it.

UnregisterBroker, every line (Kafka's ``ControllerApis.handleUnregisterBroker`` and
``ReplicationControlManager.unregisterBroker``):

1. not the active controller: NOT_CONTROLLER;
2. no registration for BrokerId: BROKER_ID_NOT_REGISTERED;
3. otherwise an UnregisterBrokerRecord (v0) with the registration's broker epoch is appended, and the
   answer comes once it is committed (the reference broker hosts no partitions, so no partition change
   goes with it).

Kafka's controller sets only the error code of this response: ErrorMessage keeps its default, the
empty string, on success and on error alike. A broker that is still running registers again (as
Kafka's broker does when its heartbeat is answered BROKER_ID_NOT_REGISTERED).

UnregisterController, Kafka 4.4 only (``QuorumController.unregisterController``,
``ClusterControlManager.unregisterController``; PR #22191, KAFKA-20395, and PR #23152, KAFKA-20865):

1. not the active controller: NOT_CONTROLLER, ``The active controller appears to be node <id>.`` (or
   ``No controller appears to be active.``);
2. ControllerId is in the latest voter set, committed or not: INVALID_REQUEST, ``Cannot unregister
   controller <id> because it is part of the voter set.`` A voter, running or stopped, is removed with
   RemoveRaftVoter first;
3. ControllerId is this controller's own id: INVALID_REQUEST, ``Controller cannot unregister itself
   while it is active.`` (only reachable while the leader's own removal from the voter set is not
   committed yet);
4. metadata.version below 4.4-IV2 (33, ``MetadataVersion.isControllerUnregistrationSupported``):
   UNSUPPORTED_VERSION, ``The current MetadataVersion is too old to support controller
   unregistration.``;
5. no registration for ControllerId: CONTROLLER_ID_NOT_REGISTERED, ``Controller ID <id> is not
   currently registered.``;
6. otherwise an UnregisterControllerRecord (v0) is appended, and the answer (ErrorMessage "", the
   default) comes once it is committed. A controller that is still running registers again
   (``registration``), as Kafka's ControllerRegistrationManager does.

Step 4 is what keeps a cluster stuck behind a "ghost": a stopped controller of an older line that
stays registered blocks the metadata.version upgrade to 4.4-IV2 (UpdateFeatures refuses a level a
registered controller does not support), and below 4.4-IV2 it cannot be unregistered. Kafka has no
way around that in the protocol (a bridge, PR #23196, was closed unmerged): the registration is
replaced by starting a 4.4 controller with the same node id, which registers its own supported
ranges, and stopping it again once the upgrade is done.

An answer waits for the record's commit and says NOT_CONTROLLER if this node stops leading first.
A request for a node whose unregistration is appended but not committed yet is answered as Kafka's
controller, which replays its own records at once, answers it: not registered. The metadata.version
checked is the controller's own view (committed, with its appended changes). With an authorizer both
need ALTER on the cluster (``handlers.authorization``). When no controller can be reached, a broker
answers NOT_CONTROLLER, which clients retry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Final

from kafka_admin_kraft import features
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records import ApiMessageAndVersion

from ..raft.core import NotLeaderError
from . import registry
from .registry import Answer, Call, ControllerRole
from .update_features import wrong_controller_message

log = logging.getLogger("kafka.controller.QuorumController")

RECORD_VERSION: Final = 0

BrokerResponse = messages.UnregisterBrokerResponse
ControllerResponse = messages.UnregisterControllerResponse


@dataclass(frozen=True)
class Decision:
    """The answer, and the record to append (and commit) before giving it; None answers at once."""

    response: BrokerResponse | ControllerResponse
    record: ApiMessageAndVersion | None = None


def broker_error(code: int) -> BrokerResponse:
    """An UnregisterBroker refusal as Kafka's controller writes it: the code, ErrorMessage left ""."""
    return BrokerResponse(throttle_time_ms=0, error_code=code, error_message="")


def controller_error(code: int, message: str) -> ControllerResponse:
    """An UnregisterController refusal, carrying the message of the exception Kafka throws."""
    return ControllerResponse(throttle_time_ms=0, error_code=code, error_message=message)


def unregister_broker(request: messages.UnregisterBrokerRequest, *, active: bool,
                      registered: Mapping[int, messages.RegisterBrokerRecord]) -> Decision:
    """Decide an UnregisterBroker. ``registered``: the brokers' registrations by id, as the active
    controller sees them."""
    if not active:
        return Decision(broker_error(ErrorCode.NOT_CONTROLLER))
    registration = registered.get(request.broker_id)
    if registration is None:
        return Decision(broker_error(ErrorCode.BROKER_ID_NOT_REGISTERED))
    record = messages.UnregisterBrokerRecord(broker_id=request.broker_id,
                                             broker_epoch=registration.broker_epoch)
    return Decision(broker_error(ErrorCode.NONE), ApiMessageAndVersion(record, RECORD_VERSION))


def unregister_controller(request: messages.UnregisterControllerRequest, *, active: bool, node_id: int,
                          leader_id: int, voters: Collection[int], metadata_version: int,
                          registered: Collection[int]) -> Decision:
    """Decide an UnregisterController on controller ``node_id``. ``voters``: the ids of the latest
    voter set; ``metadata_version``: the controller's finalized level; ``registered``: the ids of the
    registered controllers."""
    controller_id = request.controller_id
    if not active:
        return Decision(controller_error(ErrorCode.NOT_CONTROLLER,
                                         wrong_controller_message(leader_id, node_id)))
    if controller_id in voters:
        return Decision(controller_error(
            ErrorCode.INVALID_REQUEST,
            f"Cannot unregister controller {controller_id} because it is part of the voter set."))
    if controller_id == node_id:
        return Decision(controller_error(ErrorCode.INVALID_REQUEST,
                                         "Controller cannot unregister itself while it is active."))
    if metadata_version < features.CONTROLLER_UNREGISTRATION_VERSION:
        return Decision(controller_error(
            ErrorCode.UNSUPPORTED_VERSION,
            "The current MetadataVersion is too old to support controller unregistration."))
    if controller_id not in registered:
        return Decision(controller_error(ErrorCode.CONTROLLER_ID_NOT_REGISTERED,
                                         f"Controller ID {controller_id} is not currently registered."))
    record = messages.UnregisterControllerRecord(controller_id=controller_id)
    return Decision(ControllerResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=""),
                    ApiMessageAndVersion(record, RECORD_VERSION))


def _unregistering(node: ControllerRole, record_type: type[Struct], field: str) -> set[int]:
    """The nodes whose unregistration is appended and not committed yet: gone in the controller's
    own view, still in the committed image."""
    return {getattr(r, field) for r in node.uncommitted_records() if isinstance(r, record_type)}


async def _commit(node: ControllerRole, call: Call, decision: Decision, target: int,
                  refused: Callable[[], Struct]) -> Answer:
    """Answer at once, or append the decision's record and answer once it is committed."""
    if decision.record is None:
        return decision.response, call.version
    try:
        offset = node.core.append([decision.record], node.now_ms())
    except NotLeaderError:
        return refused(), call.version
    node.wake()
    log.info("[QuorumController id=%d] Appended %s for node %d at offset %d", node.identity.node_id,
             type(decision.record.message).__name__, target, offset)
    body = await node.when_committed(offset, decision.response, refused, records=[decision.record])
    return None if body is None else (body, call.version)


async def on_unregister_broker(node: ControllerRole, call: Call) -> Answer:
    request = call.body
    assert isinstance(request, messages.UnregisterBrokerRequest)
    gone = _unregistering(node, messages.UnregisterBrokerRecord, "broker_id")
    registered = {r.broker_id: r for r in node.core.registered_brokers() if r.broker_id not in gone}
    decision = unregister_broker(request, active=node.active, registered=registered)
    return await _commit(node, call, decision, request.broker_id,
                         lambda: broker_error(ErrorCode.NOT_CONTROLLER))


async def on_unregister_controller(node: ControllerRole, call: Call) -> Answer:
    request = call.body
    assert isinstance(request, messages.UnregisterControllerRequest)
    me = node.identity.node_id
    level = node.view(call.listener).metadata_version or 0
    level = node.uncommitted_levels().get(features.METADATA_VERSION, level)
    gone = _unregistering(node, messages.UnregisterControllerRecord, "controller_id")
    registered = {r.controller_id for r in node.core.registered_controllers()} - gone
    decision = unregister_controller(request, active=node.active, node_id=me, leader_id=node.core.leader_id,
                                     voters=node.core.voters.ids(), metadata_version=level,
                                     registered=registered)

    def refused() -> Struct:
        return controller_error(ErrorCode.NOT_CONTROLLER, wrong_controller_message(node.core.leader_id, me))

    return await _commit(node, call, decision, request.controller_id, refused)


def broker_unreachable(api_version: int, node_id: int, request: Struct | None = None) -> Struct:
    """A broker's UnregisterBroker answer when no controller can be reached."""
    return BrokerResponse(throttle_time_ms=0, error_code=ErrorCode.NOT_CONTROLLER,
                          error_message=ErrorCode.NOT_CONTROLLER.message)


def controller_unreachable(api_version: int, node_id: int, request: Struct | None = None) -> Struct:
    """A broker's UnregisterController answer when no controller can be reached."""
    return controller_error(ErrorCode.NOT_CONTROLLER, ErrorCode.NOT_CONTROLLER.message)


registry.register(ApiKey.UNREGISTER_BROKER, controller=on_unregister_broker, forwarded=broker_unreachable)
registry.register(ApiKey.UNREGISTER_CONTROLLER, controller=on_unregister_controller,
                  forwarded=controller_unreachable)

__all__ = ["Decision", "broker_error", "controller_error",
           "unregister_broker", "unregister_controller"]
