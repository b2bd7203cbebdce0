"""A quorum of three Kafka lines, as in the middle of a rolling upgrade: node 1 runs as Kafka 3.9,
node 2 as 4.2 and node 3 as 4.4 (``kraft-server --release-version``), every directory formatted at
3.9-IV0, the level the oldest knows. Each node in turn wins an election and leads the other two;
while it leads:

- acknowledged metadata writes (``Admin.update_features``) replicate to the other lines, which
  finalize the same levels; a 4.x leader refuses to finalize its own line's levels while the 3.9
  controller is registered (``kafka-features upgrade --release-version``);
- a voter of another line is removed and added back: with ``kafka-metadata-quorum`` while the 3.9 node
  leads (AddRaftVoter v0, the only version it speaks: the SDK refuses AckWhenCommitted = false
  unsent), with the SDK and AckWhenCommitted = false (AddRaftVoter v1) while a 4.x node leads;
- a voter of another line falls behind a snapshot of the leader (forced with SIGUSR1, over
  segments small enough that it drops the part of the log the voter had) and catches up through
  FetchSnapshot.
"""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest
from tools.cluster_util import run

from integration.harness import FAST_ELECTIONS, HOST, LISTENER, Cluster, wait_until
from integration.test_mixed_lines import OLD_NODE, elect, start
from kafka_admin_kraft import Admin, FeatureUpdate
from kafka_admin_kraft.errors import UnsupportedOperationError
from kafka_admin_kraft.health import FindingCode, HealthStatus
from kafka_admin_kraft.models import Endpoint, UpgradeType
from kafka_admin_kraft.records import list_segments

Make = Callable[..., Cluster]
LINES = {OLD_NODE: "3.9", 2: "4.2"}
"""Node 3 runs as Kafka 4.4, the quorum's default line."""
PROPERTIES = {**FAST_ELECTIONS, "controller.quorum.request.timeout.ms": "2000",
              "internal.metadata.log.segment.bytes": "1024"}
"""Segments of 1 KiB, so that a snapshot of the leader soon drops the part of the log a stopped voter
had."""
PARTNER = {OLD_NODE: 3, 2: OLD_NODE, 3: OLD_NODE}
"""Leader -> the voter of another line that it removes and adds back, and that falls behind it."""
FORMATTED = {"metadata.version": 21, "kraft.version": 1}
"""3.9-IV0 on a dynamic quorum."""
LOWER = 20
"""3.8-IV0: 3.9-IV0 changed no metadata format, so every line moves between 20 and 21 either way, an
acknowledged write each time."""


def set_metadata_version(client: Admin, level: int) -> None:
    """An acknowledged write: metadata.version 21 -> 20 (a safe downgrade) or 20 -> 21."""
    kind = UpgradeType.SAFE_DOWNGRADE if level == LOWER else UpgradeType.UPGRADE
    assert client.update_features({"metadata.version": FeatureUpdate(level=level, upgrade_type=kind)})[
        "metadata.version"].ok


def wait_finalized(cluster: Cluster, node_id: int, expected: dict[str, int]) -> None:
    wait_until(lambda: cluster.finalized(node_id) == expected, 20, f"node {node_id} to finalize {expected}")


def finalizing_early_is_refused(cluster: Cluster, leader: int) -> None:
    """The leader's own line's levels are above what the registered 3.9 controller supports."""
    line = cluster.line_of(leader)
    if line == "3.9":
        return
    early = run("kafka-features", "--bootstrap-controller", cluster.bootstrap_servers(), "upgrade",
                "--release-version", line)
    assert early.returncode == 1
    level = {"4.2": 29, "4.4": 33}[line]
    assert (f"Invalid update version {level} for feature metadata.version. Controller {OLD_NODE} only "
            "supports versions 1-21") in early.stdout, early.stdout
    assert all(cluster.finalized(node_id) == FORMATTED for node_id in cluster.nodes)


def writes_replicate(cluster: Cluster, leader: int) -> None:
    """Two acknowledged writes through the leader; every voter finalizes each."""
    with cluster.admin() as client:
        for level, levels in ((LOWER, {**FORMATTED, "metadata.version": LOWER}), (21, FORMATTED)):
            set_metadata_version(client, level)
            for node_id in cluster.nodes:
                wait_finalized(cluster, node_id, levels)
    cluster.wait_caught_up(leader, 20)


def voters(cluster: Cluster, leader: int) -> set[int]:
    data = cluster.quorum_from(leader)
    assert data is not None, f"node {leader} no longer leads"
    return {voter.replica_id for voter in data.current_voters}


def observed(cluster: Cluster, leader: int, node_id: int) -> bool:
    data = cluster.quorum_from(leader)
    return data is not None and any(o.replica_id == node_id and o.last_caught_up_timestamp > 0
                                    for o in data.observers)


def remove_and_add_back(cluster: Cluster, leader: int) -> None:
    partner = cluster.nodes[PARTNER[leader]]
    endpoints = [Endpoint(listener=LISTENER, host=HOST, port=partner.port)]
    bootstrap = cluster.bootstrap_servers()
    with cluster.admin() as client:
        if cluster.line_of(leader) == "3.9":
            removed = run("kafka-metadata-quorum", "--bootstrap-controller", bootstrap, "remove-controller",
                          "--controller-id", str(partner.node_id), "--controller-directory-id",
                          str(partner.directory_id))
            assert removed.returncode == 0, removed.stdout + removed.stderr
        else:
            client.remove_raft_voter(partner.node_id, partner.directory_id)
        # Both answer once the change is committed.
        assert voters(cluster, leader) == set(cluster.nodes) - {partner.node_id}
        wait_until(lambda: observed(cluster, leader, partner.node_id), 20,
                   f"node {partner.node_id} to fetch as an observer")
        if cluster.line_of(leader) == "3.9":
            with pytest.raises(UnsupportedOperationError, match=r"it speaks AddRaftVoter v0-0"):
                client.add_raft_voter(partner.node_id, partner.directory_id, endpoints,
                                      ack_when_committed=False)
            added = run("kafka-metadata-quorum", "--bootstrap-controller", bootstrap, "--command-config",
                        str(partner.config_path), "add-controller")
            assert added.returncode == 0, added.stdout + added.stderr
        else:
            client.add_raft_voter(partner.node_id, partner.directory_id, endpoints, ack_when_committed=False)
        assert voters(cluster, leader) == set(cluster.nodes)
        # An acknowledged write after the VotersRecord: the change is committed too.
        set_metadata_version(client, 21)
    cluster.wait_caught_up(leader, 20)


def falls_behind_a_snapshot(cluster: Cluster, leader: int) -> None:
    partner = PARTNER[leader]
    data = cluster.quorum_from(leader)
    assert data is not None
    cluster.kill(partner, signal.SIGKILL)
    behind = next(v.log_end_offset for v in data.current_voters if v.replica_id == partner)
    leader_dir = cluster.nodes[leader].partition_dir
    with cluster.admin() as client:
        # Writes until a segment starts past where the stopped voter's log ends.
        while list_segments(leader_dir)[-1].base_offset <= behind:
            set_metadata_version(client, LOWER)
            set_metadata_version(client, 21)
    process = cluster.nodes[leader].process
    assert process is not None
    process.send_signal(signal.SIGUSR1)
    wait_until(lambda: list_segments(leader_dir)[0].base_offset > behind, 20,
               f"node {leader}'s log to start past offset {behind}")
    restarted_ms = start(cluster, partner)
    cluster.wait_caught_up(leader, 30, since_ms=restarted_ms)
    assert f"node {partner} installed snapshot" in cluster.nodes[partner].output()
    wait_finalized(cluster, partner, FORMATTED)


def test_each_line_leads_the_others(make_cluster: Make) -> None:
    cluster = make_cluster(3, properties=dict(PROPERTIES), lines=LINES, format_release_version="3.9").format()
    cluster.start_all()
    first, _ = cluster.wait_for_leader(30)
    for target in [*(node_id for node_id in cluster.nodes if node_id != first), first]:
        elect(cluster, target)
        finalizing_early_is_refused(cluster, target)
        writes_replicate(cluster, target)
        remove_and_add_back(cluster, target)
        falls_behind_a_snapshot(cluster, target)
    with cluster.admin() as client:
        health = client.check_quorum()
    assert health.status == HealthStatus.OK, health
    assert FindingCode.SUPPORTED_FEATURES_DIFFER in {finding.code for finding in health.findings}
    cluster.assert_running()
