"""RemoveRaftVoter (API 81) on the leader, after Kafka's ``RemoveVoterHandler`` (KIP-853)."""

from __future__ import annotations

import logging

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode

from . import changes
from .api import InboundRequest, RaftConfig, ReplicaKey, VoterSet
from .changes import PendingChange, VoterChange
from .context import RaftContext
from .voters import VoterSetHistory, voters_record

log = logging.getLogger(__name__)


class RemoveVoterHandler:
    """Removes a voter; the answer waits until the shrunk voter set is committed.

    ``handle`` checks, in this order (each refusal answers at once):

    1. ClusterId set and not ours -> INCONSISTENT_CLUSTER_ID.
    2. Not the leader -> NOT_LEADER_OR_FOLLOWER; a resigning leader -> BROKER_NOT_AVAILABLE.
    3. A negative voter id or no directory id -> INVALID_REQUEST.
    4. Another add or remove pending (one past its deadline is ended first) -> REQUEST_TIMED_OUT.
    5. No high watermark yet in this epoch -> REQUEST_TIMED_OUT.
    6. kraft.version 0 -> UNSUPPORTED_VERSION.
    7. The latest VotersRecord is not committed -> REQUEST_TIMED_OUT.
    8. The exact replica key is no voter, or the only one -> VOTER_NOT_FOUND.
    9. Append the VotersRecord without it; the removal is pending (deadline: the request timeout)
       and answered once that record is committed (``PendingChange.committed``). A leader that
       removed itself resigns once the record is committed (``RaftCore._poll_leader``).
    """

    def __init__(self, context: RaftContext, config: RaftConfig, cluster_id: str, history: VoterSetHistory,
                 pending: PendingChange) -> None:
        self._context = context
        self._config = config
        self._cluster_id = cluster_id
        self._history = history
        self._pending = pending

    def handle(self, request: InboundRequest, body: messages.RemoveRaftVoterRequest, now_ms: int) -> None:
        context = self._context

        def answer(error: int, message: str | None = None) -> None:
            context.reply(request, changes.remove_response(error, message))

        # 1.-3. The cluster id, a leader that is not resigning, the voter key.
        state = changes.refuse_request(context, self._cluster_id, body.cluster_id, body.voter_id,
                                       body.voter_directory_id, "Remove")
        if isinstance(state, changes.Refusal):
            answer(state.error, state.message)
            return
        key = ReplicaKey(body.voter_id, body.voter_directory_id)
        # 4.-7. One change at a time, previous leaders fenced, a dynamic quorum, the last voter
        # change committed.
        refusal = changes.refuse_change(self._pending, self._history, state, now_ms, "removing")
        if refusal is not None:
            answer(refusal.error, refusal.message)
            return
        # 8. A voter with this exact key, and not the last one.
        voters = context.voters
        info = voters.voters.get(key.id)
        if info is None or info.key != key or len(voters.voters) == 1:
            answer(ErrorCode.VOTER_NOT_FOUND, changes.voter_not_found(key, voters))
            return
        # 9. Append the voter set without it; the answer waits for its commit.
        remaining = VoterSet({voter_id: voter for voter_id, voter in voters.voters.items()
                              if voter_id != key.id})
        offset = context.append_control([voters_record(remaining)], now_ms).base_offset
        log.info("node %d removes voter %s at offset %d", state.local_key.id, key, offset)
        self._pending.change = VoterChange(changes.REMOVE, key, now_ms + self._config.request_timeout_ms,
                                           request, record_offset=offset)
