"""`kafka-cluster api-versions`: Kafka's ``NodeApiVersions.toString(true)`` text for one node, and
against a reference cluster every controller's and every live broker's APIs."""
# ruff: noqa: E501

from __future__ import annotations

import json

from integration.harness import Cluster

from kafka_admin_kraft import Admin
from kafka_admin_kraft.models import ApiVersionRange, ClusterNode, NodeApiVersions
from kafka_admin_kraft_cli.kafka_cluster.api_table import API_KEYS
from kafka_admin_kraft_cli.kafka_cluster.api_versions import node_label, versions_text
from tools.kafka_cluster.conftest import LIVE
from tools.kafka_cluster.tool_util import tool

BROKER_KEYS = [info.key for info in API_KEYS if info.broker]


def _ranges(*ranges: tuple[int, int, int]) -> NodeApiVersions:
    return NodeApiVersions(node_id=1, api_versions=tuple(
        ApiVersionRange(api_key=key, min_version=low, max_version=high) for key, low, high in ranges))


def test_one_node_as_kafka_prints_it() -> None:
    text = versions_text(_ranges((1, 0, 3), (18, 0, 7), (52, 0, 2), (60, 3, 9), (81, 0, 0), (999, 1, 2)))
    lines = text.splitlines()
    assert lines[0] == "(" and lines[-1] == ")"
    assert lines[1:3] == ["\tProduce(0): UNSUPPORTED,", "\tFetch(1): 0 to 3 [unusable: node too old],"]
    assert "\tApiVersions(18): 0 to 7 [usable: 5]," in lines  # the client's newest, 4.4's v5
    assert "\tVote(52): 0 to 2 [usable: 2]," in lines  # a controller API the node serves
    assert "\tDescribeCluster(60): 3 to 9 [unusable: node too new]," in lines
    assert "\tRemoveRaftVoter(81): 0 [usable: 0]," in lines
    assert lines[-2] == "\tUNKNOWN(999): 1 to 2"  # the last one has no comma
    assert "\tBeginQuorumEpoch(53): UNSUPPORTED," not in lines  # missing controller APIs are not listed
    listed = [int(line.split("(", 2)[1].split(")")[0]) for line in lines[1:-1] if not line.startswith("\tUNKNOWN")]
    assert listed == sorted({1, 18, 52, 60, 81, *BROKER_KEYS})


def test_node_labels_are_kafkas_node_to_string() -> None:
    assert node_label(ClusterNode(node_id=3, host="::1", port=9093, rack="r1", is_fenced=True)) == (
        "::1:9093 (id: 3 rack: r1 isFenced: true)")


def _expected_lines(versions: NodeApiVersions) -> set[str]:
    """What each API the node serves prints as (the client's newest versions of these APIs in Kafka
    4.4 are at least the reference server's)."""
    lines = set()
    for api in versions.api_versions:
        name = next(info.name for info in API_KEYS if info.key == api.api_key)
        span = str(api.min_version) if api.min_version == api.max_version else f"{api.min_version} to {api.max_version}"
        lines.add(f"\t{name}({api.api_key}): {span} [usable: {api.max_version}]")
    return lines


def test_every_controller_and_the_live_broker(cluster: Cluster) -> None:
    controllers, broker = cluster.bootstrap_servers(), cluster.nodes[LIVE].address
    for option, bootstrap, admin, nodes in (
        ("--bootstrap-controller", controllers, Admin(bootstrap_controllers=controllers), cluster.controllers()),
        ("--bootstrap-server", broker, Admin(bootstrap_servers=broker), [cluster.nodes[LIVE]]),
    ):
        code, out, err = tool("api-versions", option, bootstrap)
        assert (code, err) == (0, ""), err
        blocks = out.split(")\n")
        assert blocks[-1] == "" and len(blocks) == len(nodes) + 1
        with admin:
            for node, block in zip(sorted(nodes, key=lambda n: n.node_id), blocks, strict=False):
                head, *lines = block.splitlines()
                assert head == f"127.0.0.1:{node.port} (id: {node.node_id} rack: null isFenced: false) -> ("
                served = admin.api_versions(node.node_id)
                assert {line.rstrip(",") for line in lines} >= _expected_lines(served)
                missing = [key for key in BROKER_KEYS if served.get(key) is None]
                assert len(lines) == len(served.api_versions) + len(missing)


def test_json(cluster: Cluster) -> None:
    code, out, _ = tool("api-versions", "-C", cluster.bootstrap_servers(), "--output", "json")
    nodes = json.loads(out)["nodes"]
    assert code == 0 and [n["id"] for n in nodes] == [1, 2, 3]
    describe_cluster = next(api for api in nodes[0]["api_versions"] if api["api_key"] == 60)
    assert describe_cluster == {"api_key": 60, "name": "DescribeCluster", "min_version": 0, "max_version": 2,
                                "usable_version": 2}
    assert nodes[0]["error"] is None and nodes[0]["fenced"] is False
