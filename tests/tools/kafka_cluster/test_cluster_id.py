"""`kafka-cluster cluster-id` against a reference cluster, through a controller and through a broker."""

from __future__ import annotations

import json

from integration.harness import Cluster

from tools.kafka_cluster.conftest import LIVE
from tools.kafka_cluster.tool_util import tool


def test_cluster_id_through_a_controller_and_a_broker(cluster: Cluster) -> None:
    expected = (0, f"Cluster ID: {cluster.cluster_id}\n", "")
    assert tool("cluster-id", "--bootstrap-controller", cluster.bootstrap_servers()) == expected
    assert tool("cluster-id", "-b", cluster.nodes[LIVE].address) == expected
    code, out, err = tool("cluster-id", "-C", cluster.bootstrap_servers(), "--output", "json")
    assert (code, json.loads(out), err) == (0, {"cluster_id": cluster.cluster_id}, "")
