"""Record batch v2 (magic 2): the unit Kafka writes to log segments, snapshots and Fetch responses.

Decoding is the hot path of every log reader in the project, so it works in place on the reader's
buffer with ``struct.unpack_from`` and inlined short varints, and builds records and batches as
named tuples.
"""

from __future__ import annotations

import enum
import gzip
import importlib
import struct
import zlib
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError, DecodeError, EncodeError
from kafka_admin_kraft.protocol.primitives import read_varint, read_varlong, write_varint, write_varlong
from kafka_admin_kraft.records.crc import crc32c

MAGIC: Final = 2
LOG_OVERHEAD: Final = 12
"""Bytes before the length field's count starts: base offset (8) and length (4)."""
BATCH_HEADER_SIZE: Final = 61
"""Bytes of a batch before its first record."""
MIN_BATCH_LENGTH: Final = BATCH_HEADER_SIZE - LOG_OVERHEAD
"""Smallest value the length field can hold: a batch with no records."""
CRC_START: Final = 21
"""The CRC covers the attributes and everything after them, not the leader epoch or magic."""

COMPRESSION_MASK: Final = 0x07
TIMESTAMP_TYPE_FLAG: Final = 0x08
TRANSACTIONAL_FLAG: Final = 0x10
CONTROL_FLAG: Final = 0x20
DELETE_HORIZON_FLAG: Final = 0x40

NO_PRODUCER_ID: Final = -1
NO_PRODUCER_EPOCH: Final = -1
NO_SEQUENCE: Final = -1
NO_PARTITION_LEADER_EPOCH: Final = -1


class Compression(enum.IntEnum):
    """Codec id in attribute bits 0-2."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(enum.IntEnum):
    """Attribute bit 3: who set the timestamps."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class UnsupportedCompressionError(DecodeError):
    """A batch compressed with a codec whose Python module is not installed.

    KRaft never compresses; such batches come from ordinary topics read through the same code.
    """


class Header(NamedTuple):
    """A record header: UTF-8 key and optional value."""

    key: str
    value: bytes | None


class Record(NamedTuple):
    """One record with its absolute offset and timestamp (base + delta).

    For batches with LogAppendTime, Kafka reports the batch's max timestamp for every record;
    ``timestamp`` here keeps the stored delta so that the batch re-encodes to the same bytes.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    attributes: int = 0


class RecordBatch(NamedTuple):
    """A batch and its records.

    A named tuple because readers build one per batch on the hot path. ``crc``, ``position`` (where
    it was read from, -1 if built) and ``size_in_bytes`` describe the encoded form and take no part
    in equality.
    """

    base_offset: int
    records: list[Record]
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    attributes: int = 0
    last_offset_delta: int = 0
    base_timestamp: int = -1
    max_timestamp: int = -1
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE
    crc: int = 0
    position: int = -1
    size_in_bytes: int = 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordBatch) and self[:10] == other[:10]

    def __ne__(self, other: object) -> bool:
        return not self == other

    @property
    def magic(self) -> int:
        return MAGIC

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_FLAG else (
            TimestampType.CREATE_TIME)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_FLAG)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1


def make_attributes(*, compression: Compression = Compression.NONE,
                    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                    transactional: bool = False, control: bool = False,
                    delete_horizon: bool = False) -> int:
    """The int16 attributes word from its parts."""
    return (int(compression) | (TIMESTAMP_TYPE_FLAG if timestamp_type else 0)
            | (TRANSACTIONAL_FLAG if transactional else 0) | (CONTROL_FLAG if control else 0)
            | (DELETE_HORIZON_FLAG if delete_horizon else 0))


def _compress(codec: Compression, data: bytes) -> bytes:
    if codec is Compression.NONE:
        return data
    if codec is Compression.GZIP:
        return gzip.compress(data, mtime=0)
    raise EncodeError(f"writing {codec.name.lower()} batches is not supported (KRaft writes none)")


MAX_DECOMPRESSED_SIZE: Final = 256 * 1024 * 1024
"""Refuse batches that inflate beyond this, so that a hostile file cannot exhaust memory."""


def _gunzip(blob: bytes) -> bytes:
    """gzip members back to back, bounded in size; like Java's GZIPInputStream, bytes after a member
    that do not start another member are ignored."""
    out = bytearray()
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out += inflater.decompress(blob, MAX_DECOMPRESSED_SIZE + 1 - len(out))
        if len(out) > MAX_DECOMPRESSED_SIZE:
            raise ValueError(f"records inflate beyond {MAX_DECOMPRESSED_SIZE} bytes")
        if not inflater.eof:
            raise ValueError("gzip stream is truncated")
        blob = inflater.unused_data
        if blob[:2] != b"\x1f\x8b":
            return bytes(out)


def _zstd_decoder(module: Any) -> Callable[[bytes], bytes]:
    return lambda blob: bytes(module.ZstdDecompressor().decompressobj().decompress(blob))


def _lz4_decoder(module: Any) -> Callable[[bytes], bytes]:
    return lambda blob: bytes(module.decompress(blob))


def _snappy_decoder(module: Any) -> Callable[[bytes], bytes]:
    return lambda blob: _unframe_xerial_snappy(blob, module)


_OPTIONAL_CODECS: Final = {
    Compression.SNAPPY: ("snappy", "python-snappy", _snappy_decoder),
    Compression.LZ4: ("lz4.frame", "lz4", _lz4_decoder),
    Compression.ZSTD: ("zstandard", "zstandard", _zstd_decoder),
}


def _decoder(codec: int, where: str, offset: int) -> Callable[[bytes], bytes]:
    """The decompressor of a codec id; snappy, lz4 and zstd need their PyPI module."""
    if codec == Compression.GZIP:
        return _gunzip
    if codec not in _OPTIONAL_CODECS:
        raise CorruptRecordError(f"unknown compression type {codec}", what=where, path="attributes",
                                 offset=offset + 21)
    module_name, package, make = _OPTIONAL_CODECS[Compression(codec)]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise UnsupportedCompressionError(
            f"batch is {Compression(codec).name.lower()}-compressed; install {package} to read it",
            what=where, path="attributes", offset=offset + 21) from None
    return make(module)


def _decompress(codec: int, blob: bytes, where: str, offset: int) -> bytes:
    decode = _decoder(codec, where, offset)
    try:
        return decode(blob)
    except Exception as exc:  # each codec library raises its own exception types
        raise CorruptRecordError(f"cannot decompress records: {exc}", what=where, path="records",
                                 offset=offset + BATCH_HEADER_SIZE) from None


_XERIAL_MAGIC: Final = b"\x82SNAPPY\x00"


def _unframe_xerial_snappy(blob: bytes, snappy: Any) -> bytes:
    """Kafka's snappy batches use the xerial stream framing: 16-byte header, then int32-sized blocks."""
    if not blob.startswith(_XERIAL_MAGIC):
        return bytes(snappy.uncompress(blob))
    out = bytearray()
    pos = 16
    while pos < len(blob):
        (size,) = struct.unpack_from(">i", blob, pos)
        pos += 4
        if size < 0 or pos + size > len(blob):
            raise ValueError(f"snappy block of {size} bytes overruns the batch")
        out += snappy.uncompress(blob[pos:pos + size])
        pos += size
    return bytes(out)


# A record inside a batch (uncompressed, or inside the decompressed blob), zig-zag varints:
#   Length          varint   bytes that follow
#   Attributes      int8     unused, 0
#   TimestampDelta  varlong  relative to BaseTimestamp
#   OffsetDelta     varint   relative to BaseOffset
#   KeyLength       varint   -1 = null, then the key bytes
#   ValueLength     varint   -1 = null, then the value bytes
#   HeadersCount    varint   then per header: key length varint + UTF-8 key,
#                            value length varint (-1 = null) + value bytes
class _RecordError(Exception):
    """Internal: a record field that fails a check, at a position inside the records buffer."""

    def __init__(self, reason: str, field_name: str, pos: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field_name = field_name
        self.pos = pos


def _decode_headers(buf: bytes, pos: int, end: int, count: int) -> tuple[tuple[Header, ...], int]:
    headers: list[Header] = []
    for index in range(count):
        start = pos
        key_size, pos = read_varint(buf, pos)
        if key_size < 0 or pos + key_size > end:
            raise _RecordError(f"header key length {key_size} is invalid", f"headers[{index}].key", start)
        try:
            key = buf[pos:pos + key_size].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _RecordError(f"header key is not UTF-8 ({exc.reason})", f"headers[{index}].key",
                               pos) from None
        pos += key_size
        start = pos
        value_size, pos = read_varint(buf, pos)
        value: bytes | None = None
        if value_size >= 0:
            if pos + value_size > end:
                raise _RecordError(f"header value length {value_size} overruns the record",
                                   f"headers[{index}].value", start)
            value = buf[pos:pos + value_size]
            pos += value_size
        headers.append(Header(key, value))
    return tuple(headers), pos


def decode_records(buf: bytes, pos: int, end: int, count: int, base_offset: int,
                   base_timestamp: int) -> tuple[list[Record], int]:
    """Decode ``count`` records from ``buf[pos:end]``; return them and the position after the last.

    Varints of one or two bytes (values below 8192) are decoded inline, which covers almost every
    length in a metadata log. Raises ``_RecordError`` naming the record and field.
    """
    records: list[Record] = []
    append = records.append
    new = _new_record
    record_cls = Record
    no_headers: tuple[Header, ...] = ()
    try:
        for _ in range(count):
            start = pos
            b = buf[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                b = (b & 0x7F) | (buf[pos + 1] << 7)
                length = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                length, pos = read_varint(buf, pos)
            record_end = pos + length
            if length <= 0 or record_end > end:
                raise _RecordError(f"record length {length} does not fit in the {end - pos} bytes left",
                                   "length", start)
            attributes = buf[pos]
            b = buf[pos + 1]
            if b < 0x80:
                timestamp_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                timestamp_delta, pos = read_varlong(buf, pos + 1)
            b = buf[pos]
            if b < 0x80:
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                offset_delta, pos = read_varint(buf, pos)
            b = buf[pos]
            if b == 1:
                key = None
                pos += 1
            else:
                field_start = pos
                if b < 0x80:
                    size = (b >> 1) ^ -(b & 1)
                    pos += 1
                else:
                    size, pos = read_varint(buf, pos)
                if size < 0:
                    key = None
                elif pos + size > record_end:
                    raise _RecordError(f"key length {size} overruns the record", "key", field_start)
                else:
                    key = buf[pos:pos + size]
                    pos += size
            field_start = pos
            b = buf[pos]
            if b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                b = (b & 0x7F) | (buf[pos + 1] << 7)
                size = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                size, pos = read_varint(buf, pos)
            if size < 0:
                value = None
            elif pos + size > record_end:
                raise _RecordError(f"value length {size} overruns the record", "value", field_start)
            else:
                value = buf[pos:pos + size]
                pos += size
            if buf[pos] == 0:
                headers = no_headers
                pos += 1
            else:
                field_start = pos
                header_count, pos = read_varint(buf, pos)
                if header_count < 0 or header_count > record_end - pos:
                    raise _RecordError(f"header count {header_count} is impossible", "headers",
                                       field_start)
                headers, pos = _decode_headers(buf, pos, record_end, header_count)
            if pos != record_end:
                used = pos - record_end + length
                raise _RecordError(f"record declares {length} bytes but its fields take {used}",
                                   "length", start)
            append(new(record_cls, (base_offset + offset_delta, base_timestamp + timestamp_delta, key,
                                    value, headers, attributes)))
    except _RecordError as exc:
        exc.field_name = f"records[{len(records)}].{exc.field_name}"
        raise
    except IndexError:
        raise _RecordError(f"records end inside record {len(records)} of {count}",
                           f"records[{len(records)}]", end) from None
    except DecodeError as exc:
        raise _RecordError(exc.reason, f"records[{len(records)}]", exc.offset) from None
    return records, pos


# Record batch v2, big-endian, byte offsets from the start of the batch:
#    0  int64   BaseOffset            offset of the first record
#    8  int32   Length                bytes after this field (batch size - 12)
#   12  int32   PartitionLeaderEpoch  epoch of the leader that wrote it; -1 = none
#   16  int8    Magic                 2
#   17  uint32  CRC                   CRC-32C of bytes 21..end
#   21  int16   Attributes            bits 0-2 compression, 3 timestamp type, 4 transactional,
#                                     5 control, 6 delete horizon
#   23  int32   LastOffsetDelta
#   27  int64   BaseTimestamp
#   35  int64   MaxTimestamp
#   43  int64   ProducerId            -1 = none
#   51  int16   ProducerEpoch         -1 = none
#   53  int32   BaseSequence          -1 = none
#   57  int32   RecordsCount
#   61  ...     Records (compressed as one blob when bits 0-2 are set)
PREFIX: Final = struct.Struct(">qi")  # bytes 0-11: what a reader needs to take the whole batch
HEADER: Final = struct.Struct(">qiibIhiqqqhii")  # bytes 0-60
_CRC: Final = struct.Struct(">I")  # bytes 17-20, filled in last by the encoder

_new_record = tuple.__new__
_unpack_header = HEADER.unpack_from


def decode_batch_at(buf: bytes, pos: int, end: int, position: int, what: str,
                    verify_crc: bool = True) -> RecordBatch:
    """Decode the batch occupying ``buf[pos:end]`` in place (the length field is already checked
    against ``end``). ``position`` is where it starts in its file, ``what`` names the file."""
    size = end - pos
    (base_offset, _, leader_epoch, magic, crc, attributes, last_offset_delta, base_timestamp,
     max_timestamp, producer_id, producer_epoch, base_sequence, count) = _unpack_header(buf, pos)
    if magic != MAGIC:
        raise CorruptRecordError(f"magic byte is {magic}, only 2 is supported", what=what,
                                 path="magic", offset=position + 16)
    if verify_crc:
        actual = crc32c(memoryview(buf)[pos + CRC_START:end])
        if actual != crc:
            raise CorruptRecordError(f"CRC-32C is 0x{actual:08x} but the batch says 0x{crc:08x}",
                                     what=what, path="crc", offset=position + 17)
    if count < 0:
        raise CorruptRecordError(f"record count {count} is negative", what=what, path="records_count",
                                 offset=position + 57)
    codec = attributes & COMPRESSION_MASK
    start = pos + BATCH_HEADER_SIZE
    if codec:
        buf = _decompress(codec, buf[start:end], what, position)
        start = 0
        end = len(buf)
    if count > end - start:
        raise CorruptRecordError(f"record count {count} exceeds the {end - start} bytes of records",
                                 what=what, path="records_count", offset=position + 57)
    try:
        records, consumed = decode_records(buf, start, end, count, base_offset, base_timestamp)
        if consumed != end:
            raise _RecordError(f"{end - consumed} bytes follow the last of the {count} records",
                               "records", consumed)
    except _RecordError as exc:
        if codec:
            raise CorruptRecordError(f"{exc.reason} (at byte {exc.pos} of the decompressed records)",
                                     what=what, path=exc.field_name,
                                     offset=position + BATCH_HEADER_SIZE) from None
        raise CorruptRecordError(exc.reason, what=what, path=exc.field_name,
                                 offset=position + exc.pos - pos) from None
    return _new_record(RecordBatch, (base_offset, records, leader_epoch, attributes, last_offset_delta,
                                     base_timestamp, max_timestamp, producer_id, producer_epoch,
                                     base_sequence, crc, position, size))


def decode_batch_bytes(data: bytes, *, position: int = 0, what: str = "record batch",
                       verify_crc: bool = True) -> RecordBatch:
    """Decode one complete batch held in ``data`` (exactly one batch, nothing after it)."""
    if len(data) < BATCH_HEADER_SIZE:
        raise CorruptRecordError(f"batch of {len(data)} bytes is shorter than the {BATCH_HEADER_SIZE}-byte "
                                 "header", what=what, path="length", offset=position + 8)
    length = PREFIX.unpack_from(data, 0)[1]
    if length != len(data) - LOG_OVERHEAD:
        raise CorruptRecordError(f"length field says {length} but the batch holds {len(data) - LOG_OVERHEAD}",
                                 what=what, path="length", offset=position + 8)
    return decode_batch_at(data, 0, len(data), position, what, verify_crc)


def _encode_bytes_field(out: bytearray, data: bytes | None) -> None:
    if data is None:
        out.append(1)
    else:
        write_varint(out, len(data))
        out += data


def encode_records(records: list[Record], base_offset: int, base_timestamp: int) -> bytearray:
    """The records section of a batch, uncompressed."""
    out = bytearray()
    body = bytearray()
    for record in records:
        body.clear()
        body.append(record.attributes)
        write_varlong(body, record.timestamp - base_timestamp)
        write_varint(body, record.offset - base_offset)
        _encode_bytes_field(body, record.key)
        _encode_bytes_field(body, record.value)
        write_varint(body, len(record.headers))
        for header in record.headers:
            key = header.key.encode("utf-8")
            write_varint(body, len(key))
            body += key
            _encode_bytes_field(body, header.value)
        write_varint(out, len(body))
        out += body
    return out


def encode_batch(batch: RecordBatch) -> bytes:
    """The exact bytes of ``batch``: header, records (compressed per its attributes) and CRC-32C."""
    try:
        records = encode_records(batch.records, batch.base_offset, batch.base_timestamp)
        out = bytearray(BATCH_HEADER_SIZE)
        out += _compress(Compression(batch.attributes & COMPRESSION_MASK), bytes(records))
        HEADER.pack_into(out, 0, batch.base_offset, len(out) - LOG_OVERHEAD, batch.partition_leader_epoch,
                         MAGIC, 0, batch.attributes, batch.last_offset_delta, batch.base_timestamp,
                         batch.max_timestamp, batch.producer_id, batch.producer_epoch,
                         batch.base_sequence, len(batch.records))
    except (struct.error, ValueError, UnicodeEncodeError, OverflowError) as exc:
        raise EncodeError(f"record batch at offset {batch.base_offset} cannot be encoded: {exc}") from None
    _CRC.pack_into(out, 17, crc32c(memoryview(out)[CRC_START:]))
    return bytes(out)
