"""Real reference-server processes on 127.0.0.1 for the tests: the local quorum launcher of
``kafka_admin_kraft_server.local`` plus asking nodes over plain sockets and waiting with deadlines."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from integration.client import ConnectionClosed, KafkaClient
from kafka_admin_kraft import Admin
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.local import (
    HOST,
    LISTENER,
    LocalNode,
    LocalQuorum,
    free_ports,
    server_command,
    server_env,
)

__all__ = ["FAST_ELECTIONS", "HOST", "LISTENER", "NOT_LEADER_OR_FOLLOWER", "UNSTABLE_API_VERSIONS", "Cluster",
           "Node", "free_ports", "one_controller", "server_command", "server_env", "wait_until"]

NOT_LEADER_OR_FOLLOWER = 6
FAST_ELECTIONS = {"controller.quorum.election.timeout.ms": "500",
                  "controller.quorum.fetch.timeout.ms": "1000",
                  "controller.quorum.election.backoff.max.ms": "500"}
"""Shorter than Kafka's defaults (1000/2000/1000) to keep the suite quick; the bench uses the defaults."""
UNSTABLE_API_VERSIONS = {"unstable.api.versions.enable": "true"}
"""DescribeQuorum v3 (CommittedVoters) is the project's unreleased version: a node serves it only with
Kafka's switch for versions not yet released."""

T = TypeVar("T")


def wait_until(condition: Callable[[], T | None], timeout: float, what: str, interval: float = 0.05) -> T:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except (OSError, ConnectionClosed, AssertionError) as exc:
            last_error = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for {what}"
                                 + (f" (last error: {last_error})" if last_error else ""))
        time.sleep(interval)


class Node(LocalNode):
    """A local controller the tests can talk to over a plain socket."""

    def client(self, timeout: float = 5.0) -> KafkaClient:
        return KafkaClient(HOST, self.port, timeout=timeout)


class Cluster(LocalQuorum):
    """A local quorum plus the asking and waiting the tests need."""

    nodes: dict[int, Node]  # type: ignore[assignment]

    def new_node(self, node_id: int, port: int) -> Node:
        return Node(node_id, port, Uuid.random(), self.root, line=self.line_of(node_id))

    def assert_running(self) -> None:
        for node in self.exited():
            assert node.process is not None
            raise AssertionError(f"node {node.node_id} exited with {node.process.returncode}:\n"
                                 f"{node.output()[-3000:]}")

    # ---------------------------------------------------------------- asking

    def describe_quorum(self, node_id: int, version: int = 2) -> messages.DescribeQuorumResponse:
        with self.nodes[node_id].client() as client:
            return client.describe_quorum(version)

    def finalized(self, node_id: int) -> dict[str, int]:
        """The feature levels node ``node_id`` has finalized, as its ApiVersions answer says."""
        with self.nodes[node_id].client() as client:
            response = client.api_versions(3)
        return {feature.name: feature.max_version_level for feature in response.finalized_features}

    def admin(self) -> Admin:
        """An Admin client bootstrapped from every controller, with timeouts that ride out elections."""
        return Admin(bootstrap_controllers=self.bootstrap_servers(), default_api_timeout_ms=20000,
                     request_timeout_ms=5000)

    def quorum_from(self, node_id: int) -> Any:
        """The leader's partition data when ``node_id`` is the leader, else None."""
        try:
            response = self.describe_quorum(node_id)
        except (OSError, ConnectionClosed):
            return None
        partition = response.topics[0].partitions[0]
        return partition if partition.error_code == 0 else None

    def find_leader(self, candidates: Iterable[int] | None = None) -> tuple[int, Any] | None:
        self.assert_running()
        for node_id in candidates if candidates is not None else [n.node_id for n in self.running_nodes()]:
            partition = self.quorum_from(node_id)
            if partition is not None and partition.leader_id == node_id:
                return node_id, partition
        return None

    def wait_for_leader(self, timeout: float = 20.0, *, min_epoch: int = 0,
                        candidates: Iterable[int] | None = None) -> tuple[int, Any]:
        ids = list(candidates) if candidates is not None else None

        def found() -> tuple[int, Any] | None:
            hit = self.find_leader(ids)
            return hit if hit is not None and hit[1].leader_epoch >= min_epoch else None

        return wait_until(found, timeout, "a leader answering DescribeQuorum")

    def wait_caught_up(self, leader: int, timeout: float = 20.0, *, since_ms: int = 0) -> Any:
        """Wait until every voter's log end offset reached the leader's high watermark, counting only
        fetches made after ``since_ms`` (wall clock; a restarted voter's old state does not count)."""

        def caught_up() -> Any:
            data = self.quorum_from(leader)
            if data is None or data.high_watermark <= 0:
                return None
            for voter in data.current_voters:
                if voter.replica_id == leader:
                    continue
                if voter.log_end_offset < data.high_watermark or voter.last_fetch_timestamp < since_ms:
                    return None
            return data

        return wait_until(caught_up, timeout, "every voter to reach the high watermark")

    def wait_ready(self, node_id: int, timeout: float = 15.0) -> None:
        node = self.nodes[node_id]

        def ready() -> bool:
            self.assert_running()
            with node.client(timeout=1) as client:
                return client.api_versions().error_code == 0

        wait_until(ready, timeout, f"node {node_id} to answer ApiVersions")


@contextlib.contextmanager
def one_controller(root: Path) -> Iterator[Cluster]:
    """A single reference controller under ``root``, already the quorum's leader; stopped on exit."""
    cluster = Cluster(root, 1, properties=dict(FAST_ELECTIONS))
    try:
        cluster.format().start_all()
        cluster.wait_for_leader(30)
        yield cluster
    finally:
        cluster.close()
