"""Base class of generated messages and the error plumbing their straight-line code relies on.

Generated encoders and decoders track the index of the field they are working on in a local
variable; when something fails, the helpers here turn that index into a field path, a byte offset
and a readable reason, so that the hot path carries no bookkeeping beyond one integer store.
"""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, overload

from kafka_admin_kraft.protocol.exceptions import DecodeError, EncodeError, UndefinedVersionError
from kafka_admin_kraft.protocol.primitives import RawTaggedField, Uuid, uuid_from_wire

FieldEntry = tuple[str, bool, tuple[tuple[str, int, str], ...]]
"""What a failure at field index ``f`` means: (label, is_array, fixed-width group members as
(name, size, struct format code))."""

DECODE_FAILURES = (struct.error, IndexError, UnicodeDecodeError, ValueError, OverflowError)
ENCODE_FAILURES = (struct.error, TypeError, AttributeError, UnicodeEncodeError, ValueError,
                   OverflowError)

_S = TypeVar("_S", bound="Struct")
_NONE: list[RawTaggedField] = []
"""No unknown tagged fields, to compare with; never changed."""


class _Unset:
    """Marks a constructor argument left out, where the default is a fresh list or struct."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


class UuidField:
    """A uuid field of a generated struct, over the slot ``_<name>``. Decoders leave the field's 16
    wire bytes in the slot and the first read makes them the ``Uuid``: most decoded uuids are never
    read, and making one costs as much as decoding the rest of a small struct. Encoders write the
    slot's bytes whichever it holds. Only the wire puts bytes there, so setting bytes is refused."""

    __slots__ = ("name", "_get", "_set")

    def __set_name__(self, owner: type, name: str) -> None:
        slot = owner.__dict__["_" + name]
        self.name = name
        self._get: Callable[[Any], Uuid | bytes] = slot.__get__
        self._set: Callable[[Any, Uuid], None] = slot.__set__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> UuidField: ...

    @overload
    def __get__(self, obj: Struct, owner: type | None = None) -> Uuid: ...

    def __get__(self, obj: Struct | None, owner: type | None = None) -> Uuid | UuidField:
        if obj is None:
            return self
        value = self._get(obj)
        if value.__class__ is bytes:
            value = uuid_from_wire(value)
            self._set(obj, value)
        return value  # type: ignore[return-value]

    def __set__(self, obj: Struct, value: Uuid) -> None:
        if isinstance(value, bytes):
            raise TypeError(f"{self.name} takes a Uuid, not bytes: Uuid(raw) makes one of 16 bytes")
        self._set(obj, value)


class Struct:
    """A generated Kafka struct: a message, a nested struct or a record.

    Subclasses list their fields in ``_FIELDS`` (snake_case attribute names) and register one
    encoder and decoder per version.
    """

    __slots__ = ("_unknown_tagged_fields",)

    NAME: ClassVar[str] = ""
    KIND: ClassVar[str] = "struct"
    API_KEY: ClassVar[int] = -1
    LISTENERS: ClassVar[tuple[str, ...]] = ()
    """Requests: the listener kinds that serve the API in Kafka (``broker``, ``controller``)."""
    HEADER_VERSIONS: ClassVar[dict[int, int]] = {}
    VERSIONS: ClassVar[tuple[int, int]] = (0, 0)
    FLEXIBLE_FROM: ClassVar[int | None] = None
    _FIELDS: ClassVar[tuple[str, ...]] = ()
    _ENCODERS: ClassVar[dict[int, Callable[[Any, bytearray], None]]] = {}
    _DECODERS: ClassVar[dict[int, Callable[[bytes, int], tuple[Any, int]]]] = {}

    _unknown_tagged_fields: list[RawTaggedField] | None
    """None while there are none: most structs have none, and a decoder need not make a list each."""

    @property
    def unknown_tagged_fields(self) -> list[RawTaggedField]:
        """Tagged fields this version does not know, as (tag, raw bytes), kept for a round trip."""
        fields = self._unknown_tagged_fields
        if fields is None:
            fields = self._unknown_tagged_fields = []
        return fields

    @unknown_tagged_fields.setter
    def unknown_tagged_fields(self, fields: list[RawTaggedField]) -> None:
        self._unknown_tagged_fields = fields

    def encode(self, version: int) -> bytes:
        """The body of this struct at ``version``, exactly as Kafka writes it."""
        out = bytearray()
        self.write(out, version)
        return bytes(out)

    def write(self, out: bytearray, version: int) -> None:
        """Append the encoding at ``version`` to ``out``."""
        encoder = self._ENCODERS.get(version)
        if encoder is None:
            raise UndefinedVersionError(
                f"{self.NAME} has versions {self.VERSIONS[0]}-{self.VERSIONS[1]}, not {version}")
        try:
            encoder(self, out)
        except EncodeError as exc:
            raise exc.describe(f"{self.NAME} v{version}") from None

    @classmethod
    def decode(cls: type[_S], body: bytes, version: int) -> _S:
        """Decode a whole body; bytes left over after the last field are an error."""
        decoder = cls._DECODERS.get(version)
        if decoder is None:
            raise UndefinedVersionError(
                f"{cls.NAME} has versions {cls.VERSIONS[0]}-{cls.VERSIONS[1]}, not {version}")
        try:
            value, end = decoder(body, 0)
        except DecodeError as exc:
            raise exc.describe(f"{cls.NAME} v{version}") from None
        if end != len(body):
            raise DecodeError(f"{len(body) - end} bytes left after the last field",
                              what=f"{cls.NAME} v{version}", offset=end)
        return value  # type: ignore[no-any-return]

    @classmethod
    def read(cls: type[_S], buf: bytes, pos: int, version: int) -> tuple[_S, int]:
        """Decode from ``buf`` at ``pos``; return the struct and the position after it."""
        decoder = cls._DECODERS.get(version)
        if decoder is None:
            raise UndefinedVersionError(
                f"{cls.NAME} has versions {cls.VERSIONS[0]}-{cls.VERSIONS[1]}, not {version}")
        try:
            value, end = decoder(buf, pos)
        except DecodeError as exc:
            raise exc.describe(f"{cls.NAME} v{version}") from None
        return value, end

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly data: snake_case keys, uuids as Kafka's base64 text, bytes as base64."""
        return {name: _plain(getattr(self, name)) for name in self._FIELDS}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS) and (
            (self._unknown_tagged_fields or _NONE) == (other._unknown_tagged_fields or _NONE))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{self.NAME}({fields})"


def snake_case(name: str) -> str:
    """``ReplicaDirectoryId`` -> ``replica_directory_id``; ``KRaftVersion`` -> ``k_raft_version``."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z])([A-Z][a-z])", r"\1_\2", name)
    return name.lower()


_AS_IS = frozenset({int, str, bool, float, type(None)})


def _plain(value: object) -> object:
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is list:
        items: list[object] = value  # type: ignore[assignment]
        # Kafka arrays hold one type: a list of scalars (replicas, ISR, ...) is copied as it is
        if not items or type(items[0]) in _AS_IS:
            return list(items)
        return [_plain(item) for item in items]
    if isinstance(value, Struct):
        return value.to_dict()
    if isinstance(value, Uuid):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def _locate(table: tuple[FieldEntry, ...], f: int, i: int, buf_left: int | None) -> tuple[str, int]:
    """Label of the failing field, and its byte distance from the field group's start."""
    label, is_array, group = table[f]
    if group and buf_left is not None:
        at = 0
        for name, size, _ in group:
            if at + size > buf_left:
                return name, at
            at += size
        return group[0][0], 0
    if is_array and i >= 0:
        return f"{label}[{i}]", 0
    return label, 0


def decode_failure(exc: Exception, buf: bytes, pos: int, table: tuple[FieldEntry, ...], f: int,
                   i: int) -> DecodeError:
    """Turn a low-level failure inside a generated decoder into a located DecodeError."""
    if isinstance(exc, DecodeError):
        label, _ = _locate(table, f, i, None)
        exc.nested(label, pos)
        return exc
    label, delta = _locate(table, f, i, len(buf) - pos)
    if isinstance(exc, struct.error | IndexError):
        reason = f"buffer ends ({max(len(buf) - pos - delta, 0)} bytes left)"
    elif isinstance(exc, UnicodeDecodeError):
        reason = f"string is not UTF-8 ({exc.reason})"
    else:
        reason = str(exc)
    return DecodeError(reason, path=label, offset=pos + delta)


def encode_failure(exc: Exception, obj: Struct, table: tuple[FieldEntry, ...], f: int,
                   i: int) -> EncodeError:
    """Turn a low-level failure inside a generated encoder into an EncodeError naming the field."""
    label, _ = _locate(table, f, i, None)
    group = table[f][2]
    if isinstance(exc, struct.error) and group:
        label = _bad_member(obj, group)
    if isinstance(exc, EncodeError):
        exc.nested(label)
        return exc
    if isinstance(exc, AttributeError | TypeError) and "NoneType" in str(exc):
        reason = "null where the field is not nullable"
    elif isinstance(exc, struct.error):
        reason = f"value out of range ({exc})"
    else:
        reason = f"{type(exc).__name__}: {exc}"
    return EncodeError(reason, path=label)


def _bad_member(obj: Struct, group: tuple[tuple[str, int, str], ...]) -> str:
    """The first member of a packed group whose value does not fit its type."""
    for name, _, code in group:
        value = getattr(obj, snake_case(name))
        try:
            struct.pack(">" + code, value.bytes if isinstance(value, Uuid) else value)
        except struct.error:
            return name
    return group[0][0]


def absent_field(version: int) -> EncodeError:
    """A non-default value in a field the version does not have (Kafka refuses it too)."""
    return EncodeError(f"the field has no place in version {version} and is not ignorable")
