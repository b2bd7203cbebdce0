"""Malformed input: torn tails are reported, everything else raises a typed error that says where."""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import random
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError, DecodeError, KafkaAdminError
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    BatchReader,
    Compression,
    Header,
    Record,
    RecordBatch,
    UnsupportedCompressionError,
    control_batch,
    data_batch,
    decode_batch_bytes,
    decode_batches,
    decode_control_batch,
    decode_metadata_batch,
    decode_metadata_record,
    encode_batch,
    make_attributes,
    metadata_batches,
)
from unit.records.records_testlib import fix_crc, hand_batch, hx

T = 1_700_000_000_000


def _three_batches() -> list[bytes]:
    noop = ApiMessageAndVersion(messages.NoOpRecord(), 0)
    level = ApiMessageAndVersion(messages.FeatureLevelRecord(name="metadata.version", feature_level=21), 0)
    return [encode_batch(control_batch(0, 1, T, [messages.LeaderChangeMessage(version=0, leader_id=1)])),
            encode_batch(metadata_batches(1, 1, T, [noop, level])[0]),
            encode_batch(metadata_batches(3, 1, T, [level] * 3)[0])]


@pytest.fixture
def segment(tmp_path: Path) -> tuple[Path, list[bytes]]:
    batches = _three_batches()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    return path, batches


def test_every_torn_tail_is_reported_not_raised(segment: tuple[Path, list[bytes]]) -> None:
    path, batches = segment
    whole = b"".join(batches)
    valid_end = len(batches[0]) + len(batches[1])
    for cut in range(valid_end + 1, len(whole)):
        path.write_bytes(whole[:cut])
        with BatchReader.open(path) as reader:
            assert [batch.base_offset for batch in reader] == [0, 1]
            assert reader.position == valid_end
            assert reader.torn_tail is not None
            assert reader.torn_tail.valid_end == valid_end
            assert reader.torn_tail.file_end == cut
            assert ("prefix bytes" in reader.torn_tail.reason) is (cut - valid_end < 12)


def test_torn_tail_raises_where_files_are_written_whole(segment: tuple[Path, list[bytes]]) -> None:
    path, batches = segment
    path.write_bytes(b"".join(batches)[:-5])
    with BatchReader.open(path, allow_torn_tail=False) as reader, pytest.raises(CorruptRecordError) as info:
        list(reader)
    assert info.value.what == str(path)
    assert info.value.offset == len(batches[0]) + len(batches[1])


def _corrupt(path: Path, batches: list[bytes], index: int, at: int, data: bytes) -> int:
    """Overwrite bytes of batch ``index`` at ``at``; return the batch's file position."""
    position = sum(len(batch) for batch in batches[:index])
    raw = bytearray(b"".join(batches))
    raw[position + at:position + at + len(data)] = data
    path.write_bytes(bytes(raw))
    return position


@pytest.mark.parametrize(("at", "data", "field", "delta", "text"), [
    (30, b"\xff", "crc", 17, "CRC-32C"),                     # a flipped byte inside the checksummed part
    (17, b"\x00\x00\x00\x00", "crc", 17, "CRC-32C"),         # the stored CRC itself
    (16, b"\x01", "magic", 16, "magic byte is 1"),
    (8, struct.pack(">i", -1), "length", 8, "batch length -1"),
    (8, struct.pack(">i", 10), "length", 8, "batch length 10"),
    (8, struct.pack(">i", 0x7FFFFFF0), "length", 8, "outside"),
])
def test_bad_batches_name_file_position_and_field(segment: tuple[Path, list[bytes]], at: int, data: bytes,
                                                  field: str, delta: int, text: str) -> None:
    path, batches = segment
    position = _corrupt(path, batches, 1, at, data)
    with BatchReader.open(path) as reader, pytest.raises(CorruptRecordError) as info:
        list(reader)
    error = info.value
    assert error.what == str(path)
    assert field in error.path
    assert error.offset == position + delta
    assert text in error.reason
    assert str(path) in str(error) and f"at byte {position + delta}" in str(error)


def test_impossible_length_in_the_last_batch_is_corruption_not_a_torn_tail(
        segment: tuple[Path, list[bytes]]) -> None:
    path, batches = segment
    _corrupt(path, batches, 2, 8, struct.pack(">i", -5))
    with BatchReader.open(path) as reader, pytest.raises(CorruptRecordError, match="batch length -5"):
        list(reader)


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


@pytest.mark.parametrize(("value", "text"), [
    (hx("00 14 00 00"), "frame version is 0"),
    (hx("02 14 00 00"), "frame version is 2"),
    (hx("01"), "buffer ends"),
    (hx("01 ff ff ff ff ff 00"), "varint longer than 5 bytes"),
    (hx("01 80 80 02 00"), "api key 32768 does not fit in an int16"),
    (hx("01 14 00 00 00"), "1 bytes follow the NoOpRecord v0 body"),
    (None, "null"),
])
def test_bad_metadata_frames(value: bytes | None, text: str) -> None:
    with pytest.raises(CorruptRecordError, match=text):
        decode_metadata_record(value)


def test_bad_metadata_body_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="FeatureLevelRecord"):
        decode_metadata_record(hx("01 0c 00 11 6d65"))


def test_typed_batch_errors_name_file_batch_and_offset() -> None:
    batch = decode_batch_bytes(encode_batch(data_batch(40, 1, T, [hx("01 14 00 00"), hx("00 14 00 00")])),
                               position=900)
    with pytest.raises(CorruptRecordError) as info:
        decode_metadata_batch(batch, what="/x/00000000000000000040.log")
    assert info.value.what == "/x/00000000000000000040.log"
    assert info.value.offset == 900
    assert "record at offset 41" in info.value.reason
    control = decode_batch_bytes(encode_batch(data_batch(50, 1, T, [b"\x00"])))
    with pytest.raises(CorruptRecordError, match="record at offset 50"):
        decode_control_batch(control, what="f")


# ------------------------------------------------------------------------------------------- fuzzing


def _corpus() -> list[bytes]:
    batches = _three_batches()
    voters = messages.VotersRecord(version=0, voters=[messages.VotersRecord.Voter(
        voter_id=1, endpoints=[messages.VotersRecord.Endpoint(name="C", host="h", port=1)])])
    batches.append(encode_batch(control_batch(6, 1, T, [
        messages.SnapshotHeaderRecord(version=0), messages.KRaftVersionRecord(version=0, k_raft_version=1),
        voters, messages.SnapshotFooterRecord(version=0)])))
    batches.append(encode_batch(RecordBatch(
        base_offset=10, records=[Record(10, T, b"key", b"value", (Header("h", b"v"),))],
        attributes=make_attributes(compression=Compression.GZIP), base_timestamp=T, max_timestamp=T)))
    return [b"".join(batches), *batches]


def _consume(data: bytes, verify_crc: bool) -> None:
    for batch in BatchReader(io.BytesIO(data), start=0, verify_crc=verify_crc):
        if batch.is_control:
            decode_control_batch(batch)
        else:
            decode_metadata_batch(batch)


def _mutate(rng: random.Random, data: bytes) -> bytes:
    raw = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        spot = rng.randrange(len(raw) or 1)
        if kind < 0.5 and raw:
            raw[spot] = rng.randrange(256)
        elif kind < 0.65:
            raw[spot:spot] = rng.randbytes(rng.randint(1, 8))
        elif kind < 0.8:
            del raw[spot:spot + rng.randint(1, 8)]
        elif kind < 0.9:
            del raw[spot:]
        elif raw:
            raw[spot] ^= 1 << rng.randrange(8)
    return bytes(raw)


def test_fuzzed_files_raise_only_project_errors() -> None:
    rng = random.Random(20240601)
    corpus = _corpus()
    deadline = time.monotonic() + 3.0
    runs = 0
    while time.monotonic() < deadline or runs < 2000:
        original = rng.choice(corpus)
        mutant = _mutate(rng, original)
        if rng.random() < 0.7 and len(mutant) >= 21:
            mutant = fix_crc(mutant)  # reach the record and value parsers, not just the CRC check
        for verify_crc in (True, False):
            with contextlib.suppress(KafkaAdminError):
                _consume(mutant, verify_crc)
        runs += 1
    assert runs >= 2000


def test_fuzzed_values_raise_only_project_errors() -> None:
    rng = random.Random(7)
    values = [bytes([1, key, 0]) + rng.randbytes(rng.randint(0, 40))
              for key in (0, 2, 3, 12, 20, 23, 24, 25, 27)]
    deadline = time.monotonic() + 1.0
    runs = 0
    while time.monotonic() < deadline or runs < 2000:
        value = _mutate(rng, rng.choice(values))
        key = rng.randbytes(4)
        with contextlib.suppress(KafkaAdminError):
            decode_metadata_record(value)
        with contextlib.suppress(KafkaAdminError):
            decode_control_batch(RecordBatch(base_offset=0, records=[Record(0, 0, key, value)],
                                             attributes=make_attributes(control=True)))
        runs += 1
    assert runs >= 2000


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
