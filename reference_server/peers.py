"""The raft client side of a controller: requests the consensus core sends to other replicas.

One connection per destination address, opened on first use. Every new connection first asks
ApiVersions (v4, falling back to the version the peer names when it answers UNSUPPORTED_VERSION);
each request is then encoded at the highest version both sides speak (this node's side may be capped
below its codec's, ``PeerClient.max_versions``). A request no such version can carry - an API the
peer does not serve, or a field the version lacks and may not drop, such as a pre-vote's PreVote
before Vote v2 (``raft.rpc.lowest_version``) - is not sent: the core gets the API's response with
UNSUPPORTED_VERSION at once, as Kafka's NetworkClient reports a version mismatch and
KafkaNetworkChannel answers it; a Kafka 3.9 peer would close the connection on a Vote v2.
Responses are matched by correlation id. A request whose connection breaks, or that gets no answer
within ``controller.quorum.request.timeout.ms``, is reported as failed (``None``), and a timed-out
connection is closed, as Kafka's NetworkClient does. After a failed connection attempt the next one
waits an exponential backoff (``reconnect.backoff.ms`` 50 to ``reconnect.backoff.max.ms`` 1000, with
20% jitter); requests for that destination fail at once meanwhile, and the core retries them on its
own schedule.

On a TLS or SASL controller listener (``kafka_admin_kraft_server.security.ClientSecurity``) the connection
is wrapped in TLS (the SDK's context: hostname verified against the voter's address) and, after
ApiVersions, authenticated with SaslHandshake v1 and SaslAuthenticate using the SDK's mechanisms; a
refused authentication fails the connection like a refused connection, and so does an address whose
host is not a valid host name or IP address. ``open_channel`` does these steps, for the peer
connections here and for a broker's connections to the active controller.

An address the fault file names unreachable (``faults``, ``kraft-server --faults``) gets nothing sent:
its connection is closed at the next request or answer, and requests for it fail at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from kafka_admin_kraft.client.config import SaslSettings
from kafka_admin_kraft.client.sasl import SaslFailure, mechanism_for
from kafka_admin_kraft.hosts import host_problem, printable_host
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError
from kafka_admin_kraft.protocol.message import Struct

from . import faults
from .raft import rpc
from .raft.api import OutboundRequest
from .security import ClientSecurity

log = logging.getLogger("kafka.raft.KafkaNetworkChannel")

CLIENT_SOFTWARE_NAME: Final = "kafka-admin-kraft-reference-server"
CLIENT_SOFTWARE_VERSION: Final = "0.1.0"
API_VERSIONS_LATEST: Final = 4
"""Not v5: Kafka checks v5's ClusterId and NodeId on broker listeners only (KIP-1242), and peers are
controllers."""
READ_CHUNK: Final = 1 << 20
UNREACHABLE: Final = "unreachable (a network partition injected through --faults)"

ResponseCallback = Callable[[int, "Struct | None"], None]


@dataclass
class _Pending:
    request: OutboundRequest
    version: int = -1
    timer: asyncio.TimerHandle | None = None


@dataclass
class _Backoff:
    failures: int = 0
    next_attempt: float = 0.0


class _Connection:
    """One TCP connection to a peer address, with its negotiated API versions."""

    def __init__(self, client: PeerClient, host: str, port: int) -> None:
        self.client = client
        self.host = host
        self.port = port
        self.ready = False
        self.closed = False
        self.queue: list[_Pending] = []
        self.in_flight: dict[int, _Pending] = {}
        self._channel: Channel | None = None
        self._next_correlation = 1
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"peer {host}:{port}")

    def __str__(self) -> str:
        return f"{printable_host(self.host)}:{self.port}"

    def submit(self, pending: _Pending) -> None:
        if self.ready:
            self._write(pending)
        else:
            self.queue.append(pending)

    def _write(self, pending: _Pending) -> None:
        request = pending.request
        assert self._channel is not None
        version = self._channel.usable_version(request.api_key, self.client.max_versions.get(request.api_key))
        if version is None:
            self.client.unsupported(pending, self, "no version of the API both sides speak")
            return
        needed = rpc.lowest_version(request.body)
        if version < needed:
            self.client.unsupported(pending, self, f"it needs v{needed}, v{version} is the highest both "
                                                   "sides speak")
            return
        pending.version = version
        correlation_id = self._next_correlation
        try:
            frame = framing.encode_request(request.body, version, correlation_id, self.client.client_id)
        except KafkaAdminError as exc:  # a value this version cannot carry
            self.client.unsupported(pending, self, str(exc))
            return
        self._next_correlation = (correlation_id + 1) & 0x7FFFFFFF
        self.in_flight[correlation_id] = pending
        self._channel.writer.write(frame)

    async def _run(self) -> None:
        reason = "closed"
        try:
            reason = await self._connect_and_read()
        except asyncio.CancelledError:
            reason = "shutting down"
        except (OSError, EOFError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
        except KafkaAdminError as exc:
            reason = f"bad response: {exc}"
        except Exception as exc:  # never let a peer take the process down
            log.exception("%s Unexpected error on the connection to %s", self.client.prefix, self)
            reason = f"{type(exc).__name__}: {exc}"
        finally:
            self.close(reason)

    async def _connect_and_read(self) -> str:
        channel = await open_channel(self.host, self.port, self.client.security, self.client.client_id,
                                     self.client.max_frame_bytes, self.client.request_timeout_ms / 1000)
        self._channel = channel
        self.ready = True
        self.client.connected(self)
        queued, self.queue = self.queue, []
        for pending in queued:
            self._write(pending)
        while True:
            data = await channel.reader.read(READ_CHUNK)
            if not data:
                return "the peer closed the connection"
            if faults.unreachable(self.host, self.port):
                return UNREACHABLE
            for frame in channel.splitter.feed(data):
                self._on_frame(frame)

    def _on_frame(self, frame: bytes) -> None:
        correlation_id = framing.peek_correlation_id(frame)
        pending = self.in_flight.pop(correlation_id, None)
        if pending is None:
            raise OSError(f"response with unknown correlation id {correlation_id}")
        _, body = framing.decode_response(frame, pending.request.api_key, pending.version)
        self.client.complete(pending, body)

    def close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        if self._channel is not None:
            self._channel.close()
        failed = list(self.in_flight.values()) + self.queue
        self.in_flight.clear()
        self.queue = []
        self.client.disconnected(self, reason, was_ready=self.ready, failed=failed)
        if not self.task.done() and asyncio.current_task() is not self.task:
            self.task.cancel()


@dataclass
class Channel:
    """An open connection to a controller listener: TLS set up, API versions known, SASL done."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    splitter: framing.FrameSplitter
    versions: dict[int, tuple[int, int]]

    def usable_version(self, api_key: int, highest: int | None = None) -> int | None:
        """The highest version of ``api_key`` both sides speak (ours up to ``highest`` when given),
        None when there is none."""
        low, high = messages.request_class(api_key).VERSIONS
        if highest is not None:
            high = min(high, highest)
        theirs = self.versions.get(api_key)
        if theirs is None or min(high, theirs[1]) < max(low, theirs[0]):
            return None
        return min(high, theirs[1])

    def version_for(self, api_key: int, highest: int | None = None) -> int:
        """The highest version of ``api_key`` both sides speak (ours up to ``highest`` when given);
        OSError when there is none."""
        version = self.usable_version(api_key, highest)
        if version is None:
            low, high = messages.request_class(api_key).VERSIONS
            if highest is not None:
                high = min(high, highest)
            raise OSError(f"the peer does not support API key {api_key} in versions {low}-{high}")
        return version

    async def exchange(self, body: Struct, version: int, correlation_id: int, client_id: str) -> Struct:
        """Send one request and read its response (nothing else may be in flight)."""
        self.writer.write(framing.encode_request(body, version, correlation_id, client_id))
        await self.writer.drain()
        frame = await _read_frame(self.reader, self.splitter)
        got, response = framing.decode_response(frame, body.API_KEY, version)
        if got != correlation_id:
            raise OSError(f"correlation id {got} does not match {correlation_id}")
        return response

    def close(self) -> None:
        self.writer.close()


async def open_channel(host: str, port: int, security: ClientSecurity, client_id: str, max_frame_bytes: int,
                       timeout: float) -> Channel:
    """Connect (with TLS when ``security`` says so), ask ApiVersions and authenticate with SASL; each
    step within ``timeout`` seconds. OSError (or EOFError, KafkaAdminError) when any step fails, a
    host that is no valid host name or IP address included (it is never handed to the resolver)."""
    problem = host_problem(host)
    if problem is not None:
        raise OSError(f"the host {printable_host(host)} {problem}")
    context = security.ssl_context
    opening = (asyncio.open_connection(host, port, ssl=context, server_hostname=host)
               if context is not None else asyncio.open_connection(host, port))
    reader, writer = await asyncio.wait_for(opening, timeout)
    try:
        splitter = framing.FrameSplitter(max_frame_bytes)
        versions = await asyncio.wait_for(_negotiate(reader, writer, splitter, client_id), timeout)
        channel = Channel(reader, writer, splitter, versions)
        if security.sasl is not None:
            await asyncio.wait_for(_authenticate(channel, security.sasl, host, client_id), timeout)
    except BaseException:
        writer.close()
        raise
    return channel


async def _negotiate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     splitter: framing.FrameSplitter, client_id: str) -> dict[int, tuple[int, int]]:
    version = API_VERSIONS_LATEST
    for _ in range(3):
        request = messages.ApiVersionsRequest(client_software_name=CLIENT_SOFTWARE_NAME,
                                              client_software_version=CLIENT_SOFTWARE_VERSION)
        writer.write(framing.encode_request(request, version, 0, client_id))
        frame = await _read_frame(reader, splitter)
        try:
            _, body = framing.decode_response(frame, ApiKey.API_VERSIONS, version)
        except KafkaAdminError:
            # A server that does not know our version answers at v0.
            _, body = framing.decode_response(frame, ApiKey.API_VERSIONS, 0)
        assert isinstance(body, messages.ApiVersionsResponse)
        ranges = {entry.api_key: (entry.min_version, entry.max_version) for entry in body.api_keys}
        if body.error_code == ErrorCode.NONE:
            return ranges
        if body.error_code == ErrorCode.UNSUPPORTED_VERSION and ApiKey.API_VERSIONS in ranges:
            version = min(ranges[ApiKey.API_VERSIONS][1], API_VERSIONS_LATEST)
            continue
        raise OSError(f"ApiVersions failed with error code {body.error_code}")
    raise OSError("ApiVersions version negotiation did not converge")


async def _authenticate(channel: Channel, sasl: SaslSettings, host: str, client_id: str) -> None:
    """SaslHandshake v1, then SaslAuthenticate until the mechanism is done; OSError if refused."""
    mechanism = mechanism_for(sasl, host)
    body = await channel.exchange(messages.SaslHandshakeRequest(mechanism=mechanism.name), 1, 0, client_id)
    assert isinstance(body, messages.SaslHandshakeResponse)
    if body.error_code:
        raise OSError(f"SASL mechanism {mechanism.name} refused (error {body.error_code}); the peer "
                      f"enables {body.mechanisms}")
    version = channel.version_for(messages.SaslAuthenticateRequest.API_KEY)
    try:  # off the event loop: a GSSAPI login may wait for the KDC
        token: bytes | None = await asyncio.to_thread(mechanism.initial)
    except SaslFailure as exc:
        raise OSError(f"SASL authentication failed: {exc}") from None
    while token is not None:
        request = messages.SaslAuthenticateRequest(auth_bytes=token)
        reply = await channel.exchange(request, version, 0, client_id)
        assert isinstance(reply, messages.SaslAuthenticateResponse)
        if reply.error_code:
            raise OSError(f"SASL authentication failed (error {reply.error_code}): {reply.error_message}")
        try:
            token = mechanism.respond(reply.auth_bytes)
        except SaslFailure as exc:
            raise OSError(f"SASL authentication failed: {exc}") from None


async def _read_frame(reader: asyncio.StreamReader, splitter: framing.FrameSplitter) -> bytes:
    while True:
        data = await reader.read(READ_CHUNK)
        if not data:
            raise EOFError("the peer closed the connection")
        frames = splitter.feed(data)
        if frames:
            if len(frames) > 1:
                raise OSError("more than one response to a single request")
            return frames[0]


@dataclass
class PeerClient:
    """Sends the core's ``OutboundRequest`` and hands every outcome to ``on_response``."""

    node_id: int
    on_response: ResponseCallback
    request_timeout_ms: int = 2000
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1000
    max_frame_bytes: int = framing.DEFAULT_MAX_FRAME_BYTES
    security: ClientSecurity = field(default_factory=ClientSecurity)
    rng: random.Random = field(default_factory=random.Random)
    max_versions: Mapping[int, int] = field(default_factory=dict)
    """The highest version this node speaks of an API where below its codec's, by API key (a node
    running as an older Kafka line: Vote 1 for Kafka 3.9)."""
    _connections: dict[tuple[str, int], _Connection] = field(default_factory=dict)
    _backoff: dict[tuple[str, int], _Backoff] = field(default_factory=dict)
    _closing: bool = False

    @property
    def client_id(self) -> str:
        return f"raft-client-{self.node_id}"

    @property
    def prefix(self) -> str:
        return f"[RaftManager id={self.node_id}]"

    def send(self, request: OutboundRequest) -> None:
        key = (request.destination.host, request.destination.port)
        pending = _Pending(request)
        connection = self._connections.get(key)
        if self._closing or faults.unreachable(*key):
            if connection is not None and not self._closing:
                connection.close(UNREACHABLE)
            self.fail(pending)
            return
        if connection is None or connection.closed:
            backoff = self._backoff.get(key)
            loop = asyncio.get_running_loop()
            if backoff is not None and loop.time() < backoff.next_attempt:
                self.fail(pending)
                return
            connection = _Connection(self, *key)
            self._connections[key] = connection
        pending.timer = asyncio.get_running_loop().call_later(
            self.request_timeout_ms / 1000, self._timed_out, connection, pending)
        connection.submit(pending)

    def _timed_out(self, connection: _Connection, pending: _Pending) -> None:
        pending.timer = None
        log.info("%s Request %d (%s) to %s timed out after %d ms; disconnecting", self.prefix,
                 pending.request.request_id, type(pending.request.body).__name__, connection,
                 self.request_timeout_ms)
        connection.close(f"request timed out after {self.request_timeout_ms} ms")

    def complete(self, pending: _Pending, body: Struct | None) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
            pending.timer = None
        self.on_response(pending.request.request_id, body)

    def fail(self, pending: _Pending) -> None:
        self.complete(pending, None)

    def unsupported(self, pending: _Pending, connection: _Connection, reason: str) -> None:
        """The request cannot be written at a version the peer speaks: answer it UNSUPPORTED_VERSION
        without sending it (Kafka's KafkaNetworkChannel on a version mismatch)."""
        request = pending.request
        log.error("%s Request %d (%s) to %s failed due to unsupported version error: %s", self.prefix,
                  request.request_id, type(request.body).__name__, connection, reason)
        self.complete(pending, rpc.error_response(request.api_key, ErrorCode.UNSUPPORTED_VERSION))

    def connected(self, connection: _Connection) -> None:
        key = (connection.host, connection.port)
        if key in self._backoff:
            log.info("%s Connected to %s", self.prefix, connection)
        self._backoff.pop(key, None)

    def disconnected(self, connection: _Connection, reason: str, *, was_ready: bool,
                     failed: list[_Pending]) -> None:
        key = (connection.host, connection.port)
        if self._connections.get(key) is connection:
            del self._connections[key]
        if not self._closing:
            backoff = self._backoff.setdefault(key, _Backoff())
            if not was_ready:
                backoff.failures += 1
                delay_ms = min(self.reconnect_backoff_ms * 2 ** (backoff.failures - 1),
                               self.reconnect_backoff_max_ms)
                delay_ms *= self.rng.uniform(0.8, 1.2)
                backoff.next_attempt = asyncio.get_running_loop().time() + delay_ms / 1000
                if backoff.failures == 1:
                    log.warning("%s Connection to %s could not be established (%s). Node may not be "
                                "available.", self.prefix, connection, reason)
            else:
                log.info("%s Disconnected from %s: %s", self.prefix, connection, reason)
        for pending in failed:
            self.fail(pending)

    def in_flight(self) -> int:
        """Requests sent or queued that have no outcome yet."""
        return sum(len(c.in_flight) + len(c.queue) for c in self._connections.values())

    async def close(self) -> None:
        self._closing = True
        connections = list(self._connections.values())
        for connection in connections:
            connection.close("shutting down")
        for connection in connections:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await connection.task
