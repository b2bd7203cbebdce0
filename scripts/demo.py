"""The demo: a local three-controller reference quorum operated with the Admin SDK, then the bytes.

Part one formats and starts three reference controllers on 127.0.0.1 (a dynamic quorum, as
``kafka-storage format --initial-controllers`` sets one up), describes the quorum, its features and
its controllers with ``Admin``, kills the leader with SIGKILL, times the failover, restarts the old
leader and watches it catch up, then stops everything. Part two formats a directory the way
``kafka-storage format --standalone`` does, appends what a new leader writes in its first epoch,
reads it all back, and encodes and decodes a DescribeQuorum exchange frame by frame.

    python scripts/demo.py [--dir DIRECTORY]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from kafka_admin_kraft import Admin, QuorumInfo
from kafka_admin_kraft.features import DEFAULT_FEATURE_LEVELS, LATEST_PRODUCTION_METADATA_VERSION
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    METADATA_PARTITION_DIR,
    ApiMessageAndVersion,
    MetadataLogDir,
    RecordBatch,
    SegmentWriter,
    control_batch,
    decode_control_batch,
    decode_metadata_batch,
    metadata_batches,
    read_snapshot,
)
from kafka_admin_kraft.storage import (
    InitialController,
    MetaProperties,
    QuorumState,
    bootstrap_records,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
    write_meta_properties,
    write_quorum_state,
)
from kafka_admin_kraft.storage.bootstrap import voters_record
from kafka_admin_kraft_server.local import LocalQuorum

NODE_ID = 1
LISTENER = "CONTROLLER"
METADATA_VERSION = LATEST_PRODUCTION_METADATA_VERSION


def show_quorum(info: QuorumInfo) -> None:
    print(f"  LeaderId {info.leader_id}, LeaderEpoch {info.leader_epoch}, "
          f"HighWatermark {info.high_watermark}")
    for kind, replicas in (("voter", info.voters), ("committed voter", info.committed_voters or ())):
        for replica in replicas:
            lag = info.high_watermark - replica.log_end_offset
            print(f"    {kind:<16} {replica.replica_id}  directory {replica.replica_directory_id}  "
                  f"LogEndOffset {replica.log_end_offset}  lag {lag}")


def quorum_story(root: Path) -> None:
    """Three controllers: describe, kill the leader, fail over, restart, catch up."""
    with LocalQuorum(root, 3) as quorum:
        quorum.format().start_all()
        print(f"Started 3 reference controllers of cluster {quorum.cluster_id} "
              f"on {quorum.bootstrap_servers()}")
        with Admin(bootstrap_controllers=quorum.bootstrap_servers(), default_api_timeout_ms=30000) as admin:
            info = admin.describe_metadata_quorum()
            print("\n$ describe_metadata_quorum()")
            show_quorum(info)
            features = admin.describe_features()
            finalized = ", ".join(f"{name}={level.max_version_level}"
                                  for name, level in sorted(features.finalized_features.items()))
            print(f"\n$ describe_features()\n  finalized: {finalized}")
            cluster = admin.describe_cluster()
            controller = cluster.controller.node_id if cluster.controller else None
            print(f"\n$ describe_cluster()\n  cluster {cluster.cluster_id}, active controller {controller}, "
                  f"controllers {[n.node_id for n in cluster.nodes]}")
            old_leader = info.leader_id
            print(f"\nkill -9 the leader (node {old_leader}) ...")
            started = time.monotonic()
            quorum.kill(old_leader)
            while True:
                info = admin.describe_metadata_quorum()
                if info.leader_id not in (-1, old_leader):
                    break
                time.sleep(0.05)
            print(f"  node {info.leader_id} leads epoch {info.leader_epoch} after "
                  f"{time.monotonic() - started:.2f} s")
            quorum.start(old_leader)
            print(f"restart node {old_leader} ...")
            while True:
                info = admin.describe_metadata_quorum()
                voter = next(v for v in info.voters if v.replica_id == old_leader)
                if voter.log_end_offset >= info.high_watermark > 0:
                    break
                time.sleep(0.1)
            print(f"  node {old_leader} caught up")
            show_quorum(info)
    print("stopped the quorum")


def format_directory(directory: Path, cluster_id: str, directory_id: Uuid) -> None:
    """What ``kafka-storage format --standalone`` writes for node 1."""
    write_meta_properties(directory, MetaProperties(version=1, cluster_id=cluster_id, node_id=NODE_ID,
                                                    directory_id=directory_id))
    write_bootstrap_checkpoint(directory, bootstrap_records(METADATA_VERSION, DEFAULT_FEATURE_LEVELS))
    write_bootstrap_snapshot(directory, [InitialController(NODE_ID, "localhost", 9093, directory_id)],
                             LISTENER)


def first_epoch(directory: Path, directory_id: Uuid) -> None:
    """What node 1 appends after electing itself leader of epoch 1, and its quorum-state."""
    partition = directory / METADATA_PARTITION_DIR
    now = int(time.time() * 1000)
    controller = InitialController(NODE_ID, "localhost", 9093, directory_id)
    leader_change = messages.LeaderChangeMessage(
        version=0, leader_id=NODE_ID, voters=[messages.LeaderChangeMessage.Voter(voter_id=NODE_ID)],
        granting_voters=[messages.LeaderChangeMessage.Voter(voter_id=NODE_ID)])
    start = control_batch(0, 1, now, [leader_change,
                                      messages.KRaftVersionRecord(version=0, k_raft_version=1),
                                      voters_record([controller], LISTENER)])
    records = [ApiMessageAndVersion(messages.FeatureLevelRecord(name="metadata.version",
                                                                feature_level=METADATA_VERSION), 0),
               *[ApiMessageAndVersion(messages.NoOpRecord(), 0) for _ in range(3)]]
    with SegmentWriter(partition, 0) as segment:
        segment.append(start)
        for batch in metadata_batches(start.next_offset, 1, now, records):
            segment.append(batch)
    write_quorum_state(partition / "quorum-state", QuorumState(leader_id=NODE_ID, leader_epoch=1,
                                                               voted_id=NODE_ID,
                                                               voted_directory_id=directory_id))


def show_directory(directory: Path) -> None:
    print(f"\n$ ls -R {directory}")
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            print(f"  {path.relative_to(directory)}  ({path.stat().st_size} bytes)")
    print(f"\n$ cat {directory / 'meta.properties'}")
    print((directory / "meta.properties").read_text().rstrip())
    print(f"$ cat {directory / METADATA_PARTITION_DIR / 'quorum-state'}")
    print((directory / METADATA_PARTITION_DIR / "quorum-state").read_text())


def show_log(directory: Path) -> None:
    log = MetadataLogDir(directory / METADATA_PARTITION_DIR)
    snapshot = log.latest_snapshot()
    print("\nRecords read back (offset, epoch, kind, record):")
    if snapshot is not None:
        print(f"  snapshot {snapshot.file_name}:")
        for batch in read_snapshot(log.snapshot_path(snapshot)):
            _print_batch(batch, "snapshot")
    print("  log:")
    for batch in log.read_log():
        _print_batch(batch, "log")


def _print_batch(batch: RecordBatch, what: str) -> None:
    if batch.is_control:
        for record, control in zip(batch.records, decode_control_batch(batch, what=what), strict=True):
            name = control.type.name if control.type else f"type {control.type_id}"
            value = control.value.to_dict() if isinstance(control.value, Struct) else control.value
            print(f"    {record.offset:>3} {batch.partition_leader_epoch:>3} control {name} "
                  f"{json.dumps(value)}")
    else:
        for record, value in zip(batch.records, decode_metadata_batch(batch, what=what), strict=True):
            body = value.message.to_dict() if isinstance(value, ApiMessageAndVersion) else value
            print(f"    {record.offset:>3} {batch.partition_leader_epoch:>3} data    "
                  f"{type(getattr(value, 'message', value)).__name__} {json.dumps(body)}")


def describe_quorum_exchange(directory_id: Uuid) -> None:
    """A DescribeQuorum v2 request and the leader's answer, as frames on a connection."""
    request = messages.DescribeQuorumRequest(topics=[messages.DescribeQuorumRequest.TopicData(
        topic_name="__cluster_metadata",
        partitions=[messages.DescribeQuorumRequest.PartitionData(partition_index=0)])])
    frame = framing.encode_request(request, 2, correlation_id=1, client_id="demo")
    print(f"\nDescribeQuorum v2 request frame ({len(frame)} bytes):\n  {frame.hex(' ')}")
    received = framing.decode_request(frame[4:])
    print(f"  server reads: api key {received.header.request_api_key}, version "
          f"{received.header.request_api_version}, client {received.header.client_id!r}")
    R = messages.DescribeQuorumResponse
    now = int(time.time() * 1000)
    leader = R.ReplicaState(replica_id=NODE_ID, replica_directory_id=directory_id, log_end_offset=8,
                            last_fetch_timestamp=now, last_caught_up_timestamp=now)
    response = R(error_message=None, topics=[R.TopicData(topic_name="__cluster_metadata", partitions=[
        R.PartitionData(partition_index=0, error_message=None, leader_id=NODE_ID, leader_epoch=1,
                        high_watermark=8, current_voters=[leader], observers=[])])],
        nodes=[R.Node(node_id=NODE_ID, listeners=[R.Listener(name=LISTENER, host="localhost", port=9093)])])
    reply = framing.encode_response(response, 2, correlation_id=1)
    print(f"DescribeQuorum v2 response frame ({len(reply)} bytes):\n  {reply.hex(' ')}")
    correlation_id, decoded = framing.decode_response(reply[4:], 55, 2)
    print(f"  client reads (correlation id {correlation_id}):")
    print("  " + json.dumps(decoded.to_dict(), indent=2).replace("\n", "\n  "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dir", type=Path, help="directory to format (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kraft-demo-") as scratch:
        quorum_story(Path(scratch) / "quorum")
        print()
        directory = args.dir or Path(scratch) / "metadata"
        directory.mkdir(parents=True, exist_ok=True)
        cluster_id = str(Uuid.random())
        directory_id = Uuid.random()
        print(f"Formatting {directory} for cluster {cluster_id}, node {NODE_ID}, directory {directory_id}")
        format_directory(directory, cluster_id, directory_id)
        first_epoch(directory, directory_id)
        show_directory(directory)
        show_log(directory)
        describe_quorum_exchange(directory_id)


if __name__ == "__main__":
    main()
