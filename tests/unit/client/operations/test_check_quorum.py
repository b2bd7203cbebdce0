"""``check_quorum`` (``client/operations/check_quorum.py``) through the in-memory network: what it
asks, how it classifies unreachable quorums, the pending-change wait."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.health import HealthStatus, HealthThresholds, QuorumHealth
from unit.client.fake import AsyncFakeNetwork, FakeNetwork, FakeNode


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
