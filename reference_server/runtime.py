"""The asyncio process around the consensus core: sockets, files, timers and controller duties.

How the pieces meet:

1. **Listeners.** One TCP server per configured listener. Each connection is read frame by frame
   (``socket.request.max.bytes`` caps a frame) and answered strictly in request order: like Kafka,
   which mutes a connection until its response is queued, the next request is read only once the
   previous one is answered. Each request goes to the handler the API table gives its listener's kind
   (``handlers.registry``), once the authorizer, when there is one, has allowed it
   (``handlers.authorization``): ApiVersions and DescribeCluster are answered from a view of the node; the
   raft APIs go to the core, whose ``poll`` hands back the reply; broker listeners are the broker
   role's (``broker``). An API key or version this listener does not serve (ApiVersions excepted), an
   oversized frame or a malformed one is logged once and the connection is closed, as Kafka does;
   other connections carry on, and nothing a client sends stops the process.
   How many connections are let in and how long an idle one stays is ``connections``' business
   (``max.connections``, ``max.connections.per.ip``, ``connections.max.idle.ms`` and a cap from the
   open-file limit). Running out of descriptors while accepting pauses accepting, as Kafka's acceptor
   does; it never stops the raft driver.
2. **The driver.** One task calls ``core.poll(now)`` whenever something was handed to the core and
   at the ``next_poll_ms`` it asked for, sends what it returns through ``peers.PeerClient`` and routes
   replies to the waiting connections. The core keeps the committed metadata image (finalized
   features for ApiVersions) and advances it a bounded amount per poll; when it asks to be polled
   again at once, the driver first lets the sockets run.
   Time is wall-clock milliseconds (Kafka's DescribeQuorum timestamps are wall-clock), never allowed
   to go backwards.
3. **Controller duties.** Once this node leads and everything up to its first offset of the epoch
   is committed, it activates as Kafka's QuorumController does: if no metadata.version was ever
   committed it appends the bootstrap records (from ``bootstrap.checkpoint``, inside a metadata
   transaction from 3.6-IV1 on), then it appends a NoOpRecord every
   ``metadata.max.idle.interval.ms``. Its handlers (UpdateFeatures, BrokerRegistration and
   BrokerHeartbeat, ControllerRegistration) append records and answer once they are committed
   (``when_committed``); it keeps the brokers' sessions and fences a broker whose session expired.
   Every controller, leading or not, keeps itself registered with the active one (``registration``,
   KIP-919), so that DescribeCluster lists it.
4. **Shutdown.** SIGTERM or SIGINT: the core resigns, the driver runs a moment
   longer so the resignation goes out, then listeners and connections close and the log is flushed.
   SIGUSR1 asks the core for a snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import logging
import random
import signal
import socket
import ssl
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from kafka_admin_kraft import features
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError, UndefinedVersionError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records import ApiMessageAndVersion, MetadataRecord
from kafka_admin_kraft.storage import BootstrapMetadata

from .authorizer import AuthorizerConfig, StandardAuthorizer, java_host_address
from .broker import BrokerFrontend, BrokerOptions, ControllerChannels
from .connections import PROBATION_MS, Connection, ConnectionLimits, ConnectionQuotas, descriptor_room
from .handlers import (
    ServerView,
    api_versions,
    authorization,
    broker_lifecycle,
    controller_registration,
    registry,
)
from .handlers.registry import BROKER, CONTROLLER, Answer, Call
from .kafka_line import NEWEST, ServerLine
from .peers import PeerClient
from .raft.api import (
    InboundRequest,
    NodeIdentity,
    PollResult,
    RaftConfig,
    RaftDriverFacing,
    ReplicatedLog,
)
from .raft.image import FENCE
from .registration import ControllerRegistrationManager
from .registration import client_id as registration_client_id
from .security import (
    ClientSecurity,
    ListenerSecurity,
    SaslOutcome,
    SaslSession,
    principal_name,
)

log = logging.getLogger("kafka.server.ControllerServer")
socket_log = logging.getLogger("kafka.network.SocketServer")
raft_log = logging.getLogger("kafka.raft.KafkaRaftClient")
controller_log = logging.getLogger("kafka.controller.QuorumController")

READ_CHUNK: Final = 1 << 20
SHUTDOWN_GRACE_MS: Final = 1000
LISTEN_BACKLOG: Final = 100
"""``asyncio.start_server``'s listen backlog (Kafka's ``socket.listen.backlog.size`` defaults to 50)."""
ACCEPT_RETRY_S: Final = 1.0
"""How long accepting pauses when the process is out of descriptors or the listening socket fails."""
ACCEPT_BATCH: Final = 16
"""Connections accepted in one go before the event loop gets a turn."""
SESSION_CHECK_INTERVAL_MS: Final = 250
"""How often the active controller looks for broker sessions that expired."""
SLOW_CALL_MS: Final = 500
"""A synchronous step longer than this is logged: peers time requests out after 2 s by default."""
NETWORK_THREADS: Final = 3
"""Kafka's ``num.network.threads`` default: each listener's connections go round-robin to that many
processors, whose ids a refused request's text names."""
_T = TypeVar("_T")

LOG_FORMAT: Final = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"


def configure_logging(level: str = "INFO") -> None:
    """Kafka's log4j layout on stderr: ``[2026-11-21 12:00:00,000] INFO message (logger)``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


class WallClock:
    """Wall-clock milliseconds that never go backwards."""

    def __init__(self, source: Callable[[], int] | None = None) -> None:
        self._source = source or (lambda: time.time_ns() // 1_000_000)
        self._last = 0

    def __call__(self) -> int:
        now = self._source()
        if now < self._last:
            return self._last
        self._last = now
        return now


@dataclass(frozen=True)
class ListenerSpec:
    """A socket to listen on: listener name, bind host ("" or 0.0.0.0 = every interface), port."""

    name: str
    host: str
    port: int


@dataclass(frozen=True)
class RuntimeOptions:
    """What the runtime needs besides the core: sockets, limits and controller settings."""

    listeners: tuple[ListenerSpec, ...]
    socket_request_max_bytes: int = framing.DEFAULT_MAX_FRAME_BYTES
    metadata_max_idle_interval_ms: int = 500
    bootstrap_metadata: BootstrapMetadata | None = None
    bootstrap_source: str = "the default bootstrap"
    security: Mapping[str, ListenerSecurity] = field(default_factory=dict)
    """TLS and SASL per listener name (``kafka_admin_kraft_server.security``); absent means PLAINTEXT."""
    peer_security: ClientSecurity = ClientSecurity()
    """How this node connects to the other voters."""
    broker: BrokerOptions | None = None
    """The broker role's listeners (``kafka_admin_kraft_server.broker``), None for a controller only."""
    broker_session_timeout_ms: int = 9000
    """``broker.session.timeout.ms``: the active controller fences a broker silent that long."""
    connection_limits: ConnectionLimits = ConnectionLimits()
    """The caps on client connections and the idle timeout (``kafka_admin_kraft_server.connections``)."""
    unstable_feature_versions: bool = False
    """``unstable.feature.versions.enable``: advertise and accept the feature levels still in testing."""
    line: ServerLine = NEWEST
    """The Kafka line this node runs as (``kafka_admin_kraft_server.kafka_line``): the API versions it
    advertises, accepts and sends, its feature tables and rules. A request outside the line's versions
    closes the connection, as Kafka does with a version it does not serve."""
    unstable_api_versions: bool = False
    """``unstable.api.versions.enable``: serve the project's unreleased versions (DescribeQuorum v3)."""
    authorizer: AuthorizerConfig | None = None
    """``authorizer.class.name`` and its settings (``kafka_admin_kraft_server.authorizer``); None: every
    request is authorized."""

    @property
    def max_versions(self) -> dict[int, int]:
        """The highest version per API key this node speaks, for its own requests."""
        return self.line.max_versions(unstable_api_versions=self.unstable_api_versions)


class ControllerRuntime:
    """Runs one controller: ``await runtime.run()`` returns the process exit status."""

    def __init__(self, identity: NodeIdentity, config: RaftConfig, core: RaftDriverFacing,
                 log_: ReplicatedLog, options: RuntimeOptions, *,
                 clock: Callable[[], int] | None = None) -> None:
        self.identity = identity
        self.config = config
        self.core = core
        self.log = log_
        self.options = options
        self.now_ms: Callable[[], int] = clock or WallClock()
        self.prefix = f"[RaftManager id={identity.node_id}]"
        self.bound: dict[str, tuple[str, int]] = {}
        """Listener name -> the (host, port) actually bound (port 0 picks a free one)."""
        self._listening: list[socket.socket] = []
        self._acceptors: list[asyncio.Task[None]] = []
        self._connections: set[asyncio.Task[None]] = set()
        self._quotas: ConnectionQuotas | None = None
        self._idle_sweeper: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Future[Struct]] = {}
        self._request_ids = itertools.count(1)
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._exit_code = 0
        self._peers: PeerClient | None = None
        self._committed = -1
        self._leader_epoch: tuple[int, int, bool] | None = None
        self._activation_offset: int | None = None
        self._active = False
        self._next_noop_ms = 0
        frame_bytes = max(options.socket_request_max_bytes, framing.DEFAULT_MAX_FRAME_BYTES)
        self.authorizer = (StandardAuthorizer(options.authorizer, identity.node_id, core.acls)
                           if options.authorizer is not None else None)
        self._processors = {spec.name: index * NETWORK_THREADS
                            for index, spec in enumerate(options.listeners)}
        """Listener -> the id of its first network processor (Kafka numbers them across listeners)."""
        self._accepted: dict[str, int] = {}
        self.broker = None
        if options.broker is not None:
            channels = ControllerChannels(identity.node_id, options.peer_security, frame_bytes,
                                          max_versions=options.max_versions)
            self.broker = BrokerFrontend(options.broker, identity.node_id, identity.cluster_id, core,
                                         self.view, self.bound, channels, options.line,
                                         options.unstable_api_versions, self.authorizer)
        self.registration = None
        if identity.is_controller and identity.listeners:
            channels = ControllerChannels(identity.node_id, options.peer_security, frame_bytes,
                                          client_id=registration_client_id(identity.node_id),
                                          max_versions=options.max_versions)
            listener = identity.listeners[0].name
            self.registration = ControllerRegistrationManager(
                identity, core, channels,
                lambda request: controller_registration.serve_registration(self, request, listener),
                bound=self.bound,
                protocols={name: security.protocol for name, security in options.security.items()},
                features=options.line.features, unstable=options.unstable_feature_versions,
                request_timeout_s=config.request_timeout_ms / 1000)
        self._registering: asyncio.Task[None] | None = None
        self._commit_waits: list[_CommitWait] = []
        """Answers held until their records are committed (UpdateFeatures, controller and broker
        registrations, heartbeats that change a registration), in offset order."""
        self._broker_sessions: dict[int, int] = {}
        """Broker id -> time of its last heartbeat (or of this controller's activation)."""
        self._fencing: set[int] = set()
        """Brokers whose session expired, with a fencing record appended but not yet in the image."""
        self._next_session_check_ms = 0

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Bind every listener and start the peer client (before ``run``, or let ``run`` do it)."""
        self._peers = PeerClient(self.identity.node_id, self._on_peer_response,
                                 request_timeout_ms=self.config.request_timeout_ms,
                                 max_frame_bytes=max(self.options.socket_request_max_bytes,
                                                     framing.DEFAULT_MAX_FRAME_BYTES),
                                 security=self.options.peer_security,
                                 max_versions=self.options.max_versions)
        loop = asyncio.get_running_loop()
        for spec in self.options.listeners:
            sockets = _listen(spec.host or None, spec.port)
            self._listening.extend(sockets)
            for sock in sockets:
                self._acceptors.append(loop.create_task(self._accept_loop(sock, spec.name)))
            sockname = sockets[0].getsockname()
            self.bound[spec.name] = (sockname[0], sockname[1])
            log.info("[ControllerServer id=%d] Listening on %s://%s:%d", self.identity.node_id,
                     spec.name, spec.host or "0.0.0.0", sockname[1])
        self._quotas = ConnectionQuotas(self.identity.node_id, self.options.connection_limits,
                                        descriptor_room())
        if self.options.connection_limits.max_idle_ms >= 0:
            self._idle_sweeper = loop.create_task(self._close_idle_connections())
        if self.broker is not None:
            self.broker.start()
        if self.registration is not None:
            self._registering = loop.create_task(self.registration.run(), name="controller registration")

    def stop(self, exit_code: int = 0) -> None:
        """Ask ``run`` to shut down gracefully."""
        if not self._stop.is_set():
            self._exit_code = exit_code
            self._stop.set()
            self._wake.set()

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_stop_signal, signum)
        loop.add_signal_handler(signal.SIGUSR1, self._on_snapshot_signal)

    def _on_stop_signal(self, signum: int) -> None:
        log.info("[ControllerServer id=%d] Received %s, shutting down", self.identity.node_id,
                 signal.Signals(signum).name)
        self.stop(0)

    def _on_snapshot_signal(self) -> None:
        try:
            snapshot = self.core.snapshot(self.now_ms())
        except Exception:
            raft_log.exception("%s Taking a snapshot on demand failed", self.prefix)
            return
        if snapshot is None:
            raft_log.info("%s Snapshot requested: nothing new since the last one", self.prefix)
        else:
            raft_log.info("%s Snapshot %s written on demand", self.prefix, snapshot.file_name)
        self._wake.set()

    async def run(self) -> int:
        if self._peers is None:
            await self.start()
        try:
            await self._drive()
        finally:
            await self._shutdown()
        return self._exit_code

    async def _shutdown(self) -> None:
        if self._registering is not None:
            self._registering.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._registering
        if self.registration is not None:
            self.registration.channels.close()
        if self._exit_code == 0:
            try:
                self.core.resign(self.now_ms())
                deadline = self.now_ms() + SHUTDOWN_GRACE_MS
                while self.now_ms() < deadline:
                    result = self.core.poll(self.now_ms())
                    self._process(result)
                    if self.core.leader_id not in (-1, self.identity.node_id):
                        break  # another voter took over: the resignation was heard
                    waiting = self._peers.in_flight() if self._peers is not None else 0
                    if not result.sends and not result.replies and not waiting:
                        break
                    await asyncio.sleep(0.01)
            except Exception:
                raft_log.exception("%s Graceful resignation failed", self.prefix)
        for task in self._acceptors:
            task.cancel()
        await asyncio.gather(*self._acceptors, return_exceptions=True)
        for sock in self._listening:
            sock.close()
        if self._idle_sweeper is not None:
            self._idle_sweeper.cancel()
        if self.broker is not None:
            await self.broker.close()
        for task in list(self._connections):
            task.cancel()
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()
        if self._peers is not None:
            await self._peers.close()
        try:
            self.log.flush()
            close = getattr(self.log, "close", None)
            if callable(close):
                close()
        except Exception:
            log.exception("[ControllerServer id=%d] Closing the metadata log failed", self.identity.node_id)
        log.info("[ControllerServer id=%d] shut down completed", self.identity.node_id)

    # ------------------------------------------------------------------ the driver

    async def _drive(self) -> None:
        next_poll = 0
        while not self._stop.is_set():
            now = self.now_ms()
            if self._wake.is_set() or now >= next_poll or (self._active and now >= self._next_noop_ms):
                self._wake.clear()
                try:
                    result = self._timed("poll", self.core.poll, now)
                    self._process(result)
                    self._controller_duties(self.now_ms())
                except Exception:
                    raft_log.exception("%s Unexpected error in the raft driver; shutting down", self.prefix)
                    self._exit_code = 1
                    return
                next_poll = result.next_poll_ms
                if next_poll <= now:
                    await asyncio.sleep(0)  # the core has work left: serve the sockets, then poll again
                    continue
            deadline = next_poll
            if self._active and self.options.metadata_max_idle_interval_ms > 0:
                deadline = min(deadline, self._next_noop_ms)
            delay = max(deadline - self.now_ms(), 0) / 1000
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)

    def _process(self, result: PollResult) -> None:
        for reply in result.replies:
            future = self._pending.pop(reply.request_id, None)
            if future is not None and not future.done():
                future.set_result(reply.body)
        assert self._peers is not None
        for send in result.sends:
            self._peers.send(send)
        if result.committed_offset > self._committed:
            self._committed = result.committed_offset
        self._track_leadership()
        if self._commit_waits:
            self._release_commit_waits()
        if self.registration is not None:
            self.registration.wake()

    def _timed(self, what: str, call: Callable[..., _T], *args: Any) -> _T:
        """Run a synchronous step; say so when it held the event loop long enough to worry peers."""
        started = time.monotonic()
        try:
            return call(*args)
        finally:
            elapsed_ms = (time.monotonic() - started) * 1000
            if elapsed_ms >= SLOW_CALL_MS:
                raft_log.warning("%s %s took %d ms, blocking the event loop (requests and responses wait "
                                 "meanwhile)", self.prefix, what, elapsed_ms)

    def _track_leadership(self) -> None:
        current = (self.core.epoch, self.core.leader_id, self.core.is_leader)
        if current == self._leader_epoch:
            return
        previous_epoch = self._leader_epoch[0] if self._leader_epoch is not None else 0
        self._leader_epoch = current
        epoch, leader, leading = current
        me = self.identity.node_id
        if leading:
            # A new epoch of ours: activate again once its first offset is committed.
            self._active = False
            self._activation_offset = self.log.end_offset()
            raft_log.info("%s Completed transition to Leader(localId=%d, epoch=%d, voters=%s)", self.prefix,
                          me, epoch, sorted(self.core.voters.ids()))
        else:
            if self._active:
                controller_log.info("[QuorumController id=%d] Renouncing the leadership due to a metadata "
                                    "log event. We were the leader at epoch %d", me, previous_epoch)
            self._activation_offset = None
            self._active = False
            if leader >= 0:
                raft_log.info("%s Completed transition to Follower(localId=%d, leaderId=%d, epoch=%d)",
                              self.prefix, me, leader, epoch)
            else:
                raft_log.info("%s Epoch %d has no known leader yet (election in progress)", self.prefix,
                              epoch)

    def _controller_duties(self, now: int) -> None:
        if not self.core.is_leader or self._activation_offset is None:
            return
        if not self._active:
            if self.core.applied_offset < self._activation_offset:
                return  # the records before our epoch are not all committed and in the image yet
            self._activate(now)
            return
        interval = self.options.metadata_max_idle_interval_ms
        if interval > 0 and now >= self._next_noop_ms:
            self._append([messages.NoOpRecord()], now)
            self._next_noop_ms = now + interval
        if now >= self._next_session_check_ms:
            self._next_session_check_ms = now + SESSION_CHECK_INTERVAL_MS
            self._fence_expired_brokers(now)

    def _fence_expired_brokers(self, now: int) -> None:
        """Fence every unfenced broker whose last heartbeat is older than the session timeout."""
        for registration in self.core.registered_brokers():
            broker_id = registration.broker_id
            if registration.fenced:
                self._fencing.discard(broker_id)
                continue
            last = self._broker_sessions.setdefault(broker_id, now)
            if broker_id in self._fencing or now - last <= self.options.broker_session_timeout_ms:
                continue
            controller_log.info("[QuorumController id=%d] Fencing broker %d because its session has timed "
                                "out.", self.identity.node_id, broker_id)
            self._fencing.add(broker_id)
            self._append([broker_lifecycle.fencing_record(registration, FENCE)], now)

    def _activate(self, now: int) -> None:
        me = self.identity.node_id
        self._active = True
        self._next_noop_ms = now + self.options.metadata_max_idle_interval_ms
        self._broker_sessions = {broker.broker_id: now for broker in self.core.registered_brokers()}
        self._fencing.clear()
        controller_log.info("[QuorumController id=%d] Becoming the active controller at epoch %d, next write "
                            "offset %d.", me, self.core.epoch, self.log.end_offset())
        image = self.core.committed_features()
        if image.metadata_version is not None and image.transaction_start_offset < 0:
            return
        records, text = self._bootstrap_records(image.metadata_version, image.transaction_start_offset)
        controller_log.info("[QuorumController id=%d] %s", me, text)
        self._append(records, now)

    def _bootstrap_records(self, committed_metadata_version: int | None,
                           transaction_start: int) -> tuple[list[Struct], str]:
        """Kafka's ActivationRecordsGenerator: the records to append on activation, and its log line."""
        text = "Performing controller activation. "
        records: list[Struct] = []
        if committed_metadata_version is not None:  # an unfinished transaction in a non-empty log
            text += f"Aborting in-progress metadata transaction at offset {transaction_start}."
            return [messages.AbortTransactionRecord(reason="Controller failover")], text
        bootstrap = self.options.bootstrap_metadata
        line = self.options.line.features
        level = bootstrap.metadata_version if bootstrap else line.latest_production_metadata_version
        if bootstrap is not None:
            payload = [r.message for r in bootstrap.records if isinstance(r, ApiMessageAndVersion)]
        else:
            payload = [messages.FeatureLevelRecord(name=features.METADATA_VERSION, feature_level=level)]
        transactional = level >= features.METADATA_TRANSACTIONS_VERSION
        source = f"at metadata.version {line.release_string(level)} from bootstrap source " \
                 f"'{self.options.bootstrap_source}'."
        if transaction_start >= 0:
            text += (f"Aborting partial bootstrap records transaction at offset {transaction_start}. "
                     f"Re-appending {len(payload)} bootstrap record(s) in new metadata transaction {source}")
            records.append(messages.AbortTransactionRecord(reason="Controller failover"))
        else:
            text += (f"The metadata log appears to be empty. Appending {len(payload)} bootstrap record(s) "
                     f"{'in metadata transaction ' if transactional else ''}{source}")
        if transactional:
            records.append(messages.BeginTransactionRecord(name="Bootstrap records"))
        records.extend(payload)
        if transactional:
            records.append(messages.EndTransactionRecord())
        return records, text

    def _append(self, records: Sequence[Struct | MetadataRecord], now: int) -> None:
        try:
            self.core.append(records, now)
        except OSError:
            # The log directory failed (a full disk): fatal, as Kafka's KafkaRaftClientDriver treats an
            # error of the raft I/O thread, which halts the process.
            raft_log.exception("%s Appending to the metadata log failed; shutting down", self.prefix)
            self.stop(1)
            return
        except Exception as exc:  # NotLeaderError when leadership moved since the last poll
            controller_log.info("[QuorumController id=%d] Could not append %d record(s): %s",
                                self.identity.node_id, len(records), exc)
            return
        self._wake.set()

    # ------------------------------------------------------------------ peers

    def _on_peer_response(self, request_id: int, body: Struct | None) -> None:
        try:
            self._timed("handling a response", self.core.handle_response, request_id, body, self.now_ms())
        except Exception:
            raft_log.exception("%s Handling the response to request %d failed; shutting down", self.prefix,
                               request_id)
            self.stop(1)
        self._wake.set()

    # ------------------------------------------------------------------ clients

    def view(self, listener: str) -> ServerView:
        image = self.core.committed_features()
        finalized = dict(image.levels)
        metadata_version = image.metadata_version
        epoch = image.highest_offset
        if metadata_version is None:  # nothing committed yet: what the bootstrap will write
            bootstrap = self.options.bootstrap_metadata
            metadata_version = (bootstrap.metadata_version if bootstrap
                                else self.options.line.features.latest_production_metadata_version)
            finalized[features.METADATA_VERSION] = metadata_version
            epoch = -1
        return ServerView(cluster_id=self.identity.cluster_id, node_id=self.identity.node_id,
                          leader_id=self.core.leader_id, voters=self.core.voters, listener=listener,
                          finalized_features=finalized, finalized_features_epoch=epoch,
                          metadata_version=metadata_version,
                          unstable_feature_versions=self.options.unstable_feature_versions,
                          line=self.options.line, unstable_api_versions=self.options.unstable_api_versions)

    async def _accept_loop(self, sock: socket.socket, listener: str) -> None:
        """Accept connections and decide at once whether each stays: a refused one is closed before the
        next is accepted, so refusing needs no spare descriptor. The loop yields every
        ``ACCEPT_BATCH`` connections, which also lets the connections closed to make room go (their
        descriptors are released on the next turn of the event loop). Running out of descriptors (or
        any other failure of the listening socket) pauses accepting for ``ACCEPT_RETRY_S``, as
        asyncio's own acceptor does."""
        loop = asyncio.get_running_loop()
        quorum_listener = self.broker is None or listener not in self.broker.listeners
        assert self._quotas is not None
        accepted = 0
        while True:
            try:
                conn, address = sock.accept()
            except (BlockingIOError, InterruptedError):
                await _readable(loop, sock)
                continue
            except OSError as exc:
                if exc.errno in (errno.ECONNABORTED, errno.EPROTO):  # the client gave up first
                    continue
                socket_log.warning("[SocketServer listenerType=CONTROLLER, nodeId=%d] Error occurred while "
                                   "accepting a connection on %s, pausing accepts for %.0f s: %s",
                                   self.identity.node_id, listener, ACCEPT_RETRY_S, exc)
                await asyncio.sleep(ACCEPT_RETRY_S)
                continue
            conn.setblocking(False)
            connection = self._quotas.admit(_address_name(address), str(address[0]), conn.close,
                                            quorum_listener=quorum_listener)
            if connection is not None:
                connection.busy = True  # until the streams (and TLS) are set up
                origin = self._origin(conn, address, listener)
                task = loop.create_task(self._open_and_serve(conn, connection, listener, origin))
                self._connections.add(task)
                task.add_done_callback(self._connections.discard)
            accepted += 1
            if accepted % ACCEPT_BATCH == 0:
                await asyncio.sleep(0)

    def _origin(self, conn: socket.socket, remote: Any, listener: str) -> _Origin:
        """Kafka's processor and connection id for a new connection from ``remote`` on ``listener``."""
        count = self._accepted.get(listener, 0)
        self._accepted[listener] = count + 1
        local: Any = conn.getsockname()
        index = count // NETWORK_THREADS
        security = self.options.security.get(listener)
        return _Origin(processor=self._processors.get(listener, 0) + count % NETWORK_THREADS,
                       connection_id=f"{java_host_address(local[0])}:{local[1]}-"
                                     f"{java_host_address(remote[0])}:{remote[1]}-{index}",
                       protocol=security.protocol if security is not None else "PLAINTEXT")

    async def _open_and_serve(self, conn: socket.socket, connection: Connection, listener: str,
                              origin: _Origin) -> None:
        """Wrap an accepted socket in streams (the TLS handshake first on a TLS listener) and serve it."""
        assert self._quotas is not None
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=READ_CHUNK)
        protocol = asyncio.StreamReaderProtocol(reader)
        try:
            transport, _ = await loop.connect_accepted_socket(lambda: protocol, conn,
                                                              ssl=self._listener_ssl(listener))
        except (OSError, asyncio.TimeoutError) as exc:
            socket_log.debug("Setting up the connection from %s failed: %s", connection.peer, exc)
            self._quotas.release(connection)
            conn.close()
            return
        except asyncio.CancelledError:
            self._quotas.release(connection)
            conn.close()
            raise
        connection.close = transport.abort
        connection.busy = False
        connection.last_active = time.monotonic()
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        await self._serve(reader, writer, listener, connection, origin)

    async def _close_idle_connections(self) -> None:
        """Close every connection idle for longer than ``connections.max.idle.ms``."""
        assert self._quotas is not None
        while True:
            await asyncio.sleep(self._quotas.close_idle(time.monotonic()))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener: str,
                     connection: Connection, origin: _Origin) -> None:
        peer = _peer_name(writer)
        splitter = framing.FrameSplitter(self.options.socket_request_max_bytes)
        security = self.options.security.get(listener)
        session = security.new_session(peer) if security is not None else None
        probation_ends = time.monotonic() + PROBATION_MS / 1000
        try:
            while True:
                if connection.on_probation:
                    try:
                        data = await asyncio.wait_for(reader.read(READ_CHUNK),
                                                      max(probation_ends - time.monotonic(), 0))
                    except asyncio.TimeoutError:
                        assert self._quotas is not None
                        self._quotas.refuse(connection, connection.refusal)
                        return
                else:
                    data = await reader.read(READ_CHUNK)
                if not data:
                    return
                connection.last_active = time.monotonic()
                try:
                    frames = splitter.feed(data)
                except framing.FrameTooLargeError as exc:
                    socket_log.warning("[SocketServer listenerType=CONTROLLER, nodeId=%d] Unexpected error "
                                       "from %s (listener %s); closing connection: invalid receive: %s",
                                       self.identity.node_id, peer, listener, exc)
                    return
                for frame in frames:
                    connection.busy = True
                    try:
                        if not await self._handle_frame(frame, writer, listener, peer, session, connection,
                                                        origin):
                            return
                    finally:
                        connection.busy = False
                        connection.last_active = time.monotonic()
        except (ConnectionError, OSError) as exc:
            socket_log.debug("Connection from %s ended: %s", peer, exc)
        except asyncio.CancelledError:
            pass
        except Exception:  # the process never goes down for one connection
            socket_log.exception("Unexpected error serving %s; closing connection", peer)
        finally:
            if self._quotas is not None:
                self._quotas.release(connection)
            writer.close()

    async def _handle_frame(self, frame: bytes, writer: asyncio.StreamWriter, listener: str,
                            peer: str, session: SaslSession | None, connection: Connection,
                            origin: _Origin) -> bool:
        """Answer one request; False when the connection must be closed."""
        prefix = f"[SocketServer listenerType=CONTROLLER, nodeId={self.identity.node_id}]"
        assert self._quotas is not None
        try:
            request = framing.decode_request(frame)
        except UndefinedVersionError as exc:
            socket_log.warning("%s Closing socket connection to %s because of an unsupported request: %s",
                               prefix, peer, exc)
            return False
        except Exception as exc:
            socket_log.warning("%s Closing socket connection to %s because of an invalid request: %s",
                               prefix, peer, exc)
            return False
        header = request.header
        if not self._quotas.passes_probation(connection, header.client_id):
            self._quotas.refuse(connection, connection.refusal)
            return False
        key, version = header.request_api_key, header.request_api_version
        correlation_id = header.correlation_id
        if session is not None and (key == ApiKey.API_VERSIONS or not session.authenticated):
            outcome = self._sasl_step(session, request, listener)
            if outcome.response is not None:
                writer.write(framing.encode_response(outcome.response, outcome.version, correlation_id))
                await writer.drain()
            return not outcome.close
        principal = principal_name(session, writer.get_extra_info("peercert"))
        call = Call(request, listener, peer, frame, _peer_host(writer), principal, protocol=origin.protocol,
                    connection_id=origin.connection_id, processor=origin.processor, session=origin.session)
        if self.broker is not None and listener in self.broker.listeners:
            answer = await self.broker.handle(call)
        else:
            answer = await self.dispatch(call)
        if answer is None:
            socket_log.warning("%s Closing socket connection to %s: received request api key %d with version "
                               "%d which is not enabled on listener %s", prefix, peer, key, version, listener)
            return False
        body, response_version = answer
        try:
            writer.write(framing.encode_response(body, response_version, correlation_id))
        except KafkaAdminError as exc:
            socket_log.error("%s Cannot encode the %s v%d response for %s: %s", prefix, type(body).__name__,
                             response_version, peer, exc)
            return False
        await writer.drain()
        return True

    async def dispatch(self, call: Call) -> Answer:
        """The answer to a request on a controller listener and its version, from the handler the API
        table gives controller listeners; None to close (not served here, at this version or at all,
        or no answer)."""
        entry = registry.api(call.api_key)
        if entry is None or entry.controller is None:
            return None
        if call.api_key != ApiKey.API_VERSIONS and not registry.accepts(
                CONTROLLER, call.api_key, call.version, self.options.line,
                unstable_api_versions=self.options.unstable_api_versions):
            return None
        refusal = authorization.check(self.authorizer, call, CONTROLLER)
        if refusal is not None:
            return refusal, call.version
        return await entry.controller(self, call)

    def _listener_ssl(self, listener: str) -> ssl.SSLContext | None:
        security = self.options.security.get(listener)
        return security.ssl_context if security is not None else None

    def _sasl_step(self, session: SaslSession, request: framing.RequestFrame, listener: str) -> SaslOutcome:
        """ApiVersions on a SASL listener, or a request before authentication, which
        ``kafka_admin_kraft_server.security`` answers or refuses."""
        key, version = request.header.request_api_key, request.header.request_api_version
        if key != ApiKey.API_VERSIONS:
            return session.handle(key, version, request.body)
        assert request.body is None or isinstance(request.body, messages.ApiVersionsRequest)
        kind = BROKER if self.broker is not None and listener in self.broker.listeners else CONTROLLER
        body, response_version = api_versions.handle(request.body, version, self.view(listener), kind)
        return SaslOutcome(body, response_version)

    def _pending_answer(self) -> tuple[int, asyncio.Future[Struct]]:
        """A request id and the future its answer will be set on (see ``_await_answer``)."""
        request_id = next(self._request_ids)
        future: asyncio.Future[Struct] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        return request_id, future

    async def _await_answer(self, request_id: int, future: asyncio.Future[Struct]) -> Struct | None:
        """The answer, or None when the connection went away first; the id is forgotten either way."""
        self._wake.set()
        try:
            return await future
        except asyncio.CancelledError:
            return None
        finally:
            self._pending.pop(request_id, None)

    async def ask_core(self, call: Call) -> Struct | None:
        """Hand a raft request to the core; its answer comes with a later poll (None: the connection
        went away first, or the core failed and the connection is to be closed)."""
        body = call.body
        assert body is not None
        request_id, future = self._pending_answer()
        try:
            inbound = InboundRequest(request_id, call.api_key, call.version, body, call.listener)
            self._timed(f"handling {type(body).__name__}", self.core.handle_request, inbound, self.now_ms())
        except Exception:
            self._pending.pop(request_id, None)
            raft_log.exception("%s Handling %s v%d from %s failed; closing the connection", self.prefix,
                               type(body).__name__, call.version, call.peer)
            return None
        return await self._await_answer(request_id, future)

    # ------------------------------------------------------------------ what handlers use

    @property
    def active(self) -> bool:
        return self._active

    def wake(self) -> None:
        self._wake.set()

    def uncommitted_levels(self) -> dict[str, int]:
        levels: dict[str, int] = {}
        for wait in self._commit_waits:
            levels.update(wait.changes)
        return levels

    def uncommitted_records(self) -> list[Struct]:
        return [record.message for wait in self._commit_waits for record in wait.records]

    def live_brokers(self, now_ms: int) -> frozenset[int]:
        return frozenset(broker_id for broker_id, last in self._broker_sessions.items()
                         if now_ms - last <= self.options.broker_session_timeout_ms)

    def renew_session(self, broker_id: int, now_ms: int) -> None:
        self._broker_sessions[broker_id] = now_ms

    async def when_committed(self, offset: int, response: Struct, not_controller: Callable[[], Struct],
                             changes: Mapping[str, int] | None = None,
                             records: Sequence[ApiMessageAndVersion] = ()) -> Struct | None:
        """``response`` once ``offset`` is committed and in the image, ``not_controller()`` if this
        node stops leading the epoch first."""
        request_id, future = self._pending_answer()
        self._commit_waits.append(_CommitWait(offset, self.core.epoch, request_id, response, not_controller,
                                              dict(changes or {}), tuple(records)))
        return await self._await_answer(request_id, future)

    def _release_commit_waits(self) -> None:
        """Answer the held requests whose records are committed and in the image; NOT_CONTROLLER for
        every one still waiting once this node no longer leads the epoch it appended in."""
        waits = []
        applied = self.core.applied_offset
        for wait in self._commit_waits:
            if not self.core.is_leader or self.core.epoch != wait.epoch:
                body: Struct = wait.not_controller()
            elif applied > wait.offset:
                body = wait.response
            else:
                waits.append(wait)
                continue
            future = self._pending.pop(wait.request_id, None)
            if future is not None and not future.done():
                future.set_result(body)
        self._commit_waits = waits


@dataclass(frozen=True)
class _Origin:
    """What Kafka knows of a connection from its accept on: the processor it went to, its id, the
    listener's security protocol and the identity hash of its session object (a refusal prints them)."""

    processor: int
    connection_id: str
    protocol: str
    session: int = field(default_factory=lambda: random.getrandbits(31))


@dataclass(frozen=True)
class _CommitWait:
    """An answer waiting for ``offset`` (its last record) to be committed."""

    offset: int
    epoch: int
    request_id: int
    response: Struct
    not_controller: Callable[[], Struct]
    """Makes the answer if this node stops leading ``epoch`` first."""
    changes: dict[str, int]
    """Feature levels the records finalize (UpdateFeatures), for the controller's own view."""
    records: tuple[ApiMessageAndVersion, ...]
    """The records appended, which the controller's own view shows before the committed image does."""


def _listen(host: str | None, port: int) -> list[socket.socket]:
    """Listening sockets for ``host`` (None: every interface, one socket per address family), as
    ``asyncio.start_server`` binds them."""
    sockets: list[socket.socket] = []
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(LISTEN_BACKLOG)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


async def _readable(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
    """Wait until ``sock`` has something to read (a listening socket: a connection to accept)."""
    ready = loop.create_future()
    fd = sock.fileno()
    loop.add_reader(fd, lambda: None if ready.done() else ready.set_result(None))
    try:
        await ready
    finally:
        loop.remove_reader(fd)


def _address_name(address: Any) -> str:
    """``/<ip>:<port>``, as Kafka names a connection's remote end."""
    if isinstance(address, tuple) and len(address) >= 2:
        return f"/{address[0]}:{address[1]}"
    return str(address)


def _peer_host(writer: asyncio.StreamWriter) -> str:
    peer: Any = writer.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""


def _peer_name(writer: asyncio.StreamWriter) -> str:
    peer: Any = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"/{peer[0]}:{peer[1]}"
    return str(peer)
