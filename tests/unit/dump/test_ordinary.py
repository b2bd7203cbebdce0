"""Ordinary batches printed straight from their bytes give the lines the general way gives, byte for
byte; every batch the general way must read (an odd record, a damaged one, another kind of batch) is
refused and printed the general way."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from kafka_admin_kraft.dump import ordinary
from kafka_admin_kraft.dump.dumper import Dumper, DumpOptions
from kafka_admin_kraft.dump.ordinary import JSON, TEXT, ordinary_batch
from kafka_admin_kraft.dump.walk import BatchWalk, DumpError
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    Header,
    Record,
    RecordBatch,
    encode_batch,
    encode_metadata_record,
    make_attributes,
)
from unit.dump.dump_testlib import DIRECTORY, T0, TOPIC, batches, config_record, record_start

OPTIONS = {
    "text": DumpOptions(print_contents=True, deep_iteration=True, metadata_decoder=True),
    "json": DumpOptions(print_contents=True, deep_iteration=True, metadata_decoder=True, json=True),
    "deep": DumpOptions(deep_iteration=True),
    "deep json": DumpOptions(deep_iteration=True, json=True),
}


def _partition(partition: int) -> bytes:
    """A PartitionRecord v1 of 109 bytes: a value size of two bytes."""
    return encode_metadata_record(ApiMessageAndVersion(messages.PartitionRecord(
        partition_id=partition, topic_id=TOPIC, replicas=[1, 2, 3], isr=[1, 2], leader=1, leader_epoch=0,
        partition_epoch=0, directories=[DIRECTORY] * 3), 1))


def _batch(values: list[bytes | None], *, base_offset: int = 5, deltas: Callable[[int], int] = lambda i: 0,
           offsets: Callable[[int], int] = lambda i: i, **fields: int) -> bytes:
    records = [Record(base_offset + offsets(i), T0 + deltas(i), None, value)
               for i, value in enumerate(values)]
    return encode_batch(RecordBatch(base_offset=base_offset, partition_leader_epoch=3, base_timestamp=T0,
                                    max_timestamp=T0 + max(deltas(i) for i in range(len(values))),
                                    last_offset_delta=offsets(len(values) - 1), records=records, **fields))


def _dump(data: bytes, options: DumpOptions, *, framed: bool) -> tuple[str, list[tuple[int, int]], str]:
    """The text printed for the batches of ``data``, the non-consecutive offsets and the error."""
    out = io.BytesIO()
    dumper = Dumper(options, out, lambda text: None)
    dumper.ordinary = dumper.ordinary and framed
    pairs: list[tuple[int, int]] = []
    error = ""
    try:
        dumper.dump_batches(BatchWalk(lambda at, size: data[at:at + size], "x.log", len(data)), 2, pairs)
    except DumpError as exc:
        error = str(exc)
    dumper.flush()
    return out.getvalue().decode(), pairs, error


ORDINARY = {
    "one record": [_partition(0)],
    "records of several kinds": [encode_metadata_record(record) for record in [
        ApiMessageAndVersion(messages.FeatureLevelRecord(name="metadata.version", feature_level=21), 0),
        ApiMessageAndVersion(messages.TopicRecord(name="foo", topic_id=TOPIC), 0),
        config_record("cleanup.policy", None), ApiMessageAndVersion(messages.NoOpRecord(), 0)]],
    # offset deltas of two bytes from the 65th record on: a header of 9 bytes, with no room for the
    # value's first three among the bytes it is looked up by
    "200 records": [_partition(i) for i in range(200)],
    # values the decoder refuses: an unknown type, bytes after the body, a short body, frame 0, empty
    "undecodable values": [b"\x01\x7f\x00", _partition(1) + b"\x00", _partition(2)[:20], b"\x00\x03\x01", b"",
                           b"\x01"],
    "a value of a version past the reader's": [b"\x01\x14\x63\x00"],
}


@pytest.mark.parametrize("style", list(OPTIONS))
@pytest.mark.parametrize("case", list(ORDINARY))
def test_an_ordinary_batch_prints_as_the_general_way(case: str, style: str) -> None:
    data = _batch(list(ORDINARY[case]))
    assert ordinary_batch(data, 0, len(data), 0, JSON if OPTIONS[style].json else TEXT, True) is not None
    assert _dump(data, OPTIONS[style], framed=True) == _dump(data, OPTIONS[style], framed=False)


def _with_byte(data: bytes, at: int, value: int) -> bytes:
    changed = bytearray(data)
    changed[at] = value
    return bytes(changed)


PLAIN = _batch([_partition(0), _partition(1), _partition(2)])
REFUSED = {
    "two timestamps": _batch([_partition(0), _partition(1)], deltas=lambda i: i),
    "a gap in the offsets": _batch([_partition(0), _partition(1)], offsets=lambda i: 2 * i),
    "a null value": _batch([_partition(0), None]),
    "a key": encode_batch(RecordBatch(base_offset=0, base_timestamp=T0, max_timestamp=T0, records=[
        Record(0, T0, b"k", _partition(0))])),
    "headers": encode_batch(RecordBatch(base_offset=0, base_timestamp=T0, max_timestamp=T0, records=[
        Record(0, T0, None, _partition(0), (Header("h", b"v"),))])),
    "a producer": _batch([_partition(0)], producer_id=7, producer_epoch=0, base_sequence=0),
    "transactional": _batch([_partition(0)], attributes=make_attributes(transactional=True), producer_id=7,
                            producer_epoch=0),
    "a record length one short": _with_byte(PLAIN, record_start(PLAIN, 1), PLAIN[record_start(PLAIN, 1)] - 2),
    "a value length one long": _with_byte(PLAIN, record_start(PLAIN, 1) + 6, PLAIN[record_start(PLAIN, 1) + 6]
                                          + 2),
    "headers where none are": _with_byte(PLAIN, record_start(PLAIN, 2) - 1, 2),
    "a count one too many": _with_byte(PLAIN, 60, 4),
    "a count one too few": _with_byte(PLAIN, 60, 2),
    "a three-byte value length": _batch([b"\x01\x04\x00" + b"\x00" * 9000]),
}


@pytest.mark.parametrize("style", list(OPTIONS))
@pytest.mark.parametrize("case", list(REFUSED))
def test_any_other_batch_is_refused_and_printed_the_general_way(case: str, style: str) -> None:
    data = REFUSED[case]
    assert ordinary_batch(data, 0, len(data), 0, TEXT, True) is None
    assert _dump(data, OPTIONS[style], framed=True) == _dump(data, OPTIONS[style], framed=False)


def test_the_sample_log_prints_as_the_general_way() -> None:
    data = b"".join(batches())
    for options in OPTIONS.values():
        assert _dump(data, options, framed=True) == _dump(data, options, framed=False)


def test_a_record_header_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second batch of the same shape finds every record header in the cache."""
    TEXT.heads.clear()
    first = _batch([_partition(0), _partition(1)])
    assert ordinary_batch(first, 0, len(first), 0, TEXT, True) is not None
    monkeypatch.setattr(ordinary, "_head", lambda key, style: pytest.fail("parsed again"))
    second = _batch([_partition(7), _partition(8)], base_offset=100)
    assert ordinary_batch(second, 0, len(second), 0, TEXT, True) is not None
