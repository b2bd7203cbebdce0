"""describe_metadata_quorum (``client/operations/describe_metadata_quorum.py``) through the in-memory
network: what it asks of whom, and the QuorumInfo it makes of each DescribeQuorum version."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft.errors import UnknownServerErrorError
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from unit.client.fake import HOST, FakeNetwork, admin


def test_describe_quorum_goes_to_the_controller_discovered_through_describe_cluster() -> None:
    net = FakeNetwork(3, leader=2)
    with admin(net) as a:
        quorum = a.describe_metadata_quorum()
    assert [(n, api) for n, api, _, _ in net.requests] == [
        (1, "ApiVersions"),
        (1, "DescribeCluster"),
        (2, "ApiVersions"),
        (2, "DescribeQuorum"),
    ]
    node, version, body = net.sent("DescribeCluster")[0]
    assert (version, body.endpoint_type, body.include_cluster_authorized_operations) == (2, 2, False)
    assert net.sent("ApiVersions")[0][1] == 4
    assert net.sent("DescribeQuorum")[0][1] == 3
    assert (quorum.leader_id, quorum.leader_epoch, quorum.high_watermark, quorum.api_version) == (
        2,
        7,
        100,
        3,
    )
    assert [v.replica_id for v in quorum.voters] == [1, 2, 3]
    assert quorum.committed_voters is not None and [v.replica_id for v in quorum.committed_voters] == [1, 2]
    assert quorum.voters[0].replica_directory_id == net.nodes[1].directory_id
    leader_state = quorum.voters[1]
    assert leader_state.last_fetch_timestamp is None and leader_state.last_caught_up_timestamp is None
    assert quorum.voters[0].last_fetch_timestamp == 5000 and quorum.voters[0].last_caught_up_timestamp == 4000
    assert [o.replica_id for o in quorum.observers] == [101]
    assert str(quorum.nodes[3].endpoints[0]) == f"CONTROLLER://{HOST}:9093"


@pytest.mark.parametrize(("server_max", "committed"), [(2, None), (1, None), (0, None)])
def test_describe_quorum_falls_back_and_never_invents_committed_voters(
    server_max: int, committed: Any
) -> None:
    net = FakeNetwork(3, leader=1)
    for node in net.nodes.values():
        node.versions[55] = (0, server_max)
    with admin(net) as a:
        quorum = a.describe_metadata_quorum()
    assert quorum.api_version == server_max and quorum.committed_voters is committed
    if server_max < 2:
        assert quorum.nodes == {} and quorum.voters[0].replica_directory_id == ZERO_UUID
    if server_max == 0:
        assert quorum.voters[0].last_fetch_timestamp is None


def test_a_response_without_the_metadata_partition_is_an_unknown_server_error() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[55] = lambda node, version, body: messages.DescribeQuorumResponse(topics=[])
    with admin(net) as a, pytest.raises(UnknownServerErrorError, match="__cluster_metadata-0"):
        a.describe_metadata_quorum()


def test_the_plain_answer_holds_what_the_quorum_info_holds() -> None:
    """``describe_quorum_answer``, which the tools run through ``Admin.run``, asks the same nodes the
    same things, and its answer validates into the QuorumInfo the method returns."""
    from kafka_admin_kraft.client.answers import QuorumAnswer
    from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_quorum_answer
    from kafka_admin_kraft.models import QuorumInfo

    net = FakeNetwork(3, leader=2)
    with admin(net) as a:
        answer = a.run(describe_quorum_answer)
        asked = list(net.requests)
        quorum = a.describe_metadata_quorum()
    assert isinstance(answer, QuorumAnswer)
    assert [(n, api) for n, api, _, _ in asked] == [(n, api) for n, api, _, _ in net.requests[:len(asked)]]
    assert QuorumInfo.model_validate(answer, from_attributes=True) == quorum
    assert answer.voters[1].last_fetch_timestamp is None and answer.voters[0].last_fetch_timestamp == 5000
