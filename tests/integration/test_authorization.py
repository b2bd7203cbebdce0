"""The tools on a reference quorum with Kafka's StandardAuthorizer on: a user without ACLs gets one line
naming Kafka's exception, the principal refused and the ACL that grants it; with DESCRIBE on the
cluster alone, ``describe``, ``check``, ``watch`` and ``exporter`` work through brokers
(``--bootstrap-server``), while changes stay refused."""

from __future__ import annotations

import json
import select
import subprocess
from collections.abc import Callable
from pathlib import Path

import requests
from console_scripts import console_script

from integration.authz_util import admin, broker_address, eventually, start, write_client_properties
from integration.harness import Cluster
from kafka_admin_kraft import AclBinding, AclOperation, ResourceType

Make = Callable[..., Cluster]
REFUSED = ("org.apache.kafka.common.errors.ClusterAuthorizationException: User:alice is not authorized to "
           "send ")


def tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([console_script(name), *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_the_tools_for_a_user_with_describe_only(make_cluster: Make, tmp_path: Path) -> None:
    cluster = start(make_cluster)
    alice = write_client_properties(tmp_path / "alice.properties", "alice")
    controllers = ["--bootstrap-controller", cluster.bootstrap_servers(), "--command-config", alice]
    brokers = ["--bootstrap-server", broker_address(cluster), "--command-config", alice]

    refused = tool("kafka-metadata-quorum", *controllers, "describe", "--status")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        REFUSED + "DescribeCluster to a controller, which allows it to principals with ALTER on the cluster "
        "(the CLUSTER resource, kafka-cluster); an ACL allowing User:alice ALTER on the cluster grants it; "
        "through brokers (--bootstrap-server) DescribeCluster needs no permission, and read-only commands "
        "(describe, check, watch) need only DESCRIBE on the cluster"]
    through_broker = tool("kafka-metadata-quorum", *brokers, "describe", "--status")
    assert through_broker.returncode == 1
    assert through_broker.stderr.splitlines() == [
        REFUSED + "DescribeQuorum through a broker: the active controller it is forwarded to allows it to "
        "principals with DESCRIBE on the cluster (the CLUSTER resource, kafka-cluster); an ACL allowing "
        "User:alice DESCRIBE on the cluster grants it"]

    with admin(cluster, "admin") as a:
        assert a.create_acls([AclBinding(ResourceType.CLUSTER, "kafka-cluster", "User:alice",
                                         AclOperation.DESCRIBE)])[0].ok

    status = eventually(lambda: _succeeds(tool("kafka-metadata-quorum", *brokers, "describe", "--status")))
    assert "LeaderId:" in status.stdout
    assert _succeeds(tool("kafka-metadata-quorum", *brokers, "describe", "--replication")).stdout
    check = tool("kafka-metadata-quorum", *brokers, "check", "--output", "json")
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)["status"] == "OK"
    watch = tool("kafka-metadata-quorum", *brokers, "watch", "--count", "1", "--output", "json")
    assert watch.returncode == 0, watch.stderr
    statuses = [json.loads(line)["status"] for line in watch.stdout.splitlines() if '"status"' in line]
    assert statuses[:1] == ["OK"]
    _scrape_exporter(brokers)

    # DESCRIBE changes nothing: a feature downgrade is refused, and says that it needs ALTER.
    downgrade = tool("kafka-features", *brokers, "downgrade", "--feature", "share.version=1")
    assert (downgrade.returncode, downgrade.stderr) == (1, "1 out of 1 operation(s) failed.\n")
    assert downgrade.stdout == (
        "Could not downgrade share.version to 1. User:alice is not authorized to send UpdateFeatures through "
        "a broker: the active controller it is forwarded to allows it to principals with ALTER on the "
        "cluster (the CLUSTER resource, kafka-cluster); an ACL allowing User:alice ALTER on the cluster "
        "grants it\n")
    # The controllers still want ALTER for DescribeCluster.
    assert tool("kafka-metadata-quorum", *controllers, "describe", "--status").returncode == 1
    cluster.assert_running()


def _succeeds(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


def _scrape_exporter(brokers: list[str]) -> None:
    process = subprocess.Popen([console_script("kafka-metadata-quorum"), *brokers, "exporter", "--listen",
                                "127.0.0.1:0"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        ready, _, _ = select.select([process.stderr], [], [], 30)
        line = process.stderr.readline() if ready else ""
        assert line.startswith("Serving quorum metrics on http://127.0.0.1:"), line
        url = line.split()[-1]

        def up() -> str:
            text = requests.get(url, timeout=10).text
            assert "kraft_quorum_up 1.0" in text and "kraft_quorum_status 0.0" in text, text[-2000:]
            return text

        eventually(up)
    finally:
        process.terminate()
        process.communicate(timeout=15)
