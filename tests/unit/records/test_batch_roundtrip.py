"""Property tests: any batch, record or metadata frame survives encode -> decode unchanged."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    MAX_BATCH_SIZE,
    ApiMessageAndVersion,
    BatchReader,
    Compression,
    Header,
    RawMetadataRecord,
    Record,
    RecordBatch,
    decode_batch_bytes,
    decode_metadata_record,
    encode_batch,
    encode_metadata_record,
    make_attributes,
    metadata_batches,
)
from kafka_admin_kraft.records.builder import data_record_size

INT16 = st.integers(-(1 << 15), (1 << 15) - 1)
INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
BLOB = st.none() | st.binary(max_size=300)


@st.composite
def batches(draw: st.DrawFn) -> RecordBatch:
    base_offset = draw(st.integers(0, (1 << 62)))
    base_timestamp = draw(st.integers(-(1 << 40), 1 << 45))
    count = draw(st.integers(0, 12))
    records = []
    for index in range(count):
        offset_delta = index * draw(st.integers(1, 3))
        headers = tuple(draw(st.lists(st.builds(Header, st.text(max_size=8), BLOB), max_size=3)))
        records.append(Record(base_offset + offset_delta, base_timestamp + draw(st.integers(-1000, 10**9)),
                              draw(BLOB), draw(BLOB), headers, draw(st.integers(0, 255))))
    attributes = make_attributes(compression=draw(st.sampled_from([Compression.NONE, Compression.GZIP])),
                                 transactional=draw(st.booleans()), control=draw(st.booleans()),
                                 delete_horizon=draw(st.booleans())) | draw(st.sampled_from([0, 0x08]))
    return RecordBatch(base_offset=base_offset, records=records, partition_leader_epoch=draw(INT32),
                       attributes=attributes, last_offset_delta=draw(INT32), base_timestamp=base_timestamp,
                       max_timestamp=draw(INT64), producer_id=draw(INT64), producer_epoch=draw(INT16),
                       base_sequence=draw(INT32))


@settings(max_examples=150, deadline=None)
@given(batches())
def test_batches_round_trip(batch: RecordBatch) -> None:
    data = encode_batch(batch)
    decoded = decode_batch_bytes(data, position=1234)
    assert decoded == batch
    assert decoded.size_in_bytes == len(data)
    assert decoded.position == 1234
    if batch.compression is Compression.NONE:
        assert encode_batch(decoded) == data


@settings(max_examples=50, deadline=None)
@given(st.lists(batches(), max_size=6))
def test_streams_of_batches_round_trip(items: list[RecordBatch]) -> None:
    data = b"".join(encode_batch(batch) for batch in items)
    reader = BatchReader(io.BytesIO(data), start=0)
    decoded = list(reader)
    assert decoded == items
    assert reader.position == len(data)
    assert reader.torn_tail is None


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0x7FFF).filter(lambda key: key not in messages.METADATA_RECORD_NAMES),
       st.integers(0, 0x7FFF), st.binary(max_size=64))
def test_unknown_metadata_records_round_trip_raw(api_key: int, version: int, body: bytes) -> None:
    raw = RawMetadataRecord(api_key, version, body)
    value = encode_metadata_record(raw)
    decoded = decode_metadata_record(value)
    assert decoded == raw
    assert encode_metadata_record(decoded) == value


def test_known_type_at_unknown_version_stays_raw() -> None:
    value = bytes([1, 12, 9]) + b"\x05whatever"  # FeatureLevelRecord has only version 0
    decoded = decode_metadata_record(value)
    assert decoded == RawMetadataRecord(12, 9, b"\x05whatever")
    assert encode_metadata_record(decoded) == value


NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(
    st.builds(lambda n, lvl: ApiMessageAndVersion(messages.FeatureLevelRecord(name=n, feature_level=lvl), 0),
              NAMES, INT16),
    st.builds(lambda n, u: ApiMessageAndVersion(messages.TopicRecord(name=n, topic_id=Uuid(u)), 0),
              NAMES, st.binary(min_size=16, max_size=16)),
    st.just(ApiMessageAndVersion(messages.NoOpRecord(), 0)),
), min_size=1, max_size=30), st.integers(0, 1 << 40), st.integers(0, 1 << 20))
def test_metadata_batches_round_trip(records: list[ApiMessageAndVersion], base: int, epoch: int) -> None:
    built = metadata_batches(base, epoch, 42, records, max_batch_size=400)
    decoded = [decode_batch_bytes(encode_batch(batch)) for batch in built]
    assert [decode_metadata_record(r.value) for batch in decoded for r in batch.records] == records
    assert [r.offset for batch in decoded for r in batch.records] == list(range(base, base + len(records)))
    for batch in decoded:
        assert batch.size_in_bytes <= 400
        assert batch.partition_leader_epoch == epoch
        assert batch.base_timestamp == batch.max_timestamp == 42


def test_metadata_batches_split_exactly_at_the_size_limit() -> None:
    record = ApiMessageAndVersion(messages.FeatureLevelRecord(name="x" * 100, feature_level=1), 0)
    value_size = len(encode_metadata_record(record))
    one = 61 + data_record_size(0, value_size)
    two = one + data_record_size(1, value_size)
    assert [len(b.records) for b in metadata_batches(0, 0, 0, [record] * 3, max_batch_size=two)] == [2, 1]
    assert [len(b.records) for b in metadata_batches(0, 0, 0, [record] * 3, max_batch_size=two - 1)] == [
        1, 1, 1]
    assert encode_batch(metadata_batches(0, 0, 0, [record] * 2, max_batch_size=two)[0]).__len__() == two
    assert len(metadata_batches(0, 0, 0, [record] * 1000)) == 1
    assert MAX_BATCH_SIZE == 8 * 1024 * 1024
