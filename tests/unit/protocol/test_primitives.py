"""Varints, uuids, strings and tagged sections against hand-worked bytes."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.errors import DecodeError, EncodeError
from kafka_admin_kraft.protocol import primitives as p
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID, ZERO_UUID, Uuid

UVARINTS = [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
            (16383, b"\xff\x7f"), (16384, b"\x80\x80\x01"), (0xFFFFFFFF, b"\xff\xff\xff\xff\x0f")]
# Zig-zag: 0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3, 63 -> 126, -64 -> 127, 64 -> 128.
VARINTS = [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (-2, b"\x03"), (63, b"\x7e"), (-64, b"\x7f"),
           (64, b"\x80\x01"), (2147483647, b"\xfe\xff\xff\xff\x0f"), (-2147483648, b"\xff\xff\xff\xff\x0f")]


@pytest.mark.parametrize(("value", "raw"), UVARINTS)
def test_unsigned_varint(value: int, raw: bytes) -> None:
    out = bytearray()
    p.write_uvarint(out, value)
    assert bytes(out) == raw
    assert p.read_uvarint(raw, 0) == (value, len(raw))
    assert p.uvarint_size(value) == len(raw)


@pytest.mark.parametrize(("value", "raw"), VARINTS)
def test_signed_varint(value: int, raw: bytes) -> None:
    out = bytearray()
    p.write_varint(out, value)
    assert bytes(out) == raw
    assert p.read_varint(raw, 0) == (value, len(raw))


def test_varlong_extremes() -> None:
    for value in (-(1 << 63), (1 << 63) - 1, -1, 0, 1 << 40):
        out = bytearray()
        p.write_varlong(out, value)
        assert p.read_varlong(bytes(out), 0) == (value, len(out))
    out = bytearray()
    p.write_varlong(out, -(1 << 63))
    assert bytes(out) == b"\xff" * 9 + b"\x01"


def test_bad_varints() -> None:
    with pytest.raises(DecodeError, match="longer than 5 bytes"):
        p.read_uvarint(b"\x80\x80\x80\x80\x80\x01", 0)
    with pytest.raises(DecodeError, match="ends inside a varint"):
        p.read_uvarint(b"\x80\x80", 0)
    with pytest.raises(EncodeError):
        p.write_uvarint(bytearray(), -1)
    with pytest.raises(EncodeError):
        p.write_varint(bytearray(), 1 << 31)


def test_uuid_text_form() -> None:
    assert str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert str(METADATA_TOPIC_ID) == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert Uuid.from_string("AAAAAAAAAAAAAAAAAAAAAQ") == METADATA_TOPIC_ID
    assert Uuid.from_ints(0, 1) == METADATA_TOPIC_ID
    assert Uuid.from_ints(-1, -1).bytes == b"\xff" * 16
    assert str(Uuid.from_ints(-1, -1)) == "_____________________w"
    assert METADATA_TOPIC_ID.is_reserved() and ZERO_UUID.is_reserved()
    for bad in ("short", "AAAAAAAAAAAAAAAAAAAAA!", "AAAAAAAAAAAAAAAAAAAAAB"):
        with pytest.raises(ValueError):
            Uuid.from_string(bad)


def test_random_uuids_are_usable_directory_ids() -> None:
    for _ in range(200):
        value = Uuid.random()
        assert not value.is_reserved()
        assert not str(value).startswith("-")
        assert Uuid.from_string(str(value)) == value


def test_strings() -> None:
    out = bytearray()
    p.write_string(out, "héllo")
    assert bytes(out) == b"\x00\x06h\xc3\xa9llo"
    out = bytearray()
    p.write_compact_nullable_string(out, None)
    p.write_compact_string(out, "")
    p.write_nullable_string(out, None)
    assert bytes(out) == b"\x00\x01\xff\xff"
    assert p.read_compact_nullable_string(b"\x00", 0) == (None, 1)
    with pytest.raises(DecodeError, match="not nullable"):
        p.read_compact_string(b"\x00", 0)
    with pytest.raises(DecodeError, match="exceeds"):
        p.read_string(b"\x00\x05ab", 0)
    with pytest.raises(DecodeError, match="negative length"):
        p.read_string(b"\xff\xfe", 0)
    with pytest.raises(EncodeError, match="not nullable"):
        p.write_string(bytearray(), None)


def test_array_length_is_bounded_by_remaining_bytes() -> None:
    with pytest.raises(DecodeError, match="cannot fit"):
        p.read_array_length(b"\x7f\xff\xff\xff\x00", 0, False, 4)
    assert p.read_array_length(b"\xff\xff\xff\xff", 0, False, 4) == (-1, 4)
    assert p.read_array_length(b"\x00", 0, True, 1) == (-1, 1)


def test_tagged_fields_sorted_and_unique() -> None:
    out = bytearray()
    p.write_tagged_fields(out, [(5, b"\x01"), (1, b"")])
    assert bytes(out) == b"\x02" b"\x01\x00" b"\x05\x01\x01"
    assert p.read_tagged_fields(bytes(out), 0) == ([(1, b""), (5, b"\x01")], len(out))
    with pytest.raises(EncodeError, match="set twice"):
        p.write_tagged_fields(bytearray(), [(1, b""), (1, b"")])
    with pytest.raises(DecodeError, match="claims"):
        p.read_tagged_fields(b"\x01\x00\x09\x00", 0)
