"""Records per second through ``kafka-dump-log``, each run a fresh process with stdout to /dev/null,
on a generated metadata log of a busy cluster, next to the figure for Kafka's own tool.

    python bench/bench_dump_log.py --records 1000000

The log is written with the project's record writers as a controller would write it: a leader-change
control batch (LeaderChange, KRaftVersion, VotersRecord) every 50,000 offsets, broker registrations
with their fence/unfence and registration changes, topic creations (TopicRecord, two ConfigRecords
and twelve PartitionRecords in one batch), partition changes (ISR shrinks and expands, leader
moves), producer-id blocks and NoOp heartbeats; one segment, as Kafka's default
``metadata.log.segment.bytes`` (1 GiB) keeps it. Figures: ``--deep-iteration`` (record lines, no
payload), ``--cluster-metadata-decoder`` (every record decoded to Kafka's JSON) and the decoder with
``--output json``, each on every core the process may use (the tool starts one worker per core for
large files), then the decoder on one core; wall time and CPU time (the process and its workers),
the median of ``--runs`` runs. Kafka's ``kafka-dump-log.sh --cluster-metadata-decoder``, JVM start-up
included, decodes about 145,000 records/s on this kind of machine (measured elsewhere: there is no
Kafka installation here); the aim is five times that.

``--against DIR`` times another installation's ``kafka-dump-log`` (DIR is its ``bin`` directory) in
turn with this one, run for run, so that both meet the same load on a shared machine; ``--keep DIR``
writes the log there once and reuses it. The interpreter behind each tool is printed with the
figures: its build moves them (an optimized CPython, as distributions and python.org ship it, against
pyenv's default build, in BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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

KAFKA_RECORDS_PER_SECOND = 145_000
"""Kafka 4.2's ``kafka-dump-log.sh --cluster-metadata-decoder`` on this machine kind, JVM start-up
included."""
AIM = 5
"""How many times Kafka's rate the decoder should reach on every core of the machine."""
CONFIG_RECORD = 4
PARTITION_CHANGE_RECORD = 5
PRODUCER_IDS_RECORD = 15
BROKERS = 12
CONTROLLERS = 3
START = 1_700_000_000_000
TOPIC_CONFIGS = (("retention.ms", "604800000"), ("cleanup.policy", "compact"), ("min.insync.replicas", "2"),
                 ("segment.bytes", "536870912"))


def _compact_string(out: bytearray, text: str | None) -> None:
    if text is None:
        out.append(0)
        return
    data = text.encode()
    write_uvarint(out, len(data) + 1)
    out += data


def config_record(resource_type: int, resource: str, name: str, value: str | None) -> RawMetadataRecord:
    """ConfigRecord v0: ResourceType int8, ResourceName, Name, Value (nullable), no tagged fields."""
    body = bytearray(struct.pack(">b", resource_type))
    _compact_string(body, resource)
    _compact_string(body, name)
    _compact_string(body, value)
    body.append(0)
    return RawMetadataRecord(CONFIG_RECORD, 0, bytes(body))


def partition_change_record(partition: int, topic_id: Uuid, isr: list[int] | None,
                            leader: int | None) -> RawMetadataRecord:
    """PartitionChangeRecord v0: PartitionId, TopicId, then the changed fields as tagged fields (Isr is
    tag 0, Leader tag 1)."""
    body = bytearray(struct.pack(">i", partition) + topic_id.bytes)
    tags = []
    if isr is not None:
        value = bytearray()
        write_uvarint(value, len(isr) + 1)
        value += struct.pack(f">{len(isr)}i", *isr)
        tags.append((0, bytes(value)))
    if leader is not None:
        tags.append((1, struct.pack(">i", leader)))
    write_uvarint(body, len(tags))
    for tag, value in tags:
        write_uvarint(body, tag)
        write_uvarint(body, len(value))
        body += value
    return RawMetadataRecord(PARTITION_CHANGE_RECORD, 0, bytes(body))


def producer_ids_record(broker: int, epoch: int, next_id: int) -> RawMetadataRecord:
    """ProducerIdsRecord v0: BrokerId, BrokerEpoch, NextProducerId, no tagged fields."""
    return RawMetadataRecord(PRODUCER_IDS_RECORD, 0, struct.pack(">iqq", broker, epoch, next_id) + b"\0")


def _voters(directories: dict[int, Uuid]) -> messages.VotersRecord:
    voters = messages.VotersRecord
    return voters(voters=[
        voters.Voter(voter_id=node, voter_directory_id=directory,
                     endpoints=[voters.Endpoint(name="CONTROLLER", host=f"ctl{node}", port=9093)],
                     k_raft_version_feature=voters.KRaftVersionFeature(min_supported_version=0,
                                                                       max_supported_version=1))
        for node, directory in directories.items()])


def _register_broker(broker: int, epoch: int, directory: Uuid) -> ApiMessageAndVersion:
    record = messages.RegisterBrokerRecord
    return ApiMessageAndVersion(record(
        broker_id=broker, incarnation_id=Uuid.random(), broker_epoch=epoch,
        end_points=[record.BrokerEndpoint(name="PLAINTEXT", host=f"broker-{broker}.kafka.svc", port=9092,
                                          security_protocol=0)],
        features=[record.BrokerFeature(name="metadata.version", min_supported_version=7,
                                       max_supported_version=29),
                  record.BrokerFeature(name="kraft.version", min_supported_version=0,
                                       max_supported_version=1)],
        rack=f"rack-{broker % 3}", fenced=True, log_dirs=[directory]), 3)


def write_log(directory: Path, records: int, seed: int = 7) -> Path:
    """A segment of about ``records`` records (the last batch may overshoot); returns its path."""
    rng = random.Random(seed)
    directories = {node: Uuid.random() for node in range(1, CONTROLLERS + 1)}
    broker_dirs = {broker: Uuid.random() for broker in range(BROKERS)}
    leader_change = messages.LeaderChangeMessage
    topics: list[tuple[Uuid, list[list[int]]]] = []
    written = 0
    offset = 0
    epoch = 0
    now = START
    broker_epoch = 100
    next_producer_id = 0
    with SegmentWriter(directory, 0) as writer:
        while written < records:
            batches = []
            roll = rng.random()
            if offset == 0 or offset // 50_000 != (offset - 1) // 50_000:
                epoch += 1
                ids = list(directories)
                batches.append(control_batch(offset, epoch, now, [
                    leader_change(leader_id=ids[epoch % len(ids)], voters=[leader_change.Voter(voter_id=i)
                                                                           for i in ids],
                                  granting_voters=[leader_change.Voter(voter_id=i) for i in ids[:2]]),
                    messages.KRaftVersionRecord(k_raft_version=1), _voters(directories)]))
            elif roll < 0.02:
                broker = rng.randrange(BROKERS)
                broker_epoch += 1
                batch: list[MetadataRecord] = [_register_broker(broker, broker_epoch, broker_dirs[broker])]
                batch.append(ApiMessageAndVersion(messages.BrokerRegistrationChangeRecord(
                    broker_id=broker, broker_epoch=broker_epoch, fenced=-1), 0))
                batch.append(ApiMessageAndVersion(messages.UnfenceBrokerRecord(id=broker, epoch=broker_epoch),
                                                  0))
                batches += metadata_batches(offset, epoch, now, batch)
            elif roll < 0.10:
                no_op = ApiMessageAndVersion(messages.NoOpRecord(), 0)
                batches += metadata_batches(offset, epoch, now, [no_op])
            elif roll < 0.11:
                next_producer_id += 1000
                batches += metadata_batches(offset, epoch, now, [producer_ids_record(
                    rng.randrange(BROKERS), broker_epoch, next_producer_id)])
            elif roll < 0.55 or not topics:
                topic_id = Uuid.random()
                name = f"orders-{len(topics):06d}.events"
                assignments = [rng.sample(range(BROKERS), 3) for _ in range(12)]
                topics.append((topic_id, assignments))
                batch = [ApiMessageAndVersion(messages.TopicRecord(name=name, topic_id=topic_id), 0)]
                for key, value in rng.sample(TOPIC_CONFIGS, 2):
                    batch.append(config_record(2, name, key, value))
                for partition, replicas in enumerate(assignments):
                    batch.append(ApiMessageAndVersion(messages.PartitionRecord(
                        partition_id=partition, topic_id=topic_id, replicas=replicas, isr=replicas,
                        leader=replicas[0], leader_epoch=0, partition_epoch=0,
                        directories=[broker_dirs[broker] for broker in replicas]), 1))
                batches += metadata_batches(offset, epoch, now, batch)
            else:
                changes: list[MetadataRecord] = []
                for _ in range(rng.randrange(1, 8)):
                    topic_id, assignments = rng.choice(topics)
                    partition = rng.randrange(len(assignments))
                    replicas = assignments[partition]
                    isr = replicas[:rng.randrange(1, 4)]
                    changes.append(partition_change_record(partition, topic_id, isr,
                                                           isr[0] if rng.random() < 0.3 else None))
                batches += metadata_batches(offset, epoch, now, changes)
            for item in batches:
                writer.append(item)
                written += len(item.records)
                offset = item.next_offset
            now += rng.randrange(1, 20)
    return directory / "00000000000000000000.log"


def dump_seconds(tool: str, arguments: list[str], cores: set[int] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh ``kafka-dump-log`` process, stdout to /dev/null; CPU counts
    user and system time of the process and its workers. With ``cores`` the process may run on those
    only (it starts one worker per core it may use)."""
    with open(os.devnull, "wb") as sink:
        pin = None if cores is None else lambda: os.sched_setaffinity(0, cores)
        start = time.perf_counter()
        process = subprocess.Popen([tool, *arguments], stdout=sink, preexec_fn=pin)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            raise subprocess.CalledProcessError(process.returncode, tool)
        return wall, usage.ru_utime + usage.ru_stime


def interpreter(tool: str) -> str:
    """The Python that a console script runs (the path on its first line, resolved) and its version."""
    with open(tool, "rb") as script:
        python = os.path.realpath(script.readline().decode().removeprefix("#!").split()[0])
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                             text=True, check=True).stdout.strip()
    return f"{python} (Python {version})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="runs per figure and tool, interleaved; the "
                                                            "median is shown")
    parser.add_argument("--against", type=Path, help="the bin directory of another installation to time "
                                                     "in turn with this one (e.g. a venv of main)")
    parser.add_argument("--keep", type=Path, help="write the log in this directory and keep it (a log "
                                                  "there is reused)")
    args = parser.parse_args()
    tools = [("", str(Path(sys.executable).parent / "kafka-dump-log"))]
    if args.against is not None:
        tools = [(" (this tree)", tools[0][1]), (" (against)", str(args.against / "kafka-dump-log"))]
    with tempfile.TemporaryDirectory() as temp:
        directory = (args.keep or Path(temp)) / "__cluster_metadata-0"
        log = directory / "00000000000000000000.log"
        start = time.perf_counter()
        if not log.exists():
            directory.mkdir(parents=True, exist_ok=True)
            log = write_log(directory, args.records)
        count = sum(1 for _ in _records(log))
        print(f"log: {count:,} records, {log.stat().st_size / 1e6:.1f} MB, ready in "
              f"{time.perf_counter() - start:.1f} s; load average {os.getloadavg()[0]:.1f}")
        for name, tool in tools:
            print(f"kafka-dump-log{name}: {tool}, run by {interpreter(tool)}")
        cores = os.sched_getaffinity(0)
        one = {min(cores)}
        for label, options, allowed in (
                ("--deep-iteration", ["--deep-iteration"], cores),
                ("--cluster-metadata-decoder", ["--cluster-metadata-decoder"], cores),
                ("--cluster-metadata-decoder --output json",
                 ["--cluster-metadata-decoder", "--output", "json"], cores),
                ("--cluster-metadata-decoder on one core", ["--cluster-metadata-decoder"], one)):
            times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in tools}
            for _ in range(args.runs):
                for name, tool in tools:
                    times[name].append(dump_seconds(tool, [*options, "--files", str(log)], allowed))
            for name, _ in tools:
                wall = statistics.median(run[0] for run in times[name])
                cpu = statistics.median(run[1] for run in times[name])
                print(f"kafka-dump-log {label}{name}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                      f"{count / wall:,.0f} records/s ({len(allowed)} core{'s' if len(allowed) > 1 else ''})")
        print(f"Kafka's kafka-dump-log.sh --cluster-metadata-decoder (JVM start-up included): "
              f"{KAFKA_RECORDS_PER_SECOND:,} records/s; aim: {AIM * KAFKA_RECORDS_PER_SECOND:,} "
              f"({AIM}x); load average now {os.getloadavg()[0]:.1f}")


def _records(log: Path) -> list[int]:
    from kafka_admin_kraft.records import BatchReader

    with BatchReader.open(log) as reader:
        return [record.offset for batch in reader for record in batch.records]


if __name__ == "__main__":
    main()
