"""Kafka's JSON text for message fields, as its generated ``*JsonConverter`` classes build it and
Jackson's ``JsonNode.toString`` prints it: compact, fields in schema order, camelCase names.

Field values: integers as numbers, bool as ``true``/``false``, float64 as Java's ``Double.toString``
(non-finite values quoted, Jackson's ``QUOTE_NON_NUMERIC_NUMBERS``), uuid as Kafka's URL-safe base64
without padding, bytes as standard base64 with padding, strings decoded as Java does (malformed UTF-8
becomes U+FFFD) and escaped as Jackson escapes them: ``"`` and ``\\``, the short escapes ``\\b \\t \\n
\\f \\r``, other control characters as ``\\u00XX`` in upper-case hex, everything else as it is.

The caches keep the text of repeated wire values (replica lists, directories, config names): a metadata
log repeats them on almost every record.
"""

from __future__ import annotations

import binascii
import math
import re
import struct
from binascii import b2a_base64
from decimal import Decimal
from typing import Final

CACHE_LIMIT: Final = 1 << 16
"""Entries per cache before it starts over, so memory stays bounded on logs of unique values."""


class Malformed(ValueError):
    """Wire bytes a Kafka reader would refuse; the caller reports the record as undecodable."""


_ESCAPES: Final = {code: f"\\u{code:04X}" for code in range(0x20)} | {
    0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}
_NEEDS_ESCAPE: Final = re.compile('[\x00-\x1f"\\\\]').search


def json_string(text: str) -> str:
    """``text`` as a quoted JSON string, escaped as Jackson escapes it."""
    if _NEEDS_ESCAPE(text):
        text = text.translate(_ESCAPES)
    return f'"{text}"'


STRINGS: Final[dict[bytes, str]] = {}
INT32_ARRAYS: Final[dict[bytes, str]] = {}
UUID_ARRAYS: Final[dict[bytes, str]] = {}
LAST_UUID: Final[list[tuple[bytes, str]]] = [(b"", "")]
"""The bytes and text of the uuid field read last, as one pair (replaced whole, so that readers on
several threads never see one uuid's bytes with another's text): the records of a topic follow one
another and name the same topic id, so that their text is made once for the run."""


def string_json(raw: bytes) -> str:
    """The JSON text of a UTF-8 string field's bytes (cached)."""
    if len(STRINGS) >= CACHE_LIMIT:
        STRINGS.clear()
    text = STRINGS[raw] = json_string(raw.decode("utf-8", "replace"))
    return text


_URL_SAFE: Final = bytes.maketrans(b"+/", b"-_")


def uuid_text(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, without padding."""
    return b2a_base64(raw, newline=False)[:22].translate(_URL_SAFE).decode("ascii")


def uuid_json(raw: bytes) -> str:
    """The quoted text of a uuid field's 16 bytes. Not cached: a metadata log names tens of thousands
    of topic ids, and a look-up in a cache that large misses the CPU caches and costs more than the
    encoding."""
    return f'"{b2a_base64(raw, newline=False)[:22].translate(_URL_SAFE).decode("ascii")}"'


def int32_array_json(raw: bytes) -> str:
    """``[1,2,3]`` from the big-endian int32 elements of an array (cached)."""
    if len(INT32_ARRAYS) >= CACHE_LIMIT:
        INT32_ARRAYS.clear()
    text = INT32_ARRAYS[raw] = "[" + ",".join(map(str, struct.unpack(f">{len(raw) >> 2}i", raw))) + "]"
    return text


def uuid_array_json(raw: bytes) -> str:
    """``["...","..."]`` from the 16-byte elements of a uuid array (cached)."""
    if len(UUID_ARRAYS) >= CACHE_LIMIT:
        UUID_ARRAYS.clear()
    text = UUID_ARRAYS[raw] = "[" + ",".join(f'"{uuid_text(raw[at:at + 16])}"'
                                             for at in range(0, len(raw), 16)) + "]"
    return text


def bytes_json(raw: bytes) -> str:
    """A bytes field as Jackson writes a ``BinaryNode``: quoted standard base64 with padding."""
    return '"' + binascii.b2a_base64(raw, newline=False).decode("ascii") + '"'


def double_json(value: float) -> str:
    """Java's ``Double.toString`` (shortest digits that round-trip): ``1.0``, ``0.001``, ``1.0E7``,
    ``1.0E-4``; NaN and the infinities quoted, as Jackson writes non-finite numbers by default."""
    if math.isnan(value):
        return '"NaN"'
    if math.isinf(value):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len(digit_tuple) - len(digits)
    scientific = len(digits) + exponent - 1
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if scientific >= 0:
            whole = digits[:scientific + 1].ljust(scientific + 1, "0")
            return f"{prefix}{whole}.{digits[scientific + 1:] or '0'}"
        return f"{prefix}0.{'0' * (-scientific - 1)}{digits}"
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{scientific}"


def uvarint32(buf: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint as Kafka's ``ByteUtils.readUnsignedVarint`` reads it: at most five bytes,
    the value wrapped to a signed 32-bit int. IndexError when the buffer ends inside it."""
    result = 0
    for shift in (0, 7, 14, 21, 28):
        byte = buf[pos]
        pos += 1
        if shift == 28 and byte & 0x80:
            raise Malformed("varint is longer than five bytes")
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            break
    result &= 0xFFFFFFFF
    return (result - (1 << 32) if result & 0x80000000 else result), pos
