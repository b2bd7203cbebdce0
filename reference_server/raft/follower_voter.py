"""What a follower asks its leader about itself (KIP-853): UpdateRaftVoter when its voter-set entry
is out of date, AddRaftVoter / RemoveRaftVoter when it joins the voters on its own (auto-join)."""

from __future__ import annotations

import logging

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct

from . import rpc
from .api import Address, Endpoint, NodeIdentity, RaftConfig, ReplicaKey
from .changes import LOCAL_KRAFT_VERSIONS
from .context import RaftContext
from .state import FollowerState
from .voters import VoterSetHistory

log = logging.getLogger(__name__)

UPDATE_IS_OVER = (ErrorCode.NONE, ErrorCode.VOTER_NOT_FOUND, ErrorCode.INVALID_REQUEST,
                  ErrorCode.UNSUPPORTED_VERSION, ErrorCode.INCONSISTENT_CLUSTER_ID)
"""UpdateRaftVoter answers that end the update for this leader: success, or what retrying cannot fix."""
AUTO_JOIN_ANSWERED = (ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.DUPLICATE_VOTER,
                      ErrorCode.VOTER_NOT_FOUND)
"""Auto-join answers that count as a successful round trip (no connection backoff)."""


class FollowerVoterRequests:
    """The follower's voter requests, sent instead of a Fetch (one request in flight to the leader).

    ``maybe_send``:

    1. Nothing before a fetch from this leader has succeeded.
    2. A voter whose voter-set entry differs from what it is (endpoints, kraft.version range) sends
       UpdateRaftVoter, once per leader; a request timeout later again after a retriable error
       (such as the leader's missing high watermark). Fetches go on in between. At kraft.version 0
       only with ``RaftConfig.update_voter_at_kraft_version_0`` (Kafka 4.1 on, KAFKA-16538).
    3. An observer controller with auto-join on a kraft.version 1 quorum removes a voter entry with
       its id and another directory id (RemoveRaftVoter), else adds itself (AddRaftVoter with
       AckWhenCommitted = false); the next attempt waits a fetch timeout.

    The answers:

    4. UpdateRaftVoter: news about the leader is handled in common; NONE, or an error retrying
       cannot fix, ends the update for this leader (logged); REQUEST_TIMED_OUT and the rest retry
       after a backoff.
    5. AddRaftVoter / RemoveRaftVoter: whatever the answer, the next attempt waits for the timer of
       step 3 (errors are logged).
    """

    def __init__(self, context: RaftContext, identity: NodeIdentity, config: RaftConfig,
                 history: VoterSetHistory) -> None:
        self._context = context
        self._identity = identity
        self._config = config
        self._history = history
        self._local_key = ReplicaKey(identity.node_id, identity.directory_id)

    def _needs_update(self) -> bool:
        """This voter's endpoints or kraft.version range differ from its voter-set entry (at
        kraft.version 0 only from Kafka 4.1 on, which reports for the kraft.version upgrade)."""
        if not self._context.is_voter:
            return False
        if not self._config.update_voter_at_kraft_version_0 and self._history.kraft_version() == 0:
            return False
        info = self._context.voters.voters[self._local_key.id]
        return (info.endpoints != self._identity.listeners
                or (info.min_kraft_version, info.max_kraft_version) != LOCAL_KRAFT_VERSIONS)

    def _wants_auto_join(self) -> bool:
        return (self._config.auto_join_enable and self._identity.is_controller and not self._context.is_voter
                and self._history.kraft_version() >= 1 and not self._context.shutting_down)

    def next_attempt_ms(self, state: FollowerState, now_ms: int) -> int | None:
        """When ``maybe_send`` wants to be polled again, None when it waits for nothing."""
        if state.next_voter_request_ms > now_ms and (self._wants_auto_join() or (
                not state.has_updated_leader and self._needs_update())):
            return state.next_voter_request_ms
        return None

    def maybe_send(self, state: FollowerState, leader: Address, now_ms: int) -> bool:
        """Send a voter request to the leader now, instead of a Fetch; True if one went."""
        # 1. Only once the leader answered a fetch.
        if not state.has_fetched:
            return False
        identity = self._identity
        # 2. A voter updates its entry.
        if self._context.is_voter:
            if state.has_updated_leader or now_ms < state.next_voter_request_ms or not self._needs_update():
                return False
            state.next_voter_request_ms = now_ms + self._config.request_timeout_ms
            low, high = LOCAL_KRAFT_VERSIONS
            self._context.send(leader, ApiKey.UPDATE_RAFT_VOTER, messages.UpdateRaftVoterRequest(
                cluster_id=identity.cluster_id, current_leader_epoch=state.epoch,
                voter_id=self._local_key.id, voter_directory_id=self._local_key.directory_id,
                listeners=[messages.UpdateRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                           for e in identity.listeners],
                k_raft_version_feature=messages.UpdateRaftVoterRequest.KRaftVersionFeature(
                    min_supported_version=low, max_supported_version=high)), now_ms)
            return True
        # 3. An observer joins on its own.
        if not self._wants_auto_join() or now_ms < state.next_voter_request_ms:
            return False
        state.next_voter_request_ms = now_ms + self._config.fetch_timeout_ms
        stale = self._context.voters.voters.get(self._local_key.id)
        body: Struct
        if stale is not None and stale.key.directory_id != self._local_key.directory_id:
            body = messages.RemoveRaftVoterRequest(cluster_id=identity.cluster_id, voter_id=stale.key.id,
                                                   voter_directory_id=stale.key.directory_id)
            self._context.send(leader, ApiKey.REMOVE_RAFT_VOTER, body, now_ms)
        else:
            body = messages.AddRaftVoterRequest(
                cluster_id=identity.cluster_id, timeout_ms=self._config.request_timeout_ms,
                voter_id=self._local_key.id, voter_directory_id=self._local_key.directory_id,
                listeners=[messages.AddRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                           for e in identity.listeners],
                ack_when_committed=False)
            self._context.send(leader, ApiKey.ADD_RAFT_VOTER, body, now_ms)
        return True

    def on_update_response(self, sent_in_epoch: int, body: messages.UpdateRaftVoterResponse,
                           now_ms: int) -> bool:
        """Whether the answer counts as a success for the connection."""
        # 4. News about the leader first, then whether the update is over.
        current = body.current_leader
        leader_id = rpc.optional_id(current.leader_id)
        endpoints = ((Endpoint(self._context.default_listener, current.host, current.port),)
                     if current.host else ())
        handled = self._context.handle_common_response(body.error_code, leader_id, current.leader_epoch,
                                                       endpoints, now_ms)
        if handled is not None and body.error_code != ErrorCode.NONE:
            return handled
        if body.error_code not in UPDATE_IS_OVER:
            return False
        state = self._context.follower_state()
        if state is not None and state.epoch == sent_in_epoch:
            state.has_updated_leader = True
        if body.error_code != ErrorCode.NONE:
            log.warning("node %d: UpdateRaftVoter answered %s", self._local_key.id,
                        rpc.error_name(body.error_code))
        return True

    def on_auto_join_response(self, api_key: int,
                              body: messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse) -> bool:
        """Whether the answer counts as a success for the connection."""
        # 5. The timer of step 3 paces the next attempt whatever the answer.
        if body.error_code != ErrorCode.NONE:
            log.info("node %d: auto-join %s answered %s: %s", self._local_key.id,
                     "AddRaftVoter" if api_key == ApiKey.ADD_RAFT_VOTER else "RemoveRaftVoter",
                     rpc.error_name(body.error_code), body.error_message)
        return body.error_code in AUTO_JOIN_ANSWERED
