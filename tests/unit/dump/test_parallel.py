"""Deep dumps of large files in worker processes write what one process writes, byte for byte,
whatever falls on a chunk edge."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.dump import parallel
from kafka_admin_kraft.dump.dumper import Dumper, DumpOptions
from unit.dump.dump_testlib import batches, record_start, write_segment


def _in_process(path: Path, out: Path, options: DumpOptions) -> tuple[int, bytes, str]:
    errors: list[str] = []
    with open(out, "wb") as stream:
        code = Dumper(options, stream, errors.append).run([str(path)])
    return code, out.read_bytes(), "".join(errors)


@pytest.mark.parametrize("json_output", [False, True])
def test_worker_processes_write_what_one_process_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        json_output: bool) -> None:
    """Large files are dumped by worker processes in chunks; with tiny chunks every boundary case
    (the non-consecutive check, the trailing bytes, damage in a later chunk) meets a chunk edge."""
    data = batches() * 4
    data = [bytes(batch[:8]) + batch[8:] for batch in data]
    path = write_segment(tmp_path / "c", [data[0]])
    with open(path, "ab") as stream:
        for batch in data[1:]:
            stream.write(batch)
        stream.write(b"\x00" * 10)
    options = DumpOptions(print_contents=True, deep_iteration=True, metadata_decoder=True, json=json_output)
    single = _in_process(path, tmp_path / "single", options)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 300)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    assert parallel.worker_count(path.stat().st_size) == 3
    assert _in_process(path, tmp_path / "workers", options) == single
    assert single[0] == 0 and "Non-consecutive offsets" in single[2]
    damaged = bytearray(path.read_bytes())
    damaged[sum(len(batch) for batch in data[:13]) + record_start(data[13], 2)] = 0x7E
    path.write_bytes(bytes(damaged))
    single = _in_process(path, tmp_path / "single", options)
    assert single[0] == 1
    assert _in_process(path, tmp_path / "workers", options) == single


def test_workers_slower_than_the_walk_still_write_every_chunk(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent walks ahead of the workers and waits for them: the tokens passed between workers are
    theirs alone, whenever the walk ends (a parent reading one of them would leave a worker waiting
    for ever, so the dump is given ten seconds)."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches() * 4))
    options = DumpOptions(deep_iteration=True)
    single = _in_process(path, tmp_path / "single", options)
    dump_batches = Dumper.dump_batches

    def slowly(self: Dumper, *args: Any) -> int:
        time.sleep(0.05)
        return dump_batches(self, *args)

    monkeypatch.setattr(Dumper, "dump_batches", slowly)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 300)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the workers stalled"))
    signal.alarm(10)
    try:
        assert _in_process(path, tmp_path / "workers", options) == single
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def test_pieces_are_written_in_order_across_groups_and_short_writes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """More pieces than one ``writev`` takes, and a ``writev`` that stops inside a piece: every byte
    still lands once, in order."""
    pieces = [f"piece {index};".encode() for index in range(2 * parallel.IOV_MAX + 7)]
    calls: list[int] = []
    real_writev = os.writev

    def short_writev(fd: int, buffers: list[bytes]) -> int:
        calls.append(len(buffers))
        if len(calls) == 1:  # the first call writes only part of its third piece
            return real_writev(fd, [*buffers[:2], buffers[2][:3]])
        return real_writev(fd, buffers)

    monkeypatch.setattr(parallel.os, "writev", short_writev)
    with open(tmp_path / "out", "wb") as stream:
        parallel.write_pieces(stream.fileno(), pieces)
    assert (tmp_path / "out").read_bytes() == b"".join(pieces)
    assert calls == [parallel.IOV_MAX, parallel.IOV_MAX, 7]
