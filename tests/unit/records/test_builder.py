"""Property tests of the batch builder: metadata records survive being batched, encoded and decoded, and
batches split exactly at the size limit."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    MAX_BATCH_SIZE,
    ApiMessageAndVersion,
    decode_batch_bytes,
    decode_metadata_record,
    encode_batch,
    encode_metadata_record,
    metadata_batches,
)
from kafka_admin_kraft.records.builder import data_record_size
from unit.records.records_testlib import INT16

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
