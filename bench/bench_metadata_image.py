"""Opening and diffing metadata images of a large log: what `kafka-metadata-shell` and
`kafka-metadata-diff` do before they print.

Generates a ~100 MB controller log into a temporary `__cluster_metadata-0` directory: the bootstrap
records, 3 controllers and 30 brokers registering, 2,000 topics of 12 partitions (3 replicas with
their directories), then what a busy controller appends for the rest: ISR shrinks and expands and
leader changes (PartitionChangeRecord), broker fencing (BrokerRegistrationChangeRecord), topic
configs, and NoOp heartbeats, in batches as a controller writes them.

Figures (one line each): the log's size and records; opening the image at the end of the log;
opening it at the middle offset; opening both in one pass (``load_images``); diffing the two; and a
`kafka-metadata-diff` process doing all of it (start-up included), run on the same directory. With
``--runs N`` each figure is the median of N runs (their range in brackets); the load average before
and after is printed, as the machine may be shared.

Usage: python bench/bench_metadata_image.py [--megabytes 100] [--keep DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from kafka_admin_kraft.image import diff_images, load_image, load_images
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid, write_uvarint
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataRecord,
    RawMetadataRecord,
    SegmentWriter,
    control_batch,
    metadata_batches,
)

SEGMENT_BYTES = 64 * 1024 * 1024
BROKERS = 30
TOPICS = 2000
PARTITIONS = 12


def _uvarint(out: bytearray, value: int) -> None:
    write_uvarint(out, value)


def _int_array(values: list[int]) -> bytes:
    out = bytearray()
    _uvarint(out, len(values) + 1)
    for value in values:
        out += struct.pack(">i", value)
    return bytes(out)


def partition_change(topic: Uuid, partition: int, isr: list[int], leader: int | None) -> RawMetadataRecord:
    """PartitionChangeRecord v0 (api key 5): an ISR change, and a leader change when given."""
    body = bytearray(struct.pack(">i", partition)) + topic.bytes
    tagged = {0: _int_array(isr)}
    if leader is not None:
        tagged[1] = struct.pack(">i", leader)
    _uvarint(body, len(tagged))
    for tag, data in sorted(tagged.items()):
        _uvarint(body, tag)
        _uvarint(body, len(data))
        body += data
    return RawMetadataRecord(5, 0, bytes(body))


def config(topic: str, value: str) -> RawMetadataRecord:
    body = bytearray([2])
    for text in (topic, "retention.ms", value):
        data = text.encode()
        _uvarint(body, len(data) + 1)
        body += data
    body.append(0)
    return RawMetadataRecord(4, 0, bytes(body))


def generate(directory: Path, megabytes: int) -> tuple[int, int]:
    """Write the log; return (records, bytes)."""
    rng = random.Random(11)
    now = 1_700_000_000_000
    directories = {broker: Uuid.random() for broker in range(1, BROKERS + 1)}
    epochs = {broker: 100 + broker for broker in directories}
    topics = [(f"topic-{index:05d}", Uuid.random()) for index in range(TOPICS)]
    replicas = {
        (t, p): rng.sample(range(1, BROKERS + 1), 3) for t in range(TOPICS) for p in range(PARTITIONS)
    }
    events: list[list[MetadataRecord]] = [
        [ApiMessageAndVersion(messages.FeatureLevelRecord(name="metadata.version", feature_level=33), 0)]
    ]
    for controller in (1, 2, 3):
        events.append(
            [
                ApiMessageAndVersion(
                    messages.RegisterControllerRecord(
                        controller_id=1000 + controller,
                        incarnation_id=Uuid.random(),
                        end_points=[
                            messages.RegisterControllerRecord.ControllerEndpoint(
                                name="CONTROLLER",
                                host=f"controller-{controller}",
                                port=9093,
                                security_protocol=0,
                            )
                        ],
                    ),
                    0,
                )
            ]
        )
    for broker, epoch in epochs.items():
        events.append(
            [
                ApiMessageAndVersion(
                    messages.RegisterBrokerRecord(
                        broker_id=broker,
                        incarnation_id=Uuid.random(),
                        broker_epoch=epoch,
                        end_points=[
                            messages.RegisterBrokerRecord.BrokerEndpoint(
                                name="PLAINTEXT", host=f"broker-{broker}", port=9092, security_protocol=0
                            )
                        ],
                        rack=f"rack-{broker % 3}",
                        fenced=False,
                        log_dirs=[directories[broker]],
                    ),
                    3,
                )
            ]
        )
    for index, (name, topic_id) in enumerate(topics):
        records: list[MetadataRecord] = [
            ApiMessageAndVersion(messages.TopicRecord(name=name, topic_id=topic_id), 0)
        ]
        for partition in range(PARTITIONS):
            members = replicas[(index, partition)]
            records.append(
                ApiMessageAndVersion(
                    messages.PartitionRecord(
                        partition_id=partition,
                        topic_id=topic_id,
                        replicas=members,
                        isr=members,
                        leader=members[0],
                        leader_epoch=0,
                        partition_epoch=0,
                        directories=[directories[b] for b in members],
                    ),
                    1,
                )
            )
        events.append(records)
    writer = SegmentWriter(directory, 0)
    leader = messages.LeaderChangeMessage(
        version=0,
        leader_id=1001,
        voters=[messages.LeaderChangeMessage.Voter(voter_id=1000 + n) for n in (1, 2, 3)],
    )
    writer.append(control_batch(0, 1, now, [leader]))
    offset, written, count = 1, 0, 0

    def append(records: list[MetadataRecord]) -> None:
        nonlocal offset, written, count, writer
        for batch in metadata_batches(offset, 1, now, records):
            if writer.size >= SEGMENT_BYTES:
                writer.close()
                writer = SegmentWriter(directory, batch.base_offset)
            before = writer.size
            writer.append(batch)
            written += writer.size - before
            count += len(batch.records)
            offset = batch.next_offset

    for event in events:
        append(event)
    while written < megabytes * 1024 * 1024:
        now += rng.randrange(1, 50)
        roll = rng.random()
        if roll < 0.75:
            changes: list[MetadataRecord] = []
            for _ in range(rng.randrange(1, 20)):
                t, p = rng.randrange(TOPICS), rng.randrange(PARTITIONS)
                members = replicas[(t, p)]
                isr = members if rng.random() < 0.5 else members[:2]
                changes.append(
                    partition_change(topics[t][1], p, isr, rng.choice(isr) if rng.random() < 0.3 else None)
                )
            append(changes)
        elif roll < 0.8:
            broker = rng.randrange(1, BROKERS + 1)
            append(
                [
                    ApiMessageAndVersion(
                        messages.BrokerRegistrationChangeRecord(
                            broker_id=broker, broker_epoch=epochs[broker], fenced=rng.choice((1, -1))
                        ),
                        2,
                    )
                ]
            )
        elif roll < 0.85:
            t = rng.randrange(TOPICS)
            append([config(topics[t][0], str(rng.randrange(1, 10**9)))])
        else:
            append([ApiMessageAndVersion(messages.NoOpRecord(), 0)])
    writer.close()
    return count, written


T = TypeVar("T")


def timed(runs: int, action: Callable[[], T]) -> tuple[str, T]:
    """The median time of ``runs`` calls as text (with their range), and the last call's result."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    text = f"{statistics.median(times):.2f} s"
    if runs > 1:
        text += f" (median of {runs}: {min(times):.2f}-{max(times):.2f})"
    return text, result


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="write the log here and keep it (a log there is reused)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each figure (the median is printed)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-image-"))
    directory = root / "__cluster_metadata-0"
    directory.mkdir(parents=True, exist_ok=True)
    try:
        if not any(directory.glob("*.log")):
            started = time.perf_counter()
            records, size = generate(directory, args.megabytes)
            print(f"log: {size / 1e6:.1f} MB, {records:,} records, written in "
                  f"{time.perf_counter() - started:.1f} s")
        print(load())
        text, end = timed(args.runs, lambda: load_image(directory))
        print(f"open at the end (offset {end.provenance.offset:,}): {text}")
        middle_offset = end.provenance.offset // 2
        text, middle = timed(args.runs, lambda: load_image(directory, offset=middle_offset))
        print(f"open at offset {middle_offset:,}: {text}")
        text, _ = timed(args.runs, lambda: load_images(directory, [middle_offset, None]))
        print(f"open at offset {middle_offset:,} and at the end in one pass: {text}")
        text, difference = timed(args.runs, lambda: diff_images(middle, end))
        print(f"diff: {text} ({len(difference.changes):,} changes)")
        tool = Path(sys.executable).parent / "kafka-metadata-diff"
        command = [str(tool), str(directory), str(directory), "--offset-a", str(middle_offset), "--output",
                   "json"]
        text, _ = timed(args.runs, lambda: subprocess.run(command, stdout=subprocess.DEVNULL, check=False))
        print(f"kafka-metadata-diff process, both opens and the diff: {text}")
        print(load())
    finally:
        if args.keep is None:
            shutil.rmtree(root)


if __name__ == "__main__":
    main()
