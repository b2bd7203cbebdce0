"""The record lines of ordinary batches, framed straight from the bytes: the hot loop of a deep dump.

Almost every batch of a metadata log is uncompressed, has no producer (base sequence -1) and
CreateTime timestamps, and holds records whose key is null, which have no headers, whose offsets
follow one another from the batch's base offset and which share one timestamp (the controller
stamps a batch once). :func:`batch_lines` prints such a batch's records straight from its bytes,
without building a record per value; it accepts only what the project's batch decoder accepts, with
the same offsets, timestamps and values, and refuses (False) any other batch, to be read the ordinary
way, so that what is odd or wrong with it is printed as before.

A record's header (its varints and null key) recurs across a log: the same value sizes at the same
offset deltas. So each header is parsed once into a :class:`Head` that holds its framing, the text
of its value size and what the record's type is printed with, looked up by the header's bytes and the
value's first three (its frame, type and version). :class:`LineStyle` holds the fixed parts of a
record's line in Kafka's text or in ``--output json``, so that each line is built in one formatting
step: the record's metadata, then its payload through the generated reader of its type and version
(``metadata_json``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from kafka_admin_kraft.dump.json_text import CACHE_LIMIT, json_string
from kafka_admin_kraft.dump.payload import DECODE_FAILURES, FAST_READERS, Reader, metadata_payload
from kafka_admin_kraft.records.batch import BATCH_HEADER_SIZE, CRC_START, HEADER
from kafka_admin_kraft.records.crc import crc32c

_unpack_header = HEADER.unpack_from


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
    heads: dict[bytes, Head]
    """The :class:`Head` of every record header met so far (a cache)."""
    batch: Callable[[int, int, int, int, int, int, int, int, int, int, bool], str]
    """The batch's line: base offset, last offset, count, producer id and epoch, partition leader
    epoch, position, max timestamp, size, CRC and whether it matches."""


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


def _text_batch(base_offset: int, last_offset: int, count: int, producer_id: int, producer_epoch: int,
                leader_epoch: int, position: int, max_timestamp: int, size: int, crc: int,
                valid: bool) -> str:
    return (f"baseOffset: {base_offset} lastOffset: {last_offset} count: {count} baseSequence: -1 "
            f"lastSequence: -1 producerId: {producer_id} producerEpoch: {producer_epoch} "
            f"partitionLeaderEpoch: {leader_epoch} isTransactional: false isControl: false "
            f"deleteHorizonMs: OptionalLong.empty position: {position} CreateTime: {max_timestamp} "
            f"size: {size} magic: 2 compresscodec: none crc: {crc} isvalid: {'true' if valid else 'false'}\n")


def _json_batch(base_offset: int, last_offset: int, count: int, producer_id: int, producer_epoch: int,
                leader_epoch: int, position: int, max_timestamp: int, size: int, crc: int,
                valid: bool) -> str:
    return (f'{{"type":"batch","baseOffset":{base_offset},"lastOffset":{last_offset},"count":{count},'
            f'"baseSequence":-1,"lastSequence":-1,"producerId":{producer_id},'
            f'"producerEpoch":{producer_epoch},'
            f'"partitionLeaderEpoch":{leader_epoch},"isTransactional":false,"isControl":false,'
            f'"deleteHorizonMs":null,"position":{position},"timestampType":"CreateTime",'
            f'"maxTimestamp":{max_timestamp},"size":{size},"magic":2,"compressCodec":"none","crc":{crc},'
            f'"isValid":{"true" if valid else "false"}}}\n')


TEXT: Final = LineStyle("| offset: ", _text_middle, _styled(" sequence: -1 headerKeys: [] payload: "), "}\n",
                        " sequence: -1 headerKeys: []", _text_payload, "\n", {}, _text_batch)
"""Kafka's text: ``DumpLogSegments.printRecordMetadata`` and the decoder's payload."""
JSON: Final = LineStyle('{"type":"record","offset":', _json_middle,
                        _styled(',"sequence":-1,"headerKeys":[],"payload":'), "}}\n",
                        ',"sequence":-1,"headerKeys":[]', payload_json, "}\n", {}, _json_batch)
"""``--output json``: one record object per line."""


HEAD_BYTES: Final = 11
"""The bytes a record's framing is looked up by: its longest ordinary header (length, attributes,
timestamp delta, offset delta, null key and value length, the varints in one or two bytes each: 10)
and, after a header of up to 8 bytes, the value's first three (its frame, type and version)."""


class Head(NamedTuple):
    """What the first HEAD_BYTES of an ordinary record settle: its framing and the fixed text after
    its timestamp."""

    delta: int
    """The offset delta, zig-zag encoded (twice the delta)."""
    stamp: int
    """The timestamp delta, zig-zag encoded."""
    value_at: int
    """Where the value starts, from the start of the record."""
    value_end: int
    """Where it ends: the record's last byte, which must be 0 (no headers)."""
    text: str
    """The value size and the text before the record's data (with the decoder)."""
    reader: Reader | None
    """The reader of the value's body, when the value's first three bytes are among HEAD_BYTES."""
    bare: str
    """The value size and the rest of the line (without the decoder)."""


def _varint(key: bytes, at: int) -> tuple[int, int]:
    """A zig-zag varint of one or two bytes (still encoded) and the position after it; IndexError for
    longer ones (no ordinary record has them) or past the key."""
    b = key[at]
    if b < 0x80:
        return b, at + 1
    c = key[at + 1]
    if c >= 0x80:
        raise IndexError("a varint of more than two bytes")
    return (b & 0x7F) | (c << 7), at + 2


def _head(key: bytes, style: LineStyle) -> Head | None:
    """The :class:`Head` of the record starting ``key``, or None when its header is not ordinary."""
    try:
        length, at = _varint(key, 0)
        record_end = at + (length >> 1)
        stamp, at = _varint(key, at + 1)  # after the attributes (any)
        delta, at = _varint(key, at)
        if key[at] != 1:  # a null key
            return None
        size, at = _varint(key, at + 1)
    except IndexError:
        return None
    value_end = at + (size >> 1)
    if length & 1 or size & 1 or value_end + 1 != record_end:
        return None
    entry = style.decoded.get(key[at:at + 3]) if at + 3 <= min(value_end, len(key)) else None
    head = Head(delta, stamp, at, value_end, f"{size >> 1}{entry[0]}" if entry else "",
                entry[1] if entry else None, f"{size >> 1}{style.metadata}{style.end}")
    if len(style.heads) >= CACHE_LIMIT:
        style.heads.clear()
    style.heads[key] = head
    return head


def ordinary_batch(buf: bytes, at: int, total: int, position: int, style: LineStyle,
                   decode: bool) -> tuple[str, int, int] | None:
    """The text of the batch ``buf[at:at + total]`` (its line and its records' lines), its base offset and
    its record count; None when it is not an ordinary batch: magic 2, uncompressed, CreateTime, neither
    transactional nor control nor with a delete horizon, no producer sequence, at least one record, and
    ordinary records (see the module docstring)."""
    (base_offset, _, leader_epoch, magic, crc, attributes, last_delta, base_timestamp, max_timestamp,
     producer_id, producer_epoch, base_sequence, count) = _unpack_header(buf, at)
    if magic != 2 or attributes & 0x7F or base_sequence != -1 or count <= 0:
        return None
    valid = crc == crc32c(buf[at + CRC_START:at + total])
    lines = [style.batch(base_offset, base_offset + last_delta, count, producer_id, producer_epoch,
                         leader_epoch, position, max_timestamp, total, crc, valid)]
    if not batch_lines(lines, buf, at + BATCH_HEADER_SIZE, at + total, count, base_offset, base_timestamp,
                       "CreateTime", style, decode):
        return None
    return "".join(lines), base_offset, count


def batch_lines(lines: list[str], buf: bytes, pos: int, end: int, count: int, first: int,
                base_timestamp: int, timestamp_type: str, style: LineStyle, decode: bool) -> bool:
    """Append the lines of the ``count`` (> 0) records in ``buf[pos:end]``, the first at offset
    ``first``, to ``lines``; False when a record is not ordinary or the bytes do not hold exactly
    ``count`` records (see the module docstring): the lines appended are then to be dropped."""
    append = lines.append
    heads = style.heads
    start = style.start
    close = style.close
    failures = DECODE_FAILURES
    stamp = -1
    middle = ""
    offset = first
    try:
        for delta in range(0, count << 1, 2):
            key = buf[pos:pos + HEAD_BYTES]
            head = heads.get(key) or _head(key, style)
            if head is None:
                return False
            head_delta, head_stamp, value_at, value_end, text, reader, bare = head
            if head_delta != delta:
                return False
            if head_stamp != stamp:
                if stamp >= 0:
                    return False
                stamp = head_stamp
                middle = style.middle(timestamp_type, base_timestamp + ((stamp >> 1) ^ -(stamp & 1)))
            value_end += pos
            if buf[value_end]:
                return False
            if decode:
                value = buf[pos + value_at:value_end]
                if reader is not None:
                    try:
                        data, at = reader(value, 3)
                    except failures:
                        at = -1
                    if at == len(value):
                        append(f"{start}{offset}{middle}{text}{data}{close}")
                    else:
                        append(_line(style, offset, middle, value))
                else:
                    append(_line(style, offset, middle, value))
            else:
                append(f"{start}{offset}{middle}{bare}")
            pos = value_end + 1
            offset += 1
    except IndexError:
        return False
    return pos == end


def _line(style: LineStyle, offset: int, middle: str, value: bytes) -> str:
    """A record's line with the decoder, its reader looked up by the value's first three bytes."""
    entry = style.decoded.get(value[:3])
    if entry is not None:
        try:
            data, end = entry[1](value, 3)
        except DECODE_FAILURES:
            end = -1
        if end == len(value):
            return f"{style.start}{offset}{middle}{end}{entry[0]}{data}{style.close}"
    return (f"{style.start}{offset}{middle}{len(value)}{style.metadata}"
            f"{style.payload(metadata_payload(value, offset))}{style.end}")
