"""AddRaftVoter (API 80) on the leader, after Kafka's ``AddVoterHandler`` (KIP-853)."""

from __future__ import annotations

import logging

from kafka_admin_kraft.features import KRAFT_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct

from . import changes, rpc
from .api import Address, Endpoint, InboundRequest, RaftConfig, ReplicaKey, VoterInfo, VoterSet
from .changes import PendingChange, VoterChange
from .context import RaftContext
from .voters import VoterSetHistory, voters_record

log = logging.getLogger(__name__)


class AddVoterHandler:
    """Adds a voter in two halves: the request, then the new voter's ApiVersions answer.

    ``handle`` checks, in this order (each refusal answers at once):

    1. ClusterId set and not ours -> INCONSISTENT_CLUSTER_ID.
    2. Not the leader -> NOT_LEADER_OR_FOLLOWER; a resigning leader -> BROKER_NOT_AVAILABLE.
    3. A negative voter id or no directory id -> INVALID_REQUEST.
    4. An endpoint whose host is no valid host name or IP address -> INVALID_REQUEST (not a Kafka
       check: a voter nobody can dial would only fail later).
    5. No endpoint for the default listener -> INVALID_REQUEST.
    6. Another add or remove pending (one past its deadline is ended first) -> REQUEST_TIMED_OUT.
    7. No high watermark yet in this epoch -> REQUEST_TIMED_OUT.
    8. kraft.version 0 -> UNSUPPORTED_VERSION.
    9. The latest VotersRecord is not committed -> REQUEST_TIMED_OUT.
    10. The voter id is already a voter -> DUPLICATE_VOTER.
    11. ApiVersions cannot go to the new voter's default listener now -> REQUEST_TIMED_OUT.
    12. Send ApiVersions; the add is pending from now on (deadline: the request timeout).

    ``on_api_versions`` goes on with its answer:

    13. An error, or no answer (BROKER_NOT_AVAILABLE, as Kafka's network channel says) ->
        REQUEST_TIMED_OUT.
    14. Its kraft.version range excludes the finalized one -> INVALID_REQUEST.
    15. Not caught up as an observer with exactly this replica key -> REQUEST_TIMED_OUT.
    16. Append the VotersRecord with the new voter; it counts for the high watermark at once.
    17. AckWhenCommitted = false (v1) answers now; either way the change stays pending until the
        record is committed (``PendingChange.committed``), and only then does a waiting request get
        its answer.
    """

    def __init__(self, context: RaftContext, config: RaftConfig, cluster_id: str, history: VoterSetHistory,
                 pending: PendingChange) -> None:
        self._context = context
        self._config = config
        self._cluster_id = cluster_id
        self._history = history
        self._pending = pending

    def handle(self, request: InboundRequest, body: messages.AddRaftVoterRequest, now_ms: int) -> None:
        context = self._context

        def answer(error: int, message: str | None = None) -> None:
            context.reply(request, changes.add_response(error, message))

        # 1.-3. The cluster id, a leader that is not resigning, the voter key.
        state = changes.refuse_request(context, self._cluster_id, body.cluster_id, body.voter_id,
                                       body.voter_directory_id, "Add")
        if isinstance(state, changes.Refusal):
            answer(state.error, state.message)
            return
        key = ReplicaKey(body.voter_id, body.voter_directory_id)
        endpoints = tuple(Endpoint(item.name, item.host, item.port) for item in body.listeners)
        # 4. Hosts that can be dialled.
        invalid = changes.invalid_endpoint("Add", endpoints)
        if invalid is not None:
            answer(ErrorCode.INVALID_REQUEST, invalid)
            return
        # 5. The default listener.
        listener = context.default_listener
        default = next((endpoint for endpoint in endpoints if endpoint.name == listener), None)
        if default is None:
            answer(ErrorCode.INVALID_REQUEST, changes.missing_default_endpoint(endpoints, listener))
            return
        # 6.-9. One change at a time, previous leaders fenced, a dynamic quorum, the last voter
        # change committed.
        refusal = changes.refuse_change(self._pending, self._history, state, now_ms, "adding")
        if refusal is not None:
            answer(refusal.error, refusal.message)
            return
        # 10. A new voter id.
        voters = context.voters
        if key.id in voters.voters:
            answer(ErrorCode.DUPLICATE_VOTER, changes.duplicate_voter(key, voters))
            return
        # 11. A connection to the new voter.
        address = Address(default.host, default.port, key.id)
        if not context.is_ready(address, now_ms):
            answer(ErrorCode.REQUEST_TIMED_OUT, changes.not_ready(key))
            return
        # 12. Ask for its kraft.version range; the change is pending.
        request_id = context.send(address, ApiKey.API_VERSIONS, messages.ApiVersionsRequest(
            client_software_name=changes.CLIENT_SOFTWARE_NAME,
            client_software_version=changes.CLIENT_SOFTWARE_VERSION), now_ms)
        deadline_ms = now_ms + self._config.request_timeout_ms
        self._pending.change = VoterChange(changes.ADD, key, deadline_ms, request,
                                           request.api_version < 1 or body.ack_when_committed, endpoints,
                                           request_id)

    def on_api_versions(self, request_id: int, body: Struct | None, now_ms: int) -> None:
        """The new voter's ApiVersions answer (None: it could not be sent, or timed out)."""
        change = self._pending.change
        state = self._context.leader_state()
        if change is None or change.api_versions_request_id != request_id or state is None:
            return  # not the answer the pending add waits for
        change.api_versions_request_id = None
        # 13. An answer without error.
        if not isinstance(body, messages.ApiVersionsResponse) or body.error_code != ErrorCode.NONE:
            error = (body.error_code if isinstance(body, messages.ApiVersionsResponse)
                     else ErrorCode.BROKER_NOT_AVAILABLE)
            self._pending.finish(ErrorCode.REQUEST_TIMED_OUT,
                                 changes.api_versions_error(rpc.error_name(error)))
            return
        # 14. Support for the finalized kraft.version.
        finalized = self._history.kraft_version()
        feature = next((entry for entry in body.supported_features if entry.name == KRAFT_VERSION), None)
        low, high = (feature.min_version, feature.max_version) if feature is not None else (0, 0)
        if not low <= finalized <= high:
            self._pending.finish(ErrorCode.INVALID_REQUEST,
                                 changes.kraft_version_range(change.key, low, high, finalized))
            return
        # 15. Caught up as an observer.
        observer = state.observer_states.get(change.key)
        if (observer is None or observer.last_caught_up_ms < 0 or observer.last_fetch_ms < 0
                or now_ms - observer.last_fetch_ms >= changes.CAUGHT_UP_MAX_AGE_MS):
            self._pending.finish(ErrorCode.REQUEST_TIMED_OUT, changes.lagging(change.key))
            return
        # 16. Append the new voter set.
        voters = self._context.voters
        new_voter = VoterInfo(change.key, change.endpoints, low, high)
        batch = self._context.append_control(
            [voters_record(VoterSet({**voters.voters, change.key.id: new_voter}))], now_ms)
        change.record_offset = batch.base_offset
        log.info("node %d adds voter %s at offset %d", state.local_key.id, change.key, change.record_offset)
        # 17. Answer now unless the client waits for the commit.
        if not change.ack_when_committed and change.request is not None:
            self._context.reply(change.request, changes.add_response(ErrorCode.NONE))
            change.request = None
