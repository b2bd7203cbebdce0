"""UpdateFeatures against real reference-server processes, through the Admin SDK, raw requests and
kafka-features: the reference server knows Kafka 4.4's levels. Levels finalized on every node and
after a restart (log and snapshot), validate-only, refusals (4.3-IV0, 4.4-IV1 and 4.4-IV2 change the
metadata format, so 4.4-IV2 cannot be left), NOT_CONTROLLER from a follower, a quorum formatted at
4.3 upgraded to 4.4 with the tools, quorums formatted in Kafka 4.4's layout (bootstrap records in the
zero checkpoint), and a static quorum upgraded to kraft.version 1."""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest
from tools.cluster_util import run

from integration.harness import FAST_ELECTIONS, HOST, LISTENER, Cluster, wait_until
from kafka_admin_kraft import Admin, FeatureUpdate
from kafka_admin_kraft.errors import InvalidUpdateVersionError
from kafka_admin_kraft.features import NEWEST
from kafka_admin_kraft.models import UpgradeType
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.storage import (
    InitialController,
    bootstrap_records,
    write_bootstrap_checkpoint,
    write_zero_checkpoint,
)

Make = Callable[..., Cluster]
SAFE = UpgradeType.SAFE_DOWNGRADE
UNSAFE = UpgradeType.UNSAFE_DOWNGRADE
PREFIX = "The update failed for all features since the following feature had an error: "
DEFAULTS = {"metadata.version": 33, "kraft.version": 1, "transaction.version": 2, "group.version": 1,
            "eligible.leader.replicas.version": 1, "share.version": 2, "streams.version": 1}
"""Kafka 4.4's format defaults: 4.4-IV2 with share.version 2 (PR #23235)."""
AT_4_3 = {**DEFAULTS, "metadata.version": 30, "share.version": 1}
"""--release-version 4.3: 4.3-IV0 with share.version 1 (Kafka 4.3's upgrade notes; share.version 2 from
4.4-IV0 on, PR #21994)."""


def start(make_cluster: Make, size: int, *, release: str | None = None,
          **options: object) -> tuple[Cluster, int]:
    """A started cluster with a leader; ``release``: bootstrap files with that release's levels, as
    ``kafka-storage format --release-version`` writes them, instead of the defaults."""
    cluster = make_cluster(size, properties=dict(FAST_ELECTIONS), **options).format()
    if release is not None:
        levels = NEWEST.version_mapping(release)
        for node in cluster.nodes.values():
            write_bootstrap_checkpoint(node.metadata_dir,
                                       bootstrap_records(levels["metadata.version"], levels))
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader)
    return cluster, leader


def admin(cluster: Cluster, *node_ids: int) -> Admin:
    nodes = node_ids or tuple(cluster.nodes)
    return Admin(bootstrap_controllers=",".join(cluster.nodes[i].address for i in nodes),
                 default_api_timeout_ms=20000, request_timeout_ms=5000)


def finalized(cluster: Cluster, node_id: int) -> dict[str, int]:
    with cluster.nodes[node_id].client() as client:
        response = client.api_versions(4)
    return {f.name: f.max_version_level for f in response.finalized_features}


def wait_finalized_everywhere(cluster: Cluster, expected: dict[str, int], timeout: float = 20) -> None:
    for node_id in cluster.nodes:
        wait_until(lambda n=node_id: finalized(cluster, n) == expected, timeout,  # type: ignore[misc]
                   f"node {node_id} to finalize {expected}")


def test_upgrades_and_downgrades_are_finalized_everywhere_and_survive_restarts(make_cluster: Make) -> None:
    cluster, _ = start(make_cluster, 3, release="4.3")
    wait_finalized_everywhere(cluster, AT_4_3)
    with admin(cluster) as client:
        results = client.update_features({
            "metadata.version": 31,
            "streams.version": FeatureUpdate(level=0, upgrade_type=SAFE),
            "share.version": FeatureUpdate(level=0, upgrade_type=UNSAFE)})
        assert all(r.ok for r in results.values()) and set(results) == {
            "metadata.version", "streams.version", "share.version"}
        lowered = {**AT_4_3, "metadata.version": 31}
        del lowered["streams.version"], lowered["share.version"]
        wait_finalized_everywhere(cluster, lowered)
        # 4.4-IV0 changed no metadata format: back to 4.3-IV0 is a safe downgrade
        client.update_features({"metadata.version": FeatureUpdate(level=30, upgrade_type=SAFE),
                                "share.version": 1})
        raised = {**lowered, "metadata.version": 30, "share.version": 1}
        wait_finalized_everywhere(cluster, raised)
        described = client.describe_features()
        assert {k: v.max_version_level for k, v in described.finalized_features.items()} == raised
    # a snapshot on every node, then more in the log after it; then everything restarts
    for node in cluster.nodes.values():
        assert node.process is not None
        node.process.send_signal(signal.SIGUSR1)
    for node in cluster.nodes.values():
        wait_until(lambda n=node: any(not f.name.startswith("00000000000000000000-")  # type: ignore[misc]
                                      for f in n.partition_dir.glob("*.checkpoint")), 10,
                   f"a snapshot on node {node.node_id}")
    with admin(cluster) as client:
        client.update_features({"metadata.version": 33, "share.version": 2})
    final = {**raised, "metadata.version": 33, "share.version": 2}
    wait_finalized_everywhere(cluster, final)
    for node_id in cluster.nodes:
        cluster.kill(node_id, signal.SIGTERM)
    cluster.start_all()
    cluster.wait_for_leader(30)
    wait_finalized_everywhere(cluster, final, timeout=30)


def test_validate_only_changes_nothing(make_cluster: Make) -> None:
    cluster, _ = start(make_cluster, 1)
    with admin(cluster) as client:
        results = client.update_features({"share.version": FeatureUpdate(level=1, upgrade_type=SAFE),
                                          "streams.version": FeatureUpdate(level=0, upgrade_type=SAFE)},
                                         validate_only=True)
        assert all(r.ok for r in results.values())
        with pytest.raises(InvalidUpdateVersionError) as refused:
            client.update_features({"metadata.version": FeatureUpdate(level=20, upgrade_type=SAFE)},
                                   validate_only=True)
        assert "Unsupported metadata.version downgrade from 33 to 20." in str(refused.value)
    wait_until(lambda: finalized(cluster, 1) == DEFAULTS, 10, "the defaults")
    # and it stays that way (nothing was appended to commit later)
    with admin(cluster) as client:
        assert {k: v.max_version_level for k, v in client.describe_features().finalized_features.items()} == \
            DEFAULTS


@pytest.mark.parametrize(("updates", "message"), [
    # 4.4-IV2 changed the metadata format (controller unregistration, KIP-1312): it cannot be left
    ({"metadata.version": FeatureUpdate(level=32, upgrade_type=SAFE)},
     "Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the requested downgrade "
     "because it might delete metadata information."),
    ({"metadata.version": FeatureUpdate(level=7, upgrade_type=UNSAFE)},
     "Unsupported metadata.version downgrade from 33 to 7. Unsafe metadata downgrade is not supported in "
     "this version."),
    ({"metadata.version": 34},
     "Invalid update version 34 for feature metadata.version. Local controller {leader} only supports "
     "versions 7-33"),
    ({"share.version": 3},
     "Invalid update version 3 for feature share.version. Local controller {leader} only supports versions "
     "0-2"),
    ({"kraft.version": FeatureUpdate(level=0, upgrade_type=SAFE)},
     "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature."),
    ({"streams.version": FeatureUpdate(level=0, upgrade_type=SAFE), "group.version": 2},
     "Invalid update version 2 for feature group.version. Local controller {leader} only supports versions "
     "0-1"),
])
def test_refusals_change_nothing(make_cluster: Make, updates: dict[str, FeatureUpdate | int],
                                 message: str) -> None:
    cluster, leader = start(make_cluster, 1)
    with admin(cluster) as client, pytest.raises(InvalidUpdateVersionError) as refused:
        client.update_features(updates)
    assert refused.value.code == 95
    assert PREFIX + message.format(leader=leader) in str(refused.value)
    assert finalized(cluster, 1) == DEFAULTS


def test_followers_answer_not_controller_and_the_admin_finds_the_active_one(make_cluster: Make) -> None:
    cluster, leader = start(make_cluster, 3)
    follower = next(i for i in cluster.nodes if i != leader)
    R = messages.UpdateFeaturesRequest
    for version in (0, 1, 2):
        kind = {} if version == 0 else {"upgrade_type": 2}  # v0 has no UpgradeType
        body = R(feature_updates=[R.FeatureUpdateKey(feature="streams.version", max_version_level=0, **kind)])
        with cluster.nodes[follower].client() as raw:
            response = raw.request(body, version)
        assert (response.error_code, response.error_message, response.results) == (
            41, f"The active controller appears to be node {leader}.", [])
    with admin(cluster, follower) as client:
        results = client.update_features({"streams.version": FeatureUpdate(level=0, upgrade_type=SAFE)})
        assert results["streams.version"].ok
    expected = dict(DEFAULTS)
    del expected["streams.version"]
    wait_finalized_everywhere(cluster, expected)
    # v1 over the raw codec from the leader: per-feature results say "NONE"
    with cluster.nodes[leader].client() as raw:
        body = R(feature_updates=[R.FeatureUpdateKey(feature="streams.version", max_version_level=1,
                                                     upgrade_type=1)])
        response = raw.request(body, 1)
    assert (response.error_code, response.error_message) == (0, None)
    assert [(r.feature, r.error_code, r.error_message) for r in response.results] == [
        ("streams.version", 0, "NONE")]


def test_a_quorum_formatted_at_4_3_upgrades_to_4_4_with_the_tools(make_cluster: Make) -> None:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS))
    voters = ",".join(f"{n.node_id}@{HOST}:{n.port}:{n.directory_id}" for n in cluster.nodes.values())
    for node in cluster.nodes.values():
        formatted = run("kafka-storage", "format", "--config", str(cluster.write_config(node)),
                        "--cluster-id", cluster.cluster_id, "--release-version", "4.3",
                        "--initial-controllers", voters)
        assert formatted.returncode == 0, formatted.stderr
        assert formatted.stdout.endswith("with metadata.version 4.3-IV0.\n")
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader)
    wait_finalized_everywhere(cluster, AT_4_3)
    tool = ("kafka-features", "--bootstrap-controller", cluster.bootstrap_servers())
    upgraded = run(*tool, "upgrade", "--release-version", "4.4")
    assert (upgraded.returncode, upgraded.stderr) == (0, "")
    # upgrade sends every feature whose 4.4 level is above 0, metadata.version 33 included (PR #23235)
    assert upgraded.stdout == (
        "eligible.leader.replicas.version was upgraded to 1.\ngroup.version was upgraded to 1.\n"
        "kraft.version was upgraded to 1.\nmetadata.version was upgraded to 33.\n"
        "share.version was upgraded to 2.\nstreams.version was upgraded to 1.\n"
        "transaction.version was upgraded to 2.\n")
    wait_finalized_everywhere(cluster, DEFAULTS)
    described = run(*tool, "describe").stdout
    assert ("Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.4-IV2\t"
            "FinalizedVersionLevel: 4.4-IV2\t") in described
    # and 4.4-IV2 is a metadata format change: back to 4.3 is refused
    back = run(*tool, "downgrade", "--release-version", "4.3")
    assert back.returncode == 1
    assert "Could not downgrade metadata.version to 30. " in back.stdout
    assert back.stderr == "7 out of 7 operation(s) failed.\n"
    wait_finalized_everywhere(cluster, DEFAULTS)


@pytest.mark.parametrize("dynamic", [True, False], ids=["dynamic", "static"])
def test_a_quorum_in_kafka_4_4s_layout_starts_from_its_zero_checkpoint(make_cluster: Make,
                                                                      dynamic: bool) -> None:
    """Kafka 4.4's kafka-storage writes no bootstrap.checkpoint: the bootstrap records follow KRaft's
    control records in the zero checkpoint of each controller (KIP-1170, PR #20707)."""
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS), dynamic=dynamic).format()
    levels = NEWEST.version_mapping("4.3")
    records = bootstrap_records(levels["metadata.version"], levels)
    voters = [InitialController(n.node_id, HOST, n.port, n.directory_id) for n in cluster.nodes.values()]
    for node in cluster.nodes.values():
        (node.metadata_dir / "bootstrap.checkpoint").unlink()
        write_zero_checkpoint(node.metadata_dir, records, kraft_version=int(dynamic),
                              controllers=voters if dynamic else (), listener_name=LISTENER)
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader)
    expected = AT_4_3 if dynamic else {k: v for k, v in AT_4_3.items() if k != "kraft.version"}
    wait_finalized_everywhere(cluster, expected)


def test_static_quorum_upgrades_to_kraft_version_1(make_cluster: Make) -> None:
    cluster, leader = start(make_cluster, 3, dynamic=False)
    static = dict(DEFAULTS)
    del static["kraft.version"]
    wait_finalized_everywhere(cluster, static)
    with admin(cluster) as client:
        with pytest.raises(InvalidUpdateVersionError):
            client.update_features({"kraft.version": FeatureUpdate(level=0, upgrade_type=SAFE)})

        def upgraded() -> bool:
            try:
                return client.update_features({"kraft.version": 1})["kraft.version"].ok
            except InvalidUpdateVersionError:  # the voters have not all told the leader their range yet
                return False

        wait_until(upgraded, 20, "the kraft.version upgrade", interval=0.3)
        wait_until(lambda: client.describe_features().finalized_features.get("kraft.version"), 10,
                   "kraft.version in describe_features")
        assert client.describe_features().finalized_features["kraft.version"].max_version_level == 1
    wait_finalized_everywhere(cluster, DEFAULTS)
    with cluster.nodes[leader].client() as raw:
        partition = raw.describe_quorum(2).topics[0].partitions[0]
    assert sorted(v.replica_id for v in partition.current_voters) == [1, 2, 3]
