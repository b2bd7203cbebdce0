"""Metadata record frames of unknown types or versions survive decode -> encode unchanged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import RawMetadataRecord, decode_metadata_record, encode_metadata_record


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
