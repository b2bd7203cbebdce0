"""Metadata records: the values of data records in the metadata log, snapshots and bootstrap files.

Each value is an ApiMessageAndVersion frame: uvarint frame version (1), uvarint record api key,
uvarint record version, then the record body at that version; nothing may follow the body. Record
types or versions the codec does not model stay raw, so that newer logs can still be read and copied.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError, DecodeError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import read_uvarint, write_uvarint
from kafka_admin_kraft.records.batch import RecordBatch
from kafka_admin_kraft.records.control import ControlRecord, decode_control_record

FRAME_VERSION: Final = 1
INT16_MAX: Final = 0x7FFF


@dataclass(frozen=True, slots=True)
class ApiMessageAndVersion:
    """A typed metadata record and the version it is (to be) written at."""

    message: Struct
    version: int

    @property
    def api_key(self) -> int:
        return type(self.message).API_KEY


@dataclass(frozen=True, slots=True)
class RawMetadataRecord:
    """A metadata record whose type or version the codec lacks: kept as its body bytes."""

    api_key: int
    version: int
    body: bytes


MetadataRecord = ApiMessageAndVersion | RawMetadataRecord


def record_class(api_key: int) -> type[Struct] | None:
    """The codec class of a record api key, None for types the codec does not model. Each class is
    loaded on first use: a tool that reads three record types does not load seventy."""
    return messages.metadata_record_class(api_key) if api_key in messages.METADATA_RECORD_NAMES else None


def _frame_field(value: bytes, pos: int, name: str) -> tuple[int, int]:
    b = value[pos] if pos < len(value) else -1
    if 0 <= b < 0x80:
        return b, pos + 1
    try:
        number, end = read_uvarint(value, pos)
    except DecodeError as exc:
        raise CorruptRecordError(exc.reason, what="metadata record", path=name, offset=pos) from None
    if number > INT16_MAX:
        raise CorruptRecordError(f"{name} {number} does not fit in an int16", what="metadata record",
                                 path=name, offset=pos)
    return number, end


def read_frame(value: bytes) -> tuple[int, int, int]:
    """(api key, record version, body start) of a framed metadata record, without decoding the body."""
    if value[:1] == b"\x01" and value[1:2] < b"\x80" and value[2:3] < b"\x80" and len(value) > 2:
        return value[1], value[2], 3
    frame_version, pos = _frame_field(value, 0, "frame version")
    if frame_version != FRAME_VERSION:
        raise CorruptRecordError(f"frame version is {frame_version}, only 1 is defined",
                                 what="metadata record", path="frame version", offset=0)
    api_key, pos = _frame_field(value, pos, "api key")
    version, pos = _frame_field(value, pos, "record version")
    return api_key, version, pos


def decode_metadata_record(value: bytes | None) -> MetadataRecord:
    """Decode one framed metadata record; trailing bytes after the body are an error."""
    if value is None:
        raise CorruptRecordError("metadata record value is null", what="metadata record", path="value")
    api_key, version, pos = read_frame(value)
    cls = record_class(api_key)
    if cls is None or not cls.VERSIONS[0] <= version <= cls.VERSIONS[1]:
        return RawMetadataRecord(api_key, version, value[pos:])
    try:
        message, end = cls.read(value, pos, version)
    except DecodeError as exc:
        raise exc.describe(f"{cls.NAME} v{version} (metadata record)") from None
    if end != len(value):
        raise CorruptRecordError(f"{len(value) - end} bytes follow the {cls.NAME} v{version} body",
                                 what="metadata record", path="value", offset=end)
    return ApiMessageAndVersion(message, version)


def encode_metadata_record(record: MetadataRecord) -> bytes:
    """The framed bytes of a metadata record."""
    out = bytearray()
    out.append(FRAME_VERSION)
    write_uvarint(out, record.api_key)
    write_uvarint(out, record.version)
    if isinstance(record, RawMetadataRecord):
        out += record.body
    else:
        record.message.write(out, record.version)
    return bytes(out)


def _located(exc: DecodeError, batch: RecordBatch, offset: int, what: str) -> CorruptRecordError:
    return CorruptRecordError(f"record at offset {offset}: {exc}", what=what or "record batch",
                              path=f"batch at offset {batch.base_offset}", offset=batch.position)


def decode_metadata_batch(batch: RecordBatch, *, what: str = "") -> list[MetadataRecord]:
    """The metadata records of a data batch; errors name the file, batch position and offset."""
    values: list[MetadataRecord] = []
    for record in batch.records:
        try:
            values.append(decode_metadata_record(record.value))
        except DecodeError as exc:
            raise _located(exc, batch, record.offset, what) from None
    return values


def decode_control_batch(batch: RecordBatch, *, what: str = "") -> list[ControlRecord]:
    """The control records of a control batch; errors name the file, batch position and offset."""
    values: list[ControlRecord] = []
    for record in batch.records:
        try:
            values.append(decode_control_record(record))
        except DecodeError as exc:
            raise _located(exc, batch, record.offset, what) from None
    return values


def iter_metadata_records(batches: Iterable[RecordBatch], *, what: str = "") -> Iterator[MetadataRecord]:
    """The metadata records of the data batches, in order; control batches are skipped."""
    for batch in batches:
        if not batch.is_control:
            yield from decode_metadata_batch(batch, what=what)
