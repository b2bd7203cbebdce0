"""RemoveRaftVoter on the leader (Kafka's RemoveVoterHandler): removing a follower, the refusals,
and a removed leader serving until the change is committed."""

from __future__ import annotations

from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft_server.raft.api import ReplicaKey
from unit.reference_server.raft.raft_testlib import CLUSTER, uuid
from unit.reference_server.raft.voter_testlib import (
    answer,
    ask,
    cluster,
    key_text,
    leader,
    remove_body,
    voters_text,
)


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
