"""FetchSnapshot: a snapshot reaches a new replica in chunks, and the leader's error answers."""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import SnapshotId, decode_control_batch, iter_metadata_records
from kafka_admin_kraft_server.raft.api import RaftConfig
from unit.reference_server.raft.raft_testlib import (
    STATIC_ONE,
    Network,
    leader_with_log,
    make_replica,
    request,
    single_reply,
)


def test_snapshot_reaches_a_new_replica_through_fetch_snapshot_in_chunks() -> None:
    leader = leader_with_log([])
    for index in range(40):
        leader.core.append(
            [
                messages.FeatureLevelRecord(name="metadata.version", feature_level=index % 20 + 1),
                messages.NoOpRecord(),
            ],
            index,
        )
    leader.core.poll(50)
    high_watermark = leader.core.high_watermark
    snapshot_id = leader.core.snapshot(60)
    assert snapshot_id == SnapshotId(high_watermark, leader.core.epoch)
    assert leader.core.snapshot(61) is None  # nothing new since
    assert leader.log.start_offset() == high_watermark  # retention dropped the log below it
    batches = list(leader.log.snapshot_batches(snapshot_id))
    header = decode_control_batch(batches[0])
    assert isinstance(header[0].value, messages.SnapshotHeaderRecord)
    assert len(header) == 1  # kraft.version 0: no KRaftVersion / Voters records
    assert isinstance(decode_control_batch(batches[-1])[0].value, messages.SnapshotFooterRecord)
    records = list(iter_metadata_records(batches))
    assert len(records) == 1  # NoOps vanished, only the latest metadata.version is left
    assert all(batch.partition_leader_epoch == snapshot_id.epoch for batch in batches)
    assert [b.base_offset for b in batches] == [0, 1, 2]

    small = RaftConfig(max_fetch_bytes=64)
    observer = make_replica(2, STATIC_ONE, kraft_version=0, config=small)
    network = Network([leader, observer])
    fetch_snapshots = []
    original = observer.core.poll

    def spy(now: int):  # type: ignore[no-untyped-def]
        result = original(now)
        fetch_snapshots.extend(s for s in result.sends if s.api_key == 59)
        return result

    observer.core.poll = spy  # type: ignore[method-assign]
    network.run(until=500)
    assert observer.log.latest_snapshot() == snapshot_id
    assert observer.log.read_snapshot(snapshot_id, 0, 1 << 20) == leader.log.read_snapshot(
        snapshot_id, 0, 1 << 20
    )
    assert len(fetch_snapshots) > 2  # 64-byte chunks
    assert observer.log.start_offset() == snapshot_id.end_offset
    assert observer.core.high_watermark == leader.core.high_watermark
    leader.core.append([messages.NoOpRecord()], network.now)
    network.run(until=600)
    assert observer.log.live_keys() == leader.log.live_keys()


def test_fetch_snapshot_errors() -> None:
    leader = leader_with_log([1, 1])
    leader.core.append([messages.NoOpRecord()], 0)
    leader.core.poll(1)
    snapshot_id = leader.core.snapshot(2)
    assert snapshot_id is not None
    epoch = leader.core.epoch

    def ask(
        end: int,
        snapshot_epoch: int,
        position: int,
        leader_epoch: int = epoch,
        name: str = "__cluster_metadata",
    ) -> messages.FetchSnapshotResponse.PartitionSnapshot:
        body = messages.FetchSnapshotRequest(
            cluster_id=None,
            replica_id=2,
            max_bytes=10,
            topics=[
                messages.FetchSnapshotRequest.TopicSnapshot(
                    name=name,
                    partitions=[
                        messages.FetchSnapshotRequest.PartitionSnapshot(
                            partition=0,
                            current_leader_epoch=leader_epoch,
                            position=position,
                            snapshot_id=messages.FetchSnapshotRequest.SnapshotId(
                                end_offset=end, epoch=snapshot_epoch
                            ),
                        )
                    ],
                )
            ],
        )
        leader.core.handle_request(request(59, body, 1), 3)
        response = single_reply(leader, 3)
        assert isinstance(response, messages.FetchSnapshotResponse) and response.error_code == 0
        return response.topics[0].partitions[0]

    ok = ask(snapshot_id.end_offset, snapshot_id.epoch, 0)
    assert ok.error_code == 0 and len(ok.unaligned_records or b"") == 10 and ok.size > 10
    assert ask(snapshot_id.end_offset + 5, snapshot_id.epoch, 0).error_code == 98  # SNAPSHOT_NOT_FOUND
    assert ask(snapshot_id.end_offset, snapshot_id.epoch, ok.size).error_code == 99  # POSITION_OUT_OF_RANGE
    assert ask(snapshot_id.end_offset, snapshot_id.epoch, 0, leader_epoch=epoch - 1).error_code == 74
    assert ask(snapshot_id.end_offset, snapshot_id.epoch, 0, name="other").error_code == 3
