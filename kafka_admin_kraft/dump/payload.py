"""What ``DumpLogSegments`` prints for a record's content: metadata records as
``ClusterMetadataLogMessageParser`` prints them, control records as ``printControlRecord`` does.

Metadata records (``--cluster-metadata-decoder``) are read the way ``MetadataRecordSerde`` reads
them; a record it cannot read becomes Kafka's one-line ``Error at <offset>, skipping. <reason>``
with its reasons word for word. Control records are decoded with the project's codec at schema
version 0 and printed at the version their own ``Version`` field names, as
``ControlRecordUtils`` and the ``*JsonConverter.write(record, record.version())`` calls do.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence
from typing import Any, Final

from kafka_admin_kraft.dump.json_text import (
    Malformed,
    bytes_json,
    double_json,
    json_string,
    uvarint32,
)
from kafka_admin_kraft.dump.metadata_json import TYPE_NAMES, WRITERS
from kafka_admin_kraft.protocol.message import Struct, snake_case
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.protocol.spec import FieldSpec, MessageSpec, load_spec

INT16_MAX: Final = 0x7FFF
DECODE_FAILURES: Final = (Malformed, IndexError, struct.error, ValueError)
"""What a generated reader raises on bytes Kafka's reader would refuse."""

Reader = Callable[[bytes, int], tuple[str, int]]


def _prefix(api_key: int, version: int) -> str:
    """``{"type":"...","version":N,"data":``: what precedes the record's data."""
    return f'{{"type":"{TYPE_NAMES[api_key]}","version":{version},"data":'


FAST_READERS: Final[dict[bytes, tuple[str, Reader]]] = {
    bytes((1, api_key, lowest + index)): (_prefix(api_key, lowest + index), reader)
    for api_key, (lowest, readers) in WRITERS.items() if api_key < 0x80
    for index, reader in enumerate(readers) if lowest + index < 0x80
}
"""The first three bytes of a record value (frame version 1, api key and version in one byte each,
the usual case) -> the text before its data and the reader of its body."""


def _frame_number(value: bytes, pos: int, entity: str) -> tuple[int | str, int]:
    """``AbstractApiMessageSerde.unsignedIntToShort``: an unsigned varint as a Java short, or the
    reason it cannot be read."""
    try:
        number, pos = uvarint32(value, pos)
    except (IndexError, Malformed):
        return f"Error while reading {entity}", pos
    if number > INT16_MAX:
        return f"Value for {entity} was too large.", pos
    return ((number & 0xFFFF) ^ 0x8000) - 0x8000, pos


def metadata_payload(value: bytes | None, offset: int) -> str:
    """Kafka's text for the value of a metadata record at ``offset``: the record as JSON, or why it
    cannot be read."""
    if value is None:
        return f"Error at {offset}, skipping. Error while reading frame version"
    fast = FAST_READERS.get(value[:3])
    if fast is not None:
        prefix, reader = fast
        api_key = value[1]
        pos = 3
    else:
        header = _frame(value)
        if isinstance(header, str):
            return f"Error at {offset}, skipping. {header}"
        api_key, version, pos = header
        table = WRITERS.get(api_key)
        if table is None:
            return (f"Error at {offset}, skipping. org.apache.kafka.common.errors."
                    f"UnsupportedVersionException: Unknown metadata id {api_key}")
        lowest, readers = table
        reader = readers[min(max(version - lowest, 0), len(readers) - 1)]
        prefix = _prefix(api_key, version)
    try:
        data, end = reader(value, pos)
    except DECODE_FAILURES:
        return f"Error at {offset}, skipping. Failed to deserialize record with type {api_key}"
    if end != len(value):
        return _garbage(offset, api_key, len(value) - end)
    return f"{prefix}{data}}}"


def _frame(value: bytes) -> tuple[int, int, int] | str:
    """(api key, version, body start) of a value, as ``AbstractApiMessageSerde.read`` reads the frame,
    or its reason for refusing it."""
    frame, pos = _frame_number(value, 0, "frame version")
    if isinstance(frame, str):
        return frame
    if frame == 0:
        return ("Could not deserialize metadata record with frame version 0. Note that upgrades from the "
                "preview release of KRaft in 2.8 to newer versions are not supported.")
    if frame != 1:
        return (f"Could not deserialize metadata record due to unknown frame version {frame}(only frame "
                "version 1 is supported)")
    api_key, pos = _frame_number(value, pos, "type")
    if isinstance(api_key, str):
        return api_key
    version, pos = _frame_number(value, pos, "version")
    if isinstance(version, str):
        return version
    return api_key, version, pos


def _garbage(offset: int, api_key: int, left: int) -> str:
    """Bytes left after the body; a body that ran past the end of the value is a failed read."""
    if left < 0:
        return f"Error at {offset}, skipping. Failed to deserialize record with type {api_key}"
    return f"Error at {offset}, skipping. Found {left} byte(s) of garbage after {api_key}"


# --------------------------------------------------------------------------- control records

def message_spec(cls: type[Struct]) -> MessageSpec:
    """The spec of a generated message class, read from the spec file it was generated from."""
    return _spec_and_structs(cls)[0]


def _spec_and_structs(cls: type[Struct]) -> tuple[MessageSpec, dict[str, list[FieldSpec]]]:
    """The spec of a generated message class and the fields of its structs by struct name."""
    return _read_spec(cls.__module__.rsplit(".", 1)[1], cls.NAME)


@functools.cache
def _read_spec(stem: str, name: str) -> tuple[MessageSpec, dict[str, list[FieldSpec]]]:
    for message in load_spec(stem):
        if message.name == name:
            return message, message.struct_fields()
    raise LookupError(f"no spec for {name}")


class NonDefaultField(Exception):
    """A field the JSON version lacks holds a value: Kafka's converter refuses to write it
    (``Attempted to write a non-default <field> at version <n>``)."""


def _default_of(spec: FieldSpec) -> object:
    """A field's default as the project's codec holds it (None for a struct: no value is its default)."""
    default = spec.default
    if default == "null" or (spec.is_struct and not spec.is_array):
        return None
    if spec.is_array:
        return []
    kind = spec.type
    if kind == "string":
        return default or ""
    if kind == "bytes":
        return b""
    if kind == "uuid":
        return ZERO_UUID
    if kind == "bool":
        return (default or "").lower() == "true"
    if kind == "float64":
        return float(default or 0)
    return int(default or "0", 0)


def _is_default(spec: FieldSpec, value: object) -> bool:
    if spec.is_struct and not spec.is_array and spec.default != "null":
        return False
    return value == _default_of(spec)


def _value_json(kind: str, value: Any, structs: dict[str, list[FieldSpec]], version: int) -> str:
    if value is None:
        return "null"
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        return str(value)
    if kind == "float64":
        return double_json(value)
    if kind == "uuid":
        assert isinstance(value, Uuid)
        return f'"{value}"'
    if kind == "string":
        return json_string(value)
    if kind in ("bytes", "records"):
        return bytes_json(value)
    return struct_json(value, structs[kind], structs, version)


def struct_json(obj: Struct, fields: Sequence[FieldSpec], structs: dict[str, list[FieldSpec]],
                version: int) -> str:
    """Kafka's JSON text of a decoded struct at ``version`` (already inside the valid range):
    fields of that version in schema order, tagged ones only when not at their default. ``structs``
    are the fields of the message's structs by name (:meth:`MessageSpec.struct_fields`)."""
    parts = []
    for spec in fields:
        value = getattr(obj, snake_case(spec.name))
        if version not in spec.versions:
            if not spec.ignorable and not _is_default(spec, value):
                raise NonDefaultField(f"Attempted to write a non-default {spec.name[:1].lower()}"
                                      f"{spec.name[1:]} at version {version}")
            continue
        if spec.tagged_at(version) and _is_default(spec, value):
            continue
        if spec.is_array and value is not None:
            kind = spec.element_type
            text = "[" + ",".join(_value_json(kind, item, structs, version) for item in value) + "]"
        else:
            text = _value_json(spec.type, value, structs, version)
        parts.append(f'"{spec.name[:1].lower()}{spec.name[1:]}":{text}')
    return "{" + ",".join(parts) + "}"


def control_json(message: Struct) -> str:
    """A control record's value as ``<Type>JsonConverter.write(record, record.version())`` prints
    it: the JSON version is the record's own ``Version`` field, and a version outside the schema's
    range writes as the nearest one inside it (Kafka's generated checks only cover the range)."""
    spec, structs = _spec_and_structs(type(message))
    version = getattr(message, "version", spec.versions.low)
    assert spec.versions.high is not None
    layout = min(max(version, spec.versions.low), spec.versions.high)
    return struct_json(message, spec.fields, structs, layout)
