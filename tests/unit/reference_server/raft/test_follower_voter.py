"""What a follower asks its leader about itself (KIP-853): UpdateRaftVoter when its entry differs,
and auto-join."""

from __future__ import annotations

from kafka_admin_kraft_server.raft.api import Endpoint, RaftConfig, ReplicaKey, VoterInfo, VoterSet
from unit.reference_server.raft.raft_testlib import LISTENER, Network, endpoint, make_replica, uuid, voter_set
from unit.reference_server.raft.voter_testlib import BOOTSTRAP, VOTERS, cluster, leader


def test_voters_send_update_raft_voter_when_their_entry_differs() -> None:
    stale = VoterSet({**VOTERS.voters, 3: VoterInfo(ReplicaKey(3, uuid(3)), (Endpoint(LISTENER, "old", 1),),
                                                    0, 1)})
    replicas = [make_replica(node, stale, seed=node) for node in (1, 2)]
    replicas.append(make_replica(3, stale, seed=3, bootstrap_servers=BOOTSTRAP[:2]))
    network = Network(replicas)
    network.run(until=5000)
    for replica in network.replicas.values():
        assert replica.core.voters.voters[3].endpoints == (endpoint(3),)


def test_auto_join_removes_the_stale_directory_then_adds_itself() -> None:
    voters = VoterSet({**voter_set([1, 2, 3]).voters,
                       4: VoterInfo(ReplicaKey(4, uuid(44)), (endpoint(4),), 0, 1)})
    network = cluster(observers=(4,), voters=voters, config=RaftConfig(auto_join_enable=True), until=10000)
    lead = leader(network)
    assert lead.core.voters.voters[4].key == ReplicaKey(4, uuid(4))
    assert network.replicas[4].core.is_voter
    assert lead.core.committed_voters.ids() == {1, 2, 3, 4}
