"""Every admin operation through the in-memory network: routing, versions, retries, errors, timeouts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin, Endpoint, FeatureUpdate, UpgradeType
from kafka_admin_kraft.errors import (
    BootstrapError,
    ClusterAuthorizationFailedError,
    DuplicateVoterError,
    InvalidUpdateVersionError,
    KafkaTimeoutError,
    NotControllerError,
    NotLeaderOrFollowerError,
    RequestTimedOutError,
    UnknownServerErrorError,
    UnsupportedOperationError,
    UnsupportedVersionError,
)
from kafka_admin_kraft.models import ZERO_UUID_TEXT
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from unit.client.fake import DROP, HANG, HOST, AsyncFakeNetwork, FakeNetwork, FakeNode
from unit.client.fake import api_versions as fake_api_versions

FAST = {
    "retry_backoff_ms": 100,
    "retry_backoff_max_ms": 1000,
    "request_timeout_ms": 5000,
    "default_api_timeout_ms": 20000,
}


def admin(net: FakeNetwork, *, brokers: bool = False, **options: Any) -> Admin:
    opts = {**FAST, **options}
    if brokers:
        return Admin(bootstrap_servers=net.brokers(), transport=net, **opts)
    return Admin(bootstrap_controllers=net.controllers(), transport=net, **opts)


# ------------------------------------------------------------------ describe_metadata_quorum


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
    assert quorum.voters[0].replica_directory_id == str(net.nodes[1].directory_id)
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
        assert quorum.nodes == {} and quorum.voters[0].replica_directory_id == ZERO_UUID_TEXT
    if server_max == 0:
        assert quorum.voters[0].last_fetch_timestamp is None


def test_not_leader_makes_the_client_rediscover_and_retry_with_backoff() -> None:
    net = FakeNetwork(3, leader=1)
    calls = []

    def moved(node: FakeNode, version: int, body: Any) -> Any:
        calls.append(node.node_id)
        net.leader = 3  # leadership moved: node 1 now answers NOT_LEADER_OR_FOLLOWER
        node.handlers.pop(55)
        return node.answer(55, version, body)

    net.nodes[1].handlers[55] = moved
    with admin(net) as a:
        quorum = a.describe_metadata_quorum()
    assert quorum.leader_id == 3
    assert [n for n, _, _ in net.sent("DescribeQuorum")] == [1, 3]
    assert len(net.sleeps) == 1 and 0.08 <= net.sleeps[0] <= 0.12


def test_no_active_controller_yet_is_retried() -> None:
    net = FakeNetwork(3, leader=None)
    answered = []

    def elect(node: FakeNode, version: int, body: Any) -> Any:
        answered.append(node.node_id)
        if len(answered) == 3:
            net.leader = 2
        return node.handlers.pop(60) and None or node.answer(60, version, body)

    for node in net.nodes.values():
        node.handlers[60] = elect
    with admin(net) as a:
        assert a.describe_metadata_quorum().leader_id == 2
    assert len(net.sleeps) >= 2


def test_lost_connection_mid_request_is_retried() -> None:
    net = FakeNetwork(3, leader=1)
    dropped = []

    def drop_once(node: FakeNode, version: int, body: Any) -> Any:
        node.handlers.pop(55)
        dropped.append(1)
        return DROP

    net.nodes[1].handlers[55] = drop_once
    with admin(net) as a:
        assert a.describe_metadata_quorum().leader_id == 1
    assert dropped == [1] and net.connects.count((HOST, 9091)) == 2


def test_dead_leader_is_forgotten_and_a_new_one_found() -> None:
    net = FakeNetwork(3, leader=1)
    with admin(net) as a:
        a.describe_metadata_quorum()
        net.nodes[1].up = False
        net.leader = 2
        assert a.describe_metadata_quorum().leader_id == 2


def test_backoff_grows_exponentially_to_the_cap_and_ends_in_a_timeout_naming_the_last_error() -> None:
    net = FakeNetwork(3, leader=None)
    with admin(net) as a, pytest.raises(KafkaTimeoutError) as info:
        a.describe_metadata_quorum(timeout=8)
    error = info.value
    assert error.operation == "describe_metadata_quorum" and error.timeout == 8
    assert "does not know an active controller" in str(error)
    assert [round(s, 1) for s in net.sleeps[:5]][:4] == pytest.approx([0.1, 0.2, 0.4, 0.8], abs=0.2)
    assert max(net.sleeps) <= 1.2 and net.now - 1000 <= 8


def test_a_server_that_never_answers_times_out() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[55] = lambda node, version, body: HANG
    with (
        admin(net, request_timeout_ms=3000, default_api_timeout_ms=5000) as a,
        pytest.raises(KafkaTimeoutError, match="describe_metadata_quorum timed out after 5 s.*no response"),
    ):
        a.describe_metadata_quorum()
    timeouts = [s for s in net.sleeps]
    assert net.now - 1000 == pytest.approx(5, abs=0.01) and timeouts


def test_unreachable_bootstrap_controllers_give_one_error_listing_each() -> None:
    net = FakeNetwork(3, leader=1)
    for node in net.nodes.values():
        node.up = False
    with admin(net) as a, pytest.raises(BootstrapError) as info:
        a.describe_metadata_quorum(timeout=2)
    assert set(info.value.failures) == {f"{HOST}:9091", f"{HOST}:9092", f"{HOST}:9093"}
    assert all(why == "connection refused" for why in info.value.failures.values())
    assert "bootstrap.controllers" in str(info.value)


def test_non_retriable_errors_surface_at_once_with_message_operation_and_node() -> None:
    net = FakeNetwork(3, leader=1)
    r = messages.DescribeQuorumResponse
    net.nodes[1].handlers[55] = lambda node, version, body: r(
        error_code=31, error_message="no DESCRIBE on CLUSTER"
    )
    with admin(net) as a, pytest.raises(ClusterAuthorizationFailedError) as info:
        a.describe_metadata_quorum()
    assert info.value.message == "no DESCRIBE on CLUSTER"
    assert info.value.operation == "describe_metadata_quorum" and info.value.node == f"node 1 ({HOST}:9091)"
    assert str(info.value) == (
        f"[CLUSTER_AUTHORIZATION_FAILED] no DESCRIBE on CLUSTER "
        f"(describe_metadata_quorum on node 1 ({HOST}:9091))"
    )
    assert net.sleeps == []


def test_a_response_without_the_metadata_partition_is_an_unknown_server_error() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[55] = lambda node, version, body: messages.DescribeQuorumResponse(topics=[])
    with admin(net) as a, pytest.raises(UnknownServerErrorError, match="__cluster_metadata-0"):
        a.describe_metadata_quorum()


def test_api_versions_falls_back_when_the_server_does_not_know_v4() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].versions[18] = (0, 2)
    with admin(net) as a:
        assert a.describe_metadata_quorum().leader_id == 1
        features = a.describe_features()
    assert [v for _, v, _ in net.sent("ApiVersions")] == [4, 2, 2]
    assert features.supported_features == {} and features.finalized_features_epoch is None


def test_api_versions_is_asked_once_per_connection() -> None:
    net = FakeNetwork(1, leader=1)
    with admin(net) as a:
        for _ in range(3):
            a.describe_metadata_quorum()
    assert len(net.sent("ApiVersions")) == 1 and len(net.connects) == 1


def test_controllers_too_old_for_controller_bootstrap() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].versions[60] = (0, 0)
    with admin(net) as a, pytest.raises(UnsupportedOperationError, match="DescribeCluster v1"):
        a.describe_metadata_quorum()


def test_describe_cluster_unsupported_version_on_old_metadata_version_is_not_retried() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[60] = lambda n, v, b: messages.DescribeClusterResponse(
        error_code=35, error_message="old"
    )
    with admin(net) as a, pytest.raises(UnsupportedVersionError):
        a.describe_cluster()
    assert net.sleeps == []


# ------------------------------------------------------------------ bootstrap servers (brokers forward)


def test_bootstrap_servers_send_to_a_broker_which_forwards() -> None:
    net = FakeNetwork(3, leader=2, brokers=2)
    with admin(net, brokers=True) as a:
        quorum = a.describe_metadata_quorum()
        cluster = a.describe_cluster()
        a.add_raft_voter(4, Uuid.random(), [Endpoint(listener="CONTROLLER", host="h", port=1)])
    assert quorum.leader_id == 2
    assert {n for n, _, _, _ in net.requests} == {101}
    assert net.sent("DescribeCluster")[0][2].endpoint_type == 1
    assert [n.node_id for n in cluster.nodes] == [101, 102] and cluster.controller is not None


def test_bootstrap_servers_skip_an_unreachable_broker() -> None:
    net = FakeNetwork(1, leader=1, brokers=2)
    net.nodes[101].up = False
    with admin(net, brokers=True) as a:
        assert a.describe_metadata_quorum().leader_id == 1
    assert {n for n, _, _, _ in net.requests} == {102}


# ------------------------------------------------------------------ describe_cluster / describe_features


def test_describe_cluster_with_controllers() -> None:
    net = FakeNetwork(3, leader=3)
    with admin(net) as a:
        cluster = a.describe_cluster()
    assert cluster.cluster_id == "MkU3OEVBNTcwNTJENDM2Qg"
    assert cluster.controller is not None and cluster.controller.node_id == 3
    assert [(n.node_id, n.port) for n in cluster.nodes] == [(1, 9091), (2, 9092), (3, 9093)]
    assert net.sent("DescribeCluster")[-1][0] == 3


def test_describe_cluster_mismatched_endpoint_type() -> None:
    net = FakeNetwork(1, leader=1, brokers=1)
    with (
        Admin(bootstrap_servers=net.controllers(), transport=net, **FAST) as a,
        pytest.raises(Exception, match="MISMATCHED_ENDPOINT_TYPE"),
    ):
        a.describe_cluster()


def test_describe_features() -> None:
    net = FakeNetwork(3, leader=2)
    with admin(net) as a:
        features = a.describe_features()
    assert net.sent("ApiVersions")[-1][:2] == (2, 4)
    assert features.finalized_features["metadata.version"].max_version_level == 29
    assert features.supported_features["kraft.version"].min_version == 0
    assert features.finalized_features_epoch == 42


def _supporting_metadata_version_up_to(top: int) -> Any:
    def answer(node: FakeNode, version: int, body: Any) -> Any:
        response = fake_api_versions(node, version, body)
        response.supported_features[0].max_version = top
        return response

    return answer


def test_describe_features_of_one_controller() -> None:
    net = FakeNetwork(3, leader=2)
    net.nodes[3].handlers[18] = _supporting_metadata_version_up_to(27)
    with admin(net) as a:
        features = a.describe_features(node_id=3)
        assert a.describe_features(node_id=1).supported_features["metadata.version"].max_version == 29
    assert features.supported_features["metadata.version"].max_version == 27
    assert [(n, api) for n, api, _, _ in net.requests] == [
        (1, "ApiVersions"),
        (1, "DescribeCluster"),  # names the active controller and every controller's endpoint
        (2, "ApiVersions"),
        (3, "ApiVersions"),  # the connection's own negotiation
        (3, "ApiVersions"),  # the features
        (1, "ApiVersions"),
    ]


def test_describe_features_of_one_broker_finds_it_through_describe_cluster() -> None:
    net = FakeNetwork(1, brokers=2)
    net.nodes[102].handlers[18] = _supporting_metadata_version_up_to(28)
    with admin(net, brokers=True) as a:
        features = a.describe_features(node_id=102)
    assert features.supported_features["metadata.version"].max_version == 28
    assert [(n, api) for n, api, _, _ in net.requests] == [
        (101, "ApiVersions"),
        (101, "DescribeCluster"),
        (102, "ApiVersions"),
        (102, "ApiVersions"),
    ]
    assert net.sent("DescribeCluster")[0][2].endpoint_type == 1


def test_describe_features_of_an_unknown_node_times_out_naming_the_nodes() -> None:
    net = FakeNetwork(3, leader=2)
    with admin(net) as a, pytest.raises(KafkaTimeoutError, match=r"no node 9 \(nodes: 1, 2, 3\)"):
        a.describe_features(node_id=9, timeout=2)
    assert not [n for n, api, _, _ in net.requests if n == 9]


# ------------------------------------------------------------------ add_raft_voter / remove_raft_voter


def test_add_raft_voter_request() -> None:
    net = FakeNetwork(3, leader=1)
    directory = Uuid.random()
    with admin(net) as a:
        a.add_raft_voter(
            4, str(directory), [{"listener": "CONTROLLER", "host": "h4", "port": 9094}], timeout=3
        )
    node, version, body = net.sent("AddRaftVoter")[0]
    assert (node, version, body.voter_id, body.voter_directory_id, body.cluster_id) == (
        1,
        1,
        4,
        directory,
        None,
    )
    assert [(x.name, x.host, x.port) for x in body.listeners] == [("CONTROLLER", "h4", 9094)]
    assert body.ack_when_committed is True and body.timeout_ms == 3000


def test_add_raft_voter_v0_server_and_ack_when_committed_false() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].versions[80] = (0, 0)
    ep = [Endpoint(listener="CONTROLLER", host="h", port=1)]
    with admin(net) as a:
        a.add_raft_voter(4, Uuid.random(), ep)
        assert net.sent("AddRaftVoter")[0][1] == 0
        with pytest.raises(UnsupportedOperationError, match="ack_when_committed"):
            a.add_raft_voter(4, Uuid.random(), ep, ack_when_committed=False)


def test_add_raft_voter_against_a_server_without_the_api() -> None:
    net = FakeNetwork(1, leader=1)
    del net.nodes[1].versions[80]
    with (
        admin(net) as a,
        pytest.raises(UnsupportedOperationError, match="does not advertise AddRaftVoter") as info,
    ):
        a.add_raft_voter(4, Uuid.random(), [Endpoint(listener="CONTROLLER", host="h", port=1)])
    assert info.value.operation == "add_raft_voter"


def test_add_raft_voter_request_timed_out_is_not_retried() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[80] = lambda n, v, b: messages.AddRaftVoterResponse(
        error_code=7, error_message="Aborted add voter operation for ... since it is lagging behind"
    )
    with admin(net) as a, pytest.raises(RequestTimedOutError, match="lagging behind"):
        a.add_raft_voter(4, Uuid.random(), [Endpoint(listener="CONTROLLER", host="h", port=1)])
    assert len(net.sent("AddRaftVoter")) == 1


def test_add_raft_voter_not_leader_is_retried_on_the_new_leader() -> None:
    net = FakeNetwork(3, leader=1)

    def resign(node: FakeNode, version: int, body: Any) -> Any:
        net.leader = 2
        return messages.AddRaftVoterResponse(error_code=6)

    net.nodes[1].handlers[80] = resign
    with admin(net) as a:
        a.add_raft_voter(4, Uuid.random(), [Endpoint(listener="CONTROLLER", host="h", port=1)])
    assert [n for n, _, _ in net.sent("AddRaftVoter")] == [1, 2]


def test_add_raft_voter_not_leader_through_a_broker_is_not_retried() -> None:
    net = FakeNetwork(1, leader=1, brokers=1)
    net.nodes[101].handlers[80] = lambda n, v, b: messages.AddRaftVoterResponse(error_code=6)
    with admin(net, brokers=True) as a, pytest.raises(NotLeaderOrFollowerError):
        a.add_raft_voter(4, Uuid.random(), [Endpoint(listener="CONTROLLER", host="h", port=1)])


def test_duplicate_voter() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[80] = lambda n, v, b: messages.AddRaftVoterResponse(
        error_code=126, error_message="dup"
    )
    with admin(net) as a, pytest.raises(DuplicateVoterError, match="dup"):
        a.add_raft_voter(1, Uuid.random(), [Endpoint(listener="CONTROLLER", host="h", port=1)])


def test_remove_raft_voter() -> None:
    net = FakeNetwork(3, leader=3)
    directory = net.nodes[2].directory_id
    with admin(net) as a:
        a.remove_raft_voter(2, directory, cluster_id="abc")
    node, version, body = net.sent("RemoveRaftVoter")[0]
    assert (node, version, body.voter_id, body.voter_directory_id, body.cluster_id) == (
        3,
        0,
        2,
        directory,
        "abc",
    )
    net.nodes[3].handlers[81] = lambda n, v, b: messages.RemoveRaftVoterResponse(
        error_code=127, error_message="nf"
    )
    with admin(net) as a, pytest.raises(Exception, match=r"\[VOTER_NOT_FOUND\] nf \(remove_raft_voter"):
        a.remove_raft_voter(2, directory)


# ------------------------------------------------------------------ update_features


def test_update_features_v2_has_no_per_feature_results() -> None:
    net = FakeNetwork(3, leader=1)
    with admin(net) as a:
        results = a.update_features({"metadata.version": FeatureUpdate(level=29), "group.version": 1})
    assert all(r.ok and r.exception() is None for r in results.values()) and list(results) == [
        "metadata.version",
        "group.version",
    ]
    _, version, body = net.sent("UpdateFeatures")[0]
    assert version == 2 and [
        (u.feature, u.max_version_level, u.upgrade_type) for u in body.feature_updates
    ] == [("metadata.version", 29, 1), ("group.version", 1, 1)]


def test_update_features_v1_per_feature_results() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].versions[57] = (0, 1)
    r = messages.UpdateFeaturesResponse
    net.nodes[1].handlers[57] = lambda n, v, b: r(
        results=[
            r.UpdatableFeatureResult(feature="metadata.version", error_message="NONE"),
            r.UpdatableFeatureResult(
                feature="group.version", error_code=95, error_message="Invalid update version"
            ),
        ]
    )
    with admin(net) as a:
        results = a.update_features(
            {
                "metadata.version": FeatureUpdate(level=20, upgrade_type=UpgradeType.SAFE_DOWNGRADE),
                "group.version": 5,
                "x": 1,
            },
            validate_only=True,
        )
    assert results["metadata.version"].ok and results["metadata.version"].error_message is None
    assert isinstance(results["group.version"].exception(), InvalidUpdateVersionError)
    assert results["x"].error_code == -1
    _, version, body = net.sent("UpdateFeatures")[0]
    assert version == 1 and body.validate_only and body.feature_updates[0].upgrade_type == 2


def test_update_features_top_level_error_fails_all_at_once() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[57] = lambda n, v, b: messages.UpdateFeaturesResponse(
        error_code=95, error_message="The update failed for all features since ..."
    )
    with admin(net) as a, pytest.raises(InvalidUpdateVersionError, match="failed for all features"):
        a.update_features({"metadata.version": 30})
    assert net.sleeps == []


def test_update_features_not_controller_is_retried() -> None:
    net = FakeNetwork(3, leader=1)

    def moved(node: FakeNode, version: int, body: Any) -> Any:
        net.leader = 3
        return messages.UpdateFeaturesResponse(error_code=41)

    net.nodes[1].handlers[57] = moved
    with admin(net) as a:
        assert a.update_features({"metadata.version": 29})["metadata.version"].ok
    assert [n for n, _, _ in net.sent("UpdateFeatures")] == [1, 3]


def test_update_features_not_controller_until_the_deadline() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[57] = lambda n, v, b: messages.UpdateFeaturesResponse(
        error_code=41, error_message="nc"
    )
    with admin(net) as a, pytest.raises(KafkaTimeoutError) as info:
        a.update_features({"metadata.version": 29}, timeout=3)
    assert isinstance(info.value.last_error, NotControllerError)


def test_update_features_downgrade_needs_v1() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].versions[57] = (0, 0)
    with admin(net) as a:
        a.update_features({"metadata.version": 29})
        with pytest.raises(UnsupportedOperationError, match="downgrades and validate_only"):
            a.update_features(
                {"metadata.version": FeatureUpdate(level=20, upgrade_type=UpgradeType.SAFE_DOWNGRADE)}
            )


def test_update_features_arguments() -> None:
    net = FakeNetwork(1, leader=1)
    with admin(net) as a:
        with pytest.raises(ValueError):
            a.update_features({})
        with pytest.raises(ValueError):
            a.update_features({"x": FeatureUpdate(level=0)})


# ------------------------------------------------------------------ client lifecycle and async


def test_closed_client_refuses_calls() -> None:
    net = FakeNetwork(1, leader=1)
    a = admin(net)
    a.describe_metadata_quorum()
    a.close()
    a.close()
    with pytest.raises(Exception, match="closed"):
        a.describe_metadata_quorum()


def test_async_admin_runs_the_same_operations() -> None:
    net = FakeNetwork(3, leader=2)

    async def main() -> None:
        async with AsyncAdmin(
            bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net), **FAST
        ) as a:
            quorum, cluster, features = await asyncio.gather(
                a.describe_metadata_quorum(), a.describe_cluster(), a.describe_features()
            )
            assert quorum.leader_id == 2 and cluster.controller is not None and features.finalized_features
            await a.add_raft_voter(4, Uuid.random(), [Endpoint(listener="CONTROLLER", host="h", port=1)])
            await a.remove_raft_voter(3, Uuid.random())
            assert (await a.update_features({"metadata.version": 29}))["metadata.version"].ok
            net.nodes[2].handlers[55] = lambda n, v, b: HANG
            with pytest.raises(KafkaTimeoutError):
                await a.describe_metadata_quorum(timeout=2)

    asyncio.run(main())
