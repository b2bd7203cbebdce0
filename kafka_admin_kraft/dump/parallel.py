"""Deep dumps of large files on every core: worker processes format chunks of whole batches side by
side and write them to stdout strictly in file order.

The parent starts the workers, then walks the batch boundaries (the same walk as a single-process
dump, so the same place to stop and the same error there) and cuts them into chunks, sending each to
its worker as soon as it is found: the workers format while the parent walks. Worker ``w`` of ``n``
formats chunks ``w``, ``w + n``, ``w + 2n``... and, for each, waits for the token of the chunk
before, writes its text to the output's file descriptor (shared, so the writes follow each other)
and passes the token on; the parent holds the pipes' reading ends until every worker is done, so
that the token after the last chunk has somewhere to go. The
token carries the offset of the last record so far, which settles the non-consecutive check at chunk
boundaries, and a stop flag once a chunk hit damage: the text up to the damage is written, nothing
after it, and the parent raises the chunk's error.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import select
import struct
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, Final, Protocol

from kafka_admin_kraft.dump.walk import BatchWalk, DumpError, ReadAt

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

PARALLEL_MIN_BYTES: Final = 16 << 20
"""Files smaller than this are dumped in one process: forking would cost more than it saves."""
CHUNK_BYTES: Final = 2 << 20
AHEAD: Final = 4
"""Chunks a worker formats before it must wait for its turn to write the first of them."""
MAX_WORKERS: Final = 8
IOV_MAX: Final = 1024
"""The most buffers one ``writev`` takes on Linux."""
TOKEN: Final = struct.Struct(">?q")
"""(go on, offset of the last record so far; -1 before the first)."""
CHUNK: Final = struct.Struct(">qq")
"""A chunk sent to a worker: its start and end in the file; (-1, -1) once there are no more."""
UNSET: Final = -(1 << 80)
"""``last`` at the start of a chunk whose predecessor is not known yet: never ``-1`` nor ``offset - 1``."""


def worker_count(size: int) -> int:
    """How many workers a deep dump of ``size`` bytes gets: one per usable core, none for small files."""
    if size < PARALLEL_MIN_BYTES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cores, MAX_WORKERS, max(1, size // CHUNK_BYTES))


class BatchPrinter(Protocol):
    """What prints the batches, as :class:`~kafka_admin_kraft.dump.dumper.Dumper` does: the parent's
    when the chunks are printed in one process, else one per chunk, printing into the chunk's text."""

    def dump_batches(self, walk: BatchWalk, last: int, pairs: list[tuple[int, int]]) -> int:
        """Print the batches of ``walk`` after the record at offset ``last``, adding the
        non-consecutive offsets to ``pairs``; returns the offset of the last record printed."""
        ...

    def printing_into(self, stream: BinaryIO) -> BatchPrinter:
        """A printer of the same options printing into ``stream``."""
        ...

    def flush(self) -> None:
        """Write out the text printed so far."""
        ...


@dataclass
class ChunkResult:
    """What a chunk leaves for the parent: its non-consecutive pairs and, if it hit damage, why."""

    pairs: list[tuple[int, int]] = field(default_factory=list)
    error: str | None = None


def dump_in_workers(printer: BatchPrinter, out_fd: int, read_at: ReadAt, path: str, end: int, workers: int,
                    pairs: list[tuple[int, int]]) -> int:
    """Dump the batches of ``path`` up to ``end`` with ``workers`` processes writing to ``out_fd``, the
    file descriptor behind ``printer``'s output; returns where the batch walk stopped. Raises the first
    error a chunk or the walk ran into, after the output before it."""
    printer.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    turns = [os.pipe() for _ in range(workers)]  # worker w reads turns[w]
    feeds = [os.pipe() for _ in range(workers)]  # the parent sends worker w its chunks
    outcomes = [os.pipe() for _ in range(workers)]
    pids = [_fork(printer, out_fd, read_at, path, worker, workers, turns, feeds, outcomes)
            for worker in range(workers)]
    for index, (_, write_end) in enumerate(turns):
        if index:
            os.close(write_end)
    for read_end, _ in feeds:
        os.close(read_end)
    for _, write_end in outcomes:
        os.close(write_end)
    os.write(turns[0][1], TOKEN.pack(True, -1))
    os.close(turns[0][1])
    count, stopped, walk_error = _send_chunks(read_at, path, end, [write_end for _, write_end in feeds])
    results: dict[int, ChunkResult] = {}
    for read_end, _ in outcomes:  # each worker's, once it has written its last chunk
        with os.fdopen(read_end, "rb") as stream:
            data = stream.read()
        if data:
            results.update(pickle.loads(data))
    for pid in pids:
        os.waitpid(pid, 0)
    for read_end, _ in turns:  # held until now: the token after the last chunk lands in one of them
        os.close(read_end)
    missing = [index for index in range(count) if index not in results]
    if missing:
        results[missing[0]] = ChunkResult(error=f"a worker process died while dumping chunk {missing[0]}")
    for index in sorted(results):
        pairs += results[index].pairs
        error = results[index].error
        if error is not None:
            raise DumpError(error)
    if walk_error is not None:
        raise walk_error
    return stopped


def _send_chunks(read_at: ReadAt, path: str, end: int, feeds: list[int]) -> tuple[int, int, DumpError | None]:
    """Walk the batches, sending chunk ``i`` (batch-aligned, about CHUNK_BYTES) to worker ``i % n``
    as it is found, then the end to every worker; returns the number of chunks, where the walk stopped
    and the error that stopped it (raised once the chunks before it are out)."""
    walk = BatchWalk(read_at, path, end)
    start = 0
    count = 0
    error: DumpError | None = None
    workers = len(feeds)

    def send(chunk_end: int) -> None:
        nonlocal start, count
        _send(feeds[count % workers], CHUNK.pack(start, chunk_end))
        start = chunk_end
        count += 1

    try:
        for _, _, total in walk:
            if walk.position + total - start >= CHUNK_BYTES:
                send(walk.position + total)
    except DumpError as exc:
        error = exc
    stopped = walk.position
    if stopped > start:
        send(stopped)
    for feed in feeds:
        _send(feed, CHUNK.pack(-1, -1))
        os.close(feed)
    return count, stopped, error


def _send(fd: int, data: bytes) -> None:
    """Write to a worker's feed; a worker that died is noticed by the chunk it leaves undone."""
    with contextlib.suppress(BrokenPipeError):
        os.write(fd, data)


def _fork(printer: BatchPrinter, out_fd: int, read_at: ReadAt, path: str, worker: int, workers: int,
          turns: list[tuple[int, int]], feeds: list[tuple[int, int]], outcomes: list[tuple[int, int]]) -> int:
    """Start worker ``worker``, keeping only the pipe ends it uses, so that a dead peer or parent shows
    as end of file; returns its pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        following = (worker + 1) % workers
        for index, (read_end, write_end) in enumerate(turns):
            if index != worker:
                os.close(read_end)
            if index != following:
                os.close(write_end)
        for index, (read_end, write_end) in enumerate(feeds):
            os.close(write_end)
            if index != worker:
                os.close(read_end)
        for index, (read_end, write_end) in enumerate(outcomes):
            os.close(read_end)
            if index != worker:
                os.close(write_end)
        code = _work(printer, out_fd, read_at, path, worker, workers, turns[worker][0], turns[following][1],
                     feeds[worker][0], outcomes[worker][1])
    finally:
        os._exit(code)


def _read_exact(fd: int, size: int) -> bytes | None:
    """``size`` bytes from a pipe, or None at its end (the writer is gone)."""
    data = b""
    while len(data) < size:
        more = os.read(fd, size - len(data))
        if not more:
            return None
        data += more
    return data


def _read_token(fd: int) -> tuple[bool, int]:
    data = _read_exact(fd, TOKEN.size)
    if data is None:
        return False, -1  # the writer died: stop
    go, last = TOKEN.unpack(data)
    return bool(go), int(last)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_pieces(fd: int, pieces: list[bytes]) -> None:
    """Write ``pieces`` in order, up to IOV_MAX of them a system call."""
    for start in range(0, len(pieces), IOV_MAX):
        group = pieces[start:start + IOV_MAX]
        written = os.writev(fd, group)
        for piece in group:
            if written >= len(piece):
                written -= len(piece)
            else:
                _write_all(fd, piece[written:])
                written = 0


class _Pieces(io.BytesIO):
    """A chunk's text as the printer wrote it, piece by piece (a batch's text, or what one ``write``
    brought): written out as it is, never copied into one buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[bytes] = []

    def write(self, data: ReadableBuffer, /) -> int:
        piece = bytes(data)
        self.pieces.append(piece)
        return len(piece)

    def writelines(self, lines: Iterable[ReadableBuffer], /) -> None:
        self.pieces += map(bytes, lines)


@dataclass
class _Formatted:
    """A chunk formatted and waiting for its turn to be written."""

    index: int
    text: list[bytes]
    last: int
    result: ChunkResult


def _work(printer: BatchPrinter, out_fd: int, read_at: ReadAt, path: str, worker: int, workers: int,
          turn: int, next_turn: int, feed: int, outcome: int) -> int:
    """One worker: format the chunks its feed brings, up to AHEAD of them before their turn comes (so
    that a worker held up elsewhere does not stall the others), and write each in turn. Returns the
    exit code."""
    results: dict[int, ChunkResult] = {}
    pending: deque[_Formatted] = deque()
    state = {"stopping": False}

    def write_in_turn(block: bool) -> None:
        while pending and (block or select.select([turn], [], [], 0)[0]):
            chunk = pending.popleft()
            go, previous = _read_token(turn)
            result = chunk.result
            last = chunk.last
            if go and not state["stopping"]:
                if result.pairs and result.pairs[0][0] == UNSET:
                    first = result.pairs.pop(0)[1]
                    if previous != -1 and first != previous + 1:
                        result.pairs.insert(0, (previous, first))
                if last == UNSET:
                    last = previous
                try:
                    write_pieces(out_fd, chunk.text)
                except BrokenPipeError:
                    result.error = None
                    go = False
                if result.error is not None:
                    go = False
            else:
                go = False
                results[chunk.index] = ChunkResult()
            state["stopping"] = state["stopping"] or not go
            os.write(next_turn, TOKEN.pack(go, last if go else -1))

    index = worker
    while True:
        data = _read_exact(feed, CHUNK.size)
        start, end = CHUNK.unpack(data) if data is not None else (-1, -1)
        if start < 0:
            break
        buffer = _Pieces()
        chunk_printer = printer.printing_into(buffer)
        result = results[index] = ChunkResult()
        last = UNSET
        if not state["stopping"]:
            try:
                last = chunk_printer.dump_batches(BatchWalk(read_at, path, end, start), UNSET, result.pairs)
            except DumpError as exc:
                result.error = str(exc)
            except Exception as exc:  # a worker must pass the token on whatever happens
                result.error = f"{type(exc).__name__}: {exc}"
            chunk_printer.flush()
        pending.append(_Formatted(index, buffer.pieces, last, result))
        write_in_turn(block=len(pending) >= AHEAD)
        index += workers
    write_in_turn(block=True)
    _write_all(outcome, pickle.dumps(results))
    return 0
