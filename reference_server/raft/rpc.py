"""Bodies of the KRaft RPCs the core sends and answers, and the checks on the ones it receives.

Requests are built for the newest version (the driver encodes them at the negotiated one). Responses
are built for the version of the request they answer: fields that version lacks and that are not
ignorable (NodeEndpoints before Vote/BeginQuorumEpoch/EndQuorumEpoch/FetchSnapshot v1 and Fetch v16,
DescribeQuorum's directory ids and Nodes before v2) are left at their defaults so that they encode.

=====================  ====  =================================================================
API                    key   versions served / what each added
=====================  ====  =================================================================
Fetch                  1     4-18: v12 diverging epoch, current leader, snapshot id; v13 topic ids;
                             v15 ReplicaState; v16 NodeEndpoints; v17 ReplicaDirectoryId
Vote                   52    0-2: v1 voter keys and NodeEndpoints (KIP-853); v2 PreVote (KIP-996)
BeginQuorumEpoch       53    0-1: v1 voter key, leader endpoints, NodeEndpoints
EndQuorumEpoch         54    0-1: v1 preferred candidates with directory ids, endpoints
DescribeQuorum         55    0-3: v1 timestamps; v2 error messages, directory ids, Nodes;
                             v3 CommittedVoters (proposal)
FetchSnapshot          59    0-1: v1 NodeEndpoints and ReplicaDirectoryId
AddRaftVoter           80    0-1: v1 AckWhenCommitted (leader only; see changes.py)
RemoveRaftVoter        81    0
UpdateRaftVoter        82    0: CurrentLeader in every answer
=====================  ====  =================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ERRORS, ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID, ZERO_UUID
from kafka_admin_kraft.records import SnapshotId

from .api import Endpoint, ReplicaKey

METADATA_TOPIC: Final = "__cluster_metadata"
METADATA_PARTITION: Final = 0


def error_name(code: int) -> str:
    """Kafka's name of an error code, UNKNOWN_SERVER_ERROR for one it does not know (as
    ``Errors.forCode`` gives it): a peer may answer with a code newer than the table."""
    return ERRORS.get(code, ErrorCode.UNKNOWN_SERVER_ERROR).name


def optional_id(value: int) -> int | None:
    return value if value >= 0 else None


# ---------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------

def vote_request(cluster_id: str, epoch: int, local: ReplicaKey, voter: ReplicaKey, last_epoch: int,
                 end_offset: int, pre_vote: bool) -> messages.VoteRequest:
    partition = messages.VoteRequest.PartitionData(
        partition_index=METADATA_PARTITION, replica_epoch=epoch, replica_id=local.id,
        replica_directory_id=local.directory_id, voter_directory_id=voter.directory_id,
        last_offset_epoch=last_epoch, last_offset=end_offset, pre_vote=pre_vote)
    return messages.VoteRequest(cluster_id=cluster_id, voter_id=voter.id, topics=[
        messages.VoteRequest.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])])


def lowest_version(request: Struct) -> int:
    """The lowest version that carries ``request`` as the core built it.

    Two fields the core sets exist only in newer versions and are not ignorable: PreVote (Vote v2,
    KIP-996) and AckWhenCommitted false (AddRaftVoter v1, KIP-1186). Otherwise the request's oldest
    version. A driver whose peer speaks less must not send the request but answer it with
    ``error_response(..., UNSUPPORTED_VERSION)``, as Kafka's ``NetworkClient`` reports a version
    mismatch and ``KafkaNetworkChannel`` turns it into that answer.
    """
    if isinstance(request, messages.VoteRequest) and any(
            partition.pre_vote for topic in request.topics for partition in topic.partitions):
        return 2
    if isinstance(request, messages.AddRaftVoterRequest) and not request.ack_when_committed:
        return 1
    return type(request).VERSIONS[0]


def begin_quorum_epoch_request(cluster_id: str, epoch: int, leader_id: int, voter: ReplicaKey,
                               leader_endpoints: tuple[Endpoint, ...]) -> messages.BeginQuorumEpochRequest:
    partition = messages.BeginQuorumEpochRequest.PartitionData(
        partition_index=METADATA_PARTITION, voter_directory_id=voter.directory_id, leader_id=leader_id,
        leader_epoch=epoch)
    return messages.BeginQuorumEpochRequest(
        cluster_id=cluster_id, voter_id=voter.id,
        topics=[messages.BeginQuorumEpochRequest.TopicData(topic_name=METADATA_TOPIC,
                                                           partitions=[partition])],
        leader_endpoints=[messages.BeginQuorumEpochRequest.LeaderEndpoint(name=e.name, host=e.host,
                                                                          port=e.port)
                          for e in leader_endpoints])


def end_quorum_epoch_request(cluster_id: str, epoch: int, leader_id: int, candidates: list[ReplicaKey],
                             leader_endpoints: tuple[Endpoint, ...]) -> messages.EndQuorumEpochRequest:
    partition = messages.EndQuorumEpochRequest.PartitionData(
        partition_index=METADATA_PARTITION, leader_id=leader_id, leader_epoch=epoch,
        preferred_successors=[key.id for key in candidates],
        preferred_candidates=[messages.EndQuorumEpochRequest.ReplicaInfo(
            candidate_id=key.id, candidate_directory_id=key.directory_id) for key in candidates])
    return messages.EndQuorumEpochRequest(
        cluster_id=cluster_id,
        topics=[messages.EndQuorumEpochRequest.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])],
        leader_endpoints=[messages.EndQuorumEpochRequest.LeaderEndpoint(name=e.name, host=e.host, port=e.port)
                          for e in leader_endpoints])


def fetch_request(cluster_id: str, local: ReplicaKey, epoch: int, fetch_offset: int, last_fetched_epoch: int,
                  log_start_offset: int, max_wait_ms: int, max_bytes: int) -> messages.FetchRequest:
    partition = messages.FetchRequest.FetchPartition(
        partition=METADATA_PARTITION, current_leader_epoch=epoch, fetch_offset=fetch_offset,
        last_fetched_epoch=last_fetched_epoch, log_start_offset=log_start_offset,
        partition_max_bytes=max_bytes, replica_directory_id=local.directory_id)
    return messages.FetchRequest(
        cluster_id=cluster_id, replica_state=messages.FetchRequest.ReplicaState(replica_id=local.id),
        max_wait_ms=max_wait_ms, min_bytes=0, max_bytes=max_bytes,
        topics=[messages.FetchRequest.FetchTopic(topic=METADATA_TOPIC, topic_id=METADATA_TOPIC_ID,
                                                 partitions=[partition])])


def fetch_snapshot_request(cluster_id: str, local: ReplicaKey, epoch: int, snapshot_id: SnapshotId,
                           position: int, max_bytes: int) -> messages.FetchSnapshotRequest:
    partition = messages.FetchSnapshotRequest.PartitionSnapshot(
        partition=METADATA_PARTITION, current_leader_epoch=epoch,
        snapshot_id=messages.FetchSnapshotRequest.SnapshotId(end_offset=snapshot_id.end_offset,
                                                             epoch=snapshot_id.epoch),
        position=position, replica_directory_id=local.directory_id)
    return messages.FetchSnapshotRequest(
        cluster_id=cluster_id, replica_id=local.id, max_bytes=max_bytes,
        topics=[messages.FetchSnapshotRequest.TopicSnapshot(name=METADATA_TOPIC, partitions=[partition])])


# ---------------------------------------------------------------------------------------------
# Responses
# ---------------------------------------------------------------------------------------------

def error_response(api_key: int, error: int) -> Struct:
    """The answer a driver hands the core for a request that never reached the peer: the API's
    response with only its top-level ErrorCode set (Kafka's ``RaftUtil.errorResponse``)."""
    response: Callable[..., Struct] = messages.response_class(api_key)
    return response(error_code=error)


def vote_response(version: int, error: int, partition_error: int = ErrorCode.NONE, epoch: int = 0,
                  leader_id: int = -1, granted: bool = False, leader: Endpoint | None = None
                  ) -> messages.VoteResponse:
    response = messages.VoteResponse(error_code=error)
    if error != ErrorCode.NONE:
        return response
    response.topics = [messages.VoteResponse.TopicData(topic_name=METADATA_TOPIC, partitions=[
        messages.VoteResponse.PartitionData(partition_index=METADATA_PARTITION, error_code=partition_error,
                                            leader_id=leader_id, leader_epoch=epoch, vote_granted=granted)])]
    if version >= 1 and leader is not None and leader_id >= 0:
        response.node_endpoints = [messages.VoteResponse.NodeEndpoint(node_id=leader_id, host=leader.host,
                                                                      port=leader.port)]
    return response


def begin_quorum_epoch_response(version: int, error: int, partition_error: int = ErrorCode.NONE,
                                epoch: int = 0, leader_id: int = -1, leader: Endpoint | None = None
                                ) -> messages.BeginQuorumEpochResponse:
    response = messages.BeginQuorumEpochResponse(error_code=error)
    if error != ErrorCode.NONE:
        return response
    response.topics = [messages.BeginQuorumEpochResponse.TopicData(topic_name=METADATA_TOPIC, partitions=[
        messages.BeginQuorumEpochResponse.PartitionData(partition_index=METADATA_PARTITION,
                                                        error_code=partition_error, leader_id=leader_id,
                                                        leader_epoch=epoch)])]
    if version >= 1 and leader is not None and leader_id >= 0:
        response.node_endpoints = [messages.BeginQuorumEpochResponse.NodeEndpoint(
            node_id=leader_id, host=leader.host, port=leader.port)]
    return response


def end_quorum_epoch_response(version: int, error: int, partition_error: int = ErrorCode.NONE, epoch: int = 0,
                              leader_id: int = -1, leader: Endpoint | None = None
                              ) -> messages.EndQuorumEpochResponse:
    response = messages.EndQuorumEpochResponse(error_code=error)
    if error != ErrorCode.NONE:
        return response
    response.topics = [messages.EndQuorumEpochResponse.TopicData(topic_name=METADATA_TOPIC, partitions=[
        messages.EndQuorumEpochResponse.PartitionData(partition_index=METADATA_PARTITION,
                                                      error_code=partition_error, leader_id=leader_id,
                                                      leader_epoch=epoch)])]
    if version >= 1 and leader is not None and leader_id >= 0:
        response.node_endpoints = [messages.EndQuorumEpochResponse.NodeEndpoint(
            node_id=leader_id, host=leader.host, port=leader.port)]
    return response


def fetch_response(version: int, error: int = ErrorCode.NONE, *, partition_error: int = ErrorCode.NONE,
                   epoch: int = -1, leader_id: int = -1, high_watermark: int = -1, log_start_offset: int = -1,
                   records: bytes = b"", diverging: tuple[int, int] | None = None,
                   snapshot_id: SnapshotId | None = None,
                   leader: Endpoint | None = None) -> messages.FetchResponse:
    """A single-partition Fetch response; ``diverging`` is (epoch, end offset)."""
    response = messages.FetchResponse(error_code=error)
    if error != ErrorCode.NONE:
        return response
    data = messages.FetchResponse.PartitionData(
        partition_index=METADATA_PARTITION, error_code=partition_error, high_watermark=high_watermark,
        log_start_offset=log_start_offset, records=records)
    if version >= 12:
        data.current_leader = messages.FetchResponse.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=epoch)
        if diverging is not None:
            data.diverging_epoch = messages.FetchResponse.EpochEndOffset(epoch=diverging[0],
                                                                         end_offset=diverging[1])
        if snapshot_id is not None:
            data.snapshot_id = messages.FetchResponse.SnapshotId(end_offset=snapshot_id.end_offset,
                                                                 epoch=snapshot_id.epoch)
    response.responses = [messages.FetchResponse.FetchableTopicResponse(
        topic=METADATA_TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[data])]
    if version >= 16 and leader is not None and leader_id >= 0:
        response.node_endpoints = [messages.FetchResponse.NodeEndpoint(node_id=leader_id, host=leader.host,
                                                                       port=leader.port)]
    return response


def fetch_snapshot_response(version: int, error: int = ErrorCode.NONE, *,
                            partition_error: int = ErrorCode.NONE, topic: str = METADATA_TOPIC,
                            partition: int = METADATA_PARTITION, epoch: int = -1, leader_id: int = -1,
                            snapshot_id: SnapshotId | None = None, size: int = 0, position: int = 0,
                            data: bytes = b"", leader: Endpoint | None = None
                            ) -> messages.FetchSnapshotResponse:
    response = messages.FetchSnapshotResponse(error_code=error)
    if error != ErrorCode.NONE:
        return response
    snapshot = messages.FetchSnapshotResponse.SnapshotId(
        end_offset=snapshot_id.end_offset if snapshot_id is not None else -1,
        epoch=snapshot_id.epoch if snapshot_id is not None else -1)
    response.topics = [messages.FetchSnapshotResponse.TopicSnapshot(name=topic, partitions=[
        messages.FetchSnapshotResponse.PartitionSnapshot(
            index=partition, error_code=partition_error, snapshot_id=snapshot,
            current_leader=messages.FetchSnapshotResponse.LeaderIdAndEpoch(leader_id=leader_id,
                                                                           leader_epoch=epoch),
            size=size, position=position, unaligned_records=data)])]
    if version >= 1 and leader is not None and leader_id >= 0:
        response.node_endpoints = [messages.FetchSnapshotResponse.NodeEndpoint(
            node_id=leader_id, host=leader.host, port=leader.port)]
    return response


# ---------------------------------------------------------------------------------------------
# Request checks
# ---------------------------------------------------------------------------------------------

def vote_partition(request: messages.VoteRequest) -> messages.VoteRequest.PartitionData | None:
    """The partition of a Vote naming exactly ``__cluster_metadata`` partition 0, else None."""
    topics = request.topics
    if len(topics) != 1 or topics[0].topic_name != METADATA_TOPIC or len(topics[0].partitions) != 1:
        return None
    partition = topics[0].partitions[0]
    return partition if partition.partition_index == METADATA_PARTITION else None


def begin_quorum_epoch_partition(request: messages.BeginQuorumEpochRequest
                                 ) -> messages.BeginQuorumEpochRequest.PartitionData | None:
    topics = request.topics
    if len(topics) != 1 or topics[0].topic_name != METADATA_TOPIC or len(topics[0].partitions) != 1:
        return None
    partition = topics[0].partitions[0]
    return partition if partition.partition_index == METADATA_PARTITION else None


def end_quorum_epoch_partition(request: messages.EndQuorumEpochRequest
                               ) -> messages.EndQuorumEpochRequest.PartitionData | None:
    topics = request.topics
    if len(topics) != 1 or topics[0].topic_name != METADATA_TOPIC or len(topics[0].partitions) != 1:
        return None
    partition = topics[0].partitions[0]
    return partition if partition.partition_index == METADATA_PARTITION else None


def fetch_partition(request: messages.FetchRequest) -> messages.FetchRequest.FetchPartition | None:
    """The partition of a Fetch naming exactly the metadata partition (by topic id from v13, by
    name before), else None."""
    if len(request.topics) != 1 or len(request.topics[0].partitions) != 1:
        return None
    topic = request.topics[0]
    by_name = topic.topic_id == ZERO_UUID and topic.topic == METADATA_TOPIC
    if topic.topic_id != METADATA_TOPIC_ID and not by_name:
        return None
    partition = topic.partitions[0]
    return partition if partition.partition == METADATA_PARTITION else None


def node_endpoint(node_endpoints: list[messages.VoteResponse.NodeEndpoint]
                  | list[messages.BeginQuorumEpochResponse.NodeEndpoint]
                  | list[messages.EndQuorumEpochResponse.NodeEndpoint]
                  | list[messages.FetchResponse.NodeEndpoint]
                  | list[messages.FetchSnapshotResponse.NodeEndpoint],
                  node_id: int, listener: str) -> tuple[Endpoint, ...]:
    """The endpoint a response gives for ``node_id`` (on the listener the request went out on)."""
    for endpoint in node_endpoints:
        if endpoint.node_id == node_id:
            return (Endpoint(listener, endpoint.host, endpoint.port),)
    return ()
