"""UpdateRaftVoter on the leader (Kafka's UpdateVoterHandler): its refusals, malformed hosts, the
kraft.version 0 -> 1 upgrade once every voter has reported, and Kafka 3.9 and 4.0, which neither send
nor take it at kraft.version 0."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft_server.raft.api import Endpoint, RaftConfig, ReplicaKey
from kafka_admin_kraft_server.raft.core import KRaftUpgradeError, NotLeaderError
from unit.reference_server.raft.raft_testlib import LISTENER, Network, make_replica, uuid
from unit.reference_server.raft.voter_testlib import (
    BAD_HOSTS,
    add_body,
    answer,
    ask,
    cluster,
    leader,
    static_voters,
    update_body,
)


def update(network: Network, node: int,
           body: messages.UpdateRaftVoterRequest) -> messages.UpdateRaftVoterResponse:
    rid = ask(network, node, 82, body, 0)
    response = network.client_replies.pop(rid)
    assert isinstance(response, messages.UpdateRaftVoterResponse)
    return response


def test_update_voter_refusals_and_current_leader() -> None:
    network = cluster(observers=())
    lead = leader(network)
    epoch = lead.core.epoch
    follower = next(i for i in (1, 2, 3) if i != lead.node_id)
    response = update(network, follower, update_body(network, 2))
    assert response.error_code == 6
    assert (response.current_leader.leader_id, response.current_leader.leader_epoch,
            response.current_leader.host, response.current_leader.port) == (
        lead.node_id, epoch, f"n{lead.node_id}", 9000 + lead.node_id)
    node = lead.node_id
    assert update(network, node, update_body(network, 2, cluster_id="x")).error_code == 104
    assert update(network, node, update_body(network, 2, epoch=epoch - 1)).error_code == 74
    assert update(network, node, update_body(network, 2, epoch=epoch + 1)).error_code == 75
    assert update(network, node, update_body(network, 2, directory=ZERO_UUID)).error_code == 42
    assert update(network, node, update_body(network, 2, listeners=[Endpoint("X", "h", 1)])).error_code == 42
    assert update(network, node, update_body(network, 2, low=1, high=0)).error_code == 42
    assert update(network, node, update_body(network, 2, low=0, high=0)).error_code == 42  # excludes 1
    assert update(network, node, update_body(network, 2, directory=uuid(99))).error_code == 127
    assert update(network, node, update_body(network, 9)).error_code == 127
    ok = update(network, node, update_body(network, follower, listeners=[Endpoint(LISTENER, "moved", 7)]))
    assert ok.error_code == 0 and ok.current_leader.leader_id == node
    assert lead.core.voters.voters[follower].endpoints == (Endpoint(LISTENER, "moved", 7),)
    # the new VotersRecord is not committed until someone fetches it
    network.dropped = {1, 2, 3} - {node}
    update(network, node, update_body(network, follower))
    assert update(network, node, update_body(network, follower)).error_code == 7


@pytest.mark.parametrize("host", list(BAD_HOSTS))
def test_update_voter_with_a_malformed_host_is_an_invalid_request(host: str) -> None:
    network = cluster()
    lead = leader(network)
    before = lead.core.voters.voters[2].endpoints
    end_offset = lead.core._log.end_offset()
    body = update_body(network, 2, listeners=[Endpoint(LISTENER, host, 9002)])
    rid = ask(network, lead.node_id, 82, body, 0)
    answered = network.client_replies.pop(rid)
    assert isinstance(answered, messages.UpdateRaftVoterResponse)
    assert answered.error_code == 42
    assert lead.core.voters.voters[2].endpoints == before
    assert lead.core._log.end_offset() == end_offset


def test_upgrade_kraft_version_writes_one_batch_after_every_voter_reported() -> None:
    static = static_voters([1, 2, 3])
    network = cluster(observers=(), voters=static, kraft_version=0)
    lead = leader(network)
    follower = next(r for r in network.replicas.values() if not r.core.is_leader)
    with pytest.raises(NotLeaderError):
        follower.core.upgrade_kraft_version(network.now)
    end = lead.log.end_offset()
    last = lead.core.upgrade_kraft_version(network.now)
    assert last == end + 1  # KRaftVersionRecord + VotersRecord in one batch
    assert lead.core.kraft_version == 1
    keys = {i: v.key for i, v in lead.core.voters.voters.items()}
    assert keys == {i: ReplicaKey(i, uuid(i)) for i in (1, 2, 3)}
    network.run(until=network.now + 1200)
    for replica in network.replicas.values():
        assert replica.core.kraft_version == 1 and replica.core.committed_voters.ids() == {1, 2, 3}
    assert lead.core.upgrade_kraft_version(network.now) == -1
    rid = ask(network, lead.node_id, 80, add_body(4), 0)
    assert answer(network, rid)[0] != 35  # no longer UNSUPPORTED_VERSION


def test_upgrade_kraft_version_refuses_while_a_voter_has_not_reported() -> None:
    static = static_voters([1, 2, 3])
    replicas = [make_replica(node, static, seed=node, kraft_version=0) for node in (1, 2, 3)]
    network = Network(replicas)
    network.dropped = {3}
    network.run(until=5000)
    lead = leader(network)
    with pytest.raises(KRaftUpgradeError, match=r"voters \[3\]"):
        lead.core.upgrade_kraft_version(network.now)
    assert lead.core.kraft_version == 0


BEFORE_4_1 = RaftConfig(pre_vote=False, update_voter_at_kraft_version_0=False)
"""A node of Kafka 3.9 (4.0 has pre-vote, and the same UpdateRaftVoter rules)."""


def test_kafka_3_9_neither_sends_nor_takes_update_voter_at_kraft_version_0() -> None:
    """Before KAFKA-16538 (4.1) a voter of a static quorum does not report itself and a leader answers
    UNSUPPORTED_VERSION; a 4.4 leader with a 3.9 voter therefore cannot upgrade kraft.version until
    that voter runs 4.1 or later."""
    static = static_voters([1, 2, 3])
    sent: list[int] = []
    replicas = [make_replica(node, static, seed=node, kraft_version=0,
                             config=BEFORE_4_1 if node == 3 else None) for node in (1, 2, 3)]
    network = Network(replicas)
    network.on_message = lambda message: sent.append(message.source or 0) if isinstance(
        message.body, messages.UpdateRaftVoterRequest) else None
    network.dropped = {3}
    network.run(until=5000)  # 1 or 2 leads: node 3 has not voted yet
    network.dropped = set()
    network.run(until=network.now + 5000)
    lead = leader(network)
    assert lead.node_id != 3 and 3 not in sent and sent  # the 4.x voter reported, the 3.9 one did not
    with pytest.raises(KRaftUpgradeError, match=r"voters \[3\]"):
        lead.core.upgrade_kraft_version(network.now)
    # A 3.9 leader answers a report at kraft.version 0 UNSUPPORTED_VERSION.
    old = [make_replica(node, static, seed=node, kraft_version=0, config=BEFORE_4_1) for node in (1, 2, 3)]
    old_network = Network(old)
    old_network.run(until=5000)
    old_lead = leader(old_network)
    follower = next(i for i in (1, 2, 3) if i != old_lead.node_id)
    assert update(old_network, old_lead.node_id, update_body(old_network, follower)).error_code == 35
