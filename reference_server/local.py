"""A reference quorum on this machine: format directories, write configs, start and stop processes.

Each node runs as one Kafka line (``LocalNode.line``, ``kraft-server --release-version``; the newest
by default, ``LocalQuorum(lines={1: "3.9"})`` for others; ``start(node_id, line="4.4")`` starts one
as another line on the same directory, as a rolling upgrade does). Directories are formatted with the
project's storage writers as that line's ``kafka-storage format`` does: ``meta.properties`` and
``bootstrap.checkpoint`` (the line's latest production metadata.version and its default feature
levels) everywhere, plus, for a dynamic quorum (``--initial-controllers``), the bootstrap snapshot
``00000000000000000000-0000000000.checkpoint`` holding every voter. A static quorum gets
``controller.quorum.voters`` in its properties instead. ``close`` kills whatever is still running.
Used by the demo, the integration tests and the benchmarks.

Nodes are forked by a fork server (``kafka_admin_kraft_server.forkserver``: the quorum's own, started
with the first node, or ``shared_forkserver``), which has imported the server once: a node is up in
milliseconds instead of the half second of CPU an interpreter takes to import the server. Each node
is still a process of its own (``LocalNode.process.pid``) that a test signals as any other, and none
outlives the process that started the quorum, even one killed with SIGKILL (see ``forkserver``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kafka_admin_kraft.config.properties import format_config_file
from kafka_admin_kraft.features import KRAFT_VERSION, LINES, NEWEST
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

LISTENER = "CONTROLLER"
BROKER_LISTENER = "BROKER"
HOST = "127.0.0.1"


def free_ports(count: int) -> list[int]:
    """Ports free on the loopback interface right now (held open together so they differ)."""
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


def server_args(config: Path, *extra: str, line: str = NEWEST.name) -> list[str]:
    """The arguments of ``kraft-server`` for a node."""
    return ["--config", str(config), "--release-version", line, *extra]


def server_command(config: Path, *extra: str, line: str = NEWEST.name) -> list[str]:
    return [sys.executable, "-m", "kafka_admin_kraft_server", *server_args(config, *extra, line=line)]


def format_levels(line: str) -> tuple[int, dict[str, int]]:
    """What the line's ``kafka-storage format`` finalizes without ``--release-version``: its latest
    production metadata.version, and the other features' default levels there that are above 0
    (kraft.version is decided by the quorum, not by this table)."""
    kafka = LINES[line]
    level = kafka.latest_production_metadata_version
    return level, {name: value for name, value in kafka.default_levels(level).items()
                   if name != KRAFT_VERSION and value > 0}


def check_line(line: str) -> str:
    """``line`` if it names a Kafka line the server runs as, else ValueError naming them."""
    if line not in LINES:
        raise ValueError(f"unknown Kafka line {line!r}: the lines are {', '.join(LINES)}")
    return line


def server_env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


class ServerProcess(Protocol):
    """What a node's process offers: ``subprocess.Popen``'s, or a forked node's (``ForkedProcess``)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def kill(self) -> None: ...


class ForkServer:
    """The parent's end of a ``kafka_admin_kraft_server.forkserver`` process: starts nodes, learns
    when they end. Safe to use from several threads."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.log_path = root / "forkserver.log"
        # PR_SET_PDEATHSIG fires when the thread that forked ends: ask for it from the main thread only.
        main_thread = threading.current_thread() is threading.main_thread()
        command = [sys.executable, "-m", "kafka_admin_kraft_server.forkserver", "--parent", str(os.getpid()),
                   "--root", str(root), *(["--pdeathsig"] if main_thread else [])]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=log, env=server_env(), cwd=str(root))
        self._spawning = threading.Lock()
        self._changed = threading.Condition()
        self._started: list[int] = []
        self._exits: dict[int, int] = {}
        self._gone = False
        threading.Thread(target=self._read, name=f"forkserver-{self.process.pid}", daemon=True).start()

    def spawn(self, argv: Sequence[str], cwd: Path, log: Path) -> ForkedProcess:
        """Fork a node running ``kraft-server <argv>`` in ``cwd``, its output appended to ``log``."""
        request = {"argv": list(argv), "cwd": str(cwd), "log": str(log), "env": server_env()}
        with self._spawning:
            stdin = self.process.stdin
            assert stdin is not None
            with contextlib.suppress(BrokenPipeError):
                stdin.write(json.dumps(request).encode() + b"\n")
                stdin.flush()
            with self._changed:
                self._changed.wait_for(lambda: self._started or self._gone)
                if not self._started:
                    log_text = self.log_path.read_text(errors="replace")
                    raise RuntimeError(f"the fork server exited:\n{log_text}")
                return ForkedProcess(self, self._started.pop(0), argv)

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """``pid``'s exit code once it has ended, waiting up to ``timeout`` seconds (None: forever)."""
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exits or self._gone, timeout)
            if pid not in self._exits and self._gone:
                return -signal.SIGKILL  # its fork server died, and took it along (PR_SET_PDEATHSIG)
            return self._exits.get(pid)

    def _read(self) -> None:
        """The reader thread: what the fork server writes, until it exits."""
        stdout = self.process.stdout
        assert stdout is not None
        try:
            for line in stdout:
                match line.split():
                    case [b"started", pid]:
                        with self._changed:
                            self._started.append(int(pid))
                            self._changed.notify_all()
                    case [b"exited", pid, code]:
                        with self._changed:
                            self._exits[int(pid)] = int(code)
                            self._changed.notify_all()
        finally:
            with self._changed:
                self._gone = True
                self._changed.notify_all()

    def close(self) -> None:
        """End the fork server; it kills the nodes still running."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class ForkedProcess:
    """A node forked by a ``ForkServer``, used as a ``subprocess.Popen``. The fork server reaps it at
    once and reports its exit; a signal goes only to a node not yet reported as ended."""

    def __init__(self, server: ForkServer, pid: int, args: Sequence[str]) -> None:
        self.server = server
        self.pid = pid
        self.args = list(args)
        self.returncode: int | None = None

    def __repr__(self) -> str:
        return f"<ForkedProcess pid={self.pid} returncode={self.returncode}>"

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, 0.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(["kraft-server", *self.args], timeout or 0.0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


@dataclass
class LocalNode:
    """One controller: its id, port, directory id and files under ``root``."""

    node_id: int
    port: int
    directory_id: Uuid
    root: Path
    process: ServerProcess | None = None
    starts: int = 0
    broker_port: int | None = None
    """The BROKER listener's port of a node that runs both roles, None otherwise."""
    line: str = NEWEST.name
    """The Kafka line the node runs as (``--release-version``) and is formatted by."""

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
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def broker_address(self) -> str:
        """Where clients reach the broker role: the BROKER listener of a combined node, else the
        node's only listener."""
        return f"{HOST}:{self.broker_port if self.broker_port is not None else self.port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@dataclass
class LocalQuorum:
    """``size`` controllers on free loopback ports under ``root``."""

    root: Path
    size: int
    dynamic: bool = True
    properties: dict[str, str] = field(default_factory=dict)
    cluster_id: str = field(default_factory=lambda: str(Uuid.random()))
    nodes: dict[int, LocalNode] = field(default_factory=dict)
    broker_ids: set[int] = field(default_factory=set)
    """Nodes added with ``add_broker`` (``process.roles=broker``): not voters, not bootstrap servers."""
    combined_ids: set[int] = field(default_factory=set)
    """Controllers that run the broker role too (``process.roles=broker,controller``), with a second
    listener, ``BROKER://127.0.0.1:<broker_port>``."""
    lines: Mapping[int, str] = field(default_factory=dict)
    """Node id -> the Kafka line it runs as; the others run as ``release_version``."""
    release_version: str = NEWEST.name
    """The Kafka line of every node not in ``lines``."""
    format_release_version: str | None = None
    """The line whose ``kafka-storage format`` levels every node is formatted with (as for a quorum of
    mixed lines, formatted at a level the oldest knows); None: each node's own line."""
    shared_forkserver: ForkServer | None = field(default=None, repr=False)
    """A fork server to fork the nodes from, which ``close`` leaves running (one a pytest session
    shares between its quorums); None: the first ``start`` starts one of the quorum's own."""
    forkserver: ForkServer | None = field(default=None, init=False, repr=False)
    """What forks the nodes, from the first ``start`` to ``close``."""

    def __post_init__(self) -> None:
        chosen = [self.release_version, *self.lines.values()]
        for line in chosen + ([self.format_release_version] if self.format_release_version else []):
            check_line(line)
        ports = free_ports(self.size + len(self.combined_ids))
        for index, port in enumerate(ports[:self.size]):
            self.nodes[index + 1] = self.new_node(index + 1, port)
        for node_id, port in zip(sorted(self.combined_ids), ports[self.size:], strict=True):
            self.nodes[node_id].broker_port = port

    def line_of(self, node_id: int) -> str:
        """The Kafka line node ``node_id`` runs as."""
        return self.lines.get(node_id, self.release_version)

    def new_node(self, node_id: int, port: int) -> LocalNode:
        return LocalNode(node_id, port, Uuid.random(), self.root, line=self.line_of(node_id))

    def controllers(self) -> list[LocalNode]:
        return [n for n in self.nodes.values() if n.node_id not in self.broker_ids]

    def voters_string(self) -> str:
        return ",".join(f"{n.node_id}@{HOST}:{n.port}" for n in self.controllers())

    def bootstrap_servers(self) -> str:
        return ",".join(n.address for n in self.controllers())

    def add_broker(self, node_id: int) -> LocalNode:
        """A ``process.roles=broker`` node listening on ``BROKER://127.0.0.1:<port>``, written and
        formatted as ``kafka-storage format --cluster-id <id> --no-initial-controllers`` does."""
        node = self.new_node(node_id, free_ports(1)[0])
        self.nodes[node_id] = node
        self.broker_ids.add(node_id)
        self.write_config(node)
        self.format_node(node)
        return node

    def node_properties(self, node: LocalNode) -> dict[str, str]:
        broker = node.node_id in self.broker_ids
        listener = BROKER_LISTENER if broker else LISTENER
        listeners = f"{listener}://{HOST}:{node.port}"
        roles = "broker" if broker else "controller"
        if node.broker_port is not None:
            listeners += f",{BROKER_LISTENER}://{HOST}:{node.broker_port}"
            roles = "broker,controller"
        props = {
            "process.roles": roles,
            "node.id": str(node.node_id),
            "listeners": listeners,
            "advertised.listeners": listeners,
            "controller.listener.names": LISTENER,
            "listener.security.protocol.map": f"{LISTENER}:PLAINTEXT,{BROKER_LISTENER}:PLAINTEXT",
            "log.dirs": str(node.metadata_dir),
            "metadata.log.dir": str(node.metadata_dir),
        }
        if self.dynamic:
            props["controller.quorum.bootstrap.servers"] = self.bootstrap_servers()
        else:
            props["controller.quorum.voters"] = self.voters_string()
        props.update(self.properties)
        return props

    def write_config(self, node: LocalNode, overrides: dict[str, str] | None = None) -> Path:
        props = self.node_properties(node)
        props.update(overrides or {})
        node.config_path.parent.mkdir(parents=True, exist_ok=True)
        node.config_path.write_text(format_config_file(props), encoding="ascii")
        return node.config_path

    def format_node(self, node: LocalNode, initial_controllers: Collection[int] | None = None) -> None:
        """What ``kafka-storage format --cluster-id <id> [--initial-controllers <list>]`` writes.

        ``initial_controllers``: the node ids of the bootstrap voter set; None means every controller
        of a dynamic quorum, an empty list ``--no-initial-controllers`` (the node starts as an
        observer) and ``[node_id]`` ``--standalone``."""
        node.metadata_dir.mkdir(parents=True, exist_ok=True)
        write_meta_properties(node.metadata_dir, MetaProperties(version=1, cluster_id=self.cluster_id,
                                                                node_id=node.node_id,
                                                                directory_id=node.directory_id))
        levels = format_levels(self.format_release_version or node.line)
        write_bootstrap_checkpoint(node.metadata_dir, bootstrap_records(*levels))
        if not self.dynamic or node.node_id in self.broker_ids:
            return
        controllers = [InitialController(n.node_id, HOST, n.port, n.directory_id) for n in self.controllers()
                       if initial_controllers is None or n.node_id in initial_controllers]
        if controllers:
            write_bootstrap_snapshot(node.metadata_dir, controllers, LISTENER)

    def format(self) -> LocalQuorum:
        for node in self.nodes.values():
            self.write_config(node)
            self.format_node(node)
        return self

    def start(self, node_id: int, *extra: str, line: str | None = None) -> LocalNode:
        """Start the node's process; ``line``: run it as that Kafka line from now on, on the same
        directory (a node upgraded to new binaries in a rolling upgrade)."""
        node = self.nodes[node_id]
        if node.running:
            raise RuntimeError(f"node {node_id} is already running")
        if line is not None:
            node.line = check_line(line)
        node.log_path.parent.mkdir(parents=True, exist_ok=True)
        if self.forkserver is None:
            self.forkserver = self.shared_forkserver or ForkServer(self.root)
        node.process = self.forkserver.spawn(server_args(node.config_path, *extra, line=node.line),
                                             self.root, node.log_path)
        node.starts += 1
        return node

    def start_all(self, *extra: str) -> LocalQuorum:
        for node_id in self.nodes:
            self.start(node_id, *extra)
        return self

    def kill(self, node_id: int, sig: int = signal.SIGKILL, timeout: float = 10.0) -> int:
        """Send ``sig`` and wait for the process; return its exit code."""
        node = self.nodes[node_id]
        if node.process is None:
            raise RuntimeError(f"node {node_id} is not running")
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
        if self.forkserver is not None and self.forkserver is not self.shared_forkserver:
            self.forkserver.close()
        self.forkserver = None

    def wipe_partition(self, node_id: int) -> None:
        """Remove ``__cluster_metadata-0`` (meta.properties and bootstrap.checkpoint stay)."""
        shutil.rmtree(self.nodes[node_id].partition_dir, ignore_errors=True)

    def running_nodes(self) -> list[LocalNode]:
        return [n for n in self.nodes.values() if n.running]

    def exited(self) -> list[LocalNode]:
        """Nodes whose process ended on its own."""
        return [n for n in self.nodes.values() if n.process is not None and n.process.poll() is not None]

    def __enter__(self) -> LocalQuorum:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
