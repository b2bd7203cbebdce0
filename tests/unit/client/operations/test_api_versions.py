"""api_versions (``client/operations/api_versions.py``) through the in-memory network: one node's API
version ranges, the node found through DescribeCluster."""

from __future__ import annotations

import asyncio

import pytest

from kafka_admin_kraft import AsyncAdmin
from kafka_admin_kraft.errors import UnknownNodeError, UnsupportedVersionError
from kafka_admin_kraft.protocol import messages
from unit.client.fake import FAST, AsyncFakeNetwork, FakeNetwork, admin


def test_api_versions_of_one_controller() -> None:
    net = FakeNetwork(3, leader=2)
    net.nodes[3].versions[81] = (0, 0)
    del net.nodes[3].versions[80]  # a node without AddRaftVoter
    with admin(net) as a:
        node = a.api_versions(3)
    assert node.node_id == 3
    assert [(r.api_key, r.min_version, r.max_version) for r in node.api_versions] == [
        (17, 0, 1), (18, 0, 4), (36, 0, 2), (55, 0, 3), (57, 0, 2), (60, 0, 2), (64, 0, 0), (81, 0, 0),
        (94, 0, 0)]
    assert node.get(80) is None
    range_55 = node.get(55)
    assert range_55 is not None and (range_55.min_version, range_55.max_version) == (0, 3)
    assert [(n, api) for n, api, _, _ in net.requests] == [
        (1, "ApiVersions"),
        (1, "DescribeCluster"),  # names the active controller and every controller's endpoint
        (2, "ApiVersions"),
        (3, "ApiVersions"),  # the connection's own negotiation
        (3, "ApiVersions"),  # the answer
    ]


def test_api_versions_of_a_broker_with_bootstrap_servers() -> None:
    net = FakeNetwork(1, brokers=2)
    net.nodes[102].versions = {18: (0, 3), 60: (0, 1)}  # an older broker: ApiVersions v3
    with admin(net, brokers=True) as a:
        node = a.api_versions(102)
    assert [(r.api_key, r.max_version) for r in node.api_versions] == [(18, 3), (60, 1)]
    assert net.sent("ApiVersions")[-1][:2] == (102, 3)


def test_api_versions_error_and_unknown_node() -> None:
    net = FakeNetwork(3, leader=1)
    calls = 0

    def refuse(node: object, version: int, body: object) -> messages.ApiVersionsResponse:
        nonlocal calls
        calls += 1
        if calls == 1:  # the negotiation of the connection succeeds
            return messages.ApiVersionsResponse(
                api_keys=[messages.ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=4)])
        return messages.ApiVersionsResponse(error_code=35)

    net.nodes[2].handlers[18] = refuse
    with admin(net) as a:
        with pytest.raises(UnsupportedVersionError, match=r"api_versions on node 2"):
            a.api_versions(2)
        with pytest.raises(UnknownNodeError, match=r"no node 7 \(nodes: 1, 2, 3\)"):
            a.api_versions(7, timeout=60)
        with pytest.raises(ValueError, match="node_id"):
            a.api_versions(-1)


def test_api_versions_on_async_admin() -> None:
    net = FakeNetwork(3, leader=1)

    async def run() -> list[int]:
        async with AsyncAdmin(bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net),
                              **FAST) as a:
            node = await a.api_versions(2)
            return [r.api_key for r in node.api_versions]

    assert asyncio.run(run()) == sorted(net.nodes[2].versions)
