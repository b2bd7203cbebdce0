"""Drivers of the sans-I/O core: blocking sockets (``run_sync``) and asyncio streams (``run_async``).

A transport performs the effects the core yields (connect, exchange one frame, close, sleep) and
reports every failure as :class:`~kafka_admin_kraft.errors.KafkaConnectionError` (TLS failures as
:class:`~kafka_admin_kraft.errors.AuthenticationError`, Kafka's ``SslAuthenticationException``); bytes
that do not frame as a Kafka response fail the connection the same way. The drivers hand whatever an
effect raised back to the operation, which closes what it opened and decides: an operation is never
left suspended.

A security protocol that does not fit the listener shows as a connection the server drops: a TLS
listener drops plaintext bytes (Kafka's ``SslTransportLayer`` may first send a TLS alert), a plaintext
listener drops a TLS ClientHello (to Kafka it frames as a request of several hundred megabytes). So
when a plaintext connection is lost before its first answer, or a TLS handshake is lost, the
transport asks the port once more, on a new connection, in the other protocol: a TLS record in answer
to a ClientHello, or a Kafka response to an ApiVersions request, names the mismatch and the setting to
change, and the call stops there instead of retrying until its timeout.
"""

from __future__ import annotations

import contextlib
import errno
import re
import socket
import time
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kafka_admin_kraft.client.config import Address, format_address
from kafka_admin_kraft.client.core import CLIENT_SOFTWARE_NAME, Call, Close, Connect, Exchange, Sleep
from kafka_admin_kraft.errors import (
    AuthenticationError,
    KafkaClientError,
    KafkaConnectionError,
    ProtocolError,
)
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.framing import FrameSplitter, encode_request

if TYPE_CHECKING:
    import asyncio
    import ssl

T = TypeVar("T")


def describe_os_error(exc: BaseException) -> str:
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host name ({exc.strerror})"
    if isinstance(exc, UnicodeError):  # a host name the IDNA codec refuses (a node may advertise one)
        return f"cannot resolve the host name ({exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, OSError) and exc.errno is not None:
        name = errno.errorcode.get(exc.errno, str(exc.errno))
        return f"{exc.strerror or exc} ({name})"
    return str(exc) or type(exc).__name__


def not_a_response(label: str, error: ProtocolError) -> KafkaConnectionError:
    return KafkaConnectionError(label, f"the server sent bytes that are not a Kafka response: {error}")


# ---------------------------------------------------------------------- TLS failures and mismatches

PROBE_CORRELATION_ID = 0x4B414B
"""The correlation id of the plaintext ApiVersions that asks whether Kafka listens without TLS."""
PROBE_BYTES = 8
"""Enough of an answer to tell: a TLS record header, or a Kafka frame's size and correlation id."""
_HANDSHAKE_LOST = ("WRONG_VERSION_NUMBER", "UNEXPECTED_EOF_WHILE_READING", "EOF", "RECORD_LAYER_FAILURE")
_PEER_REFUSED_US = ("CERTIFICATE_REQUIRED", "BAD_CERTIFICATE", "UNKNOWN_CA", "CERTIFICATE_UNKNOWN",
                    "ACCESS_DENIED", "DECRYPT_ERROR", "UNSUPPORTED_CERTIFICATE")
_NO_COMMON_GROUND = ("PROTOCOL_VERSION", "UNSUPPORTED_PROTOCOL", "NO_PROTOCOLS_AVAILABLE",
                     "HANDSHAKE_FAILURE", "NO_SHARED_CIPHER", "NO_CIPHERS_AVAILABLE", "INSUFFICIENT_SECURITY")


def client_hello() -> bytes:
    """The first bytes a TLS client sends (a ClientHello), to ask a port whether TLS listens there."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    outgoing = ssl.MemoryBIO()
    with contextlib.suppress(ssl.SSLWantReadError):
        context.wrap_bio(ssl.MemoryBIO(), outgoing).do_handshake()
    return outgoing.read()


def plaintext_probe() -> bytes:
    """An ApiVersions v0 request, which every Kafka listener without TLS answers."""
    return encode_request(messages.ApiVersionsRequest(), 0, PROBE_CORRELATION_ID, CLIENT_SOFTWARE_NAME)


def is_tls_record(head: bytes) -> bool:
    """Whether bytes start a TLS record of version 3.x carrying a handshake or an alert: a TLS server's
    answer to a ClientHello."""
    return len(head) >= 2 and head[0] in (0x15, 0x16) and head[1] == 0x03


def is_probe_answer(head: bytes) -> bool:
    """Whether bytes start the Kafka response to ``plaintext_probe``."""
    return len(head) >= 8 and int.from_bytes(head[4:8], "big") == PROBE_CORRELATION_ID


def tls_listener(label: str) -> AuthenticationError:
    """A plaintext client at a TLS listener."""
    return AuthenticationError(
        label,
        f"the listener at {label} speaks TLS (it answered a TLS ClientHello) and drops plaintext requests: "
        "set security.protocol=SSL (SASL_SSL with SASL) and ssl.truststore.location to the CA of its "
        "certificate",
        java_exception="SslAuthenticationException",
    )


def handshake_lost(exc: OSError) -> bool:
    """A TLS handshake the server ended without a TLS alert: what a listener without TLS does."""
    import ssl

    if isinstance(exc, ssl.SSLError):
        return isinstance(exc, ssl.SSLEOFError) or any(part in str(exc.reason) for part in _HANDSHAKE_LOST)
    return isinstance(exc, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError))


def tls_failure(label: str, exc: OSError, *, plaintext_kafka: bool) -> KafkaClientError:
    """What a failed TLS handshake (or a TLS alert on a new connection) is: Kafka's
    ``SslAuthenticationException`` ("SSL handshake failed", ``SslTransportLayer``) with the cause and
    the setting to change, or a lost connection when the server just went away."""
    import ssl

    if plaintext_kafka:
        return AuthenticationError(
            label,
            f"SSL handshake failed: the listener at {label} does not speak TLS (it answered a plaintext "
            "ApiVersions request): set security.protocol=PLAINTEXT (SASL_PLAINTEXT with SASL) and drop the "
            "ssl.* settings",
            java_exception="SslAuthenticationException",
        )
    if not isinstance(exc, ssl.SSLError) or handshake_lost(exc):
        return KafkaConnectionError(label, f"TLS handshake failed: {describe_os_error(exc)}")
    reason = str(exc.reason or "")
    detail = re.sub(r"^\[[^]]*\] | \(_ssl\.c:\d+\)$", "", str(exc)).rstrip(".")
    text = f"SSL handshake failed: {detail}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        if "mismatch" in detail:
            fix = (f"the server's TLS certificate does not name the host of {label}: connect by a name "
                   "or address it holds, or set ssl.endpoint.identification.algorithm to empty to skip "
                   "the check")
        elif "expired" in detail or "not yet valid" in detail:
            fix = "the server's TLS certificate is outside its validity period: renew it"
        else:
            fix = ("the server's TLS certificate is not trusted: put the CA that signed it in "
                   "ssl.truststore.location or ssl.truststore.certificates")
    elif any(part in reason for part in _PEER_REFUSED_US):
        fix = ("the server wants a client certificate it trusts: set ssl.keystore.location (or "
               "ssl.keystore.key and ssl.keystore.certificate.chain) to one signed by a CA in its truststore")
    elif any(part in reason for part in _NO_COMMON_GROUND):
        fix = "the server and this client share no TLS version or cipher suite: check ssl.protocol"
    else:
        fix = "check the ssl.* settings against the listener's"
    return AuthenticationError(label, f"{text} ({fix})", java_exception="SslAuthenticationException")


def refused_after_handshake(error: KafkaConnectionError) -> KafkaConnectionError:
    """A TLS connection lost before its first answer. A server that refuses the client's certificate
    (or its lack of one) after a TLS 1.3 handshake may close without the alert that would say so (the
    reference server, on asyncio, does): a lost connection still, retried, with the likely cause."""
    return KafkaConnectionError(
        error.address,
        f"{error.reason} right after the TLS handshake (a listener with ssl.client.auth=required does so "
        "when this client has no certificate it trusts: check ssl.keystore.location)",
    )


def tls_alert(exc: OSError) -> bool:
    """A TLS alert received after the client's side of the handshake: TLS 1.3 servers refuse a client
    certificate there."""
    import ssl

    return isinstance(exc, ssl.SSLError) and "ALERT" in str(exc.reason or "")


def _ask(address: Address, payload: bytes, timeout: float) -> bytes:
    """The first bytes a port answers ``payload`` with on a new connection (empty on any failure)."""
    head = b""
    try:
        with socket.create_connection(address, timeout=timeout) as sock:
            sock.sendall(payload)
            while len(head) < PROBE_BYTES:
                data = sock.recv(PROBE_BYTES - len(head))
                if not data:
                    break
                head += data
    except (OSError, UnicodeError):
        pass  # what came before the failure tells what there is to tell
    return head


async def _ask_async(address: Address, payload: bytes, timeout: float) -> bytes:
    import asyncio

    async def ask() -> bytes:
        reader, writer = await asyncio.open_connection(address[0], address[1])
        try:
            writer.write(payload)
            await writer.drain()
            head = b""
            while len(head) < PROBE_BYTES:
                data = await reader.read(PROBE_BYTES - len(head))
                if not data:
                    break
                head += data
            return head
        finally:
            writer.close()

    try:
        return await asyncio.wait_for(ask(), timeout)
    except (OSError, UnicodeError, asyncio.TimeoutError):
        return b""


class SyncConnection(Protocol):
    def exchange(self, frame: bytes, timeout: float) -> bytes: ...
    def close(self) -> None: ...


class SyncTransport(Protocol):
    def clock(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...
    def connect(self, address: Address, timeout: float) -> SyncConnection: ...


class AsyncConnection(Protocol):
    async def exchange(self, frame: bytes, timeout: float) -> bytes: ...
    async def close(self) -> None: ...


class AsyncTransport(Protocol):
    def clock(self) -> float: ...
    async def sleep(self, seconds: float) -> None: ...
    async def connect(self, address: Address, timeout: float) -> AsyncConnection: ...


def run_sync(operation: Generator[Any, Any, T], transport: SyncTransport) -> T:
    """Drive an operation to completion with a blocking transport."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = operation.throw(error) if error is not None else operation.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        value, error = None, None
        try:
            if isinstance(effect, Exchange):
                value = effect.handle.exchange(effect.frame, effect.timeout)
            elif isinstance(effect, Connect):
                value = transport.connect(effect.address, effect.timeout)
            elif isinstance(effect, Close):
                effect.handle.close()
            elif isinstance(effect, Sleep):
                transport.sleep(effect.seconds)
            elif isinstance(effect, Call):
                value = effect.function()
            else:
                raise TypeError(f"unknown effect {effect!r}")
        except BaseException as exc:  # the operation cleans up, then re-raises what it cannot handle
            error = exc


async def run_async(operation: Generator[Any, Any, T], transport: AsyncTransport) -> T:
    """Drive an operation to completion on asyncio."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = operation.throw(error) if error is not None else operation.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        value, error = None, None
        try:
            if isinstance(effect, Exchange):
                value = await effect.handle.exchange(effect.frame, effect.timeout)
            elif isinstance(effect, Connect):
                value = await transport.connect(effect.address, effect.timeout)
            elif isinstance(effect, Close):
                await effect.handle.close()
            elif isinstance(effect, Sleep):
                await transport.sleep(effect.seconds)
            elif isinstance(effect, Call):
                import asyncio

                value = await asyncio.to_thread(effect.function)
            else:
                raise TypeError(f"unknown effect {effect!r}")
        except BaseException as exc:  # as in run_sync, cancellation included
            error = exc


# ---------------------------------------------------------------------- blocking sockets


class SocketConnection:
    """A blocking TCP (or TLS) connection carrying one request at a time."""

    def __init__(self, sock: socket.socket, address: Address, *, tls: bool = False) -> None:
        self.sock = sock
        self.address = address
        self.label = format_address(address)
        self.tls = tls
        self.answered = False
        self.splitter = FrameSplitter()
        self.frames: list[bytes] = []

    def exchange(self, frame: bytes, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        try:
            self.sock.settimeout(timeout)
            self.sock.sendall(frame)
            while not self.frames:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                self.sock.settimeout(left)
                data = self.sock.recv(65536)
                if not data:
                    self.close()
                    raise self._dropped(KafkaConnectionError(self.label, "connection closed by the server"),
                                        deadline)
                self.frames.extend(self.splitter.feed(data))
        except ProtocolError as exc:
            self.close()
            raise self._dropped(not_a_response(self.label, exc), deadline) from None
        except TimeoutError:
            self.close()
            raise KafkaConnectionError(
                self.label, f"no response within {timeout:.3g} s", timed_out=True
            ) from None
        except OSError as exc:
            self.close()
            if self.tls and tls_alert(exc):
                raise tls_failure(self.label, exc, plaintext_kafka=False) from None
            raise self._dropped(KafkaConnectionError(self.label, describe_os_error(exc)), deadline) from None
        self.answered = True
        return self.frames.pop(0)

    def _dropped(self, error: KafkaConnectionError, deadline: float) -> KafkaClientError:
        """A connection lost before its first answer: a TLS listener's, when the port answers a
        ClientHello to a plaintext client."""
        left = deadline - time.monotonic()
        if self.answered or left <= 0:
            return error
        if self.tls:
            return refused_after_handshake(error)
        return tls_listener(self.label) if is_tls_record(_ask(self.address, client_hello(), left)) else error

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class SocketTransport:
    """Blocking sockets; TLS through ``ssl_context`` (hostname checked when the context says so)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.ssl_context = ssl_context

    def clock(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def connect(self, address: Address, timeout: float) -> SocketConnection:
        label = format_address(address)
        try:
            sock = socket.create_connection(address, timeout=timeout)
        except TimeoutError:
            raise KafkaConnectionError(
                label, f"no connection within {timeout:.3g} s", timed_out=True
            ) from None
        except (OSError, UnicodeError) as exc:
            raise KafkaConnectionError(label, describe_os_error(exc)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is not None:
            try:
                sock = self.ssl_context.wrap_socket(sock, server_hostname=address[0])
            except TimeoutError:
                sock.close()
                raise KafkaConnectionError(
                    label, f"TLS handshake not done within {timeout:.3g} s", timed_out=True
                ) from None
            except OSError as exc:  # ssl.SSLError included
                sock.close()
                plaintext = handshake_lost(exc) and is_probe_answer(_ask(address, plaintext_probe(), timeout))
                raise tls_failure(label, exc, plaintext_kafka=plaintext) from None
            return SocketConnection(sock, address, tls=True)
        return SocketConnection(sock, address)


# ---------------------------------------------------------------------- asyncio


class StreamConnection:
    """An asyncio stream connection carrying one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, address: Address, *,
                 tls: bool = False) -> None:
        self.reader = reader
        self.writer = writer
        self.address = address
        self.label = format_address(address)
        self.tls = tls
        self.answered = False
        self.splitter = FrameSplitter()
        self.frames: list[bytes] = []

    async def _exchange(self, frame: bytes) -> bytes:
        import asyncio

        self.writer.write(frame)
        await self.writer.drain()
        while not self.frames:
            data = await self.reader.read(65536)
            if not data:
                raise asyncio.IncompleteReadError(b"", None)
            self.frames.extend(self.splitter.feed(data))
        return self.frames.pop(0)

    async def exchange(self, frame: bytes, timeout: float) -> bytes:
        import asyncio

        deadline = time.monotonic() + timeout
        try:
            answer = await asyncio.wait_for(self._exchange(frame), timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise KafkaConnectionError(
                self.label, f"no response within {timeout:.3g} s", timed_out=True
            ) from None
        except asyncio.IncompleteReadError:
            await self.close()
            lost = KafkaConnectionError(self.label, "connection closed by the server")
            raise await self._dropped(lost, deadline) from None
        except ProtocolError as exc:
            await self.close()
            raise await self._dropped(not_a_response(self.label, exc), deadline) from None
        except OSError as exc:
            await self.close()
            if self.tls and tls_alert(exc):
                raise tls_failure(self.label, exc, plaintext_kafka=False) from None
            lost = KafkaConnectionError(self.label, describe_os_error(exc))
            raise await self._dropped(lost, deadline) from None
        self.answered = True
        return answer

    async def _dropped(self, error: KafkaConnectionError, deadline: float) -> KafkaClientError:
        """As ``SocketConnection._dropped``."""
        left = deadline - time.monotonic()
        if self.answered or left <= 0:
            return error
        if self.tls:
            return refused_after_handshake(error)
        head = await _ask_async(self.address, client_hello(), left)
        return tls_listener(self.label) if is_tls_record(head) else error

    async def close(self) -> None:
        import asyncio

        self.writer.close()
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            await asyncio.wait_for(self.writer.wait_closed(), 1.0)


class StreamTransport:
    """asyncio streams; TLS through ``ssl_context``."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.ssl_context = ssl_context

    def clock(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(seconds)

    async def connect(self, address: Address, timeout: float) -> StreamConnection:
        import asyncio

        label = format_address(address)
        opening: Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]
        if self.ssl_context is not None:
            opening = asyncio.open_connection(
                address[0], address[1], ssl=self.ssl_context, server_hostname=address[0]
            )
        else:
            opening = asyncio.open_connection(address[0], address[1])
        try:
            reader, writer = await asyncio.wait_for(opening, timeout)
        except asyncio.TimeoutError:
            raise KafkaConnectionError(
                label, f"no connection within {timeout:.3g} s", timed_out=True
            ) from None
        except UnicodeError as exc:
            raise KafkaConnectionError(label, describe_os_error(exc)) from None
        except OSError as exc:
            if self.ssl_context is None or isinstance(exc, (ConnectionRefusedError, socket.gaierror)):
                raise KafkaConnectionError(label, describe_os_error(exc)) from None
            plaintext = handshake_lost(exc) and is_probe_answer(
                await _ask_async(address, plaintext_probe(), timeout))
            raise tls_failure(label, exc, plaintext_kafka=plaintext) from None
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return StreamConnection(reader, writer, address, tls=self.ssl_context is not None)
