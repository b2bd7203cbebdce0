"""A real quorum history for the pipeline tests, and what the test driver saw happen.

Four reference controllers; node 1 is formatted ``--standalone`` with metadata.version 26, the others
as observers. The driver then:

1. adds voters 2 and 3 (two committed VotersRecords);
2. upgrades metadata.version to 27;
3. kills the leader (a new leader in a new epoch), restarts it and lets it catch up;
4. upgrades metadata.version to 28 and asks every node for a snapshot;
5. with both followers killed, has the leader append a VotersRecord adding node 4 (it cannot
   commit), kills the leader and copies its log directory as it is on disk; restarts the two
   followers, which elect a leader without the record; restarts the old leader, which truncates it;
6. upgrades metadata.version to 29, waits until every voter caught up and kills everything.

Every leader id and epoch the driver observed, the voter sets it asked for and the feature levels
it set are recorded in :class:`Truth`.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from integration.harness import FAST_ELECTIONS, HOST, LISTENER, Cluster, wait_until

from kafka_admin_kraft import Admin
from kafka_admin_kraft.protocol.exceptions import KafkaApiError
from kafka_admin_kraft.storage import bootstrap_records, write_bootstrap_checkpoint

FAST = {**FAST_ELECTIONS, "controller.quorum.request.timeout.ms": "2000"}
FIRST_METADATA_VERSION = 26
OTHER_FEATURES = {"group.version": 1, "transaction.version": 2}


@dataclass
class Truth:
    """What the driver did and saw."""

    root: Path
    cluster_id: str
    directory_ids: dict[int, str]
    leaders: list[tuple[int, int]] = field(default_factory=list)
    """(epoch, leader id) as DescribeQuorum reported them, in order."""
    committed_voter_sets: list[frozenset[int]] = field(default_factory=list)
    """Every voter set the quorum went through, the bootstrap set first."""
    truncated_voter_set: frozenset[int] = frozenset()
    truncated_leader: int = -1
    truncated_epoch: int = -1
    captured_dir: Path = Path()
    metadata_versions: list[int] = field(default_factory=list)
    """metadata.version levels in the order they were set, the bootstrap level first."""
    snapshot_nodes: list[int] = field(default_factory=list)
    final_voters: frozenset[int] = frozenset()

    @property
    def log_dirs(self) -> list[Path]:
        return [self.root / "cluster" / f"node-{i}" / "metadata" for i in sorted(self.directory_ids)]


def _admin(cluster: Cluster) -> Admin:
    return Admin(
        bootstrap_controllers=cluster.bootstrap_servers(),
        request_timeout_ms=5000,
        default_api_timeout_ms=20000,
    )


def _observer_caught_up(cluster: Cluster, node_id: int) -> bool:
    found = cluster.find_leader()
    if found is None:
        return False
    node = cluster.nodes[node_id]
    return any(
        o.replica_id == node_id
        and o.replica_directory_id == node.directory_id
        and o.last_caught_up_timestamp > 0
        for o in found[1].observers
    )


def _add_voter(cluster: Cluster, client: Admin, node_id: int, *, ack_when_committed: bool = True) -> None:
    node = cluster.nodes[node_id]
    wait_until(lambda: _observer_caught_up(cluster, node_id), 20, f"node {node_id} fetching as an observer")
    endpoints = [{"listener": LISTENER, "host": HOST, "port": node.port}]

    def added() -> bool:
        try:
            client.add_raft_voter(
                node_id, node.directory_id, endpoints, ack_when_committed=ack_when_committed
            )
        except KafkaApiError as exc:
            if exc.code == 7:  # REQUEST_TIMED_OUT: not caught up yet / previous change not committed
                return False
            if exc.code == 126:  # DUPLICATE_VOTER: an earlier attempt timed out on our side but went through
                return True
            raise
        return True

    wait_until(added, 20, f"adding node {node_id}", interval=0.2)


def _voter_ids(cluster: Cluster) -> set[int]:
    found = cluster.find_leader()
    return set() if found is None else {v.replica_id for v in found[1].current_voters}


def _leader(
    cluster: Cluster, truth: Truth, *, candidates: list[int] | None = None, min_epoch: int = 0
) -> int:
    leader_id, partition = cluster.wait_for_leader(30, min_epoch=min_epoch, candidates=candidates)
    if not truth.leaders or truth.leaders[-1] != (partition.leader_epoch, leader_id):
        truth.leaders.append((partition.leader_epoch, leader_id))
    return leader_id


def _upgrade(cluster: Cluster, client: Admin, truth: Truth, level: int) -> None:
    results = client.update_features({"metadata.version": level})
    assert all(result.ok for result in results.values()), results
    truth.metadata_versions.append(level)

    def finalized() -> bool:
        for node in cluster.running_nodes():
            with node.client() as raw:  # type: ignore[attr-defined]
                features = {f.name: f.max_version_level for f in raw.api_versions(4).finalized_features}
            if features.get("metadata.version") != level:
                return False
        return True

    wait_until(finalized, 20, f"metadata.version {level} everywhere")


def build(root: Path) -> Truth:
    """Run the scenario under ``root``; every process is dead when this returns."""
    cluster = Cluster(root / "cluster", 4, properties=dict(FAST))
    try:
        return _run(cluster, root)
    finally:
        cluster.close()


def _run(cluster: Cluster, root: Path) -> Truth:
    from integration.test_voters import format_observer

    first = cluster.nodes[1]
    others = {i: n for i, n in cluster.nodes.items() if i != 1}
    for node in cluster.nodes.values():
        cluster.write_config(node)
    cluster.nodes = {1: first}
    cluster.format_node(first)
    cluster.nodes = {1: first, **others}
    for node in others.values():
        format_observer(cluster, node)
    for node in cluster.nodes.values():
        (node.metadata_dir / "bootstrap.checkpoint").unlink()
        write_bootstrap_checkpoint(
            node.metadata_dir, bootstrap_records(FIRST_METADATA_VERSION, OTHER_FEATURES)
        )
    truth = Truth(
        root,
        cluster.cluster_id,
        {i: str(n.directory_id) for i, n in cluster.nodes.items()},
        metadata_versions=[FIRST_METADATA_VERSION],
        committed_voter_sets=[frozenset({1})],
    )
    cluster.start_all()
    _leader(cluster, truth)
    with _admin(cluster) as client:
        # 1. two voters join
        for node_id in (2, 3):
            _add_voter(cluster, client, node_id)
            wait_until(
                lambda n=node_id: _voter_ids(cluster) >= set(range(1, n + 1)),
                10,  # type: ignore[misc]
                f"voter {node_id}",
            )
            truth.committed_voter_sets.append(frozenset(range(1, node_id + 1)))
        # 2. a feature upgrade
        _upgrade(cluster, client, truth, FIRST_METADATA_VERSION + 1)
        # 3. the leader dies
        old = truth.leaders[-1][1]
        cluster.kill(old)
        _leader(
            cluster, truth, candidates=[i for i in (1, 2, 3) if i != old], min_epoch=truth.leaders[-1][0] + 1
        )
        cluster.start(old)
        since = int(time.time() * 1000)
        cluster.wait_caught_up(truth.leaders[-1][1], 30, since_ms=since)
        # 4. another upgrade, then a snapshot everywhere
        _upgrade(cluster, client, truth, FIRST_METADATA_VERSION + 2)
        _snapshot_everywhere(cluster, truth)
        # 5. an uncommitted VotersRecord that a later leader truncates
        leader_id = _leader(cluster, truth)
        down = [i for i in (1, 2, 3) if i != leader_id]
        wait_until(lambda: _observer_caught_up(cluster, 4), 20, "node 4 as an observer")
        for node_id in down:
            cluster.kill(node_id)
        _add_voter(cluster, client, 4, ack_when_committed=False)
    wait_until(lambda: _voter_ids(cluster) == {1, 2, 3, 4}, 10, "the leader to apply the new voter set")
    truth.truncated_voter_set = frozenset({1, 2, 3, 4})
    truth.truncated_leader = leader_id
    truth.truncated_epoch = truth.leaders[-1][0]
    cluster.kill(leader_id)
    cluster.kill(4)  # the observer may hold the record too; it keeps it until it fetches again
    truth.captured_dir = root / "captured" / f"node-{leader_id}-before-restart"
    shutil.copytree(cluster.nodes[leader_id].metadata_dir, truth.captured_dir)
    for node_id in down:
        cluster.start(node_id)
    new_leader = _leader(cluster, truth, candidates=down, min_epoch=truth.truncated_epoch + 1)
    cluster.start(leader_id)
    cluster.start(4)
    since = int(time.time() * 1000)
    cluster.wait_caught_up(new_leader, 30, since_ms=since)
    truth.final_voters = frozenset(_voter_ids(cluster))
    with _admin(cluster) as client:
        # 6. a last upgrade, committed everywhere
        _upgrade(cluster, client, truth, FIRST_METADATA_VERSION + 3)
    since = int(time.time() * 1000)
    cluster.wait_caught_up(new_leader, 30, since_ms=since)
    cluster.assert_running()
    for node_id in list(cluster.nodes):
        cluster.kill(node_id)
    return truth


def _snapshot_everywhere(cluster: Cluster, truth: Truth) -> None:
    import signal

    for node in cluster.running_nodes():
        assert node.process is not None
        if node.node_id == 4:
            continue
        node.process.send_signal(signal.SIGUSR1)
        truth.snapshot_nodes.append(node.node_id)
    for node_id in truth.snapshot_nodes:
        node = cluster.nodes[node_id]
        wait_until(
            lambda n=node: any(
                not f.name.startswith("00000000000000000000-")  # type: ignore[misc]
                for f in n.partition_dir.glob("*.checkpoint")
            ),
            15,
            f"a snapshot on node {node_id}",
        )
