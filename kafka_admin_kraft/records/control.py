"""Control records: the records of batches with the control bit (raft leader changes, voter sets,
snapshot header/footer, transaction markers).

Key: int16 key version + int16 type. Value: the type's schema message in flexible encoding at
version 0 (no metadata frame); ABORT/COMMIT carry a transaction marker instead. A negative key
version is corruption; a type this code does not know is kept as raw bytes, as Kafka ignores it.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Final

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError, DecodeError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records.batch import Record

# Control record key, 4 bytes: int16 key version (0), int16 type.
CONTROL_KEY: Final = struct.Struct(">hh")
CONTROL_KEY_VERSION: Final = 0
# ABORT/COMMIT value, 6 bytes: int16 marker version (0), int32 coordinator epoch.
END_TXN_MARKER: Final = struct.Struct(">hi")
CONTROL_VALUE_VERSION: Final = 0
"""Schema version every KRaft control value is written at (LeaderChangeMessage included)."""


class ControlRecordType(enum.IntEnum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    """The value of ABORT and COMMIT records; ``extra`` keeps bytes a newer marker version appends."""

    coordinator_epoch: int
    version: int = 0
    extra: bytes = b""


@dataclass(frozen=True, slots=True)
class UnknownControlValue:
    """A control record of a type this code does not model, kept byte for byte."""

    type_id: int
    raw: bytes | None


ControlValue = Struct | EndTxnMarker | UnknownControlValue


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A decoded control record: its type id, key version and value."""

    type_id: int
    value: ControlValue
    key_version: int = CONTROL_KEY_VERSION

    @property
    def type(self) -> ControlRecordType | None:
        """The known type, None for an unknown one."""
        return ControlRecordType(self.type_id) if self.type_id in _KNOWN_TYPES else None


_KNOWN_TYPES: Final = frozenset(int(kind) for kind in ControlRecordType)


def _schema_classes() -> dict[int, type[Struct]]:
    return {
        ControlRecordType.LEADER_CHANGE: messages.LeaderChangeMessage,
        ControlRecordType.SNAPSHOT_HEADER: messages.SnapshotHeaderRecord,
        ControlRecordType.SNAPSHOT_FOOTER: messages.SnapshotFooterRecord,
        ControlRecordType.KRAFT_VERSION: messages.KRaftVersionRecord,
        ControlRecordType.KRAFT_VOTERS: messages.VotersRecord,
    }


SCHEMA_CLASSES: Final = _schema_classes()
"""Control type id -> the message class of its value."""
_TYPE_OF_CLASS: Final = {cls: type_id for type_id, cls in SCHEMA_CLASSES.items()}


def parse_control_key(key: bytes | None) -> tuple[int, int]:
    """(key version, type id) of a control record key."""
    if key is None or len(key) < CONTROL_KEY.size:
        size = "null" if key is None else f"{len(key)} bytes"
        raise CorruptRecordError(f"control record key is {size}, it needs at least 4 bytes",
                                 what="control record", path="key")
    version, type_id = CONTROL_KEY.unpack_from(key, 0)
    if version < 0:
        raise CorruptRecordError(f"control record key version {version} is negative",
                                 what="control record", path="key.version")
    return version, type_id


def decode_control_record(record: Record) -> ControlRecord:
    """Decode the key and value of a record taken from a control batch.

    Unknown key versions are read as version 0, as Kafka does.
    """
    key_version, type_id = parse_control_key(record.key)
    value = record.value
    if type_id not in _KNOWN_TYPES:
        return ControlRecord(type_id, UnknownControlValue(type_id, value), key_version)
    name = ControlRecordType(type_id).name
    if value is None:
        raise CorruptRecordError(f"{name} control record has a null value", what="control record",
                                 path="value")
    if type_id <= ControlRecordType.COMMIT:
        if len(value) < END_TXN_MARKER.size:
            raise CorruptRecordError(f"{name} marker has {len(value)} bytes, it needs 6",
                                     what="control record", path="value")
        marker_version, epoch = END_TXN_MARKER.unpack_from(value, 0)
        if marker_version < 0:
            raise CorruptRecordError(f"{name} marker version {marker_version} is negative",
                                     what="control record", path="value.version")
        return ControlRecord(type_id, EndTxnMarker(epoch, marker_version, value[END_TXN_MARKER.size:]),
                             key_version)
    try:
        message = SCHEMA_CLASSES[type_id].decode(value, CONTROL_VALUE_VERSION)
    except DecodeError as exc:
        raise exc.nested(f"{name} value") from None
    return ControlRecord(type_id, message, key_version)


def control_type_of(value: ControlValue, *, commit: bool = True) -> int:
    """The control type id that carries ``value`` (``commit`` picks COMMIT or ABORT for markers)."""
    if isinstance(value, UnknownControlValue):
        return value.type_id
    if isinstance(value, EndTxnMarker):
        return ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    type_id = _TYPE_OF_CLASS.get(type(value))
    if type_id is None:
        raise ValueError(f"{type(value).__name__} is not a control record value")
    return type_id


def encode_control_key(type_id: int, key_version: int = CONTROL_KEY_VERSION) -> bytes:
    return CONTROL_KEY.pack(key_version, type_id)


def encode_control_value(value: ControlValue) -> bytes | None:
    """The value bytes of a control record (schema messages at version 0)."""
    if isinstance(value, UnknownControlValue):
        return value.raw
    if isinstance(value, EndTxnMarker):
        return END_TXN_MARKER.pack(value.version, value.coordinator_epoch) + value.extra
    return value.encode(CONTROL_VALUE_VERSION)


def encode_control_record(record: ControlRecord) -> tuple[bytes, bytes | None]:
    """(key, value) bytes of a control record."""
    return encode_control_key(record.type_id, record.key_version), encode_control_value(record.value)
