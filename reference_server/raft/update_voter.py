"""UpdateRaftVoter (API 82) on the leader, after Kafka's ``UpdateVoterHandler`` (KIP-853), and the
kraft.version 0 -> 1 upgrade that the updates of a static quorum make possible."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.primitives import ZERO_UUID

from . import changes
from .api import Endpoint, InboundRequest, NodeIdentity, ReplicaKey, VoterInfo, VoterSet
from .changes import LOCAL_KRAFT_VERSIONS, PendingChange
from .context import RaftContext
from .errors import KRaftUpgradeError, NotLeaderError
from .voters import VoterSetHistory, voters_record

log = logging.getLogger(__name__)


class UpdateVoterHandler:
    """A voter tells the leader its current endpoints and kraft.version range; answered at once, with
    CurrentLeader in every answer.

    ``handle`` checks, in this order:

    1. ClusterId set and not ours -> INCONSISTENT_CLUSTER_ID.
    2. CurrentLeaderEpoch below ours -> FENCED_LEADER_EPOCH, above -> UNKNOWN_LEADER_EPOCH.
    3. Not the leader -> NOT_LEADER_OR_FOLLOWER; a resigning leader -> BROKER_NOT_AVAILABLE.
    4. A negative voter id or no directory id -> INVALID_REQUEST.
    5. An endpoint whose host is no valid host name or IP address -> INVALID_REQUEST, logged (not a
       Kafka check).
    6. No endpoint for the default listener -> INVALID_REQUEST.
    7. A kraft.version range that is negative or upside down -> INVALID_REQUEST.
    8. An add or remove pending (one past its deadline is ended first), or no high watermark yet in
       this epoch -> REQUEST_TIMED_OUT.
    9. kraft.version 0 on a leader that takes no update there (Kafka 3.9 and 4.0, before
       KAFKA-16538: ``RaftConfig.update_voter_at_kraft_version_0`` off) -> UNSUPPORTED_VERSION.
    10. kraft.version 1: the latest VotersRecord is not committed -> REQUEST_TIMED_OUT.
    11. The finalized kraft.version is outside the voter's range -> INVALID_REQUEST.
    12. Not a voter (kraft.version 1: by id and directory id; 0: by id) -> VOTER_NOT_FOUND.
    13. kraft.version 1: append the VotersRecord with the updated voter; 0: keep the update in memory
        (``reported``, Kafka's in-memory voter set) for ``KRaftVersionUpgrade``. Answer NONE.
    """

    def __init__(self, context: RaftContext, history: VoterSetHistory, pending: PendingChange, *,
                 at_kraft_version_0: bool = True) -> None:
        self._context = context
        self._history = history
        self._pending = pending
        self._at_kraft_version_0 = at_kraft_version_0
        self.reported: dict[int, VoterInfo] = {}
        """kraft.version 0: what voters told this leader, by voter id."""

    def forget_reports(self) -> None:
        """A new leader starts over: only the voters that follow it report to it."""
        self.reported.clear()

    def handle(self, request: InboundRequest, body: messages.UpdateRaftVoterRequest,
               now_ms: int) -> messages.UpdateRaftVoterResponse:
        context = self._context

        def answer(error: int) -> messages.UpdateRaftVoterResponse:
            leader = context.leader_endpoint_for(request.listener)
            return messages.UpdateRaftVoterResponse(
                throttle_time_ms=0, error_code=error,
                current_leader=messages.UpdateRaftVoterResponse.CurrentLeader(
                    leader_id=context.leader_id, leader_epoch=context.epoch,
                    host=leader.host if leader is not None else "",
                    port=leader.port if leader is not None else 0))

        # 1. The cluster id.
        if not context.valid_cluster_id(body.cluster_id):
            return answer(ErrorCode.INCONSISTENT_CLUSTER_ID)
        # 2. The epoch.
        if body.current_leader_epoch < context.epoch:
            return answer(ErrorCode.FENCED_LEADER_EPOCH)
        if body.current_leader_epoch > context.epoch:
            return answer(ErrorCode.UNKNOWN_LEADER_EPOCH)
        # 3. Only a leader that is not resigning.
        state = context.leader_state()
        if state is None:
            return answer(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if context.shutting_down:
            return answer(ErrorCode.BROKER_NOT_AVAILABLE)
        # 4. The voter key.
        if body.voter_id < 0 or body.voter_directory_id == ZERO_UUID:
            return answer(ErrorCode.INVALID_REQUEST)
        # 5. Hosts that can be dialled.
        endpoints = tuple(Endpoint(item.name, item.host, item.port) for item in body.listeners)
        invalid = changes.invalid_endpoint("Update", endpoints)
        if invalid is not None:
            log.warning("node %d: %s", state.local_key.id, invalid)
            return answer(ErrorCode.INVALID_REQUEST)
        # 6. The default listener.
        if not any(endpoint.name == context.default_listener for endpoint in endpoints):
            return answer(ErrorCode.INVALID_REQUEST)
        # 7. A sound kraft.version range.
        feature = body.k_raft_version_feature
        low, high = feature.min_supported_version, feature.max_supported_version
        if low < 0 or high < 0 or high < low:
            return answer(ErrorCode.INVALID_REQUEST)
        # 8. No change in progress, previous leaders fenced.
        if self._pending.is_pending(now_ms) or state.high_watermark is None:
            return answer(ErrorCode.REQUEST_TIMED_OUT)
        # 9. A leader that takes no update at kraft.version 0.
        kraft_version = self._history.kraft_version()
        if kraft_version == 0 and not self._at_kraft_version_0:
            return answer(ErrorCode.UNSUPPORTED_VERSION)
        # 10. The last voter change committed.
        last = self._history.last_voters_offset()
        if kraft_version >= 1 and (last is None or last >= state.high_watermark):
            return answer(ErrorCode.REQUEST_TIMED_OUT)
        # 11. The voter supports the finalized kraft.version.
        if not low <= kraft_version <= high:
            return answer(ErrorCode.INVALID_REQUEST)
        # 12. A voter.
        key = ReplicaKey(body.voter_id, body.voter_directory_id)
        voters = context.voters
        info = voters.voters.get(key.id)
        if info is None or (kraft_version >= 1 and info.key != key):
            return answer(ErrorCode.VOTER_NOT_FOUND)
        # 13. Record the update.
        updated = VoterInfo(key if kraft_version == 0 else info.key, endpoints, low, high)
        if kraft_version >= 1:
            context.append_control([voters_record(VoterSet({**voters.voters, key.id: updated}))], now_ms)
        else:
            self.reported[key.id] = updated
        return answer(ErrorCode.NONE)


class KRaftVersionUpgrade:
    """kraft.version 0 -> 1 on the leader (``api.RaftDriverFacing.upgrade_kraft_version``).

    1. Not the leader (or resigning) -> NotLeaderError; kraft.version already 1 -> -1.
    2. Every voter must support kraft.version 1: the leader by its own range, the others by the
       range they sent in UpdateRaftVoter to this leader; otherwise KRaftUpgradeError names them.
    3. One control batch: KRaftVersionRecord(1) and a VotersRecord of the voters with the directory
       ids, endpoints and ranges they reported (ZERO and the static endpoint otherwise); both apply
       at once. Returns its last offset.
    """

    def __init__(self, context: RaftContext, identity: NodeIdentity, history: VoterSetHistory,
                 reported: Mapping[int, VoterInfo]) -> None:
        self._context = context
        self._identity = identity
        self._history = history
        self._reported = reported

    def upgrade(self, now_ms: int) -> int:
        context = self._context
        identity = self._identity
        # 1. Only a leader that is not resigning, and only from 0.
        if context.leader_state() is None or context.shutting_down:
            raise NotLeaderError(f"node {identity.node_id} is not the leader (epoch {context.epoch}, "
                                 f"{context.role})")
        if self._history.kraft_version() >= 1:
            return -1
        # 2. Every voter supports kraft.version 1.
        local_key = ReplicaKey(identity.node_id, identity.directory_id)
        current = context.voters
        voters: dict[int, VoterInfo] = {}
        unsupported: list[int] = []
        for voter_id in sorted(current.voters):
            info = current.voters[voter_id]
            if voter_id == local_key.id:
                low, high = LOCAL_KRAFT_VERSIONS
                voters[voter_id] = VoterInfo(local_key, identity.listeners or info.endpoints, low, high)
            else:
                reported = self._reported.get(voter_id)
                voters[voter_id] = reported if reported is not None else VoterInfo(
                    ReplicaKey(voter_id, info.key.directory_id), info.endpoints, info.min_kraft_version,
                    info.max_kraft_version)
            if not voters[voter_id].min_kraft_version <= 1 <= voters[voter_id].max_kraft_version:
                unsupported.append(voter_id)
        if unsupported:
            raise KRaftUpgradeError(
                f"Cannot upgrade kraft.version to 1: voters {unsupported} have not reported support for "
                f"kraft.version 1 (they send UpdateRaftVoter to the leader once they follow it)")
        # 3. Append both records in one batch.
        batch = context.append_control([messages.KRaftVersionRecord(version=0, k_raft_version=1),
                                        voters_record(VoterSet(voters))], now_ms)
        log.info("node %d upgrades kraft.version to 1 at offset %d", local_key.id, batch.base_offset)
        return batch.last_offset
