"""PartitionChangeRecords read straight from their bytes, and runs of them summed per partition.

A busy controller's log is mostly PartitionChangeRecords (ISR shrinks and expands, leader elections),
and most of them repeat byte for byte: a partition goes back and forth between a few states. What a
run of them does to a partition depends only on the last value each field is set to and on how many
records there are, since Kafka's ``PartitionRegistration.merge`` keeps the fields a record leaves
null, bumps the leader epoch once per record naming a leader (other than -2, no change) and the
partition epoch once per record. :func:`sum_changes` therefore counts a run's distinct values with
one C-level ``Counter`` pass, decodes each distinct value once (its tagged fields once per distinct
tail, the part after the partition and topic id), and adds the counts up per partition: the
replay's :func:`~kafka_admin_kraft.image.replay.merge_fields` then applies each partition's
:class:`ChangeSum` once, which leaves the partition as applying every record in turn would.
"""

from __future__ import annotations

import struct
from collections import Counter
from typing import Any, Final

from kafka_admin_kraft.dump.json_text import Malformed, uuid_text, uvarint32

NO_LEADER_CHANGE: Final = -2
NO_RECOVERY_CHANGE: Final = -1
CHANGE_HEAD: Final = struct.Struct(">i16s")
"""PartitionId and TopicId, the start of every PartitionChangeRecord body (v0-v2)."""
DECODE_ERRORS: Final = (ValueError, IndexError, struct.error, Malformed)
"""What decoding a damaged PartitionChangeRecord raises."""

_INT32: Final = struct.Struct(">i")
_ARRAY_TAGS: Final = {2: 2, 3: 3, 4: 4, 6: 7, 7: 8}
"""Tagged int32 arrays of PartitionChangeRecord -> their place in the decoded fields."""
_BODY: Final = 3
"""Where the body starts in a value framed with one-byte frame version, api key and version."""
_TAIL: Final = _BODY + CHANGE_HEAD.size


def no_change() -> list[Any]:
    """The fields of a record that changes nothing: [isr, leader, replicas, removing, adding, recovery,
    directories, elr, last known elr]."""
    return [None, NO_LEADER_CHANGE, None, None, None, NO_RECOVERY_CHANGE, None, None, None]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint; one byte in the common case, without a call."""
    byte = data[pos]
    return (byte, pos + 1) if byte < 0x80 else uvarint32(data, pos)


def _array(data: bytes) -> tuple[int, ...] | None:
    size, pos = _varint(data, 0)
    if size == 0:
        return None
    if pos + 4 * (size - 1) != len(data):
        raise ValueError("an array does not fill its field")
    return struct.unpack_from(f">{size - 1}i", data, pos)


def decode_tags(value: bytes, pos: int, version: int) -> list[tuple[int, Any]]:
    """The tagged fields of a PartitionChangeRecord (v0-v2) that start at ``value[pos]``: (place in
    :func:`no_change`'s layout, value) of each, in the record's order; raises one of
    :data:`DECODE_ERRORS` when they do not decode or do not end the value."""
    fields: list[tuple[int, Any]] = []
    count, pos = _varint(value, pos)
    for _ in range(count):
        tag, pos = _varint(value, pos)
        size, pos = _varint(value, pos)
        end = pos + size
        if size < 0 or end > len(value):
            raise ValueError("a tagged field runs past the record")
        data = value[pos:end]
        pos = end
        if tag == 0:
            fields.append((0, _array(data)))
        elif tag == 1:
            fields.append((1, _INT32.unpack(data)[0]))
        elif tag in _ARRAY_TAGS and (tag < 6 or version >= 2):
            fields.append((_ARRAY_TAGS[tag], _array(data)))
        elif tag == 5:
            fields.append((5, struct.unpack(">b", data)[0]))
        elif tag == 8 and version >= 1:
            length, at = _varint(data, 0)
            if length:
                if at + 16 * (length - 1) != len(data):
                    raise ValueError("the directories do not fill their field")
                fields.append((6, [uuid_text(data[at + 16 * i:at + 16 * i + 16]) for i in range(length - 1)]))
    if pos != len(value):
        raise ValueError(f"{len(value) - pos} bytes follow the record")
    return fields


def decode_partition_change(value: bytes, pos: int, version: int) -> tuple[int, bytes, list[Any]]:
    """A PartitionChangeRecord body (v0-v2) read straight from its bytes: (partition id, topic id
    bytes, its fields as :func:`no_change` lays them out, with None, -2 and -1 for those it does not
    change)."""
    partition_id, topic = CHANGE_HEAD.unpack_from(value, pos)
    fields = no_change()
    for place, field in decode_tags(value, pos + CHANGE_HEAD.size, version):
        fields[place] = field
    return partition_id, topic, fields


class ChangeSum:
    """What a run of PartitionChangeRecords does to one partition: the last value set of each field
    (the layout of :func:`no_change`), the records naming a leader and all the records."""

    __slots__ = ("changes", "fields", "leader_changes")

    def __init__(self) -> None:
        self.fields = no_change()
        self.leader_changes = 0
        self.changes = 0


_UNCHANGED: Final = tuple(no_change())
_Parsed = tuple[tuple[tuple[int, Any], ...], bool]
"""A decoded tail: the (place, value) of each field it sets, and whether it names a leader."""


class Tails:
    """Decoded tails by record version, kept from one run to the next (a log's partitions keep going
    back to the same states); emptied past ``limit`` entries so that it stays small."""

    __slots__ = ("by_version", "limit")

    def __init__(self, limit: int) -> None:
        self.by_version: tuple[dict[bytes, _Parsed], ...] = ({}, {}, {})
        self.limit = limit

    def trim(self) -> None:
        if sum(len(known) for known in self.by_version) > self.limit:
            for known in self.by_version:
                known.clear()


def _parse_tail(value: bytes, version: int) -> _Parsed:
    """The fields a value's tagged fields change: a tag holding its "no change" value (a null array,
    leader -2, recovery -1) changes nothing, as :func:`no_change` has it."""
    last = dict(decode_tags(value, _TAIL, version))  # a tag given twice: its last value counts
    unchanged = _UNCHANGED
    sets = tuple((place, field) for place, field in last.items() if field != unchanged[place])
    return sets, last.get(1, NO_LEADER_CHANGE) != NO_LEADER_CHANGE


def sum_changes(values: list[bytes], tails: Tails) -> dict[bytes, ChangeSum] | None:
    """The :class:`ChangeSum` of each partition a run of PartitionChangeRecord values changes, keyed by
    the records' first 20 body bytes (partition id and topic id); None when a value does not decode
    (the caller then applies them one by one, each refused record reported at its offset). Every
    value is framed with one-byte frame version, api key 5 and a version from 0 to 2."""
    counts = Counter(reversed(values))  # by last occurrence, newest first
    by_version = tails.by_version
    sums: dict[bytes, ChangeSum] = {}
    try:
        for value in reversed(counts):  # oldest last occurrence first: later ones overwrite
            count = counts[value]
            version = value[2]
            known = by_version[version]
            tail = value[_TAIL:]
            parsed = known.get(tail)
            if parsed is None:
                if len(value) < _TAIL:
                    return None
                parsed = known[tail] = _parse_tail(value, version)
            key = value[_BODY:_TAIL]
            total = sums.get(key)
            if total is None:
                total = sums[key] = ChangeSum()
            sets, names_leader = parsed
            for place, field in sets:
                total.fields[place] = field
            total.changes += count
            if names_leader:
                total.leader_changes += count
    except DECODE_ERRORS:
        return None
    finally:
        tails.trim()
    return sums
