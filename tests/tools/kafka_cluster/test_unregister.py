"""`kafka-cluster unregister` against a reference cluster: the fenced broker's registration removed
through a broker and through the controllers, then refused as not registered.

These need the reference server's UnregisterBroker handler (Kafka 4.1 answers it on controller
listeners too, KAFKA-17039)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from integration.harness import Cluster

from tools.kafka_cluster.conftest import FENCED, LIVE, listed_brokers, start_cluster
from tools.kafka_cluster.tool_util import tool

NOT_REGISTERED = "org.apache.kafka.common.errors.BrokerIdNotRegisteredException: "


@pytest.fixture(scope="module")
def brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    cluster = start_cluster(tmp_path_factory.mktemp("unregister"), 1)
    try:
        yield cluster
    finally:
        cluster.close()


def test_unregister_the_fenced_broker_then_it_is_not_registered(brokers: Cluster) -> None:
    live = brokers.nodes[LIVE].address
    assert tool("unregister", "--bootstrap-server", live, "--id", str(FENCED)) == (
        0, f"Broker {FENCED} is no longer registered.\n", "")
    assert listed_brokers(brokers) == [(LIVE, False)]
    code, out, err = tool("unregister", "-C", brokers.bootstrap_servers(), "-i", str(FENCED))
    assert (code, out) == (1, "")
    first, note = err.splitlines()
    assert first.startswith(NOT_REGISTERED)
    assert note.startswith(f"Note: broker {FENCED} has no registration")


def test_unregister_through_the_controllers_with_json(brokers: Cluster) -> None:
    """A stopped broker unregistered through the controllers (UnregisterBroker on a controller
    listener); as JSON."""
    code, out, err = tool("unregister", "-C", brokers.bootstrap_servers(), "-i", "7", "--output", "json")
    assert (code, out) == (1, "") and err.startswith(NOT_REGISTERED)
    brokers.kill(LIVE)
    code, out, err = tool("unregister", "-C", brokers.bootstrap_servers(), "-i", str(LIVE), "--output",
                          "json")
    assert (code, json.loads(out), err) == (0, {"broker_id": LIVE, "unregistered": True}, "")
