"""What the servers leave on disk decodes with the project's readers and looks like Kafka's."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable

from integration.harness import FAST_ELECTIONS, Cluster, wait_until
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataLogDir,
    RecordBatch,
    decode_control_batch,
    decode_metadata_batch,
    list_snapshots,
    read_snapshot,
)
from kafka_admin_kraft.storage import read_leader_epoch_checkpoint, read_partition_metadata, read_quorum_state

SNAPSHOT_NAME = re.compile(r"^\d{20}-\d{10}\.checkpoint$")


def kinds(batch: RecordBatch) -> list[str]:
    if batch.is_control:
        return [type(record.value).__name__ for record in decode_control_batch(batch)]
    return [type(r.message).__name__ if isinstance(r, ApiMessageAndVersion) else "raw"
            for r in decode_metadata_batch(batch)]


def test_logs_decode_and_look_like_kafkas(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(3, properties={**FAST_ELECTIONS, "metadata.max.idle.interval.ms": "100"})
    cluster.format().start_all()
    first_leader, first = cluster.wait_for_leader(30)
    wait_until(lambda: (p := cluster.quorum_from(first_leader)) is not None and p.high_watermark > 16, 10,
               "a few NoOps")
    # A graceful stop of the leader hands leadership over through EndQuorumEpoch.
    stopped_at = time.monotonic()
    assert cluster.kill(first_leader, signal.SIGTERM) == 0
    others = [n for n in cluster.nodes if n != first_leader]
    second_leader, second = cluster.wait_for_leader(10, min_epoch=first.leader_epoch + 1, candidates=others)
    assert time.monotonic() - stopped_at < 5
    restarted_ms = int(time.time() * 1000)
    cluster.start(first_leader)
    cluster.wait_caught_up(second_leader, since_ms=restarted_ms)
    for node_id in [*(n for n in cluster.nodes if n != second_leader), second_leader]:
        assert cluster.kill(node_id, signal.SIGTERM) == 0, cluster.nodes[node_id].output()[-2000:]

    committed_prefixes = []
    for node in cluster.nodes.values():
        partition = node.partition_dir
        names = sorted(p.name for p in partition.iterdir())
        assert {"quorum-state", "partition.metadata", "leader-epoch-checkpoint"} <= set(names)
        assert any(name.endswith(".log") for name in names) and any(name.endswith(".index") for name in names)
        snapshots = [p.name for p in partition.glob("*.checkpoint")]
        assert snapshots and all(SNAPSHOT_NAME.match(name) for name in snapshots)
        assert not list(partition.glob("*.part"))
        bootstrap = list(read_snapshot(partition / "00000000000000000000-0000000000.checkpoint"))
        assert kinds(bootstrap[0]) == ["SnapshotHeaderRecord", "KRaftVersionRecord", "VotersRecord"]
        assert read_partition_metadata(partition / "partition.metadata").topic_id == METADATA_TOPIC_ID
        state = read_quorum_state(partition / "quorum-state")
        assert state.data_version == 1 and state.leader_epoch >= second.leader_epoch
        epochs = read_leader_epoch_checkpoint(partition / "leader-epoch-checkpoint")
        assert [e.epoch for e in epochs] == sorted({e.epoch for e in epochs})

        batches = list(MetadataLogDir(partition).read_log())
        offsets = [(b.base_offset, b.last_offset) for b in batches]
        assert offsets[0][0] == 0
        assert all(a[1] + 1 == b[0] for a, b in zip(offsets, offsets[1:], strict=False))
        epochs_seen = [b.partition_leader_epoch for b in batches]
        assert epochs_seen == sorted(epochs_seen)
        # Each epoch opens with a LeaderChange control batch naming its leader.
        leader_changes = {}
        for batch in batches:
            if batch.is_control:
                records = decode_control_batch(batch)
                change = records[0].value
                assert isinstance(change, messages.LeaderChangeMessage)
                assert sorted(v.voter_id for v in change.voters) == [1, 2, 3]
                leader_changes[batch.partition_leader_epoch] = change.leader_id
        assert leader_changes[first.leader_epoch] == first_leader
        assert leader_changes[second.leader_epoch] == second_leader
        assert kinds(batches[0]) == ["LeaderChangeMessage", "KRaftVersionRecord", "VotersRecord"]
        # A leader that loses its epoch before writing anything (a slow machine) leaves only its
        # LeaderChange batch (checked above); the first to keep its epoch writes the bootstrap records
        # in a metadata transaction.
        bootstrap = next(index for index, batch in enumerate(batches) if not batch.is_control)
        assert kinds(batches[bootstrap]) == ["BeginTransactionRecord", *["FeatureLevelRecord"] * 6,
                                             "EndTransactionRecord"]
        features = [r.message.name for r in decode_metadata_batch(batches[bootstrap])[1:-1]
                    if isinstance(r, ApiMessageAndVersion)]
        assert features == ["metadata.version", "eligible.leader.replicas.version", "group.version",
                            "share.version", "streams.version", "transaction.version"]
        later = batches[bootstrap + 1:]
        data_kinds = {k for b in later if not b.is_control for k in kinds(b)}
        assert data_kinds == {"NoOpRecord", "RegisterControllerRecord"}  # controllers register (KIP-919)
        registered = {r.message.controller_id for b in later if not b.is_control
                      for r in decode_metadata_batch(b) if isinstance(r, ApiMessageAndVersion)
                      and isinstance(r.message, messages.RegisterControllerRecord)}
        assert registered == {1, 2, 3}
        assert all(b.magic == 2 and b.producer_id == -1 and b.base_timestamp == b.max_timestamp
                   for b in batches)
        committed_prefixes.append([(b.base_offset, b.crc) for b in batches[:-3]])
    shortest = min(len(prefix) for prefix in committed_prefixes)
    assert shortest > 5
    assert len({tuple(prefix[:shortest]) for prefix in committed_prefixes}) == 1  # the replicas agree
    assert all(list_snapshots(n.partition_dir) for n in cluster.nodes.values())
