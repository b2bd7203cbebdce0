"""explain_refusal (``client/operations/explain_refusal.py``) through the in-memory network: what it
reads, and the finding it makes of a refusal for each kind of node."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafka_admin_kraft import AsyncAdmin
from kafka_admin_kraft.health import Finding
from kafka_admin_kraft.protocol import messages
from unit.client.fake import AsyncFakeNetwork, FakeNetwork, FakeNode, admin, api_versions, describe_cluster

PREFIX = ("The update failed for all features since the following feature had an error: Invalid update "
          "version 33 for feature metadata.version. ")
GHOST = PREFIX + "Controller 4 only supports versions 7-29"


def registered_ghost(net: FakeNetwork) -> None:
    """The controllers list controller 4, which is neither a voter nor fetching."""

    def listed(node: FakeNode, version: int, body: Any) -> Any:
        response = describe_cluster(node, version, body)
        if not node.is_broker:
            broker = messages.DescribeClusterResponse.DescribeClusterBroker
            response.brokers.append(broker(broker_id=4, host="10.0.0.9", port=9999))
        return response

    for node in net.nodes.values():
        node.handlers[60] = listed


def finalized_at(net: FakeNetwork, level: int) -> None:
    def answer(node: FakeNode, version: int, body: Any) -> Any:
        response = api_versions(node, version, body)
        response.finalized_features[0].min_version_level = level
        response.finalized_features[0].max_version_level = level
        return response

    for node in net.nodes.values():
        node.handlers[18] = answer


def test_a_ghost_below_4_4_iv2_is_started_again_under_its_id() -> None:
    net = FakeNetwork(3, leader=1)
    registered_ghost(net)
    with admin(net) as client:
        finding = client.explain_feature_refusal(GHOST, connect="--bootstrap-controller x:1")
    assert finding is not None and (finding.code, finding.node_id) == ("FEATURE_UPGRADE_BLOCKED", 4)
    assert "(a registration left behind), which only metadata.version 4.4-IV2" in finding.message
    assert finding.fix == (
        "kafka-storage format --cluster-id MkU3OEVBNTcwNTJENDM2Qg --config <controller-4.properties> "
        "--release-version 4.2-IV1 --ignore-formatted && kafka-server-start <controller-4.properties>")
    apis = [api for _, api, _, _ in net.requests]
    assert {"DescribeQuorum", "DescribeCluster", "ApiVersions"} <= set(apis)
    assert "UpdateFeatures" not in apis and "UnregisterController" not in apis


def test_a_ghost_at_4_4_iv2_is_unregistered_with_the_clients_connection_by_default() -> None:
    net = FakeNetwork(3, leader=1)
    registered_ghost(net)
    finalized_at(net, 33)
    refusal = ("Invalid update version 2 for feature share.version. Controller 4 only supports versions "
               "0-1")
    with admin(net) as client:
        finding = client.explain_feature_refusal(refusal)
    assert finding is not None
    assert finding.message.startswith("share.version 2 is held back by controller 4, registered as "
                                      "supporting share.version 0-1 but neither a voter nor fetching")
    connect = f"--bootstrap-controller {net.controllers()}"
    assert finding.fix == f"kafka-cluster unregister-controller {connect} --id 4"


def test_a_voter_is_upgraded_and_a_fenced_broker_unregistered_through_the_brokers() -> None:
    net = FakeNetwork(3, leader=1, brokers=2)
    with admin(net) as client:
        voter = client.explain_feature_refusal(PREFIX + "Controller 2 only supports versions 7-29")
    assert voter is not None and voter.fix is None
    assert voter.message.endswith("held back by voter 2, registered as supporting metadata.version 7-29: "
                                  "restart it on Kafka 4.4 or later (it registers again)")
    net.nodes[102].fenced = True
    with admin(net, brokers=True) as client:
        fenced = client.explain_feature_refusal(PREFIX + "Broker 102 only supports versions 7-29",
                                                connect="--bootstrap-server b:9092")
        running = client.explain_feature_refusal(PREFIX + "Broker 101 only supports versions 7-29")
    assert fenced is not None and fenced.fix == "kafka-cluster unregister --bootstrap-server b:9092 --id 102"
    assert "7-29, and fenced: unregister it if it is gone for good" in fenced.message
    assert running is not None and running.fix is None
    assert running.message.endswith("upgrade it to Kafka 4.4 or later")


def test_a_refusal_that_names_no_node_is_not_explained_and_nothing_is_asked() -> None:
    net = FakeNetwork(3, leader=1)
    with admin(net) as client:
        assert client.explain_feature_refusal("Invalid metadata.version 99. Valid versions are from 7 to "
                                              "34.") is None
        with pytest.raises(TypeError, match="message must be a str"):
            client.explain_feature_refusal(b"x")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="connect must be a str"):
            client.explain_feature_refusal(GHOST, connect=1)  # type: ignore[arg-type]
    assert net.requests == []


def test_async_admin_explains_the_same_way() -> None:
    net = FakeNetwork(3, leader=1)
    registered_ghost(net)

    async def run() -> Finding | None:
        transport = AsyncFakeNetwork(net)
        async with AsyncAdmin(bootstrap_controllers=net.controllers(), transport=transport) as client:
            return await client.explain_feature_refusal(GHOST)

    finding = asyncio.run(run())
    assert finding is not None and finding.node_id == 4
