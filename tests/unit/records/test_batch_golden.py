"""Golden bytes of record batches, worked out by hand from Kafka's ``DefaultRecordBatch`` and
``DefaultRecord`` layouts.

Every vector is written field by field; the code under test must both decode it to the expected
values and encode those values back to the same bytes.
"""

from __future__ import annotations

from kafka_admin_kraft.records import (
    Compression,
    Header,
    Record,
    RecordBatch,
    TimestampType,
    data_batch,
    decode_batch_bytes,
    encode_batch,
)
from unit.records.records_testlib import T, hand_batch, hx

NOOP_BATCH = hx("""
    0000000000000010    # BaseOffset 16
    0000003c            # Length 60 = 72 - 12
    00000003            # PartitionLeaderEpoch 3
    02                  # Magic 2
    b03bfe3d            # CRC-32C of bytes 21..71
    0000                # Attributes: no compression, CreateTime, not transactional, not control
    00000000            # LastOffsetDelta 0
    0000018bcfe56800    # BaseTimestamp 1700000000000
    0000018bcfe56800    # MaxTimestamp 1700000000000
    ffffffffffffffff    # ProducerId -1
    ffff                # ProducerEpoch -1
    ffffffff            # BaseSequence -1
    00000001            # RecordsCount 1
    14                  # record Length: zig-zag 20 -> 10 bytes follow
    00                  #   Attributes 0
    00                  #   TimestampDelta 0
    00                  #   OffsetDelta 0
    01                  #   KeyLength -1 (null)
    08                  #   ValueLength 4
    01140000            #   Value: frame version 1, api key 20 (NoOpRecord), version 0, no tagged fields
    00                  #   HeadersCount 0
""")


def test_kraft_data_batch_decodes_field_by_field() -> None:
    batch = decode_batch_bytes(NOOP_BATCH)
    assert batch.base_offset == 16
    assert batch.partition_leader_epoch == 3
    assert batch.magic == 2
    assert batch.crc == 0xB03BFE3D
    assert batch.attributes == 0
    assert batch.compression is Compression.NONE
    assert batch.timestamp_type is TimestampType.CREATE_TIME
    assert not batch.is_transactional and not batch.is_control
    assert batch.last_offset_delta == 0 and batch.last_offset == 16 and batch.next_offset == 17
    assert batch.base_timestamp == batch.max_timestamp == T
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.records == [Record(16, T, None, hx("01140000"), (), 0)]
    assert batch.size_in_bytes == 72


def test_kraft_data_batch_is_built_byte_for_byte() -> None:
    assert encode_batch(data_batch(16, 3, T, [hx("01140000")])) == NOOP_BATCH


# A non-KRaft batch exercising keys, headers, null values, timestamp deltas and LogAppendTime.
RECORD_0 = hx("""
    20          # Length 16
    00          # Attributes
    00          # TimestampDelta 0
    00          # OffsetDelta 0
    02 6b       # KeyLength 1, "k"
    04 7631     # ValueLength 2, "v1"
    04          # HeadersCount 2
    02 68       #   key length 1, "h"
    02 76       #   value length 1, "v"
    02 6e       #   key length 1, "n"
    01          #   value length -1 (null)
""")
RECORD_1 = hx("""
    0c          # Length 6
    00          # Attributes
    0a          # TimestampDelta 5
    02          # OffsetDelta 1
    01          # KeyLength -1
    01          # ValueLength -1
    00          # HeadersCount 0
""")


def test_batch_with_keys_headers_and_log_append_time() -> None:
    data = hand_batch(base_offset=100, epoch=7, attributes=0x08, last_offset_delta=1, timestamp=T,
                      max_timestamp=T + 5, records=[RECORD_0, RECORD_1])
    expected = RecordBatch(base_offset=100, partition_leader_epoch=7, attributes=0x08, last_offset_delta=1,
                           base_timestamp=T, max_timestamp=T + 5, records=[
                               Record(100, T, b"k", b"v1", (Header("h", b"v"), Header("n", None))),
                               Record(101, T + 5, None, None)])
    batch = decode_batch_bytes(data)
    assert batch == expected
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert encode_batch(expected) == data
