"""A rolling upgrade of a three-controller quorum from Kafka 3.9 to 4.4 under a stream of acknowledged
writes, as Kafka's upgrade notes lay it out: upgrade the binaries one node at a time (stop it cleanly,
start it as 4.4 on the same directory, wait until the quorum is healthy again; the active controller
last), then finalize the features with ``kafka-features upgrade --release-version 4.4``.

The writes move metadata.version between 3.7-IV2 and 3.9-IV0, levels between which no metadata
format changed, so that every line takes them (upgrades and safe downgrades). At the end every
node's ``__cluster_metadata-0`` holds every acknowledged write in order, metadata.version is
4.4-IV2 with 4.4's feature levels, and ``kafka-metadata-quorum check`` says OK.

What Kafka requires on the way, and the test checks: finalizing is refused while a controller's
registration still says 3.9 (the last one, stopped, before it runs 4.4); and the finalize includes
kraft.version 1, which turns a static quorum (``controller.quorum.voters``, kraft.version 0)
dynamic once every voter runs 4.1 or later and has reported its kraft.version range to the leader
(KAFKA-16538). Both kinds of 3.9 quorum are upgraded: a static one, and one formatted by 3.9 with
``--initial-controllers``, dynamic already.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import pytest
from tools.cluster_util import run

from integration.harness import FAST_ELECTIONS, Cluster, wait_until
from kafka_admin_kraft import FeatureUpdate
from kafka_admin_kraft.errors import KafkaApiError, KafkaConnectionError, KafkaTimeoutError
from kafka_admin_kraft.health import FindingCode, HealthStatus
from kafka_admin_kraft.models import UpgradeType
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataLogDir,
    decode_metadata_batch,
    list_segments,
)

Make = Callable[..., Cluster]
LEVELS = (17, 18, 19, 20, 21)
"""3.7-IV2 to 3.9-IV0: none of 18-21 changed the metadata format. The writes cycle through them, each
one a different level from the write before."""
FINAL = {"metadata.version": 33, "kraft.version": 1, "transaction.version": 2, "group.version": 1,
         "eligible.leader.replicas.version": 1, "share.version": 2, "streams.version": 1}
"""``--release-version 4.4``: 4.4-IV2 and 4.4's default levels there."""
FINALIZE_OUTPUT = (
    "eligible.leader.replicas.version was upgraded to 1.\ngroup.version was upgraded to 1.\n"
    "kraft.version was upgraded to 1.\nmetadata.version was upgraded to 33.\n"
    "share.version was upgraded to 2.\nstreams.version was upgraded to 1.\n"
    "transaction.version was upgraded to 2.\n")
ACKS = 3
"""Acknowledged writes to wait for at each stage: while a node is down, and once it runs 4.4."""
ACKNOWLEDGED, REFUSED, UNKNOWN = "acknowledged", "refused", "unknown"


@dataclass
class Write:
    level: int
    outcome: str = UNKNOWN
    """ACKNOWLEDGED, REFUSED (a definite no) or UNKNOWN (no answer in time: committed or not)."""


@dataclass
class Writer:
    """Writes metadata.version levels through the SDK, one at a time until stopped, recording each
    attempt and its outcome (``run`` is a thread's body)."""

    cluster: Cluster
    writes: list[Write] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None

    def acknowledged(self) -> list[int]:
        return [write.level for write in list(self.writes) if write.outcome == ACKNOWLEDGED]

    def run(self) -> None:
        try:
            with self.cluster.admin() as client:
                previous = LEVELS[-1]  # what the 3.9 formatter finalized
                for level in cycle(LEVELS):
                    if self.stop.is_set():
                        return
                    kind = UpgradeType.UPGRADE if level > previous else UpgradeType.SAFE_DOWNGRADE
                    write = Write(level)
                    self.writes.append(write)
                    try:
                        result = client.update_features(
                            {"metadata.version": FeatureUpdate(level=level, upgrade_type=kind)}, timeout=10)
                        write.outcome = ACKNOWLEDGED if result["metadata.version"].ok else REFUSED
                    except (KafkaTimeoutError, KafkaConnectionError):
                        write.outcome = UNKNOWN
                    except KafkaApiError:
                        write.outcome = REFUSED
                    previous = level
                    self.stop.wait(0.02)  # a steady stream, not a flood, on a shared machine
        except BaseException as exc:  # reported by the test's thread
            self.error = exc

    def wait_acknowledged(self, count: int, what: str) -> None:
        """Wait for ``count`` more acknowledged writes."""
        target = len(self.acknowledged()) + count
        wait_until(lambda: self.error is not None or len(self.acknowledged()) >= target, 60, what)
        assert self.error is None, self.error


def cycle(levels: Sequence[int]) -> Iterator[int]:
    while True:
        yield from levels


def collapse(levels: Sequence[int]) -> list[int]:
    """Drop repeats of the level before (a write retried after its first attempt was committed)."""
    return [level for index, level in enumerate(levels) if index == 0 or levels[index - 1] != level]


def is_subsequence(small: Sequence[int], big: Sequence[int]) -> bool:
    rest = iter(big)
    return all(any(item == other for other in rest) for item in small)


def logged_metadata_versions(cluster: Cluster, node_id: int) -> list[int]:
    """The metadata.version FeatureLevelRecords in the node's log, in offset order (the log must still
    start at offset 0: no snapshot replaced any of it)."""
    partition = cluster.nodes[node_id].partition_dir
    assert list_segments(partition)[0].base_offset == 0
    levels = []
    for batch in MetadataLogDir(partition).read_log():
        if batch.is_control:
            continue
        for record in decode_metadata_batch(batch):
            if not isinstance(record, ApiMessageAndVersion):
                continue
            message = record.message
            if isinstance(message, messages.FeatureLevelRecord) and message.name == "metadata.version":
                levels.append(message.feature_level)
    return levels


def healthy(cluster: Cluster) -> set[FindingCode]:
    """``check_quorum`` says OK (every voter caught up and reachable): the codes of its findings."""
    with cluster.admin() as client:
        health = client.check_quorum()
    assert health.status == HealthStatus.OK, health
    return {finding.code for finding in health.findings}


def next_to_upgrade(cluster: Cluster) -> int:
    """A node still on 3.9, the active controller last (the fewest elections)."""
    leader, _ = cluster.wait_for_leader(30)
    left = [node_id for node_id in cluster.nodes if cluster.nodes[node_id].line == "3.9"]
    return next((node_id for node_id in left if node_id != leader), leader)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_rolling_upgrade_from_3_9_to_4_4(make_cluster: Make, dynamic: bool) -> None:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS), release_version="3.9", dynamic=dynamic)
    cluster.format().start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader, 30)
    formatted = {"metadata.version": 21, **({"kraft.version": 1} if dynamic else {})}
    assert all(cluster.finalized(node_id) == formatted for node_id in cluster.nodes)
    tool = ("kafka-features", "--bootstrap-controller", cluster.bootstrap_servers())

    writer = Writer(cluster)
    thread = threading.Thread(target=writer.run, name="writer", daemon=True)
    thread.start()
    try:
        writer.wait_acknowledged(ACKS, "writes to the 3.9 quorum")
        for step in range(len(cluster.nodes)):
            node_id = next_to_upgrade(cluster)
            # 1. Stop the node as an operator does (SIGTERM: a clean shutdown).
            code = cluster.kill(node_id, signal.SIGTERM, timeout=30)
            assert code == 0, cluster.nodes[node_id].output()[-3000:]
            writer.wait_acknowledged(ACKS, f"writes while node {node_id} is down")
            if step == len(cluster.nodes) - 1:
                # Finalizing before the last node runs 4.4 is refused by the new 4.4 leader: the stopped
                # controller's registration says it runs 3.9-IV0 at most.
                early = run(*tool, "upgrade", "--release-version", "4.4")
                assert early.returncode == 1
                assert (f"Invalid update version 33 for feature metadata.version. Controller {node_id} "
                        "only supports versions 1-21") in early.stdout, early.stdout
            # 2. Start it as Kafka 4.4 on the same directory.
            restarted_ms = int(time.time() * 1000)
            cluster.start(node_id, line="4.4")
            leader, _ = cluster.wait_for_leader(30)
            cluster.wait_caught_up(leader, 30, since_ms=restarted_ms)
            writer.wait_acknowledged(ACKS, f"writes once node {node_id} runs 4.4")
            # 3. The quorum is healthy before the next node; the lines differ until the last one.
            codes = wait_until(lambda: healthy(cluster), 30, "check_quorum OK")
            assert (FindingCode.SUPPORTED_FEATURES_DIFFER in codes) == (step < len(cluster.nodes) - 1)
    finally:
        writer.stop.set()
        thread.join(30)
    assert not thread.is_alive() and writer.error is None, writer.error
    # Every node runs 4.4; the features are still 3.9's until finalized.
    assert FindingCode.METADATA_VERSION_UPGRADE_AVAILABLE in healthy(cluster)

    # 4. Finalize. The leader refuses (the whole request) until the last node's new registration is
    # committed and, on a static quorum, until every voter has told it the kraft.version range it
    # supports (UpdateRaftVoter, which each sends once it follows the leader).
    waits = [f"Controller {node_id} only supports versions 1-21"]
    if not dynamic:
        waits.append("have not reported support for kraft.version 1")

    def finalized() -> bool:
        upgraded = run(*tool, "upgrade", "--release-version", "4.4")
        if upgraded.returncode != 0 and any(reason in upgraded.stdout for reason in waits):
            return False
        assert (upgraded.returncode, upgraded.stdout, upgraded.stderr) == (0, FINALIZE_OUTPUT, "")
        return True

    wait_until(finalized, 60, "kafka-features upgrade --release-version 4.4", interval=0.5)
    for node_id in cluster.nodes:
        wait_until(lambda n=node_id: cluster.finalized(n) == FINAL, 20,  # type: ignore[misc]
                   f"node {node_id} to finalize 4.4's levels")
    with cluster.admin() as client:
        described = client.describe_features()
        quorum = client.describe_metadata_quorum()
    assert {name: f.max_version_level for name, f in described.finalized_features.items()} == FINAL
    # kraft.version 1: every voter has its directory id (the static quorum became dynamic).
    assert all(voter.replica_directory_id != ZERO_UUID for voter in quorum.voters)
    check = run("kafka-metadata-quorum", "--bootstrap-controller", cluster.bootstrap_servers(), "check")
    assert check.returncode == 0 and check.stdout.startswith("OK: quorum of 3 voters"), check.stdout
    assert not healthy(cluster) & {FindingCode.SUPPORTED_FEATURES_DIFFER,
                                   FindingCode.METADATA_VERSION_UPGRADE_AVAILABLE, FindingCode.STATIC_QUORUM}

    # 5. Nothing acknowledged is lost: each node's log holds the formatter's level, every acknowledged
    # write in order, nothing that was not attempted, and the finalized level; the nodes agree.
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader, 30)
    for node_id in cluster.nodes:
        assert cluster.kill(node_id, signal.SIGTERM, timeout=30) == 0
    assert not [write for write in writer.writes if write.outcome == REFUSED]
    attempted = [write.level for write in writer.writes]
    acknowledged = writer.acknowledged()
    logs = {node_id: collapse(logged_metadata_versions(cluster, node_id)) for node_id in cluster.nodes}
    assert len({tuple(levels) for levels in logs.values()}) == 1, logs
    levels = logs[1]
    assert levels[0] == 21 and levels[-1] == 33
    assert is_subsequence(acknowledged, levels[1:-1]), (acknowledged, levels)
    assert is_subsequence(levels[1:-1], attempted), (levels, attempted)
