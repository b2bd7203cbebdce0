"""Framing ordinary batches without building their records: the same offsets and values as decoding
them, nothing framed that decoding refuses, and files read as BatchReader reads them."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings

from kafka_admin_kraft.image import frames
from kafka_admin_kraft.image.frames import FramedBatch, FrameReader, frame_batch
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records import (
    Compression,
    Header,
    RawMetadataRecord,
    RecordBatch,
    encode_batch,
    make_attributes,
)
from kafka_admin_kraft.records.batch import decode_batch_at
from kafka_admin_kraft.records.reader import BatchReader
from unit.image.image_testlib import batches, broker, feature, partition_change, record
from unit.records.records_testlib import batches as any_batches
from unit.records.records_testlib import fix_crc, mutate


def _agrees(data: bytes) -> FramedBatch | None:
    """Frame ``data`` (one batch) and check it against decoding it."""
    framed = frame_batch(data, 0, len(data))
    if framed is not None:
        decoded = decode_batch_at(data, 0, len(data), 0, "batch")  # must not raise
        assert [framed.first_offset + i for i in range(len(framed.values))] == [
            r.offset for r in decoded.records]
        assert framed.values == [r.value for r in decoded.records]
        assert (framed.base_offset, framed.last_offset_delta, framed.partition_leader_epoch,
                framed.max_timestamp) == (decoded.base_offset, decoded.last_offset_delta,
                                          decoded.partition_leader_epoch, decoded.max_timestamp)
        assert framed.next_offset == decoded.next_offset and framed.last_offset == decoded.last_offset
    return framed


def _metadata_batch(records: int, *, base: int = 0) -> RecordBatch:
    changes = [partition_change(i % 3, isr=[1, 2][: 1 + i % 2]) for i in range(records)]
    return batches([changes], base=base)[0]


def test_an_ordinary_batch_is_framed_with_its_offsets_and_values() -> None:
    for count in (1, 63, 64, 65, 200):  # offset deltas of one and two bytes
        framed = _agrees(encode_batch(_metadata_batch(count, base=1000)))
        assert framed is not None and len(framed.values) == count and framed.only_changes
    mixed = _agrees(encode_batch(batches([[partition_change(0, isr=[1]), feature("group.version", 1)]])[0]))
    assert mixed is not None and not mixed.only_changes
    old = _agrees(encode_batch(batches([[partition_change(0, isr=[1], version=0)]])[0]))
    assert old is not None and old.only_changes
    big = _agrees(encode_batch(batches([[broker(1, rack="r" * 200)]])[0]))  # two-byte value length
    assert big is not None and not big.only_changes


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b._replace(attributes=make_attributes(compression=Compression.GZIP)),
        lambda b: b._replace(records=[b.records[0]._replace(key=b"k")]),
        lambda b: b._replace(records=[b.records[0]._replace(headers=(Header("h", None),))]),
        lambda b: b._replace(records=[b.records[0]._replace(value=None)]),
        lambda b: b._replace(records=[b.records[0]._replace(value=b"\x01\x05")]),
        lambda b: b._replace(records=[b.records[0], b.records[1]._replace(offset=b.base_offset + 2)]),
        lambda b: b._replace(records=[]),
    ],
    ids=["compressed", "key", "headers", "null value", "short value", "offset gap", "empty"],
)
def test_other_batches_are_left_to_decoding(change: object) -> None:
    assert callable(change)
    data = encode_batch(change(_metadata_batch(2)))
    assert frame_batch(data, 0, len(data)) is None
    decode_batch_at(data, 0, len(data), 0, "batch")  # they are sound: decoding reads them


def test_control_batches_and_bad_crcs_are_left_to_decoding() -> None:
    control = encode_batch(batches([[messages.LeaderChangeMessage(version=0, leader_id=1)]])[0])
    assert frame_batch(control, 0, len(control)) is None
    data = bytearray(encode_batch(_metadata_batch(2)))
    data[-2] ^= 1
    assert frame_batch(bytes(data), 0, len(data)) is None


@settings(max_examples=300, deadline=None)
@given(any_batches())
def test_any_batch_is_framed_only_as_decoding_reads_it(batch: RecordBatch) -> None:
    _agrees(encode_batch(batch))


def test_damaged_batches_are_framed_only_as_decoding_reads_them() -> None:
    rng = random.Random(7)
    original = encode_batch(batches([[partition_change(1, isr=[1, 2], leader=1),
                                      record(messages.NoOpRecord()), partition_change(2, replicas=[3])]])[0])
    framed = 0
    for _ in range(3000):
        mutant = fix_crc(mutate(rng, original))
        if len(mutant) < 61:
            continue
        try:
            result = _agrees(mutant)
        except CorruptRecordError:
            raise AssertionError(f"framed a batch that decoding refuses: {mutant.hex()}") from None
        framed += result is not None
    assert framed > 0


def _write(path: Path, datas: list[bytes]) -> int:
    path.write_bytes(b"".join(datas))
    return path.stat().st_size


def _both(path: Path, size: int) -> tuple[list[RecordBatch | FramedBatch], FrameReader, BatchReader]:
    with path.open("rb") as stream:
        reader = FrameReader(stream, path, size)
        read = list(reader)
    with BatchReader.open(path) as plain:
        expected = list(plain)
    assert [(b.base_offset, b.next_offset) for b in read] == [
        (b.base_offset, b.next_offset) for b in expected]
    for got, want in zip(read, expected, strict=True):
        if isinstance(got, FramedBatch):
            assert got.values == [r.value for r in want.records]
        else:
            assert got == want
    return read, reader, plain


def test_a_file_reads_as_batch_reader_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "WINDOW", 300)  # batches cross windows; some are larger than one
    datas = [encode_batch(b) for b in batches([[feature("metadata.version", 33)], [broker(1)]], base=0)]
    datas[1] = encode_batch(batches([[broker(1)]], base=2)[0])
    leader = messages.LeaderChangeMessage(version=0, leader_id=1)
    datas.insert(1, encode_batch(batches([[leader]], base=1)[0]))
    datas += [encode_batch(_metadata_batch(n, base=3 + 100 * i)) for i, n in enumerate((1, 30, 2, 50))]
    path = tmp_path / "00000000000000000000.log"
    read, reader, _ = _both(path, _write(path, datas))
    assert [type(b).__name__ for b in read] == ["FramedBatch", "RecordBatch"] + ["FramedBatch"] * 5
    assert reader.torn_tail is None


def test_a_torn_tail_is_noted_as_batch_reader_notes_it(tmp_path: Path) -> None:
    datas = [encode_batch(_metadata_batch(3)), encode_batch(_metadata_batch(3, base=3))]
    path = tmp_path / "torn.log"
    for cut in (5, 30, len(datas[1]) - 1):
        _, reader, plain = _both(path, _write(path, [datas[0], datas[1][:cut]]))
        assert reader.torn_tail is not None and reader.torn_tail == plain.torn_tail
    # Only the size the file had when opened is read: bytes appended later are not there.
    size = _write(path, datas)
    with path.open("rb") as stream:
        assert len(list(FrameReader(stream, path, size - 1))) == 1


def test_a_bad_length_fails_as_in_batch_reader(tmp_path: Path) -> None:
    data = bytearray(encode_batch(_metadata_batch(3)))
    data[8:12] = (5).to_bytes(4, "big")
    path = tmp_path / "bad.log"
    path.write_bytes(bytes(data))
    with path.open("rb") as stream, pytest.raises(CorruptRecordError) as framed:
        list(FrameReader(stream, path, len(data)))
    with BatchReader.open(path) as plain, pytest.raises(CorruptRecordError) as expected:
        list(plain)
    assert str(framed.value) == str(expected.value)


def test_an_unknown_record_type_is_framed_as_its_bytes() -> None:
    raw = RawMetadataRecord(99, 0, b"\x00")
    framed = _agrees(encode_batch(batches([[raw]])[0]))
    assert framed is not None and framed.values == [b"\x01\x63\x00\x00"] and not framed.only_changes
