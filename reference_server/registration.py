"""Controller registration (KIP-919): every controller, voter or observer, keeps itself registered with
the active controller, as Kafka's ControllerRegistrationManager does, so that DescribeCluster sent to
any controller lists every controller's endpoints.

- Each process start draws a new random incarnation id.
- Once the committed image holds metadata.version 3.7-IV0 or later and the quorum leader is known,
  the node sends ControllerRegistration (v0) to the leader's endpoint on the default controller
  listener, with the node's controller-client security (TLS, SASL): its controller listeners as
  advertised (a port of 0 stands for the one bound) with their security protocols, ZkMigrationReady
  false, and the feature ranges it supports (the testing ones with
  ``unstable.feature.versions.enable``). The active controller appends a RegisterControllerRecord and
  answers once it is committed (``handlers.controller_registration``).
- Each attempt uses a connection of its own, closed once answered (client id
  ``controller-registration-<id>``, which a leader over its connection caps lets in as it lets in
  raft clients); the node does not keep a connection open on every leader's listener, where it
  would take one of the slots ``max.connections`` leaves for clients. For the same reason the
  leader registers itself in process, through the same decision, append and commit as any
  registration (Kafka sends that one over its controller listener too).
- The node is registered when its committed image holds a registration for its id with its
  incarnation id; then nothing more is sent. After an answer without error it waits for that record
  to reach its image. An error answer, a timeout or a failed connection makes it try again after
  Kafka's backoff (100 ms, doubling up to 120 s, 2% jitter), sooner when another leader becomes
  known; NOT_CONTROLLER (the leader is not active yet, or no longer leads) is retried after 100 ms
  without growing the backoff, as Kafka's channel to the controller retries it on its own.
- Should the image come to show another incarnation for this id (a second process with the same
  id), or none (UnregisterController removed it, KIP-1312), the node registers again, as Kafka does.

The runtime calls ``wake`` whenever the core was polled; the manager itself reads only the core's
committed state, so it never holds up the raft driver.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Final

from kafka_admin_kraft.config.security import SECURITY_PROTOCOLS
from kafka_admin_kraft.features import CONTROLLER_REGISTRATION_VERSION, NEWEST, KafkaLine
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid

from .broker import ControllerChannels, leader_endpoint
from .connections import REGISTRATION_CLIENT_PREFIX
from .raft.api import Endpoint, NodeIdentity, RaftDriverFacing

log = logging.getLogger("kafka.server.ControllerRegistrationManager")

INITIAL_BACKOFF_S: Final = 0.1
MAX_BACKOFF_S: Final = 120.0
BACKOFF_JITTER: Final = 0.02
"""Kafka's ControllerRegistrationManager backoff: 100 ms, doubling per failure up to 120 s, +-2%."""
NOT_CONTROLLER_RETRY_S: Final = 0.1

Request = messages.ControllerRegistrationRequest
Local = Callable[[Request], Awaitable[Struct | None]]
"""How the leader registers itself: the runtime's handling of a request, None once it shuts down."""


def client_id(node_id: int) -> str:
    return f"{REGISTRATION_CLIENT_PREFIX}{node_id}"


class ControllerRegistrationManager:
    """Keeps this controller registered; ``await run()`` until cancelled."""

    def __init__(self, identity: NodeIdentity, core: RaftDriverFacing, channels: ControllerChannels,
                 local: Local, *, bound: Mapping[str, tuple[str, int]], protocols: Mapping[str, str],
                 unstable: bool, request_timeout_s: float, features: KafkaLine = NEWEST) -> None:
        self.identity = identity
        self.core = core
        self.channels = channels
        self.local = local
        self.bound = bound
        """Listener name -> (host, port) bound; read when a request is made (ports are bound later)."""
        self.protocols = protocols
        """Listener name -> security protocol; PLAINTEXT when absent."""
        self.unstable = unstable
        self.features = features
        """The feature tables of the node's Kafka line, whose ranges it registers."""
        self.request_timeout_s = request_timeout_s
        self.rng = random.Random()
        self.incarnation_id = Uuid.random()
        self.registered = False
        """The committed image holds this incarnation's registration."""
        self.acknowledged = False
        """The active controller committed our registration; the image has not shown it yet."""
        self.failures = 0
        self._changed = asyncio.Event()
        self._seen_offset = -1
        self._seen_incarnation: Uuid | None = None
        self._metadata_version: int | None = None
        self._prefix = (f"[ControllerRegistrationManager id={identity.node_id} "
                        f"incarnation={self.incarnation_id}]")

    def wake(self) -> None:
        """The core was polled: its committed image or its leader may have changed."""
        self._changed.set()

    def request(self) -> messages.ControllerRegistrationRequest:
        """What this process registers: its controller listeners as advertised, its feature ranges."""
        listeners = []
        for endpoint in self.identity.listeners:
            port = endpoint.port or self.bound.get(endpoint.name, (endpoint.host, 0))[1]
            protocol = SECURITY_PROTOCOLS.index(self.protocols.get(endpoint.name, "PLAINTEXT"))
            listeners.append(Request.Listener(name=endpoint.name, host=endpoint.host, port=port,
                                              security_protocol=protocol))
        features = [Request.Feature(name=name, min_supported_version=low, max_supported_version=high)
                    for name, low, high in self.features.supported_features(unstable=self.unstable)]
        return Request(controller_id=self.identity.node_id, incarnation_id=self.incarnation_id,
                       zk_migration_ready=False, listeners=listeners, features=features)

    async def run(self) -> None:
        while True:
            self._changed.clear()
            self._observe()
            if not self._should_send():
                await self._changed.wait()
                continue
            leader = (self.core.epoch, self.core.leader_id)
            code = await self._send()
            if code == ErrorCode.NONE:
                self.failures = 0
                self.acknowledged = True
                log.info("%s The active controller committed our registration", self._prefix)
                continue
            if code == ErrorCode.NOT_CONTROLLER:
                delay = NOT_CONTROLLER_RETRY_S
            else:
                delay = min(INITIAL_BACKOFF_S * 2 ** self.failures, MAX_BACKOFF_S)
                delay *= 1 + self.rng.uniform(-BACKOFF_JITTER, BACKOFF_JITTER)
                self.failures += 1
            await self._pause(delay, leader)

    def _observe(self) -> None:
        """Take in what the committed image says, when it moved since the last look."""
        offset = self.core.applied_offset
        if offset == self._seen_offset:
            return
        self._seen_offset = offset
        level = self.core.committed_features().metadata_version
        if level != self._metadata_version and level is not None and level < CONTROLLER_REGISTRATION_VERSION:
            log.info("%s Not registering: metadata.version %d predates controller registration (3.7-IV0)",
                     self._prefix, level)
        self._metadata_version = level
        current = next((r.incarnation_id for r in self.core.registered_controllers()
                        if r.controller_id == self.identity.node_id), None)
        if current != self._seen_incarnation:
            self._seen_incarnation = current
            if current == self.incarnation_id:
                log.info("%s Our registration is in the committed metadata", self._prefix)
            elif self.registered or self.acknowledged:
                holds = "no registration" if current is None else f"incarnation {current}"
                log.info("%s The metadata now holds %s of this controller instead of ours; registering "
                         "again", self._prefix, holds)
                self.acknowledged = False
        self.registered = current == self.incarnation_id

    def _should_send(self) -> bool:
        """Not registered, not waiting for the image to show it, metadata.version 3.7-IV0 or later and
        a leader known (by its endpoint, unless it is this node)."""
        level = self._metadata_version
        if self.registered or self.acknowledged or level is None or level < CONTROLLER_REGISTRATION_VERSION:
            return False
        return self._leads() or self._leader_endpoint() is not None

    def _leads(self) -> bool:
        return self.core.leader_id == self.identity.node_id

    def _leader_endpoint(self) -> Endpoint | None:
        return leader_endpoint(self.core, self.identity.listeners[0].name)

    async def _send(self) -> int | None:
        """The answer's error code, None when no answer came."""
        request = self.request()
        leader = self.core.leader_id
        endpoint = None if self._leads() else self._leader_endpoint()
        where = "itself" if endpoint is None else f"controller {leader} at {endpoint.host}:{endpoint.port}"
        log.info("%s Registering with %s: listeners %s", self._prefix, where,
                 [f"{item.name}://{item.host}:{item.port}" for item in request.listeners])
        try:
            if endpoint is None:
                answer = await self.local(request)
                if answer is None:  # the runtime is shutting down
                    raise asyncio.CancelledError
            else:
                try:
                    answer = await self.channels.request(endpoint, request, self.request_timeout_s)
                finally:
                    self.channels.close()
        except (OSError, asyncio.TimeoutError, EOFError, KafkaAdminError) as exc:
            log.info("%s Registration with controller %d failed: %s", self._prefix, leader,
                     exc or type(exc).__name__)
            return None
        assert isinstance(answer, messages.ControllerRegistrationResponse)
        if answer.error_code != ErrorCode.NONE:
            log.info("%s Controller %d refused the registration with error %d (%s)", self._prefix, leader,
                     answer.error_code, answer.error_message)
        return answer.error_code

    async def _pause(self, delay: float, leader: tuple[int, int]) -> None:
        """Wait ``delay`` seconds, or less if another leader (or epoch) becomes known meanwhile."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + delay
        while (self.core.epoch, self.core.leader_id) == leader:
            left = deadline - loop.time()
            if left <= 0:
                return
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
