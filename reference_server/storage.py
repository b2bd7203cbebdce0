"""The metadata log and the election state on disk, in Kafka's layout and formats.

``FileReplicatedLog`` keeps ``<metadata dir>/__cluster_metadata-0`` the way ``KafkaMetadataLog`` and
``UnifiedLog`` do: segments ``<base offset, 20 digits>.log`` with their ``.index`` and ``.timeindex``
(written by :class:`~kafka_admin_kraft.records.SegmentWriter`, rolled at the configured size),
snapshots ``<end offset>-<epoch>.checkpoint`` (written as ``.part`` and renamed),
``leader-epoch-checkpoint`` (where each epoch starts; it answers ``end_offset_for_epoch``) and
``partition.metadata`` (topic id ``AAAAAAAAAAAAAAAAAAAAAQ``). ``FileQuorumStateStore`` keeps
``quorum-state``.

Opening a log (Kafka's ``KafkaMetadataLog.apply`` and ``LogLoader``, reduced to what a crash can
leave behind here):

1. ``.part`` / ``.deleted`` snapshot files and ``.tmp`` / ``.deleted`` / ``.cleaned`` files are removed.
2. The newest segment is recovered with :func:`~kafka_admin_kraft.records.recover_segment`: a torn or
   corrupt tail is cut and its indexes are rebuilt (``recovery`` says what was cut). Older segments
   were fsync'ed when they were rolled and are trusted.
3. The epoch cache is read from ``leader-epoch-checkpoint`` and completed from the batch headers of the
   newest segment (all segments when the file is missing or unreadable); entries at or beyond the log
   end offset are dropped, as ``LeaderEpochFileCache.truncateFromEnd`` does after recovery.
4. Snapshots below the first segment are deleted; if the log starts above 0 a snapshot must cover it.
5. If the latest snapshot is ahead of the log (a follower that crashed between installing a snapshot
   and truncating its log), the log restarts at the snapshot (``truncateToLatestSnapshot``).

Everything is streamed: segment scans read 1 MiB windows of batch headers, reads locate their
start through the offset index (binary search with ``pread``), nothing keeps a whole file in memory.
Python-level write buffers are pushed to the OS after every append, so reads see every appended
batch; ``flush`` makes them durable. Not thread-safe: one event loop owns a log. Appends, new
snapshots and ``quorum-state`` fail with ENOSPC while the fault file says the disk is full (``faults``).
"""

from __future__ import annotations

import bisect
import io
import logging
import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final, NamedTuple

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID, Uuid
from kafka_admin_kraft.records import (
    METADATA_PARTITION_DIR,
    BatchReader,
    RecordBatch,
    RecoveryResult,
    SegmentFiles,
    SegmentWriter,
    SnapshotId,
    SnapshotStreamChecker,
    SnapshotWriter,
    encode_batch,
    list_segments,
    list_snapshots,
    read_snapshot,
    recover_segment,
)
from kafka_admin_kraft.records.batch import CONTROL_FLAG, LOG_OVERHEAD, MIN_BATCH_LENGTH
from kafka_admin_kraft.records.fsutil import fsync_directory
from kafka_admin_kraft.records.segment import DEFAULT_INDEX_INTERVAL_BYTES, OFFSET_ENTRY, TIME_ENTRY
from kafka_admin_kraft.records.snapshot import DELETE_SUFFIX, PARTIAL_SUFFIX
from kafka_admin_kraft.storage import (
    EpochEntry,
    PartitionMetadata,
    QuorumState,
    StorageFormatError,
    read_leader_epoch_checkpoint,
    read_partition_metadata,
    read_quorum_state,
    write_leader_epoch_checkpoint,
    write_partition_metadata,
    write_quorum_state,
)
from kafka_admin_kraft.storage.leader_epoch_checkpoint import LEADER_EPOCH_CHECKPOINT_FILE
from kafka_admin_kraft.storage.partition_metadata import PARTITION_METADATA_FILE
from kafka_admin_kraft.storage.quorum_state import QUORUM_STATE_FILE

from . import faults

log = logging.getLogger(__name__)

DEFAULT_SEGMENT_BYTES: Final = 1024 * 1024 * 1024
INT32_MAX: Final = (1 << 31) - 1
SCAN_WINDOW: Final = 1 << 20
"""Most bytes read at a time when walking batch headers (the first read takes 64 KiB)."""
FIRST_SCAN_WINDOW: Final = 64 * 1024
_STRAY_SUFFIXES: Final = (PARTIAL_SUFFIX, DELETE_SUFFIX, ".deleted", ".cleaned", ".tmp")


class StorageError(Exception):
    """The partition directory is in a state Kafka would refuse to load."""


class OffsetOutOfRangeError(ValueError):
    """A read below the first offset still on disk."""


# --------------------------------------------------------------------------- batch headers

# The first 27 bytes of a v2 batch: base offset, length, partition leader epoch, magic, CRC,
# attributes, last offset delta (see kafka_admin_kraft.records.batch for the whole layout).
_HEAD: Final = struct.Struct(">qiibIhi")


class BatchHeader(NamedTuple):
    """Where a batch is in its file and the header fields the log needs."""

    position: int
    base_offset: int
    size: int
    epoch: int
    attributes: int
    last_offset: int

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)


def scan_batch_headers(path: str | os.PathLike[str], start: int = 0) -> Iterator[BatchHeader]:
    """The headers of the batches of a segment or snapshot file from byte ``start``, without
    decoding records or checking CRCs; stops at a batch the file ends inside (a torn tail).

    Reads windows of 64 KiB growing to 1 MiB (a read near the end of a log needs little); a batch
    larger than the window is skipped with a seek.
    """
    what = os.fspath(path)
    with open(path, "rb", buffering=0) as stream:
        file_size = os.fstat(stream.fileno()).st_size
        position = start
        window = b""
        window_start = start
        window_size = FIRST_SCAN_WINDOW
        unpack = _HEAD.unpack_from
        while position + _HEAD.size <= file_size:
            offset = position - window_start
            if offset < 0 or offset + _HEAD.size > len(window):
                stream.seek(position)
                window = stream.read(window_size)
                window_size = min(window_size * 2, SCAN_WINDOW)
                window_start = position
                offset = 0
                if len(window) < _HEAD.size:
                    return
            base_offset, length, epoch, _magic, _crc, attributes, last_delta = unpack(window, offset)
            if length < MIN_BATCH_LENGTH:
                raise CorruptRecordError(f"batch length {length} is below {MIN_BATCH_LENGTH}", what=what,
                                         path=f"batch at offset {base_offset}: length", offset=position + 8)
            size = LOG_OVERHEAD + length
            if position + size > file_size:
                return
            yield BatchHeader(position, base_offset, size, epoch, attributes, base_offset + last_delta)
            position += size


# --------------------------------------------------------------------------- helpers


def _delete_segment(files: SegmentFiles) -> None:
    for path in (files.log, files.index, files.time_index):
        path.unlink(missing_ok=True)


def _truncate_file(path: Path, size: int) -> None:
    with open(path, "r+b") as stream:
        stream.truncate(size)
        stream.flush()
        os.fsync(stream.fileno())


def _count_entries(path: Path, entry: struct.Struct, keep: int, field_index: int, limit: int,
                   valid_position: bool = False) -> int:
    """How many leading entries of an index file have ``field < limit`` (binary search with pread).

    With ``valid_position`` an entry whose position is 0 counts as zero padding (the first index
    entry of a segment never points at position 0).
    """
    if not path.exists():
        return 0
    with open(path, "rb", buffering=0) as stream:
        fd = stream.fileno()
        count = os.fstat(fd).st_size // entry.size
        low, high = 0, min(count, keep)
        while low < high:
            middle = (low + high) // 2
            fields = entry.unpack(os.pread(fd, entry.size, middle * entry.size))
            ok = fields[field_index] < limit and (not valid_position or fields[1] > 0)
            if ok:
                low = middle + 1
            else:
                high = middle
        return low


@dataclass(frozen=True)
class _Piece:
    """A validated batch waiting to be written."""

    data: bytes
    base_offset: int
    last_offset: int
    epoch: int


# --------------------------------------------------------------------------- the log


class FileReplicatedLog:
    """``ReplicatedLog`` over ``<metadata_dir>/__cluster_metadata-0`` (created when missing).

    ``segment_bytes`` is Kafka's ``metadata.log.segment.bytes`` (a segment rolls when the next batch
    would take it over); ``index_interval_bytes`` is ``log.index.interval.bytes``.
    """

    def __init__(self, metadata_dir: str | os.PathLike[str], *, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                 index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES, topic_id: Uuid = METADATA_TOPIC_ID
                 ) -> None:
        if segment_bytes < LOG_OVERHEAD:
            raise ValueError(f"segment_bytes {segment_bytes} is below {LOG_OVERHEAD}")
        self.metadata_dir = Path(metadata_dir)
        self.path = self.metadata_dir / METADATA_PARTITION_DIR
        self.segment_bytes = segment_bytes
        self.index_interval_bytes = index_interval_bytes
        self.topic_id = topic_id
        self.recovery: RecoveryResult | None = None
        """What opening the log cut from the newest segment (``truncated_bytes`` 0 when nothing)."""
        self.deleted_on_open: list[Path] = []
        """Stray files (partial snapshots, temporary files) removed when the log was opened."""
        self._bases: list[int] = []
        self._snapshots: list[SnapshotId] = []
        self._epochs: list[EpochEntry] = []
        self._end = 0
        self._flushed = 0
        self._closed = False
        self._open()

    # ------------------------------------------------------------------ opening

    def _open(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        self._remove_stray_files()
        self._check_partition_metadata()
        self._snapshots = list_snapshots(self.path)
        segments = list_segments(self.path)
        if not segments:
            base = self._snapshots[-1].end_offset if self._snapshots else 0
            self._bases = [base]
            self._writer = SegmentWriter(self.path, base, index_interval_bytes=self.index_interval_bytes)
            fsync_directory(self.path)
            self._end = base
        else:
            self._bases = [segment.base_offset for segment in segments]
            self.recovery = recover_segment(segments[-1].log, index_interval_bytes=self.index_interval_bytes)
            if self.recovery.truncated_bytes:
                log.warning("%s: recovery cut %d bytes after position %d (%s)", segments[-1].log,
                            self.recovery.truncated_bytes, self.recovery.valid_bytes, self.recovery.reason)
            self._writer = SegmentWriter(self.path, self._bases[-1],
                                         index_interval_bytes=self.index_interval_bytes)
            self._end = self._writer.next_offset
        self._flushed = self._end
        try:
            self._load_epoch_cache()
            self._recover_snapshots()
            self._truncate_to_latest_snapshot()
        except BaseException:
            self._writer.abandon()
            self._closed = True
            raise

    def _remove_stray_files(self) -> None:
        for name in sorted(os.listdir(self.path)):
            if name.endswith(_STRAY_SUFFIXES):
                target = self.path / name
                target.unlink(missing_ok=True)
                self.deleted_on_open.append(target)
                log.info("Deleted unneeded file %s", target)

    def _check_partition_metadata(self) -> None:
        target = self.path / PARTITION_METADATA_FILE
        if target.exists():
            stored = read_partition_metadata(target)
            if stored.topic_id != self.topic_id:
                raise StorageError(f"Tried to assign topic ID {self.topic_id} to log for topic partition "
                                   f"{METADATA_PARTITION_DIR},but log already contained topic ID "
                                   f"{stored.topic_id}")
        else:
            write_partition_metadata(target, PartitionMetadata(self.topic_id))

    def _load_epoch_cache(self) -> None:
        """The checkpoint, completed from the newest segment's batch headers as ``LogSegment.recover``
        does (an epoch is added only when it is newer than the cache's latest), then cut at the log
        end offset. Without a usable checkpoint (missing, unreadable, or empty while the log holds
        batches above its start) every segment is scanned."""
        checkpoint = self.path / LEADER_EPOCH_CHECKPOINT_FILE
        entries: list[EpochEntry] | None = None
        if checkpoint.exists():
            try:
                entries = read_leader_epoch_checkpoint(checkpoint)
            except StorageFormatError as exc:
                log.warning("%s is unreadable, rebuilding it from the log: %s", checkpoint, exc)
        # Batches below the log start (kept in a segment that also holds newer offsets) are not part
        # of the log any more: the cache forgot them when the start moved (truncateFromStart).
        start = self.start_offset()
        full_scan = entries is None or (not entries and self._end > start)
        self._epochs = [] if full_scan else list(entries or [])
        for base in self._bases if full_scan else self._bases[-1:]:
            for header in scan_batch_headers(SegmentFiles.of(self.path, base).log):
                if header.epoch >= 0 and header.base_offset >= start and (
                        not self._epochs or header.epoch > self._epochs[-1].epoch):
                    self._assign_epoch(header.epoch, header.base_offset)
        self._epochs = [entry for entry in self._epochs if entry.start_offset < self._end]
        if entries != self._epochs:
            self._write_epoch_checkpoint()

    def _recover_snapshots(self) -> None:
        """``KafkaMetadataLog.recoverSnapshots``: drop snapshots below the log start and insist that
        a log starting above 0 is covered by a snapshot."""
        log_start = self._bases[0]
        if log_start > 0 and (not self._snapshots or self._snapshots[-1].end_offset < log_start):
            latest = self._snapshots[-1] if self._snapshots else None
            raise StorageError("Inconsistent snapshot state: there must be a snapshot at an offset larger "
                               f"then the current log start offset {log_start}, but the latest snapshot is "
                               f"{latest}")
        for snapshot_id in [item for item in self._snapshots if item.end_offset < log_start]:
            self._delete_snapshot(snapshot_id)

    def _truncate_to_latest_snapshot(self) -> None:
        latest = self.latest_snapshot()
        if latest is None:
            return
        log_epoch = self._epochs[-1].epoch if self._epochs else 0
        if latest.epoch > log_epoch or (latest.epoch == log_epoch and latest.end_offset > self._end):
            log.info("The latest snapshot %s is ahead of the log (end offset %d, epoch %d): restarting "
                     "the log at it", latest, self._end, log_epoch)
            self._truncate_fully_and_start_at(latest.end_offset)
            for snapshot_id in [item for item in self._snapshots if item < latest]:
                self._delete_snapshot(snapshot_id)

    # ------------------------------------------------------------------ epoch cache

    def _assign_epoch(self, epoch: int, start_offset: int) -> bool:
        """``LeaderEpochFileCache.assign``: a new entry when the epoch is new; entries that would no
        longer be monotonic are dropped. Negative epochs are not cached."""
        if epoch < 0:
            return False
        if self._epochs:
            latest = self._epochs[-1]
            if epoch == latest.epoch and start_offset >= latest.start_offset:
                return False
        self._epochs = [entry for entry in self._epochs
                        if entry.epoch < epoch and entry.start_offset < start_offset]
        self._epochs.append(EpochEntry(epoch, start_offset))
        return True

    def _write_epoch_checkpoint(self) -> None:
        write_leader_epoch_checkpoint(self.path / LEADER_EPOCH_CHECKPOINT_FILE, self._epochs)

    def epoch_entries(self) -> list[EpochEntry]:
        """A copy of the epoch cache: (epoch, start offset) for each epoch in the log."""
        return list(self._epochs)

    # ------------------------------------------------------------------ ReplicatedLog: state

    def start_offset(self) -> int:
        latest = self.latest_snapshot()
        return max(latest.end_offset if latest is not None else 0, self._bases[0])

    def end_offset(self) -> int:
        return self._end

    def flushed_offset(self) -> int:
        return self._flushed

    def last_epoch(self) -> int:
        if self._epochs:
            return self._epochs[-1].epoch
        latest = self.latest_snapshot()
        return latest.epoch if latest is not None else 0

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """Kafka's ``KafkaMetadataLog.endOffsetForEpoch`` over ``LeaderEpochFileCache.endOffsetFor``.

        * ``epoch`` is the latest epoch: (epoch, log end offset);
        * an older epoch in the cache or between two of them: (largest cached epoch <= it, start
          offset of the next cached epoch);
        * below every cached epoch: (epoch, start of the first cached epoch) - or (earliest snapshot
          epoch, its end offset) when that start is the earliest snapshot's end offset;
        * above every cached epoch, or an empty cache: (last epoch, log end offset).
        """
        if self._epochs and epoch >= 0:
            if epoch == self._epochs[-1].epoch:
                return epoch, self._end
            epochs = [entry.epoch for entry in self._epochs]
            higher = bisect.bisect_right(epochs, epoch)
            if higher < len(self._epochs):
                start = self._epochs[higher].start_offset
                if higher == 0:
                    earliest = self._snapshots[0] if self._snapshots else None
                    if earliest is not None and earliest.end_offset == start:
                        return earliest.epoch, earliest.end_offset
                    return epoch, start
                return self._epochs[higher - 1].epoch, start
        return self.last_epoch(), self._end

    # ------------------------------------------------------------------ ReplicatedLog: appends

    def append(self, batch: RecordBatch) -> None:
        self._check_open()
        if batch.base_offset != self._end:
            raise ValueError(f"batch base offset {batch.base_offset} is not the log end offset {self._end}")
        if not batch.records or batch.last_offset_delta < 0:
            raise ValueError(f"batch at offset {batch.base_offset} holds no records")
        epoch = batch.partition_leader_epoch
        if epoch < self.last_epoch():
            raise ValueError(f"batch epoch {epoch} is below the log's last epoch {self.last_epoch()}")
        self._write_pieces([_Piece(encode_batch(batch), batch.base_offset, batch.last_offset, epoch)])

    def append_bytes(self, data: bytes) -> int:
        """Validate every batch (CRC, record layout, offsets continuing the log, epochs not going
        back), then append them all; a partial batch at the end is ignored, as Kafka's fetcher does."""
        self._check_open()
        what = "fetched records"
        reader = BatchReader(io.BytesIO(data), path=what, start=0, allow_torn_tail=True)
        pieces: list[_Piece] = []
        expected = self._end
        floor = self.last_epoch()
        for batch in reader:
            if batch.base_offset != expected:
                raise CorruptRecordError(f"batch offset {batch.base_offset} does not continue the log at "
                                         f"offset {expected}", what=what, offset=batch.position)
            if batch.last_offset_delta < 0 or not batch.records:
                raise CorruptRecordError(f"batch at offset {batch.base_offset} holds no records", what=what,
                                         offset=batch.position)
            epoch = batch.partition_leader_epoch
            if epoch < floor:
                raise CorruptRecordError(f"batch at offset {batch.base_offset} has epoch {epoch}, below the "
                                         f"previous epoch {floor}", what=what, offset=batch.position + 12)
            pieces.append(_Piece(data[batch.position:batch.position + batch.size_in_bytes], batch.base_offset,
                                 batch.last_offset, epoch))
            expected = batch.next_offset
            floor = epoch
        if reader.torn_tail is not None:
            log.debug("ignoring a partial batch at the end of fetched records: %s", reader.torn_tail.reason)
        self._write_pieces(pieces)
        return self._end

    def _write_pieces(self, pieces: list[_Piece]) -> None:
        if not pieces:
            return
        faults.check_disk(self.path)
        changed = False
        for piece in pieces:
            changed |= self._assign_epoch(piece.epoch, piece.base_offset)
        if changed:
            # As UnifiedLog does: the epoch cache is written before the batches that start the epoch.
            self._write_epoch_checkpoint()
        for piece in pieces:
            writer = self._writer
            if writer.size > 0 and (writer.size + len(piece.data) > self.segment_bytes
                                    or piece.last_offset - writer.base_offset > INT32_MAX):
                self._roll(piece.base_offset)
            self._writer.append(piece.data)
            self._end = piece.last_offset + 1
        self._writer.push()

    def _roll(self, base_offset: int) -> None:
        """Close the active segment (final time index entry, fsync) and start one at ``base_offset``."""
        self._writer.close()
        self._writer = SegmentWriter(self.path, base_offset, index_interval_bytes=self.index_interval_bytes)
        self._bases.append(base_offset)
        fsync_directory(self.path)

    def flush(self) -> None:
        self._check_open()
        if self._flushed < self._end:
            self._writer.flush()
        self._flushed = self._end

    # ------------------------------------------------------------------ ReplicatedLog: reads

    def _segment_index(self, offset: int) -> int:
        return max(bisect.bisect_right(self._bases, offset) - 1, 0)

    def _index_position(self, base: int, offset: int) -> int:
        """Byte position of the last offset index entry at or below ``offset`` (0 without one)."""
        files = SegmentFiles.of(self.path, base)
        count = _count_entries(files.index, OFFSET_ENTRY, 1 << 62, 0, offset - base + 1, valid_position=True)
        if count == 0:
            return 0
        with open(files.index, "rb", buffering=0) as stream:
            return int(OFFSET_ENTRY.unpack(os.pread(stream.fileno(), OFFSET_ENTRY.size,
                                                    (count - 1) * OFFSET_ENTRY.size))[1])

    def read(self, start_offset: int, max_bytes: int) -> bytes:
        """Whole batches of one segment, from the one holding ``start_offset``: at least one, then as
        many as fit in ``max_bytes``. Empty at or beyond the end of the log.

        The offset index gives the position to start from; batch headers are walked from there."""
        self._check_open()
        end = self._end
        if start_offset >= end:
            return b""
        if start_offset < self._bases[0]:
            raise OffsetOutOfRangeError(f"offset {start_offset} is below the first offset on disk "
                                        f"{self._bases[0]}")
        for index in range(self._segment_index(start_offset), len(self._bases)):
            base = self._bases[index]
            path = SegmentFiles.of(self.path, base).log
            first: BatchHeader | None = None
            total = 0
            for header in scan_batch_headers(path, self._index_position(base, start_offset)):
                if first is None:
                    if header.last_offset >= start_offset:
                        first, total = header, header.size
                elif header.base_offset >= end or total + header.size > max_bytes:
                    break
                else:
                    total += header.size
            if first is not None:
                with open(path, "rb", buffering=0) as stream:
                    return os.pread(stream.fileno(), total, first.position)
        return b""

    def batches(self, start_offset: int) -> Iterator[RecordBatch]:
        """Decoded batches from the one holding ``start_offset`` up to the end offset at the time of
        the call. The log must not be truncated while the iterator is in use."""
        self._check_open()
        end = self._end
        if start_offset >= end:
            return
        first = self._segment_index(start_offset)
        for index in range(first, len(self._bases)):
            base = self._bases[index]
            position = 0
            if index == first and base <= start_offset:
                position = self._index_position(base, start_offset)
            path = SegmentFiles.of(self.path, base).log
            with open(path, "rb") as stream:
                stream.seek(position)
                for batch in BatchReader(stream, path=path, start=position, allow_torn_tail=False):
                    if batch.base_offset >= end:
                        return
                    if batch.last_offset >= start_offset:
                        yield batch

    def control_batches(self, start_offset: int) -> Iterator[RecordBatch]:
        """Like :meth:`batches` but only the control batches, found from their headers without
        decoding the data batches in between (for kraft.version and voter-set replay)."""
        self._check_open()
        end = self._end
        for index in range(self._segment_index(start_offset), len(self._bases)):
            path = SegmentFiles.of(self.path, self._bases[index]).log
            headers = [header for header in scan_batch_headers(path) if header.is_control
                       and header.last_offset >= start_offset and header.base_offset < end]
            if not headers:
                continue
            with open(path, "rb", buffering=0) as stream:
                for header in headers:
                    data = os.pread(stream.fileno(), header.size, header.position)
                    yield from BatchReader(io.BytesIO(data), path=path, start=header.position,
                                           allow_torn_tail=False)

    def has_data_batches(self) -> bool:
        """True if the log holds a batch that is not a control batch (stops at the first one)."""
        for base in self._bases:
            for header in scan_batch_headers(SegmentFiles.of(self.path, base).log):
                if header.base_offset >= self._end:
                    return False
                if not header.is_control:
                    return True
        return False

    # ------------------------------------------------------------------ ReplicatedLog: truncation

    def truncate_to(self, offset: int) -> None:
        """Remove the batches holding offsets at or above ``offset`` (as ``LogSegment.truncateTo``, a
        batch that straddles ``offset`` goes whole, so the end offset may end up below ``offset``)."""
        self._check_open()
        if offset >= self._end:
            return
        if offset < self.start_offset():
            raise ValueError(f"cannot truncate to {offset}, below the log start offset {self.start_offset()}")
        self._writer.close()
        while len(self._bases) > 1 and self._bases[-1] > offset:
            _delete_segment(SegmentFiles.of(self.path, self._bases.pop()))
        base = self._bases[-1]
        files = SegmentFiles.of(self.path, base)
        found = next((header for header in scan_batch_headers(files.log, self._index_position(base, offset))
                      if header.last_offset >= offset), None)
        if found is not None:
            _truncate_file(files.log, found.position)
            kept = _count_entries(files.index, OFFSET_ENTRY, 1 << 62, 1, found.position, valid_position=True)
            if files.index.exists():
                _truncate_file(files.index, kept * OFFSET_ENTRY.size)
            kept = _count_entries(files.time_index, TIME_ENTRY, 1 << 62, 1, found.base_offset - base)
            if files.time_index.exists():
                _truncate_file(files.time_index, kept * TIME_ENTRY.size)
        fsync_directory(self.path)
        self._writer = SegmentWriter(self.path, base, index_interval_bytes=self.index_interval_bytes)
        self._end = self._writer.next_offset
        self._flushed = min(self._flushed, self._end)
        epochs = [entry for entry in self._epochs if entry.start_offset < self._end]
        if epochs != self._epochs:
            self._epochs = epochs
            self._write_epoch_checkpoint()

    def _truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment (newest first) and start an empty one at ``offset``; the epoch cache
        is cleared."""
        if not self._writer.closed:
            self._writer.close()
        # The emptied epoch cache goes first: a crash before the segments are gone leaves an empty
        # checkpoint beside a non-empty log, which makes the next open rebuild the cache from every
        # segment (and then restart the log at the snapshot again).
        self._epochs = []
        self._write_epoch_checkpoint()
        for base in reversed(self._bases):
            _delete_segment(SegmentFiles.of(self.path, base))
        self._writer = SegmentWriter(self.path, offset, index_interval_bytes=self.index_interval_bytes)
        fsync_directory(self.path)
        self._bases = [offset]
        self._end = self._flushed = offset

    # ------------------------------------------------------------------ ReplicatedLog: snapshots

    def latest_snapshot(self) -> SnapshotId | None:
        return self._snapshots[-1] if self._snapshots else None

    def snapshots(self) -> list[SnapshotId]:
        """Every frozen snapshot, oldest first."""
        return list(self._snapshots)

    def snapshot_path(self, snapshot_id: SnapshotId) -> Path:
        return self.path / snapshot_id.file_name

    def _known_snapshot(self, snapshot_id: SnapshotId) -> Path:
        if snapshot_id not in self._snapshots:
            raise KeyError(f"no snapshot {snapshot_id.file_name} in {self.path}")
        return self.snapshot_path(snapshot_id)

    def read_snapshot(self, snapshot_id: SnapshotId, position: int, max_bytes: int) -> bytes:
        with open(self._known_snapshot(snapshot_id), "rb", buffering=0) as stream:
            return os.pread(stream.fileno(), max(max_bytes, 0), position)

    def snapshot_size(self, snapshot_id: SnapshotId) -> int:
        return self._known_snapshot(snapshot_id).stat().st_size

    def snapshot_batches(self, snapshot_id: SnapshotId) -> Iterator[RecordBatch]:
        return read_snapshot(self._known_snapshot(snapshot_id))

    def snapshot_control_batches(self, snapshot_id: SnapshotId) -> Iterator[RecordBatch]:
        """The control batches of a snapshot, found from the headers (header, kraft.version and voters
        records, footer) without decoding its data batches."""
        path = self._known_snapshot(snapshot_id)
        headers = [header for header in scan_batch_headers(path) if header.is_control]
        with open(path, "rb", buffering=0) as stream:
            for header in headers:
                data = os.pread(stream.fileno(), header.size, header.position)
                yield from BatchReader(io.BytesIO(data), path=path, start=header.position,
                                       allow_torn_tail=False)

    def snapshot_has_data_batches(self, snapshot_id: SnapshotId) -> bool:
        return any(not header.is_control for header in scan_batch_headers(self._known_snapshot(snapshot_id)))

    def create_snapshot(self, snapshot_id: SnapshotId) -> _CreatedSnapshot | None:
        """Start writing a snapshot of the log up to ``snapshot_id.end_offset`` (batches stream to a
        ``.part`` file; ``freeze`` renames it and registers the snapshot).

        As ``KafkaMetadataLog.createNewSnapshot``: an existing id or one below the log start gives
        None; the id must lie within the log and carry the epoch the log has at that offset.
        """
        self._check_open()
        faults.check_disk(self.path)
        if snapshot_id in self._snapshots or snapshot_id.end_offset < self.start_offset():
            return None
        if snapshot_id.end_offset > self._end:
            raise ValueError(f"snapshot {snapshot_id} is beyond the log end offset {self._end}")
        if snapshot_id.end_offset > 0 or snapshot_id.epoch != 0:
            epoch, end = self.end_offset_for_epoch(snapshot_id.epoch)
            if epoch != snapshot_id.epoch or end < snapshot_id.end_offset:
                raise ValueError(f"snapshot {snapshot_id} is not valid according to the log: epoch "
                                 f"{snapshot_id.epoch} ends at offset {end} with epoch {epoch}")
        return _CreatedSnapshot(self, snapshot_id)

    def receive_snapshot(self, snapshot_id: SnapshotId) -> _ReceivedSnapshot:
        """Start copying a snapshot from the leader: chunks stream to a ``.part`` file and are
        checked as they come; ``freeze`` checks the end, freezes it and restarts the log at its end
        offset (``install``)."""
        self._check_open()
        faults.check_disk(self.path)
        latest = self.latest_snapshot()
        if latest is not None and snapshot_id < latest:
            raise ValueError(f"snapshot {snapshot_id} is older than the latest snapshot {latest}")
        return _ReceivedSnapshot(self, snapshot_id)

    def write_snapshot(self, snapshot_id: SnapshotId, batches: Iterable[RecordBatch]) -> None:
        """Write and freeze a snapshot at once (``create_snapshot``; nothing when it returns None)."""
        writer = self.create_snapshot(snapshot_id)
        if writer is None:
            return
        try:
            for batch in batches:
                writer.append(batch)
        except BaseException:
            writer.abort()
            raise
        writer.freeze()

    def install_snapshot(self, snapshot_id: SnapshotId, data: bytes) -> None:
        """Check and freeze a fetched snapshot held in memory, then restart the log at its end offset
        (``receive_snapshot`` with one chunk)."""
        self._check_open()
        if snapshot_id in self._snapshots:
            self._install(snapshot_id)
            return
        writer = self.receive_snapshot(snapshot_id)
        try:
            writer.append(data)
        except BaseException:
            writer.abort()
            raise
        writer.freeze()

    def _install(self, snapshot_id: SnapshotId) -> None:
        """Restart the log at a frozen snapshot's end offset (the snapshot is frozen first, so a
        crash in between is finished on the next open) and drop older snapshots."""
        self._truncate_fully_and_start_at(snapshot_id.end_offset)
        for older in [item for item in self._snapshots if item < snapshot_id]:
            self._delete_snapshot(older)

    def _delete_snapshot(self, snapshot_id: SnapshotId) -> None:
        self.snapshot_path(snapshot_id).unlink(missing_ok=True)
        if snapshot_id in self._snapshots:
            self._snapshots.remove(snapshot_id)
        log.info("Deleted snapshot %s", snapshot_id.file_name)

    def delete_before_snapshot(self) -> None:
        """Delete the segments wholly below the latest snapshot (never the active one) and every
        older snapshot; the epoch cache forgets what lies below (``truncateFromStart``)."""
        self._check_open()
        faults.check_disk(self.path)
        latest = self.latest_snapshot()
        if latest is None:
            return
        while len(self._bases) > 1 and self._bases[1] <= latest.end_offset:
            _delete_segment(SegmentFiles.of(self.path, self._bases.pop(0)))
        for older in [item for item in self._snapshots if item < latest]:
            self._delete_snapshot(older)
        fsync_directory(self.path)
        removed = [entry for entry in self._epochs if entry.start_offset <= latest.end_offset]
        if removed:
            kept = [entry for entry in self._epochs if entry.start_offset > latest.end_offset]
            updated = [EpochEntry(removed[-1].epoch, latest.end_offset), *kept]
            # An entry starting at the end offset is what the next open would drop (truncateFromEnd);
            # without it the answers are the same, from the snapshot (whose epoch is that entry's).
            updated = [entry for entry in updated if entry.start_offset < self._end]
            if updated != self._epochs:
                self._epochs = updated
                self._write_epoch_checkpoint()

    # ------------------------------------------------------------------ lifecycle

    def segment_bases(self) -> list[int]:
        """Base offsets of the segments on disk, oldest first (the last one is active)."""
        return list(self._bases)

    def size_in_bytes(self) -> int:
        """Bytes of every segment (what ``metadata.max.retention.bytes`` counts with the snapshots)."""
        return sum(SegmentFiles.of(self.path, base).log.stat().st_size for base in self._bases)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"the log in {self.path} is closed")

    def close(self) -> None:
        """Clean close: the active segment gets its final time index entry and is fsync'ed."""
        if not self._closed:
            self._writer.close()
            self._flushed = self._end
            self._closed = True

    def abandon(self) -> None:
        """Drop the open files without a clean close, as ``kill -9`` would (tests)."""
        if not self._closed:
            self._writer.abandon()
            self._closed = True

    def __enter__(self) -> FileReplicatedLog:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"FileReplicatedLog({str(self.path)!r}, start={self.start_offset()}, end={self._end}, "
                f"segments={len(self._bases)}, snapshots={[s.file_name for s in self._snapshots]})")


# --------------------------------------------------------------------------- snapshot writers


class _CreatedSnapshot:
    """``api.SnapshotWriter`` for a snapshot the core generates: ``SnapshotWriter`` (``.part`` file,
    fsync and rename on ``freeze``), registered with the log once frozen."""

    def __init__(self, log: FileReplicatedLog, snapshot_id: SnapshotId) -> None:
        self._log = log
        self._writer = SnapshotWriter(log.path, snapshot_id)
        self.snapshot_id = snapshot_id

    @property
    def size(self) -> int:
        return self._writer.size

    def append(self, data: RecordBatch | bytes) -> None:
        self._writer.append(data)

    def freeze(self) -> None:
        self._log._check_open()
        self._writer.freeze()
        if self.snapshot_id not in self._log._snapshots:
            bisect.insort(self._log._snapshots, self.snapshot_id)

    def abort(self) -> None:
        self._writer.abort()


class _ReceivedSnapshot(_CreatedSnapshot):
    """``api.SnapshotWriter`` for a snapshot copied from the leader: each chunk is checked
    (``SnapshotStreamChecker``) and written to the ``.part`` file as it arrives; ``freeze`` installs."""

    def __init__(self, log: FileReplicatedLog, snapshot_id: SnapshotId) -> None:
        super().__init__(log, snapshot_id)
        self._checker = SnapshotStreamChecker(f"snapshot {snapshot_id.file_name}")

    def append(self, data: RecordBatch | bytes) -> None:
        chunk = encode_batch(data) if isinstance(data, RecordBatch) else data
        self._checker.feed(chunk)
        self._writer.append(chunk)

    def freeze(self) -> None:
        try:
            self._checker.finish()
        except BaseException:
            self.abort()
            raise
        latest = self._log.latest_snapshot()
        if latest is not None and self.snapshot_id < latest:
            self.abort()
            raise ValueError(f"snapshot {self.snapshot_id} is older than the latest snapshot {latest}")
        super().freeze()
        self._log._install(self.snapshot_id)


# --------------------------------------------------------------------------- quorum-state


class FileQuorumStateStore:
    """``QuorumStateStore`` over ``<partition dir>/quorum-state``.

    Kafka writes data version 1 when kraft.version is 1 and version 0 otherwise
    (``KRaftVersion.quorumStateVersion``); ``write`` converts the state it is given accordingly:
    version 0 carries the voter ids (``current_voters``, from the state or else ``voter_ids``) and no
    directory id, version 1 the voted directory id and neither cluster id nor voters. The file is
    replaced atomically (``quorum-state.tmp``, fsync, rename, directory fsync).
    """

    def __init__(self, partition_dir: str | os.PathLike[str], *, kraft_version: int = 0,
                 voter_ids: Iterable[int] = ()) -> None:
        self.path = Path(partition_dir) / QUORUM_STATE_FILE
        self.kraft_version = kraft_version
        self.voter_ids: tuple[int, ...] = tuple(voter_ids)

    def read(self) -> QuorumState | None:
        """The stored state, None when there is no file yet. A malformed file raises
        :class:`~kafka_admin_kraft.storage.StorageFormatError`, as Kafka refuses to start on one."""
        if not self.path.exists():
            return None
        return read_quorum_state(self.path)

    def write(self, state: QuorumState) -> None:
        faults.check_disk(self.path.parent)
        write_quorum_state(self.path, self.convert(state))

    def convert(self, state: QuorumState) -> QuorumState:
        """``state`` at the data version this store writes."""
        if self.kraft_version >= 1:
            return QuorumState(1, state.leader_id, state.leader_epoch, state.voted_id,
                               state.voted_directory_id)
        voters = state.current_voters if state.current_voters is not None else tuple(self.voter_ids)
        return QuorumState(0, state.leader_id, state.leader_epoch, state.voted_id, cluster_id="",
                           applied_offset=0, current_voters=voters)


__all__ = [
    "BatchHeader",
    "FileQuorumStateStore",
    "FileReplicatedLog",
    "OffsetOutOfRangeError",
    "StorageError",
    "scan_batch_headers",
]
