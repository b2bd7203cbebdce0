"""Drivers of the sans-I/O core: blocking sockets (``run_sync``) and asyncio streams (``run_async``).

A transport performs the effects the core yields (connect, exchange one frame, close, sleep) and
reports every failure as :class:`~kafka_admin_kraft.errors.KafkaConnectionError` (TLS handshake
failures as :class:`~kafka_admin_kraft.errors.AuthenticationError`); bytes that do not frame as a
Kafka response fail the connection the same way. The drivers hand whatever an effect raised back to
the operation, which closes what it opened and decides: an operation is never left suspended.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import time
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kafka_admin_kraft.client.config import Address, format_address
from kafka_admin_kraft.client.core import Close, Connect, Exchange, Sleep
from kafka_admin_kraft.errors import AuthenticationError, KafkaConnectionError, ProtocolError
from kafka_admin_kraft.protocol.framing import FrameSplitter

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
            else:
                raise TypeError(f"unknown effect {effect!r}")
        except BaseException as exc:  # as in run_sync, cancellation included
            error = exc


# ---------------------------------------------------------------------- blocking sockets


class SocketConnection:
    """A blocking TCP (or TLS) connection carrying one request at a time."""

    def __init__(self, sock: socket.socket, address: Address) -> None:
        self.sock = sock
        self.label = format_address(address)
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
                    raise KafkaConnectionError(self.label, "connection closed by the server")
                self.frames.extend(self.splitter.feed(data))
        except ProtocolError as exc:
            self.close()
            raise not_a_response(self.label, exc) from None
        except TimeoutError:
            self.close()
            raise KafkaConnectionError(
                self.label, f"no response within {timeout:.3g} s", timed_out=True
            ) from None
        except OSError as exc:
            self.close()
            raise KafkaConnectionError(self.label, describe_os_error(exc)) from None
        return self.frames.pop(0)

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
            import ssl

            try:
                sock = self.ssl_context.wrap_socket(sock, server_hostname=address[0])
            except TimeoutError:
                sock.close()
                raise KafkaConnectionError(
                    label, f"TLS handshake not done within {timeout:.3g} s", timed_out=True
                ) from None
            except ssl.SSLError as exc:
                sock.close()
                raise AuthenticationError(label, f"TLS handshake failed: {exc}") from None
            except OSError as exc:
                sock.close()
                raise KafkaConnectionError(label, describe_os_error(exc)) from None
        return SocketConnection(sock, address)


# ---------------------------------------------------------------------- asyncio


class StreamConnection:
    """An asyncio stream connection carrying one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, address: Address) -> None:
        self.reader = reader
        self.writer = writer
        self.label = format_address(address)
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

        try:
            return await asyncio.wait_for(self._exchange(frame), timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise KafkaConnectionError(
                self.label, f"no response within {timeout:.3g} s", timed_out=True
            ) from None
        except asyncio.IncompleteReadError:
            await self.close()
            raise KafkaConnectionError(self.label, "connection closed by the server") from None
        except ProtocolError as exc:
            await self.close()
            raise not_a_response(self.label, exc) from None
        except OSError as exc:
            await self.close()
            raise KafkaConnectionError(self.label, describe_os_error(exc)) from None

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
        except (OSError, UnicodeError) as exc:
            import ssl

            if isinstance(exc, ssl.SSLError):
                raise AuthenticationError(label, f"TLS handshake failed: {exc}") from None
            raise KafkaConnectionError(label, describe_os_error(exc)) from None
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return StreamConnection(reader, writer, address)
