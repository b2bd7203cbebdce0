"""`kafka-cluster list-endpoints`: Kafka's table (column widths from the longest host and rack), and
against a reference cluster the controllers, the live brokers and the fenced ones."""
# ruff: noqa: E501

from __future__ import annotations

import json

from integration.harness import Cluster

from kafka_admin_kraft.models import ClusterNode
from kafka_admin_kraft_cli.kafka_cluster.list_endpoints import endpoints_text
from tools.kafka_cluster.conftest import FENCED, LIVE
from tools.kafka_cluster.tool_util import tool


def test_column_widths_follow_the_longest_host_and_rack() -> None:
    nodes = [ClusterNode(node_id=1, host="a", port=9092, rack=None),
             ClusterNode(node_id=12, host="b.example", port=9093, rack="r1", is_fenced=True)]
    assert endpoints_text(nodes, controllers=False) == (
        "ID         HOST      PORT       RACK STATE      ENDPOINT_TYPE  \n"
        "1          a         9092       null unfenced   broker         \n"
        "12         b.example 9093       r1 fenced     broker         \n")  # "null" overflows its column, as in Kafka
    assert endpoints_text(nodes[:1], controllers=True) == (
        "ID         HOST PORT       RACK       ENDPOINT_TYPE  \n"
        "1          a 9092       null       controller     \n")
    assert endpoints_text([], controllers=True) == "ID         " + "HOST".ljust(100) + " PORT       RACK       ENDPOINT_TYPE  \n"


def _row(node_id: int, port: int, kind: str, state: str | None = None) -> str:
    return f"{node_id:<10} 127.0.0.1 {port:<10} null       " + (f"{state:<10} " if state else "") + f"{kind:<15}\n"


def test_controllers(cluster: Cluster) -> None:
    expected = "ID         HOST      PORT       RACK       ENDPOINT_TYPE  \n" + "".join(
        _row(node.node_id, node.port, "controller") for node in cluster.controllers())
    assert tool("list-endpoints", "--bootstrap-controller", cluster.bootstrap_servers()) == (0, expected, "")
    code, out, _ = tool("list-endpoints", "-C", cluster.bootstrap_servers(), "--output", "json")
    assert code == 0 and json.loads(out) == {"endpoint_type": "controller", "nodes": [
        {"id": node.node_id, "host": "127.0.0.1", "port": node.port, "rack": None} for node in cluster.controllers()]}


def test_brokers_live_and_fenced(cluster: Cluster) -> None:
    header = "ID         HOST      PORT       RACK       STATE      ENDPOINT_TYPE  \n"
    live, fenced = cluster.nodes[LIVE], cluster.nodes[FENCED]
    assert tool("list-endpoints", "--bootstrap-server", live.address) == (
        0, header + _row(LIVE, live.port, "broker", "unfenced"), "")
    assert tool("list-endpoints", "-b", live.address, "--include-fenced-brokers") == (
        0, header + _row(LIVE, live.port, "broker", "unfenced") + _row(FENCED, fenced.port, "broker", "fenced"), "")
    code, out, _ = tool("list-endpoints", "-b", live.address, "--include-fenced-brokers", "--output", "json")
    assert code == 0 and [(n["id"], n["fenced"]) for n in json.loads(out)["nodes"]] == [(LIVE, False), (FENCED, True)]


def test_fenced_brokers_need_bootstrap_servers(cluster: Cluster) -> None:
    assert tool("list-endpoints", "-C", cluster.bootstrap_servers(), "--include-fenced-brokers") == (
        1, "", "The option --include-fenced-brokers is only supported with --bootstrap-server option\n")
