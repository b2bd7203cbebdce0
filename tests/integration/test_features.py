"""UpdateFeatures against real reference-server processes, through the Admin SDK and raw requests:
levels finalized on every node and after a restart (log and snapshot), validate-only, refusals,
NOT_CONTROLLER from a follower, and a static quorum upgraded to kraft.version 1."""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest

from integration.harness import FAST_ELECTIONS, Cluster, wait_until
from kafka_admin_kraft import Admin, FeatureUpdate
from kafka_admin_kraft.errors import InvalidUpdateVersionError
from kafka_admin_kraft.models import UpgradeType
from kafka_admin_kraft.protocol import messages

Make = Callable[..., Cluster]
SAFE = UpgradeType.SAFE_DOWNGRADE
UNSAFE = UpgradeType.UNSAFE_DOWNGRADE
PREFIX = "The update failed for all features since the following feature had an error: "
DEFAULTS = {"metadata.version": 29, "kraft.version": 1, "transaction.version": 2, "group.version": 1,
            "eligible.leader.replicas.version": 1, "share.version": 1, "streams.version": 1}


def start(make_cluster: Make, size: int, **options: object) -> tuple[Cluster, int]:
    cluster = make_cluster(size, properties=dict(FAST_ELECTIONS), **options).format().start_all()
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
    cluster, _ = start(make_cluster, 3)
    with admin(cluster) as client:
        results = client.update_features({
            "metadata.version": FeatureUpdate(level=24, upgrade_type=SAFE),
            "streams.version": FeatureUpdate(level=0, upgrade_type=SAFE),
            "share.version": FeatureUpdate(level=0, upgrade_type=UNSAFE)})
        assert all(r.ok for r in results.values()) and set(results) == {
            "metadata.version", "streams.version", "share.version"}
        lowered = {**DEFAULTS, "metadata.version": 24}
        del lowered["streams.version"], lowered["share.version"]
        wait_finalized_everywhere(cluster, lowered)
        client.update_features({"metadata.version": 28, "share.version": 1})
        raised = {**lowered, "metadata.version": 28, "share.version": 1}
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
        client.update_features({"metadata.version": 29})
    final = {**raised, "metadata.version": 29}
    wait_finalized_everywhere(cluster, final)
    for node_id in cluster.nodes:
        cluster.kill(node_id, signal.SIGTERM)
    cluster.start_all()
    cluster.wait_for_leader(30)
    wait_finalized_everywhere(cluster, final, timeout=30)


def test_validate_only_changes_nothing(make_cluster: Make) -> None:
    cluster, _ = start(make_cluster, 1)
    with admin(cluster) as client:
        results = client.update_features({"metadata.version": FeatureUpdate(level=24, upgrade_type=SAFE),
                                          "streams.version": FeatureUpdate(level=0, upgrade_type=SAFE)},
                                         validate_only=True)
        assert all(r.ok for r in results.values())
        with pytest.raises(InvalidUpdateVersionError) as refused:
            client.update_features({"metadata.version": FeatureUpdate(level=20, upgrade_type=SAFE)},
                                   validate_only=True)
        assert "Unsupported metadata.version downgrade from 29 to 20." in str(refused.value)
    wait_until(lambda: finalized(cluster, 1) == DEFAULTS, 10, "the defaults")
    # and it stays that way (nothing was appended to commit later)
    with admin(cluster) as client:
        assert {k: v.max_version_level for k, v in client.describe_features().finalized_features.items()} == \
            DEFAULTS


@pytest.mark.parametrize(("updates", "message"), [
    ({"metadata.version": FeatureUpdate(level=22, upgrade_type=SAFE)},
     "Unsupported metadata.version downgrade from 29 to 22. Refusing to perform the requested downgrade "
     "because it might delete metadata information."),
    ({"metadata.version": FeatureUpdate(level=7, upgrade_type=UNSAFE)},
     "Unsupported metadata.version downgrade from 29 to 7. Unsafe metadata downgrade is not supported in "
     "this version."),
    ({"kraft.version": FeatureUpdate(level=0, upgrade_type=SAFE)},
     "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature."),
    ({"streams.version": FeatureUpdate(level=0, upgrade_type=SAFE), "group.version": 2},
     "Invalid update version 2 for feature group.version. Local controller {leader} only supports versions "
     "SupportedVersionRange[min_version:0, max_version:1]"),
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
