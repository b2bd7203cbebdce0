"""``kraft-server --release-version LINE`` against real processes: a single-controller quorum of each
Kafka line from 3.9 to 4.4, formatted as that line's ``kafka-storage format`` does, seen through the
SDK's version negotiation, the feature levels it reports and ``kafka-features upgrade``; and the
option's own refusals and help."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from tools.cluster_util import run

from integration.harness import FAST_ELECTIONS, Cluster, server_command, server_env
from kafka_admin_kraft import Admin
from kafka_admin_kraft.errors import DuplicateVoterError, UnsupportedOperationError
from kafka_admin_kraft.models import Endpoint
from kafka_admin_kraft_server.kafka_line import LINE_NAMES, LINES

Make = Callable[..., Cluster]

NEXT = dict(zip(LINE_NAMES, LINE_NAMES[1:], strict=False))
"""Each line's successor: a release the line does not know."""
PRODUCTION = {"3.9": 21, "4.0": 25, "4.1": 27, "4.2": 29, "4.3": 30, "4.4": 33}
"""The latest production metadata.version of each line (MetadataVersion.LATEST_PRODUCTION)."""


def start(make_cluster: Make, line: str) -> Cluster:
    cluster = make_cluster(1, properties=dict(FAST_ELECTIONS), release_version=line).format().start_all()
    cluster.wait_for_leader(30)
    return cluster


def admin(cluster: Cluster) -> Admin:
    return Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=20000,
                 request_timeout_ms=5000)


@pytest.mark.parametrize("line", LINE_NAMES)
def test_a_node_of_each_line(make_cluster: Make, line: str) -> None:
    cluster = start(make_cluster, line)
    node = cluster.nodes[1]
    assert f"Kafka version: {line} (the reference server runs as Kafka {line}" in node.output()
    kafka = LINES[line]
    with admin(cluster) as client:
        # DescribeQuorum v3 is the project's own: no line serves it without unstable.api.versions.enable
        assert client.describe_metadata_quorum().api_version == 2
        features = client.describe_features()
        assert {name: (r.min_version, r.max_version) for name, r in features.supported_features.items()} == {
            name: (low, high) for name, low, high in kafka.features.supported_features()}
        assert features.finalized_features["metadata.version"].max_version_level == PRODUCTION[line]
        # AddRaftVoter v1 (AckWhenCommitted) from 4.2: before, the SDK refuses unsent; the leader answers
        # a voter it already has DUPLICATE_VOTER at whichever version both speak.
        endpoint = [Endpoint(listener="CONTROLLER", host="127.0.0.1", port=node.port)]
        with pytest.raises(DuplicateVoterError):
            client.add_raft_voter(1, node.directory_id, endpoint)
        if kafka.ack_when_committed:
            with pytest.raises(DuplicateVoterError):
                client.add_raft_voter(1, node.directory_id, endpoint, ack_when_committed=False)
        else:
            with pytest.raises(UnsupportedOperationError, match=r"it speaks AddRaftVoter v0-0, this request "
                               r"needs v1-1 \(ack_when_committed=False needs Kafka 4.2\)"):
                client.add_raft_voter(1, node.directory_id, endpoint, ack_when_committed=False)
    # `describe --status` over DescribeQuorum v2 prints Kafka's lines, without CommittedVoters
    status = run("kafka-metadata-quorum", "--bootstrap-controller", node.address, "describe", "--status")
    assert status.returncode == 0, status.stderr
    assert [row.split(":")[0] for row in status.stdout.splitlines()] == [
        "ClusterId", "LeaderId", "LeaderEpoch", "HighWatermark", "MaxFollowerLag", "MaxFollowerLagTimeMs",
        "CurrentVoters", "CurrentObservers"]
    # kafka-features upgrade --release-version: the line's own release is accepted, the next refused
    tool = ("kafka-features", "--bootstrap-controller", node.address)
    own = run(*tool, "upgrade", "--release-version", line)
    assert own.returncode == 0, own.stdout + own.stderr
    assert f"metadata.version was upgraded to {PRODUCTION[line]}.\n" in own.stdout
    if line in NEXT:
        newer = run(*tool, "upgrade", "--release-version", NEXT[line])
        assert newer.returncode == 1
        level, low, high = PRODUCTION[NEXT[line]], 1 if line == "3.9" else 7, PRODUCTION[line]
        reason = (f"Invalid update version {level} for feature metadata.version. Local controller 1 only "
                  f"supports versions {low}-{high}")
        # 3.9 answers each feature alone; from 4.0 the first refusal fails them all (all or nothing)
        all_failed = "The update failed for all features since the following feature had an error: "
        expected = (f"Could not upgrade metadata.version to {level}. {reason}\n" if line == "3.9"
                    else all_failed + reason)
        assert expected in newer.stdout
    cluster.assert_running()


def test_an_unknown_release_version_refuses_the_start_in_one_line(make_cluster: Make) -> None:
    cluster = make_cluster(1).format()
    result = subprocess.run(server_command(cluster.nodes[1].config_path, "--release-version", "3.8"),
                            capture_output=True, text=True, timeout=30, env=server_env(),
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stderr == ("kraft-server: error: argument --release-version: unknown release version "
                             "'3.8': the reference server runs as Kafka 3.9, 4.0, 4.1, 4.2, 4.3, 4.4 (for "
                             "example --release-version 4.4)\n")


def test_a_3_9_node_refuses_a_directory_formatted_by_a_newer_line(make_cluster: Make) -> None:
    """Formatted at 4.4's default, 4.4-IV2 (33): Kafka 3.9 does not know the level."""
    cluster = make_cluster(1).format()
    result = subprocess.run(server_command(cluster.nodes[1].config_path, "--release-version", "3.9"),
                            capture_output=True, text=True, timeout=30, env=server_env(),
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 1
    assert ("ERROR Exiting Kafka due to fatal exception during startup: No MetadataVersion with feature "
            "level 33 (kafka.Kafka$)") in result.stderr
    assert "Traceback" not in result.stderr


def test_help_names_the_lines() -> None:
    result = subprocess.run(server_command(Path("unused"), "--help"),
                            capture_output=True, text=True, timeout=30, env=server_env())
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "--release-version LINE" in text
    assert "one of 3.9, 4.0, 4.1, 4.2, 4.3, 4.4 (default 4.4)" in text
