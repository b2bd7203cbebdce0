"""Voter changes (KIP-853) on the leader: the pending operation and the exact answers of
AddRaftVoter (API 80), RemoveRaftVoter (API 81) and UpdateRaftVoter (API 82).

The order of the checks lives in the handlers (``add_voter``, ``remove_voter``, ``update_voter``,
after Kafka's AddVoterHandler, RemoveVoterHandler and UpdateVoterHandler); this module holds the checks
adding and removing share (``refuse_request``, ``refuse_change``), what the leader keeps between their
steps (``PendingChange``) and what the answers say, so that the texts match Kafka's byte for byte:

- ``<key>`` is ``ReplicaKey(id=<id>, directoryId=<uuid or <undefined>>)``;
- ``<voters>`` is a Java set of such keys (by ascending id here);
- endpoints print as Kafka's ``Endpoints`` record of unresolved ``InetSocketAddress`` values.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kafka_admin_kraft.features import KRAFT_VERSION, SUPPORTED_FEATURES
from kafka_admin_kraft.hosts import host_problem, printable_host
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

from .api import Endpoint, InboundRequest, ReplicaKey, VoterSet
from .context import RaftContext
from .leader import LeaderState
from .voters import VoterSetHistory

log = logging.getLogger(__name__)

ADD = "add"
REMOVE = "remove"

CAUGHT_UP_MAX_AGE_MS = 3_600_000
"""A new voter's last fetch must be within the last hour (Kafka's AddVoterHandler)."""

CLIENT_SOFTWARE_NAME = "kafka-admin-kraft-reference"
CLIENT_SOFTWARE_VERSION = "1.0"

PENDING_CHANGE = "Request timed out waiting for leader to handle previous voter change request"
NO_HIGH_WATERMARK = "Request timed out waiting for leader to establish HWM and fence previous voter changes"

LOCAL_KRAFT_VERSIONS: tuple[int, int] = next((low, high) for name, low, high in SUPPORTED_FEATURES
                                             if name == KRAFT_VERSION)
"""The kraft.version range this replica supports."""


@dataclass
class VoterChange:
    """The one add or remove operation a leader runs at a time (Kafka's Add/RemoveVoterHandlerState).

    Pending from the moment it is accepted (an add: when ApiVersions goes to the new voter) until its
    VotersRecord is committed, its deadline passes or leadership is lost. ``request`` is None once the
    answer went out (AddRaftVoter with AckWhenCommitted = false), or for a change nobody waits for.
    """

    kind: str
    key: ReplicaKey
    deadline_ms: int
    request: InboundRequest | None
    ack_when_committed: bool = True
    endpoints: tuple[Endpoint, ...] = ()
    api_versions_request_id: int | None = None
    record_offset: int | None = None
    """Offset of the appended VotersRecord (None while an add waits for ApiVersions)."""


class PendingChange:
    """The slot of the leader's one add or remove in progress (Kafka keeps it in ``LeaderState``).

    The add and remove handlers fill it; the core ends it: answered REQUEST_TIMED_OUT past its
    deadline (``expire``), NONE once its VotersRecord is committed (``committed``), and
    NOT_LEADER_OR_FOLLOWER when leadership is lost (``finish``).
    """

    def __init__(self, context: RaftContext, node_id: int) -> None:
        self._context = context
        self._node_id = node_id
        self.change: VoterChange | None = None

    @property
    def deadline_ms(self) -> int | None:
        return self.change.deadline_ms if self.change is not None else None

    def finish(self, error: ErrorCode, message: str | None = None) -> None:
        """End the pending operation, answering its request when someone still waits for it."""
        change = self.change
        if change is None:
            return
        self.change = None
        if change.request is not None:
            self._context.reply(change.request, change_response(change.kind, error, message))

    def expire(self, now_ms: int) -> None:
        change = self.change
        if change is not None and now_ms >= change.deadline_ms:
            log.info("node %d: the %s of voter %s timed out", self._node_id, change.kind, change.key)
            self.finish(ErrorCode.REQUEST_TIMED_OUT)

    def is_pending(self, now_ms: int) -> bool:
        """Whether an operation is still in progress, once one past its deadline has been ended."""
        self.expire(now_ms)
        return self.change is not None

    def committed(self, high_watermark: int) -> None:
        """The leader's high watermark moved: the change is done once its VotersRecord is below it."""
        change = self.change
        if change is not None and change.record_offset is not None and high_watermark > change.record_offset:
            self.finish(ErrorCode.NONE)


def format_voters(voters: VoterSet) -> str:
    return "[" + ", ".join(str(voters.voters[voter_id].key) for voter_id in sorted(voters.voters)) + "]"


def format_endpoints(endpoints: tuple[Endpoint, ...]) -> str:
    """Kafka's ``Endpoints.toString``: listener names mapped to unresolved socket addresses."""
    entries = ", ".join(f"ListenerName({e.name})={e.host}/<unresolved>:{e.port}" for e in endpoints)
    return f"Endpoints(endpoints={{{entries}}})"


def format_optional(value: int | None) -> str:
    return "Optional.empty" if value is None else f"Optional[{value}]"


def uncommitted_voters(last_voters_offset: int | None, high_watermark: int) -> str:
    return (f"Request timed out waiting for voters to commit the latest voter change at "
            f"{format_optional(last_voters_offset)} with HWM {high_watermark}")


def cluster_id_mismatch(request_id: str | None, local_id: str) -> str:
    return f'The given id "{request_id}" doesn\'t match the cluster id "{local_id}"'


def invalid_voter(verb: str) -> str:
    return f"{verb} voter request didn't include a valid voter"


def missing_default_endpoint(endpoints: tuple[Endpoint, ...], listener: str) -> str:
    return (f"Add voter request didn't include the endpoint ({format_endpoints(endpoints)}) for the default "
            f"listener ListenerName({listener})")


def invalid_endpoint(verb: str, endpoints: tuple[Endpoint, ...]) -> str | None:
    """Why an endpoint of the request cannot be dialled (its host is no valid host name or IP
    address), None when every one can. Kafka does not check the hosts; a voter nobody can reach
    would only fail later, so the request is refused with INVALID_REQUEST."""
    for endpoint in endpoints:
        problem = host_problem(endpoint.host)
        if problem is not None:
            return (f"{verb} voter request has an invalid endpoint for listener "
                    f"ListenerName({printable_host(endpoint.name)}): the host {endpoint.host!r} {problem}")
    return None


def unsupported_kraft_version(action: str) -> str:
    return f"Cluster doesn't support {action} voter because the kraft.version feature is 0"


def duplicate_voter(key: ReplicaKey, voters: VoterSet) -> str:
    return f"The voter id for {key} is already part of the set of voters {format_voters(voters)}."


def voter_not_found(key: ReplicaKey, voters: VoterSet) -> str:
    return f"Cannot remove voter {key} from the set of voters {format_voters(voters)}"


def not_ready(key: ReplicaKey) -> str:
    return f"New voter {key} is not ready to receive requests"


def api_versions_error(error_name: str) -> str:
    return f"Aborted add voter operation for since API_VERSIONS returned an error {error_name}"


def kraft_version_range(key: ReplicaKey, minimum: int, maximum: int, finalized: int) -> str:
    return (f"Aborted add voter operation for {key} since the kraft.version range (min: {minimum}, max: "
            f"{maximum} doesn't support the finalized version {finalized}")


def lagging(key: ReplicaKey) -> str:
    return f"Aborted add voter operation for {key} since it is lagging behind"


@dataclass(frozen=True)
class Refusal:
    """A request answered at once with this error."""

    error: ErrorCode
    message: str | None = None


def refuse_request(context: RaftContext, cluster_id: str, request_cluster_id: str | None, voter_id: int,
                   voter_directory_id: Uuid, verb: str) -> LeaderState | Refusal:
    """Checks 1 to 3 of adding and removing a voter (``verb``: ``Add``, ``Remove``): the cluster id,
    a leader that is not resigning, a voter key; the leader's state when they pass."""
    if not context.valid_cluster_id(request_cluster_id):
        return Refusal(ErrorCode.INCONSISTENT_CLUSTER_ID, cluster_id_mismatch(request_cluster_id, cluster_id))
    state = context.leader_state()
    if state is None:
        return Refusal(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    if context.shutting_down:
        return Refusal(ErrorCode.BROKER_NOT_AVAILABLE)
    if voter_id < 0 or voter_directory_id == ZERO_UUID:
        return Refusal(ErrorCode.INVALID_REQUEST, invalid_voter(verb))
    return state


def refuse_change(pending: PendingChange, history: VoterSetHistory, state: LeaderState, now_ms: int,
                  action: str) -> Refusal | None:
    """The checks adding and removing a voter make before reading the voter set (``action``:
    ``adding``, ``removing``): one change at a time, previous leaders fenced (a high watermark in this
    epoch), a dynamic quorum, the last voter change committed."""
    if pending.is_pending(now_ms):
        return Refusal(ErrorCode.REQUEST_TIMED_OUT, PENDING_CHANGE)
    high_watermark = state.high_watermark
    if high_watermark is None:
        return Refusal(ErrorCode.REQUEST_TIMED_OUT, NO_HIGH_WATERMARK)
    if history.kraft_version() == 0:
        return Refusal(ErrorCode.UNSUPPORTED_VERSION, unsupported_kraft_version(action))
    last = history.last_voters_offset()
    if last is None or last >= high_watermark:
        return Refusal(ErrorCode.REQUEST_TIMED_OUT, uncommitted_voters(last, high_watermark))
    return None


def add_response(error: int, message: str | None = None) -> messages.AddRaftVoterResponse:
    return messages.AddRaftVoterResponse(throttle_time_ms=0, error_code=error, error_message=message)


def remove_response(error: int, message: str | None = None) -> messages.RemoveRaftVoterResponse:
    return messages.RemoveRaftVoterResponse(throttle_time_ms=0, error_code=error, error_message=message)


def change_response(kind: str, error: ErrorCode, message: str | None = None
                    ) -> messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse:
    """A pending operation's final answer; steps past the pending point always carry a message."""
    text = message if message is not None else error.message if error != ErrorCode.NONE else None
    return add_response(error, text) if kind == ADD else remove_response(error, text)
