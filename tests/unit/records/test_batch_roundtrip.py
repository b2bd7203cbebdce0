"""Property test: any batch survives encode -> decode unchanged."""

from __future__ import annotations

from hypothesis import given, settings

from kafka_admin_kraft.records import Compression, RecordBatch, decode_batch_bytes, encode_batch
from unit.records.records_testlib import batches


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
