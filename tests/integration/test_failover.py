"""Crashes: SIGKILL the leader, restart it, wipe a follower's log and let it rebuild from a snapshot."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from integration.harness import FAST_ELECTIONS, Cluster, wait_until
from kafka_admin_kraft.records import list_segments, list_snapshots

SMALL_LOG = {
    **FAST_ELECTIONS,
    "metadata.max.idle.interval.ms": "20",
    "internal.metadata.log.segment.bytes": "4096",
    "metadata.log.max.record.bytes.between.snapshots": "2048",
}
"""NoOps every 20 ms, 4 KiB segments and a snapshot every 2 KiB: snapshots and retention within seconds."""


def test_sigkill_leader_new_leader_then_restart_catches_up(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS)).format().start_all()
    old_leader, before = cluster.wait_for_leader(30)
    killed_at = time.monotonic()
    assert cluster.kill(old_leader, signal.SIGKILL) == -signal.SIGKILL
    survivors = [n for n in cluster.nodes if n != old_leader]
    new_leader, after = cluster.wait_for_leader(20, min_epoch=before.leader_epoch + 1, candidates=survivors)
    failover = time.monotonic() - killed_at
    assert new_leader != old_leader and failover < 10
    # A new leader has no high watermark (-1) until an entry of its own epoch is committed; then
    # nothing committed before is lost.
    after = wait_until(lambda: (p := cluster.quorum_from(new_leader)) is not None
                       and p.high_watermark >= before.high_watermark and p, 10, "the new high watermark")

    restarted_ms = int(time.time() * 1000)
    cluster.start(old_leader)
    caught_up = cluster.wait_caught_up(new_leader, 20, since_ms=restarted_ms)
    assert caught_up.high_watermark >= after.high_watermark
    # The restarted node follows and refers clients to the leader.
    response = cluster.describe_quorum(old_leader, 2)
    assert response.topics[0].partitions[0].error_code == 6
    cluster.assert_running()


def test_wiped_follower_rebuilds_from_a_snapshot(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(3, properties=dict(SMALL_LOG)).format().start_all()
    leader, _ = cluster.wait_for_leader(30)
    follower = next(n for n in cluster.nodes if n != leader)
    leader_dir = cluster.nodes[leader].partition_dir

    def log_start_above_zero() -> bool:
        snapshots = [s for s in list_snapshots(leader_dir) if s.end_offset > 0]
        segments = list_segments(leader_dir)
        return bool(snapshots) and bool(segments) and segments[0].base_offset > 0

    wait_until(log_start_above_zero, 30, "a snapshot and a log that no longer starts at 0")
    cluster.kill(follower, signal.SIGKILL)
    cluster.wipe_partition(follower)
    restarted_ms = int(time.time() * 1000)
    cluster.start(follower)
    follower_dir = cluster.nodes[follower].partition_dir

    # The leader no longer has offset 0, so the wiped follower can only start from a fetched snapshot;
    # its own later snapshots and retention may replace that one on disk, so the proof is its log line,
    # and that its log never again starts at 0.
    cluster.wait_caught_up(leader, 30, since_ms=restarted_ms)
    assert f"node {follower} installed snapshot" in cluster.nodes[follower].output()
    segments = list_segments(follower_dir)
    assert segments and segments[0].base_offset > 0
    cluster.assert_running()


def test_sigusr1_takes_a_snapshot_on_demand(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1).format().start_all()
    node = cluster.nodes[1]
    wait_until(lambda: (p := cluster.quorum_from(1)) is not None and p.high_watermark > 5, 20,
               "a few records")
    assert node.process is not None
    node.process.send_signal(signal.SIGUSR1)
    snapshot = wait_until(lambda: max((s for s in list_snapshots(node.partition_dir) if s.end_offset > 0),
                                      default=None), 10, "a snapshot")
    assert snapshot.epoch >= 1
    wait_until(lambda: f"Snapshot {snapshot.file_name} written on demand" in node.output(), 5, "the log line")
    cluster.assert_running()
