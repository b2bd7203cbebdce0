"""Walking one split: its batches in file order, and what is wrong with the bytes between them.

Damage does not stop a file:

* a batch whose length field is impossible, or whose magic, CRC or records fail a check, becomes an
  error (``corrupt``) naming the file and byte position. Reading goes on at the end the length field
  gives when a valid batch starts there, else at the next position where a whole batch with a good
  CRC starts (a resynchronising scan);
* a file that ends inside a batch is a ``torn_tail`` when it is the newest segment of its directory
  (what a crash during an append leaves; Kafka cuts it at start-up) and ``corrupt`` anywhere else
  (snapshots and bootstrap files are renamed into place only when complete);
* a missing or damaged ``meta.properties`` or ``quorum-state``, or a file that is no regular file,
  found while planning, comes as a split of its own that yields its one error; a file that cannot
  be opened when its split is read (replaced since, or not readable) is an ``unreadable_file`` row.

What a record's value holds is not looked at here: :mod:`~kafka_admin_kraft.pipeline.columnar`
decodes as much of it as a query needs. With ``runs``, consecutive ordinary batches come framed
together as a :class:`~kafka_admin_kraft.pipeline.runs.BatchRun` instead of one
:class:`~kafka_admin_kraft.records.batch.RecordBatch` each (see :mod:`~kafka_admin_kraft.pipeline.runs`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from kafka_admin_kraft.pipeline.planning import MAX_BATCH_LENGTH, FileSplit
from kafka_admin_kraft.pipeline.runs import BatchRun, frame_run
from kafka_admin_kraft.pipeline.schema import CORRUPT, SNAPSHOT, TORN_TAIL, UNREADABLE_FILE
from kafka_admin_kraft.pipeline.storage import (
    NO_OPTIONS,
    RandomInput,
    StorageError,
    StorageOptions,
    open_input,
)
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.records.batch import (
    BATCH_HEADER_SIZE,
    CRC_START,
    HEADER,
    LOG_OVERHEAD,
    MAGIC,
    MIN_BATCH_LENGTH,
    PREFIX,
    RecordBatch,
    decode_batch_at,
)
from kafka_admin_kraft.records.crc import crc32c

READ_WINDOW: Final = 4 << 20


class SplitError(tuple[Any, ...]):
    """An error row's own fields: (batch_position, error_kind, error, base_offset, offset, epoch)."""

    __slots__ = ()

    def __new__(
        cls,
        position: int | None,
        kind: str,
        message: str,
        base_offset: int | None = None,
        offset: int | None = None,
        epoch: int | None = None,
    ) -> SplitError:
        return tuple.__new__(cls, (position, kind, message, base_offset, offset, epoch))


class _Window:
    """Buffered positional reads of one file."""

    def __init__(self, source: RandomInput) -> None:
        self.source = source
        self.size = source.size
        self.buf = b""
        self.start = 0

    def get(self, position: int, count: int) -> tuple[bytes, int]:
        """A buffer holding ``[position, position + count)`` (cut at the file end) and the index of
        ``position`` in it."""
        count = min(count, self.size - position)
        offset = position - self.start
        if offset < 0 or offset + count > len(self.buf):
            self.buf = self.source.read_at(position, max(count, READ_WINDOW))
            self.start = position
            offset = 0
        return self.buf, offset


def _valid_batch_at(window: _Window, position: int) -> bool:
    """A whole batch with a correct CRC starts at ``position``."""
    if position + 61 > window.size:
        return False
    buf, at = window.get(position, 61)
    fields = HEADER.unpack_from(buf, at)
    length = fields[1]
    if fields[3] != MAGIC or not MIN_BATCH_LENGTH <= length <= MAX_BATCH_LENGTH or fields[6] < 0:
        return False
    total = LOG_OVERHEAD + length
    if position + total > window.size:
        return False
    buf, at = window.get(position, total)
    return bool(crc32c(memoryview(buf)[at + CRC_START : at + total]) == fields[4])


def _resync(window: _Window, start: int, limit: int) -> int | None:
    """The first position in ``[start, limit)`` where a valid batch starts, None if there is none.

    Candidates are the positions whose byte 16 (the magic byte) is 2; each is checked by its CRC."""
    position = start
    while position < limit:
        available = min(READ_WINDOW, window.size - position)
        if available < HEADER.size:
            return None
        buf, at = window.get(position, available)
        span = min(limit - position, available - 16)
        hit = buf.find(b"\x02", at + 16, at + 16 + span)
        if hit < 0:
            position += max(1, span)
            continue
        candidate = position + hit - 16 - at
        if _valid_batch_at(window, candidate):
            return candidate
        position = candidate + 1
    return None


def walk_split(
    split: FileSplit, options: StorageOptions = NO_OPTIONS, runs: bool = False
) -> Iterator[RecordBatch | BatchRun | SplitError]:
    """The batches starting in ``[split.start, split.end)``, and errors where bytes are damaged; the
    file is read through :func:`~kafka_admin_kraft.pipeline.storage.open_input` with ``options``.
    With ``runs``, ordinary batches come in runs."""
    if split.error_kind is not None:
        yield SplitError(None, split.error_kind, split.error or "")
        return
    what = split.path
    try:
        opened = open_input(split.path, options)
    except StorageError:
        raise
    except OSError as exc:  # replaced or locked since planning looked at it
        yield SplitError(None, UNREADABLE_FILE, f"{what}: cannot be read: {exc.strerror or exc}")
        return
    with opened as source:
        size = source.size
        window = _Window(source)
        end = min(split.end, size)
        position = split.start
        while position < end:
            left = size - position
            if runs and left >= BATCH_HEADER_SIZE:
                buf, at = window.get(position, BATCH_HEADER_SIZE)
                run = frame_run(buf, at, position, end)
                if run is not None:
                    yield run
                    position = run.end_position
                    continue
            if left < LOG_OVERHEAD:
                yield _tail_error(
                    split, position, f"{left} bytes after the last batch, fewer than the 12-byte batch prefix"
                )
                return
            buf, at = window.get(position, LOG_OVERHEAD)
            base_offset, length = PREFIX.unpack_from(buf, at)
            if not MIN_BATCH_LENGTH <= length <= MAX_BATCH_LENGTH:
                yield SplitError(
                    position,
                    CORRUPT,
                    f"{what}: batch at position {position} (offset {base_offset}): length "
                    f"{length} is outside {MIN_BATCH_LENGTH}..{MAX_BATCH_LENGTH}",
                    base_offset,
                )
                resumed = _resync(window, position + 1, end)
                if resumed is None:
                    return
                position = resumed
                continue
            total = LOG_OVERHEAD + length
            if position + total > size:
                yield _tail_error(
                    split,
                    position,
                    f"batch at offset {base_offset} declares {total} bytes, {left} are left in the file",
                    base_offset,
                )
                return
            buf, at = window.get(position, total)
            try:
                batch = decode_batch_at(buf, at, at + total, position, what)
            except DecodeError as exc:
                epoch = HEADER.unpack_from(buf, at)[2] if total >= HEADER.size else None
                yield SplitError(position, CORRUPT, str(exc), base_offset, None, epoch)
                following = position + total
                if following >= size or _valid_batch_at(window, following):
                    position = following
                    continue
                resumed = _resync(window, position + 1, end)
                if resumed is None:
                    return
                position = resumed
                continue
            yield batch
            position += total


def _tail_error(split: FileSplit, position: int, message: str, base_offset: int | None = None) -> SplitError:
    if split.kind == "segment" and split.newest_segment:
        return SplitError(
            position,
            TORN_TAIL,
            f"{split.path}: torn tail at position {position} (a crash during an append): {message}",
            base_offset,
        )
    what = "snapshot" if split.kind == SNAPSHOT else split.kind
    return SplitError(
        position, CORRUPT, f"{split.path}: {what} is truncated at position {position}: {message}", base_offset
    )
