"""Streaming batch reader for log segments, snapshots and any concatenation of batches.

Memory stays bounded: the file is read in 1 MiB windows and batches are decoded in place; the
12-byte prefix of each batch (base offset, length) says how much more it needs, and a batch larger
than the window is read whole. A file that ends inside its last batch is what a crash during an
append leaves behind; Kafka's recovery cuts the log there, so the reader stops, records why in
``torn_tail`` and does not raise. Any other inconsistency raises :class:`CorruptRecordError` with the
file and position.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import BinaryIO, Final

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records.batch import (
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    PREFIX,
    RecordBatch,
    decode_batch_at,
)

log = logging.getLogger(__name__)

DEFAULT_MAX_BATCH_SIZE: Final = 64 * 1024 * 1024
"""Largest batch the reader accepts; KRaft writes at most 8 MiB, ordinary topics rarely more."""
READ_CHUNK_SIZE: Final = 1 << 20
"""Bytes read at a time; memory stays at about this plus the largest batch."""


@dataclass(frozen=True, slots=True)
class TornTail:
    """A file that ends inside a batch: ``valid_end`` is the end of the last whole batch."""

    valid_end: int
    file_end: int
    reason: str


class BatchReader:
    """Iterate the batches of a binary stream positioned at a batch boundary.

    ``position`` is always the end of the last batch returned. With ``allow_torn_tail`` false (for
    snapshots and bootstrap files, which are written whole and renamed) a torn tail raises too.
    """

    def __init__(self, stream: BinaryIO, *, path: str | os.PathLike[str] = "", start: int | None = None,
                 verify_crc: bool = True, allow_torn_tail: bool = True,
                 max_batch_size: int = DEFAULT_MAX_BATCH_SIZE) -> None:
        self._stream = stream
        self.path = os.fspath(path)
        self.position = stream.tell() if start is None else start
        self.verify_crc = verify_crc
        self.allow_torn_tail = allow_torn_tail
        self.max_batch_size = max_batch_size
        self.torn_tail: TornTail | None = None
        self._owns_stream = False

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, verify_crc: bool = True, allow_torn_tail: bool = True,
             max_batch_size: int = DEFAULT_MAX_BATCH_SIZE) -> BatchReader:
        """A reader that owns the file; use it as a context manager."""
        stream = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        reader = cls(stream, path=path, start=0, verify_crc=verify_crc, allow_torn_tail=allow_torn_tail,
                     max_batch_size=max_batch_size)
        reader._owns_stream = True
        return reader

    def close(self) -> None:
        if self._owns_stream:
            self._stream.close()

    def __enter__(self) -> BatchReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def what(self) -> str:
        return self.path or "record batches"

    def _torn(self, got: int, reason: str) -> None:
        tail = TornTail(self.position, self.position + got, reason)
        if not self.allow_torn_tail:
            raise CorruptRecordError(f"file ends inside a batch: {reason}", what=self.what,
                                     offset=self.position)
        self.torn_tail = tail
        log.warning("%s: ignoring %d bytes after position %d: %s", self.what, got, self.position, reason)

    def _fill(self, buf: bytes, need: int) -> bytes:
        """``buf`` extended by reads until it holds ``need`` bytes or the stream ends."""
        read = self._stream.read
        while len(buf) < need:
            chunk = read(max(READ_CHUNK_SIZE, need - len(buf)))
            if not chunk:
                break
            buf += chunk
        return buf

    def __iter__(self) -> Iterator[RecordBatch]:
        """Batches until the end of the stream; decoding happens in place in a ~1 MiB window."""
        unpack_prefix = PREFIX.unpack_from
        decode = decode_batch_at
        max_length = self.max_batch_size - LOG_OVERHEAD
        what = self.what
        verify_crc = self.verify_crc
        buf = b""
        pos = 0
        while True:
            if len(buf) - pos < LOG_OVERHEAD:
                buf = self._fill(buf[pos:], LOG_OVERHEAD)
                pos = 0
                if len(buf) < LOG_OVERHEAD:
                    if buf:
                        self._torn(len(buf), f"{len(buf)} of the 12 prefix bytes are present")
                    return
            base_offset, length = unpack_prefix(buf, pos)
            if length < MIN_BATCH_LENGTH or length > max_length:
                raise CorruptRecordError(
                    f"batch length {length} is outside {MIN_BATCH_LENGTH}..{max_length}", what=what,
                    path=f"batch at offset {base_offset}: length", offset=self.position + 8)
            end = pos + LOG_OVERHEAD + length
            if end > len(buf):
                end = LOG_OVERHEAD + length
                buf = self._fill(buf[pos:], end)
                pos = 0
                if end > len(buf):
                    self._torn(len(buf), f"batch at offset {base_offset} declares {length} bytes after its "
                                         f"prefix, {len(buf) - LOG_OVERHEAD} are present")
                    return
            batch = decode(buf, pos, end, self.position, what, verify_crc)
            self.position += end - pos
            pos = end
            yield batch


def decode_batches(data: bytes, *, what: str = "record batches", allow_torn_tail: bool = False,
                   verify_crc: bool = True) -> list[RecordBatch]:
    """All batches of an in-memory blob (a Fetch response's records, a test vector)."""
    return list(BatchReader(io.BytesIO(data), path=what, start=0, verify_crc=verify_crc,
                            allow_torn_tail=allow_torn_tail))
