"""The Java text forms Kafka's metadata shell prints: ``Optional``, lists, doubles, instants, and the
order Java sorts strings and uuids in.

Kafka's image nodes print values through ``toString``: ``Optional.empty`` / ``Optional[x]``
(``java.util.Optional``), ``[a, b]`` (``AbstractCollection`` and ``Arrays.toString``), doubles as
``Double.toString``, an instant as ``DateTimeFormatter.ISO_ZONED_DATE_TIME`` at zone UTC
(``ProvenanceNode``). Names are sorted with ``String.compareTo`` (UTF-16 code units) and directory ids
with ``Uuid.compareTo`` (the two halves as signed longs).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from typing import Final

from kafka_admin_kraft.dump.json_text import double_json

_HALVES: Final = struct.Struct(">qq")
_DAY_MS: Final = 86_400_000


def optional(value: object | None) -> str:
    """``java.util.Optional.toString``."""
    return "Optional.empty" if value is None else f"Optional[{value}]"


def java_list(items: Iterable[object]) -> str:
    """``List.toString`` / ``Arrays.toString``: ``[a, b]``."""
    return "[" + ", ".join(str(item) for item in items) + "]"


def java_bool(value: bool) -> str:
    return "true" if value else "false"


def java_double(value: float) -> str:
    """``Double.toString``: shortest round-trip digits, ``1.0E7`` from ten million on."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return double_json(value)


def string_key(text: str) -> bytes:
    """Sort key of ``String.compareTo``: UTF-16 code units, which differs from Python's code point order
    for characters above U+FFFF."""
    return text.encode("utf-16-be", "surrogatepass")


def java_sorted(names: Iterable[str]) -> list[str]:
    return sorted(names, key=string_key)


def uuid_key(raw: bytes) -> tuple[int, int]:
    """Sort key of Kafka's ``Uuid.compareTo``: most then least significant half, as signed longs."""
    most, least = _HALVES.unpack(raw)
    return most, least


def _civil(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count from 1970-01-01, proleptic Gregorian, any range."""
    days += 719_468
    era = days // 146_097
    day_of_era = days - era * 146_097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def iso_zoned_utc(epoch_ms: int) -> str:
    """``ISO_ZONED_DATE_TIME`` of an epoch-millisecond instant at ``ZoneId.of("UTC")``:
    ``2024-05-01T10:20:30.5Z[UTC]``; the fraction is left out when zero and loses trailing zeros,
    years beyond four digits carry a sign."""
    days, millis = divmod(epoch_ms, _DAY_MS)
    year, month, day = _civil(days)
    seconds, fraction = divmod(millis, 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if year > 9999:
        year_text = f"+{year}"
    elif year < 0:
        year_text = f"-{-year:04d}"
    else:
        year_text = f"{year:04d}"
    text = f"{year_text}-{month:02d}-{day:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}"
    if fraction:
        text += "." + f"{fraction:03d}".rstrip("0")
    return text + "Z[UTC]"
