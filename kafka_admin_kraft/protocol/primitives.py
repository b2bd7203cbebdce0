"""Kafka's primitive wire types: fixed-width integers, varints, uuids and tagged-field sections.

Generated message code calls these helpers on its slow paths only (multi-byte varints, tagged
sections); single-byte varints and fixed-width groups are inlined by the generator.
"""

from __future__ import annotations

import base64
import os
import struct
from typing import Final

from kafka_admin_kraft.protocol.exceptions import DecodeError, EncodeError

INT8: Final = struct.Struct(">b")
INT16: Final = struct.Struct(">h")
INT32: Final = struct.Struct(">i")
INT64: Final = struct.Struct(">q")
UINT16: Final = struct.Struct(">H")
UINT32: Final = struct.Struct(">I")

RawTaggedField = tuple[int, bytes]
"""An unknown tagged field kept as (tag, raw value bytes) so that it survives a round trip."""


class Uuid:
    """A Kafka uuid: 16 bytes, shown as URL-safe base64 without padding (22 characters)."""

    __slots__ = ("_bytes",)

    def __init__(self, raw: bytes) -> None:
        if len(raw) != 16:
            raise ValueError(f"a uuid has 16 bytes, got {len(raw)}")
        self._bytes = bytes(raw)

    @classmethod
    def from_string(cls, text: str) -> Uuid:
        """Parse Kafka's base64 text form (``AAAAAAAAAAAAAAAAAAAAAQ``)."""
        if len(text) != 22:
            raise ValueError(f"a uuid is 22 base64 characters, got {text!r}")
        try:
            raw = base64.urlsafe_b64decode(text + "==")
        except ValueError as exc:
            raise ValueError(f"not a base64 uuid: {text!r}") from exc
        if len(raw) != 16 or base64.urlsafe_b64encode(raw).decode().rstrip("=") != text:
            raise ValueError(f"not a base64 uuid: {text!r}")
        return cls(raw)

    @classmethod
    def from_ints(cls, most: int, least: int) -> Uuid:
        """Build from the two signed or unsigned 64-bit halves Java's ``Uuid`` holds."""
        return cls(struct.pack(">QQ", most & 0xFFFFFFFFFFFFFFFF, least & 0xFFFFFFFFFFFFFFFF))

    @classmethod
    def random(cls) -> Uuid:
        """A random uuid that Kafka accepts as a directory or cluster id.

        Like Kafka's ``Uuid.randomUuid``: never one of the reserved ids (most-significant half 0 and
        least-significant half below 100) and never a text form starting with ``-``.
        """
        while True:
            raw = bytearray(os.urandom(16))
            raw[6] = (raw[6] & 0x0F) | 0x40  # version 4, as java.util.UUID.randomUUID
            raw[8] = (raw[8] & 0x3F) | 0x80
            candidate = cls(bytes(raw))
            if not candidate.is_reserved() and not str(candidate).startswith("-"):
                return candidate

    @property
    def bytes(self) -> bytes:
        return self._bytes

    @property
    def most_significant_bits(self) -> int:
        return int(INT64.unpack_from(self._bytes, 0)[0])

    @property
    def least_significant_bits(self) -> int:
        return int(INT64.unpack_from(self._bytes, 8)[0])

    def is_reserved(self) -> bool:
        """True for the 100 ids Kafka reserves (zero, one, ... 99) such as ``ZERO`` and the metadata
        topic id."""
        return self._bytes[:8] == b"\0" * 8 and int.from_bytes(self._bytes[8:], "big") < 100

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self._bytes).decode().rstrip("=")

    def __repr__(self) -> str:
        return f"Uuid({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Uuid) and other._bytes == self._bytes

    def __hash__(self) -> int:
        return hash(self._bytes)


ZERO_UUID: Final = Uuid(b"\0" * 16)
"""Kafka's ``Uuid.ZERO_UUID``: the default of every uuid field, "no directory id"."""

METADATA_TOPIC_ID: Final = Uuid(b"\0" * 15 + b"\x01")
"""``Uuid.METADATA_TOPIC_ID`` (``AAAAAAAAAAAAAAAAAAAAAQ``), the topic id of ``__cluster_metadata``."""


def uuid_from_wire(raw: bytes) -> Uuid:
    """Wrap 16 decoded bytes without copying or re-checking them (hot path)."""
    if raw == _ZERO16:
        return ZERO_UUID
    value = _new_uuid(Uuid)
    value._bytes = raw
    return value


_ZERO16: Final = b"\0" * 16
_new_uuid = object.__new__


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode an unsigned varint (at most 5 bytes, 32 bits) at ``pos``; return (value, next pos)."""
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= len(buf):
            raise DecodeError("buffer ends inside a varint", offset=start)
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 35:
            raise DecodeError("varint longer than 5 bytes", offset=start)


def read_uvarlong(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode an unsigned varlong (at most 10 bytes, 64 bits) at ``pos``; return (value, next pos)."""
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= len(buf):
            raise DecodeError("buffer ends inside a varlong", offset=start)
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("varlong longer than 10 bytes", offset=start)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a zig-zag signed varint (32 bits) as used inside record batches."""
    raw, pos = read_uvarint(buf, pos)
    if raw > 0xFFFFFFFF:
        raise DecodeError("signed varint out of 32-bit range", offset=pos)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a zig-zag signed varlong (64 bits) as used inside record batches."""
    raw, pos = read_uvarlong(buf, pos)
    if raw > 0xFFFFFFFFFFFFFFFF:
        raise DecodeError("signed varlong out of 64-bit range", offset=pos)
    return (raw >> 1) ^ -(raw & 1), pos


def write_uvarint(out: bytearray, value: int) -> None:
    """Append an unsigned varint; values must fit in 32 bits unsigned."""
    if value < 0x80:
        if value < 0:
            raise EncodeError(f"unsigned varint cannot hold {value}")
        out.append(value)
        return
    if value > 0xFFFFFFFF:
        raise EncodeError(f"unsigned varint cannot hold {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_uvarlong(out: bytearray, value: int) -> None:
    """Append an unsigned varlong; values must fit in 64 bits unsigned."""
    if value < 0 or value > 0xFFFFFFFFFFFFFFFF:
        raise EncodeError(f"unsigned varlong cannot hold {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varint(out: bytearray, value: int) -> None:
    """Append a zig-zag signed varint (32 bits)."""
    if not -0x80000000 <= value <= 0x7FFFFFFF:
        raise EncodeError(f"signed varint cannot hold {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, value: int) -> None:
    """Append a zig-zag signed varlong (64 bits)."""
    if not -0x8000000000000000 <= value <= 0x7FFFFFFFFFFFFFFF:
        raise EncodeError(f"signed varlong cannot hold {value}")
    write_uvarlong(out, ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def uvarint_size(value: int) -> int:
    """Bytes an unsigned varint takes."""
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def write_tagged_fields(out: bytearray, fields: list[RawTaggedField]) -> None:
    """Append a tagged-field section: count, then (tag, size, bytes) in ascending tag order.

    Kafka's writer refuses duplicate tags and writes them sorted; so do we.
    """
    if not fields:
        out.append(0)
        return
    ordered = sorted(fields, key=lambda field: field[0])
    for previous, current in zip(ordered, ordered[1:], strict=False):
        if previous[0] == current[0]:
            raise EncodeError(f"tagged field {current[0]} is set twice")
    write_uvarint(out, len(ordered))
    for tag, value in ordered:
        write_uvarint(out, tag)
        write_uvarint(out, len(value))
        out += value


def read_tagged_fields(buf: bytes, pos: int) -> tuple[list[RawTaggedField], int]:
    """Read a tagged-field section into raw (tag, bytes) pairs; the caller decodes known tags."""
    count, pos = read_uvarint(buf, pos)
    if count > len(buf) - pos:
        raise DecodeError(f"tagged-field count {count} exceeds the {len(buf) - pos} bytes left",
                          offset=pos)
    fields: list[RawTaggedField] = []
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        end = pos + size
        if end > len(buf):
            raise DecodeError(f"tagged field {tag} claims {size} bytes, {len(buf) - pos} left",
                              offset=pos)
        fields.append((tag, buf[pos:end]))
        pos = end
    return fields, pos


def _take(buf: bytes, pos: int, size: int, what: str) -> int:
    """End position of ``size`` bytes at ``pos``, refusing lengths the buffer cannot hold."""
    end = pos + size
    if end > len(buf):
        raise DecodeError(f"{what} of {size} bytes exceeds the {len(buf) - pos} bytes left", offset=pos)
    return end


def _classic_length(buf: bytes, pos: int, wide: bool) -> tuple[int, int]:
    """A classic int16 (strings) or int32 (bytes, arrays) length; -1 is null, below is corrupt."""
    fmt = INT32 if wide else INT16
    try:
        (size,) = fmt.unpack_from(buf, pos)
    except Exception:
        raise DecodeError(f"buffer ends inside a length ({len(buf) - pos} bytes left)", offset=pos) from None
    if size < -1:
        raise DecodeError(f"negative length {size}", offset=pos)
    return size, pos + fmt.size


def _compact_length(buf: bytes, pos: int) -> tuple[int, int]:
    """A compact length (unsigned varint N+1); returns N, -1 for null."""
    if pos < len(buf) and buf[pos] < 0x80:
        return buf[pos] - 1, pos + 1
    size, pos = read_uvarint(buf, pos)
    return size - 1, pos


def _null(pos: int, what: str) -> DecodeError:
    return DecodeError(f"null {what} where the field is not nullable", offset=pos)


def read_string(buf: bytes, pos: int) -> tuple[str, int]:
    start = pos
    size, pos = _classic_length(buf, pos, False)
    if size < 0:
        raise _null(start, "string")
    end = _take(buf, pos, size, "string")
    return buf[pos:end].decode(), end


def read_nullable_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    size, pos = _classic_length(buf, pos, False)
    if size < 0:
        return None, pos
    end = _take(buf, pos, size, "string")
    return buf[pos:end].decode(), end


def read_compact_string(buf: bytes, pos: int) -> tuple[str, int]:
    start = pos
    size, pos = _compact_length(buf, pos)
    if size < 0:
        raise _null(start, "string")
    end = _take(buf, pos, size, "string")
    return buf[pos:end].decode(), end


def read_compact_nullable_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    size, pos = _compact_length(buf, pos)
    if size < 0:
        return None, pos
    end = _take(buf, pos, size, "string")
    return buf[pos:end].decode(), end


def read_bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    start = pos
    size, pos = _classic_length(buf, pos, True)
    if size < 0:
        raise _null(start, "bytes")
    end = _take(buf, pos, size, "bytes")
    return bytes(buf[pos:end]), end


def read_nullable_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    size, pos = _classic_length(buf, pos, True)
    if size < 0:
        return None, pos
    end = _take(buf, pos, size, "bytes")
    return bytes(buf[pos:end]), end


def read_compact_bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    start = pos
    size, pos = _compact_length(buf, pos)
    if size < 0:
        raise _null(start, "bytes")
    end = _take(buf, pos, size, "bytes")
    return bytes(buf[pos:end]), end


def read_compact_nullable_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    size, pos = _compact_length(buf, pos)
    if size < 0:
        return None, pos
    end = _take(buf, pos, size, "bytes")
    return bytes(buf[pos:end]), end


def read_array_length(buf: bytes, pos: int, compact: bool, min_item_size: int) -> tuple[int, int]:
    """An array's element count (-1 for null), refusing counts the remaining bytes cannot hold."""
    size, after = _compact_length(buf, pos) if compact else _classic_length(buf, pos, True)
    if size > 0 and size * min_item_size > len(buf) - after:
        raise array_too_long(size, len(buf) - after, pos)
    return size, after


def array_too_long(size: int, left: int, pos: int) -> DecodeError:
    return DecodeError(f"array of {size} elements cannot fit in the {left} bytes left", offset=pos)


def write_string(out: bytearray, value: str | None) -> None:
    if value is None:
        raise EncodeError("null where the field is not nullable")
    raw = value.encode()
    if len(raw) > 0x7FFF:
        raise EncodeError(f"string of {len(raw)} bytes is longer than 32767")
    out += INT16.pack(len(raw))
    out += raw


def write_nullable_string(out: bytearray, value: str | None) -> None:
    if value is None:
        out += b"\xff\xff"
    else:
        write_string(out, value)


def write_compact_string(out: bytearray, value: str | None) -> None:
    if value is None:
        raise EncodeError("null where the field is not nullable")
    raw = value.encode()
    write_uvarint(out, len(raw) + 1)
    out += raw


def write_compact_nullable_string(out: bytearray, value: str | None) -> None:
    if value is None:
        out.append(0)
    else:
        write_compact_string(out, value)


def write_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        raise EncodeError("null where the field is not nullable")
    out += INT32.pack(len(value))
    out += value


def write_nullable_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        out += b"\xff\xff\xff\xff"
    else:
        write_bytes(out, value)


def write_compact_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        raise EncodeError("null where the field is not nullable")
    write_uvarint(out, len(value) + 1)
    out += value


def write_compact_nullable_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        out.append(0)
    else:
        write_compact_bytes(out, value)


def write_array_length(out: bytearray, size: int, compact: bool) -> None:
    """Write an element count, -1 for a null array."""
    if compact:
        write_uvarint(out, size + 1)
    else:
        out += INT32.pack(size)
