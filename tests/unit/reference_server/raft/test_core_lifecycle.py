"""Restarts, graceful resignation (EndQuorumEpoch), check-quorum, fetch timeouts and durability order."""

from __future__ import annotations

from simulation.memory import MemoryLog, MemoryStore

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import RecordBatch
from kafka_admin_kraft.storage import QuorumState
from kafka_admin_kraft_server.raft.api import RaftConfig
from unit.reference_server.raft.raft_testlib import Network, Replica, make_replica, voter_set

VOTERS = voter_set([1, 2, 3])


def elected(seed_base: int = 0, config: RaftConfig | None = None) -> tuple[Network, Replica]:
    network = Network(
        [make_replica(node, VOTERS, seed=seed_base + node, config=config) for node in (1, 2, 3)]
    )
    while network.leader() is None:
        network.run(until=network.now + 100)
        assert network.now < 30_000
    network.run(until=network.now + 100)
    leader = network.leader()
    assert leader is not None
    return network, leader


def test_restarted_leader_resigns_and_the_epoch_moves_on() -> None:
    network, leader = elected()
    epoch = leader.core.epoch
    restarted = make_replica(leader.node_id, VOTERS, log=leader.log, store=leader.store, now=network.now)
    assert restarted.core.role == "resigned" and restarted.core.epoch == epoch
    assert restarted.core.leader_id == leader.node_id
    network.replicas[leader.node_id] = restarted
    network.run(until=network.now + 8000)
    new_leader = network.leader()
    assert new_leader is not None and new_leader.core.epoch > epoch
    assert all(r.core.leader_id == new_leader.node_id for r in network.replicas.values())


def test_graceful_resignation_hands_over_quickly() -> None:
    config = RaftConfig(election_timeout_ms=5000, fetch_timeout_ms=10_000)
    network, leader = elected(config=config)
    network.run(until=network.now + 12_000)  # everyone has fetched and acknowledged
    epoch, start = leader.core.epoch, network.now
    leader.core.resign(start)
    assert leader.core.role == "resigned"
    network.run(until=start + 1200)  # well below the 5-10 s timeouts
    new_leader = network.leader()
    assert new_leader is not None and new_leader is not leader and new_leader.core.epoch > epoch
    assert leader.core.role == "follower" and leader.core.leader_id == new_leader.node_id


def test_end_quorum_epoch_request_orders_the_candidates() -> None:
    network, leader = elected()
    for _ in range(3):
        leader.core.append([messages.NoOpRecord()], network.now)
    network.pump()
    leader.core.resign(network.now)
    sends = [s for s in leader.core.poll(network.now).sends if s.api_key == 54]
    assert sorted(s.destination.node_id or 0 for s in sends) == sorted(set(VOTERS.ids()) - {leader.node_id})
    body = sends[0].body
    assert isinstance(body, messages.EndQuorumEpochRequest)
    partition = body.topics[0].partitions[0]
    assert (partition.leader_id, partition.leader_epoch) == (leader.node_id, leader.core.epoch)
    assert sorted(c.candidate_id for c in partition.preferred_candidates) == sorted(
        set(VOTERS.ids()) - {leader.node_id}
    )
    assert [c.candidate_id for c in partition.preferred_candidates] == partition.preferred_successors
    try:
        leader.core.append([messages.NoOpRecord()], network.now)
    except Exception as exc:  # NotLeaderError
        assert type(exc).__name__ == "NotLeaderError"
    else:
        raise AssertionError("a resigned leader appended")


def test_isolated_leader_resigns_after_check_quorum_and_the_rest_elect() -> None:
    network, leader = elected(seed_base=10)
    epoch = leader.core.epoch
    network.dropped.add(leader.node_id)
    isolated_at = network.now
    # check-quorum: 1.5 x fetch timeout (2000 ms) without fetches from a majority
    while leader.core.is_leader:
        network.now += 50
        leader.core.poll(network.now)
        assert network.now < isolated_at + 3200
    assert network.now >= isolated_at + 2900
    assert leader.core.role == "resigned"
    network.run(until=network.now + 8000)
    others = [r for r in network.replicas.values() if r is not leader]
    new_leader = next(r for r in others if r.core.is_leader)
    assert new_leader.core.epoch > epoch
    # The isolated node did not bump its epoch over and over: pre-votes failed without the others.
    assert leader.core.epoch == epoch
    network.dropped.clear()
    network.run(until=network.now + 3000)
    assert leader.core.role == "follower" and leader.core.leader_id == new_leader.node_id


def test_followers_elect_a_new_leader_after_the_fetch_timeout() -> None:
    network, leader = elected(seed_base=20)
    network.dropped.add(leader.node_id)
    start = network.now
    network.run(until=start + 10_000)
    others = [r for r in network.replicas.values() if r is not leader]
    leaders = [r for r in others if r.core.is_leader]
    assert len(leaders) == 1 and leaders[0].core.epoch == leader.core.epoch + 1


def test_quorum_state_is_written_before_the_leader_change_batch() -> None:
    order: list[str] = []

    class RecordingStore(MemoryStore):
        def write(self, state: QuorumState) -> None:
            order.append(f"store leader={state.leader_id} epoch={state.leader_epoch}")
            super().write(state)

    class RecordingLog(MemoryLog):
        def append(self, batch: RecordBatch) -> None:
            order.append(f"append epoch={batch.partition_leader_epoch}")
            super().append(batch)

    log = RecordingLog()
    replica = make_replica(1, voter_set([1]), kraft_version=0, log=log, store=RecordingStore())
    replica.core.poll(0)
    assert replica.core.is_leader
    assert order[-2:] == ["store leader=1 epoch=1", "append epoch=1"]


def test_leader_counts_only_its_flushed_log() -> None:
    class LazyLog(MemoryLog):
        flushing = False

        def flush(self) -> None:
            if self.flushing:
                super().flush()

    log = LazyLog()
    replica = make_replica(1, voter_set([1]), kraft_version=0, log=log)
    replica.core.poll(0)
    assert replica.core.is_leader and replica.core.high_watermark == -1  # the LeaderChange is not durable
    replica.core.append([messages.NoOpRecord()], 1)
    replica.core.poll(2)
    assert replica.core.high_watermark == -1
    log.flushing = True
    assert replica.core.poll(3).committed_offset == log.end_offset() == 2


def test_restart_keeps_the_vote_and_the_voter_set_from_the_log() -> None:
    network, leader = elected(seed_base=30)
    follower = next(r for r in network.replicas.values() if r is not leader)
    restarted = make_replica(
        follower.node_id, VOTERS, log=follower.log, store=follower.store, now=network.now
    )
    assert restarted.core.role == "follower" and restarted.core.leader_id == leader.node_id
    assert restarted.core.epoch == leader.core.epoch and restarted.core.voters == VOTERS
    assert restarted.core.kraft_version == 1
