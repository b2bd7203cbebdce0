"""AddRaftVoter on the leader (Kafka's AddVoterHandler): answered once committed (or on append without
ack), timeouts, lost leadership, the refusals in Kafka's order, the ApiVersions check of the new voter,
and endpoints whose host is no valid host name or IP address."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft_server.raft.api import Endpoint
from kafka_admin_kraft_server.raft.leader import LeaderState
from unit.reference_server.raft.raft_testlib import CLUSTER, LISTENER, describe_request, request, uuid
from unit.reference_server.raft.voter_testlib import (
    BAD_HOSTS,
    add_body,
    answer,
    ask,
    cluster,
    key_text,
    leader,
    remove_body,
    static_voters,
    update_body,
    voters_text,
)

TIMED_OUT = "The request timed out."


# ---------------------------------------------------------------------------------------------
# AddRaftVoter
# ---------------------------------------------------------------------------------------------

def test_add_voter_answers_once_committed_and_the_new_voter_counts_at_once() -> None:
    network = cluster()
    lead = leader(network)
    request_id = ask(network, lead.node_id, 80, add_body(4), 0)
    assert lead.core.voters.ids() == {1, 2, 3, 4}
    # Delivered at once on this lossless network: committed within the same pump.
    assert answer(network, request_id) == (0, None)
    network.run(until=network.now + 1200)  # fetches wait up to 500 ms for a new high watermark
    for replica in network.replicas.values():
        assert replica.core.voters.ids() == {1, 2, 3, 4}
        assert replica.core.committed_voters.ids() == {1, 2, 3, 4}
    assert network.replicas[4].core.is_voter


def test_add_voter_v1_without_ack_answers_after_the_append_and_stays_pending() -> None:
    network = cluster()
    lead = leader(network)
    network.dropped = {2, 3}  # the new voter set {1, 2, 3, 4} cannot commit with 1 and 4 alone
    lead.core.handle_request(request(80, add_body(4, ack=False), 1, 7), network.now)
    network.pump()
    assert lead.core.voters.ids() == {1, 2, 3, 4}
    assert answer(network, 7) == (0, None)  # answered on append
    second = ask(network, lead.node_id, 81, remove_body(2), 0)
    assert answer(network, second) == (7, "Request timed out waiting for leader to handle previous voter "
                                           "change request")
    # DescribeQuorum v3: CommittedVoters differ from CurrentVoters while the change is pending.
    lead.core.handle_request(request(55, describe_request(), 3, 8), network.now)
    network.pump()
    partition = network.client_replies.pop(8).topics[0].partitions[0]  # type: ignore[attr-defined]
    assert [v.replica_id for v in partition.current_voters] == [1, 2, 3, 4]
    assert [v.replica_id for v in partition.committed_voters] == [1, 2, 3]


def test_add_voter_times_out_after_the_request_timeout() -> None:
    network = cluster()
    lead = leader(network)
    network.dropped = {2, 3}
    lead.core.handle_request(request(80, add_body(4), 0, 9), network.now)
    network.pump()
    assert lead.core.voters.ids() == {1, 2, 3, 4}
    start = network.now
    network.run(until=start + 1990)
    assert 9 not in network.client_replies
    network.run(until=start + 2100)
    assert answer(network, 9) == (7, TIMED_OUT)


def test_add_voter_pending_answers_not_leader_when_leadership_is_lost() -> None:
    network = cluster()
    lead = leader(network)
    network.dropped = {2, 3}
    lead.core.handle_request(request(80, add_body(4), 0, 10), network.now)
    network.pump()
    assert 10 not in network.client_replies
    lead.core.resign(network.now)
    network.pump()
    error, message = answer(network, 10) if 10 in network.client_replies else (None, None)
    assert (error, message) == (6, "For requests intended only for the leader, this error indicates that "
                                   "the broker is not the current leader. For requests intended for any "
                                   "replica, this error indicates that the broker is not a replica of the "
                                   "topic partition.")


def test_add_voter_refusals_in_kafka_order() -> None:
    network = cluster(observers=(4, 5))
    lead = leader(network)
    follower = next(r for r in network.replicas.values() if r.node_id in (1, 2, 3) and not r.core.is_leader)
    # 1. cluster id (checked before leadership)
    rid = ask(network, follower.node_id, 80, add_body(4, cluster_id="other"), 0)
    assert answer(network, rid) == (104, f'The given id "other" doesn\'t match the cluster id "{CLUSTER}"')
    rid = ask(network, lead.node_id, 80, add_body(4, cluster_id=None), 0)  # null: accepted
    assert answer(network, rid) == (0, None)
    # 2. not the leader
    rid = ask(network, follower.node_id, 80, add_body(5), 0)
    assert answer(network, rid) == (6, None)
    # 3. invalid voter key
    rid = ask(network, lead.node_id, 80, add_body(5, ZERO_UUID), 0)
    assert answer(network, rid) == (42, "Add voter request didn't include a valid voter")
    rid = ask(network, lead.node_id, 80, add_body(-1, uuid(9)), 0)
    assert answer(network, rid) == (42, "Add voter request didn't include a valid voter")
    # 4. no endpoint for the default listener
    rid = ask(network, lead.node_id, 80, add_body(5, listeners=[Endpoint("OTHER", "h", 1),
                                                                  Endpoint("X", "n5", 2)]), 0)
    assert answer(network, rid) == (
        42, "Add voter request didn't include the endpoint (Endpoints(endpoints={ListenerName(OTHER)="
            "h/<unresolved>:1, ListenerName(X)=n5/<unresolved>:2})) for the default listener "
            "ListenerName(CONTROLLER)")
    # 9. duplicate voter (any directory id)
    rid = ask(network, lead.node_id, 80, add_body(2, uuid(99)), 0)
    voters = voters_text([1, 2, 3, 4])
    assert answer(network, rid) == (
        126, f"The voter id for {key_text(2, uuid(99))} is already part of the set of voters {voters}.")


def test_add_voter_refused_while_the_latest_voters_record_is_uncommitted() -> None:
    network = cluster()
    lead = leader(network)
    network.dropped = {2, 3}
    rid = ask(network, lead.node_id, 82, update_body(network, lead.node_id, listeners=[
        Endpoint(LISTENER, "n-new", 1)]), 0)
    body = network.client_replies.pop(rid)
    assert isinstance(body, messages.UpdateRaftVoterResponse) and body.error_code == 0
    record_offset = lead.core._history.last_voters_offset()
    hwm = lead.core.leader_high_watermark
    assert record_offset is not None and record_offset >= hwm
    rid = ask(network, lead.node_id, 80, add_body(4), 0)
    assert answer(network, rid) == (
        7, f"Request timed out waiting for voters to commit the latest voter change at "
           f"Optional[{record_offset}] with HWM {hwm}")


def test_add_voter_refused_without_a_high_watermark_in_this_epoch() -> None:
    network = cluster()
    lead = leader(network)
    state = lead.core.leader_state()
    assert isinstance(state, LeaderState)
    state.high_watermark = None  # a new leader whose first batch is not committed yet
    network.dropped = {2, 3}
    rid = ask(network, lead.node_id, 80, add_body(4), 0)
    assert answer(network, rid) == (7, "Request timed out waiting for leader to establish HWM and fence "
                                       "previous voter changes")
    state.high_watermark = None  # the poll of the pump counted the leader's end offset again
    rid = ask(network, lead.node_id, 81, remove_body(2), 0)
    assert answer(network, rid) == (7, "Request timed out waiting for leader to establish HWM and fence "
                                       "previous voter changes")
    state.high_watermark = None
    describe = lead.core.describe_quorum(3, network.now)
    assert describe.topics[0].partitions[0].committed_voters == []


def test_add_voter_on_a_static_quorum_is_unsupported() -> None:
    network = cluster(observers=(), voters=static_voters([1, 2, 3]), kraft_version=0)
    lead = leader(network)
    rid = ask(network, lead.node_id, 80, add_body(4), 0)
    assert answer(network, rid) == (35, "Cluster doesn't support adding voter because the kraft.version "
                                        "feature is 0")
    rid = ask(network, lead.node_id, 81, remove_body(2), 0)
    assert answer(network, rid) == (35, "Cluster doesn't support removing voter because the kraft.version "
                                        "feature is 0")


def test_add_voter_aborts_on_the_api_versions_answer() -> None:
    network = cluster(observers=(4,))
    lead = leader(network)
    # 12: ApiVersions cannot reach the new voter (no such node)
    rid = ask(network, lead.node_id, 80, add_body(7), 0)
    assert answer(network, rid) == (7, "Aborted add voter operation for since API_VERSIONS returned an error "
                                       "BROKER_NOT_AVAILABLE")
    # 13: the kraft.version range excludes the finalized version 1
    network.kraft_ranges[4] = (0, 0)
    rid = ask(network, lead.node_id, 80, add_body(4), 0)
    assert answer(network, rid) == (42, f"Aborted add voter operation for {key_text(4)} since the "
                                        f"kraft.version range (min: 0, max: 0 doesn't support the "
                                        f"finalized version 1")
    del network.kraft_ranges[4]
    # 14: not fetching as an observer with exactly this replica key
    rid = ask(network, lead.node_id, 80, add_body(4, uuid(44)), 0)
    assert answer(network, rid) == (7, f"Aborted add voter operation for {key_text(4, uuid(44))} since it is "
                                       f"lagging behind")
    assert lead.core.voters.ids() == {1, 2, 3}


def test_add_voter_not_ready_while_a_request_is_in_flight() -> None:
    network = cluster()
    lead = leader(network)
    network.dropped = {2, 3}  # keep the ApiVersions of the first add unanswered: nothing delivers it
    lead.core.handle_request(request(80, add_body(4), 0, 20), network.now)
    result = lead.core.poll(network.now)  # the ApiVersions send is taken and never answered
    assert any(send.api_key == 18 for send in result.sends)
    lead.core.handle_request(request(80, add_body(4), 0, 21), network.now)
    replies = {reply.request_id: reply.body for reply in lead.core.poll(network.now).replies}
    body = replies[21]
    assert isinstance(body, messages.AddRaftVoterResponse)
    assert (body.error_code, body.error_message) == (7, "Request timed out waiting for leader to handle "
                                                        "previous voter change request")


# ---------------------------------------------------------------------------------------------
# RemoveRaftVoter
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# High watermark with voter changes (i.5)
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# UpdateRaftVoter
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Auto-join, kraft.version upgrade
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", list(BAD_HOSTS))
def test_add_voter_with_a_malformed_host_is_an_invalid_request(host: str) -> None:
    network = cluster()
    lead = leader(network)
    end_offset = lead.core._log.end_offset()
    rid = ask(network, lead.node_id, 80, add_body(4, listeners=[Endpoint(LISTENER, host, 9004)]), 0)
    code, message = answer(network, rid)
    assert code == 42
    assert message is not None and message.startswith(
        "Add voter request has an invalid endpoint for listener ListenerName(CONTROLLER): the host ")
    assert BAD_HOSTS[host] in message and "\x00" not in message
    assert lead.core.voters.ids() == {1, 2, 3}
    assert lead.core._log.end_offset() == end_offset


def test_a_malformed_host_on_another_listener_is_refused_too() -> None:
    network = cluster()
    lead = leader(network)
    rid = ask(network, lead.node_id, 80, add_body(4, listeners=[Endpoint(LISTENER, "n4", 9004),
                                                                  Endpoint("OTHER", "bad..host", 1)]), 0)
    assert answer(network, rid) == (42, "Add voter request has an invalid endpoint for listener "
                                        "ListenerName(OTHER): the host 'bad..host' has an empty label")


@pytest.mark.parametrize("host", ["n4", "127.0.0.1", "::1", "fe80::1%eth0", "kafka_1.example.com."])
def test_valid_hosts_pass_the_endpoint_check(host: str) -> None:
    network = cluster()
    lead = leader(network)
    rid = ask(network, lead.node_id, 80, add_body(4, listeners=[Endpoint(LISTENER, host, 9004)]), 0)
    code, message = answer(network, rid)
    assert code != 42 or "invalid endpoint" not in (message or "")
