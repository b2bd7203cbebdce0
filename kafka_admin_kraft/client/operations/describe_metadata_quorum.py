"""describe_metadata_quorum: DescribeQuorum for ``__cluster_metadata``-0 on the quorum leader.

Versions: v0 ids and offsets; v1 adds fetch and caught-up times; v2 directory ids, error messages and
node endpoints; v3 (the committed-voters proposal) ``CommittedVoters``. The highest version both
sides speak is used, so a v0-v2 server gives ``committed_voters=None``. Top-level and partition
errors are raised; retriable ones (NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, ...) are retried until
the deadline, like Kafka's Admin client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_admin_kraft.client.answers import EndpointAnswer, NodeAnswer, QuorumAnswer, ReplicaAnswer
from kafka_admin_kraft.client.core import AdminCore, Op
from kafka_admin_kraft.errors import error_for_code
from kafka_admin_kraft.protocol import messages

if TYPE_CHECKING:
    from kafka_admin_kraft.models import QuorumInfo

OPERATION = "describe_metadata_quorum"
METADATA_TOPIC = "__cluster_metadata"


def _replica(state: Any) -> ReplicaAnswer:
    return ReplicaAnswer(
        replica_id=state.replica_id,
        replica_directory_id=state.replica_directory_id,
        log_end_offset=state.log_end_offset,
        last_fetch_timestamp=None if state.last_fetch_timestamp == -1 else state.last_fetch_timestamp,
        last_caught_up_timestamp=None
        if state.last_caught_up_timestamp == -1
        else state.last_caught_up_timestamp,
    )


def to_quorum_answer(response: messages.DescribeQuorumResponse, version: int, node: str) -> QuorumAnswer:
    """The quorum in a response, or the error it carries."""
    if response.error_code:
        raise error_for_code(response.error_code, response.error_message).in_context(OPERATION, node)
    topics = response.topics
    if (
        len(topics) != 1
        or topics[0].topic_name != METADATA_TOPIC
        or len(topics[0].partitions) != 1
        or topics[0].partitions[0].partition_index != 0
    ):
        raise error_for_code(
            -1, f"DescribeQuorum response does not hold exactly {METADATA_TOPIC}-0"
        ).in_context(OPERATION, node)
    partition = topics[0].partitions[0]
    if partition.error_code:
        raise error_for_code(partition.error_code, partition.error_message).in_context(OPERATION, node)
    return QuorumAnswer(
        leader_id=partition.leader_id,
        leader_epoch=partition.leader_epoch,
        high_watermark=partition.high_watermark,
        voters=tuple(_replica(v) for v in partition.current_voters),
        committed_voters=tuple(_replica(v) for v in partition.committed_voters) if version >= 3 else None,
        observers=tuple(_replica(v) for v in partition.observers),
        nodes={
            n.node_id: NodeAnswer(
                node_id=n.node_id,
                endpoints=tuple(
                    EndpointAnswer(listener=e.name, host=e.host, port=e.port) for e in n.listeners
                ),
            )
            for n in response.nodes
        },
        api_version=version,
    )


def quorum_info(answer: QuorumAnswer) -> QuorumInfo:
    """The result model of an answer. Endpoints are taken as the leader reports them: the checks of
    caller-built endpoints (``Endpoint.__init__``) are not the place to refuse a server's answer."""
    from kafka_admin_kraft.models import QuorumInfo

    return QuorumInfo.model_validate(answer, from_attributes=True)


def to_quorum_info(response: messages.DescribeQuorumResponse, version: int, node: str) -> QuorumInfo:
    """The QuorumInfo in a response, or the error it carries."""
    return quorum_info(to_quorum_answer(response, version, node))


def request() -> messages.DescribeQuorumRequest:
    q = messages.DescribeQuorumRequest
    return q(topics=[q.TopicData(topic_name=METADATA_TOPIC, partitions=[q.PartitionData(partition_index=0)])])


def describe_quorum_answer(core: AdminCore, timeout: float | None = None) -> Op[QuorumAnswer]:
    """The operation, its answer left plain (what the tools print)."""

    def attempt(deadline: float) -> Op[QuorumAnswer]:
        conn = yield from core.target(deadline)
        version = core.choose_version(conn, messages.DescribeQuorumRequest, OPERATION)
        response = yield from core.request(conn, request(), version, deadline)
        return to_quorum_answer(response, version, conn.label)

    return (yield from core.call(OPERATION, attempt, timeout))


def describe_metadata_quorum(core: AdminCore, timeout: float | None = None) -> Op[QuorumInfo]:
    return quorum_info((yield from describe_quorum_answer(core, timeout)))
