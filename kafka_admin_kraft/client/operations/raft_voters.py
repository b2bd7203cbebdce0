"""add_raft_voter (AddRaftVoter, API 80) and remove_raft_voter (RemoveRaftVoter, API 81).

Sent to the active controller (or a broker, which forwards). As in Kafka's Admin client, only
NOT_CONTROLLER (and NOT_LEADER_OR_FOLLOWER with bootstrap controllers) is retried; every other error,
REQUEST_TIMED_OUT included, is raised with the server's message. AddRaftVoter's TimeoutMs is the time
left capped by ``request.timeout.ms``. ``ack_when_committed=False`` needs AddRaftVoter v1 (Kafka 4.2).
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_admin_kraft.client.core import AdminCore, Op, controller_errors
from kafka_admin_kraft.errors import error_for_code
from kafka_admin_kraft.models import Endpoint
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid


def as_uuid(value: str | Uuid) -> Uuid:
    return value if isinstance(value, Uuid) else Uuid.from_string(value)


def add_raft_voter(
    core: AdminCore,
    voter_id: int,
    voter_directory_id: str | Uuid,
    endpoints: Iterable[Endpoint],
    *,
    ack_when_committed: bool = True,
    cluster_id: str | None = None,
    timeout: float | None = None,
) -> Op[None]:
    operation = "add_raft_voter"
    directory = as_uuid(voter_directory_id)
    listeners = list(endpoints)
    cls = messages.AddRaftVoterRequest

    def attempt(deadline: float) -> Op[None]:
        conn = yield from core.target(deadline)
        minimum = 0 if ack_when_committed else 1
        version = core.choose_version(
            conn,
            cls,
            operation,
            minimum=minimum,
            why="(ack_when_committed=False needs Kafka 4.2)" if minimum else "",
        )
        timeout_ms = int(core.request_timeout(deadline) * 1000)
        request = cls(
            cluster_id=cluster_id,
            timeout_ms=timeout_ms,
            voter_id=voter_id,
            voter_directory_id=directory,
            listeners=[cls.Listener(name=e.listener, host=e.host, port=e.port) for e in listeners],
            ack_when_committed=ack_when_committed,
        )
        response = yield from core.request(conn, request, version, deadline)
        if response.error_code:
            raise error_for_code(response.error_code, response.error_message).in_context(
                operation, conn.label
            )

    return (yield from core.call(operation, attempt, timeout, controller_errors(core.config)))


def remove_raft_voter(
    core: AdminCore,
    voter_id: int,
    voter_directory_id: str | Uuid,
    *,
    cluster_id: str | None = None,
    timeout: float | None = None,
) -> Op[None]:
    operation = "remove_raft_voter"
    directory = as_uuid(voter_directory_id)
    cls = messages.RemoveRaftVoterRequest

    def attempt(deadline: float) -> Op[None]:
        conn = yield from core.target(deadline)
        version = core.choose_version(conn, cls, operation)
        request = cls(cluster_id=cluster_id, voter_id=voter_id, voter_directory_id=directory)
        response = yield from core.request(conn, request, version, deadline)
        if response.error_code:
            raise error_for_code(response.error_code, response.error_message).in_context(
                operation, conn.label
            )

    return (yield from core.call(operation, attempt, timeout, controller_errors(core.config)))
