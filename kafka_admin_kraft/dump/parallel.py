"""Deep dumps of large files on every core: worker processes format chunks of whole batches side by
side and write them to stdout strictly in file order.

The parent walks the batch boundaries (the same walk as a single-process dump, so the same place to
stop and the same error there) and cuts them into chunks. Worker ``w`` of ``n`` formats chunks
``w``, ``w + n``, ``w + 2n``... and, for each, waits for the token of the chunk before, writes its text to the
output's file descriptor (shared, so the writes follow each other) and passes the token on. The
token carries the offset of the last record so far, which settles the non-consecutive check at chunk
boundaries, and a stop flag once a chunk hit damage: the text up to the damage is written, nothing
after it, and the parent raises the chunk's error.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import struct
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import BinaryIO, Final, Protocol

from kafka_admin_kraft.dump.walk import BatchWalk, DumpError, ReadAt

PARALLEL_MIN_BYTES: Final = 16 << 20
"""Files smaller than this are dumped in one process: forking would cost more than it saves."""
CHUNK_BYTES: Final = 2 << 20
AHEAD: Final = 4
"""Chunks a worker formats before it must wait for its turn to write the first of them."""
MAX_WORKERS: Final = 8
TOKEN: Final = struct.Struct(">?q")
"""(go on, offset of the last record so far; -1 before the first)."""
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


def _chunks(read_at: ReadAt, path: str, end: int) -> tuple[list[tuple[int, int]], int, Exception | None]:
    """Batch-aligned (start, end) ranges of about CHUNK_BYTES, where the walk stopped, and the error
    that stopped it (raised once the chunks before it are out)."""
    chunks: list[tuple[int, int]] = []
    walk = BatchWalk(read_at, path, end)
    start = 0
    error: Exception | None = None
    try:
        for _, _, total in walk:
            if walk.position + total - start >= CHUNK_BYTES:
                chunks.append((start, walk.position + total))
                start = walk.position + total
    except DumpError as exc:
        error = exc
    stopped = walk.position
    if stopped > start:
        chunks.append((start, stopped))
    return chunks, stopped, error


def dump_in_workers(printer: BatchPrinter, out_fd: int, read_at: ReadAt, path: str, end: int, workers: int,
                    pairs: list[tuple[int, int]]) -> int:
    """Dump the batches of ``path`` up to ``end`` with ``workers`` processes writing to ``out_fd``, the
    file descriptor behind ``printer``'s output; returns where the batch walk stopped. Raises the first
    error a chunk or the walk ran into, after the output before it."""
    chunks, stopped, walk_error = _chunks(read_at, path, end)
    printer.flush()
    workers = min(workers, len(chunks))
    if workers <= 1:
        _run_inline(printer, read_at, path, chunks, pairs)
    else:
        results = _run_forked(printer, out_fd, read_at, path, chunks, workers)
        for result in results:
            pairs += result.pairs
            if result.error is not None:
                raise DumpError(result.error)
    if walk_error is not None:
        raise walk_error
    return stopped


def _run_inline(printer: BatchPrinter, read_at: ReadAt, path: str, chunks: list[tuple[int, int]],
                pairs: list[tuple[int, int]]) -> None:
    last = -1
    for start, end in chunks:
        last = printer.dump_batches(BatchWalk(read_at, path, end, start), last, pairs)


def _run_forked(printer: BatchPrinter, out_fd: int, read_at: ReadAt, path: str, chunks: list[tuple[int, int]],
                workers: int) -> list[ChunkResult]:
    """Fork the workers, wait for the token after the last chunk, collect every chunk's result."""
    turns = [os.pipe() for _ in range(workers + 1)]  # worker w reads turns[w]; the parent turns[-1]
    outcomes = [os.pipe() for _ in range(workers)]
    pids = []
    sys.stdout.flush()
    sys.stderr.flush()
    for worker in range(workers):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                # keep only what this worker uses, so that a dead peer shows as end of file
                following = {(worker + 1) % workers, workers}
                for index, (read_end, write_end) in enumerate(turns):
                    if index != worker:
                        os.close(read_end)
                    if index not in following:
                        os.close(write_end)
                for index, (read_end, write_end) in enumerate(outcomes):
                    os.close(read_end)
                    if index != worker:
                        os.close(write_end)
                code = _work(printer, out_fd, read_at, path, chunks, worker, workers, turns,
                             outcomes[worker][1])
            finally:
                os._exit(code)
        pids.append(pid)
    for index, (read_end, write_end) in enumerate(turns):
        if index != 0:
            os.close(write_end)
        if index != workers:
            os.close(read_end)
    for _, write_end in outcomes:
        os.close(write_end)
    os.write(turns[0][1], TOKEN.pack(True, -1))
    os.close(turns[0][1])
    _read_token(turns[-1][0])
    os.close(turns[-1][0])
    results: dict[int, ChunkResult] = {}
    for read_end, _ in outcomes:
        with os.fdopen(read_end, "rb") as stream:
            data = stream.read()
        if data:
            results.update(pickle.loads(data))
    for pid in pids:
        os.waitpid(pid, 0)
    missing = [index for index in range(len(chunks)) if index not in results]
    if missing:
        results[missing[0]] = ChunkResult(error=f"a worker process died while dumping chunk {missing[0]}")
    return [results[index] for index in sorted(results)]


def _read_token(fd: int) -> tuple[bool, int]:
    data = b""
    while len(data) < TOKEN.size:
        more = os.read(fd, TOKEN.size - len(data))
        if not more:
            return False, -1  # the writer died: stop
        data += more
    go, last = TOKEN.unpack(data)
    return bool(go), int(last)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


@dataclass
class _Formatted:
    """A chunk formatted and waiting for its turn to be written."""

    index: int
    text: bytes
    last: int
    result: ChunkResult


def _work(printer: BatchPrinter, out_fd: int, read_at: ReadAt, path: str, chunks: list[tuple[int, int]],
          worker: int, workers: int, turns: list[tuple[int, int]], outcome: int) -> int:
    """One worker: format its chunks, up to AHEAD of them before their turn comes (so that a worker
    held up elsewhere does not stall the others), and write each in turn. Returns the exit code."""
    results: dict[int, ChunkResult] = {}
    pending: deque[_Formatted] = deque()
    state = {"stopping": False}
    turn = turns[worker][0]

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
                    _write_all(out_fd, chunk.text)
                except BrokenPipeError:
                    result.error = None
                    go = False
                if result.error is not None:
                    go = False
            else:
                go = False
                results[chunk.index] = ChunkResult()
            state["stopping"] = state["stopping"] or not go
            following = (chunk.index + 1) % workers if chunk.index + 1 < len(chunks) else workers
            os.write(turns[following][1], TOKEN.pack(go, last if go else -1))

    for index in range(worker, len(chunks), workers):
        start, end = chunks[index]
        buffer = io.BytesIO()
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
        pending.append(_Formatted(index, buffer.getvalue(), last, result))
        write_in_turn(block=len(pending) >= AHEAD)
    write_in_turn(block=True)
    _write_all(outcome, pickle.dumps(results))
    return 0
