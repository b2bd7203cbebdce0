"""Controller registration (KIP-919) on real processes: three voters and an observer formatted with
``--no-initial-controllers`` all register with the active controller, so that DescribeCluster sent to
any controller (through the SDK, as ``Admin(bootstrap_controllers=...)`` does) lists all four; the
RegisterControllerRecords are in the metadata log and in snapshots; a restarted controller registers
its new incarnation, with a new leader; and a controller that died stays listed, as Kafka keeps
registrations."""

from __future__ import annotations

import signal
from collections.abc import Callable

from integration.harness import FAST_ELECTIONS, HOST, LISTENER, Cluster, wait_until
from integration.test_kip853 import add_controller
from kafka_admin_kraft import Admin
from kafka_admin_kraft.errors import KafkaAdminError
from kafka_admin_kraft.features import SUPPORTED_FEATURES
from kafka_admin_kraft.models import ClusterDescription
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError as CodecError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataLogDir,
    RecordBatch,
    decode_metadata_batch,
    list_snapshots,
    read_snapshot,
)

Make = Callable[..., Cluster]
Registrations = list[messages.RegisterControllerRecord]


def registrations(batches: list[RecordBatch]) -> Registrations:
    """The RegisterControllerRecords of these batches, in order."""
    return [record.message for batch in batches if not batch.is_control
            for record in decode_metadata_batch(batch) if isinstance(record, ApiMessageAndVersion)
            and isinstance(record.message, messages.RegisterControllerRecord)]


def logged(cluster: Cluster, node_id: int) -> Registrations:
    """What a node's latest snapshot and log hold (read while it runs: a torn tail is left out)."""
    try:
        return registrations(list(MetadataLogDir(cluster.nodes[node_id].partition_dir).read_all()))
    except CodecError:
        return []


def latest(found: Registrations) -> dict[int, Uuid]:
    """Controller id -> incarnation id of its latest registration."""
    return {record.controller_id: record.incarnation_id for record in found}


def admin(cluster: Cluster) -> Admin:
    return Admin(bootstrap_controllers=cluster.bootstrap_servers(), request_timeout_ms=5000,
                 default_api_timeout_ms=15000)


def listed(client: Admin, expected: list[tuple[int, str, int]]) -> Callable[[], ClusterDescription | None]:
    def check() -> ClusterDescription | None:
        try:
            description = client.describe_cluster()
        except KafkaAdminError:
            return None
        return description if [(n.node_id, n.host, n.port) for n in description.nodes] == expected else None

    return check


def four_controllers(make_cluster: Make) -> tuple[Cluster, int]:
    """Three voters, and node 4 formatted with ``--no-initial-controllers`` (an observer), all running;
    the leader's id."""
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS)).format().start_all()
    leader, _ = cluster.wait_for_leader(30)
    add_controller(cluster, 4)
    cluster.start(4)
    return cluster, leader


def endpoints(cluster: Cluster) -> list[tuple[int, str, int]]:
    return [(node_id, HOST, cluster.nodes[node_id].port) for node_id in sorted(cluster.nodes)]


def test_voters_and_an_observer_register_and_every_controller_lists_them(make_cluster: Make) -> None:
    cluster, leader = four_controllers(make_cluster)
    with admin(cluster) as client:
        description = wait_until(listed(client, endpoints(cluster)), 20, "the 4 controllers listed")
        assert description.cluster_id == cluster.cluster_id
        assert description.controller is not None and description.controller.node_id == leader
        voters = {voter.replica_id for voter in client.describe_metadata_quorum().voters}
    assert voters == {1, 2, 3}  # node 4 is listed because it registered, not as a voter
    # Every controller answers from its own committed image, the observer included.
    for node_id in cluster.nodes:
        def answer(n: int = node_id) -> messages.DescribeClusterResponse | None:
            with cluster.nodes[n].client() as raw:
                response = raw.request(messages.DescribeClusterRequest(endpoint_type=2), 2)
            found = [(b.broker_id, b.host, b.port) for b in response.brokers]
            return response if found == endpoints(cluster) and response.controller_id == leader else None

        wait_until(answer, 20, f"node {node_id} to list the 4 controllers")
    # The leader's log holds one registration per process, as each controller advertised itself.
    found = wait_until(lambda: len(latest(r := logged(cluster, leader))) == 4 and r, 20, "4 registrations")
    assert len({record.incarnation_id for record in found}) == len(found) == 4
    for record in found:
        node = cluster.nodes[record.controller_id]
        assert record.zk_migration_ready is False
        assert [(e.name, e.host, e.port, e.security_protocol) for e in record.end_points] == [
            (LISTENER, HOST, node.port, 0)]
        assert [(f.name, f.min_supported_version, f.max_supported_version) for f in record.features] == [
            *SUPPORTED_FEATURES]
    cluster.assert_running()


def test_a_restarted_controller_registers_again_and_a_dead_one_stays_listed(make_cluster: Make) -> None:
    cluster, leader = four_controllers(make_cluster)
    first = wait_until(lambda: len(got := latest(logged(cluster, leader))) == 4 and got, 20,
                       "4 registrations")
    # The leader stops gracefully and comes back as a new incarnation, registering with the new leader.
    _, before = cluster.wait_for_leader()
    assert cluster.kill(leader, signal.SIGTERM) == 0
    others = [n for n in cluster.nodes if n not in (leader, 4)]
    new_leader, _ = cluster.wait_for_leader(20, min_epoch=before.leader_epoch + 1, candidates=others)
    cluster.start(leader)

    def reregistered() -> dict[int, Uuid] | None:
        now = latest(logged(cluster, new_leader))
        return now if now.get(leader, first[leader]) != first[leader] else None

    now = wait_until(reregistered, 30, f"node {leader} to register a new incarnation")
    assert {i: now[i] for i in now if i != leader} == {i: first[i] for i in first if i != leader}
    # kill -9 the observer: its registration stays, so it stays listed (Kafka never drops one).
    cluster.kill(4)
    with admin(cluster) as client:
        description = wait_until(listed(client, endpoints(cluster)), 20, "the 4 controllers, 4 included")
        assert description.controller is not None and description.controller.node_id == new_leader
    # A snapshot keeps the latest registration of each controller.
    node = cluster.nodes[new_leader]
    taken = set(list_snapshots(node.partition_dir))
    assert node.process is not None
    node.process.send_signal(signal.SIGUSR1)
    snapshot = wait_until(lambda: sorted(set(list_snapshots(node.partition_dir)) - taken), 20,
                          "a snapshot")[-1]
    kept = registrations(list(read_snapshot(node.partition_dir / snapshot.file_name)))
    assert sorted(record.controller_id for record in kept) == [1, 2, 3, 4]
    assert latest(kept) == now
    cluster.assert_running()
