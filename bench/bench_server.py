"""The reference KRaft server on a 3-node loopback cluster: failover, catch-up and memory.

Figures (one line each):
  failover   time from SIGKILL of the leader until a new leader answers DescribeQuorum, with Kafka's
             default timeouts (fetch 2 s, election 1 s); median and max over --failovers runs
  catch-up   a follower whose ``__cluster_metadata-0`` was wiped is restarted on a cluster whose log
             holds --log-mb of metadata: time until its log end offset reaches the leader's high
             watermark, going through FetchSnapshot (the leader's log no longer starts at 0) and Fetch
  peak RSS   each node's VmHWM from /proc/<pid>/status at the end of the catch-up run

The large log is written before start-up with the project's segment writer, as the first leader
would have written it: a LeaderChange control batch (with KRaftVersionRecord and VotersRecord), the
bootstrap records in a metadata transaction, then ConfigRecords carrying 1 KiB values, 100 per
batch, in 8 MiB segments (``metadata.log.segment.bytes``'s minimum). Each node gets a copy; the
first leader then commits it, writes a snapshot and deletes the segments below it.

Usage: python bench/bench_server.py [--failovers N] [--log-mb MB] [--keep DIR]
Aims: failover under 3 s; peak RSS under 150 MB per node.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from integration.harness import HOST, LISTENER, Cluster, wait_until  # noqa: E402
from prewritten_log import SEGMENT_BYTES, config_record, partition_record, write_first_epoch  # noqa: E402

from kafka_admin_kraft.records import (  # noqa: E402
    MetadataRecord,
    list_segments,
    list_snapshots,
)
from kafka_admin_kraft.storage import InitialController  # noqa: E402

RECORD_KINDS: dict[str, Callable[[int], MetadataRecord]] = {"updates": partition_record,
                                                             "unique": config_record}


def prewrite_log(cluster: Cluster, megabytes: int, kind: str) -> int:
    """Write the first leader's epoch into node 1's directory and copy it to the others; return the
    log end offset."""
    partition = cluster.nodes[1].partition_dir
    controllers = [InitialController(n.node_id, HOST, n.port, n.directory_id) for n in cluster.nodes.values()]
    next_offset = write_first_epoch(partition, controllers, LISTENER, megabytes, RECORD_KINDS[kind])
    for other in cluster.nodes.values():
        if other.node_id != 1:
            for path in list_segments(partition):
                for file in (path.log, path.index, path.time_index):
                    shutil.copy2(file, other.partition_dir / file.name)
    return next_offset


def leader_answer(cluster: Cluster, candidates: list[int], min_epoch: int) -> tuple[int, int] | None:
    for node_id in candidates:
        data = cluster.quorum_from(node_id)
        if data is not None and data.leader_id == node_id and data.leader_epoch >= min_epoch:
            return node_id, data.leader_epoch
    return None


def failover_runs(root: Path, runs: int) -> list[float]:
    times: list[float] = []
    with Cluster(root / "failover", 3) as cluster:
        cluster.format().start_all()
        leader, partition = cluster.wait_for_leader(30)
        epoch = partition.leader_epoch
        for _ in range(runs):
            wait_until(lambda c=cluster, lead=leader: (p := c.quorum_from(lead)) is not None
                       and p.high_watermark > 0
                       and min(v.log_end_offset for v in p.current_voters) >= p.high_watermark,
                       30, "every voter caught up")
            survivors = [n for n in cluster.nodes if n != leader]
            started = time.monotonic()
            cluster.kill(leader, signal.SIGKILL)
            found = wait_until(lambda c=cluster, s=survivors, e=epoch: leader_answer(c, s, e + 1), 30,
                               "a new leader", interval=0.01)
            times.append(time.monotonic() - started)
            cluster.start(leader)
            leader, epoch = found
    return times


def catch_up_run(root: Path, megabytes: int, kind: str) -> None:
    properties = {"metadata.log.segment.bytes": str(SEGMENT_BYTES)}
    with Cluster(root / f"catch-up-{kind}", 3, properties=properties) as cluster:
        cluster.format()
        started = time.monotonic()
        end_offset = prewrite_log(cluster, megabytes, kind)
        log_bytes = sum(s.log.stat().st_size for s in list_segments(cluster.nodes[1].partition_dir))
        print(f"[{kind}] log written: {log_bytes / 1e6:.1f} MB, {end_offset:,} offsets, "
              f"{len(list_segments(cluster.nodes[1].partition_dir))} segments "
              f"({time.monotonic() - started:.1f} s)")
        cluster.start_all()
        started = time.monotonic()
        leader, _ = cluster.wait_for_leader(120)
        wait_until(lambda: (p := cluster.quorum_from(leader)) is not None and p.high_watermark >= end_offset,
                   300, "the pre-written log to be committed")
        leader_dir = cluster.nodes[leader].partition_dir

        def snapshot_and_retention() -> bool:
            snapshots = [s for s in list_snapshots(leader_dir) if s.end_offset >= end_offset]
            segments = list_segments(leader_dir)
            return bool(snapshots) and segments[0].base_offset > 0

        wait_until(snapshot_and_retention, 300, "a snapshot of the log and segments deleted below it")
        snapshot = max(list_snapshots(leader_dir))
        size = (leader_dir / snapshot.file_name).stat().st_size
        print(f"[{kind}] leader {leader} committed, snapshotted ({snapshot.file_name}, {size / 1e6:.1f} MB) "
              f"and cut its log in {time.monotonic() - started:.1f} s")
        follower = next(n for n in cluster.nodes if n != leader)
        cluster.kill(follower, signal.SIGKILL)
        cluster.wipe_partition(follower)
        partition = cluster.quorum_from(leader)
        assert partition is not None
        target = partition.high_watermark
        started = time.monotonic()
        restarted_ms = int(time.time() * 1000)
        cluster.start(follower)

        def caught_up() -> bool:
            data = cluster.quorum_from(leader)
            if data is None:
                return False
            # Only fetches of the restarted process count (the leader records a fetch when it arrives,
            # so a parked Fetch of the killed process answered later leaves its state alone).
            return any(v.replica_id == follower and v.last_fetch_timestamp >= restarted_ms
                       and v.log_end_offset >= target for v in data.current_voters)

        wait_until(caught_up, 600, "the wiped follower to catch up", interval=0.05)
        elapsed = time.monotonic() - started
        print(f"[{kind}] catch-up of a wiped follower through FetchSnapshot ({size / 1e6:.1f} MB snapshot) "
              f"and Fetch on a {log_bytes / 1e6:.0f} MB log: {elapsed:.2f} s")
        for node in cluster.nodes.values():
            assert node.process is not None
            role = "leader" if node.node_id == leader else ("wiped follower" if node.node_id == follower
                                                            else "follower")
            peak = peak_rss_mb(node.process.pid)
            print(f"[{kind}] peak RSS node {node.node_id} ({role}): {peak:.1f} MB (VmHWM)")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--failovers", type=int, default=5)
    parser.add_argument("--log-mb", type=int, default=100)
    parser.add_argument("--data", choices=["updates", "unique", "both"], default="both",
                        help="updates: PartitionRecords of 1,000 partitions (the snapshot compacts them); "
                             "unique: ConfigRecords with distinct keys (the snapshot is as large as the log)")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-server-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        if args.failovers > 0:
            times = failover_runs(root, args.failovers)
            each = ", ".join(f"{t:.2f}" for t in times)
            median = statistics.median(times)
            print(f"leader failover after SIGKILL (default timeouts): median {median:.2f} s, "
                  f"max {max(times):.2f} s over {len(times)} runs ({each})")
        if args.log_mb > 0:
            for kind in (["updates", "unique"] if args.data == "both" else [args.data]):
                catch_up_run(root, args.log_mb, kind)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
