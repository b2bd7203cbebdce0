"""Malformed metadata record frames and bodies raise a typed error that says where."""

from __future__ import annotations

import contextlib
import random
import time

import pytest

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError, DecodeError, KafkaAdminError
from kafka_admin_kraft.records import (
    Record,
    RecordBatch,
    data_batch,
    decode_batch_bytes,
    decode_control_batch,
    decode_metadata_batch,
    decode_metadata_record,
    encode_batch,
    make_attributes,
)
from unit.records.records_testlib import T, hx, mutate


@pytest.mark.parametrize(("value", "text"), [
    (hx("00 14 00 00"), "frame version is 0"),
    (hx("02 14 00 00"), "frame version is 2"),
    (hx("01"), "buffer ends"),
    (hx("01 ff ff ff ff ff 00"), "varint longer than 5 bytes"),
    (hx("01 80 80 02 00"), "api key 32768 does not fit in an int16"),
    (hx("01 14 00 00 00"), "1 bytes follow the NoOpRecord v0 body"),
    (None, "null"),
])
def test_bad_metadata_frames(value: bytes | None, text: str) -> None:
    with pytest.raises(CorruptRecordError, match=text):
        decode_metadata_record(value)


def test_bad_metadata_body_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="FeatureLevelRecord"):
        decode_metadata_record(hx("01 0c 00 11 6d65"))


def test_typed_batch_errors_name_file_batch_and_offset() -> None:
    batch = decode_batch_bytes(encode_batch(data_batch(40, 1, T, [hx("01 14 00 00"), hx("00 14 00 00")])),
                               position=900)
    with pytest.raises(CorruptRecordError) as info:
        decode_metadata_batch(batch, what="/x/00000000000000000040.log")
    assert info.value.what == "/x/00000000000000000040.log"
    assert info.value.offset == 900
    assert "record at offset 41" in info.value.reason
    control = decode_batch_bytes(encode_batch(data_batch(50, 1, T, [b"\x00"])))
    with pytest.raises(CorruptRecordError, match="record at offset 50"):
        decode_control_batch(control, what="f")


def test_fuzzed_values_raise_only_project_errors() -> None:
    rng = random.Random(7)
    values = [bytes([1, key, 0]) + rng.randbytes(rng.randint(0, 40))
              for key in (0, 2, 3, 12, 20, 23, 24, 25, 27)]
    deadline = time.monotonic() + 1.0
    runs = 0
    while time.monotonic() < deadline or runs < 2000:
        value = mutate(rng, rng.choice(values))
        key = rng.randbytes(4)
        with contextlib.suppress(KafkaAdminError):
            decode_metadata_record(value)
        with contextlib.suppress(KafkaAdminError):
            decode_control_batch(RecordBatch(base_offset=0, records=[Record(0, 0, key, value)],
                                             attributes=make_attributes(control=True)))
        runs += 1
    assert runs >= 2000
