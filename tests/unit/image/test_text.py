"""Java's text forms: the instants, doubles and orders Kafka's shell prints and sorts by."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.image.text import (
    iso_zoned_utc,
    java_double,
    java_list,
    java_sorted,
    optional,
    uuid_key,
)
from kafka_admin_kraft.protocol.primitives import Uuid


@pytest.mark.parametrize(
    ("millis", "text"),
    [
        (0, "1970-01-01T00:00:00Z[UTC]"),
        (-1, "1969-12-31T23:59:59.999Z[UTC]"),  # MetadataProvenance.EMPTY's time
        (1_700_000_000_000, "2023-11-14T22:13:20Z[UTC]"),
        (1_700_000_000_500, "2023-11-14T22:13:20.5Z[UTC]"),  # the fraction loses its trailing zeros
        (1_700_000_000_120, "2023-11-14T22:13:20.12Z[UTC]"),
        (951_782_400_001, "2000-02-29T00:00:00.001Z[UTC]"),
        (253_402_300_800_000, "+10000-01-01T00:00:00Z[UTC]"),  # years past 9999 carry a sign
    ],
)
def test_instants_print_as_iso_zoned_date_time_at_utc(millis: int, text: str) -> None:
    assert iso_zoned_utc(millis) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1024.0, "1024.0"),
        (1e7, "1.0E7"),
        (0.001, "0.001"),
        (1e-4, "1.0E-4"),
        (1.5e9, "1.5E9"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
    ],
)
def test_doubles_print_as_double_to_string(value: float, text: str) -> None:
    assert java_double(value) == text


def test_optional_and_lists() -> None:
    assert optional(None) == "Optional.empty"
    assert optional("rack-1") == "Optional[rack-1]"
    assert java_list([1, 2]) == "[1, 2]" and java_list([]) == "[]"


def test_names_sort_by_utf16_code_units() -> None:
    # U+FFFD sorts after U+1F600 in Python but before it in Java, whose strings are UTF-16.
    assert java_sorted(["\U0001f600", "\ufffd", "a"]) == ["a", "\U0001f600", "\ufffd"]


def test_uuids_sort_by_signed_halves() -> None:
    low = Uuid.from_ints(1, 0)
    negative = Uuid.from_ints(-1, 0)
    assert sorted([low.bytes, negative.bytes], key=uuid_key) == [negative.bytes, low.bytes]
