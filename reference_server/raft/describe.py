"""DescribeQuorum (API 55) answers, exactly as Kafka's ``KafkaRaftClient.handleDescribeQuorumRequest``
gives them.

Versions: v0 voters and observers with log end offsets; v1 adds LastFetchTimestamp and
LastCaughtUpTimestamp; v2 adds both ErrorMessages, ReplicaDirectoryId and Nodes; v3 (the
committed-voters proposal, seed 004) adds CommittedVoters. Fields a version lacks are left at their
defaults so that the response encodes at the request's version.
"""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.primitives import ZERO_UUID

from .api import VoterSet
from .leader import LeaderState, ReplicaProgress, same_replica
from .rpc import METADATA_PARTITION, METADATA_TOPIC

DQ = messages.DescribeQuorumResponse


def is_metadata_partition_request(request: messages.DescribeQuorumRequest) -> bool:
    """Step 1: exactly one topic ``__cluster_metadata`` with exactly one partition 0."""
    topics = request.topics
    return (len(topics) == 1 and topics[0].topic_name == METADATA_TOPIC and len(topics[0].partitions) == 1
            and topics[0].partitions[0].partition_index == METADATA_PARTITION)


def unknown_partition_response(request: messages.DescribeQuorumRequest, version: int) -> DQ:
    """Step 1 failed: every requested partition gets UNKNOWN_TOPIC_OR_PARTITION (with the default
    text as ErrorMessage, which goes on the wire from v2)."""
    message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.message
    return DQ(error_code=ErrorCode.NONE, topics=[
        DQ.TopicData(topic_name=topic.topic_name, partitions=[
            DQ.PartitionData(partition_index=partition.partition_index,
                             error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, error_message=message)
            for partition in topic.partitions])
        for topic in request.topics])


def not_leader_response(version: int) -> DQ:
    """Step 2: the receiver is not the leader (ErrorMessage only goes on the wire from v2)."""
    return DQ(error_code=ErrorCode.NONE, topics=[DQ.TopicData(topic_name=METADATA_TOPIC, partitions=[
        DQ.PartitionData(partition_index=METADATA_PARTITION, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                         error_message=ErrorCode.NOT_LEADER_OR_FOLLOWER.message)])])


def _replica_state(progress: ReplicaProgress, version: int, now_ms: int, is_leader: bool) -> DQ.ReplicaState:
    end = progress.end_offset
    return DQ.ReplicaState(
        replica_id=progress.key.id,
        replica_directory_id=progress.key.directory_id if version >= 2 else ZERO_UUID,
        log_end_offset=end if end is not None else -1,
        last_fetch_timestamp=now_ms if is_leader else progress.last_fetch_ms,
        last_caught_up_timestamp=now_ms if is_leader else progress.last_caught_up_ms)


def leader_response(state: LeaderState, version: int, now_ms: int, observer_session_timeout_ms: int,
                    committed_voters: VoterSet | None) -> DQ:
    """Step 3: the leader's view.

    1. CurrentVoters: one entry per voter of the current (possibly uncommitted) voter set, by id; the
       leader's own entry has its log end offset and ``now`` as both timestamps.
    2. Observers: replicas that fetched during this leadership and not idle for the session timeout.
    3. CommittedVoters (v3): the voter set of the last committed VotersRecord (``committed_voters``,
       None while the high watermark is unknown, giving an empty list), each entry copied from the
       current voters or observers, or -1s for a voter seen in neither.
    4. Nodes (v2+): each voter's listeners.
    """
    local_id = state.local_key.id
    current = [_replica_state(state.voter_states[voter_id], version, now_ms, voter_id == local_id)
               for voter_id in sorted(state.voter_states)]
    observer_progress = state.observers(now_ms, observer_session_timeout_ms)
    observers = [_replica_state(progress, version, now_ms, False) for progress in observer_progress]
    committed: list[DQ.ReplicaState] = []
    if version >= 3 and committed_voters is not None:
        for voter_id in sorted(committed_voters.voters):
            key = committed_voters.voters[voter_id].key
            entry = None
            for progress, built in [*zip([state.voter_states[i] for i in sorted(state.voter_states)], current,
                                         strict=True),
                                    *zip(observer_progress, observers, strict=True)]:
                if same_replica(progress.key, key):
                    entry = built
                    break
            if entry is None:
                entry = DQ.ReplicaState(replica_id=key.id, replica_directory_id=key.directory_id,
                                        log_end_offset=-1, last_fetch_timestamp=-1,
                                        last_caught_up_timestamp=-1)
            committed.append(entry)
    partition = DQ.PartitionData(
        partition_index=METADATA_PARTITION, error_code=ErrorCode.NONE, leader_id=local_id,
        leader_epoch=state.epoch,
        high_watermark=state.high_watermark if state.high_watermark is not None else -1,
        current_voters=current, committed_voters=committed, observers=observers)
    nodes: list[DQ.Node] = []
    if version >= 2:
        for voter_id in sorted(state.voters.voters):
            info = state.voters.voters[voter_id]
            nodes.append(DQ.Node(node_id=voter_id, listeners=[
                DQ.Listener(name=endpoint.name, host=endpoint.host, port=endpoint.port)
                for endpoint in info.endpoints]))
    return DQ(error_code=ErrorCode.NONE,
              topics=[DQ.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])], nodes=nodes)
