"""Voter changes (KIP-853) on the leader: the pending operation and the exact answers of
AddRaftVoter (API 80), RemoveRaftVoter (API 81) and UpdateRaftVoter (API 82), after Kafka's AddVoterHandler,
RemoveVoterHandler and UpdateVoterHandler.

The order of the checks lives in ``RaftCore`` (it needs the leader's state); this module holds what
the answers say, so that the texts match Kafka's byte for byte:

- ``<key>`` is ``ReplicaKey(id=<id>, directoryId=<uuid or <undefined>>)``;
- ``<voters>`` is a Java set of such keys (by ascending id here);
- endpoints print as Kafka's ``Endpoints`` record of unresolved ``InetSocketAddress`` values.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_admin_kraft.hosts import host_problem, printable_host
from kafka_admin_kraft.protocol import messages

from .api import Endpoint, InboundRequest, ReplicaKey, VoterSet
from .rpc import error_message

ADD = "add"
REMOVE = "remove"

CAUGHT_UP_MAX_AGE_MS = 3_600_000
"""A new voter's last fetch must be within the last hour (Kafka's AddVoterHandler)."""

CLIENT_SOFTWARE_NAME = "kafka-admin-kraft-reference"
CLIENT_SOFTWARE_VERSION = "1.0"

PENDING_CHANGE = "Request timed out waiting for leader to handle previous voter change request"
NO_HIGH_WATERMARK = "Request timed out waiting for leader to establish HWM and fence previous voter changes"


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


def add_response(error: int, message: str | None = None) -> messages.AddRaftVoterResponse:
    return messages.AddRaftVoterResponse(throttle_time_ms=0, error_code=error, error_message=message)


def remove_response(error: int, message: str | None = None) -> messages.RemoveRaftVoterResponse:
    return messages.RemoveRaftVoterResponse(throttle_time_ms=0, error_code=error, error_message=message)


def change_response(kind: str, error: int, message: str | None = None
                    ) -> messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse:
    """A pending operation's final answer; steps past the pending point always carry a message."""
    text = message if message is not None else error_message(error) if error else None
    return add_response(error, text) if kind == ADD else remove_response(error, text)
