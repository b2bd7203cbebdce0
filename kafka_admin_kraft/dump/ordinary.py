"""The record lines of ordinary batches, framed straight from the bytes: the hot loop of a deep dump.

Almost every batch of a metadata log is uncompressed, has no producer (base sequence -1) and
CreateTime timestamps, and holds records whose key is null, which have no headers, whose offsets
follow one another from the batch's base offset and which share one timestamp (the controller
stamps a batch once). :func:`frame_values` slices the values of such a batch out of its bytes
without building a record per value; it accepts only what the project's batch decoder accepts, with
the same offsets, timestamps and values, and hands any other batch back (None) to be read the
ordinary way, so that what is odd or wrong with it is printed as before.

:class:`LineStyle` holds the fixed parts of a record's line in Kafka's text or in ``--output json``,
so that :func:`record_lines` builds each line in one formatting step: the record's metadata, then
its payload through the generated reader of its type and version (``metadata_json``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from kafka_admin_kraft.dump.json_text import json_string
from kafka_admin_kraft.dump.payload import DECODE_FAILURES, FAST_READERS, Reader, metadata_payload


def frame_values(buf: bytes, pos: int, end: int, count: int) -> tuple[list[bytes], int] | None:
    """The values of the ``count`` (> 0) records in ``buf[pos:end]`` and their common timestamp delta,
    or None when a record is not ordinary (see the module docstring) or the bytes do not hold exactly
    ``count`` records."""
    values: list[bytes] = []
    append = values.append
    stamp = -1
    try:
        for delta in range(0, count << 1, 2):
            # Length: a zig-zag varint of one or two bytes, not negative.
            b = buf[pos]
            if b < 0x80:
                pos += 1
            else:
                c = buf[pos + 1]
                if c >= 0x80:
                    return None
                b = (b & 0x7F) | (c << 7)
                pos += 2
            if b & 1:
                return None
            record_end = pos + (b >> 1)  # past ``end`` or not after the fields: refused below
            # Attributes (any), then the timestamp delta: a varlong of one or two bytes, the same for
            # every record.
            b = buf[pos + 1]
            if b < 0x80:
                p = pos + 2
            else:
                c = buf[pos + 2]
                if c >= 0x80:
                    return None
                b = (b & 0x7F) | (c << 7)
                p = pos + 3
            if b != stamp:
                if stamp >= 0:
                    return None
                stamp = b
            # The offset delta must be the record's index (``delta``, zig-zag encoded: twice it).
            b = buf[p]
            if b < 0x80:
                p += 1
            else:
                c = buf[p + 1]
                if c >= 0x80:
                    return None
                b = (b & 0x7F) | (c << 7)
                p += 2
            if b != delta or buf[p] != 1:  # and a null key
                return None
            # The value's length, one or two bytes; the value; no headers.
            b = buf[p + 1]
            if b < 0x80:
                p += 2
            else:
                c = buf[p + 2]
                if c >= 0x80:
                    return None
                b = (b & 0x7F) | (c << 7)
                p += 3
            value_end = p + (b >> 1)
            if b & 1 or value_end + 1 != record_end or buf[value_end] != 0:
                return None
            append(buf[p:value_end])
            pos = record_end
    except IndexError:
        return None
    if pos != end:
        return None
    return values, (stamp >> 1) ^ -(stamp & 1)


class LineStyle(NamedTuple):
    """The fixed parts of a record's line: ``start``, the offset, ``middle(timestamp type, timestamp)``,
    the value size, then with the decoder the record type's text from ``decoded`` (keyed by the first
    three bytes of a value), its data and ``close``. An undecodable value's line goes on with
    ``metadata``, ``payload(reason)`` and ``end``; without the decoder, ``metadata`` and ``end``."""

    start: str
    middle: Callable[[str, int], str]
    decoded: dict[bytes, tuple[str, Reader]]
    close: str
    metadata: str
    payload: Callable[[str], str]
    end: str


def _styled(before_data: str) -> dict[bytes, tuple[str, Reader]]:
    return {head: (before_data + prefix, reader) for head, (prefix, reader) in FAST_READERS.items()}


def payload_json(text: str) -> str:
    """The decoder's text as a member of a record object: the record, or the reason it is unreadable."""
    return f',"payloadError":{json_string(text)}' if text.startswith("Error at ") else f',"payload":{text}'


def _text_middle(kind: str, timestamp: int) -> str:
    return f" {kind}: {timestamp} keySize: -1 valueSize: "


def _json_middle(kind: str, timestamp: int) -> str:
    return f',"timestampType":"{kind}","timestamp":{timestamp},"keySize":-1,"valueSize":'


def _text_payload(text: str) -> str:
    return f" payload: {text}"


TEXT: Final = LineStyle("| offset: ", _text_middle, _styled(" sequence: -1 headerKeys: [] payload: "), "}\n",
                        " sequence: -1 headerKeys: []", _text_payload, "\n")
"""Kafka's text: ``DumpLogSegments.printRecordMetadata`` and the decoder's payload."""
JSON: Final = LineStyle('{"type":"record","offset":', _json_middle,
                        _styled(',"sequence":-1,"headerKeys":[],"payload":'), "}}\n",
                        ',"sequence":-1,"headerKeys":[]', payload_json, "}\n")
"""``--output json``: one record object per line."""


def record_lines(lines: list[str], values: list[bytes], first: int, middle: str, style: LineStyle,
                 decode: bool) -> None:
    """Append the lines of the records holding ``values``, the first at offset ``first``, to
    ``lines``; ``middle`` is ``style.middle`` of their timestamp."""
    append = lines.append
    start = style.start
    if not decode:
        bare = style.metadata + style.end
        for offset, value in enumerate(values, first):
            append(f"{start}{offset}{middle}{len(value)}{bare}")
        return
    fast = style.decoded
    close = style.close
    failures = DECODE_FAILURES
    for offset, value in enumerate(values, first):
        entry = fast.get(value[:3])
        if entry is not None:
            try:
                data, end = entry[1](value, 3)
            except failures:
                end = -1
            if end == len(value):
                append(f"{start}{offset}{middle}{end}{entry[0]}{data}{close}")
                continue
        append(f"{start}{offset}{middle}{len(value)}{style.metadata}"
               f"{style.payload(metadata_payload(value, offset))}{style.end}")
