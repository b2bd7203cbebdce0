"""FetchSnapshot (API 59): the leader serves chunks of its latest snapshot; a follower whose fetch
position lies below the leader's log start copies it chunk by chunk and installs it (KIP-630)."""

from __future__ import annotations

import logging

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.records import SnapshotId
from kafka_admin_kraft.records.snapshot import BOOTSTRAP_SNAPSHOT_ID

from . import rpc
from .api import Address, InboundRequest, NodeIdentity, RaftConfig, ReplicaKey, ReplicatedLog
from .context import RaftContext
from .errors import RaftInvariantError
from .image_work import ImageWork
from .state import FollowerState

log = logging.getLogger(__name__)


class FetchSnapshotHandler:
    """Both sides of FetchSnapshot.

    ``handle`` (leader side) checks, in this order:

    1. ClusterId set and not ours -> INCONSISTENT_CLUSTER_ID; not one topic with one partition ->
       INVALID_REQUEST (top level); another partition -> UNKNOWN_TOPIC_OR_PARTITION.
    2. Epoch below ours -> FENCED_LEADER_EPOCH, above -> UNKNOWN_LEADER_EPOCH; not the leader ->
       NOT_LEADER_OR_FOLLOWER; a resigning leader -> BROKER_NOT_AVAILABLE (as for Fetch).
    3. An unknown snapshot, or the bootstrap snapshot -> SNAPSHOT_NOT_FOUND.
    4. A position outside [0, size) -> POSITION_OUT_OF_RANGE.
    5. Answer up to MaxBytes from the position; the fetch counts for check-quorum.

    ``on_response`` (follower side, one request in flight, sent by ``send``):

    6. A top-level error or no metadata partition -> back off; news about the leader in common.
    7. SNAPSHOT_NOT_FOUND (the leader dropped it) -> forget the copy and fetch again.
    8. A chunk for another snapshot or position -> start over.
    9. Append the chunk to the ``receive_snapshot`` writer (a ``.part`` file: nothing of the
       snapshot is held in memory).
    10. Once the copy has ``Size`` bytes, ``freeze`` installs it and replaces the log (image work in
        progress is dropped first: its reads point into what is replaced); the voter-set history is
        reloaded, the image is reloaded from the snapshot over the next polls and the high
        watermark moves to its end.
    11. The fetch succeeded: the fetch timeout restarts.
    """

    def __init__(self, context: RaftContext, identity: NodeIdentity, config: RaftConfig, log: ReplicatedLog,
                 image_work: ImageWork) -> None:
        self._context = context
        self._identity = identity
        self._config = config
        self._log = log
        self._image_work = image_work
        self._local_key = ReplicaKey(identity.node_id, identity.directory_id)

    def handle(self, request: InboundRequest, body: messages.FetchSnapshotRequest,
               now_ms: int) -> messages.FetchSnapshotResponse:
        context = self._context
        version = request.api_version
        # 1. The cluster id and the partition.
        if not context.valid_cluster_id(body.cluster_id):
            return rpc.fetch_snapshot_response(version, ErrorCode.INCONSISTENT_CLUSTER_ID)
        if len(body.topics) != 1 or len(body.topics[0].partitions) != 1:
            return rpc.fetch_snapshot_response(version, ErrorCode.INVALID_REQUEST)
        topic = body.topics[0]
        partition = topic.partitions[0]
        leader = context.leader_endpoint_for(request.listener)
        if topic.name != rpc.METADATA_TOPIC or partition.partition != rpc.METADATA_PARTITION:
            return rpc.fetch_snapshot_response(version, partition_error=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                               topic=topic.name, partition=partition.partition,
                                               leader_id=context.leader_id, leader=leader)
        # 2. The leader of the epoch asked.
        state = context.leader_state()
        epoch = context.epoch
        error = ErrorCode.NONE
        if partition.current_leader_epoch < epoch:
            error = ErrorCode.FENCED_LEADER_EPOCH
        elif partition.current_leader_epoch > epoch:
            error = ErrorCode.UNKNOWN_LEADER_EPOCH
        elif state is None:
            error = ErrorCode.NOT_LEADER_OR_FOLLOWER
        elif context.shutting_down:
            error = ErrorCode.BROKER_NOT_AVAILABLE
        if error != ErrorCode.NONE or state is None:
            return rpc.fetch_snapshot_response(version, partition_error=error, epoch=epoch,
                                               leader_id=context.leader_id, leader=leader)
        # 3. A snapshot a follower may copy.
        snapshot_id = SnapshotId(partition.snapshot_id.end_offset, partition.snapshot_id.epoch)
        size = self._snapshot_size(snapshot_id)
        if size is None or snapshot_id == BOOTSTRAP_SNAPSHOT_ID:
            return rpc.fetch_snapshot_response(version, partition_error=ErrorCode.SNAPSHOT_NOT_FOUND,
                                               epoch=state.epoch, leader_id=context.leader_id, leader=leader)
        # 4. A position inside it.
        if partition.position < 0 or partition.position >= size:
            return rpc.fetch_snapshot_response(version, partition_error=ErrorCode.POSITION_OUT_OF_RANGE,
                                               epoch=state.epoch, leader_id=context.leader_id, leader=leader)
        # 5. The chunk.
        max_bytes = min(max(body.max_bytes, 1), self._config.max_fetch_bytes)
        data = self._log.read_snapshot(snapshot_id, partition.position, max_bytes)
        state.record_fetching_voter(body.replica_id, now_ms)
        return rpc.fetch_snapshot_response(version, partition_error=ErrorCode.NONE, epoch=state.epoch,
                                           leader_id=self._local_key.id, snapshot_id=snapshot_id, size=size,
                                           position=partition.position, data=data, leader=leader)

    def _snapshot_size(self, snapshot_id: SnapshotId) -> int | None:
        latest = self._log.latest_snapshot()
        if latest is None or snapshot_id.end_offset > latest.end_offset or snapshot_id.end_offset < 0:
            return None
        try:
            return self._log.snapshot_size(snapshot_id)
        except (LookupError, OSError, ValueError):
            return None

    def send(self, state: FollowerState, leader: Address, now_ms: int) -> None:
        """Ask the leader for the next chunk of the snapshot being copied."""
        fetching = state.fetching_snapshot
        assert fetching is not None
        body = rpc.fetch_snapshot_request(self._identity.cluster_id, self._local_key, state.epoch,
                                          SnapshotId(fetching.end_offset, fetching.epoch), fetching.position,
                                          self._config.max_fetch_bytes)
        self._context.send(leader, ApiKey.FETCH_SNAPSHOT, body, now_ms)

    def on_response(self, body: messages.FetchSnapshotResponse, now_ms: int) -> bool:
        """A FetchSnapshot answer; whether it counts as a success for the connection."""
        context = self._context
        # 6. Errors and news about the leader.
        if body.error_code != ErrorCode.NONE or len(body.topics) != 1 or len(body.topics[0].partitions) != 1:
            return False
        topic = body.topics[0]
        partition = topic.partitions[0]
        if topic.name != rpc.METADATA_TOPIC or partition.index != rpc.METADATA_PARTITION:
            return False
        leader_id = rpc.optional_id(partition.current_leader.leader_id)
        endpoints = (rpc.node_endpoint(body.node_endpoints, leader_id, context.default_listener)
                     if leader_id is not None else ())
        handled = context.handle_common_response(partition.error_code, leader_id,
                                                 partition.current_leader.leader_epoch, endpoints, now_ms)
        if handled is not None:
            return handled
        state = context.follower_state()
        if state is None or state.fetching_snapshot is None:
            return True
        fetching = state.fetching_snapshot
        # 7. The leader no longer has it.
        if (partition.error_code == ErrorCode.SNAPSHOT_NOT_FOUND or partition.snapshot_id.end_offset < 0
                or partition.snapshot_id.epoch < 0):
            fetching.abort()
            state.fetching_snapshot = None
            state.fetch_deadline_ms = now_ms + self._config.fetch_timeout_ms
            return True
        if partition.error_code != ErrorCode.NONE:
            return False
        # 8. The chunk that comes next.
        received = (partition.snapshot_id.end_offset, partition.snapshot_id.epoch)
        chunk = partition.unaligned_records or b""
        if (received != (fetching.end_offset, fetching.epoch) or partition.position != fetching.position
                or fetching.position + len(chunk) > partition.size):
            fetching.abort()
            state.fetching_snapshot = None
            return False
        # 9. Append it.
        snapshot_id = SnapshotId(fetching.end_offset, fetching.epoch)
        try:
            if fetching.writer is None:
                fetching.writer = self._log.receive_snapshot(snapshot_id)
            fetching.writer.append(chunk)
        except (DecodeError, ValueError) as exc:
            log.warning("node %d cannot copy snapshot %s: %s", self._local_key.id, snapshot_id, exc)
            fetching.abort()
            state.fetching_snapshot = None
            return False
        fetching.position += len(chunk)
        # 10. Install the complete copy.
        if fetching.position == partition.size:
            state.fetching_snapshot = None
            writer = fetching.writer
            if snapshot_id.end_offset < context.high_watermark:
                writer.abort()
                raise RaftInvariantError(f"node {self._local_key.id}: snapshot {snapshot_id} is below the "
                                         f"high watermark {context.high_watermark}")
            self._image_work.abort()  # its reads may point into the log and snapshots being replaced
            try:
                writer.freeze()
            except (DecodeError, ValueError) as exc:
                writer.abort()
                log.warning("node %d cannot install snapshot %s: %s", self._local_key.id, snapshot_id, exc)
                return False
            self._image_work.reload()
            context.snapshot_installed(snapshot_id)
            log.info("node %d installed snapshot %s", self._local_key.id, snapshot_id)
        # 11. The fetch timeout restarts.
        state.has_fetched = True
        state.fetch_deadline_ms = now_ms + self._config.fetch_timeout_ms
        return True
