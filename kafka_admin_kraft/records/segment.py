"""Log segments: ``<base offset>.log`` with its ``.index`` and ``.timeindex``, written and recovered
the way Kafka's log layer does, so that a Kafka broker and our tools accept each other's files.

Index policy (Kafka's ``LogSegment``): before appending a batch, if more than
``index.interval.bytes`` bytes were appended since the last index entry, the offset index gets
(batch last offset, batch position) and the time index gets (largest timestamp so far, its offset)
unless that timestamp is not larger than the last time entry. A clean close appends that final time
entry too. Kafka preallocates index files while a segment is active and trims them on close; this
writer appends entries as they come, so its files always look like those after a clean close.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Final, NamedTuple

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records.batch import (
    BATCH_HEADER_SIZE,
    HEADER,
    LOG_OVERHEAD,
    RecordBatch,
    encode_batch,
)
from kafka_admin_kraft.records.reader import BatchReader

LOG_SUFFIX: Final = ".log"
INDEX_SUFFIX: Final = ".index"
TIME_INDEX_SUFFIX: Final = ".timeindex"
DEFAULT_INDEX_INTERVAL_BYTES: Final = 4096
INT32_MAX: Final = 0x7FFFFFFF

# Offset index entry, 8 bytes: int32 offset relative to the segment base offset, int32 position.
OFFSET_ENTRY: Final = struct.Struct(">ii")
# Time index entry, 12 bytes: int64 timestamp, int32 offset relative to the segment base offset.
TIME_ENTRY: Final = struct.Struct(">qi")

_SEGMENT_NAME: Final = re.compile(r"^(\d{20})\.log$")


class OffsetIndexEntry(NamedTuple):
    relative_offset: int
    position: int


class TimeIndexEntry(NamedTuple):
    timestamp: int
    relative_offset: int


def offset_file_prefix(offset: int) -> str:
    """Kafka's file-name form of an offset: 20 digits, zero-padded."""
    return f"{offset:020d}"


def log_file_name(base_offset: int) -> str:
    return offset_file_prefix(base_offset) + LOG_SUFFIX


def parse_log_file_name(name: str) -> int | None:
    """Base offset of a ``<20 digits>.log`` name, None for any other file."""
    match = _SEGMENT_NAME.match(name)
    return int(match.group(1)) if match else None


@dataclass(frozen=True, slots=True)
class SegmentFiles:
    """The paths of one segment."""

    base_offset: int
    log: Path
    index: Path
    time_index: Path

    @classmethod
    def of(cls, directory: str | os.PathLike[str], base_offset: int) -> SegmentFiles:
        stem = Path(directory) / offset_file_prefix(base_offset)
        return cls(base_offset, stem.with_suffix(LOG_SUFFIX), stem.with_suffix(INDEX_SUFFIX),
                   stem.with_suffix(TIME_INDEX_SUFFIX))


def list_segments(directory: str | os.PathLike[str]) -> list[SegmentFiles]:
    """The segments of a partition directory in offset order (``.deleted``/``.swap`` files ignored)."""
    offsets = [offset for name in os.listdir(directory)
               if (offset := parse_log_file_name(name)) is not None]
    return [SegmentFiles.of(directory, offset) for offset in sorted(offsets)]


def _read_entries(path: Path, entry: struct.Struct) -> list[tuple[int, int]]:
    data = path.read_bytes()
    if len(data) % entry.size:
        raise CorruptRecordError(f"index holds {len(data)} bytes, not a multiple of {entry.size}",
                                 what=str(path), offset=len(data) - len(data) % entry.size)
    return list(entry.iter_unpack(data))


def read_offset_index(path: str | os.PathLike[str]) -> list[OffsetIndexEntry]:
    """Entries of an ``.index`` file. An active segment's file may end in zero padding."""
    return [OffsetIndexEntry(*item) for item in _read_entries(Path(path), OFFSET_ENTRY)]


def read_time_index(path: str | os.PathLike[str]) -> list[TimeIndexEntry]:
    """Entries of a ``.timeindex`` file. An active segment's file may end in zero padding."""
    return [TimeIndexEntry(*item) for item in _read_entries(Path(path), TIME_ENTRY)]


class IndexBuilder:
    """Applies Kafka's index policy batch by batch; new entries collect in the two lists until the
    caller writes them out."""

    def __init__(self, base_offset: int, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES, *,
                 last_time_entry: TimeIndexEntry | None = None) -> None:
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.bytes_since_last_entry = 0
        self.offset_entries: list[OffsetIndexEntry] = []
        self.time_entries: list[TimeIndexEntry] = []
        # Kafka's "max timestamp so far" starts from the last time index entry, or (-1, base).
        self._last_time = last_time_entry or TimeIndexEntry(-1, 0)
        self._max_time = self._last_time

    def add(self, position: int, size: int, last_offset: int, max_timestamp: int) -> None:
        """Account for one batch appended at ``position``."""
        relative = last_offset - self.base_offset
        if not 0 <= relative <= INT32_MAX:
            raise ValueError(f"offset {last_offset} cannot be indexed in the segment at {self.base_offset}")
        if max_timestamp > self._max_time.timestamp:
            self._max_time = TimeIndexEntry(max_timestamp, relative)
        if self.bytes_since_last_entry > self.index_interval_bytes:
            self.offset_entries.append(OffsetIndexEntry(relative, position))
            self._maybe_append_time()
            self.bytes_since_last_entry = 0
        self.bytes_since_last_entry += size

    def close(self) -> None:
        """The entry a clean close adds: the largest timestamp, if newer than the last entry."""
        self._maybe_append_time()

    def _maybe_append_time(self) -> None:
        if self._max_time.timestamp > self._last_time.timestamp:
            self.time_entries.append(self._max_time)
            self._last_time = self._max_time


def _batch_facts(data: bytes) -> tuple[int, int, int]:
    """(base offset, last offset, max timestamp) of one encoded batch."""
    fields = HEADER.unpack_from(data, 0)
    return fields[0], fields[0] + fields[6], fields[8]


class SegmentWriter:
    """Appends batches to one segment and keeps its indexes as Kafka does.

    Opening an existing segment continues it: Kafka starts counting index bytes from zero again and
    takes the largest timestamp so far from the time index's last entry. Callers recover a segment
    (:func:`recover_segment`) before continuing it after a crash.
    """

    def __init__(self, directory: str | os.PathLike[str], base_offset: int, *,
                 index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES) -> None:
        self.files = SegmentFiles.of(directory, base_offset)
        self.base_offset = base_offset
        time_entries = read_time_index(self.files.time_index) if self.files.time_index.exists() else []
        self._index = IndexBuilder(base_offset, index_interval_bytes,
                                   last_time_entry=time_entries[-1] if time_entries else None)
        self.next_offset = self._scan_next_offset() if self.files.log.exists() else base_offset
        self._log: BinaryIO = open(self.files.log, "ab")  # noqa: SIM115 - closed by close()
        self._offset_index: BinaryIO = open(self.files.index, "ab")  # noqa: SIM115
        self._time_index: BinaryIO = open(self.files.time_index, "ab")  # noqa: SIM115
        self.size = self._log.tell()
        self._closed = False

    def _scan_next_offset(self) -> int:
        entries = read_offset_index(self.files.index) if self.files.index.exists() else []
        start = entries[-1].position if entries else 0
        next_offset = self.base_offset
        with open(self.files.log, "rb") as stream:
            stream.seek(start)
            reader = BatchReader(stream, path=self.files.log, start=start, allow_torn_tail=False)
            for batch in reader:
                next_offset = batch.next_offset
        return next_offset

    def append(self, batch: RecordBatch | bytes) -> int:
        """Append one batch (decoded or encoded); return its position in the log file."""
        data = encode_batch(batch) if isinstance(batch, RecordBatch) else batch
        if len(data) < BATCH_HEADER_SIZE or len(data) != LOG_OVERHEAD + HEADER.unpack_from(data, 0)[1]:
            raise ValueError("append takes exactly one encoded batch")
        base_offset, last_offset, max_timestamp = _batch_facts(data)
        if base_offset < self.next_offset:
            raise ValueError(f"batch at offset {base_offset} is below the next offset {self.next_offset}")
        position = self.size
        self._index.add(position, len(data), last_offset, max_timestamp)
        self._log.write(data)
        self.size += len(data)
        self.next_offset = last_offset + 1
        self._write_new_entries()
        return position

    def _write_new_entries(self) -> None:
        for entry in self._index.offset_entries:
            self._offset_index.write(OFFSET_ENTRY.pack(*entry))
        for time_entry in self._index.time_entries:
            self._time_index.write(TIME_ENTRY.pack(*time_entry))
        self._index.offset_entries.clear()
        self._index.time_entries.clear()

    def push(self) -> None:
        """Hand buffered bytes to the operating system (no fsync), so other readers see them."""
        for stream in (self._log, self._offset_index, self._time_index):
            stream.flush()

    def flush(self) -> None:
        """Write everything through to the disk (fsync the log and both indexes)."""
        self.push()
        for stream in (self._log, self._offset_index, self._time_index):
            os.fsync(stream.fileno())

    @property
    def closed(self) -> bool:
        return self._closed

    def abandon(self) -> None:
        """Close the files as a killed process would: no final index entry, no fsync."""
        for stream in (self._log, self._offset_index, self._time_index):
            stream.close()
        self._closed = True

    def close(self) -> None:
        """Clean close: the final time index entry, fsync, close."""
        if self._closed:
            return
        self._index.close()
        self._write_new_entries()
        self.flush()
        for stream in (self._log, self._offset_index, self._time_index):
            stream.close()
        self._closed = True

    def __enter__(self) -> SegmentWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class RecoveryResult:
    """What :func:`recover_segment` did: bytes kept, bytes cut, and why (empty if nothing was cut)."""

    valid_bytes: int
    truncated_bytes: int
    reason: str
    next_offset: int


def recover_segment(log_path: str | os.PathLike[str], *,
                    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES) -> RecoveryResult:
    """Cut a segment after its last valid batch and rebuild its indexes, as Kafka does after a crash.

    The first batch that is torn or fails a check (length, magic, CRC, record layout) ends the valid
    part; everything from there is truncated. Offsets that go backwards are not a crash artefact and
    raise :class:`CorruptRecordError` instead.
    """
    path = Path(log_path)
    base_offset = parse_log_file_name(path.name)
    if base_offset is None:
        raise ValueError(f"{path} is not named <20-digit offset>.log")
    files = SegmentFiles.of(path.parent, base_offset)
    builder = IndexBuilder(base_offset, index_interval_bytes)
    next_offset = base_offset
    reason = ""
    offset_data = bytearray()
    backwards: CorruptRecordError | None = None
    with BatchReader.open(path, allow_torn_tail=True) as reader:
        try:
            for batch in reader:
                if batch.base_offset < next_offset:
                    backwards = CorruptRecordError(
                        f"batch offset {batch.base_offset} is below the previous batch's next offset "
                        f"{next_offset}", what=str(path), offset=batch.position)
                    break
                builder.add(batch.position, batch.size_in_bytes, batch.last_offset, batch.max_timestamp)
                next_offset = batch.next_offset
                for entry in builder.offset_entries:
                    offset_data += OFFSET_ENTRY.pack(*entry)
                builder.offset_entries.clear()
        except CorruptRecordError as exc:
            reason = str(exc)
        if reader.torn_tail is not None:
            reason = reader.torn_tail.reason
        valid = reader.position
    if backwards is not None:
        raise backwards
    builder.close()
    size = path.stat().st_size
    with open(path, "r+b") as stream:
        stream.truncate(valid)
        stream.flush()
        os.fsync(stream.fileno())
    time_data = b"".join(TIME_ENTRY.pack(*entry) for entry in builder.time_entries)
    for target, data in ((files.index, bytes(offset_data)), (files.time_index, time_data)):
        with open(target, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
    return RecoveryResult(valid, size - valid, reason, next_offset)
