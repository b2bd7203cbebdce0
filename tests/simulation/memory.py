"""In-memory ``ReplicatedLog`` and ``QuorumStateStore`` with crash semantics, for the simulator.

``MemoryLog`` keeps batches as their encoded bytes (what a segment file holds) plus decoded copies.
``flush`` marks everything appended as durable; ``crash`` drops what was not flushed, as a power cut
does. Snapshots are durable as soon as they are written or installed. The ``*_keys`` helpers give the
invariant checker a cheap fingerprint of every batch: (base offset, epoch, CRC).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records import (
    RecordBatch,
    SnapshotId,
    SnapshotStreamChecker,
    decode_batch_bytes,
    decode_batches,
    encode_batch,
)
from kafka_admin_kraft.storage import QuorumState

BatchKey = tuple[int, int, int, int]
"""(base offset, next offset, partition leader epoch, CRC) of a batch."""


class MemoryLog:
    """The ``__cluster_metadata`` partition of one simulated node."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._batches: list[RecordBatch] = []
        self._bytes: list[bytes] = []
        self._keys: list[BatchKey] = []
        self._start = 0
        self._flushed = 0
        self._snapshots: dict[SnapshotId, bytes] = {}
        self._archive: list[BatchKey] = []
        """Keys of batches dropped by retention (below the latest snapshot), for the checker."""
        self._archive_bytes: dict[int, bytes] = {}
        self.mutations = 0
        self.installs = 0
        """How many snapshots were installed from a leader (FetchSnapshot)."""
        self._epoch_cache: tuple[int, list[tuple[int, int]]] = (-1, [])
        self.writers_opened = 0
        self.writers_closed = 0
        """Snapshot writers opened and frozen or aborted (a leak shows as a difference)."""
        self.snapshot_appends = 0

    # -- ReplicatedLog -------------------------------------------------------------------------

    def start_offset(self) -> int:
        return self._start

    def end_offset(self) -> int:
        return self._batches[-1].next_offset if self._batches else self._start

    def flushed_offset(self) -> int:
        return min(self._flushed, self.end_offset())

    def last_epoch(self) -> int:
        if self._batches:
            return self._batches[-1].partition_leader_epoch
        snapshot = self.latest_snapshot()
        return snapshot.epoch if snapshot is not None else 0

    def _epoch_starts(self) -> list[tuple[int, int]]:
        if self._epoch_cache[0] == self.mutations:
            return self._epoch_cache[1]
        starts: list[tuple[int, int]] = []
        for batch in self._batches:
            if not starts or starts[-1][0] != batch.partition_leader_epoch:
                starts.append((batch.partition_leader_epoch, batch.base_offset))
        self._epoch_cache = (self.mutations, starts)
        return starts

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """Kafka's leader epoch cache: (largest epoch <= ``epoch``, where the next epoch starts or the
        end offset); below the log's first epoch, (snapshot epoch, log start)."""
        starts = self._epoch_starts()
        snapshot = self.latest_snapshot()
        below = (
            snapshot.epoch if snapshot is not None and snapshot.end_offset == self._start else 0,
            self._start,
        )
        if not starts:
            return below if snapshot is not None else (0, self._start)
        if epoch >= starts[-1][0]:
            return starts[-1][0], self.end_offset()
        floor = None
        for index, (start_epoch, _) in enumerate(starts):
            if start_epoch <= epoch:
                floor = index
        if floor is None:
            return below
        return starts[floor][0], starts[floor + 1][1]

    def append(self, batch: RecordBatch) -> None:
        if batch.base_offset != self.end_offset():
            raise ValueError(f"append at {batch.base_offset}, the log ends at {self.end_offset()}")
        data = encode_batch(batch)
        self._add(decode_batch_bytes(data), data)

    def _add(self, batch: RecordBatch, data: bytes) -> None:
        if self._batches and batch.partition_leader_epoch < self._batches[-1].partition_leader_epoch:
            raise CorruptRecordError("epochs go backwards", what="memory log")
        self._bases.append(batch.base_offset)
        self._batches.append(batch)
        self._bytes.append(data)
        self._keys.append((batch.base_offset, batch.next_offset, batch.partition_leader_epoch, batch.crc))
        self.mutations += 1

    def append_bytes(self, data: bytes) -> int:
        batches = decode_batches(data, what="fetched records")
        expected = self.end_offset()
        last_epoch = self._batches[-1].partition_leader_epoch if self._batches else -1
        for batch in batches:
            if batch.base_offset != expected:
                raise CorruptRecordError(f"batch at {batch.base_offset}, expected {expected}", what="append")
            if batch.partition_leader_epoch < last_epoch:
                raise CorruptRecordError("epochs go backwards", what="append")
            expected = batch.next_offset
            last_epoch = batch.partition_leader_epoch
        position = 0
        for batch in batches:
            size = batch.size_in_bytes
            self._add(batch, data[position : position + size])
            position += size
        return self.end_offset()

    def _index_of(self, offset: int) -> int:
        """Index of the batch containing ``offset`` (or the first one after it)."""
        index = bisect.bisect_right(self._bases, offset) - 1
        if index >= 0 and self._batches[index].next_offset <= offset:
            index += 1
        return max(index, 0)

    def read(self, start_offset: int, max_bytes: int) -> bytes:
        index = self._index_of(start_offset)
        out = bytearray()
        while index < len(self._bytes):
            data = self._bytes[index]
            if out and len(out) + len(data) > max_bytes:
                break
            out += data
            index += 1
        return bytes(out)

    def batches(self, start_offset: int) -> Iterator[RecordBatch]:
        index = self._index_of(start_offset)
        yield from self._batches[index:]

    def truncate_to(self, offset: int) -> None:
        index = self._index_of(offset)
        if index < len(self._batches):
            del self._bases[index:], self._batches[index:], self._bytes[index:], self._keys[index:]
            self.mutations += 1
        self._flushed = min(self._flushed, self.end_offset())

    def flush(self) -> None:
        self._flushed = self.end_offset()

    def latest_snapshot(self) -> SnapshotId | None:
        return max(self._snapshots) if self._snapshots else None

    def read_snapshot(self, snapshot_id: SnapshotId, position: int, max_bytes: int) -> bytes:
        return self._snapshots[snapshot_id][position : position + max_bytes]

    def snapshot_size(self, snapshot_id: SnapshotId) -> int:
        return len(self._snapshots[snapshot_id])

    def snapshot_batches(self, snapshot_id: SnapshotId) -> Iterator[RecordBatch]:
        yield from decode_batches(self._snapshots[snapshot_id], what="snapshot")

    def create_snapshot(self, snapshot_id: SnapshotId) -> MemorySnapshotWriter | None:
        """As the file log: None for an existing id or one below the log start; the id must lie
        within the log with the log's epoch at that offset."""
        if snapshot_id in self._snapshots or snapshot_id.end_offset < self._start:
            return None
        if snapshot_id.end_offset > self.end_offset():
            raise ValueError(f"snapshot {snapshot_id} is beyond the log end offset {self.end_offset()}")
        if snapshot_id.end_offset > 0 or snapshot_id.epoch != 0:
            epoch, end = self.end_offset_for_epoch(snapshot_id.epoch)
            if epoch != snapshot_id.epoch or end < snapshot_id.end_offset:
                raise ValueError(f"snapshot {snapshot_id} does not match the log: epoch {epoch} ends "
                                 f"at {end}")
        return MemorySnapshotWriter(self, snapshot_id, received=False)

    def receive_snapshot(self, snapshot_id: SnapshotId) -> MemorySnapshotWriter:
        latest = self.latest_snapshot()
        if latest is not None and snapshot_id < latest:
            raise ValueError(f"snapshot {snapshot_id} is older than the latest snapshot {latest}")
        return MemorySnapshotWriter(self, snapshot_id, received=True)

    def write_snapshot(self, snapshot_id: SnapshotId, batches: list[RecordBatch]) -> None:
        self._snapshots[snapshot_id] = b"".join(encode_batch(batch) for batch in batches)

    def install_snapshot(self, snapshot_id: SnapshotId, data: bytes) -> None:
        writer = self.receive_snapshot(snapshot_id)
        writer.append(data)
        writer.freeze()

    def _install(self, snapshot_id: SnapshotId, data: bytes) -> None:
        self._snapshots[snapshot_id] = data
        self._bases.clear()
        self._batches.clear()
        self._bytes.clear()
        self._keys.clear()
        self._archive = []
        self._archive_bytes = {}
        self._start = self._flushed = snapshot_id.end_offset
        self.mutations += 1
        self.installs += 1

    def delete_before_snapshot(self) -> None:
        snapshot = self.latest_snapshot()
        if snapshot is None or snapshot.end_offset <= self._start:
            return
        index = self._index_of(snapshot.end_offset)
        if index < len(self._batches) and self._batches[index].base_offset < snapshot.end_offset:
            return  # a batch straddles the snapshot end; keep everything (never happens here)
        self._archive.extend(self._keys[:index])
        for key, data in zip(self._keys[:index], self._bytes[:index], strict=True):
            self._archive_bytes[key[0]] = data
        del self._bases[:index], self._batches[:index], self._bytes[:index], self._keys[:index]
        self._start = snapshot.end_offset
        if not self._batches:
            self._flushed = max(self._flushed, self._start)
        for old in [sid for sid in self._snapshots if sid < snapshot]:
            del self._snapshots[old]
        self.mutations += 1

    # -- simulation ----------------------------------------------------------------------------

    def crash(self) -> None:
        """Lose everything not flushed."""
        if self.flushed_offset() < self.end_offset():
            self.truncate_to(self.flushed_offset())

    def all_keys(self) -> list[BatchKey]:
        """Keys of every batch this log ever held and still knows: archived ones, then live ones."""
        return self._archive + self._keys if self._archive else self._keys

    def live_keys(self) -> list[BatchKey]:
        return self._keys

    def durable_count(self) -> int:
        """How many live batches are flushed."""
        flushed = self.flushed_offset()
        return bisect.bisect_right(self._bases, flushed - 1) if self._bases else 0

    def batch_bytes(self, base_offset: int) -> bytes | None:
        index = bisect.bisect_left(self._bases, base_offset)
        if index < len(self._bases) and self._bases[index] == base_offset:
            return self._bytes[index]
        return self._archive_bytes.get(base_offset)


class MemorySnapshotWriter:
    """``api.SnapshotWriter`` in memory: the bytes become the snapshot at ``freeze`` (a crash before
    loses them, like a ``.part`` file); a received snapshot is checked as it comes and installed."""

    def __init__(self, log: MemoryLog, snapshot_id: SnapshotId, *, received: bool) -> None:
        self.log = log
        self.snapshot_id = snapshot_id
        self._data = bytearray()
        self._checker = SnapshotStreamChecker(f"snapshot {snapshot_id}") if received else None
        self.done = False
        log.writers_opened += 1

    @property
    def size(self) -> int:
        return len(self._data)

    def append(self, data: RecordBatch | bytes) -> None:
        if self.done:
            raise ValueError("the snapshot writer is closed")
        chunk = encode_batch(data) if isinstance(data, RecordBatch) else bytes(data)
        if self._checker is not None:
            self._checker.feed(chunk)
        self._data += chunk
        self.log.snapshot_appends += 1

    def freeze(self) -> None:
        if self.done:
            raise ValueError("the snapshot writer is closed")
        self.done = True
        self.log.writers_closed += 1
        if self._checker is None:
            self.log._snapshots[self.snapshot_id] = bytes(self._data)
            return
        self._checker.finish()
        latest = self.log.latest_snapshot()
        if latest is not None and self.snapshot_id < latest:
            raise ValueError(f"snapshot {self.snapshot_id} is older than the latest snapshot {latest}")
        self.log._install(self.snapshot_id, bytes(self._data))

    def abort(self) -> None:
        if not self.done:
            self.done = True
            self.log.writers_closed += 1
        self._data = bytearray()


class MemoryStore:
    """``quorum-state``: each write is atomic and durable at once."""

    def __init__(self) -> None:
        self.state: QuorumState | None = None
        self.writes = 0

    def read(self) -> QuorumState | None:
        return self.state

    def write(self, state: QuorumState) -> None:
        self.state = state
        self.writes += 1
