"""FileReplicatedLog against an in-memory model, under random appends, truncations, snapshots,
retention, clean reopens and crashes.

The model is a list of encoded batches plus Kafka's leader-epoch-cache rules written out plainly; it
knows nothing of files. A crash abandons the open files and cuts the active segment at a random byte
at or after the end of what was flushed (and may damage its index files); after reopening, the log
must hold exactly the model's batches that lie wholly before the cut - everything flushed survives,
nothing partial appears.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from kafka_admin_kraft.records import SnapshotId, decode_batches, encode_batch
from kafka_admin_kraft.storage import (
    EpochEntry,
    InitialController,
    read_leader_epoch_checkpoint,
    write_bootstrap_snapshot,
)
from kafka_admin_kraft_server.storage import FileReplicatedLog
from unit.reference_server.server_testlib import DIR_IDS, leader_change_batch, snapshot_bytes, value_batch

PARTITION = "__cluster_metadata-0"
SEGMENT_BYTES = 700
INDEX_INTERVAL = 90


@dataclass
class Entry:
    data: bytes
    base: int
    last: int
    epoch: int


@dataclass
class Model:
    entries: list[Entry] = field(default_factory=list)
    """Batches still on disk, in offset order (may start below the log start after retention)."""
    physical_start: int = 0
    end: int = 0
    flushed: int = 0
    snapshots: list[SnapshotId] = field(default_factory=list)
    cache: list[EpochEntry] = field(default_factory=list)

    @property
    def start(self) -> int:
        return max(self.snapshots[-1].end_offset if self.snapshots else 0, self.physical_start)

    def last_epoch(self) -> int:
        if self.cache:
            return self.cache[-1].epoch
        return self.snapshots[-1].epoch if self.snapshots else 0

    # Kafka's LeaderEpochFileCache, written out plainly.
    def assign(self, epoch: int, start: int) -> None:
        if not self.cache or epoch > self.cache[-1].epoch:
            self.cache.append(EpochEntry(epoch, start))

    def truncate_from_end(self, end: int) -> None:
        self.cache = [entry for entry in self.cache if entry.start_offset < end]

    def truncate_from_start(self, start: int) -> None:
        removed = [entry for entry in self.cache if entry.start_offset <= start]
        if removed:
            self.cache = [EpochEntry(removed[-1].epoch, start),
                          *[entry for entry in self.cache if entry.start_offset > start]]

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """KafkaMetadataLog.endOffsetForEpoch over LeaderEpochFileCache.endOffsetFor."""
        found: tuple[int, int] | None = None
        if epoch >= 0 and self.cache:
            if self.cache[-1].epoch == epoch:
                found = (epoch, self.end)
            else:
                higher = [entry for entry in self.cache if entry.epoch > epoch]
                lower = [entry for entry in self.cache if entry.epoch <= epoch]
                if higher:
                    found = (lower[-1].epoch if lower else epoch, higher[0].start_offset)
        if found is None:
            return self.last_epoch(), self.end
        earliest = self.snapshots[0] if self.snapshots else None
        if earliest is not None and found == (epoch, earliest.end_offset):
            return earliest.epoch, earliest.end_offset
        return found

    def append(self, data: bytes, base: int, last: int, epoch: int) -> None:
        self.assign(epoch, base)
        self.entries.append(Entry(data, base, last, epoch))
        self.end = last + 1

    def restart_at_latest_snapshot_if_ahead(self) -> None:
        """KafkaMetadataLog.truncateToLatestSnapshot, run when a log is opened."""
        if not self.snapshots:
            return
        latest = self.snapshots[-1]
        log_epoch = self.cache[-1].epoch if self.cache else 0
        if latest.epoch > log_epoch or (latest.epoch == log_epoch and latest.end_offset > self.end):
            self.entries = []
            self.physical_start = self.end = self.flushed = latest.end_offset
            self.cache = []
            self.snapshots = [latest]

    def cut(self, end: int) -> None:
        self.entries = [entry for entry in self.entries if entry.last < end]
        self.end = self.entries[-1].last + 1 if self.entries else self.physical_start
        self.flushed = min(self.flushed, self.end)
        self.truncate_from_end(self.end)


class LogMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="log-model-"))
        self.model = Model()
        self.log: FileReplicatedLog | None = None
        self.timestamp = 1000

    def open(self) -> FileReplicatedLog:
        self.log = FileReplicatedLog(self.directory, segment_bytes=SEGMENT_BYTES,
                                     index_interval_bytes=INDEX_INTERVAL)
        return self.log

    @property
    def current(self) -> FileReplicatedLog:
        assert self.log is not None
        return self.log

    @initialize(bootstrap=st.booleans())
    def start(self, bootstrap: bool) -> None:
        if bootstrap:
            write_bootstrap_snapshot(self.directory, [InitialController(1, "127.0.0.1", 9093, DIR_IDS[0])],
                                     "CONTROLLER")
            self.model.snapshots = [SnapshotId(0, 0)]
        self.open()

    def teardown(self) -> None:
        if self.log is not None:
            self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    # ------------------------------------------------------------------ operations

    def next_batch(self, base: int, epoch: int, sizes: list[int], control: bool) -> bytes:
        self.timestamp += 1
        batch = leader_change_batch(base, epoch) if control else value_batch(base, epoch, sizes,
                                                                              timestamp=self.timestamp)
        return encode_batch(batch)

    @rule(bump=st.sampled_from([0, 0, 0, 1, 2]), sizes=st.lists(st.integers(1, 120), min_size=1, max_size=4),
          control=st.booleans())
    def append(self, bump: int, sizes: list[int], control: bool) -> None:
        epoch = self.model.last_epoch() + bump
        data = self.next_batch(self.model.end, epoch, sizes, control)
        batch = decode_batches(data)[0]
        self.current.append(batch)
        self.model.append(data, batch.base_offset, batch.last_offset, epoch)

    @rule(plan=st.lists(st.tuples(st.sampled_from([0, 0, 1]),
                                  st.lists(st.integers(1, 300), min_size=1, max_size=3)),
                        min_size=1, max_size=4),
          torn=st.booleans())
    def append_bytes(self, plan: list[tuple[int, list[int]]], torn: bool) -> None:
        data = b""
        base = self.model.end
        epoch = self.model.last_epoch()
        pieces = []
        for bump, sizes in plan:
            epoch += bump
            encoded = self.next_batch(base, epoch, sizes, False)
            batch = decode_batches(encoded)[0]
            pieces.append((encoded, batch.base_offset, batch.last_offset, epoch))
            data += encoded
            base = batch.next_offset
        if torn:
            data += self.next_batch(base, epoch, [50], False)[:37]
        assert self.current.append_bytes(data) == base
        for piece in pieces:
            self.model.append(*piece)

    @rule()
    def flush(self) -> None:
        self.current.flush()
        self.model.flushed = self.model.end

    @precondition(lambda self: self.model.end > self.model.start)
    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        offset = data.draw(st.integers(self.model.start, self.model.end))
        event(f"truncate across segments: {offset < self.current.segment_bases()[-1]}")
        self.current.truncate_to(offset)
        holder = next((entry for entry in self.model.entries if entry.last >= offset), None)
        if holder is not None:
            self.model.cut(holder.base)

    @precondition(lambda self: self.model.entries and self.model.end > self.model.start)
    @rule(data=st.data())
    def write_snapshot(self, data: st.DataObject) -> None:
        candidates = [entry for entry in self.model.entries if entry.last + 1 > self.model.start]
        entry = data.draw(st.sampled_from(candidates))
        snapshot_id = SnapshotId(entry.last + 1, entry.epoch)
        self.current.write_snapshot(snapshot_id, decode_batches(snapshot_bytes(snapshot_id)))
        if snapshot_id not in self.model.snapshots:
            self.model.snapshots = sorted([*self.model.snapshots, snapshot_id])

    @rule(ahead=st.integers(0, 50), bump=st.integers(0, 2))
    def install_snapshot(self, ahead: int, bump: int) -> None:
        snapshot_id = SnapshotId(self.model.end + ahead, self.model.last_epoch() + bump)
        if self.model.snapshots and snapshot_id < self.model.snapshots[-1]:
            return
        self.current.install_snapshot(snapshot_id, snapshot_bytes(snapshot_id))
        self.model.snapshots = [snapshot_id]
        self.model.entries = []
        self.model.physical_start = self.model.end = self.model.flushed = snapshot_id.end_offset
        self.model.cache = []

    @rule()
    def delete_before_snapshot(self) -> None:
        before = self.current.segment_bases()
        self.current.delete_before_snapshot()
        after = self.current.segment_bases()
        if not self.model.snapshots:
            assert after == before
            return
        latest = self.model.snapshots[-1]
        # Only whole segments below the latest snapshot go, never the active one.
        assert after == before[len(before) - len(after):] and after[-1] == before[-1]
        assert after[0] <= max(latest.end_offset, before[0])
        event(f"retention deleted {'no' if after == before else 'some'} segments")
        self.model.physical_start = after[0]
        self.model.entries = [entry for entry in self.model.entries if entry.base >= after[0]]
        self.model.snapshots = [latest]
        self.model.truncate_from_start(latest.end_offset)
        self.model.truncate_from_end(self.model.end)

    @rule()
    def reopen(self) -> None:
        self.current.close()
        self.open()
        self.model.flushed = self.model.end
        assert self.current.recovery is not None and self.current.recovery.truncated_bytes == 0

    @rule(data=st.data())
    def crash(self, data: st.DataObject) -> None:
        log = self.current
        active_base = log.segment_bases()[-1]
        log.abandon()
        active = [entry for entry in self.model.entries if entry.base >= active_base]
        durable = sum(len(entry.data) for entry in active if entry.last < self.model.flushed)
        segment = self.directory / PARTITION / f"{active_base:020d}.log"
        size = segment.stat().st_size
        assert size == sum(len(entry.data) for entry in active)
        cut = data.draw(st.integers(durable, size), label="cut")
        with open(segment, "r+b") as stream:
            stream.truncate(cut)
        if data.draw(st.booleans(), label="damage index"):
            index = self.directory / PARTITION / f"{active_base:020d}.index"
            with open(index, "r+b") as stream:
                stream.truncate(data.draw(st.integers(0, max(index.stat().st_size - 1, 0))))
                stream.seek(0, os.SEEK_END)
                stream.write(b"\0" * 8)
        kept_bytes = 0
        survivors = 0
        for entry in active:
            if kept_bytes + len(entry.data) > cut:
                break
            kept_bytes += len(entry.data)
            survivors += 1
        lost = active[survivors:]
        self.open()
        assert self.current.recovery is not None
        assert self.current.recovery.truncated_bytes == cut - kept_bytes
        event(f"crash lost {'no' if not lost else 'some'} batches, {len(log.segment_bases())} segment(s)")
        if lost:
            self.model.cut(lost[0].base)
        self.model.flushed = self.model.end
        self.model.restart_at_latest_snapshot_if_ahead()

    @rule(data=st.data(), max_bytes=st.sampled_from([0, 100, 400, 5000]))
    def read(self, data: st.DataObject, max_bytes: int) -> None:
        if self.model.end <= self.model.start:
            assert self.current.read(self.model.end, max_bytes) == b""
            return
        offset = data.draw(st.integers(self.model.start, self.model.end - 1))
        chunk = self.current.read(offset, max_bytes)
        found = decode_batches(chunk)
        first = next(index for index, entry in enumerate(self.model.entries) if entry.last >= offset)
        expected = self.model.entries[first:first + len(found)]
        assert chunk == b"".join(entry.data for entry in expected)
        assert len(found) == 1 or len(chunk) <= max_bytes

    # ------------------------------------------------------------------ invariants

    @invariant()
    def matches_the_model(self) -> None:
        if self.log is None:
            return
        log, model = self.log, self.model
        assert log.end_offset() == model.end
        assert log.start_offset() == model.start
        assert log.flushed_offset() >= model.flushed
        assert log.last_epoch() == model.last_epoch()
        assert log.snapshots() == model.snapshots
        assert log.epoch_entries() == model.cache
        checkpoint = self.directory / PARTITION / "leader-epoch-checkpoint"
        assert read_leader_epoch_checkpoint(checkpoint) == model.cache
        for epoch in range(-1, model.last_epoch() + 2):
            assert log.end_offset_for_epoch(epoch) == model.end_offset_for_epoch(epoch), epoch
        visible = [entry for entry in model.entries if entry.last >= model.start]
        stored = [encode_batch(batch) for batch in log.batches(model.start)]
        assert stored == [entry.data for entry in visible]
        snapshot_files = sorted(path.name for path in (self.directory / PARTITION).glob("*.checkpoint*"))
        assert snapshot_files == [snapshot_id.file_name for snapshot_id in model.snapshots]


def test_log_matches_its_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """LOG_MODEL_EXAMPLES=2000 runs a longer search (a few minutes)."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # crashes are simulated by cutting files
    run_state_machine_as_test(LogMachine, settings=settings(
        max_examples=int(os.environ.get("LOG_MODEL_EXAMPLES", "40")), stateful_step_count=30, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
