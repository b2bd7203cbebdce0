"""The text of single values: the general encoder writes what the standard library's encoder writes,
and the writers of a str, a Uuid and bytes write what the general encoder writes for them."""

from __future__ import annotations

import json
import math

from kafka_admin_kraft.pipeline.json_values import bytes_json, json_text, str_json, uuid_json
from kafka_admin_kraft.protocol.primitives import Uuid


def test_floats_and_bytes() -> None:
    for value in (1.5, -0.0, math.inf, math.nan, 1e300):
        assert json_text(value) == json.dumps(value)
    assert json_text(b"\x00\xff") == '"AP8="'
    assert json_text(bytearray(b"ab")) == json.dumps(str(bytearray(b"ab")))


def test_value_writers_write_what_the_general_encoder_writes() -> None:
    for text in ("", "plain", 'quote " and \\ backslash', "h\u00e9st \u2603 \x00\x1f"):
        assert str_json(text) == json_text(text)
    for raw in (bytes(16), bytes(range(16)), b"\xff" * 16):
        assert uuid_json(Uuid(raw)) == json_text(Uuid(raw))
    for data in (b"", b"\x00\xff", bytes(range(256))):
        assert bytes_json(data) == json_text(data)
