"""A leader killed during add_raft_voter, on real processes: the leader commits the new voter and dies
before its answer reaches the client, so the retry on the new leader is refused with DUPLICATE_VOTER;
the client sees the voter set holds exactly that voter and directory id, and reports success."""

from __future__ import annotations

from collections.abc import Callable

from integration.harness import HOST, LISTENER, Cluster, wait_until
from tools.cluster_util import add_observer_controller

from kafka_admin_kraft import Admin
from kafka_admin_kraft.client.config import Address
from kafka_admin_kraft.client.transport import SocketConnection, SocketTransport
from kafka_admin_kraft.errors import KafkaConnectionError

ADD_RAFT_VOTER = 80


class LeaderDiesAfterAnswering(SocketTransport):
    """Real sockets; the first AddRaftVoter answer is lost because its sender is killed (then this waits
    until a new leader has a high watermark, as a client would see a little later)."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__()
        self.cluster = cluster
        self.killed: int | None = None

    def connect(self, address: Address, timeout: float) -> SocketConnection:
        conn = super().connect(address, timeout)
        exchange = conn.exchange

        def exchange_then_kill(frame: bytes, timeout: float) -> bytes:
            answer = exchange(frame, timeout)
            if int.from_bytes(frame[4:6], "big") == ADD_RAFT_VOTER and self.killed is None:
                self.lose_answer(address[1])
                raise KafkaConnectionError(conn.label, "connection closed by the server")
            return answer

        conn.exchange = exchange_then_kill  # type: ignore[method-assign]
        return conn

    def lose_answer(self, port: int) -> None:
        leader = next(n.node_id for n in self.cluster.nodes.values() if n.port == port)
        committed = self.cluster.describe_quorum(leader).topics[0].partitions[0].high_watermark
        self.cluster.kill(leader)
        self.killed = leader

        def new_leader_has_committed() -> bool:
            found = self.cluster.find_leader()
            return found is not None and found[0] != leader and found[1].high_watermark > committed

        wait_until(new_leader_has_committed, 20, "a new leader with a high watermark")


def test_add_raft_voter_whose_leader_died_after_committing_succeeds(
    make_cluster: Callable[..., Cluster],
) -> None:
    cluster = make_cluster(3)
    cluster.wait_for_leader(30)
    bootstrap = cluster.bootstrap_servers()
    new = add_observer_controller(cluster, 4)

    def observed() -> bool:
        found = cluster.find_leader()
        return found is not None and any(
            (o.replica_id, o.replica_directory_id) == (4, new.directory_id) and o.last_caught_up_timestamp > 0
            for o in found[1].observers
        )

    wait_until(observed, 20, "node 4 caught up as an observer")
    transport = LeaderDiesAfterAnswering(cluster)
    with Admin(bootstrap_controllers=bootstrap, transport=transport, request_timeout_ms=5000,
               default_api_timeout_ms=30000) as admin:
        admin.add_raft_voter(4, new.directory_id, {LISTENER: (HOST, new.port)})
        assert transport.killed is not None
        quorum = admin.describe_metadata_quorum()
    assert quorum.leader_id != transport.killed
    assert (4, new.directory_id) in {(v.replica_id, v.replica_directory_id) for v in quorum.voters}
