"""Test helpers that follow the byte layouts independently of the code under test."""

from __future__ import annotations

import struct

import crc32c


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
