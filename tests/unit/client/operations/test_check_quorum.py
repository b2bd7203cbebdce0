"""``check_quorum`` (``client/operations/check_quorum.py``) through the in-memory network: what it
asks, how it classifies unreachable quorums, the pending-change wait."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.health import HealthStatus, HealthThresholds, QuorumHealth, Registrations, Severity
from kafka_admin_kraft.protocol import messages
from unit.client.fake import AsyncFakeNetwork, FakeNetwork, FakeNode
from unit.client.fake import admin as fake_admin


def codes(health: QuorumHealth) -> list[str]:
    return [f.code for f in health.findings]


def fake(size: int = 3, leader: int | None = 1, describe_quorum_max: int = 2) -> FakeNetwork:
    net = FakeNetwork(size, leader=leader)
    for node in net.nodes.values():
        node.versions[55] = (0, describe_quorum_max)
    return net


def admin(net: FakeNetwork) -> Admin:
    return Admin(
        bootstrap_controllers=net.controllers(),
        transport=net,
        retry_backoff_ms=100,
        request_timeout_ms=1000,
        default_api_timeout_ms=5000,
    )


def test_check_reads_the_quorum_and_probes_every_voter_once() -> None:
    net = fake()
    with admin(net) as client:
        health = client.check_quorum()
    assert health.status is HealthStatus.OK and health.cluster_id is not None
    assert [(p.node_id, p.reachable) for p in health.probes] == [(1, True), (2, True), (3, True)]
    assert health.finalized_features == {"metadata.version": 29}
    apis = [api for _, api, _, _ in net.requests]
    assert apis.count("DescribeQuorum") == 1 and apis.count("DescribeCluster") == 2
    # one ApiVersions per new connection, one probe per voter
    assert apis.count("ApiVersions") == len(net.opened) + 3


def test_without_probes_only_the_leader_is_asked() -> None:
    net = fake()
    with admin(net) as client:
        health = client.check_quorum(probe=False)
    assert health.probes == () and health.status is HealthStatus.OK
    assert {node for node, _, _, _ in net.requests} == {1}


def test_a_voter_that_is_down_is_unreachable_and_the_fix_connection_is_the_clients() -> None:
    net = fake(size=1)
    with admin(net) as client:
        health = client.check_quorum()
    assert health.findings[0].fix is not None
    assert health.findings[0].fix.startswith(
        f"kafka-metadata-quorum --bootstrap-controller {net.controllers()} "
    )
    net = fake()
    net.nodes[3].up = False
    with admin(net) as client:
        health = client.check_quorum(connect="--bootstrap-controller x:1")
    assert [(f.code, f.node_id) for f in health.findings] == [
        ("VOTER_UNREACHABLE", 3),
        ("NO_FAULT_TOLERANCE", None),
    ]
    assert "connection refused" in health.findings[0].message


def test_nothing_reachable_is_unknown_and_no_leader_is_critical() -> None:
    net = fake()
    for node in net.nodes.values():
        node.up = False
    with admin(net) as client:
        health = client.check_quorum(timeout=2)
    assert (health.status, health.exit_code, codes(health)) == (
        HealthStatus.UNKNOWN,
        3,
        ["QUORUM_UNREACHABLE"],
    )
    assert health.quorum is None and net.now - 1000 <= 2.5
    with admin(fake(leader=None)) as client:
        health = client.check_quorum(timeout=2)
    assert (health.status, codes(health)) == (HealthStatus.CRITICAL, ["NO_LEADER"])


def test_a_pending_change_is_watched_until_the_threshold_and_a_previous_result_carries_its_start() -> None:
    net = fake(describe_quorum_max=3)  # the fake's v3 answer leaves the last voter uncommitted
    limits = HealthThresholds(pending_change_ms=1000)
    with admin(net) as client:
        first = client.check_quorum(thresholds=limits)
        waited = sum(net.sleeps)
        second = client.check_quorum(thresholds=limits, previous=first)
    assert 1.0 <= waited <= 1.3
    assert "VOTER_CHANGE_PENDING" in codes(first)
    assert (
        first.voter_change_since_ms is not None
        and second.voter_change_since_ms == first.voter_change_since_ms
    )
    assert sum(net.sleeps) == waited  # nothing more to wait for: the change was already late
    assert "VOTER_CHANGE_PENDING" in codes(second)


def test_a_pending_change_that_commits_while_the_check_waits_is_no_finding() -> None:
    net = fake(describe_quorum_max=3)
    from unit.client.fake import describe_quorum as answer

    def committing(node: FakeNode, version: int, body: Any) -> Any:
        response = answer(node, version, body)
        partition = response.topics[0].partitions[0]
        if len(net.sent("DescribeQuorum")) > 2:
            partition.committed_voters = partition.current_voters
        return response

    for node in net.nodes.values():
        node.handlers[55] = committing
    with admin(net) as client:
        health = client.check_quorum()
    assert health.status is HealthStatus.OK and health.voter_change_since_ms is None
    assert len(net.sent("DescribeQuorum")) == 3


def test_async_admin_checks_the_same_way() -> None:
    net = fake()

    async def run() -> QuorumHealth:
        async with AsyncAdmin(
            bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net)
        ) as client:
            return await client.check_quorum(thresholds=HealthThresholds(max_lag_ms=0))

    health = asyncio.run(run())
    assert health.status is HealthStatus.OK and len(health.probes) == 3


def test_check_arguments_are_checked_before_anything_is_sent() -> None:
    net = fake()
    with admin(net) as client:
        with pytest.raises(TypeError, match="thresholds must be a HealthThresholds"):
            client.check_quorum(thresholds={"max_lag_ms": 1})  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="timeout"):
            client.check_quorum(timeout=0)
    assert net.requests == []


# ------------------------------------------------------------------ registrations and the upgrade check

BLOCKED = ("The update failed for all features since the following feature had an error: Invalid update "
           "version 33 for feature metadata.version. Controller 4 only supports versions 7-29")


def supports_4_4(net: FakeNetwork) -> None:
    """Every node advertises metadata.version up to 33 (4.4-IV2), 29 finalized: an upgrade is available."""
    from unit.client.fake import api_versions

    def newer(node: FakeNode, version: int, body: Any) -> Any:
        response = api_versions(node, version, body)
        response.supported_features[0].max_version = 33
        return response

    for node in net.nodes.values():
        node.handlers[18] = newer


def with_ghost(net: FakeNetwork, ghost: int = 4) -> None:
    """The controllers list a registration of ``ghost``, which is neither a voter nor fetching."""
    from unit.client.fake import describe_cluster

    def listed(node: FakeNode, version: int, body: Any) -> Any:
        response = describe_cluster(node, version, body)
        broker = messages.DescribeClusterResponse.DescribeClusterBroker
        response.brokers.append(broker(broker_id=ghost, host="10.0.0.9", port=9999))
        return response

    for node in net.nodes.values():
        node.handlers[60] = listed


def refusing(message: str | None, code: int = 95) -> Any:
    def answer(node: FakeNode, version: int, body: Any) -> Any:
        if message is None:
            return messages.UpdateFeaturesResponse()
        return messages.UpdateFeaturesResponse(error_code=code, error_message=message)

    return answer


def test_a_ghost_registration_is_found_through_the_controllers_and_not_probed() -> None:
    net = fake()
    with_ghost(net)
    with admin(net) as client:
        health = client.check_quorum(connect="--bootstrap-controller x:1")
    assert health.registrations == Registrations(controllers=(1, 2, 3, 4))
    assert codes(health) == ["GHOST_CONTROLLER_REGISTRATION"]
    assert health.findings[0].node_id == 4 and health.status is HealthStatus.OK
    assert [p.node_id for p in health.probes] == [1, 2, 3]
    assert ("10.0.0.9", 9999) not in net.connects


def test_an_upgrade_every_node_supports_is_validated_and_a_refusal_names_the_registration() -> None:
    net = fake()
    supports_4_4(net)
    with_ghost(net)
    net.nodes[1].handlers[57] = refusing(BLOCKED)
    with admin(net) as client:
        health = client.check_quorum(connect="--bootstrap-controller x:1")
    assert codes(health) == ["FEATURE_UPGRADE_BLOCKED", "GHOST_CONTROLLER_REGISTRATION"]
    blocked = health.findings[0]
    assert blocked.node_id == 4 and blocked.message.startswith(
        "metadata.version 33 (4.4-IV2) is held back by controller 4, registered as supporting "
        "metadata.version 7-29 but neither a voter nor fetching")
    assert blocked.fix is not None and blocked.fix.startswith(
        "kafka-storage format --cluster-id MkU3OEVBNTcwNTJENDM2Qg --config <controller-4.properties> "
        "--release-version 4.2-IV1 ")
    ((node, version, body),) = net.sent("UpdateFeatures")
    assert (node, version, body.validate_only) == (1, 2, True)
    assert [(u.feature, u.max_version_level, u.upgrade_type) for u in body.feature_updates] == [
        ("metadata.version", 33, 1)]


def test_an_accepted_upgrade_is_offered_and_one_the_principal_may_not_validate_says_so() -> None:
    net = fake()
    supports_4_4(net)
    net.nodes[1].handlers[57] = refusing(None)
    with admin(net) as client:
        health = client.check_quorum()
    assert codes(health) == ["METADATA_VERSION_UPGRADE_AVAILABLE"]
    assert health.findings[0].message == "metadata.version is 29; every node that answered supports 33"
    net.nodes[1].handlers[57] = refusing("Cluster authorization failed.", code=31)
    with admin(net) as client:
        health = client.check_quorum()
    assert codes(health) == ["METADATA_VERSION_UPGRADE_AVAILABLE"]
    assert health.findings[0].message.endswith(
        "(not validated by the active controller: the principal may not alter the cluster "
        "(CLUSTER_AUTHORIZATION_FAILED))")
    assert health.upgrade_check is not None and health.upgrade_check.denied
    # a loop with that principal does not ask again for the same level, nor for nothing to validate
    with admin(net) as client:
        again = client.check_quorum(previous=health)
    assert len(net.sent("UpdateFeatures")) == 2 and again.findings == health.findings
    net = fake()
    with admin(net) as client:
        quiet = client.check_quorum(previous=health)
    assert net.sent("UpdateFeatures") == [] and quiet.upgrade_check is None


def brokers(count: int = 2) -> FakeNetwork:
    """Three controllers and ``count`` brokers, DescribeQuorum v2 (no pending change to wait for)."""
    net = FakeNetwork(3, leader=1, brokers=count)
    for node in net.nodes.values():
        node.versions[55] = (0, 2)
    return net


def test_fenced_brokers_are_listed_through_brokers_timed_across_checks_and_not_probed() -> None:
    net = brokers()
    net.nodes[102].fenced = True
    net.nodes[102].up = False
    limits = HealthThresholds(fenced_broker_ms=1000)
    with fake_admin(net, brokers=True) as client:
        first = client.check_quorum(thresholds=limits)
        net.now += 2
        second = client.check_quorum(thresholds=limits, previous=first)
    assert first.registrations is not None and first.registrations.brokers == (101,)
    assert first.registrations.fenced_brokers == {102: first.checked_at_ms}
    assert second.registrations is not None
    assert second.registrations.fenced_brokers == {102: first.checked_at_ms}
    assert [(f.code, f.severity) for f in first.findings] == [("FENCED_BROKER_REGISTERED", Severity.INFO)]
    assert [(f.code, f.severity) for f in second.findings] == [("FENCED_BROKER_REGISTERED", Severity.WARNING)]
    assert second.status is HealthStatus.WARNING
    assert 102 not in {p.node_id for p in first.probes} | {p.node_id for p in second.probes}
    assert all(body.include_fenced_brokers for _, _, body in net.sent("DescribeCluster")[1:])


def test_brokers_before_kafka_4_0_list_no_fenced_brokers_and_the_check_goes_on() -> None:
    net = brokers()
    for broker in (101, 102):
        net.nodes[broker].versions[60] = (0, 1)
    with fake_admin(net, brokers=True) as client:
        health = client.check_quorum()
    assert health.registrations == Registrations(brokers=(101, 102))
    assert health.cluster_id is not None and health.status is HealthStatus.OK
