"""Malformed files: torn tails are reported, everything else raises a typed error that names the file
and the byte."""

from __future__ import annotations

import contextlib
import io
import random
import struct
import time
from pathlib import Path

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError, KafkaAdminError
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    BatchReader,
    Compression,
    Header,
    Record,
    RecordBatch,
    control_batch,
    decode_control_batch,
    decode_metadata_batch,
    encode_batch,
    make_attributes,
    metadata_batches,
)
from unit.records.records_testlib import T, fix_crc, mutate


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


def test_fuzzed_files_raise_only_project_errors() -> None:
    rng = random.Random(20240601)
    corpus = _corpus()
    deadline = time.monotonic() + 3.0
    runs = 0
    while time.monotonic() < deadline or runs < 2000:
        original = rng.choice(corpus)
        mutant = mutate(rng, original)
        if rng.random() < 0.7 and len(mutant) >= 21:
            mutant = fix_crc(mutant)  # reach the record and value parsers, not just the CRC check
        for verify_crc in (True, False):
            with contextlib.suppress(KafkaAdminError):
                _consume(mutant, verify_crc)
        runs += 1
    assert runs >= 2000
