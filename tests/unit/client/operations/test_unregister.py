"""unregister_broker and unregister_controller (``client/operations/unregister.py``) through the
in-memory network: sent to the active controller (or through a broker), the moved controller and
REQUEST_TIMED_OUT retried, every other error raised with the server's message and what to do."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafka_admin_kraft import AsyncAdmin
from kafka_admin_kraft.errors import (
    BrokerIdNotRegisteredError,
    ControllerIdNotRegisteredError,
    InvalidRequestError,
    UnsupportedOperationError,
    UnsupportedVersionError,
)
from kafka_admin_kraft.protocol import messages
from unit.client.fake import FAST, AsyncFakeNetwork, FakeNetwork, FakeNode, admin


def test_unregister_controller_goes_to_the_active_controller() -> None:
    net = FakeNetwork(3, leader=2)
    net.registrations.add(4)  # a stopped observer controller that is still registered
    with admin(net) as a:
        a.unregister_controller(4)
    assert 4 not in net.registrations
    sent = net.sent("UnregisterController")
    assert [(node, version, body.controller_id) for node, version, body in sent] == [(2, 0, 4)]


def test_unregister_broker_through_a_broker_and_through_a_controller() -> None:
    net = FakeNetwork(1, leader=1, brokers=2)
    with admin(net, brokers=True) as a:
        a.unregister_broker(102)
    with admin(net) as a:
        a.unregister_broker(101)
    assert net.registrations == {1}
    sent = net.sent("UnregisterBroker")
    assert [(node, body.broker_id) for node, _, body in sent] == [(101, 102), (1, 101)]


def test_not_registered_errors_say_what_to_do() -> None:
    net = FakeNetwork(3, leader=1)
    with admin(net) as a:
        with pytest.raises(ControllerIdNotRegisteredError) as controller:
            a.unregister_controller(9)
        with pytest.raises(BrokerIdNotRegisteredError) as broker:
            a.unregister_broker(9)
    assert controller.value.message == "Controller 9 is not registered."  # the server's, as Kafka prints it
    assert str(controller.value).endswith(
        "controller 9 has no registration (it never registered, or was unregistered already); "
        "describe_cluster() with bootstrap controllers lists the registered controllers")
    assert "describe_cluster(include_fenced_brokers=True) lists the registered brokers" in str(broker.value)
    assert net.sleeps == []  # not retried


def test_a_voter_is_refused_with_the_way_out() -> None:
    net = FakeNetwork(3, leader=1)
    with admin(net) as a, pytest.raises(InvalidRequestError) as info:
        a.unregister_controller(3)
    assert "remove it from the voters first" in str(info.value)
    assert 3 in net.registrations


def test_a_metadata_version_below_4_4_iv2_names_the_level_needed() -> None:
    net = FakeNetwork(3, leader=1)
    net.nodes[1].handlers[94] = lambda n, v, b: messages.UnregisterControllerResponse(
        error_code=35, error_message="metadata.version 4.3-IV0 does not support controller unregistration")
    with admin(net) as a, pytest.raises(UnsupportedVersionError) as info:
        a.unregister_controller(4)
    assert str(info.value).endswith(
        "unregistering a controller needs metadata.version 4.4-IV2 (level 33) or later: finalize it once "
        "every node runs Kafka 4.4 (kafka-features upgrade --release-version 4.4); a stopped controller of "
        "an older release that blocks the upgrade is replaced by a Kafka 4.4 controller started with its "
        "node id until the upgrade is done")


def test_a_node_before_kafka_4_4_lacks_the_api() -> None:
    net = FakeNetwork(3, leader=1)
    for node in net.nodes.values():
        del node.versions[94]
    with admin(net) as a, pytest.raises(UnsupportedOperationError) as info:
        a.unregister_controller(4)
    assert str(info.value) == (
        "unregister_controller: the server at node 1 (10.0.0.1:9091) is too old: it does not advertise "
        "UnregisterController (API key 94) (it needs Kafka 4.4 at metadata.version 4.4-IV2 or later, "
        "KIP-1312)")
    assert net.sent("UnregisterController") == []


def test_moved_controller_and_request_timed_out_are_retried() -> None:
    net = FakeNetwork(3, leader=2)
    net.registrations.add(4)
    answers: list[Any] = [
        messages.UnregisterControllerResponse(error_code=7, error_message="timed out"),
    ]

    def flaky(node: FakeNode, version: int, body: Any) -> Any:
        if answers:
            return answers.pop(0)
        net.registrations.discard(body.controller_id)
        return messages.UnregisterControllerResponse(error_message="")

    net.nodes[3].handlers[94] = flaky
    with admin(net) as a:
        a.describe_cluster()  # the client knows node 2 as the active controller
        net.leader = 3  # node 2 answers NOT_CONTROLLER, node 3 REQUEST_TIMED_OUT, then success
        a.unregister_controller(4)
    assert [node for node, _, _ in net.sent("UnregisterController")] == [2, 3, 3]
    assert 4 not in net.registrations and len(net.sleeps) == 2


def test_ids_are_checked_before_sending() -> None:
    net = FakeNetwork(1, leader=1)
    with admin(net) as a:
        with pytest.raises(ValueError, match="controller_id"):
            a.unregister_controller(-1)
        with pytest.raises(TypeError, match="broker_id"):
            a.unregister_broker("1")  # type: ignore[arg-type]
    assert net.requests == []


def test_unregister_on_async_admin() -> None:
    net = FakeNetwork(3, leader=1, brokers=1)
    net.registrations.add(4)

    async def run() -> None:
        async with AsyncAdmin(bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net),
                              **FAST) as a:
            await a.unregister_controller(4)
            await a.unregister_broker(101)

    asyncio.run(run())
    assert net.registrations == {1, 2, 3}
