"""The broker role's client listeners: what a node with ``process.roles=broker`` serves to clients.

The node replicates the metadata log as an observer of the quorum (the consensus core does that: a
replica that is not a voter fetches from the leader it finds through
``controller.quorum.bootstrap.servers``). On its broker listeners (every ``listeners`` entry not
named in ``controller.listener.names``) it answers, as a Kafka broker does:

- ApiVersions with the broker API set (``handlers.metadata.BROKER_APIS``) and the finalized features
  of its metadata image;
- Metadata and DescribeCluster from its metadata cache (``handlers.metadata``);
- DescribeQuorum, AddRaftVoter, RemoveRaftVoter and UpdateFeatures by forwarding them to the active
  controller wrapped in an Envelope (``handlers.envelope``). The active controller is the quorum
  leader the core knows, reached at its endpoint for the first ``controller.listener.names`` entry
  in the voter set. Each forwarded request uses its own connection, so a slow AddRaftVoter holds up
  no other client. When no controller can be reached the client gets NOT_CONTROLLER or
  NOT_LEADER_OR_FOLLOWER and retries.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError
from kafka_admin_kraft.protocol.message import Struct
from reference_server.handlers import ServerView, api_versions, envelope
from reference_server.handlers.metadata import (
    BROKER_APIS,
    BrokerNode,
    BrokerView,
    handle_describe_cluster,
    handle_metadata,
)
from reference_server.raft.api import Endpoint, RaftDriverFacing

log = logging.getLogger("kafka.server.ForwardingManager")

FORWARD_TIMEOUT_S: Final = 30.0
"""How long a forwarded request may take at the controller (AddRaftVoter waits for a commit)."""


@dataclass(frozen=True)
class BrokerOptions:
    """The broker listeners and where the controllers listen."""

    listeners: Mapping[str, tuple[str, int]]
    """Broker listener name -> advertised (host, port); port 0 means the port actually bound."""
    controller_listener_name: str
    """The first ``controller.listener.names`` entry: the controllers' endpoint to forward to."""


class BrokerFrontend:
    """Answers the requests arriving on broker listeners; the runtime decodes, encodes and writes."""

    def __init__(self, options: BrokerOptions, node_id: int, cluster_id: str, core: RaftDriverFacing,
                 server_view: Callable[[str], ServerView], bound: Mapping[str, tuple[str, int]]) -> None:
        self.options = options
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.core = core
        self.server_view = server_view
        self.bound = bound
        self._correlation_ids = itertools.count(1)

    @property
    def listeners(self) -> frozenset[str]:
        return frozenset(self.options.listeners)

    def view(self, listener: str) -> BrokerView:
        host, port = self.options.listeners[listener]
        if port == 0:
            port = self.bound.get(listener, (host, port))[1]
        return BrokerView(self.cluster_id, self.node_id, (BrokerNode(self.node_id, host, port),))

    async def handle(self, request: framing.RequestFrame, frame: bytes, listener: str,
                     client_host: str) -> tuple[Struct, int] | None:
        """The response and its version; None for an API the broker listener does not serve."""
        key, version = request.header.request_api_key, request.header.request_api_version
        body = request.body
        if key not in BROKER_APIS:
            return None
        if key == api_versions.API_KEY:
            assert body is None or isinstance(body, messages.ApiVersionsRequest)
            return api_versions.handle(body, version, self.server_view(listener), api_keys=BROKER_APIS)
        if isinstance(body, messages.MetadataRequest):
            return handle_metadata(body, version, self.view(listener)), version
        if isinstance(body, messages.DescribeClusterRequest):
            return handle_describe_cluster(body, version, self.view(listener)), version
        return await self.forward(frame, key, version, client_host), version

    def active_controller(self) -> Endpoint | None:
        """The quorum leader's controller endpoint, None while unknown."""
        leader = self.core.voters.voters.get(self.core.leader_id)
        if leader is None or not leader.endpoints:
            return None
        name = self.options.controller_listener_name
        return next((e for e in leader.endpoints if e.name == name), leader.endpoints[0])

    async def forward(self, frame: bytes, api_key: int, api_version: int, client_host: str) -> Struct:
        """Send the request to the active controller in an Envelope and return its inner response."""
        controller = self.active_controller()
        if controller is None:
            log.info("[ForwardingManager id=%d] No active controller known; answering API %d with a "
                     "retriable error", self.node_id, api_key)
            return envelope.unreachable(api_key, api_version, self.node_id)
        wrapped = envelope.wrap(frame, client_host)
        try:
            answer = await asyncio.wait_for(self._exchange(controller, wrapped), FORWARD_TIMEOUT_S)
            return envelope.unwrap_response(answer, api_key, api_version)
        except (OSError, asyncio.TimeoutError, EOFError, ValueError, KafkaAdminError) as exc:
            log.info("[ForwardingManager id=%d] Forwarding API %d to controller %d at %s:%d failed: %s",
                     self.node_id, api_key, self.core.leader_id, controller.host, controller.port, exc)
            return envelope.unreachable(api_key, api_version, self.node_id)

    async def _exchange(self, controller: Endpoint,
                        wrapped: messages.EnvelopeRequest) -> messages.EnvelopeResponse:
        reader, writer = await asyncio.open_connection(controller.host, controller.port)
        try:
            correlation_id = next(self._correlation_ids)
            writer.write(framing.encode_request(wrapped, 0, correlation_id,
                                                client_id=f"broker-{self.node_id}-forwarding"))
            await writer.drain()
            size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
            if size < 0:
                raise ValueError(f"negative response size {size}")
            got, body = framing.decode_response(await reader.readexactly(size), envelope.API_KEY, 0)
            if got != correlation_id:
                raise ValueError(f"correlation id {got} does not match {correlation_id}")
            assert isinstance(body, messages.EnvelopeResponse)
            return body
        finally:
            writer.close()
