"""FileReplicatedLog and FileQuorumStateStore: Kafka's files, appends, reads, truncation, snapshots,
retention, recovery after a crash."""

from __future__ import annotations

import os
import shutil
import struct
import tracemalloc
from pathlib import Path

import pytest

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.records import (
    BatchReader,
    RecordBatch,
    SnapshotId,
    decode_batches,
    encode_batch,
    list_segments,
    read_offset_index,
    read_snapshot,
    read_time_index,
    recover_segment,
)
from kafka_admin_kraft.storage import (
    EpochEntry,
    InitialController,
    QuorumState,
    StorageFormatError,
    read_leader_epoch_checkpoint,
    write_bootstrap_snapshot,
    write_leader_epoch_checkpoint,
)
from kafka_admin_kraft_server import storage as storage_module
from kafka_admin_kraft_server.storage import (
    FileQuorumStateStore,
    FileReplicatedLog,
    OffsetOutOfRangeError,
    StorageError,
    scan_batch_headers,
)
from unit.reference_server.server_testlib import (
    DIR_IDS,
    leader_change_batch,
    noop_batch,
    snapshot_batches,
    snapshot_bytes,
    value_batch,
)

PARTITION = "__cluster_metadata-0"


@pytest.fixture(autouse=True)
def _fast_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """fsync costs milliseconds on some disks and proves nothing here: crashes are simulated by cutting
    files, not by power loss."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def fill(log: FileReplicatedLog, epochs: list[int], sizes: tuple[int, ...] = (40, 40)) -> list[RecordBatch]:
    """Append one batch per entry of ``epochs``; return them."""
    batches = []
    for epoch in epochs:
        batch = value_batch(log.end_offset(), epoch, list(sizes))
        log.append(batch)
        batches.append(batch)
    return batches


def log_bytes(log: FileReplicatedLog) -> bytes:
    """The log read back through read() from its start, one call per batch."""
    out = b""
    offset = log.start_offset()
    while offset < log.end_offset():
        chunk = log.read(offset, 1)
        assert chunk
        batch = decode_batches(chunk)[-1]
        out += chunk
        offset = batch.next_offset
    return out


# ----------------------------------------------------------------------------- layout


def test_new_log_has_kafkas_files(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    partition = tmp_path / PARTITION
    assert sorted(os.listdir(partition)) == [
        "00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
        "leader-epoch-checkpoint", "partition.metadata"]
    assert (partition / "partition.metadata").read_bytes() == b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    assert (partition / "leader-epoch-checkpoint").read_bytes() == b"0\n0\n"
    assert (log.start_offset(), log.end_offset(), log.flushed_offset(), log.last_epoch()) == (0, 0, 0, 0)
    assert log.latest_snapshot() is None
    assert log.read(0, 100) == b"" and list(log.batches(0)) == []
    log.close()


def test_appends_are_readable_and_durable_after_flush(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    first = noop_batch(0, 1, 3)
    log.append(first)
    second = leader_change_batch(3, 2)
    assert log.append_bytes(encode_batch(second)) == 4
    assert (log.end_offset(), log.flushed_offset(), log.last_epoch()) == (4, 0, 2)
    # Unflushed data is readable (the leader serves it to followers).
    assert log.read(0, 1 << 20) == encode_batch(first) + encode_batch(second)
    assert [batch.base_offset for batch in log.batches(1)] == [0, 3]
    assert list(log.batches(3)) == [second]
    log.flush()
    assert log.flushed_offset() == 4
    log.close()
    reopened = FileReplicatedLog(tmp_path)
    assert reopened.recovery is not None and reopened.recovery.truncated_bytes == 0
    assert (reopened.end_offset(), reopened.flushed_offset(), reopened.last_epoch()) == (4, 4, 2)
    assert list(reopened.batches(0)) == [first, second]
    reopened.close()


def test_append_refuses_what_kafka_refuses(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    fill(log, [3])
    with pytest.raises(ValueError, match="is not the log end offset 2"):
        log.append(value_batch(5, 3, [1]))
    with pytest.raises(ValueError, match="below the log's last epoch 3"):
        log.append(value_batch(2, 2, [1]))
    empty = value_batch(2, 3, [1])._replace(records=[])
    with pytest.raises(ValueError, match="holds no records"):
        log.append(empty)
    assert log.end_offset() == 2
    log.close()
    with pytest.raises(ValueError, match="closed"):
        log.append(value_batch(2, 3, [1]))


def test_append_bytes_validates_everything_before_writing(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    fill(log, [2])
    good = encode_batch(value_batch(2, 2, [5, 5])) + encode_batch(value_batch(4, 3, [5]))
    bad_crc = bytearray(encode_batch(value_batch(5, 3, [5])))
    bad_crc[-1] ^= 0xFF
    cases = {
        "CRC-32C": good + bytes(bad_crc),
        "does not continue the log at offset 2": encode_batch(value_batch(3, 2, [5])),
        "does not continue the log at offset 4": encode_batch(value_batch(2, 2, [5, 5])) * 2,
        "below the previous epoch 3": good + encode_batch(value_batch(5, 2, [5])),
        "below the previous epoch 2": encode_batch(value_batch(2, 1, [5])),
    }
    for message, data in cases.items():
        with pytest.raises(CorruptRecordError, match=message):
            log.append_bytes(data)
        assert log.end_offset() == 2 and log.epoch_entries() == [EpochEntry(2, 0)]
    assert log.append_bytes(b"") == 2
    # A batch cut short at the end is ignored, as Kafka's fetcher ignores it.
    assert log.append_bytes(good + encode_batch(value_batch(5, 3, [5]))[:30]) == 5
    assert log.epoch_entries() == [EpochEntry(2, 0), EpochEntry(3, 4)]
    assert log.read(2, 1 << 20) == good
    log.close()


# ----------------------------------------------------------------------------- segments and indexes


def test_segments_roll_and_their_indexes_are_kafkas(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path, segment_bytes=1000, index_interval_bytes=150)
    batches = []
    for index in range(60):
        batch = value_batch(log.end_offset(), 1 + index // 20, [20 + index % 7, 11], timestamp=1000 + index)
        log.append(batch)
        batches.append(batch)
    big = value_batch(log.end_offset(), 4, [1500])  # larger than a segment: it gets one of its own
    log.append(big)
    batches.append(big)
    log.append(value_batch(log.end_offset(), 4, [3]))
    log.close()
    partition = tmp_path / PARTITION
    segments = list_segments(partition)
    assert len(segments) > 3
    assert [segment.base_offset for segment in segments] == log.segment_bases()
    everything: list[RecordBatch] = []
    for number, segment in enumerate(segments):
        data = segment.log.read_bytes()
        found = decode_batches(data)
        assert found[0].base_offset == segment.base_offset
        assert len(data) <= 1000 or len(found) == 1
        if number + 1 < len(segments) and len(found) > 0:
            # It rolled because the next batch did not fit.
            following = (partition / f"{segments[number + 1].base_offset:020d}.log").read_bytes()
            assert len(data) + decode_batches(following)[0].size_in_bytes > 1000
        everything += found
        by_position = {batch.position: batch for batch in found}
        entries = read_offset_index(segment.index)
        for entry in entries:
            assert by_position[entry.position].last_offset == segment.base_offset + entry.relative_offset
        if len(found) > 3:
            assert len(entries) >= 2  # an entry each time more than 150 bytes went by
        else:
            assert len(entries) <= len(found) - 1
        times = read_time_index(segment.time_index)
        assert times and times[-1].timestamp == max(batch.max_timestamp for batch in found)
        # The records layer rebuilds exactly the same index files from the log file.
        copy = tmp_path / "copy"
        copy.mkdir(exist_ok=True)
        shutil.copy(segment.log, copy / segment.log.name)
        recover_segment(copy / segment.log.name, index_interval_bytes=150)
        assert (copy / segment.index.name).read_bytes() == segment.index.read_bytes()
        assert (copy / segment.time_index.name).read_bytes() == segment.time_index.read_bytes()
    assert everything == [*batches, everything[-1]]


def test_read_starts_from_the_offset_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = FileReplicatedLog(tmp_path, index_interval_bytes=100)
    fill(log, [1] * 200, sizes=(30,))
    starts: list[int] = []
    real = storage_module.scan_batch_headers

    def spy(path: str | os.PathLike[str], start: int = 0) -> object:
        starts.append(start)
        return real(path, start)

    monkeypatch.setattr(storage_module, "scan_batch_headers", spy)
    target = 150
    chunk = log.read(target, 1)
    assert decode_batches(chunk)[0].base_offset == target
    entries = read_offset_index(tmp_path / PARTITION / "00000000000000000000.index")
    expected = max(entry.position for entry in entries if entry.relative_offset <= target)
    assert starts[0] == expected > 0
    log.close()


@pytest.mark.parametrize("max_bytes", [0, 1, 150, 400, 1 << 20])
def test_read_from_every_offset(tmp_path: Path, max_bytes: int) -> None:
    log = FileReplicatedLog(tmp_path, segment_bytes=900, index_interval_bytes=120)
    batches = []
    for index in range(40):
        batch = value_batch(log.end_offset(), 1 + index // 10, [10 + 3 * (index % 5)] * (1 + index % 3))
        log.append(batch)
        batches.append(batch)
    bases = log.segment_bases()
    for offset in range(log.end_offset()):
        chunk = log.read(offset, max_bytes)
        found = decode_batches(chunk)  # whole batches only: a torn tail would raise
        holder = next(index for index, batch in enumerate(batches) if batch.last_offset >= offset)
        assert found == batches[holder:holder + len(found)]
        assert len(found) == 1 or len(chunk) <= max_bytes
        segment = bases[max(i for i, base in enumerate(bases) if base <= found[0].base_offset)]
        following = [base for base in bases if base > segment]
        assert not following or found[-1].next_offset <= following[0]
        after = holder + len(found)
        if after < len(batches) and (not following or batches[after].base_offset < following[0]):
            # It stopped because the next batch of the segment did not fit.
            assert len(chunk) + len(encode_batch(batches[after])) > max_bytes
    assert log.read(log.end_offset(), max_bytes) == b""
    assert log.read(log.end_offset() + 5, max_bytes) == b""
    log.close()


# ----------------------------------------------------------------------------- end_offset_for_epoch


def test_end_offset_for_epoch_follows_the_leader_epoch_cache(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    assert log.end_offset_for_epoch(0) == (0, 0)
    assert log.end_offset_for_epoch(3) == (0, 0)
    fill(log, [1] * 5 + [3] * 5 + [5] * 5)  # epoch 1 at 0, 3 at 10, 5 at 20; end 30
    assert log.epoch_entries() == [EpochEntry(1, 0), EpochEntry(3, 10), EpochEntry(5, 20)]
    expected = {-1: (5, 30), 0: (0, 0), 1: (1, 10), 2: (1, 10), 3: (3, 20), 4: (3, 20), 5: (5, 30),
                6: (5, 30), 100: (5, 30)}
    for epoch, answer in expected.items():
        assert log.end_offset_for_epoch(epoch) == answer, epoch
    assert (tmp_path / PARTITION / "leader-epoch-checkpoint").read_text() == "0\n3\n1 0\n3 10\n5 20\n"
    log.close()


def test_end_offset_for_epoch_below_the_log_start_answers_with_the_snapshot(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    log.install_snapshot(SnapshotId(100, 4), snapshot_bytes(SnapshotId(100, 4)))
    assert (log.start_offset(), log.end_offset(), log.last_epoch()) == (100, 100, 4)
    assert log.epoch_entries() == []
    for epoch in (0, 3, 4, 9):
        assert log.end_offset_for_epoch(epoch) == (4, 100)
    fill(log, [6] * 5)
    assert log.end_offset_for_epoch(6) == (6, 110)
    assert log.end_offset_for_epoch(7) == (6, 110)
    # Below the first cached epoch, whose start is the (earliest) snapshot's end: the snapshot's id.
    assert log.end_offset_for_epoch(5) == (4, 100)
    assert log.end_offset_for_epoch(2) == (4, 100)
    log.close()


# ----------------------------------------------------------------------------- truncation


def test_truncate_to_removes_whole_batches_segments_and_epochs(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path, segment_bytes=800, index_interval_bytes=100)
    batches = fill(log, [1] * 10 + [2] * 10 + [3] * 10, sizes=(30, 30, 30))  # 3 records per batch
    assert len(log.segment_bases()) > 2
    log.flush()
    log.truncate_to(log.end_offset() + 10)  # beyond the end: nothing happens
    assert log.end_offset() == 90
    log.truncate_to(46)  # inside the batch 45..47: it goes whole
    assert log.end_offset() == 45 and log.flushed_offset() == 45
    assert log.epoch_entries() == [EpochEntry(1, 0), EpochEntry(2, 30)]
    assert all(base <= 45 for base in log.segment_bases())
    assert list(log.batches(0)) == batches[:15]
    checkpoint = tmp_path / PARTITION / "leader-epoch-checkpoint"
    assert read_leader_epoch_checkpoint(checkpoint) == log.epoch_entries()
    active = list_segments(tmp_path / PARTITION)[-1]
    data = active.log.read_bytes()
    for entry in read_offset_index(active.index):
        assert entry.position < len(data)
    for time_entry in read_time_index(active.time_index):
        assert active.base_offset + time_entry.relative_offset < 45
    log.truncate_to(30)  # exactly where epoch 2 starts
    assert log.end_offset() == 30 and log.last_epoch() == 1
    assert log.epoch_entries() == [EpochEntry(1, 0)]
    batches = batches[:10] + fill(log, [4, 4])
    assert log.epoch_entries() == [EpochEntry(1, 0), EpochEntry(4, 30)]
    log.close()
    reopened = FileReplicatedLog(tmp_path, segment_bytes=800, index_interval_bytes=100)
    assert list(reopened.batches(0)) == batches
    assert reopened.epoch_entries() == [EpochEntry(1, 0), EpochEntry(4, 30)]
    reopened.close()


def test_truncate_below_the_log_start_is_refused(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    fill(log, [1] * 10)
    log.write_snapshot(SnapshotId(6, 1), snapshot_batches(SnapshotId(6, 1)))
    with pytest.raises(ValueError, match="below the log start offset 6"):
        log.truncate_to(4)
    log.truncate_to(6)
    assert log.end_offset() == 6
    log.close()


# ----------------------------------------------------------------------------- snapshots


def test_write_and_read_snapshots(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    fill(log, [1] * 3 + [2] * 3)  # epoch 1: 0..5, epoch 2: 6..11
    snapshot_id = SnapshotId(8, 2)
    written = snapshot_batches(snapshot_id)
    log.write_snapshot(snapshot_id, written)
    path = tmp_path / PARTITION / "00000000000000000008-0000000002.checkpoint"
    assert path.exists() and not list((tmp_path / PARTITION).glob("*.part"))
    assert log.latest_snapshot() == snapshot_id and log.start_offset() == 8
    assert list(log.snapshot_batches(snapshot_id)) == written
    assert list(read_snapshot(path)) == written
    size = log.snapshot_size(snapshot_id)
    assert size == path.stat().st_size
    chunks = b"".join(log.read_snapshot(snapshot_id, position, 50) for position in range(0, size, 50))
    assert chunks == path.read_bytes()
    assert log.read_snapshot(snapshot_id, size, 50) == b""
    # The log keeps its records.
    assert log.end_offset() == 12 and log.read(0, 1)
    log.write_snapshot(snapshot_id, [])  # an existing id: nothing happens
    assert list(log.snapshot_batches(snapshot_id)) == written
    for bad, message in ((SnapshotId(13, 2), "beyond the log end offset"), (SnapshotId(8, 1), "not valid"),
                         (SnapshotId(12, 3), "not valid"), (SnapshotId(10, 0), "not valid")):
        with pytest.raises(ValueError, match=message):
            log.write_snapshot(bad, written)
    log.write_snapshot(SnapshotId(4, 1), written)  # below the log start: ignored, as Kafka does
    assert log.snapshots() == [snapshot_id]
    with pytest.raises(KeyError):
        log.snapshot_size(SnapshotId(4, 1))
    log.close()


def test_install_snapshot_restarts_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = FileReplicatedLog(tmp_path, segment_bytes=500)
    fill(log, [1] * 20)
    assert len(log.segment_bases()) > 1
    renamed: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        renamed.append((os.path.basename(source), os.path.basename(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", spy)
    snapshot_id = SnapshotId(500, 7)
    data = snapshot_bytes(snapshot_id)
    log.install_snapshot(snapshot_id, data)
    part = [pair for pair in renamed if pair[1] == "00000000000000000500-0000000007.checkpoint"]
    assert part and part[0][0].startswith("00000000000000000500-0000000007-") and part[0][0].endswith(
        ".checkpoint.part")
    assert (log.start_offset(), log.end_offset(), log.flushed_offset(), log.last_epoch()) == (
        500, 500, 500, 7)
    assert log.segment_bases() == [500] and log.epoch_entries() == []
    assert sorted(os.listdir(tmp_path / PARTITION)) == [
        "00000000000000000500-0000000007.checkpoint", "00000000000000000500.index",
        "00000000000000000500.log", "00000000000000000500.timeindex", "leader-epoch-checkpoint",
        "partition.metadata"]
    assert (tmp_path / PARTITION / "00000000000000000500-0000000007.checkpoint").read_bytes() == data
    fill(log, [8, 8])
    assert log.end_offset() == 504
    with pytest.raises(OffsetOutOfRangeError):
        log.read(10, 100)
    with pytest.raises(ValueError, match="older than the latest snapshot"):
        log.install_snapshot(SnapshotId(400, 7), snapshot_bytes(SnapshotId(400, 7)))
    log.close()
    reopened = FileReplicatedLog(tmp_path, segment_bytes=500)
    assert (reopened.start_offset(), reopened.end_offset(), reopened.last_epoch()) == (500, 504, 8)
    reopened.close()


def test_install_snapshot_refuses_bad_data(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    fill(log, [1] * 3)
    snapshot_id = SnapshotId(50, 2)
    good = snapshot_batches(snapshot_id)
    no_footer = b"".join(encode_batch(batch) for batch in good[:-1])
    no_header = b"".join(encode_batch(batch) for batch in good[1:])
    torn = snapshot_bytes(snapshot_id)[:-3]
    for data, message in ((no_footer, "SnapshotFooterRecord"), (no_header, "SnapshotHeaderRecord"),
                          (torn, "file ends inside a batch"), (b"", "no batches")):
        with pytest.raises(CorruptRecordError, match=message):
            log.install_snapshot(snapshot_id, data)
    assert log.latest_snapshot() is None and log.end_offset() == 6
    assert not list((tmp_path / PARTITION).glob("*.checkpoint*"))
    log.close()


def test_delete_before_snapshot_keeps_the_latest_and_the_active_segment(tmp_path: Path) -> None:
    write_bootstrap_snapshot(tmp_path, [InitialController(1, "127.0.0.1", 9093, DIR_IDS[0])], "CONTROLLER")
    log = FileReplicatedLog(tmp_path, segment_bytes=400)
    assert log.latest_snapshot() == SnapshotId(0, 0) and log.start_offset() == 0
    fill(log, [1] * 30)
    log.delete_before_snapshot()  # only the bootstrap snapshot: nothing is below it
    assert log.snapshots() == [SnapshotId(0, 0)] and log.segment_bases()[0] == 0
    bases = log.segment_bases()
    assert len(bases) > 3
    cut = bases[2] + 1  # inside the third segment
    log.write_snapshot(SnapshotId(cut, 1), snapshot_batches(SnapshotId(cut, 1)))
    log.write_snapshot(SnapshotId(bases[1], 1), snapshot_batches(SnapshotId(bases[1], 1)))
    log.delete_before_snapshot()
    assert log.snapshots() == [SnapshotId(cut, 1)]
    assert log.segment_bases() == bases[2:]
    assert sorted(path.name for path in (tmp_path / PARTITION).glob("*.checkpoint")) == [
        SnapshotId(cut, 1).file_name]
    assert log.start_offset() == cut
    assert log.epoch_entries() == [EpochEntry(1, cut)]
    # Offsets of the kept segment below the snapshot are still on disk.
    assert log.read(bases[2], 1)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(bases[1], 1)
    end = log.end_offset()
    log.write_snapshot(SnapshotId(end, 1), snapshot_batches(SnapshotId(end, 1)))
    log.delete_before_snapshot()
    assert log.segment_bases() == bases[-1:]  # the active segment stays
    assert log.epoch_entries() == [] and log.last_epoch() == 1
    assert log.end_offset_for_epoch(1) == log.end_offset_for_epoch(0) == (1, end)
    log.close()
    reopened = FileReplicatedLog(tmp_path, segment_bytes=400)
    assert reopened.snapshots() == [SnapshotId(end, 1)] and reopened.start_offset() == end
    assert reopened.end_offset() == end and reopened.epoch_entries() == []
    assert reopened.last_epoch() == 1
    reopened.close()


# ----------------------------------------------------------------------------- opening after a crash


def test_torn_tail_is_cut_and_reported(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path, index_interval_bytes=100)
    batches = fill(log, [1] * 5 + [2] * 5)
    log.flush()
    log.abandon()
    segment = tmp_path / PARTITION / "00000000000000000000.log"
    size = segment.stat().st_size
    last = len(encode_batch(batches[-1]))
    with open(segment, "r+b") as stream:
        stream.truncate(size - last // 2)
    reopened = FileReplicatedLog(tmp_path, index_interval_bytes=100)
    assert reopened.recovery is not None
    assert reopened.recovery.truncated_bytes == last - last // 2
    assert "declares" in reopened.recovery.reason
    assert reopened.end_offset() == batches[-2].next_offset
    assert list(reopened.batches(0)) == batches[:-1]
    assert reopened.epoch_entries() == [EpochEntry(1, 0), EpochEntry(2, 10)]
    reopened.close()


def test_checkpoint_ahead_of_the_data_is_cut_back(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    fill(log, [1] * 4)
    log.abandon()
    # The cache is written before the batches that start an epoch; a crash in between leaves this.
    write_leader_epoch_checkpoint(tmp_path / PARTITION / "leader-epoch-checkpoint",
                                  [EpochEntry(1, 0), EpochEntry(2, 8)])
    reopened = FileReplicatedLog(tmp_path)
    assert reopened.epoch_entries() == [EpochEntry(1, 0)] and reopened.last_epoch() == 1
    checkpoint = tmp_path / PARTITION / "leader-epoch-checkpoint"
    assert read_leader_epoch_checkpoint(checkpoint) == [EpochEntry(1, 0)]
    reopened.close()


@pytest.mark.parametrize("damage", ["missing", "garbage", "empty"])
def test_epoch_cache_is_rebuilt_from_every_segment(tmp_path: Path, damage: str) -> None:
    log = FileReplicatedLog(tmp_path, segment_bytes=300)
    fill(log, [1] * 5 + [2] * 5 + [4] * 5)
    expected = log.epoch_entries()
    assert len(log.segment_bases()) > 3
    log.close()
    checkpoint = tmp_path / PARTITION / "leader-epoch-checkpoint"
    if damage == "missing":
        checkpoint.unlink()
    else:
        checkpoint.write_text("0\n2\n1 x\n" if damage == "garbage" else "0\n0\n")
    reopened = FileReplicatedLog(tmp_path, segment_bytes=300)
    assert reopened.epoch_entries() == expected == [EpochEntry(1, 0), EpochEntry(2, 10), EpochEntry(4, 20)]
    assert read_leader_epoch_checkpoint(checkpoint) == expected
    reopened.close()


def test_stray_files_are_removed(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    fill(log, [1])
    log.close()
    partition = tmp_path / PARTITION
    strays = ["00000000000000000002-0000000001-123.checkpoint.part",
              "00000000000000000001-0000000001.checkpoint.deleted", "quorum-state.tmp",
              "leader-epoch-checkpoint.tmp", "00000000000000000000.log.deleted"]
    for name in strays:
        (partition / name).write_bytes(b"x")
    reopened = FileReplicatedLog(tmp_path)
    assert sorted(path.name for path in reopened.deleted_on_open) == sorted(strays)
    assert not any((partition / name).exists() for name in strays)
    assert reopened.snapshots() == [] and reopened.end_offset() == 2
    reopened.close()


def test_crash_while_installing_a_snapshot_is_finished_on_open(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    fill(log, [1] * 5)
    log.abandon()
    # The snapshot was frozen, the process died before the segments were deleted.
    snapshot_id = SnapshotId(40, 3)
    (tmp_path / PARTITION / snapshot_id.file_name).write_bytes(snapshot_bytes(snapshot_id))
    reopened = FileReplicatedLog(tmp_path)
    assert (reopened.start_offset(), reopened.end_offset(), reopened.last_epoch()) == (40, 40, 3)
    assert reopened.segment_bases() == [40] and reopened.epoch_entries() == []
    assert not (tmp_path / PARTITION / "00000000000000000000.log").exists()
    reopened.close()


def test_refuses_a_foreign_topic_id_and_an_uncovered_log_start(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    log.close()
    (tmp_path / PARTITION / "partition.metadata").write_text("version: 0\ntopic_id: 3Db5QLSqSZieL3rJBUUegA")
    with pytest.raises(StorageError, match="but log already contained topic ID 3Db5QLSqSZieL3rJBUUegA"):
        FileReplicatedLog(tmp_path)
    other = tmp_path / "other"
    (other / PARTITION).mkdir(parents=True)
    (other / PARTITION / "00000000000000000500.log").write_bytes(encode_batch(value_batch(500, 1, [3])))
    with pytest.raises(StorageError, match="Inconsistent snapshot state: there must be a snapshot at an "
                                           "offset larger then the current log start offset 500, but the "
                                           "latest snapshot is None"):
        FileReplicatedLog(other)


def test_control_batch_helpers(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path)
    assert not log.has_data_batches()
    control = leader_change_batch(0, 1)
    log.append(control)
    assert not log.has_data_batches()
    fill(log, [1, 1])
    second = leader_change_batch(log.end_offset(), 2)
    log.append(second)
    assert log.has_data_batches()
    assert list(log.control_batches(0)) == [control, second]
    assert list(log.control_batches(1)) == [second]
    log.close()


def test_scan_batch_headers_stops_at_a_torn_tail(tmp_path: Path) -> None:
    batches = [value_batch(0, 1, [10]), value_batch(1, 2, [5000]), value_batch(2, 2, [7])]
    data = b"".join(encode_batch(batch) for batch in batches)
    path = tmp_path / "x.log"
    path.write_bytes(data + encode_batch(value_batch(3, 2, [9]))[:40])
    headers = list(scan_batch_headers(path))
    assert [(h.base_offset, h.epoch, h.last_offset, h.size) for h in headers] == [
        (b.base_offset, b.partition_leader_epoch, b.last_offset, len(encode_batch(b))) for b in batches]
    assert headers[2].position == len(data) - len(encode_batch(batches[2]))
    path.write_bytes(data[:8] + struct.pack(">i", 3) + data[12:])
    with pytest.raises(CorruptRecordError, match="batch length 3"):
        list(scan_batch_headers(path))


def test_memory_stays_flat_on_a_large_log(tmp_path: Path) -> None:
    """Opening (recovery of the active segment), reads and iteration stream the files: the peak stays
    well below the 8 MB segment."""
    segment_bytes = 16 * 1024 * 1024
    log = FileReplicatedLog(tmp_path, segment_bytes=segment_bytes)
    value = [b"v" * 1000] * 50
    from kafka_admin_kraft.records import data_batch
    while log.end_offset() < 8000:  # about 8 MB in one segment
        log.append(data_batch(log.end_offset(), 1, 0, value))
    log.close()
    assert (tmp_path / PARTITION / "00000000000000000000.log").stat().st_size > 8_000_000
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    reopened = FileReplicatedLog(tmp_path, segment_bytes=segment_bytes)
    try:
        for offset in range(0, reopened.end_offset(), 997):
            reopened.read(offset, 64 * 1024)
        assert sum(1 for _ in reopened.batches(0)) == 160
        peak = tracemalloc.get_traced_memory()[1] - baseline
        assert reopened.end_offset() == 8000
    finally:
        tracemalloc.stop()
        reopened.close()
    assert peak < 5 * 1024 * 1024, peak


# ----------------------------------------------------------------------------- quorum-state


def test_quorum_state_store_writes_kafkas_data_versions(tmp_path: Path) -> None:
    voter = Uuid.from_string("3Db5QLSqSZieL3rJBUUegA")
    v1 = FileQuorumStateStore(tmp_path, kraft_version=1)
    assert v1.read() is None
    state = QuorumState(leader_id=2, leader_epoch=5, voted_id=2, voted_directory_id=voter)
    v1.write(state)
    assert (tmp_path / "quorum-state").read_text() == (
        '{"leaderId":2,"leaderEpoch":5,"votedId":2,"votedDirectoryId":"3Db5QLSqSZieL3rJBUUegA","data_version":1}')
    assert v1.read() == state
    assert not (tmp_path / "quorum-state.tmp").exists()
    v0 = FileQuorumStateStore(tmp_path, kraft_version=0, voter_ids=[1, 2, 3])
    v0.write(state)  # the directory id does not exist in version 0
    assert (tmp_path / "quorum-state").read_text() == (
        '{"clusterId":"","leaderId":2,"leaderEpoch":5,"votedId":2,"appliedOffset":0,'
        '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')
    assert v0.read() == QuorumState(0, 2, 5, 2, ZERO_UUID, "", 0, (1, 2, 3))
    # A state read as version 0 is written back as version 1 once kraft.version is 1.
    v0.kraft_version = 1
    v0.write(QuorumState(0, -1, 6, -1, current_voters=(1, 2, 3)))
    assert (tmp_path / "quorum-state").read_text() == (
        '{"leaderId":-1,"leaderEpoch":6,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}')
    (tmp_path / "quorum-state").write_text('{"leaderId":1,"data_version":7}')
    with pytest.raises(StorageFormatError, match="data_version"):
        v0.read()


def test_batches_iterate_across_segments(tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path, segment_bytes=300, index_interval_bytes=50)
    batches = fill(log, [1] * 12)
    for start in range(log.end_offset()):
        got = list(log.batches(start))
        first = next(index for index, batch in enumerate(batches) if batch.last_offset >= start)
        assert got == batches[first:]
    assert log_bytes(log) == b"".join(encode_batch(batch) for batch in batches)
    with open(tmp_path / PARTITION / "00000000000000000000.log", "rb") as stream:
        assert list(BatchReader(stream))[0] == batches[0]
    log.close()
