"""The reference clusters `kafka-cluster` runs against: three controllers with two brokers, one of them
stopped and so fenced (``cluster``, shared by the modules that only read), and a smaller one per module
that unregisters nodes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from integration.harness import FAST_ELECTIONS, Cluster, wait_until

from kafka_admin_kraft import Admin
from tools.cluster_util import add_observer_controller

LIVE, FENCED = 100, 101
"""The brokers: 100 runs, 101 is stopped and fenced."""
SESSIONS = {"broker.heartbeat.interval.ms": "300", "broker.session.timeout.ms": "2500"}
QUICK = {"default_api_timeout_ms": 5000, "request_timeout_ms": 2000}


def listed_brokers(cluster: Cluster) -> list[tuple[int, bool]]:
    """What the live broker lists, fenced brokers included."""
    with Admin(bootstrap_servers=cluster.nodes[LIVE].address, **QUICK) as admin:
        nodes = admin.describe_cluster(include_fenced_brokers=True).nodes
    return [(n.node_id, n.is_fenced) for n in nodes]


def start_cluster(root: Path, controllers: int, *, observer: int | None = None) -> Cluster:
    """``controllers`` voters, brokers LIVE and FENCED (stopped once both were unfenced), and optionally
    a controller ``observer`` that registered as an observer and was stopped."""
    cluster = Cluster(root, controllers, properties={**FAST_ELECTIONS, **SESSIONS})
    cluster.format()
    cluster.add_broker(LIVE)
    cluster.add_broker(FENCED)
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(60)
    cluster.wait_caught_up(leader, 60)
    wait_until(lambda: listed_brokers(cluster) == [(LIVE, False), (FENCED, False)], 60,
               "both brokers to be registered and unfenced")
    cluster.kill(FENCED)
    wait_until(lambda: listed_brokers(cluster) == [(LIVE, False), (FENCED, True)], 30,
               "the stopped broker to be fenced")
    if observer is not None:
        add_observer_controller(cluster, observer)

        def registered() -> bool:
            with Admin(bootstrap_controllers=cluster.bootstrap_servers(), **QUICK) as admin:
                return observer in {n.node_id for n in admin.describe_cluster().nodes}

        wait_until(registered, 60, f"controller {observer} to register")
        cluster.kill(observer)
    return cluster


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three controllers, broker LIVE and the fenced broker FENCED; the tests leave it as it is."""
    started = start_cluster(tmp_path_factory.mktemp("kafka-cluster"), 3)
    try:
        yield started
    finally:
        started.close()
