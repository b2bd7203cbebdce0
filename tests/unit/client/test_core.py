"""The sans-I/O core of the admin client (``client/core.py``) through the in-memory network: routing to
the active controller or through a broker, version negotiation, retries with backoff until the deadline,
errors that surface at once; and answers that go wrong: nodes that send bytes that are not a response,
a transport that fails in an unexpected way, a cancelled call. No operation is left suspended (which
Python reports as "Exception ignored ... generator ignored GeneratorExit": an error here), and no
private class name reaches a message."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin, Endpoint
from kafka_admin_kraft.client.config import Address
from kafka_admin_kraft.client.core import JITTER
from kafka_admin_kraft.errors import (
    BootstrapError,
    ClusterAuthorizationFailedError,
    KafkaConnectionError,
    KafkaTimeoutError,
    UnsupportedOperationError,
)
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from unit.client.fake import (
    DROP,
    FAST,
    HANG,
    HOST,
    AsyncFakeNetwork,
    FakeConnection,
    FakeNetwork,
    FakeNode,
    admin,
)

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


# ------------------------------------------------------------------ routing, versions and retries


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
    # retry.backoff.ms 100 doubling per failure, each with +-20% jitter
    assert net.sleeps[:4] == pytest.approx([0.1, 0.2, 0.4, 0.8], rel=JITTER + 1e-9)
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
    # An authorization error is explained (``test_authorization_errors_say_who_and_what_grants_it``); the
    # server's own text is kept beside the explanation.
    assert info.value.refusal is not None and info.value.refusal.server_message == "no DESCRIBE on CLUSTER"
    assert info.value.operation == "describe_metadata_quorum" and info.value.node == f"node 1 ({HOST}:9091)"
    assert str(info.value) == (
        f"[CLUSTER_AUTHORIZATION_FAILED] {info.value.message} "
        f"(describe_metadata_quorum on node 1 ({HOST}:9091))"
    )
    assert net.sleeps == []


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


# ------------------------------------------------------------------ nodes that answer garbage


def test_a_node_answering_garbage_is_skipped_like_an_unreachable_one() -> None:
    net = FakeNetwork(3, leader=2)
    net.nodes[1].handlers[18] = lambda n, v, b: b"\xff" * 7
    with admin(net) as a:
        assert a.describe_metadata_quorum().leader_id == 2
        assert a.describe_cluster().controller is not None
    first = [conn for conn in net.opened if conn.node.node_id == 1]
    assert first and all(conn.closed for conn in first)


def test_a_garbage_answer_mid_call_drops_the_connection_and_is_retried() -> None:
    net = FakeNetwork(1, leader=1)
    answers: list[int] = []

    def once_garbage(node: FakeNode, version: int, body: Any) -> Any:
        answers.append(1)
        node.handlers.pop(55)
        return b"\x00\x01"

    net.nodes[1].handlers[55] = once_garbage
    with admin(net) as a:
        assert a.describe_metadata_quorum().leader_id == 1
    assert len(net.opened) == 2 and net.opened[0].closed


def test_only_garbage_times_out_describing_the_error_in_user_terms() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[60] = lambda n, v, b: b"\x00"
    with admin(net) as a, pytest.raises(KafkaTimeoutError) as info:
        a.describe_cluster(timeout=2)
    message = str(info.value)
    assert "could not be decoded" in message and f"{net.host}:9091" in message
    assert "_Established" not in message and "Error:" not in message


# ------------------------------------------------------------------ failures the transport did not expect


class Exploding(FakeNetwork):
    """Exchanges fail with an error no transport should raise (a bug, an interrupt)."""

    def connect(self, address: Address, timeout: float) -> FakeConnection:
        conn = super().connect(address, timeout)

        def exchange(frame: bytes, timeout: float) -> bytes:
            raise RuntimeError("boom")

        conn.exchange = exchange  # type: ignore[method-assign]
        return conn


def test_an_unexpected_transport_error_surfaces_and_the_connection_is_closed() -> None:
    net = Exploding(1, leader=1)
    with admin(net) as a, pytest.raises(RuntimeError, match="boom"):
        a.describe_cluster()
    assert len(net.opened) == 1 and net.opened[0].closed


def test_a_cancelled_async_call_closes_its_connection_and_leaves_nothing_suspended() -> None:
    net = FakeNetwork(1, leader=1)
    started = asyncio.Event()

    class Slow(AsyncFakeNetwork):
        async def connect(self, address: Address, timeout: float) -> Any:
            conn = await super().connect(address, timeout)
            answer = conn.exchange

            async def exchange(frame: bytes, timeout: float) -> bytes:
                if net.requests:  # ApiVersions answered; the next request hangs
                    started.set()
                    await asyncio.sleep(3600)
                return await answer(frame, timeout)

            conn.exchange = exchange
            return conn

    async def main() -> None:
        async with AsyncAdmin(bootstrap_controllers=net.controllers(), transport=Slow(net), **FAST) as a:
            call = asyncio.create_task(a.describe_cluster())
            await started.wait()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert a._core.connections == {}

    asyncio.run(main())
    assert len(net.opened) == 1 and net.opened[0].closed


@pytest.mark.parametrize(
    ("answer", "reason"), [(DROP, "connection closed"), (b"\x00", "could not be decoded")]
)
def test_retries_used_up_after_a_connection_failed_raise_the_public_connection_error(
    answer: Any, reason: str
) -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[18] = lambda n, v, b: answer
    with (
        Admin(bootstrap_controllers=net.controllers(), transport=net, retries=0) as a,
        pytest.raises(KafkaConnectionError) as info,
    ):
        a.describe_cluster()
    assert type(info.value) is KafkaConnectionError and reason in str(info.value)


def test_authorization_errors_say_who_and_what_grants_it() -> None:
    """CLUSTER_AUTHORIZATION_FAILED names the principal the client is seen as, the API refused and the
    operation on the cluster that allows it, on the controller or through a broker."""
    net = FakeNetwork(3, leader=1)
    text = "Request Request(...) is not authorized."
    refused = messages.DescribeClusterResponse(error_code=31, error_message=text)
    for node in net.nodes.values():
        node.handlers[60] = lambda node, version, body: refused
    with admin(net) as a, pytest.raises(ClusterAuthorizationFailedError) as info:
        a.describe_metadata_quorum()
    refusal = info.value.refusal
    assert refusal is not None
    fields = (refusal.principal, refusal.api, refusal.listener, refusal.operation, refusal.broker_operation)
    assert fields == ("User:ANONYMOUS", "DescribeCluster", "controller", "ALTER", None)
    assert refusal.server_message == text
    assert info.value.message == (
        "User:ANONYMOUS is not authorized to send DescribeCluster to a controller, which allows it to "
        "principals with ALTER on the cluster (the CLUSTER resource, kafka-cluster); an ACL allowing "
        "User:ANONYMOUS ALTER on the cluster grants it; through brokers (bootstrap.servers) DescribeCluster "
        "needs no permission")
    assert info.value.operation == "find the active controller"

    brokers = FakeNetwork(3, leader=1, brokers=1)
    broker = brokers.nodes[101]
    broker.handlers[57] = lambda node, version, body: messages.UpdateFeaturesResponse(error_code=31)
    with admin(brokers, brokers=True) as a, pytest.raises(ClusterAuthorizationFailedError) as through:
        a.update_features({"group.version": 1})
    assert through.value.message == (
        "User:ANONYMOUS is not authorized to send UpdateFeatures through a broker: the active controller it "
        "is forwarded to allows it to principals with ALTER on the cluster (the CLUSTER resource, "
        "kafka-cluster); an ACL allowing User:ANONYMOUS ALTER on the cluster grants it")
    # No message from the server: the error's own text stands for it.
    assert through.value.refusal is not None
    assert through.value.refusal.server_message == "Cluster authorization failed."
