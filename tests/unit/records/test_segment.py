"""Log segments with their indexes, and crash recovery."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records import (
    SegmentWriter,
    data_batch,
    encode_batch,
    read_offset_index,
    read_time_index,
    recover_segment,
)
from kafka_admin_kraft.records.segment import log_file_name, parse_log_file_name
from unit.records.records_testlib import T


def _batch(offset: int, size: int, timestamp: int) -> bytes:
    """A one-record KRaft batch of exactly ``size`` bytes (record = value + 9 bytes for 64..8000)."""
    data = encode_batch(data_batch(offset, 1, timestamp, [b"v" * (size - 70)]))
    assert len(data) == size
    return data


def test_segment_file_names() -> None:
    assert log_file_name(0) == "00000000000000000000.log"
    assert log_file_name(1234) == "00000000000000001234.log"
    assert parse_log_file_name("00000000000000001234.log") == 1234
    for name in ("00000000000000001234.log.deleted", "1234.log", "00000000000000001234.index"):
        assert parse_log_file_name(name) is None


def test_indexes_follow_kafkas_interval_rule(tmp_path: Path) -> None:
    # 1000-byte batches, one record each: more than 4096 bytes have been appended since the last
    # entry when batch 5 starts (5000 bytes), so entries go to batches 5, 10, 15, 20.
    with SegmentWriter(tmp_path, 0) as writer:
        for i in range(23):
            assert writer.append(_batch(i, 1000, T + i)) == 1000 * i
    assert read_offset_index(tmp_path / "00000000000000000000.index") == [
        (5, 5000), (10, 10000), (15, 15000), (20, 20000)]
    # The time index gets the largest timestamp so far at each entry, and the clean close adds the last.
    assert read_time_index(tmp_path / "00000000000000000000.timeindex") == [
        (T + 5, 5), (T + 10, 10), (T + 15, 15), (T + 20, 20), (T + 22, 22)]
    raw = (tmp_path / "00000000000000000000.index").read_bytes()
    assert raw[:8] == struct.pack(">ii", 5, 5000)
    assert (tmp_path / "00000000000000000000.timeindex").read_bytes()[:12] == struct.pack(">qi", T + 5, 5)


def test_interval_is_strictly_greater_than(tmp_path: Path) -> None:
    # 4096-byte batches: after one batch exactly 4096 bytes are pending, which is not more than 4096.
    with SegmentWriter(tmp_path, 100) as writer:
        for i in range(7):
            writer.append(_batch(100 + i, 4096, T))
    assert read_offset_index(tmp_path / "00000000000000000100.index") == [
        (2, 8192), (4, 16384), (6, 24576)]
    # Equal timestamps: the largest timestamp stays the first batch's (T at relative offset 0); only
    # the first entry is newer than "nothing" (-1), and the close adds nothing.
    assert read_time_index(tmp_path / "00000000000000000100.timeindex") == [(T, 0)]


def test_reopened_segment_continues_like_kafka(tmp_path: Path) -> None:
    with SegmentWriter(tmp_path, 0) as writer:
        for i in range(7):
            writer.append(_batch(i, 1000, T + i))
    with SegmentWriter(tmp_path, 0) as writer:
        assert writer.next_offset == 7 and writer.size == 7000
        with pytest.raises(ValueError, match="below the next offset"):
            writer.append(_batch(6, 1000, T))
        for i in range(7, 14):
            writer.append(_batch(i, 1000, T + i))
    # First session: entry at batch 5, close entry (T+6, 6). Second session counts from zero again:
    # entry at batch 12 (5000 bytes after the reopen), close entry (T+13, 13).
    assert read_offset_index(tmp_path / "00000000000000000000.index") == [(5, 5000), (12, 12000)]
    assert read_time_index(tmp_path / "00000000000000000000.timeindex") == [
        (T + 5, 5), (T + 6, 6), (T + 12, 12), (T + 13, 13)]


def test_recovery_truncates_a_torn_tail_and_rebuilds_the_indexes(tmp_path: Path) -> None:
    with SegmentWriter(tmp_path, 0) as writer:
        for i in range(23):
            writer.append(_batch(i, 1000, T + i))
    files = {name: (tmp_path / name).read_bytes() for name in (
        "00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex")}
    log = tmp_path / "00000000000000000000.log"
    with open(log, "ab") as stream:
        stream.write(_batch(23, 1000, T + 23)[:700])
    (tmp_path / "00000000000000000000.index").write_bytes(b"\0" * 80)  # stale preallocated index
    result = recover_segment(log)
    assert (result.valid_bytes, result.truncated_bytes, result.next_offset) == (23000, 700, 23)
    assert "declares 988 bytes" in result.reason
    for name, data in files.items():
        assert (tmp_path / name).read_bytes() == data, name


def test_recovery_cuts_at_the_first_bad_batch(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(b"".join(_batch(i, 1000, T + i) for i in range(10)))
    raw = bytearray(log.read_bytes())
    raw[3000 + 500] ^= 0xFF
    log.write_bytes(bytes(raw))
    result = recover_segment(log)
    assert (result.valid_bytes, result.truncated_bytes, result.next_offset) == (3000, 7000, 3)
    assert "CRC-32C" in result.reason and "at byte 3017" in result.reason
    assert log.stat().st_size == 3000
    assert recover_segment(log).truncated_bytes == 0


def test_recovery_refuses_offsets_that_go_backwards(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_batch(5, 1000, T) + _batch(3, 1000, T))
    with pytest.raises(CorruptRecordError, match="below the previous batch"):
        recover_segment(log)
    assert log.stat().st_size == 2000
