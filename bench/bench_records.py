"""Decode speed of a KRaft metadata log: batches with CRC checks, records, metadata frames, values.

Generates a metadata log shaped like a controller's (NoOp heartbeats in one-record batches, topic
creations as a TopicRecord plus its PartitionRecords in one batch, broker and controller
registrations, feature levels) into a temporary directory, then streams it back from disk.

Figures (one line each, records per second and MB of log per second, best of --repeat runs):
  records       batch header + CRC-32C + every record (offset, timestamp, key, value, headers)
  framed        the same + the ApiMessageAndVersion frame of each data record (api key, version);
                the body stays bytes. This is what a log scan, copy or filter pays.
  typed         the same + decoding every value into its generated message class
  kafka-python  the peer, when installed: its MemoryRecords over each whole segment file, with its
                CRC check and every record's value (same work as "records", but not streaming)

Usage: python bench/bench_records.py [--records N] [--repeat R]
Counts: "records" and the peer include the one control record; the others count data records.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataLogDir,
    MetadataRecord,
    SegmentWriter,
    control_batch,
    decode_metadata_batch,
    metadata_batches,
    read_frame,
)

SEGMENT_BYTES = 64 * 1024 * 1024


def _broker(broker_id: int, epoch: int) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(messages.RegisterBrokerRecord(
        broker_id=broker_id, incarnation_id=Uuid.random(), broker_epoch=epoch,
        end_points=[messages.RegisterBrokerRecord.BrokerEndpoint(
            name="PLAINTEXT", host=f"broker-{broker_id}.kafka.svc", port=9092, security_protocol=0)],
        features=[messages.RegisterBrokerRecord.BrokerFeature(
            name="metadata.version", min_supported_version=7, max_supported_version=29)],
        rack=f"rack-{broker_id % 3}", fenced=True, log_dirs=[Uuid.random()]), 3)


def _controller(controller_id: int) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(messages.RegisterControllerRecord(
        controller_id=controller_id, incarnation_id=Uuid.random(),
        end_points=[messages.RegisterControllerRecord.ControllerEndpoint(
            name="CONTROLLER", host=f"controller-{controller_id}", port=9093, security_protocol=0)],
        features=[messages.RegisterControllerRecord.ControllerFeature(
            name="kraft.version", min_supported_version=0, max_supported_version=1)]), 0)


def _topic(rng: random.Random, index: int) -> list[MetadataRecord]:
    topic_id = Uuid.random()
    records: list[MetadataRecord] = [
        ApiMessageAndVersion(messages.TopicRecord(name=f"orders-{index}", topic_id=topic_id), 0)]
    for partition in range(rng.choice((1, 3, 6, 12, 24, 50))):
        replicas = rng.sample(range(1, 10), 3)
        records.append(ApiMessageAndVersion(messages.PartitionRecord(
            partition_id=partition, topic_id=topic_id, replicas=replicas, isr=replicas,
            leader=replicas[0], leader_epoch=0, partition_epoch=0,
            directories=[Uuid.random() for _ in replicas]), 1))
    return records


def _events(rng: random.Random) -> Iterator[list[MetadataRecord]]:
    """What the controller appends, one list per raft append (= one batch)."""
    yield [ApiMessageAndVersion(messages.FeatureLevelRecord(name="metadata.version", feature_level=29), 0)]
    for controller in range(3):
        yield [_controller(controller)]
    for broker in range(1, 10):
        yield [_broker(broker, broker)]
    topic = 0
    while True:
        roll = rng.random()
        if roll < 0.55:
            yield [ApiMessageAndVersion(messages.NoOpRecord(), 0)]
        elif roll < 0.95:
            topic += 1
            yield _topic(rng, topic)
        elif roll < 0.99:
            yield [_broker(rng.randrange(1, 10), rng.randrange(1 << 20))]
        else:
            yield [ApiMessageAndVersion(
                messages.FeatureLevelRecord(name="group.version", feature_level=1), 0)]


def generate(directory: Path, record_count: int) -> tuple[int, int]:
    """Write the log; return (records, bytes)."""
    rng = random.Random(7)
    offset = 0
    epoch = 1
    timestamp = 1_700_000_000_000
    written = 0
    segment = SegmentWriter(directory, 0)
    leader_change = messages.LeaderChangeMessage(
        version=0, leader_id=1, voters=[messages.LeaderChangeMessage.Voter(voter_id=i) for i in range(1, 4)],
        granting_voters=[messages.LeaderChangeMessage.Voter(voter_id=2)])
    segment.append(control_batch(offset, epoch, timestamp, [leader_change]))
    offset += 1
    for event in _events(rng):
        if written >= record_count:
            break
        timestamp += rng.randrange(1, 500)
        for batch in metadata_batches(offset, epoch, timestamp, event):
            if segment.size >= SEGMENT_BYTES:
                segment.close()
                segment = SegmentWriter(directory, batch.base_offset)
            segment.append(batch)
            offset = batch.next_offset
            written += len(batch.records)
    segment.close()
    size = sum(path.stat().st_size for path in directory.glob("*.log"))
    return written, size


def scan_records(directory: Path) -> int:
    records = 0
    for batch in MetadataLogDir(directory).read_log():
        records += len(batch.records)
    return records


def scan_kafka_python(directory: Path) -> int:
    from kafka.record import MemoryRecords  # type: ignore[import-untyped]

    records = 0
    for path in sorted(directory.glob("*.log")):
        log = MemoryRecords(path.read_bytes())
        while (batch := log.next_batch()) is not None:
            if not batch.validate_crc():
                raise RuntimeError("CRC mismatch")
            for record in batch:
                _ = record.value
                records += 1
    return records


def scan_framed(directory: Path) -> int:
    records = 0
    for batch in MetadataLogDir(directory).read_log():
        if batch.is_control:
            continue
        for record in batch.records:
            read_frame(record.value)  # type: ignore[arg-type]
        records += len(batch.records)
    return records


def scan_typed(directory: Path) -> int:
    records = 0
    for batch in MetadataLogDir(directory).read_log():
        if not batch.is_control:
            records += len(decode_metadata_batch(batch))
    return records


def _best(label: str, func: Callable[[Path], int], directory: Path, size: int, repeat: int) -> None:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = func(directory)
        best = min(best, time.perf_counter() - start)
    print(f"{label:<13} {count / best:>10,.0f} records/s  {size / best / 1e6:>7.1f} MB/s  "
          f"({count:,} records in {best:.2f} s, best of {repeat})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-records-") as temp:
        directory = Path(temp)
        start = time.perf_counter()
        records, size = generate(directory, args.records)
        segments = len(list(directory.glob("*.log")))
        print(f"log           {records:,} metadata records, {size / 1e6:.1f} MB in {segments} segments "
              f"(generated in {time.perf_counter() - start:.1f} s)")
        _best("records", scan_records, directory, size, args.repeat)
        _best("framed", scan_framed, directory, size, args.repeat)
        _best("typed", scan_typed, directory, size, args.repeat)
        if importlib.util.find_spec("kafka") is not None:
            _best("kafka-python", scan_kafka_python, directory, size, args.repeat)


if __name__ == "__main__":
    main()
