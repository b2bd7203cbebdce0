"""KRaft snapshot files: ``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint``.

A snapshot is written to ``<id>-<random>.checkpoint.part`` and renamed once complete and synced, so
a ``.checkpoint`` file is always whole. Its batches start with a control batch holding a
SnapshotHeaderRecord and end with a control batch holding a SnapshotFooterRecord; record offsets
start at 0 and batches carry the snapshot epoch as their partition leader epoch.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Final

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records.batch import (
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    PREFIX,
    RecordBatch,
    decode_batch_at,
    encode_batch,
)
from kafka_admin_kraft.records.control import ControlRecordType, parse_control_key
from kafka_admin_kraft.records.fsutil import fsync_directory
from kafka_admin_kraft.records.reader import BatchReader

CHECKPOINT_SUFFIX: Final = ".checkpoint"
PARTIAL_SUFFIX: Final = ".checkpoint.part"
DELETE_SUFFIX: Final = ".checkpoint.deleted"

_CHECKPOINT_NAME: Final = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


@dataclass(frozen=True, order=True, slots=True)
class SnapshotId:
    """End offset (exclusive: last contained offset + 1) and epoch of the last contained record."""

    end_offset: int
    epoch: int

    @property
    def file_stem(self) -> str:
        return f"{self.end_offset:020d}-{self.epoch:010d}"

    @property
    def file_name(self) -> str:
        return self.file_stem + CHECKPOINT_SUFFIX


BOOTSTRAP_SNAPSHOT_ID: Final = SnapshotId(0, 0)


def parse_snapshot_file_name(name: str) -> SnapshotId | None:
    """The id of a frozen snapshot file name, None for anything else (``.part``, ``.deleted``)."""
    match = _CHECKPOINT_NAME.match(name)
    return SnapshotId(int(match.group(1)), int(match.group(2))) if match else None


def list_snapshots(directory: str | os.PathLike[str]) -> list[SnapshotId]:
    """Frozen snapshots of a partition directory, oldest first."""
    return sorted(snapshot for name in os.listdir(directory)
                  if (snapshot := parse_snapshot_file_name(name)) is not None)


class SnapshotWriter:
    """Writes one snapshot: batches go to a ``.part`` file, :meth:`freeze` syncs and renames it."""

    def __init__(self, directory: str | os.PathLike[str], snapshot_id: SnapshotId) -> None:
        self.directory = Path(directory)
        self.snapshot_id = snapshot_id
        self.path = self.directory / snapshot_id.file_name
        while True:
            candidate = self.directory / f"{snapshot_id.file_stem}-{secrets.randbits(63)}{PARTIAL_SUFFIX}"
            try:
                self._stream: BinaryIO = open(candidate, "xb")  # noqa: SIM115 - closed by freeze/abort
                break
            except FileExistsError:
                continue
        self.partial_path = candidate
        self._done = False
        self.size = 0
        """Bytes appended so far."""

    def append(self, batch: RecordBatch | bytes) -> None:
        data = encode_batch(batch) if isinstance(batch, RecordBatch) else batch
        self._stream.write(data)
        self.size += len(data)

    def freeze(self) -> Path:
        """Sync the file, rename it to its final name and sync the directory."""
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self._stream.close()
        os.replace(self.partial_path, self.path)
        fsync_directory(self.directory)
        self._done = True
        return self.path

    def abort(self) -> None:
        """Drop an unfinished snapshot."""
        if not self._done:
            self._stream.close()
            self.partial_path.unlink(missing_ok=True)
            self._done = True

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Freeze on success, abort when the block raised."""
        if exc_type is None:
            if not self._done:
                self.freeze()
        else:
            self.abort()


class SnapshotStreamChecker:
    """Checks a snapshot arriving in arbitrary slices (FetchSnapshot chunks) as it comes, keeping only
    the unfinished batch: every batch whole and valid (CRC, records), the first record a
    SnapshotHeaderRecord; :meth:`finish` wants no partial batch left and a SnapshotFooterRecord last.
    """

    def __init__(self, what: str = "snapshot") -> None:
        self.what = what
        self.batches = 0
        self._pending = bytearray()
        self._position = 0
        """File position of the first byte of ``_pending``."""
        self._last_types: list[int] = []

    def feed(self, data: bytes) -> None:
        """Check the batches completed by ``data``; raises CorruptRecordError."""
        self._pending += data
        buf = self._pending
        pos = 0
        while len(buf) - pos >= LOG_OVERHEAD:
            length = PREFIX.unpack_from(buf, pos)[1]
            if length < MIN_BATCH_LENGTH:
                raise CorruptRecordError(f"batch length {length} is below {MIN_BATCH_LENGTH}", what=self.what,
                                         path="length", offset=self._position + pos + 8)
            end = pos + LOG_OVERHEAD + length
            if end > len(buf):
                break
            batch = decode_batch_at(bytes(buf[pos:end]), 0, end - pos, self._position + pos, self.what)
            types = _control_types(batch, self.what)
            if self.batches == 0 and (not types or types[0] != ControlRecordType.SNAPSHOT_HEADER):
                raise CorruptRecordError("the first record is not a SnapshotHeaderRecord", what=self.what,
                                         offset=batch.position)
            self._last_types = types
            self.batches += 1
            pos = end
        if pos:
            del buf[:pos]
            self._position += pos

    def finish(self) -> None:
        """The snapshot is complete: raises CorruptRecordError when it is not."""
        if self._pending:
            raise CorruptRecordError(f"the file ends inside a batch ({len(self._pending)} bytes left)",
                                     what=self.what, offset=self._position)
        if self.batches == 0:
            raise CorruptRecordError("the snapshot holds no batches", what=self.what, offset=0)
        if not self._last_types or self._last_types[-1] != ControlRecordType.SNAPSHOT_FOOTER:
            raise CorruptRecordError("the last record is not a SnapshotFooterRecord", what=self.what,
                                     offset=self._position)


def _control_types(batch: RecordBatch, what: str) -> list[int]:
    if not batch.is_control:
        return []
    try:
        return [parse_control_key(record.key)[1] for record in batch.records]
    except CorruptRecordError as exc:
        raise CorruptRecordError(exc.reason, what=what, path=f"batch at offset {batch.base_offset}: key",
                                 offset=batch.position) from None


def read_snapshot(path: str | os.PathLike[str], *, verify_crc: bool = True,
                  check_structure: bool = True) -> Iterator[RecordBatch]:
    """The batches of a snapshot or bootstrap file, streamed.

    A snapshot is never torn (it is renamed only when complete), so a short file is corruption.
    With ``check_structure`` the first record must be a SnapshotHeaderRecord and the last a
    SnapshotFooterRecord.
    """
    what = os.fspath(path)
    with BatchReader.open(path, verify_crc=verify_crc, allow_torn_tail=False) as reader:
        last: RecordBatch | None = None
        for batch in reader:
            if check_structure and last is None:
                types = _control_types(batch, what)
                if not types or types[0] != ControlRecordType.SNAPSHOT_HEADER:
                    raise CorruptRecordError("the first record is not a SnapshotHeaderRecord", what=what,
                                             offset=batch.position)
            last = batch
            yield batch
        if check_structure:
            if last is None:
                raise CorruptRecordError("the snapshot holds no batches", what=what, offset=0)
            types = _control_types(last, what)
            if not types or types[-1] != ControlRecordType.SNAPSHOT_FOOTER:
                raise CorruptRecordError("the last record is not a SnapshotFooterRecord", what=what,
                                         offset=last.position)
