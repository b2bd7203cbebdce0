"""AddRaftVoter, RemoveRaftVoter and UpdateRaftVoter on the leader (Kafka's voter handlers), the high
watermark across voter changes (i.5), UpdateRaftVoter and auto-join from followers (i.6), committed
voters in DescribeQuorum v3 (i.4) and the kraft.version 0 -> 1 upgrade."""

from __future__ import annotations

import pytest
from simulation.memory import MemoryLog

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft_server.raft.api import Address, Endpoint, RaftConfig, ReplicaKey, VoterInfo, VoterSet
from kafka_admin_kraft_server.raft.core import KRaftUpgradeError, NotLeaderError
from kafka_admin_kraft_server.raft.leader import LeaderState
from unit.reference_server.raft.raft_testlib import (
    CLUSTER,
    LISTENER,
    Network,
    Replica,
    describe_request,
    endpoint,
    make_replica,
    request,
    uuid,
    voter_set,
)

VOTERS = voter_set([1, 2, 3])
BOOTSTRAP = (Address("n1", 9001), Address("n2", 9002), Address("n3", 9003))
TIMED_OUT = "The request timed out."


def cluster(observers: tuple[int, ...] = (4,), *, voters: VoterSet = VOTERS, kraft_version: int = 1,
            config: RaftConfig | None = None, until: int = 4000) -> Network:
    replicas = [make_replica(node, voters, seed=node, kraft_version=kraft_version)
                for node in sorted(voters.voters)]
    for node in observers:
        replicas.append(make_replica(node, voters, seed=node, log=MemoryLog(), bootstrap_servers=BOOTSTRAP,
                                     config=config))
    network = Network(replicas)
    network.run(until=until)
    assert network.leader() is not None
    return network


def leader(network: Network) -> Replica:
    replica = network.leader()
    assert replica is not None
    return replica


_ids = iter(range(1, 1000))


def ask(network: Network, node: int, api_key: int, body: Struct, version: int) -> int:
    request_id = next(_ids)
    network.replicas[node].core.handle_request(request(api_key, body, version, request_id), network.now)
    network.pump()
    return request_id


def add_body(voter: int, directory: Uuid | None = None, *, listeners: list[Endpoint] | None = None,
             cluster_id: str | None = CLUSTER, ack: bool = True) -> messages.AddRaftVoterRequest:
    return messages.AddRaftVoterRequest(
        cluster_id=cluster_id, timeout_ms=30000, voter_id=voter,
        voter_directory_id=uuid(voter) if directory is None else directory,
        listeners=[messages.AddRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                   for e in (listeners if listeners is not None else [endpoint(voter)])],
        ack_when_committed=ack)


def remove_body(voter: int, directory: Uuid | None = None, *,
                cluster_id: str | None = CLUSTER) -> messages.RemoveRaftVoterRequest:
    return messages.RemoveRaftVoterRequest(cluster_id=cluster_id, voter_id=voter,
                                           voter_directory_id=uuid(voter) if directory is None else directory)


def update_body(network: Network, voter: int, *, epoch: int | None = None, directory: Uuid | None = None,
                listeners: list[Endpoint] | None = None, low: int = 0, high: int = 1,
                cluster_id: str | None = CLUSTER) -> messages.UpdateRaftVoterRequest:
    return messages.UpdateRaftVoterRequest(
        cluster_id=cluster_id, current_leader_epoch=leader(network).core.epoch if epoch is None else epoch,
        voter_id=voter, voter_directory_id=uuid(voter) if directory is None else directory,
        listeners=[messages.UpdateRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                   for e in (listeners if listeners is not None else [endpoint(voter)])],
        k_raft_version_feature=messages.UpdateRaftVoterRequest.KRaftVersionFeature(
            min_supported_version=low, max_supported_version=high))


def answer(network: Network, request_id: int) -> tuple[int, str | None]:
    body = network.client_replies.pop(request_id)
    assert isinstance(body, messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse)
    return body.error_code, body.error_message


def key_text(node: int, directory: Uuid | None = None) -> str:
    return str(ReplicaKey(node, uuid(node) if directory is None else directory))


def voters_text(ids: list[int]) -> str:
    return "[" + ", ".join(key_text(i) for i in ids) + "]"


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

def test_remove_follower_then_refusals() -> None:
    network = cluster(observers=())
    lead = leader(network)
    follower = next(i for i in (1, 2, 3) if i != lead.node_id)
    rid = ask(network, lead.node_id, 81, remove_body(follower), 0)
    assert answer(network, rid) == (0, None)
    remaining = sorted({1, 2, 3} - {follower})
    assert sorted(lead.core.voters.ids()) == remaining
    network.run(until=network.now + 200)
    rid = ask(network, lead.node_id, 81, remove_body(follower), 0)
    assert answer(network, rid) == (127, f"Cannot remove voter {key_text(follower)} from the set of voters "
                                         f"{voters_text(remaining)}")
    other = next(i for i in remaining if i != lead.node_id)
    rid = ask(network, lead.node_id, 81, remove_body(other, uuid(77)), 0)  # wrong directory id
    assert answer(network, rid)[0] == 127
    rid = ask(network, lead.node_id, 81, remove_body(other, ZERO_UUID), 0)
    assert answer(network, rid) == (42, "Remove voter request didn't include a valid voter")
    rid = ask(network, lead.node_id, 81, remove_body(other, cluster_id="x"), 0)
    assert answer(network, rid) == (104, f'The given id "x" doesn\'t match the cluster id "{CLUSTER}"')
    # the last voter cannot be removed
    rid = ask(network, lead.node_id, 81, remove_body(other), 0)
    assert answer(network, rid) == (0, None)
    network.run(until=network.now + 200)
    rid = ask(network, lead.node_id, 81, remove_body(lead.node_id), 0)
    only = lead.node_id
    assert answer(network, rid) == (127, f"Cannot remove voter {key_text(only)} from the set of voters "
                                         f"{voters_text([only])}")


def test_removed_leader_serves_until_committed_then_resigns() -> None:
    network = cluster(observers=())
    lead = leader(network)
    old = lead.node_id
    old_epoch = lead.core.epoch
    rid = ask(network, old, 81, remove_body(old), 0)
    assert answer(network, rid) == (0, None)
    assert not lead.core.is_voter
    network.run(until=network.now + 5000)
    new = leader(network)
    assert new.node_id != old and new.core.epoch > old_epoch
    assert sorted(new.core.voters.ids()) == sorted({1, 2, 3} - {old})
    state = new.core.leader_state()
    assert state is not None and ReplicaKey(old, uuid(old)) in state.observer_states  # now an observer
    hwm = new.core.high_watermark
    network.run(until=network.now + 500)
    assert new.core.high_watermark >= hwm


# ---------------------------------------------------------------------------------------------
# High watermark with voter changes (i.5)
# ---------------------------------------------------------------------------------------------

def _leader_state(ids: list[int]) -> LeaderState:
    state = LeaderState(1, ReplicaKey(1, uuid(1)), 10, voter_set(ids), frozenset(ids), 3000, 0)
    return state


def test_hwm_adding_a_lagging_voter_raises_the_threshold_but_never_goes_back() -> None:
    state = _leader_state([1, 2, 3])
    state.update_local_state(100, 0)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 0, 100, 100)
    assert state.high_watermark == 100
    state.update_replica_state(ReplicaKey(4, uuid(4)), 0, 20, 100)  # observer: never moves the HWM
    state.update_voter_set(voter_set([1, 2, 3, 4, 5]))  # 4 at 20, 3 and 5 unknown
    state.update_local_state(120, 1)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 1, 120, 120)
    assert state.high_watermark == 100  # candidate = 20 (index 2): kept, never decreases
    state.update_replica_state(ReplicaKey(4, uuid(4)), 2, 120, 120)
    assert state.high_watermark == 120


def test_hwm_removing_a_voter_lowers_the_threshold_and_a_non_voter_leader_is_not_counted() -> None:
    state = _leader_state([1, 2, 3, 4])
    state.update_local_state(50, 0)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 0, 50, 50)
    assert state.high_watermark is None  # 2 of 4
    state.update_voter_set(voter_set([1, 2, 3]))
    assert state.maybe_update_high_watermark() and state.high_watermark == 50
    state.update_voter_set(voter_set([2, 3, 4]))  # the leader removed itself
    state.update_local_state(80, 1)
    state.update_replica_state(ReplicaKey(2, uuid(2)), 1, 80, 80)
    assert state.high_watermark == 50  # only 2 of {2, 3, 4} at 80
    state.update_replica_state(ReplicaKey(3, uuid(3)), 1, 70, 80)
    assert state.high_watermark == 70


# ---------------------------------------------------------------------------------------------
# UpdateRaftVoter
# ---------------------------------------------------------------------------------------------

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


def test_voters_send_update_raft_voter_when_their_entry_differs() -> None:
    stale = VoterSet({**VOTERS.voters, 3: VoterInfo(ReplicaKey(3, uuid(3)), (Endpoint(LISTENER, "old", 1),),
                                                    0, 1)})
    replicas = [make_replica(node, stale, seed=node) for node in (1, 2)]
    replicas.append(make_replica(3, stale, seed=3, bootstrap_servers=BOOTSTRAP[:2]))
    network = Network(replicas)
    network.run(until=5000)
    for replica in network.replicas.values():
        assert replica.core.voters.voters[3].endpoints == (endpoint(3),)


def static_voters(ids: list[int]) -> VoterSet:
    """``controller.quorum.voters``: no directory ids, kraft.version 0..0."""
    return VoterSet({i: VoterInfo(ReplicaKey(i), (endpoint(i),), 0, 0) for i in ids})


# ---------------------------------------------------------------------------------------------
# Auto-join, kraft.version upgrade
# ---------------------------------------------------------------------------------------------

def test_auto_join_removes_the_stale_directory_then_adds_itself() -> None:
    voters = VoterSet({**voter_set([1, 2, 3]).voters,
                       4: VoterInfo(ReplicaKey(4, uuid(44)), (endpoint(4),), 0, 1)})
    network = cluster(observers=(4,), voters=voters, config=RaftConfig(auto_join_enable=True), until=10000)
    lead = leader(network)
    assert lead.core.voters.voters[4].key == ReplicaKey(4, uuid(4))
    assert network.replicas[4].core.is_voter
    assert lead.core.committed_voters.ids() == {1, 2, 3, 4}


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
