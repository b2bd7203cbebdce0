"""Runs of ordinary batches (the walk's fast path) against the walk one batch at a time: the same
batches, records, offsets, timestamps, values and errors on random logs mixing ordinary batches with
every kind of batch a run must not take, including records whose framing is broken under a good
CRC."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.pipeline import runs
from kafka_admin_kraft.pipeline.planning import LogDirInfo, plan, split_file
from kafka_admin_kraft.pipeline.runs import BatchRun
from kafka_admin_kraft.pipeline.walk import SplitError, walk_split
from kafka_admin_kraft.protocol.primitives import write_varint
from kafka_admin_kraft.records.batch import CRC_START, Compression, Header, Record, RecordBatch, encode_batch
from pipeline.scenario import Truth

NOW = 1_700_000_000_000
Flat = tuple[Any, ...]


def _flat(items: list[RecordBatch | BatchRun | SplitError]) -> list[Flat]:
    """Each batch as (position, base offset, last offset, crc, epoch, control, records), runs cut
    into their batches; errors as they are."""
    out: list[Flat] = []
    for item in items:
        if isinstance(item, SplitError):
            out.append(tuple(item))
        elif isinstance(item, BatchRun):
            for b in range(len(item.positions)):
                mine = item.batch_of_record == b
                records = [
                    (int(offset), int(timestamp), item.buf[int(start) : int(end)])
                    for offset, timestamp, start, end in zip(
                        item.offsets[mine],
                        item.timestamps[mine],
                        item.value_start[mine],
                        item.value_end[mine],
                        strict=True,
                    )
                ]
                out.append((int(item.positions[b]), int(item.base_offsets[b]), int(item.last_offsets[b]),
                            int(item.crcs[b]), int(item.leader_epochs[b]), False, records))
        else:
            out.append((item.position, item.base_offset, item.base_offset + item.last_offset_delta, item.crc,
                        item.partition_leader_epoch, item.is_control,
                        [(r.offset, r.timestamp, r.value) for r in item.records]))
    return out


def _with_fixed_crc(data: bytes) -> bytes:
    """A batch's bytes with the CRC computed over what they now hold."""
    out = bytearray(data)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[CRC_START:])))
    return bytes(out)


values = st.binary(min_size=0, max_size=40)
record = st.tuples(
    st.one_of(st.integers(-3, 3), st.integers(-(2**40), 2**40)),  # timestamp delta: short and long varints
    values.map(lambda v: b"\x01\x02\x00" + v),  # framed like a metadata record
    st.sampled_from(["plain", "plain", "plain", "key", "header", "null", "short"]),
)
batch_kind = st.sampled_from(
    ["ordinary", "ordinary", "ordinary", "control", "gzip", "empty", "garbled", "padded"]
)


def _batch(offset: int, kind: str, records: list[tuple[int, bytes, str]], garble: int) -> bytes:
    built: list[Record] = []
    for i, (delta, value, shape) in enumerate(records):
        built.append(Record(
            offset + i,
            NOW + delta,
            b"k" if shape == "key" else None,
            None if shape == "null" else value[:2] if shape == "short" else value,
            (Header("h", b"v"),) if shape == "header" else (),
        ))
    if kind == "empty":
        built = []
    attributes = {"control": 0x20, "gzip": int(Compression.GZIP)}.get(kind, 0)
    data = encode_batch(RecordBatch(
        base_offset=offset, records=built, partition_leader_epoch=3, attributes=attributes,
        last_offset_delta=max(len(built) - 1, 0), base_timestamp=NOW, max_timestamp=NOW + 5,
    ))
    if kind == "padded":  # the first record declares one byte more than its fields take
        first = bytearray(b"\x00\x00\x00\x01")
        write_varint(first, len(records[0][1]))
        first += records[0][1] + b"\x00\x00"
        head = bytearray()
        write_varint(head, len(first))
        data = data[:61] + bytes(head) + bytes(first)
        data = data[:8] + struct.pack(">i", len(data) - 12) + data[12:57] + struct.pack(">i", 1) + data[61:]
        return _with_fixed_crc(data)
    if kind == "garbled":  # a byte of the records changed, the CRC made right again
        mutable = bytearray(data)
        at = 61 + garble % max(len(data) - 61, 1)
        if at < len(mutable):
            mutable[at] ^= 0x5A
        data = _with_fixed_crc(bytes(mutable))
    return data


@pytest.mark.parametrize("side_by_side", [1, 3, runs._SIDE_BY_SIDE])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(st.tuples(batch_kind, st.lists(record, min_size=1, max_size=6), st.integers(0, 10**6)),
                     min_size=1, max_size=12),
    cut=st.integers(0, 80),
    split_bytes=st.sampled_from([64, 700, 1 << 20]),
)
def test_runs_hold_what_single_batches_hold(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    side_by_side: int,
    batches: list[tuple[str, list[tuple[int, bytes, str]], int]],
    cut: int,
    split_bytes: int,
) -> None:
    """Also with the records of every batch followed by numpy (``side_by_side`` 1), by numpy until
    fewer than three batches are left, and (the default) mostly by the Python loop."""
    monkeypatch.setattr(runs, "_SIDE_BY_SIDE", side_by_side)
    data = b""
    offset = 0
    for kind, records, garble in batches:
        data += _batch(offset, kind, records, garble)
        offset += len(records)
    target = tmp_path_factory.mktemp("runs") / "00000000000000000000.log"
    target.write_bytes(data[: len(data) - cut])
    info = LogDirInfo(str(target.parent))
    for split in split_file(target, info, split_bytes=split_bytes, newest_segment=True):
        assert _flat(list(walk_split(split, runs=True))) == _flat(list(walk_split(split)))


def test_a_quorum_log_is_read_in_runs_but_for_its_control_batches(scenario: Truth) -> None:
    """The fast path is the common path: on a real quorum's logs and snapshots every batch that is
    not a control batch comes in a run."""
    in_runs = 0
    single: list[RecordBatch] = []
    for split in plan([str(scenario.root / "cluster")]).splits:
        for item in walk_split(split, runs=True):
            if isinstance(item, BatchRun):
                in_runs += len(item.offsets)
            elif isinstance(item, RecordBatch):
                single.append(item)
    assert in_runs > 100
    assert single and all(batch.is_control for batch in single)


def test_a_run_stops_at_its_split_end(tmp_path: Path) -> None:
    """A run takes the batches that start before the split's end, as the walk of single batches
    does, so neighbouring splits share none."""
    data = b"".join(_batch(i * 2, "ordinary", [(0, b"\x01\x02\x00ab", "plain")] * 2, 0) for i in range(20))
    target = tmp_path / "00000000000000000000.log"
    target.write_bytes(data)
    splits = split_file(target, LogDirInfo(str(tmp_path)), split_bytes=500, newest_segment=True)
    assert len(splits) > 2
    offsets = [int(o) for s in splits for item in walk_split(s, runs=True) if isinstance(item, BatchRun)
               for o in item.offsets]
    assert offsets == list(range(40))


@pytest.mark.parametrize("side_by_side", [1, 5, runs._SIDE_BY_SIDE])
def test_batches_of_many_sizes_are_framed_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, side_by_side: int
) -> None:
    """Many sound batches of 1 to 300 records, some with values long enough for two- and three-byte
    lengths: numpy follows the records of many batches at once and the Python loop finishes the
    longest, and the run holds what single batches hold."""
    monkeypatch.setattr(runs, "_SIDE_BY_SIDE", side_by_side)
    sizes = [1, 7, 1, 3, 300, 7, 1, 40, 2, 7, 120, 1, 1, 7, 5, 60]
    data = b""
    offset = 0
    for n, count in enumerate(sizes * 4):
        lengths = [(i * 37 + n) % 90 + (200 * i if i % 50 == 3 else 0) for i in range(count)]
        records = [(i % 5 - 2, b"\x01\x02\x00" + bytes([i % 251]) * length, "plain")
                   for i, length in enumerate(lengths)]
        data += _batch(offset, "ordinary", records, 0)
        offset += count
    target = tmp_path / "00000000000000000000.log"
    target.write_bytes(data)
    split = split_file(target, LogDirInfo(str(tmp_path)), split_bytes=1 << 24, newest_segment=True)[0]
    walked = list(walk_split(split, runs=True))
    assert all(isinstance(item, BatchRun) for item in walked)
    assert _flat(walked) == _flat(list(walk_split(split)))
