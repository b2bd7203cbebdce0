"""The sans-I/O core of the admin client: connections, version negotiation, routing and retries.

Every admin operation is a generator that *yields effects* and receives their results:

* :class:`Connect` ``(address, timeout)`` -> a connection handle (TCP, plus TLS when configured);
* :class:`Exchange` ``(handle, frame, timeout)`` -> the response frame (without its size prefix);
* :class:`Close` ``(handle)``; :class:`Sleep` ``(seconds)``;
* :class:`Call` ``(function)`` -> its result: blocking work such as fetching an OAuth token.

A driver (``run_sync`` with blocking sockets, ``run_async`` on asyncio, or an in-memory transport
in tests) performs them; failures come back into the generator as
:class:`~kafka_admin_kraft.errors.KafkaConnectionError` (``timed_out`` set for timeouts). So the
sync :class:`~kafka_admin_kraft.Admin` and the :class:`~kafka_admin_kraft.AsyncAdmin` share every
decision: which node, which version, when to retry, when to give up.

The behaviour follows Kafka's Java Admin client:

1. Each new connection starts with ApiVersions (v4, falling back to the range a server that does not
   know v4 reports) and, for ``SASL_*``, SaslHandshake v1 + SaslAuthenticate. ApiVersions is asked
   once per connection; each request then uses the highest version both sides speak.
2. With ``bootstrap.controllers`` a DescribeCluster (v1+, EndpointType 2) to a bootstrap controller
   names the active controller; requests go there. With ``bootstrap.servers`` requests go to any
   reachable broker, which forwards them.
3. A call has a deadline (its timeout, else ``default.api.timeout.ms``); each request's timeout is
   ``min(request.timeout.ms, time left)``. Lost connections, request timeouts, answers that are not
   Kafka responses (that node's failure: its connection is dropped, the next address is tried) and
   the errors the operation declares retriable (NOT_CONTROLLER, NOT_LEADER_OR_FOLLOWER, ...) make
   the client forget the controller, back off exponentially (``retry.backoff.ms`` doubling up to
   ``retry.backoff.max.ms``, +-20 % jitter) and try again until the deadline, which raises
   :class:`~kafka_admin_kraft.errors.KafkaTimeoutError` naming the last error. Other errors surface
   at once, with the server's message, the operation and the node.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kafka_admin_kraft.client.config import Address, ClientConfig, format_address
from kafka_admin_kraft.errors import (
    BootstrapError,
    ErrorCode,
    KafkaAdminError,
    KafkaApiError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    ProtocolError,
    Refusal,
    UnknownNodeError,
    UnsupportedOperationError,
    error_for_code,
)
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.message import Struct

T = TypeVar("T")
S = TypeVar("S", bound=Struct)

CLIENT_SOFTWARE_NAME = "kafka-admin-kraft"
CLIENT_SOFTWARE_VERSION = "0.1.0"
API_VERSIONS_MAX = 4
"""ApiVersions v5 only adds the identity check of KIP-1242, which a client that does not rebootstrap has no
use for; v4 also saves older nodes a retry."""
CONTROLLER_ENDPOINTS = 2
BROKER_ENDPOINTS = 1
JITTER = 0.2


@dataclass(frozen=True, slots=True)
class Connect:
    """Open a connection to ``address`` within ``timeout`` seconds; result: a handle."""

    address: Address
    timeout: float


@dataclass(frozen=True, slots=True)
class Exchange:
    """Send ``frame`` on ``handle`` and return the next response frame body, within ``timeout``."""

    handle: Any
    frame: bytes
    timeout: float


@dataclass(frozen=True, slots=True)
class Close:
    """Close a connection handle (never fails)."""

    handle: Any


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait ``seconds``."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Call:
    """Run ``function``, which may block (a token fetch), where blocking is allowed; result: its value."""

    function: Callable[[], Any]


Effect = Connect | Exchange | Close | Sleep | Call
Op = Generator[Effect, Any, T]


class NotYetKnownError(KafkaClientError):
    """The cluster cannot name the node a call needs yet: no active controller (an election is going
    on). Retried, as Kafka's client waits for its metadata."""


class _Established(KafkaConnectionError):
    """The TCP connection was made but failed or stalled afterwards: not a bootstrap failure."""


class _Expired(Exception):
    """The call's deadline has passed."""


@dataclass
class Connection:
    """An open connection and what its ApiVersions said."""

    address: Address
    handle: Any
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)
    node_id: int | None = None
    correlation_id: int = 0
    unproven: bool = True
    """No request past ApiVersions has been answered yet: a close now may be a SASL listener's refusal."""

    @property
    def label(self) -> str:
        where = format_address(self.address)
        return f"node {self.node_id} ({where})" if self.node_id is not None else where


RetryPolicy = Callable[[KafkaApiError], bool]


def retriable_errors(error: KafkaApiError) -> bool:
    """Retry every error Kafka marks retriable (describe operations)."""
    return error.retriable


class AdminCore:
    """State shared by the operations of one admin client: connections, controller, config."""

    def __init__(
        self, config: ClientConfig, clock: Callable[[], float], *, rng: random.Random | None = None
    ) -> None:
        self.config = config
        self.clock = clock
        self.rng = rng or random.Random()
        self.connections: dict[Address, Connection] = {}
        self.controller_id: int | None = None
        self.controller: Address | None = None
        self.known_nodes: dict[int, Address] = {}
        self.last_api: int | None = None
        """The API key of the last request sent (what an authorization error refers to)."""
        self._cursor = 0
        self._epoch = time.time() - clock()

    def wall_clock_ms(self) -> int:
        """Epoch milliseconds read off the transport's clock (fixed to the wall clock when the client
        was made), so that times within and across calls agree with the client's timeouts."""
        return int((self._epoch + self.clock()) * 1000)

    # ------------------------------------------------------------------ calls and retries

    def call(
        self,
        operation: str,
        attempt: Callable[[float], Op[T]],
        timeout: float | None,
        retry: RetryPolicy = retriable_errors,
    ) -> Op[T]:
        """Run ``attempt(deadline)`` until it returns, retrying as the module docstring says."""
        budget = self.config.default_api_timeout if timeout is None else timeout
        deadline = self.clock() + budget
        failures = 0
        last_error: BaseException | None = None
        while True:
            try:
                return (yield from attempt(deadline))
            except _Expired:
                raise self._timeout(operation, budget, last_error) from last_error
            except (KafkaConnectionError, NotYetKnownError) as exc:
                last_error = exc
                self.forget_controller()
            except KafkaApiError as exc:
                if exc.operation is None:
                    exc.in_context(operation)
                if exc.code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED and exc.refusal is None:
                    self._explain(exc)
                if not retry(exc):
                    raise
                last_error = exc
                if exc.code in (ErrorCode.NOT_CONTROLLER, ErrorCode.NOT_LEADER_OR_FOLLOWER):
                    self.forget_controller()
            failures += 1
            if failures > self.config.retries:
                if isinstance(last_error, _Established):  # routing detail, not a kind of error for callers
                    raise KafkaConnectionError(
                        last_error.address, last_error.reason, timed_out=last_error.timed_out
                    ) from None
                raise last_error
            backoff = min(self.config.retry_backoff_max, self.config.retry_backoff * 2 ** (failures - 1))
            backoff *= 1 + self.rng.uniform(-JITTER, JITTER)
            if self.clock() + backoff >= deadline:
                raise self._timeout(operation, budget, last_error) from last_error
            yield Sleep(backoff)

    def _explain(self, error: KafkaApiError) -> None:
        """Say who was refused the last request sent and what would allow it (``kafka_admin_kraft.acl``)."""
        from kafka_admin_kraft import acl
        from kafka_admin_kraft.client.principal import configured_principal

        if self.last_api is None:
            return
        listener = acl.CONTROLLER if self.config.bootstrap_controllers else acl.BROKER
        needed = acl.cluster_operation(self.last_api, listener)
        if needed is None:
            return
        through_brokers = acl.cluster_operation(self.last_api, acl.BROKER)
        api = messages.request_class(self.last_api).NAME.removesuffix("Request")
        error.refused(Refusal(
            principal=configured_principal(self.config), api=api, listener=listener, operation=needed.name,
            forwarded=listener == acl.BROKER and self.last_api in acl.FORWARDED,
            broker_operation=through_brokers.name if through_brokers is not None else None,
            server_message=error.message))

    def _timeout(self, operation: str, budget: float, last_error: BaseException | None) -> KafkaClientError:
        if isinstance(last_error, BootstrapError):
            return BootstrapError(
                last_error.failures, f"{last_error.setting} ({operation} gave up after {budget:g} s)"
            )
        return KafkaTimeoutError(operation, budget, last_error)

    def remaining(self, deadline: float) -> float:
        left = deadline - self.clock()
        if left <= 0:
            raise _Expired()
        return left

    def request_timeout(self, deadline: float) -> float:
        return min(self.config.request_timeout, self.remaining(deadline))

    def forget_controller(self) -> None:
        self.controller = None
        self.controller_id = None

    # ------------------------------------------------------------------ connections

    def connection(self, address: Address, deadline: float) -> Op[Connection]:
        """The open connection to ``address``, opening (and negotiating) one if needed."""
        conn = self.connections.get(address)
        if conn is not None:
            return conn
        timeout = min(self.config.connection_setup_timeout, self.remaining(deadline))
        handle = yield Connect(address, timeout)
        conn = Connection(address, handle)
        conn.node_id = next((i for i, a in self.known_nodes.items() if a == address), None)
        try:
            yield from self._api_versions(conn, deadline)
            if self.config.sasl is not None:
                yield from self._authenticate(conn, deadline)
        except KafkaConnectionError as exc:
            yield Close(handle)
            raise _Established(exc.address, exc.reason, timed_out=exc.timed_out) from None
        except GeneratorExit:
            raise  # abandoned by its driver: no effect can be yielded any more
        except BaseException:
            yield Close(handle)
            raise
        self.connections[address] = conn
        return conn

    def drop(self, conn: Connection) -> Op[None]:
        if self.connections.get(conn.address) is conn:
            del self.connections[conn.address]
        yield Close(conn.handle)

    def close(self) -> Op[None]:
        for conn in list(self.connections.values()):
            yield from self.drop(conn)
        self.forget_controller()

    def _api_versions(self, conn: Connection, deadline: float) -> Op[None]:
        version = API_VERSIONS_MAX
        for _ in range(2):
            response = yield from self.api_versions_request(conn, version, deadline)
            if response.error_code == ErrorCode.UNSUPPORTED_VERSION:
                ours = next((k for k in response.api_keys if k.api_key == ApiKey.API_VERSIONS), None)
                if ours is None or ours.max_version < 0:
                    break
                version = min(API_VERSIONS_MAX, ours.max_version)
                continue
            if response.error_code:
                raise error_for_code(response.error_code).in_context("ApiVersions", conn.label)
            conn.versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            return
        raise UnsupportedOperationError(
            "ApiVersions",
            "ApiVersions",
            conn.label,
            "it does not accept any ApiVersions version this client speaks",
        )

    def api_versions_request(
        self, conn: Connection, version: int, deadline: float
    ) -> Op[messages.ApiVersionsResponse]:
        """One ApiVersions exchange; an answer the server encoded at v0 (its reply to a version it
        does not know) is read as v0, as Kafka's client does."""
        request = messages.ApiVersionsRequest(
            client_software_name=CLIENT_SOFTWARE_NAME, client_software_version=CLIENT_SOFTWARE_VERSION
        )
        raw = yield from self._exchange(conn, request, version, deadline)
        body = yield from self._decode(conn, raw, ApiKey.API_VERSIONS, (version, 0) if version else (0,))
        assert isinstance(body, messages.ApiVersionsResponse)
        return body

    def _authenticate(self, conn: Connection, deadline: float) -> Op[None]:
        # hashlib, hmac and secrets load only for SASL connections, off the tools' start-up path
        from kafka_admin_kraft.client import sasl as sasl_client

        sasl = self.config.sasl
        assert sasl is not None
        mechanism = sasl_client.mechanism_for(sasl, conn.address[0])
        where = format_address(conn.address)
        if ApiKey.SASL_HANDSHAKE not in conn.versions:
            raise sasl_client.listener_failure(where, tls=self.config.uses_tls, enabled=None)
        handshake_version = self.choose_version(
            conn, messages.SaslHandshakeRequest, "authenticate", minimum=1
        )
        handshake = yield from self.request(
            conn, messages.SaslHandshakeRequest(mechanism=mechanism.name), handshake_version, deadline
        )
        if handshake.error_code:
            raise sasl_client.handshake_failure(
                where, mechanism.name, handshake.error_code, handshake.mechanisms, tls=self.config.uses_tls
            )
        auth_version = self.choose_version(conn, messages.SaslAuthenticateRequest, "authenticate")
        try:
            if mechanism.blocking_prepare:
                yield Call(mechanism.prepare)
            token: bytes | None = mechanism.initial()
        except sasl_client.SaslFailure as exc:
            raise sasl_client.exchange_failure(where, mechanism.name, None, str(exc)) from None
        while token is not None:
            response = yield from self.request(
                conn, messages.SaslAuthenticateRequest(auth_bytes=token), auth_version, deadline
            )
            if response.error_code:
                raise sasl_client.exchange_failure(
                    where, mechanism.name, response.error_code, response.error_message,
                    mechanism.failure_fix(response.error_message),
                )
            try:
                token = mechanism.respond(response.auth_bytes)
            except sasl_client.SaslFailure as exc:
                raise sasl_client.exchange_failure(where, mechanism.name, None, str(exc)) from None

    def _sasl_listener(self, address: Address, deadline: float) -> Op[list[str] | None]:
        """The mechanisms of the SASL listener at ``address``, or None when it is no SASL listener (or
        does not say): on a fresh connection, a SASL listener answers a SaslHandshake with its enabled
        mechanisms (Kafka's ``SaslServerAuthenticator``), any other refuses it or does not offer it."""
        handle = yield Connect(address, min(self.config.connection_setup_timeout, self.remaining(deadline)))
        conn = Connection(address, handle, unproven=False)
        answer: messages.SaslHandshakeResponse | None = None
        try:
            yield from self._api_versions(conn, deadline)
            if ApiKey.SASL_HANDSHAKE in conn.versions:
                version = self.choose_version(conn, messages.SaslHandshakeRequest, "authenticate")
                request = messages.SaslHandshakeRequest(mechanism="PLAIN")
                answer = yield from self.request(conn, request, version, deadline)
        except GeneratorExit:
            raise  # abandoned by its driver: no effect can be yielded any more
        except (KafkaAdminError, _Expired):
            pass  # no answer: nothing to tell
        except BaseException:
            yield Close(handle)
            raise
        yield Close(handle)  # closing twice (after a lost exchange) is harmless
        if answer is None or answer.error_code not in (ErrorCode.NONE, ErrorCode.UNSUPPORTED_SASL_MECHANISM):
            return None
        return list(answer.mechanisms)

    def probe(self, address: Address, deadline: float) -> Op[messages.ApiVersionsResponse]:
        """Ask ``address`` ApiVersions now, on its open connection or a new one: whether the node
        answers, and its feature levels. Any failure, running out of time included, is a
        :class:`KafkaConnectionError`; nothing is retried."""
        try:
            conn = yield from self.connection(address, deadline)
            theirs = conn.versions.get(ApiKey.API_VERSIONS, (0, 0))
            response = yield from self.api_versions_request(conn, min(API_VERSIONS_MAX, theirs[1]), deadline)
        except _Expired:
            raise KafkaConnectionError(format_address(address), "no answer in time", timed_out=True) from None
        except _Established as exc:
            raise KafkaConnectionError(exc.address, exc.reason, timed_out=exc.timed_out) from None
        return response

    # ------------------------------------------------------------------ requests

    def choose_version(
        self, conn: Connection, cls: type[Struct], operation: str, *, minimum: int = 0, why: str = ""
    ) -> int:
        """The highest version of ``cls`` both sides speak, at least ``minimum``; ``why`` ends the error
        when there is none (which release it takes)."""
        ours_min, ours_max = cls.VERSIONS
        api = cls.NAME.removesuffix("Request")
        theirs = conn.versions.get(cls.API_KEY)
        if theirs is None:
            raise UnsupportedOperationError(
                operation,
                api,
                conn.label,
                f"it does not advertise {api} (API key {cls.API_KEY}){' ' + why if why else ''}",
            )
        low = max(ours_min, theirs[0], minimum)
        high = min(ours_max, theirs[1])
        if high < low:
            need = f"v{max(ours_min, minimum)}-{ours_max}"
            raise UnsupportedOperationError(
                operation,
                api,
                conn.label,
                f"it speaks {api} v{theirs[0]}-{theirs[1]}, this request needs "
                f"{need}{' ' + why if why else ''}",
            )
        return high

    def _exchange(self, conn: Connection, body: Struct, version: int, deadline: float) -> Op[bytes]:
        conn.correlation_id = (conn.correlation_id + 1) & 0x7FFFFFFF
        frame = framing.encode_request(body, version, conn.correlation_id, self.config.client_id)
        timeout = self.request_timeout(deadline)
        try:
            raw: bytes = yield Exchange(conn.handle, frame, timeout)
        except KafkaConnectionError as exc:
            yield from self.drop(conn)
            if self._refused_without_sasl(conn, body, exc):
                from kafka_admin_kraft.client.sasl import listener_failure

                mechanisms = yield from self._sasl_listener(conn.address, deadline)
                if mechanisms is not None:
                    where = format_address(conn.address)
                    raise listener_failure(where, tls=self.config.uses_tls, enabled=mechanisms) from None
            if exc.address != conn.label:
                raise KafkaConnectionError(conn.label, exc.reason, timed_out=exc.timed_out) from None
            raise
        except GeneratorExit:
            raise  # abandoned by its driver: no effect can be yielded any more
        except BaseException:
            yield from self.drop(conn)  # interrupted (cancelled): a response may still be on its way
            raise
        if len(raw) < 4:
            yield from self.drop(conn)
            raise KafkaConnectionError(conn.label, f"a {len(raw)}-byte response is too short for a header")
        received = framing.peek_correlation_id(raw)
        if received != conn.correlation_id:
            yield from self.drop(conn)
            raise KafkaConnectionError(
                conn.label, f"response correlation id {received} does not match request {conn.correlation_id}"
            )
        if body.API_KEY != ApiKey.API_VERSIONS:
            conn.unproven = False
        return raw

    def _refused_without_sasl(self, conn: Connection, body: Struct, error: KafkaConnectionError) -> bool:
        """Whether a lost exchange looks like a SASL listener's answer to a client without SASL: Kafka's
        ``SaslServerAuthenticator`` answers ApiVersions before authentication and closes the connection
        at any other request but SaslHandshake. So: the first request after ApiVersions, closed (not
        timed out) by a server that offers SaslHandshake, from a client without SASL settings."""
        return (
            self.config.sasl is None
            and conn.unproven
            and not error.timed_out
            and body.API_KEY != ApiKey.API_VERSIONS
            and ApiKey.SASL_HANDSHAKE in conn.versions
        )

    def _decode(self, conn: Connection, raw: bytes, api_key: int, versions: tuple[int, ...]) -> Op[Any]:
        """The response body, read at the first of ``versions`` that fits. Bytes that are not a response
        fail this node like a lost connection: it is dropped, and the call moves on to another address."""
        problem: ProtocolError | None = None
        for version in versions:
            try:
                return framing.decode_response(raw, api_key, version)[1]
            except ProtocolError as exc:
                problem = problem or exc
        yield from self.drop(conn)
        raise KafkaConnectionError(conn.label, f"the server's response could not be decoded: {problem}")

    def request(self, conn: Connection, body: Struct, version: int, deadline: float) -> Op[Any]:
        """Send ``body`` at ``version`` and return the decoded response body."""
        self.last_api = body.API_KEY
        raw = yield from self._exchange(conn, body, version, deadline)
        return (yield from self._decode(conn, raw, body.API_KEY, (version,)))

    # ------------------------------------------------------------------ routing

    def _candidates(self) -> list[Address]:
        addresses = list(dict.fromkeys([*self.config.bootstrap, *self.known_nodes.values()]))
        start = self._cursor % len(addresses)
        return addresses[start:] + addresses[:start]

    def any_node(self, deadline: float) -> Op[Connection]:
        """A connection to any reachable node: an open one, else the bootstrap addresses in turn."""
        for conn in self.connections.values():
            return conn
        return (yield from self._first_reachable(self._candidates(), deadline))

    def _first_reachable(self, addresses: Iterable[Address], deadline: float) -> Op[Connection]:
        failures: dict[str, str] = {}
        established: KafkaConnectionError | None = None
        for address in addresses:
            try:
                return (yield from self.connection(address, deadline))
            except KafkaConnectionError as exc:
                failures[format_address(address)] = exc.reason
                established = exc if isinstance(exc, _Established) else established
                self._cursor += 1
                self.remaining(deadline)
        if established is not None:
            raise established
        raise BootstrapError(failures, self.config.bootstrap_setting)

    def target(self, deadline: float) -> Op[Connection]:
        """Where requests go: the active controller (bootstrap controllers) or any broker."""
        if not self.config.bootstrap_controllers:
            return (yield from self.any_node(deadline))
        if self.controller is None:
            yield from self.discover_controller(deadline)
        assert self.controller is not None
        conn = yield from self.connection(self.controller, deadline)
        conn.node_id = self.controller_id
        return conn

    def describe_cluster_request(
        self,
        conn: Connection,
        operation: str,
        deadline: float,
        endpoint_type: int,
        *,
        include_fenced_brokers: bool = False,
    ) -> Op[messages.DescribeClusterResponse]:
        """DescribeCluster at the highest version both sides speak: v1+ for controller endpoints
        (KIP-919), v2+ to list fenced brokers too (KIP-1073)."""
        if include_fenced_brokers:
            minimum, why = 2, "(include_fenced_brokers needs DescribeCluster v2, Kafka 4.0 or newer)"
        elif endpoint_type == CONTROLLER_ENDPOINTS:
            minimum, why = 1, "(bootstrap.controllers needs DescribeCluster v1+, Kafka 3.7 or newer)"
        else:
            minimum, why = 0, ""
        version = self.choose_version(
            conn, messages.DescribeClusterRequest, operation, minimum=minimum, why=why
        )
        request = messages.DescribeClusterRequest(
            include_cluster_authorized_operations=False,
            endpoint_type=endpoint_type,
            include_fenced_brokers=include_fenced_brokers,
        )
        response: messages.DescribeClusterResponse = yield from self.request(conn, request, version, deadline)
        if response.error_code:
            raise error_for_code(response.error_code, response.error_message).in_context(
                operation, conn.label
            )
        if version >= 1 and response.endpoint_type != endpoint_type:
            error = error_for_code(
                114, f"expected endpoint type {endpoint_type}, got {response.endpoint_type}"
            )
            raise error.in_context(operation, conn.label)
        if endpoint_type == self.endpoint_type:
            self.known_nodes.update({b.broker_id: (b.host, b.port) for b in response.brokers})
        return response

    @property
    def endpoint_type(self) -> int:
        """The DescribeCluster endpoints of the nodes this client talks to."""
        return CONTROLLER_ENDPOINTS if self.config.bootstrap_controllers else BROKER_ENDPOINTS

    def node(self, node_id: int, operation: str, deadline: float) -> Op[Connection]:
        """A connection to the node with this id, asking DescribeCluster where it is when the id is
        not known yet (controllers with bootstrap controllers, brokers with bootstrap servers); an
        id that answer does not list is :class:`UnknownNodeError` at once."""
        if node_id not in self.known_nodes:
            conn = yield from self.target(deadline)
            if node_id not in self.known_nodes:
                yield from self.describe_cluster_request(conn, operation, deadline, self.endpoint_type)
        address = self.known_nodes.get(node_id)
        if address is None:
            known = ", ".join(str(i) for i in sorted(self.known_nodes)) or "none"
            raise UnknownNodeError(f"the cluster has no node {node_id} (nodes: {known})")
        conn = yield from self.connection(address, deadline)
        conn.node_id = node_id
        return conn

    def discover_controller(self, deadline: float) -> Op[None]:
        """Ask the bootstrap (and known) controllers which controller is active."""
        failures: dict[str, str] = {}
        last: KafkaConnectionError | None = None
        for address in self._candidates():
            try:
                conn = yield from self.connection(address, deadline)
            except KafkaConnectionError as exc:
                failures[format_address(address)] = exc.reason
                last = exc if isinstance(exc, _Established) else last
                self._cursor += 1
                self.remaining(deadline)
                continue
            try:
                response = yield from self.describe_cluster_request(
                    conn, "find the active controller", deadline, CONTROLLER_ENDPOINTS
                )
            except KafkaConnectionError as exc:
                failures[format_address(address)] = exc.reason
                last = _Established(exc.address, exc.reason, timed_out=exc.timed_out)
                self._cursor += 1
                self.remaining(deadline)
                continue
            nodes = {b.broker_id: (b.host, b.port) for b in response.brokers}
            if response.controller_id < 0 or response.controller_id not in nodes:
                self._cursor += 1
                raise NotYetKnownError(f"{conn.label} does not know an active controller yet")
            self.controller_id = response.controller_id
            self.controller = nodes[response.controller_id]
            return
        if last is not None:
            raise last
        raise BootstrapError(failures, self.config.bootstrap_setting)


def controller_errors(config: ClientConfig) -> RetryPolicy:
    """Retry only NOT_CONTROLLER, and NOT_LEADER_OR_FOLLOWER when talking to controllers directly
    (Kafka 4.x's Admin client for AddRaftVoter, RemoveRaftVoter and UpdateFeatures)."""
    codes = {ErrorCode.NOT_CONTROLLER}
    if config.bootstrap_controllers:
        codes.add(ErrorCode.NOT_LEADER_OR_FOLLOWER)

    def policy(error: KafkaApiError) -> bool:
        return error.code in codes

    return policy
