"""The installed `kafka-features` against a reference cluster (three dynamic controllers and a broker,
real processes, Kafka 4.4 feature levels): describe, dry runs, a real downgrade and upgrade, and the
controller's refusals as Kafka's tool prints them."""
# ruff: noqa: E501

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import pytest
from integration.harness import Cluster

from tools.cluster_util import BROKER_ID, module_quorum, run, run_against

TOOL = "kafka-features"
FINALIZED = {"eligible.leader.replicas.version": ("0", "1", "1"), "group.version": ("0", "1", "1"),
             "kraft.version": ("0", "1", "1"), "metadata.version": ("3.3-IV3", "4.4-IV2", "4.4-IV2"),
             "share.version": ("0", "2", "2"), "streams.version": ("0", "1", "1"),
             "transaction.version": ("0", "2", "2")}
ALL_FAILED = "The update failed for all features since the following feature had an error: "


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from module_quorum(tmp_path_factory, "features")


def features(cluster: Cluster, *args: str) -> tuple[int, str, str]:
    return run_against(cluster, TOOL, *args)


def described(out: str) -> dict[str, tuple[str, str, str]]:
    """Feature -> (min, max, finalized), checking the line format and one epoch for all."""
    found = {}
    epochs = set()
    for line in out.splitlines():
        match = re.fullmatch(r"Feature: (\S+)\tSupportedMinVersion: (\S+)\tSupportedMaxVersion: (\S+)\t"
                             r"FinalizedVersionLevel: (\S+)\tEpoch: (\d+)", line)
        assert match, repr(line)
        found[match[1]] = (match[2], match[3], match[4])
        epochs.add(match[5])
    assert len(epochs) == 1
    assert list(found) == sorted(found)
    return found


def test_describe_through_a_controller_a_node_and_the_broker(cluster: Cluster) -> None:
    code, out, err = features(cluster, "describe")
    assert (code, err) == (0, "")
    assert described(out) == FINALIZED
    code, out, err = features(cluster, "describe", "--node-id", "2")
    assert (code, err) == (0, "")
    assert described(out) == FINALIZED
    result = run(TOOL, "--bootstrap-server", cluster.nodes[BROKER_ID].address, "describe")
    assert (result.returncode, result.stderr) == (0, "")
    assert described(result.stdout) == FINALIZED
    code, out, _ = features(cluster, "describe", "--output", "json")
    document = json.loads(out)
    assert {f["name"]: f["finalized_version_level"] for f in document["features"]}["metadata.version"] == 33


def test_describe_of_a_node_the_cluster_lacks_is_refused_at_once(cluster: Cluster) -> None:
    started = time.monotonic()
    code, out, err = features(cluster, "describe", "--node-id", "99")
    assert time.monotonic() - started < 15
    assert (code, out) == (1, "")
    assert re.fullmatch(r"the cluster has no node 99 \(nodes: [0-9, ]+\)\n", err), err


def test_dry_runs(cluster: Cluster) -> None:
    assert features(cluster, "downgrade", "--feature", "share.version=0", "--dry-run") == (
        0, "share.version can be downgraded to 0.\n", "")
    assert features(cluster, "disable", "--feature", "share.version", "--dry-run") == (
        0, "share.version can be disabled.\n", "")
    assert features(cluster, "upgrade", "--metadata", "4.4-IV2", "--dry-run") == (
        0, " `metadata` flag is deprecated and may be removed in a future release.\n"
           "metadata.version can be upgraded to 33.\n", "")
    # Nothing changed.
    assert described(features(cluster, "describe")[1]) == FINALIZED


def test_refusals_fail_every_feature_with_the_controllers_message(cluster: Cluster) -> None:
    code, out, err = features(cluster, "upgrade", "--release-version", "3.9")
    reason = (ALL_FAILED + "Invalid update version 21 for feature metadata.version. Can't downgrade the version of "
              "this feature without setting the upgrade type to either safe or unsafe downgrade.")
    assert (code, err) == (1, "2 out of 2 operation(s) failed.\n")
    assert out == f"Could not upgrade kraft.version to 1. {reason}\nCould not upgrade metadata.version to 21. {reason}\n"

    code, out, err = features(cluster, "downgrade", "--release-version", "3.7-IV3", "--dry-run")
    assert (code, err) == (1, "7 out of 7 operation(s) failed.\n")
    lines = out.splitlines()
    assert [line.split(". ", 1)[0] for line in lines] == [
        "Can not downgrade eligible.leader.replicas.version to 0", "Can not downgrade group.version to 0",
        "Can not downgrade kraft.version to 0", "Can not downgrade metadata.version to 18",
        "Can not downgrade share.version to 0", "Can not downgrade streams.version to 0",
        "Can not downgrade transaction.version to 0"]
    assert all(ALL_FAILED in line for line in lines)
    assert described(features(cluster, "describe")[1]) == FINALIZED


def test_downgrade_then_upgrade_a_feature(cluster: Cluster) -> None:
    assert features(cluster, "downgrade", "--feature", "streams.version=0") == (
        0, "streams.version was downgraded to 0.\n", "")
    assert described(features(cluster, "describe")[1])["streams.version"] == ("0", "1", "0")
    code, out, err = features(cluster, "upgrade", "--feature", "streams.version=1", "--output", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"operation": "upgrade", "dry_run": False, "upgrade_type": "UPGRADE",
                               "results": [{"feature": "streams.version", "level": 1, "ok": True, "error": None}]}
    assert described(features(cluster, "describe")[1]) == FINALIZED
