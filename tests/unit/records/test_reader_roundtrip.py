"""Property test: any stream of batches survives encode -> read unchanged."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.records import BatchReader, RecordBatch, encode_batch
from unit.records.records_testlib import batches


@settings(max_examples=50, deadline=None)
@given(st.lists(batches(), max_size=6))
def test_streams_of_batches_round_trip(items: list[RecordBatch]) -> None:
    data = b"".join(encode_batch(batch) for batch in items)
    reader = BatchReader(io.BytesIO(data), start=0)
    decoded = list(reader)
    assert decoded == items
    assert reader.position == len(data)
    assert reader.torn_tail is None
