"""unregister_broker (UnregisterBroker, API 64, KIP-631) and unregister_controller (UnregisterController,
API 94, KIP-1312, Kafka 4.4): remove the registration of a broker or controller that is gone for good,
so that its supported feature levels no longer hold back feature upgrades.

Sent to the active controller (or a broker, which forwards), as Kafka's Admin client sends them:
NOT_CONTROLLER (and NOT_LEADER_OR_FOLLOWER with bootstrap controllers) and REQUEST_TIMED_OUT are retried
with lost connections until the deadline; any other error is raised with the server's message and a
hint that says what to do:

- BROKER_ID_NOT_REGISTERED / CONTROLLER_ID_NOT_REGISTERED (136): no such registration (never
  registered, or unregistered already);
- UNSUPPORTED_VERSION from unregister_controller: the finalized metadata.version is below 4.4-IV2,
  which the controller's UnregisterControllerRecord needs (``MetadataVersion.IBP_4_4_IV2``);
- INVALID_REQUEST from unregister_controller: the controller is still a voter, or the active
  controller, which Kafka refuses to unregister (KAFKA-20865, PR #23152).

A node that does not advertise the API (UnregisterController before Kafka 4.4; UnregisterBroker on a
Kafka 3.9 or 4.0 controller listener, answered from 4.1 on, KAFKA-17039) raises
``UnsupportedOperationError`` naming the release needed.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka_admin_kraft.client.core import AdminCore, Op, RetryPolicy, controller_errors
from kafka_admin_kraft.errors import ErrorCode, KafkaApiError, error_for_code
from kafka_admin_kraft.features import CONTROLLER_UNREGISTRATION_VERSION, NEWEST
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct

UNREGISTRATION_RELEASE = NEWEST.release_string(CONTROLLER_UNREGISTRATION_VERSION)
"""The metadata.version from which controllers can be unregistered (KIP-1312)."""


def _retried(core: AdminCore) -> RetryPolicy:
    """Kafka's Admin client retries these calls on a moved controller and on REQUEST_TIMED_OUT."""
    moved = controller_errors(core.config)

    def policy(error: KafkaApiError) -> bool:
        return error.code == ErrorCode.REQUEST_TIMED_OUT or moved(error)

    return policy


def _unregister(
    core: AdminCore,
    operation: str,
    request: Struct,
    why: str,
    hint: Callable[[int], str | None],
    timeout: float | None,
) -> Op[None]:
    """Send ``request`` to the active controller; an error is raised with ``hint(code)``, if any."""

    def attempt(deadline: float) -> Op[None]:
        conn = yield from core.target(deadline)
        version = core.choose_version(conn, type(request), operation, why=why)
        response = yield from core.request(conn, request, version, deadline)
        if response.error_code:
            error = error_for_code(response.error_code, response.error_message)
            error.in_context(operation, conn.label)
            text = hint(response.error_code)
            raise error.with_hint(text) if text is not None else error

    return (yield from core.call(operation, attempt, timeout, _retried(core)))


def unregister_broker(core: AdminCore, broker_id: int, timeout: float | None = None) -> Op[None]:
    def hint(code: int) -> str | None:
        if code != ErrorCode.BROKER_ID_NOT_REGISTERED:
            return None
        return (
            f"broker {broker_id} has no registration (it never registered, or was unregistered already); "
            "describe_cluster(include_fenced_brokers=True) lists the registered brokers"
        )

    request = messages.UnregisterBrokerRequest(broker_id=broker_id)
    why = "(a controller listener answers it from Kafka 4.1, KAFKA-17039)"
    return (yield from _unregister(core, "unregister_broker", request, why, hint, timeout))


def unregister_controller(core: AdminCore, controller_id: int, timeout: float | None = None) -> Op[None]:
    def hint(code: int) -> str | None:
        if code == ErrorCode.CONTROLLER_ID_NOT_REGISTERED:
            return (
                f"controller {controller_id} has no registration (it never registered, or was unregistered "
                "already); describe_cluster() with bootstrap controllers lists the registered controllers"
            )
        if code == ErrorCode.UNSUPPORTED_VERSION:
            return (
                f"unregistering a controller needs metadata.version {UNREGISTRATION_RELEASE} "
                f"(level {CONTROLLER_UNREGISTRATION_VERSION}) "
                "or later: finalize it once every node runs Kafka 4.4 (kafka-features upgrade "
                "--release-version 4.4); a stopped controller of an older release that blocks the upgrade "
                "is replaced by a Kafka 4.4 controller started with its node id until the upgrade is done"
            )
        if code == ErrorCode.INVALID_REQUEST:
            return (
                f"if controller {controller_id} is still a voter, or the active controller, it cannot be "
                "unregistered: stop it and remove it from the voters first (remove_raft_voter, or "
                "kafka-metadata-quorum remove-controller --unregister)"
            )
        return None

    request = messages.UnregisterControllerRequest(controller_id=controller_id)
    why = f"(it needs Kafka 4.4 at metadata.version {UNREGISTRATION_RELEASE} or later, KIP-1312)"
    return (yield from _unregister(core, "unregister_controller", request, why, hint, timeout))
