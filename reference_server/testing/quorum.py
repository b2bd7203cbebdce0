"""``KraftQuorum``: a reference quorum for a test, with the faults it scripts and the waits it needs.

Each node is a ``kraft-server`` process on 127.0.0.1 (``kafka_admin_kraft_server.local`` formats and
starts them), started with ``--faults <node dir>/faults`` so that the test can cut it off from other
nodes and fill its disk without privileges (``kafka_admin_kraft_server.faults``). Elections are
quicker than Kafka's defaults (``FAST_ELECTIONS``, overridable through ``properties``) so that a
three-node quorum has a leader about a second after ``start``.

Faults:

* ``kill`` (SIGKILL), ``stop`` (SIGTERM: the node resigns and closes its files), ``start``,
  ``restart``;
* ``pause`` and ``resume`` (SIGSTOP, SIGCONT: a node that hangs, its sockets open);
* ``replace_disk``: the node stopped, its metadata directory wiped and formatted again as
  ``kafka-storage format --no-initial-controllers`` does, with a new directory id (a replaced disk);
* ``fill_disk`` and ``free_disk``: every write to the node's log directory fails with ENOSPC;
* ``partition`` and ``heal``: two nodes (or one node and all others, ``isolate``) stop reaching each
  other, clients still reach both.

Waits (each polls until its condition holds, else ``QuorumTimeout`` says what it last saw):
``wait_for_leader``, ``wait_for_voters``, ``wait_for_high_watermark``, ``wait_caught_up``,
``wait_for_exit``, and ``wait_until`` for a condition of the test's own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar

from kafka_admin_kraft import Admin
from kafka_admin_kraft.config.properties import format_config_file
from kafka_admin_kraft.errors import KafkaAdminError
from kafka_admin_kraft.models import QuorumInfo
from kafka_admin_kraft.protocol.primitives import Uuid

from ..faults import write_faults
from ..local import HOST, ForkServer, LocalNode, LocalQuorum, free_ports
from .pki import make_certificates
from .security import ADMIN_USER, QuorumSecurity, security_of

FAST_ELECTIONS: Final = {"controller.quorum.election.timeout.ms": "300",
                         "controller.quorum.fetch.timeout.ms": "1000",
                         "controller.quorum.election.backoff.max.ms": "500"}
"""Below Kafka's defaults (1000, 2000, 1000 ms): a first leader a few hundred milliseconds after the
processes start, failover in about a second."""
DEFAULT_TIMEOUT: Final = 20.0
FIRST_BROKER_ID: Final = 101
"""Brokers are numbered from here, out of the way of controllers a test adds."""

T = TypeVar("T")


class QuorumTimeout(AssertionError):
    """A wait ran out; the message says what was awaited and what was last seen."""


class QuorumNode:
    """One node of a test quorum: where it listens, its files, its process."""

    def __init__(self, quorum: KraftQuorum, node: LocalNode) -> None:
        self._quorum = quorum
        self._node = node

    def __repr__(self) -> str:
        return f"<QuorumNode {self.node_id} {self.role} {'running' if self.running else 'down'}>"

    @property
    def node_id(self) -> int:
        return self._node.node_id

    @property
    def role(self) -> str:
        """``controller`` or ``broker`` (its ``process.roles``)."""
        return "broker" if self.node_id in self._quorum.local.broker_ids else "controller"

    @property
    def address(self) -> str:
        """``host:port`` of its only listener (CONTROLLER for a controller, BROKER for a broker)."""
        return self._node.address

    @property
    def directory_id(self) -> Uuid:
        """The metadata directory id in its ``meta.properties`` (a new one after ``replace_disk``)."""
        return self._node.directory_id

    @property
    def config_file(self) -> Path:
        return self._node.config_path

    @property
    def metadata_dir(self) -> Path:
        return self._node.metadata_dir

    @property
    def log_file(self) -> Path:
        """Its ``server.log`` (stdout and stderr of every start, appended)."""
        return self._node.log_path

    @property
    def log(self) -> str:
        return self._node.output()

    @property
    def fault_file(self) -> Path:
        return self._node.root / f"node-{self.node_id}" / "faults"

    @property
    def running(self) -> bool:
        """Its process is alive (a paused one too)."""
        return self._node.running

    @property
    def paused(self) -> bool:
        return self.node_id in self._quorum._paused

    @property
    def pid(self) -> int | None:
        process = self._node.process
        return process.pid if process is not None and process.poll() is None else None

    @property
    def returncode(self) -> int | None:
        """The exit status of a process that ended on its own, None while running or never started."""
        process = self._node.process
        return process.poll() if process is not None else None


class KraftQuorum:
    """``size`` controllers (and ``brokers`` broker-only nodes) under ``root``; see the module."""

    def __init__(self, root: Path, size: int = 3, *, dynamic: bool = True, brokers: int = 0,
                 security: str | QuorumSecurity | None = None, release_version: str | None = None,
                 lines: Mapping[int, str] | None = None, properties: Mapping[str, str] | None = None,
                 forkserver: ForkServer | None = None) -> None:
        if size < 1:
            raise ValueError(f"a quorum needs at least one controller, not size={size}")
        if brokers < 0:
            raise ValueError(f"brokers={brokers}: a number of brokers is 0 or more")
        self.root = root
        self.security = security_of(security)
        self.truststore: Path | None = None
        # The quorum's own fork server starts first: it imports the server while this process makes
        # the certificates and formats the directories.
        self._own_forkserver = ForkServer(root) if forkserver is None else None
        try:
            keystore = None
            if self.security.tls:
                certificates = make_certificates(root / "pki")
                self.truststore, keystore = certificates.truststore, certificates.keystore
            settings = {**FAST_ELECTIONS, **self.security.server_properties(self.truststore, keystore),
                        **(properties or {})}
            options: dict[str, Any] = {"lines": dict(lines or {})}
            if release_version is not None:
                options["release_version"] = release_version
            self.local = LocalQuorum(root, size, dynamic=dynamic, properties=settings,
                                     shared_forkserver=forkserver or self._own_forkserver, **options)
            self.local.format()
            for index in range(brokers):
                self.local.add_broker(FIRST_BROKER_ID + index)
        except BaseException:
            if self._own_forkserver is not None:
                self._own_forkserver.close()
            raise
        self._paused: set[int] = set()
        self._cut: dict[int, set[int]] = {}
        self._full: set[int] = set()
        self._admins: dict[str | None, Admin] = {}
        self.closed = False

    # ------------------------------------------------------------------ what a test reads

    @property
    def cluster_id(self) -> str:
        return self.local.cluster_id

    @property
    def nodes(self) -> dict[int, QuorumNode]:
        """Every node by id, controllers first."""
        return {node_id: QuorumNode(self, node) for node_id, node in sorted(self.local.nodes.items())}

    def node(self, node_id: int) -> QuorumNode:
        if node_id not in self.local.nodes:
            raise KeyError(f"no node {node_id} in this quorum: its nodes are "
                           f"{', '.join(map(str, sorted(self.local.nodes)))}")
        return QuorumNode(self, self.local.nodes[node_id])

    @property
    def controller_ids(self) -> list[int]:
        return sorted(n.node_id for n in self.local.controllers())

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self.local.broker_ids)

    @property
    def bootstrap_controllers(self) -> str:
        """For ``--bootstrap-controller`` and ``bootstrap.controllers``."""
        return self.local.bootstrap_servers()

    @property
    def bootstrap_servers(self) -> str:
        """The brokers, for ``--bootstrap-server`` and ``bootstrap.servers`` (empty without brokers)."""
        return ",".join(self.local.nodes[n].address for n in self.broker_ids)

    def client_config(self, user: str = ADMIN_USER) -> dict[str, str]:
        """Kafka client settings for this quorum's security, logging in as ``user`` on SASL."""
        return self.security.client_properties(self.truststore, user)

    def client_properties(self, user: str = ADMIN_USER) -> Path:
        """A ``.properties`` file of ``client_config`` for the tools' ``--command-config``."""
        path = self.root / f"client-{user}.properties"
        path.write_text(format_config_file(self.client_config(user)), encoding="ascii")
        return path

    @property
    def admin(self) -> Admin:
        """An ``Admin`` on the controllers, made on first use and closed with the quorum."""
        return self._admin(None)

    @property
    def broker_admin(self) -> Admin:
        """An ``Admin`` on the brokers (``bootstrap.servers``)."""
        if not self.broker_ids:
            raise RuntimeError("this quorum has no brokers: ask for kraft_quorum(brokers=1) or more")
        return self._admin("brokers")

    def new_admin(self, user: str = ADMIN_USER, *, brokers: bool = False, **properties: str) -> Admin:
        """A new ``Admin`` (the caller closes it), as ``user``, with Kafka client ``properties`` on top."""
        bootstrap = {"bootstrap.servers": self.bootstrap_servers} if brokers else \
            {"bootstrap.controllers": self.bootstrap_controllers}
        return Admin.from_config({**bootstrap, "default.api.timeout.ms": "20000",
                                  "request.timeout.ms": "5000", **self.client_config(user), **properties})

    def _admin(self, key: str | None) -> Admin:
        if self.closed:
            raise RuntimeError("this quorum is closed")
        if key not in self._admins:
            self._admins[key] = self.new_admin(brokers=key == "brokers")
        return self._admins[key]

    # ------------------------------------------------------------------ processes

    def start(self, node_id: int | None = None, *, line: str | None = None) -> KraftQuorum:
        """Start one node (as Kafka ``line`` from now on, if given), or every node not running."""
        for target in [node_id] if node_id is not None else sorted(self.local.nodes):
            node = self.node(target)
            if node_id is None and node.running:
                continue
            self._paused.discard(target)
            self._write_faults(target)
            self.local.start(target, "--faults", str(node.fault_file), line=line)
        return self

    def kill(self, node_id: int) -> int:
        """SIGKILL; the exit status."""
        self._paused.discard(node_id)
        return self.local.kill(node_id, signal.SIGKILL)

    def stop(self, node_id: int, timeout: float = 10.0) -> int:
        """SIGTERM (a graceful shutdown: the node resigns and closes its files); SIGKILL after
        ``timeout`` seconds. The exit status."""
        process = self.local.nodes[node_id].process
        if process is None:
            raise RuntimeError(f"node {node_id} is not running")
        if node_id in self._paused and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.send_signal(signal.SIGCONT)  # a stopped process acts on SIGTERM once resumed
        self._paused.discard(node_id)
        try:
            return self.local.kill(node_id, signal.SIGTERM, timeout)
        except subprocess.TimeoutExpired:
            return self.local.kill(node_id, signal.SIGKILL)

    def restart(self, node_id: int) -> KraftQuorum:
        if self.node(node_id).running:
            self.stop(node_id)
        return self.start(node_id)

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the node hangs with its sockets open, as a process stuck in a long pause does."""
        self._signal(node_id, signal.SIGSTOP)
        self._paused.add(node_id)

    def resume(self, node_id: int) -> None:
        self._signal(node_id, signal.SIGCONT)
        self._paused.discard(node_id)

    def _signal(self, node_id: int, sig: int) -> None:
        pid = self.node(node_id).pid
        if pid is None:
            raise RuntimeError(f"node {node_id} is not running")
        os.kill(pid, sig)

    def add_controller(self, node_id: int, *, start: bool = True) -> QuorumNode:
        """A new controller, formatted with ``--no-initial-controllers``: it joins as an observer until
        added as a voter (AddRaftVoter, or ``controller.quorum.auto.join.enable``)."""
        if node_id in self.local.nodes:
            raise ValueError(f"node {node_id} already exists")
        node = self.local.new_node(node_id, free_ports(1)[0])
        self.local.nodes[node_id] = node
        self.local.write_config(node)
        self.local.format_node(node, initial_controllers=[])
        if start:
            self.start(node_id)
        return self.node(node_id)

    def replace_disk(self, node_id: int, *, start: bool = True) -> Uuid:
        """Kill the node, wipe its metadata directory and format it again with a new directory id, as
        on a new disk (``--no-initial-controllers``: a controller comes back as an observer); start it
        unless ``start=False``. The new directory id."""
        node = self.local.nodes[node_id]
        if node.running:
            self.kill(node_id)
        shutil.rmtree(node.metadata_dir, ignore_errors=True)
        node.directory_id = Uuid.random()
        self._full.discard(node_id)
        self.local.format_node(node, initial_controllers=[])
        if start:
            self.start(node_id)
        return node.directory_id

    def fill_disk(self, node_id: int) -> None:
        """From now on every write to the node's log directory fails with ENOSPC: the node stops at
        its next write (``wait_for_exit``), and again after each start until ``free_disk``."""
        self._full.add(node_id)
        self._write_faults(node_id)

    def free_disk(self, node_id: int) -> None:
        self._full.discard(node_id)
        self._write_faults(node_id)

    # ------------------------------------------------------------------ network partitions

    def partition(self, a: int, b: int) -> None:
        """Cut ``a`` and ``b`` off from each other, both ways; clients still reach both."""
        self.node(a), self.node(b)
        self._cut.setdefault(a, set()).add(b)
        self._cut.setdefault(b, set()).add(a)
        self._write_faults(a)
        self._write_faults(b)

    def isolate(self, node_id: int) -> None:
        """Cut ``node_id`` off from every other node."""
        for other in self.local.nodes:
            if other != node_id:
                self.partition(node_id, other)

    def heal(self, a: int | None = None, b: int | None = None) -> None:
        """Join ``a`` and ``b`` again; ``a`` alone: join it to every node; neither: heal every cut."""
        pairs = [(x, y) for x, others in self._cut.items() for y in others
                 if (a is None or a in (x, y)) and (b is None or b in (x, y))]
        for x, y in pairs:
            self._cut[x].discard(y)
        for node_id in {n for pair in pairs for n in pair}:
            self._write_faults(node_id)

    def _write_faults(self, node_id: int) -> None:
        node = self.node(node_id)
        node.fault_file.parent.mkdir(parents=True, exist_ok=True)
        unreachable = []
        for other in self._cut.get(node_id, ()):
            peer = self.local.nodes[other]
            unreachable.append((HOST, peer.port))
            if peer.broker_port is not None:
                unreachable.append((HOST, peer.broker_port))
        write_faults(node.fault_file, unreachable, disk_full=node_id in self._full)

    def reset(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Undo what faults can be undone (heal, free disks, resume, start the nodes that are down)
        and wait for a leader: how a quorum shared by several tests is handed to the next one."""
        self.heal()
        for node_id in sorted(self._full):
            self.free_disk(node_id)
        for node_id in sorted(self._paused):
            self.resume(node_id)
        for node in self.local.exited():
            self.local.kill(node.node_id)  # reap it, so that start sees it down
        self.start()
        self.wait_for_leader(timeout)

    # ------------------------------------------------------------------ waiting

    def wait_until(self, condition: Callable[[], T | None], timeout: float, what: str) -> T:
        """Poll ``condition`` until it returns something true, and return that; ``QuorumTimeout`` naming
        ``what``, the last error and the nodes that exited, after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        last: object = None
        while True:
            try:
                value = condition()
                if value:
                    return value
                last = None
            except (KafkaAdminError, OSError) as exc:
                last = exc
            if time.monotonic() > deadline:
                exited = [f"node {n.node_id} exited with {n.process.returncode if n.process else '?'}"
                          for n in self.local.exited()]
                details = [f"last error: {last}"] if last is not None else []
                raise QuorumTimeout(f"timed out after {timeout:g}s waiting for {what}"
                                    + "".join(f"; {d}" for d in details + exited))
            time.sleep(0.05)

    def _live_controllers(self) -> list[int]:
        return [n for n in self.controller_ids if self.local.nodes[n].running and n not in self._paused]

    def describe(self) -> QuorumInfo | None:
        """The newest answer to DescribeQuorum among the leaders the running controllers know: each
        is asked for its leader's view and the highest epoch wins, so that a cut-off leader that has
        not noticed yet is not taken for the quorum's. None while no leader answers."""
        best: QuorumInfo | None = None
        for node_id in self._live_controllers():
            admin = self._node_admin(node_id)
            try:
                info = admin.describe_metadata_quorum(timeout=1.0)
            except (KafkaAdminError, OSError):
                continue
            leader = self.local.nodes.get(info.leader_id)
            live = leader is not None and leader.running and info.leader_id not in self._paused
            if live and (best is None or info.leader_epoch > best.leader_epoch):
                best = info
        return best

    def _node_admin(self, node_id: int) -> Admin:
        key = f"node-{node_id}"
        if key not in self._admins:
            self._admins[key] = Admin.from_config({
                "bootstrap.controllers": self.local.nodes[node_id].address, "default.api.timeout.ms": "1000",
                "request.timeout.ms": "1000", "retry.backoff.max.ms": "100", **self.client_config()})
        return self._admins[key]

    def wait_for_leader(self, timeout: float = DEFAULT_TIMEOUT, *, min_epoch: int = 0,
                        exclude: Collection[int] = ()) -> int:
        """The id of a leader at epoch ``min_epoch`` or later that is not in ``exclude``."""

        def found() -> int | None:
            info = self.describe()
            ok = info is not None and info.leader_epoch >= min_epoch and info.leader_id not in exclude
            return info.leader_id if info is not None and ok else None

        what = "a leader" + (f" at epoch {min_epoch} or later" if min_epoch else "") \
            + (f" other than {sorted(exclude)}" if exclude else "")
        return self.wait_until(found, timeout, what)

    def wait_for_voters(self, voters: Iterable[int], timeout: float = DEFAULT_TIMEOUT, *,
                        committed: bool = True) -> QuorumInfo:
        """Until the voter set is exactly ``voters`` (node ids), committed unless ``committed=False``
        (a DescribeQuorum below v3 cannot tell: then the current set is taken)."""
        expected = sorted(voters)

        def found() -> QuorumInfo | None:
            info = self.describe()
            if info is None:
                return None
            seen = info.committed_voters if committed and info.committed_voters is not None else info.voters
            return info if sorted(v.replica_id for v in seen) == expected else None

        return self.wait_until(found, timeout, f"the voters {expected}")

    def wait_for_high_watermark(self, offset: int, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Until the leader's high watermark reaches ``offset``; the high watermark."""

        def found() -> int | None:
            info = self.describe()
            return info.high_watermark if info is not None and info.high_watermark >= offset else None

        return self.wait_until(found, timeout, f"a high watermark of {offset} or more")

    def wait_caught_up(self, timeout: float = DEFAULT_TIMEOUT) -> QuorumInfo:
        """Until every voter's log end offset reached the leader's (positive) high watermark."""

        def found() -> QuorumInfo | None:
            info = self.describe()
            if info is None or info.high_watermark <= 0:
                return None
            return info if all(v.log_end_offset >= info.high_watermark for v in info.voters) else None

        return self.wait_until(found, timeout, "every voter to reach the high watermark")

    def wait_for_exit(self, node_id: int, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Until the node's process ended by itself; its exit status."""
        process = self.local.nodes[node_id].process
        if process is None:
            raise RuntimeError(f"node {node_id} is not running")

        def exited() -> tuple[int] | None:
            code = process.poll()
            return (code,) if code is not None else None

        return self.wait_until(exited, timeout, f"node {node_id} to exit")[0]

    # ------------------------------------------------------------------ the end

    def close(self) -> None:
        """Close the clients and kill every process (paused ones too); safe to call twice."""
        self.closed = True
        for admin in self._admins.values():
            with contextlib.suppress(Exception):
                admin.close()
        self._admins.clear()
        self._paused.clear()
        self.local.close()
        if self._own_forkserver is not None:
            self._own_forkserver.close()

    def __enter__(self) -> KraftQuorum:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def log_offsets(self) -> dict[int, int]:
        """Each node's log size now: where the lines of what happens next start."""
        return {node.node_id: node.log_path.stat().st_size if node.log_path.exists() else 0
                for node in self.local.nodes.values()}

    def logs_since(self, offsets: Mapping[int, int], limit: int = 20000) -> Iterator[tuple[int, str]]:
        """(node id, its log from ``offsets`` on, the last ``limit`` characters of it) per node."""
        for node in self.local.nodes.values():
            if not node.log_path.exists():
                continue
            with open(node.log_path, "rb") as log:
                log.seek(offsets.get(node.node_id, 0))
                text = log.read().decode(errors="replace")
            if text:
                yield node.node_id, text[-limit:]


def start_quorum(root: Path, size: int = 3, *, wait: bool = True, timeout: float = DEFAULT_TIMEOUT,
                 **options: Any) -> KraftQuorum:
    """A quorum formatted, started and (unless ``wait=False``) with a leader and its brokers
    registered; killed again if that fails."""
    quorum = KraftQuorum(root, size, **options)
    try:
        quorum.start()
        if wait:
            quorum.wait_for_leader(timeout)
            if quorum.broker_ids:
                expected = quorum.broker_ids

                def registered() -> bool:
                    return sorted(b.node_id for b in quorum.broker_admin.describe_cluster().nodes) == expected

                quorum.wait_until(registered, timeout, f"the brokers {expected} to register")
    except BaseException:
        quorum.close()
        raise
    return quorum
