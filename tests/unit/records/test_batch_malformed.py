"""Malformed batches and records: every inconsistency raises a typed error that names the field and
the byte; compressed batches decode, and broken or oversized ones are corruption."""

from __future__ import annotations

import gzip
import importlib.util
import struct
from typing import Any

import pytest

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records import (
    Compression,
    Header,
    Record,
    RecordBatch,
    UnsupportedCompressionError,
    decode_batch_bytes,
    decode_batches,
    encode_batch,
    make_attributes,
)
from unit.records.records_testlib import T, fix_crc, hand_batch, hx


def _one_record_batch(record: bytes) -> bytes:
    return hand_batch(base_offset=0, epoch=0, attributes=0, last_offset_delta=0, timestamp=T,
                      records=[record])


@pytest.mark.parametrize(("record", "field", "at", "text"), [
    (hx("7f"), "records[0].length", 61, "record length -64"),
    (hx("0a 00 00 00 01 01"), "records[0]", 67, "records end inside record 0"),  # no HeadersCount byte
    (hx("0e 00 00 00 10 01 00 00"), "records[0].key", 65, "key length 8 overruns"),
    (hx("0e 00 00 00 01 10 00 00"), "records[0].value", 66, "value length 8 overruns"),
    (hx("0c 00 ffffffffffffffffffffff"), "records[0]", 63, "varlong longer than 10 bytes"),
    (hx("12 00 00 00 01 01 02 02 ff 01"), "records[0].headers[0].key", 69, "not UTF-8"),
    (hx("0e 00 00 00 01 01 03 00"), "records[0].headers", 67, "header count -2"),
    (hx("0e 00 00 00 01 01 00 00"), "records[0].length", 61, "declares 7 bytes but its fields take 6"),
    (hx("0c 00 00 00 01 01 00 77"), "records", 68, "1 bytes follow the last of the 1 records"),
])
def test_bad_records_name_the_record_field_and_byte(record: bytes, field: str, at: int, text: str) -> None:
    with pytest.raises(CorruptRecordError) as info:
        decode_batches(_one_record_batch(record), what="segment.log")
    assert info.value.what == "segment.log"
    assert info.value.path == field
    assert info.value.offset == at
    assert text in info.value.reason


def test_record_count_beyond_the_batch() -> None:
    data = _one_record_batch(hx("0c 00 00 00 01 01 00"))
    data = fix_crc(data[:57] + struct.pack(">i", 100) + data[61:])
    with pytest.raises(CorruptRecordError, match="record count 100 exceeds"):
        decode_batch_bytes(data)
    data = fix_crc(data[:57] + struct.pack(">i", -1) + data[61:])
    with pytest.raises(CorruptRecordError, match="record count -1 is negative"):
        decode_batch_bytes(data)


def test_gzip_batches_decode_and_bad_gzip_is_corruption() -> None:
    records = [Record(7, T, b"k", b"v" * 50, (Header("h", None),)), Record(8, T + 1, None, b"x")]
    batch = RecordBatch(base_offset=7, records=records,
                        attributes=make_attributes(compression=Compression.GZIP),
                        last_offset_delta=1, base_timestamp=T, max_timestamp=T + 1)
    data = encode_batch(batch)
    blob = gzip.decompress(data[61:])
    assert blob[0] == 0x78  # first record length 60: the payload really is gzip of the records
    assert decode_batch_bytes(data) == batch
    broken = fix_crc(data[:70] + bytes(len(data) - 70))
    with pytest.raises(CorruptRecordError, match="cannot decompress"):
        decode_batch_bytes(broken)


@pytest.mark.parametrize(("codec", "module"), [(2, "snappy"), (3, "lz4"), (4, "zstandard")])
def test_other_codecs_need_their_module(codec: int, module: str) -> None:
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed")
    data = hand_batch(base_offset=0, epoch=0, attributes=codec, last_offset_delta=0, timestamp=T,
                      records=[b"\x00" * 8])
    with pytest.raises(UnsupportedCompressionError, match="install") as info:
        decode_batch_bytes(data)
    assert info.value.offset == 21


def test_unknown_codec_is_corruption() -> None:
    data = hand_batch(base_offset=0, epoch=0, attributes=5, last_offset_delta=0, timestamp=T, records=[b"x"])
    with pytest.raises(CorruptRecordError, match="unknown compression type 5"):
        decode_batch_bytes(data)


# ------------------------------------------------------------------------------------------- fuzzing


def test_gzip_members_and_bombs(monkeypatch: pytest.MonkeyPatch) -> None:
    records = [Record(0, T, None, b"z" * 5000)]
    gzip_attributes = make_attributes(compression=Compression.GZIP)
    batch = RecordBatch(base_offset=0, records=records, attributes=gzip_attributes, base_timestamp=T,
                        max_timestamp=T)
    data = encode_batch(batch)
    plain = gzip.decompress(data[61:])
    blob = gzip.compress(plain[:100]) + gzip.compress(plain[100:]) + b"trailing junk"
    two_members = fix_crc(data[:8] + struct.pack(">i", 49 + len(blob)) + data[12:61] + blob)
    assert decode_batch_bytes(two_members) == batch
    monkeypatch.setattr("kafka_admin_kraft.records.batch.MAX_DECOMPRESSED_SIZE", 4096)
    with pytest.raises(CorruptRecordError, match="inflate beyond 4096 bytes"):
        decode_batch_bytes(data)


def _xerial_snappy(snappy: Any, data: bytes) -> bytes:
    """Kafka's snappy stream framing: magic, version 1, compatible 1, then int32-sized blocks."""
    half = len(data) // 2
    blocks = [snappy.compress(data[:half]), snappy.compress(data[half:])]
    return b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + b"".join(
        struct.pack(">i", len(block)) + block for block in blocks)


@pytest.mark.parametrize(("codec", "module"), [(2, "snappy"), (3, "lz4.frame"), (4, "zstandard")])
def test_other_codecs_decode_when_their_module_is_installed(codec: int, module: str) -> None:
    library = pytest.importorskip(module)
    records = [Record(3, T, None, b"value %d" % i * 20) for i in range(5)]
    records = [record._replace(offset=3 + i) for i, record in enumerate(records)]
    plain = gzip.decompress(encode_batch(RecordBatch(
        base_offset=3, records=records, attributes=make_attributes(compression=Compression.GZIP),
        last_offset_delta=4, base_timestamp=T, max_timestamp=T))[61:])
    blob = {2: lambda: _xerial_snappy(library, plain), 3: lambda: library.compress(plain),
            4: lambda: library.ZstdCompressor(write_content_size=False).compress(plain)}[codec]()
    data = hand_batch(base_offset=3, epoch=0, attributes=codec, last_offset_delta=4, timestamp=T,
                      records=[blob])
    data = fix_crc(data[:57] + struct.pack(">i", 5) + data[61:])
    assert decode_batch_bytes(data).records == records
    broken = fix_crc(data[:70] + b"\xff" * (len(data) - 70))
    with pytest.raises(CorruptRecordError, match="cannot decompress"):
        decode_batch_bytes(broken)
