"""Real reference-server processes on 127.0.0.1: format, configure, start, kill, ask.

Directories are formatted with the project's storage writers exactly as ``kafka-storage format``
does: ``meta.properties`` and ``bootstrap.checkpoint`` (Kafka 4.2 defaults: metadata.version 4.2-IV1
and its default feature levels) everywhere, plus, for a dynamic quorum (``--initial-controllers``),
the bootstrap snapshot ``00000000000000000000-0000000000.checkpoint`` holding every voter. A static
quorum gets ``controller.quorum.voters`` in its properties instead. Every wait polls against a
deadline; ``Cluster.close`` kills whatever is still running.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from integration.client import ConnectionClosed, KafkaClient
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import METADATA_PARTITION_DIR
from kafka_admin_kraft.storage import (
    InitialController,
    MetaProperties,
    bootstrap_records,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
    write_meta_properties,
)

ROOT = Path(__file__).resolve().parents[2]
LISTENER = "CONTROLLER"
HOST = "127.0.0.1"
METADATA_VERSION = 29
DEFAULT_FEATURES = {"eligible.leader.replicas.version": 1, "group.version": 1, "share.version": 1,
                    "streams.version": 1, "transaction.version": 2}
NOT_LEADER_OR_FOLLOWER = 6
FAST_ELECTIONS = {"controller.quorum.election.timeout.ms": "500",
                  "controller.quorum.fetch.timeout.ms": "1000",
                  "controller.quorum.election.backoff.max.ms": "500"}
"""Shorter than Kafka's defaults (1000/2000/1000) to keep the suite quick; the bench uses the defaults."""

T = TypeVar("T")


def free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind((HOST, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


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


def random_cluster_id() -> str:
    return str(Uuid.random())


@dataclass
class Node:
    node_id: int
    port: int
    directory_id: Uuid
    root: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def metadata_dir(self) -> Path:
        return self.root / f"node-{self.node_id}" / "metadata"

    @property
    def partition_dir(self) -> Path:
        return self.metadata_dir / METADATA_PARTITION_DIR

    @property
    def config_path(self) -> Path:
        return self.root / f"node-{self.node_id}" / "controller.properties"

    @property
    def log_path(self) -> Path:
        return self.root / f"node-{self.node_id}" / "server.log"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def client(self, timeout: float = 5.0) -> KafkaClient:
        return KafkaClient(HOST, self.port, timeout=timeout)


def server_command(config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "reference_server", "--config", str(config), *extra]


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


@dataclass
class Cluster:
    """``size`` controllers on free loopback ports under ``root``."""

    root: Path
    size: int
    dynamic: bool = True
    properties: dict[str, str] = field(default_factory=dict)
    cluster_id: str = field(default_factory=random_cluster_id)
    nodes: dict[int, Node] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ports = free_ports(self.size)
        for index, port in enumerate(ports):
            node_id = index + 1
            self.nodes[node_id] = Node(node_id, port, Uuid.random(), self.root)

    # ---------------------------------------------------------------- files

    def voters_string(self) -> str:
        return ",".join(f"{n.node_id}@{HOST}:{n.port}" for n in self.nodes.values())

    def bootstrap_servers(self) -> str:
        return ",".join(f"{HOST}:{n.port}" for n in self.nodes.values())

    def node_properties(self, node: Node) -> dict[str, str]:
        props = {
            "process.roles": "controller",
            "node.id": str(node.node_id),
            "listeners": f"{LISTENER}://{HOST}:{node.port}",
            "advertised.listeners": f"{LISTENER}://{HOST}:{node.port}",
            "controller.listener.names": LISTENER,
            "listener.security.protocol.map": f"{LISTENER}:PLAINTEXT",
            "log.dirs": str(node.metadata_dir),
            "metadata.log.dir": str(node.metadata_dir),
        }
        if self.dynamic:
            props["controller.quorum.bootstrap.servers"] = self.bootstrap_servers()
        else:
            props["controller.quorum.voters"] = self.voters_string()
        props.update(self.properties)
        return props

    def write_config(self, node: Node, overrides: dict[str, str] | None = None) -> Path:
        props = self.node_properties(node)
        props.update(overrides or {})
        node.config_path.parent.mkdir(parents=True, exist_ok=True)
        node.config_path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        return node.config_path

    def format_node(self, node: Node) -> None:
        """What ``kafka-storage format --cluster-id <id> [--initial-controllers <list>]`` writes."""
        node.metadata_dir.mkdir(parents=True, exist_ok=True)
        write_meta_properties(node.metadata_dir, MetaProperties(version=1, cluster_id=self.cluster_id,
                                                                node_id=node.node_id,
                                                                directory_id=node.directory_id))
        write_bootstrap_checkpoint(node.metadata_dir, bootstrap_records(METADATA_VERSION, DEFAULT_FEATURES))
        if self.dynamic:
            controllers = [InitialController(n.node_id, HOST, n.port, n.directory_id)
                           for n in self.nodes.values()]
            write_bootstrap_snapshot(node.metadata_dir, controllers, LISTENER)

    def format(self) -> Cluster:
        for node in self.nodes.values():
            self.write_config(node)
            self.format_node(node)
        return self

    # ---------------------------------------------------------------- processes

    def start(self, node_id: int, *extra: str) -> Node:
        node = self.nodes[node_id]
        assert not node.running, f"node {node_id} is already running"
        node.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(node.log_path, "ab") as out:
            node.process = subprocess.Popen(server_command(node.config_path, *extra), stdout=out, stderr=out,
                                            stdin=subprocess.DEVNULL, env=server_env(), cwd=str(self.root))
        node.starts += 1
        return node

    def start_all(self, *extra: str) -> Cluster:
        for node_id in self.nodes:
            self.start(node_id, *extra)
        return self

    def kill(self, node_id: int, sig: int = signal.SIGKILL, timeout: float = 10.0) -> int:
        node = self.nodes[node_id]
        assert node.process is not None
        if node.process.poll() is None:
            node.process.send_signal(sig)
        code = node.process.wait(timeout)
        node.process = None
        return code

    def close(self) -> None:
        for node in self.nodes.values():
            if node.process is not None and node.process.poll() is None:
                node.process.kill()
            if node.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.process.wait(10)
            node.process = None

    def wipe_partition(self, node_id: int) -> None:
        """Remove ``__cluster_metadata-0`` (meta.properties and bootstrap.checkpoint stay)."""
        shutil.rmtree(self.nodes[node_id].partition_dir, ignore_errors=True)

    def running_nodes(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.running]

    def assert_running(self) -> None:
        for node in self.nodes.values():
            if node.process is not None and node.process.poll() is not None:
                raise AssertionError(f"node {node.node_id} exited with {node.process.returncode}:\n"
                                     f"{node.output()[-3000:]}")

    # ---------------------------------------------------------------- asking

    def describe_quorum(self, node_id: int, version: int = 2) -> messages.DescribeQuorumResponse:
        with self.nodes[node_id].client() as client:
            return client.describe_quorum(version)

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

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
