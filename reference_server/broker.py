"""The broker role: what a node with ``process.roles`` including ``broker`` does besides replicating.

The node replicates the metadata log as an observer of the quorum (or as a voter when it is a
controller too: ``process.roles=broker,controller``); the consensus core does that, a broker-only
node finding the leader through ``controller.quorum.bootstrap.servers``. Besides:

- **Registration** (``BrokerLifecycle``): once the active controller is known the broker sends it
  BrokerRegistration (its broker listeners with their security protocols, the features it supports,
  a random incarnation id per process, its metadata directory id), then BrokerHeartbeat every
  ``broker.heartbeat.interval.ms`` with the offset its metadata image reached. The controller
  appends RegisterBrokerRecord and unfences the broker once it has caught up to its own
  registration (``handlers.broker_lifecycle``); a broker that stops heartbeating is fenced after
  ``broker.session.timeout.ms``. STALE_BROKER_EPOCH or BROKER_ID_NOT_REGISTERED make it register again.
- **Controlled shutdown** (Kafka's ``BrokerServer.shutdown`` with ``controlled.shutdown.enable``): on
  SIGTERM a registered broker heartbeats with WantShutDown until the controller answers ShouldShutDown,
  having fenced it, so clients stop seeing it at once rather than a session timeout later. Having no
  partitions to move it waits ``CONTROLLED_SHUTDOWN_S`` at most (Kafka waits up to its shutdown
  timeout) and not at all once no controller answers the connection: nobody is left to fence it.
- **Client listeners** (every ``listeners`` entry not named in ``controller.listener.names``, with
  TLS and SASL as ``listener.security.protocol.map`` says, ``kafka_admin_kraft_server.security``):
  what the API table gives broker listeners (``handlers.registry``, ``handlers.BROKER_APIS``):
  ApiVersions with that API set and the finalized features of its image; Metadata and
  DescribeCluster from its image: the registered, unfenced brokers (``handlers.metadata``,
  ``handlers.describe_cluster``) and DescribeAcls from its image (``handlers.acls``); the forwarded
  APIs (DescribeQuorum, AddRaftVoter, RemoveRaftVoter, UpdateFeatures, UnregisterBroker,
  UnregisterController, CreateAcls and DeleteAcls) sent to the active controller in an Envelope
  carrying the client's principal and address (``handlers.envelope``), which the controller
  authorizes. With an authorizer the broker checks what it answers itself (``handlers.authorization``).
  When no controller can be reached the client gets NOT_CONTROLLER or NOT_LEADER_OR_FOLLOWER and
  retries.

The active controller is the quorum leader the core knows, reached at its endpoint for the first
``controller.listener.names`` entry with the node's controller-client security (TLS, SASL).
Requests to it go through ``ControllerChannels``: a connection carries one request at a time and
returns to a small pool of idle connections when answered, so a slow AddRaftVoter holds up no other
request and the next ones reuse a connection instead of opening one. A controller the fault file
names unreachable (``faults``) is refused as a closed port is, and its connections are closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from kafka_admin_kraft.config.security import SECURITY_PROTOCOLS
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid

from . import faults
from .authorizer import StandardAuthorizer
from .handlers import authorization, envelope, registry
from .handlers.error_responses import error_response
from .handlers.registry import BROKER, Answer, Call
from .handlers.view import BrokerNode, BrokerView, ServerView
from .kafka_line import NEWEST, ServerLine
from .peers import UNREACHABLE, Channel, open_channel
from .raft.api import Endpoint, RaftDriverFacing
from .security import ClientSecurity

log = logging.getLogger("kafka.server.ForwardingManager")
lifecycle_log = logging.getLogger("kafka.server.BrokerLifecycleManager")

FORWARD_TIMEOUT_S: Final = 30.0
"""How long a forwarded request may take at the controller (AddRaftVoter waits for a commit)."""
CONNECT_TIMEOUT_S: Final = 5.0
MAX_IDLE_CONNECTIONS: Final = 4
RETRY_BACKOFF_S: Final = 0.1
CONTROLLED_SHUTDOWN_S: Final = 5.0
"""The longest a stopping broker waits for the controller to approve its controlled shutdown."""


@dataclass(frozen=True)
class BrokerOptions:
    """The broker listeners and where the controllers listen."""

    listeners: Mapping[str, tuple[str, int]]
    """Broker listener name -> advertised (host, port); port 0 means the port actually bound."""
    controller_listener_name: str
    """The first ``controller.listener.names`` entry: the controllers' endpoint to forward to."""
    protocols: Mapping[str, str] = field(default_factory=dict)
    """Broker listener name -> security protocol (PLAINTEXT when absent), for the registration."""
    directory_id: Uuid | None = None
    """The metadata directory's id, registered as the broker's log directory."""
    heartbeat_interval_ms: int = 2000


def leader_endpoint(core: RaftDriverFacing, listener: str) -> Endpoint | None:
    """The quorum leader's endpoint on ``listener`` (else its first one), None while unknown."""
    leader = core.voters.voters.get(core.leader_id)
    if leader is None or not leader.endpoints:
        return None
    return next((e for e in leader.endpoints if e.name == listener), leader.endpoints[0])


class ControllerChannels:
    """Connections to controllers, one request at a time each, idle ones kept for the next request."""

    def __init__(self, node_id: int, security: ClientSecurity, max_frame_bytes: int,
                 client_id: str | None = None, max_versions: Mapping[int, int] | None = None) -> None:
        self.security = security
        self.max_frame_bytes = max_frame_bytes
        self.max_versions = dict(max_versions or {})
        """API key -> the highest version this node's line speaks: requests never go above it."""
        self.client_id = client_id or f"broker-{node_id}-to-controller"
        self._idle: dict[tuple[str, int], list[Channel]] = {}
        self._correlation_ids = itertools.count(1)

    def idle(self, endpoint: Endpoint) -> int:
        """Idle connections kept to ``endpoint`` (tests)."""
        return len(self._idle.get((endpoint.host, endpoint.port), []))

    async def request(self, endpoint: Endpoint, body: Struct, timeout: float) -> Struct:
        """Send ``body`` at the highest version both sides speak and return the response. A kept
        connection the controller closed meanwhile is replaced once; other failures raise OSError,
        EOFError, asyncio.TimeoutError or the codec's errors."""
        idle = self._idle.setdefault((endpoint.host, endpoint.port), [])
        if faults.unreachable(endpoint.host, endpoint.port):
            for channel in idle:
                channel.close()
            idle.clear()
            raise ConnectionRefusedError(f"{endpoint.host}:{endpoint.port} is {UNREACHABLE}")
        while idle:
            channel = idle.pop()
            try:
                return await self._exchange(endpoint, channel, body, timeout, idle)
            except (EOFError, ConnectionError):
                continue  # closed while idle: try the next one, or a new connection
        channel = await open_channel(endpoint.host, endpoint.port, self.security, self.client_id,
                                     self.max_frame_bytes, CONNECT_TIMEOUT_S)
        return await self._exchange(endpoint, channel, body, timeout, idle)

    async def _exchange(self, endpoint: Endpoint, channel: Channel, body: Struct, timeout: float,
                        idle: list[Channel]) -> Struct:
        try:
            version = channel.version_for(body.API_KEY, self.max_versions.get(body.API_KEY))
            response = await asyncio.wait_for(
                channel.exchange(body, version, next(self._correlation_ids), self.client_id), timeout)
        except BaseException:
            channel.close()
            raise
        if faults.unreachable(endpoint.host, endpoint.port):
            channel.close()
            raise ConnectionRefusedError(f"{endpoint.host}:{endpoint.port} is {UNREACHABLE}")
        if len(idle) < MAX_IDLE_CONNECTIONS:
            idle.append(channel)
        else:
            channel.close()
        return response

    def close(self) -> None:
        for channels in self._idle.values():
            for channel in channels:
                channel.close()
        self._idle.clear()


class BrokerFrontend:
    """Answers the requests arriving on broker listeners (the runtime decodes, encodes and writes)
    and keeps the broker registered with the active controller."""

    def __init__(self, options: BrokerOptions, node_id: int, cluster_id: str, core: RaftDriverFacing,
                 server_view: Callable[[str], ServerView], bound: Mapping[str, tuple[str, int]],
                 channels: ControllerChannels, line: ServerLine = NEWEST,
                 unstable_api_versions: bool = False, authorizer: StandardAuthorizer | None = None) -> None:
        self.options = options
        self.authorizer = authorizer
        self.line = line
        self.unstable_api_versions = unstable_api_versions
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.core = core
        self.server_view = server_view
        self.bound = bound
        self.channels = channels
        self.incarnation_id = Uuid.random()
        self.broker_epoch = -1
        self._unfenced_seen = False
        self._lifecycle: asyncio.Task[None] | None = None

    @property
    def listeners(self) -> frozenset[str]:
        return frozenset(self.options.listeners)

    def advertised(self, listener: str) -> tuple[str, int]:
        host, port = self.options.listeners[listener]
        return (host, self.bound.get(listener, (host, port))[1]) if port == 0 else (host, port)

    def view(self, listener: str) -> BrokerView:
        """Registered brokers with an endpoint on ``listener``. Until the image first shows this broker
        registered and unfenced, it lists itself as live: a Kafka broker opens its listeners only
        from that point on, so its clients never see it missing."""
        nodes = []
        for registration in self.core.registered_brokers():
            endpoint = next((e for e in registration.end_points if e.name == listener), None)
            if registration.broker_id == self.node_id:
                self._unfenced_seen = self._unfenced_seen or not registration.fenced
                if not self._unfenced_seen:
                    continue
            if endpoint is not None:
                nodes.append(BrokerNode(registration.broker_id, endpoint.host, endpoint.port,
                                        registration.rack, registration.fenced))
        if not self._unfenced_seen:
            host, port = self.advertised(listener)
            nodes.append(BrokerNode(self.node_id, host, port))
        return BrokerView(self.cluster_id, self.node_id, tuple(sorted(nodes, key=lambda n: n.node_id)))

    async def handle(self, call: Call) -> Answer:
        """The response and its version; None for an API the broker listener does not serve, or a
        version the node's line does not accept (ApiVersions answers every version)."""
        entry = registry.api(call.api_key)
        if entry is None or entry.broker is None:
            return None
        if call.api_key != ApiKey.API_VERSIONS and not registry.accepts(
                BROKER, call.api_key, call.version, self.line,
                unstable_api_versions=self.unstable_api_versions):
            return None
        refusal = authorization.check(self.authorizer, call, BROKER)
        if refusal is not None:
            return refusal, call.version
        return await entry.broker(self, call)

    def active_controller(self) -> Endpoint | None:
        """The quorum leader's controller endpoint, None while unknown."""
        return leader_endpoint(self.core, self.options.controller_listener_name)

    async def forward(self, call: Call) -> Struct | None:
        """Send the request to the active controller in an Envelope and return its inner response. An
        error of the Envelope itself (the controller refused this broker's principal, or could not read
        the envelope) is UNKNOWN_SERVER_ERROR in the API's response, as Kafka's ``ForwardingManager``
        answers it, and UNSUPPORTED_VERSION closes the client's connection (None)."""
        api_key, api_version = call.api_key, call.version
        controller = self.active_controller()
        if controller is None:
            log.info("[ForwardingManager id=%d] No active controller known; answering API %d with a "
                     "retriable error", self.node_id, api_key)
            return envelope.unreachable(api_key, api_version, self.node_id, call.body)
        try:
            answer = await self.channels.request(
                controller, envelope.wrap(call.frame, call.client_host, call.principal, call.principal_type),
                FORWARD_TIMEOUT_S)
            assert isinstance(answer, messages.EnvelopeResponse)
            if answer.error_code == ErrorCode.UNSUPPORTED_VERSION:
                return None
            if answer.error_code != ErrorCode.NONE:
                log.warning("[ForwardingManager id=%d] The controller refused the Envelope of API %d with "
                            "error code %d; answering UNKNOWN_SERVER_ERROR", self.node_id, api_key,
                            answer.error_code)
                unknown = ErrorCode.UNKNOWN_SERVER_ERROR
                return error_response(api_key, call.body, api_version, unknown, unknown.message)
            return envelope.unwrap_response(answer, api_key, api_version)
        except (OSError, asyncio.TimeoutError, EOFError, ValueError, KafkaAdminError) as exc:
            log.info("[ForwardingManager id=%d] Forwarding API %d to controller %d at %s:%d failed: %s",
                     self.node_id, api_key, self.core.leader_id, controller.host, controller.port, exc)
            return envelope.unreachable(api_key, api_version, self.node_id, call.body)

    # ------------------------------------------------------------------ registration

    def start(self) -> None:
        self._lifecycle = asyncio.get_running_loop().create_task(self._keep_registered(),
                                                                 name="broker lifecycle")

    async def close(self) -> None:
        if self._lifecycle is not None:
            self._lifecycle.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._lifecycle
            await self._controlled_shutdown()
        self.channels.close()

    def registration(self) -> messages.BrokerRegistrationRequest:
        R = messages.BrokerRegistrationRequest
        listeners = []
        for name in self.options.listeners:
            host, port = self.advertised(name)
            protocol = SECURITY_PROTOCOLS.index(self.options.protocols.get(name, "PLAINTEXT"))
            listeners.append(R.Listener(name=name, host=host, port=port, security_protocol=protocol))
        directory = self.options.directory_id
        return R(broker_id=self.node_id, cluster_id=self.cluster_id, incarnation_id=self.incarnation_id,
                 listeners=listeners,
                 features=[R.Feature(name=name, min_supported_version=low, max_supported_version=high)
                           for name, low, high in self.line.features.supported_features()],
                 rack=None, is_migrating_zk_broker=False, log_dirs=[directory] if directory else [],
                 previous_broker_epoch=-1)

    def heartbeat(self, *, want_shut_down: bool = False) -> messages.BrokerHeartbeatRequest:
        return messages.BrokerHeartbeatRequest(broker_id=self.node_id, broker_epoch=self.broker_epoch,
                                               current_metadata_offset=self.core.applied_offset - 1,
                                               want_fence=False, want_shut_down=want_shut_down)

    async def _controlled_shutdown(self) -> None:
        """Heartbeat with WantShutDown until the controller approves (it fences the broker first)."""
        if self.broker_epoch < 0:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CONTROLLED_SHUTDOWN_S
        lifecycle_log.info("[BrokerLifecycleManager id=%d] Beginning controlled shutdown.", self.node_id)
        while (left := deadline - loop.time()) > 0:
            controller = self.active_controller()
            try:
                if controller is None:
                    raise EOFError("no active controller is known")
                answer = await self.channels.request(controller, self.heartbeat(want_shut_down=True), left)
            except (asyncio.TimeoutError, KafkaAdminError):
                await asyncio.sleep(RETRY_BACKOFF_S)
                continue
            except (OSError, EOFError) as exc:
                lifecycle_log.info("[BrokerLifecycleManager id=%d] Shutting down without the controller's "
                                   "approval: %s", self.node_id, exc)
                return
            assert isinstance(answer, messages.BrokerHeartbeatResponse)
            if answer.error_code == ErrorCode.NONE and answer.should_shut_down:
                lifecycle_log.info("[BrokerLifecycleManager id=%d] The controller has approved our "
                                   "controlled shutdown.", self.node_id)
                return
            await asyncio.sleep(RETRY_BACKOFF_S)
        lifecycle_log.error("[BrokerLifecycleManager id=%d] Timed out waiting for the controller to approve "
                            "controlled shutdown", self.node_id)

    async def _keep_registered(self) -> None:
        """Register with the active controller, then heartbeat; register again when it forgets us."""
        interval = self.options.heartbeat_interval_ms / 1000
        while True:
            controller = self.active_controller()
            if controller is None:
                await asyncio.sleep(RETRY_BACKOFF_S)
                continue
            body: Struct = self.registration() if self.broker_epoch < 0 else self.heartbeat()
            try:
                answer = await self.channels.request(controller, body, FORWARD_TIMEOUT_S)
            except (OSError, asyncio.TimeoutError, EOFError, KafkaAdminError) as exc:
                lifecycle_log.info("[BrokerLifecycleManager id=%d] %s to controller %d failed: %s",
                                   self.node_id, type(body).__name__, self.core.leader_id, exc)
                await asyncio.sleep(RETRY_BACKOFF_S)
                continue
            await asyncio.sleep(self._on_answer(answer, interval))

    def _on_answer(self, answer: Struct, interval: float) -> float:
        """Take in a registration or heartbeat answer; return how long to wait before the next one."""
        if isinstance(answer, messages.BrokerRegistrationResponse):
            if answer.error_code != ErrorCode.NONE:
                lifecycle_log.info("[BrokerLifecycleManager id=%d] Registration refused with error %d",
                                   self.node_id, answer.error_code)
                return RETRY_BACKOFF_S
            self.broker_epoch = answer.broker_epoch
            lifecycle_log.info("[BrokerLifecycleManager id=%d] Successfully registered broker %d with broker "
                               "epoch %d", self.node_id, self.node_id, self.broker_epoch)
            return 0.0
        assert isinstance(answer, messages.BrokerHeartbeatResponse)
        if answer.error_code in (ErrorCode.STALE_BROKER_EPOCH, ErrorCode.BROKER_ID_NOT_REGISTERED):
            lifecycle_log.info("[BrokerLifecycleManager id=%d] The controller no longer knows broker "
                               "epoch %d (error %d); registering again", self.node_id, self.broker_epoch,
                               answer.error_code)
            self.broker_epoch = -1
            return 0.0
        if answer.error_code != ErrorCode.NONE:
            return RETRY_BACKOFF_S
        # Until unfenced, heartbeat more often so the broker is unfenced as soon as it caught up.
        return min(interval, 0.1) if answer.is_fenced else interval
