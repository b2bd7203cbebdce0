"""add_raft_voter and remove_raft_voter (``client/operations/raft_voters.py``) through the in-memory
network: the requests, which errors are retried, and a voter change whose answer was lost and whose
retry is refused because the first attempt took effect."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft import Endpoint
from kafka_admin_kraft.errors import (
    DuplicateVoterError,
    NotLeaderOrFollowerError,
    RequestTimedOutError,
    UnsupportedOperationError,
    VoterNotFoundError,
)
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from unit.client.fake import DROP, FakeNetwork, FakeNode, admin

ENDPOINTS = [{"listener": "CONTROLLER", "host": "ctl4", "port": 9094}]


pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


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
