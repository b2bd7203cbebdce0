"""The work that keeps the core's image: committed features, and replay, snapshot loads and snapshot
writes spread over polls within a budget."""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import RawMetadataRecord, iter_metadata_records
from kafka_admin_kraft_server.raft.api import RaftConfig
from unit.reference_server.raft.image_testlib import config, feature
from unit.reference_server.raft.raft_testlib import make_replica, voter_set


def leader(config_: RaftConfig | None = None):  # type: ignore[no-untyped-def]
    replica = make_replica(1, voter_set([1]), config=config_)
    now = 0
    while not replica.core.is_leader:
        now += 100
        replica.core.poll(now)
    return replica, now


def test_committed_features_come_from_the_core_image() -> None:
    replica, now = leader()
    core = replica.core
    features = core.committed_features()
    assert features.metadata_version is None and features.levels == {"kraft.version": 1}
    core.append([feature("metadata.version", 21), messages.NoOpRecord()], now)
    core.poll(now + 1)
    features = core.committed_features()
    assert features.levels == {"metadata.version": 21, "kraft.version": 1}
    assert features.highest_offset == core.applied_offset - 1 == core.high_watermark - 1


def test_replay_snapshot_writes_and_loads_are_bounded_per_poll() -> None:
    """A budget of one byte: every poll reads one batch; polls ask to be called again at once."""
    replica, now = leader(RaftConfig(apply_budget_bytes=1, snapshot_interval_bytes=1 << 30))
    core, log = replica.core, replica.log
    for index in range(10):
        core.append([config(index), feature("group.version", index + 1)], now)
    result = core.poll(now)
    assert result.next_poll_ms == now  # more to apply
    polls = 1
    while core.applied_offset < core.high_watermark:
        core.poll(now)
        polls += 1
    assert polls >= 10
    assert core.committed_features().levels["group.version"] == 10
    # A snapshot written by hand (synchronous) holds the records kept by reference.
    snapshot_id = core.snapshot(now)
    assert snapshot_id is not None and snapshot_id.end_offset == core.high_watermark
    records = list(iter_metadata_records(log.snapshot_batches(snapshot_id)))
    assert [r for r in records if isinstance(r, RawMetadataRecord)] == [config(i) for i in range(10)]
    # The image now points into the snapshot (the log below it is gone).
    assert [run.source for run in core.image.other_runs()] == [snapshot_id]
    assert log.start_offset() == snapshot_id.end_offset
    # A new core on the same log loads the snapshot a batch per poll, then serves the same features.
    restarted = make_replica(1, voter_set([1]), log=log, store=replica.store,
                             config=RaftConfig(apply_budget_bytes=1))
    assert restarted.core.applied_offset == 0
    for _ in range(100):
        restarted.core.poll(now)
        if restarted.core.applied_offset >= snapshot_id.end_offset:
            break
    assert restarted.core.committed_features().levels["group.version"] == 10
    second = restarted.core.image
    assert second.other_count() == 10 and second.source == snapshot_id


def test_periodic_snapshot_is_written_over_several_polls() -> None:
    replica, now = leader(RaftConfig(apply_budget_bytes=1, snapshot_interval_bytes=1))
    core, log = replica.core, replica.log
    for index in range(5):
        core.append([config(index)], now)
    before = log.writers_opened
    polls = 0
    while log.latest_snapshot() is None or log.latest_snapshot().end_offset < core.high_watermark:
        core.poll(now)
        polls += 1
        assert polls < 100
    assert log.writers_opened > before and log.writers_opened == log.writers_closed
    snapshot_id = log.latest_snapshot()
    assert snapshot_id is not None
    records = list(iter_metadata_records(log.snapshot_batches(snapshot_id)))
    assert [r for r in records if isinstance(r, RawMetadataRecord)] == [config(i) for i in range(5)]
