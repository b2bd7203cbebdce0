"""Connection caps and idle expiry against real controllers: a flood of idle connections under a low
open-file limit never stops the raft driver, idle connections are closed after
connections.max.idle.ms, and max.connections / max.connections.per.ip close the connection over the cap
while the earlier ones and the quorum's own connections keep working."""

from __future__ import annotations

import re
import resource
import selectors
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from integration.client import KafkaClient
from integration.harness import HOST, Cluster, Node, server_command, server_env, wait_until
from kafka_admin_kraft import Admin, FeatureUpdate
from kafka_admin_kraft.models import UpgradeType

OPEN_FILE_LIMIT = 256


def start_with_open_file_limit(cluster: Cluster, limit: int) -> Node:
    """Start node 1 with ``RLIMIT_NOFILE`` at ``limit`` (soft and hard), as ``prlimit`` would."""
    node = cluster.nodes[1]
    node.log_path.parent.mkdir(parents=True, exist_ok=True)

    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    with open(node.log_path, "ab") as out:
        node.process = subprocess.Popen(server_command(node.config_path), stdout=out, stderr=out,
                                        stdin=subprocess.DEVNULL, env=server_env(), cwd=str(cluster.root),
                                        preexec_fn=lower_limit)
    return node


def open_idle(port: int, count: int, timeout: float = 10.0) -> list[socket.socket]:
    """``count`` connections that never send anything, connected in parallel (a burst larger than the
    listen backlog costs one SYN retry, not one per connection)."""
    selector = selectors.DefaultSelector()
    sockets = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex((HOST, port))
        selector.register(sock, selectors.EVENT_WRITE)
        sockets.append(sock)
    pending, deadline = count, time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for key, _ in selector.select(0.5):
            selector.unregister(key.fileobj)
            pending -= 1
    selector.close()
    assert pending == 0, f"{pending} connections did not complete"
    return sockets


def process_descriptors(node: Node) -> int:
    assert node.process is not None
    return len(list(Path(f"/proc/{node.process.pid}/fd").iterdir()))


def test_an_idle_connection_flood_above_the_open_file_limit_never_stops_the_raft_driver(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1).format()
    node = start_with_open_file_limit(cluster, OPEN_FILE_LIMIT)
    _, before = cluster.wait_for_leader(20)
    flood = open_idle(node.port, OPEN_FILE_LIMIT + 150)
    try:
        wait_until(lambda: process_descriptors(node) > OPEN_FILE_LIMIT // 2, 10, "the flood to be accepted")
        # An administrator still gets in, and the node still commits.
        with Admin(bootstrap_controllers=node.address) as admin:
            result = admin.update_features({"streams.version": FeatureUpdate(
                level=0, upgrade_type=UpgradeType.SAFE_DOWNGRADE)})
            assert result["streams.version"].ok
            assert "streams.version" not in admin.describe_features().finalized_features
        after = wait_until(lambda: (q := cluster.quorum_from(1)) is not None
                           and q.high_watermark > before.high_watermark + 1 and q, 10, "new commits")
        assert after.leader_epoch == before.leader_epoch
        assert process_descriptors(node) < OPEN_FILE_LIMIT - 32
    finally:
        for sock in flood:
            sock.close()
    cap = re.search(rf"Accepting at most (\d+) connections: the open-file limit is {OPEN_FILE_LIMIT}",
                    node.output())
    assert cap is not None and 0 < int(cap.group(1)) < OPEN_FILE_LIMIT - 64
    assert "Closing the least recently active connection" in node.output()
    cluster.assert_running()
    output = node.output()
    assert "Unexpected error in the raft driver" not in output and "Traceback" not in output
    assert "Too many open files" not in output


def test_connections_idle_longer_than_connections_max_idle_ms_are_closed(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1, properties={"connections.max.idle.ms": "400"}).format().start_all()
    cluster.wait_for_leader(20)
    node = cluster.nodes[1]
    with node.client() as idle, node.client() as active:
        idle.api_versions()
        started = time.monotonic()
        for _ in range(8):  # 800 ms of a request every 100 ms: never idle for 400 ms
            active.describe_quorum()
            time.sleep(0.1)
        assert idle.is_closed_by_server(3)
        closed_after = time.monotonic() - started
        assert 0.4 <= closed_after < 2.0, closed_after
        assert active.describe_quorum().topics[0].partitions[0].leader_id == 1
    cluster.assert_running()


def client_from(source: str, port: int) -> KafkaClient:
    """A client whose connection comes from ``source`` (another loopback address)."""
    client = KafkaClient(HOST, port)
    client.sock.close()
    client.sock = socket.create_connection((HOST, port), timeout=5, source_address=(source, 0))
    return client


def test_the_connection_over_max_connections_is_closed_and_the_earlier_ones_keep_working(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1, properties={"max.connections": "3"}).format().start_all()
    cluster.wait_for_leader(20)
    node = cluster.nodes[1]
    clients = [node.client() for _ in range(3)]
    try:
        for client in clients:
            assert client.api_versions().error_code == 0
        with node.client() as over:  # it sends nothing: closed when its probation as a voter ends
            assert over.is_closed_by_server(3)
        for client in clients:
            assert client.describe_quorum().topics[0].partitions[0].leader_id == 1
    finally:
        for client in clients:
            client.close()
    with node.client() as later:  # the slots are free again
        assert later.api_versions().error_code == 0
    assert "Rejected connection from /127.0.0.1:" in node.output()
    assert "already has the configured maximum of 3 connections (max.connections)." in node.output()


def test_the_connection_over_max_connections_per_ip_is_closed_other_addresses_are_not(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1, properties={"max.connections.per.ip": "2",
                                          "max.connections.per.ip.overrides": "127.0.0.3:0"})
    cluster.format().start_all()
    cluster.wait_for_leader(20)
    node = cluster.nodes[1]
    with node.client() as first, node.client() as second:
        assert first.api_versions().error_code == 0 and second.api_versions().error_code == 0
        with node.client() as third:
            assert third.is_closed_by_server(3)
        with client_from("127.0.0.2", node.port) as elsewhere:
            assert elsewhere.describe_quorum().topics[0].partitions[0].leader_id == 1
        with client_from("127.0.0.3", node.port) as barred:
            assert barred.is_closed_by_server(3)
        assert first.describe_quorum().topics[0].partitions[0].leader_id == 1
    assert "address already has the configured maximum of 2 connections." in node.output()


def test_a_quorum_keeps_working_when_its_own_connections_are_over_the_caps(
        make_cluster: Callable[..., Cluster]) -> None:
    """Each controller takes two inbound voter connections from 127.0.0.1, one over the per-address cap:
    it stays because its first request comes from a raft client."""
    cluster = make_cluster(3, properties={"max.connections.per.ip": "1",
                                          "max.connections.per.ip.overrides": "127.0.0.2:100"})
    cluster.format().start_all()
    def elected() -> Node | None:
        return next((node for node in cluster.nodes.values()
                     if "Completed transition to Leader" in node.output()), None)

    leader = wait_until(elected, 20, "a leader")
    with client_from("127.0.0.2", leader.port) as client:
        def caught_up() -> bool:
            partition = client.describe_quorum(2).topics[0].partitions[0]
            return len(partition.current_voters) == 3 and all(
                voter.log_end_offset >= partition.high_watermark - 1 for voter in partition.current_voters)
        wait_until(caught_up, 20, "every voter to catch up")
    cluster.assert_running()
