"""A first leader epoch written straight into a controller's metadata log, for benchmarks that need
a large log (catch-up, snapshots) without appending it through the quorum first.

The log is what a leader of epoch 1 writes: the LeaderChange control batch with KRaftVersion and
Voters, the bootstrap records in a metadata transaction, then batches of ``RECORDS_PER_BATCH``
records until ``megabytes`` are written, in ``SEGMENT_BYTES`` segments.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid, write_uvarint
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataRecord,
    RawMetadataRecord,
    SegmentWriter,
    control_batch,
    encode_batch,
    metadata_batches,
)
from kafka_admin_kraft.storage import InitialController, bootstrap_records
from kafka_admin_kraft.storage.bootstrap import voters_record

CONFIG_RECORD = 4
SEGMENT_BYTES = 8 * 1024 * 1024
RECORDS_PER_BATCH = 100
VALUE_BYTES = 1000
METADATA_VERSION = 29


def compact_string(out: bytearray, text: str) -> None:
    data = text.encode()
    write_uvarint(out, len(data) + 1)
    out += data


def config_record(index: int) -> RawMetadataRecord:
    """ConfigRecord v0 (api key 4): a 1 KiB topic config value, distinct per index."""
    body = bytearray([2])  # ResourceType TOPIC
    compact_string(body, f"topic-{index:07d}")
    compact_string(body, "x.payload")
    compact_string(body, f"{index:07d}" * (VALUE_BYTES // 7))
    body.append(0)  # no tagged fields
    return RawMetadataRecord(CONFIG_RECORD, 0, bytes(body))


TOPIC_ID = Uuid.from_string("MTAyNDAyNDAyNDAyNDAyNA")
PARTITIONS = 1000
REPLICAS = 100
DIRECTORIES = [Uuid.random() for _ in range(REPLICAS)]


def partition_record(index: int) -> ApiMessageAndVersion:
    """PartitionRecord v2 of one of 1,000 partitions with 100 replicas (~2.4 KB): a leader and ISR
    change each time, so the snapshot keeps only the latest per partition."""
    replicas = list(range(REPLICAS))
    return ApiMessageAndVersion(messages.PartitionRecord(
        partition_id=index % PARTITIONS, topic_id=TOPIC_ID, replicas=replicas,
        isr=replicas[: REPLICAS - index % 3], leader=index % REPLICAS, leader_epoch=index // PARTITIONS,
        partition_epoch=index // PARTITIONS, directories=DIRECTORIES), 2)


def write_first_epoch(partition_dir: Path, controllers: Sequence[InitialController], listener: str,
                      megabytes: int, record: Callable[[int], MetadataRecord] = config_record) -> int:
    """Write epoch 1 of node ``controllers[0]`` (the leader) into ``partition_dir``; return the log
    end offset."""
    now = int(time.time() * 1000)
    voters = [messages.LeaderChangeMessage.Voter(voter_id=c.node_id) for c in controllers]
    leader_change = messages.LeaderChangeMessage(version=0, leader_id=controllers[0].node_id, voters=voters,
                                                 granting_voters=list(voters))
    batches = [control_batch(0, 1, now, [leader_change,
                                         messages.KRaftVersionRecord(version=0, k_raft_version=1),
                                         voters_record(controllers, listener)])]
    bootstrap: list[MetadataRecord] = [
        ApiMessageAndVersion(messages.BeginTransactionRecord(name="Bootstrap records"), 0),
        *bootstrap_records(METADATA_VERSION), ApiMessageAndVersion(messages.EndTransactionRecord(), 0)]
    batches.extend(metadata_batches(batches[-1].next_offset, 1, now, bootstrap))
    writer = SegmentWriter(partition_dir, 0)
    written = index = 0
    try:
        for batch in batches:
            writer.append(batch)
        next_offset = batches[-1].next_offset
        while written < megabytes * 1024 * 1024:
            records = [record(index + i) for i in range(RECORDS_PER_BATCH)]
            index += RECORDS_PER_BATCH
            batch = metadata_batches(next_offset, 1, now, records)[0]
            data = encode_batch(batch)
            if writer.size + len(data) > SEGMENT_BYTES:
                writer.close()
                writer = SegmentWriter(partition_dir, next_offset)
            writer.append(data)
            written += len(data)
            next_offset = batch.next_offset
    finally:
        writer.close()
    return next_offset
