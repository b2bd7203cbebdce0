"""Frames, request headers and response headers, as Kafka puts them on a TCP connection.

A frame is an int32 size followed by that many bytes: a header and a body. The header version
follows from the API and its version (``HEADER_VERSIONS`` of each generated class), with Kafka's
exceptions: every ApiVersions response uses response header v0, and a server must read the header
of an ApiVersions request whose version it does not know. Everything here is sans-I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.exceptions import DecodeError, ProtocolError, UndefinedVersionError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import INT32

DEFAULT_MAX_FRAME_BYTES = 104857600
"""``socket.request.max.bytes``: the largest request a Kafka server accepts by default."""


class FrameTooLargeError(ProtocolError):
    """A size prefix above the configured limit: Kafka closes such connections."""


@dataclass(frozen=True)
class RequestFrame:
    """A decoded request: its header and, when the API version is known, its body."""

    header: messages.RequestHeader
    header_version: int
    body: Struct | None
    """None only for an ApiVersions request of a version this codec does not know."""


def request_header_version(api_key: int, api_version: int) -> int:
    """Header version of a request (v2 for flexible API versions, v1 otherwise)."""
    cls = messages.request_class(api_key)
    version = cls.HEADER_VERSIONS.get(api_version)
    if version is None:
        if api_key == ApiKey.API_VERSIONS:
            # Unknown ApiVersions versions: flexible from 3 on, so header v2 (Kafka reads it anyway).
            return 2 if api_version >= 3 else 1
        raise UndefinedVersionError(f"{cls.NAME} has no version {api_version}")
    return version


def response_header_version(api_key: int, api_version: int) -> int:
    """Header version of a response (ApiVersions always v0, otherwise v1 when flexible)."""
    cls = messages.response_class(api_key)
    version = cls.HEADER_VERSIONS.get(api_version)
    if version is None:
        raise UndefinedVersionError(f"{cls.NAME} has no version {api_version}")
    return version


def _frame(out: bytearray) -> bytes:
    INT32.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def encode_request(body: Struct, api_version: int, correlation_id: int,
                   client_id: str | None = None) -> bytes:
    """A whole request frame, size prefix included."""
    api_key = body.API_KEY
    header = messages.RequestHeader(request_api_key=api_key, request_api_version=api_version,
                                    correlation_id=correlation_id, client_id=client_id)
    out = bytearray(4)
    header.write(out, request_header_version(api_key, api_version))
    body.write(out, api_version)
    return _frame(out)


def decode_request(frame: bytes) -> RequestFrame:
    """Decode a request frame body (without its size prefix).

    Raises UndefinedVersionError for an API key or version the codec does not speak, except for
    ApiVersions, whose header is returned without a body so that the server can answer with the
    versions it supports, as Kafka does.
    """
    if len(frame) < 4:
        raise DecodeError(f"a request needs at least 4 bytes of header, got {len(frame)}", offset=0)
    api_key = int.from_bytes(frame[0:2], "big", signed=True)
    api_version = int.from_bytes(frame[2:4], "big", signed=True)
    try:
        cls = messages.request_class(api_key)
    except KeyError:
        raise UndefinedVersionError(f"unknown api key {api_key}") from None
    header_version = request_header_version(api_key, api_version)
    header, pos = messages.RequestHeader.read(frame, 0, header_version)
    if api_version not in cls.HEADER_VERSIONS:
        return RequestFrame(header, header_version, None)
    body = cls.decode(frame[pos:], api_version)
    return RequestFrame(header, header_version, body)


def encode_response(body: Struct, api_version: int, correlation_id: int) -> bytes:
    """A whole response frame, size prefix included."""
    out = bytearray(4)
    header = messages.ResponseHeader(correlation_id=correlation_id)
    header.write(out, response_header_version(body.API_KEY, api_version))
    body.write(out, api_version)
    return _frame(out)


def decode_response(frame: bytes, api_key: int, api_version: int) -> tuple[int, Struct]:
    """Decode a response frame body (without its size prefix) of a request the caller sent.

    Returns the correlation id and the body; the caller matches the id to its request.
    """
    header, pos = messages.ResponseHeader.read(frame, 0, response_header_version(api_key, api_version))
    body = messages.response_class(api_key).decode(frame[pos:], api_version)
    return header.correlation_id, body


def peek_correlation_id(frame: bytes) -> int:
    """The correlation id of a response frame, which every response header starts with."""
    if len(frame) < 4:
        raise DecodeError("a response needs at least 4 bytes of header", offset=0)
    return int(INT32.unpack_from(frame, 0)[0])


class FrameSplitter:
    """Cuts a byte stream into frames; refuses sizes that are negative or above the limit."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return the frame bodies now complete, in order."""
        self._buffer += data
        frames = []
        while len(self._buffer) >= 4:
            (size,) = INT32.unpack_from(self._buffer, 0)
            if size < 0 or size > self.max_frame_bytes:
                raise FrameTooLargeError(
                    f"frame size {size} is outside 0..{self.max_frame_bytes} (socket.request.max.bytes)")
            if len(self._buffer) < 4 + size:
                break
            frames.append(bytes(self._buffer[4:4 + size]))
            del self._buffer[:4 + size]
        return frames

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buffer)
