"""add_raft_voter (AddRaftVoter, API 80) and remove_raft_voter (RemoveRaftVoter, API 81).

Sent to the active controller (or a broker, which forwards). As in Kafka's Admin client, only
NOT_CONTROLLER (and NOT_LEADER_OR_FOLLOWER with bootstrap controllers) is retried, along with lost
connections; every other error, REQUEST_TIMED_OUT included, is raised with the server's message.
AddRaftVoter's TimeoutMs is the time left capped by ``request.timeout.ms``. ``ack_when_committed=False``
needs AddRaftVoter v1 (Kafka 4.2).

A retry cannot tell whether an earlier attempt took effect before its answer was lost (the leader
died, the connection dropped). So when a retry is answered DUPLICATE_VOTER (add) or VOTER_NOT_FOUND
(remove), the leader's voter set is read (DescribeQuorum v2+, which carries directory ids): if it holds
exactly this voter id with this directory id (add), or no longer holds it (remove), the earlier attempt
succeeded and so does the call. A first attempt's answer is always the call's answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_admin_kraft.client.core import AdminCore, Connection, Op, controller_errors
from kafka_admin_kraft.client.operations.describe_metadata_quorum import request as describe_quorum_request
from kafka_admin_kraft.client.operations.describe_metadata_quorum import to_quorum_info
from kafka_admin_kraft.errors import ErrorCode, error_for_code
from kafka_admin_kraft.models import Endpoint
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid


def _is_voter(
    core: AdminCore, conn: Connection, voter_id: int, directory: Uuid, deadline: float
) -> Op[bool | None]:
    """Whether the leader's voter set holds this voter id with this directory id; None when the leader
    cannot say (DescribeQuorum before v2 has no directory ids)."""
    version = core.choose_version(conn, messages.DescribeQuorumRequest, "check the voter set")
    if version < 2:
        return None
    response = yield from core.request(conn, describe_quorum_request(), version, deadline)
    quorum = to_quorum_info(response, version, conn.label)
    return any(v.replica_id == voter_id and v.replica_directory_id == directory for v in quorum.voters)


def add_raft_voter(
    core: AdminCore,
    voter_id: int,
    voter_directory_id: Uuid,
    endpoints: Sequence[Endpoint],
    *,
    ack_when_committed: bool = True,
    cluster_id: str | None = None,
    timeout: float | None = None,
) -> Op[None]:
    operation = "add_raft_voter"
    cls = messages.AddRaftVoterRequest
    sent = False

    def attempt(deadline: float) -> Op[None]:
        nonlocal sent
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
            voter_directory_id=voter_directory_id,
            listeners=[cls.Listener(name=e.listener, host=e.host, port=e.port) for e in endpoints],
            ack_when_committed=ack_when_committed,
        )
        retry, sent = sent, True
        response = yield from core.request(conn, request, version, deadline)
        if (
            response.error_code == ErrorCode.DUPLICATE_VOTER
            and retry
            and (yield from _is_voter(core, conn, voter_id, voter_directory_id, deadline))
        ):
            return
        if response.error_code:
            raise error_for_code(response.error_code, response.error_message).in_context(
                operation, conn.label
            )

    return (yield from core.call(operation, attempt, timeout, controller_errors(core.config)))


def remove_raft_voter(
    core: AdminCore,
    voter_id: int,
    voter_directory_id: Uuid,
    *,
    cluster_id: str | None = None,
    timeout: float | None = None,
) -> Op[None]:
    operation = "remove_raft_voter"
    cls = messages.RemoveRaftVoterRequest
    sent = False

    def attempt(deadline: float) -> Op[None]:
        nonlocal sent
        conn = yield from core.target(deadline)
        version = core.choose_version(conn, cls, operation)
        request = cls(cluster_id=cluster_id, voter_id=voter_id, voter_directory_id=voter_directory_id)
        retry, sent = sent, True
        response = yield from core.request(conn, request, version, deadline)
        if (
            response.error_code == ErrorCode.VOTER_NOT_FOUND
            and retry
            and (yield from _is_voter(core, conn, voter_id, voter_directory_id, deadline)) is False
        ):
            return
        if response.error_code:
            raise error_for_code(response.error_code, response.error_message).in_context(
                operation, conn.label
            )

    return (yield from core.call(operation, attempt, timeout, controller_errors(core.config)))
