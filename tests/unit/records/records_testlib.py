"""Test helpers shared by the record tests: byte layouts followed independently of the code under test
(``hx``, ``hand_batch``, ``varint``), the constants of the hand-written vectors, a Hypothesis strategy
for batches, the mutations of the fuzz tests, a small snapshot built with the code and Kafka's JSON
schemas."""

from __future__ import annotations

import json
import random
import re
import struct
from pathlib import Path

import crc32c
from hypothesis import strategies as st

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    Compression,
    Header,
    Record,
    RecordBatch,
    control_batch,
    encode_batch,
    make_attributes,
    metadata_batches,
)

T = 1_700_000_000_000  # 0x0000018BCFE56800
U1 = Uuid.from_string("3Db5QLSqSZieL3rJBUUegA")  # dc36f940b4aa49989e2f7ac905451e80
U2 = Uuid(bytes(range(16)))  # 000102030405060708090a0b0c0d0e0f


def hx(text: str) -> bytes:
    """Bytes from commented hex: everything after ``#`` on a line is a comment."""
    return bytes.fromhex("".join(line.split("#", 1)[0] for line in text.splitlines()))


def hand_batch(*, base_offset: int, epoch: int, attributes: int, last_offset_delta: int, timestamp: int,
               records: list[bytes], producer_id: int = -1, producer_epoch: int = -1,
               base_sequence: int = -1, max_timestamp: int | None = None) -> bytes:
    """A v2 batch laid out as Kafka's ``DefaultRecordBatch`` documents it (CRC-32C over bytes 21..end)."""
    body = b"".join(records)
    after_crc = struct.pack(">hiqqqhii", attributes, last_offset_delta, timestamp,
                            timestamp if max_timestamp is None else max_timestamp, producer_id,
                            producer_epoch, base_sequence, len(records)) + body
    return struct.pack(">qiibI", base_offset, 49 + len(body), epoch, 2, crc32c.crc32c(after_crc)) + after_crc


def fix_crc(batch: bytes) -> bytes:
    """Recompute the CRC of a (possibly mutated) single batch so that later checks are reached."""
    return batch[:17] + struct.pack(">I", crc32c.crc32c(batch[21:])) + batch[21:]


def varint(value: int) -> bytes:
    """Zig-zag varint for small non-negative test values (below 8192)."""
    raw = value * 2
    return bytes([raw]) if raw < 0x80 else bytes([(raw & 0x7F) | 0x80, raw >> 7])


INT16 = st.integers(-(1 << 15), (1 << 15) - 1)
INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
BLOB = st.none() | st.binary(max_size=300)


@st.composite
def batches(draw: st.DrawFn) -> RecordBatch:
    """Any v2 batch: keys, values, headers, attributes and producer fields drawn at random."""
    base_offset = draw(st.integers(0, (1 << 62)))
    base_timestamp = draw(st.integers(-(1 << 40), 1 << 45))
    count = draw(st.integers(0, 12))
    records = []
    for index in range(count):
        offset_delta = index * draw(st.integers(1, 3))
        headers = tuple(draw(st.lists(st.builds(Header, st.text(max_size=8), BLOB), max_size=3)))
        records.append(Record(base_offset + offset_delta, base_timestamp + draw(st.integers(-1000, 10**9)),
                              draw(BLOB), draw(BLOB), headers, draw(st.integers(0, 255))))
    attributes = make_attributes(compression=draw(st.sampled_from([Compression.NONE, Compression.GZIP])),
                                 transactional=draw(st.booleans()), control=draw(st.booleans()),
                                 delete_horizon=draw(st.booleans())) | draw(st.sampled_from([0, 0x08]))
    return RecordBatch(base_offset=base_offset, records=records, partition_leader_epoch=draw(INT32),
                       attributes=attributes, last_offset_delta=draw(INT32), base_timestamp=base_timestamp,
                       max_timestamp=draw(INT64), producer_id=draw(INT64), producer_epoch=draw(INT16),
                       base_sequence=draw(INT32))


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to four random edits: a changed, inserted, deleted or flipped byte, or a cut tail."""
    raw = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        spot = rng.randrange(len(raw) or 1)
        if kind < 0.5 and raw:
            raw[spot] = rng.randrange(256)
        elif kind < 0.65:
            raw[spot:spot] = rng.randbytes(rng.randint(1, 8))
        elif kind < 0.8:
            del raw[spot:spot + rng.randint(1, 8)]
        elif kind < 0.9:
            del raw[spot:]
        elif raw:
            raw[spot] ^= 1 << rng.randrange(8)
    return bytes(raw)


def snapshot_batches(end_offset: int, epoch: int) -> list[bytes]:
    """A snapshot's encoded batches: header, two FeatureLevelRecords, footer (offsets 0-3)."""
    level = ApiMessageAndVersion(messages.FeatureLevelRecord(name="metadata.version", feature_level=21), 0)
    return [encode_batch(control_batch(0, epoch, T, [messages.SnapshotHeaderRecord(
                version=0, last_contained_log_timestamp=T)])),
            encode_batch(metadata_batches(1, epoch, T, [level] * 2)[0]),
            encode_batch(control_batch(3, epoch, T, [messages.SnapshotFooterRecord(version=0)]))]


def reference_schema(shared_dir: Path, name: str) -> dict[str, object]:
    """A message schema of ``../shared/kafka-spec``, its ``//`` comment lines dropped."""
    text = (shared_dir / "kafka-spec" / "messages" / f"{name}.json").read_text()
    return dict(json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)))
