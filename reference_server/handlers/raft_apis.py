"""The KRaft APIs, answered by the consensus core (``kafka_admin_kraft_server.raft``): Fetch, Vote,
BeginQuorumEpoch, EndQuorumEpoch, DescribeQuorum, FetchSnapshot, AddRaftVoter, RemoveRaftVoter and
UpdateRaftVoter, in every version the codec speaks (the versions and what each added are listed in
``raft.rpc``).

On a controller listener the request goes to the core, whose next poll hands back the answer. A broker
listener serves none of the replication APIs (the reference broker hosts no partitions, so it does not
serve Fetch, which Kafka's spec allows there); it forwards DescribeQuorum, AddRaftVoter and
RemoveRaftVoter to the active controller, answering NOT_LEADER_OR_FOLLOWER, which clients retry, when
none can be reached.
"""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct

from ..raft import describe
from . import registry
from .registry import Answer, Call, ControllerRole


async def on_controller(node: ControllerRole, call: Call) -> Answer:
    """Served by the consensus core."""
    body = await node.ask_core(call)
    return None if body is None else (body, call.version)


def describe_quorum_unreachable(api_version: int, node_id: int, request: Struct | None = None) -> Struct:
    return describe.not_leader_response(api_version)


def add_raft_voter_unreachable(api_version: int, node_id: int, request: Struct | None = None) -> Struct:
    return messages.AddRaftVoterResponse(throttle_time_ms=0, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                         error_message=None)


def remove_raft_voter_unreachable(api_version: int, node_id: int, request: Struct | None = None) -> Struct:
    return messages.RemoveRaftVoterResponse(throttle_time_ms=0, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                            error_message=None)


for _key in (ApiKey.FETCH, ApiKey.VOTE, ApiKey.BEGIN_QUORUM_EPOCH, ApiKey.END_QUORUM_EPOCH,
             ApiKey.FETCH_SNAPSHOT, ApiKey.UPDATE_RAFT_VOTER):
    registry.register(_key, controller=on_controller)
registry.register(ApiKey.DESCRIBE_QUORUM, controller=on_controller, forwarded=describe_quorum_unreachable)
registry.register(ApiKey.ADD_RAFT_VOTER, controller=on_controller, forwarded=add_raft_voter_unreachable)
registry.register(ApiKey.REMOVE_RAFT_VOTER, controller=on_controller, forwarded=remove_raft_voter_unreachable)
