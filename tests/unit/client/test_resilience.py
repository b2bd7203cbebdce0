"""The client against answers that go wrong: a voter change whose answer was lost and whose retry is
refused because the first attempt took effect, nodes that send bytes that are not a response, a
transport that fails in an unexpected way, a cancelled call. No operation is left suspended (which
Python reports as "Exception ignored ... generator ignored GeneratorExit": an error here), and no
private class name reaches a message."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.client.config import Address
from kafka_admin_kraft.client.transport import SocketTransport, StreamTransport
from kafka_admin_kraft.errors import (
    DuplicateVoterError,
    KafkaConnectionError,
    KafkaTimeoutError,
    VoterNotFoundError,
)
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from unit.client.fake import DROP, AsyncFakeNetwork, FakeConnection, FakeNetwork, FakeNode

FAST = {"retry_backoff_ms": 100, "request_timeout_ms": 5000, "default_api_timeout_ms": 20000}
ENDPOINTS = [{"listener": "CONTROLLER", "host": "ctl4", "port": 9094}]


pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


def admin(net: FakeNetwork) -> Admin:
    return Admin(bootstrap_controllers=net.controllers(), transport=net, **FAST)


# ------------------------------------------------------------------ a voter change whose answer was lost


def lost_then(net: FakeNetwork, api_key: int, retry_answer: Any) -> None:
    """The leader takes the first request and the connection drops before it answers (the change took
    effect or not: the client cannot know); the retry gets ``retry_answer``."""
    calls: list[int] = []

    def handler(node: FakeNode, version: int, body: Any) -> Any:
        calls.append(1)
        return DROP if len(calls) == 1 else retry_answer(node)

    net.nodes[1].handlers[api_key] = handler


def new_voter(net: FakeNetwork, directory: Uuid) -> None:
    """Node 4 joins the voter set the fake leader reports in DescribeQuorum."""
    net.nodes[4] = FakeNode(4, 9094, net, directory_id=directory)


def test_add_raft_voter_retried_after_a_lost_answer_succeeds_when_the_voter_set_holds_it() -> None:
    net = FakeNetwork(3, leader=1)
    directory = Uuid.random()

    def duplicate(node: FakeNode) -> Any:
        new_voter(net, directory)  # what the first attempt did
        return messages.AddRaftVoterResponse(error_code=126, error_message="already a voter")

    lost_then(net, 80, duplicate)
    with admin(net) as a:
        a.add_raft_voter(4, directory, ENDPOINTS)
    assert len(net.sent("AddRaftVoter")) == 2
    assert [(node, version) for node, version, _ in net.sent("DescribeQuorum")] == [(1, 3)]


def test_add_raft_voter_retry_refused_for_a_voter_with_another_directory_raises_duplicate_voter() -> None:
    net = FakeNetwork(3, leader=1)

    def duplicate(node: FakeNode) -> Any:
        new_voter(net, Uuid.random())  # node 4 is a voter, but not with the directory id asked for
        return messages.AddRaftVoterResponse(error_code=126, error_message="already a voter")

    lost_then(net, 80, duplicate)
    with admin(net) as a, pytest.raises(DuplicateVoterError, match="already a voter"):
        a.add_raft_voter(4, Uuid.random(), ENDPOINTS)
    assert len(net.sent("DescribeQuorum")) == 1


def test_add_raft_voter_retry_cannot_confirm_without_directory_ids_and_raises() -> None:
    net = FakeNetwork(3, leader=1)
    net.nodes[1].versions[55] = (0, 1)  # DescribeQuorum before v2 carries no directory ids
    directory = Uuid.random()

    def duplicate(node: FakeNode) -> Any:
        new_voter(net, directory)
        return messages.AddRaftVoterResponse(error_code=126)

    lost_then(net, 80, duplicate)
    with admin(net) as a, pytest.raises(DuplicateVoterError):
        a.add_raft_voter(4, directory, ENDPOINTS)
    assert net.sent("DescribeQuorum") == []


def test_a_first_attempt_answered_duplicate_voter_raises_without_looking_at_the_voter_set() -> None:
    net = FakeNetwork(3, leader=1)
    new_voter(net, directory := Uuid.random())
    net.nodes[1].handlers[80] = lambda n, v, b: messages.AddRaftVoterResponse(error_code=126)
    with admin(net) as a, pytest.raises(DuplicateVoterError):
        a.add_raft_voter(4, directory, ENDPOINTS)
    assert net.sent("DescribeQuorum") == []


def test_add_raft_voter_retried_after_not_controller_checks_the_voter_set_too() -> None:
    net = FakeNetwork(3, leader=1)
    directory = Uuid.random()

    def moved(node: FakeNode, version: int, body: Any) -> Any:
        new_voter(net, directory)  # the old leader appended the voter, then lost its leadership
        net.leader = 2
        return messages.AddRaftVoterResponse(error_code=6)

    net.nodes[1].handlers[80] = moved
    net.nodes[2].handlers[80] = lambda n, v, b: messages.AddRaftVoterResponse(error_code=126)
    with admin(net) as a:
        a.add_raft_voter(4, directory, ENDPOINTS)
    assert [node for node, _, _ in net.sent("DescribeQuorum")] == [2]


def test_remove_raft_voter_retried_after_a_lost_answer_succeeds_when_the_voter_is_gone() -> None:
    net = FakeNetwork(3, leader=1)
    directory = net.nodes[3].directory_id

    def not_found(node: FakeNode) -> Any:
        del net.nodes[3]  # what the first attempt did
        return messages.RemoveRaftVoterResponse(error_code=127, error_message="not a voter")

    lost_then(net, 81, not_found)
    with admin(net) as a:
        a.remove_raft_voter(3, directory)
    assert len(net.sent("RemoveRaftVoter")) == 2 and len(net.sent("DescribeQuorum")) == 1


def test_remove_raft_voter_retry_refused_while_the_voter_is_still_there_raises() -> None:
    net = FakeNetwork(3, leader=1)
    lost_then(net, 81, lambda node: messages.RemoveRaftVoterResponse(error_code=127, error_message="nf"))
    with admin(net) as a, pytest.raises(VoterNotFoundError, match="nf"):
        a.remove_raft_voter(3, net.nodes[3].directory_id)


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


def test_a_host_the_idna_codec_refuses_fails_to_connect_like_an_unknown_host() -> None:
    """A node may advertise such a host (DescribeCluster); dialling it is that node's failure."""
    with pytest.raises(KafkaConnectionError, match=r"a\.\.b:9: cannot resolve the host name"):
        SocketTransport().connect(("a..b", 9), 1)

    async def main() -> None:
        with pytest.raises(KafkaConnectionError, match=r"a\.\.b:9: cannot resolve the host name"):
            await StreamTransport().connect(("a..b", 9), 1)

    asyncio.run(main())
