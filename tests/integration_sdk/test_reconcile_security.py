"""Guided voter changes where operators often run them: through a broker (``bootstrap_servers``; it
forwards AddRaftVoter and RemoveRaftVoter to the active controller) and over a SASL listener."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from integration.harness import HOST, LISTENER, Cluster
from integration.test_reconcile import grown_from_one

from kafka_admin_kraft import Admin, Endpoint
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.voters import DesiredVoter, Progress

Make = Callable[..., Cluster]
Key = tuple[int, Uuid]
BROKER_ID = 100
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SASL = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
        "sasl_jaas_config": f'{PLAIN} required username="alice" password="alice-secret";'}


@pytest.fixture
def unstarted(tmp_path: Path) -> Iterator[Make]:
    """``unstarted(size, **options)``: a cluster left to the test to format and start; killed at
    teardown."""
    made: list[Cluster] = []

    def factory(size: int, **options: Any) -> Cluster:
        made.append(Cluster(tmp_path / f"cluster-{len(made)}", size, **options))
        return made[-1]

    yield factory
    for cluster in made:
        cluster.close()


def desired(cluster: Cluster, *node_ids: int) -> list[DesiredVoter]:
    return [DesiredVoter(i, endpoints=(Endpoint(listener=LISTENER, host=HOST, port=cluster.nodes[i].port),))
            for i in node_ids]


def keys(cluster: Cluster, *node_ids: int) -> frozenset[Key]:
    return frozenset((i, cluster.nodes[i].directory_id) for i in node_ids)


def committed_voters(client: Admin) -> frozenset[Key]:
    quorum = client.describe_metadata_quorum()
    assert quorum.committed_voters is not None, "the reference server answers DescribeQuorum v3"
    return frozenset((v.replica_id, v.replica_directory_id) for v in quorum.committed_voters)


def grow_to_three(cluster: Cluster, client: Admin, watcher: Admin) -> None:
    """Reconcile 1 -> 3 with ``client``; ``watcher`` reads the committed voters at each commit."""
    committed_at: list[frozenset[Key]] = []

    def progress(event: Progress) -> None:
        if event.kind == "committed":
            committed_at.append(committed_voters(watcher))

    result = client.reconcile_voters(desired(cluster, 1, 2, 3), progress=progress, timeout=30)
    assert [(o.step.action, o.step.node_id) for o in result.completed] == [("add", 2), ("add", 3)]
    assert committed_at == [keys(cluster, 1, 2), keys(cluster, 1, 2, 3)]
    again = client.reconcile_voters(desired(cluster, 1, 2, 3), timeout=30)
    assert not again.changed and again.plan.done
    assert committed_voters(watcher) == keys(cluster, 1, 2, 3)
    cluster.assert_running()


def test_reconcile_through_a_broker(unstarted: Make) -> None:
    cluster = grown_from_one(unstarted, 3)
    broker = cluster.add_broker(BROKER_ID)
    cluster.start_all()
    cluster.wait_for_leader(30)
    options: dict[str, Any] = {"request_timeout_ms": 10000, "default_api_timeout_ms": 30000}
    with Admin(bootstrap_servers=broker.address, **options) as client, \
            Admin(bootstrap_controllers=cluster.bootstrap_servers(), **options) as watcher:
        assert [n.node_id for n in client.describe_cluster().nodes] == [BROKER_ID]  # it sees the broker only
        assert BROKER_ID in {o.replica_id for o in client.describe_metadata_quorum().observers}
        grow_to_three(cluster, client, watcher)


def test_reconcile_over_sasl(unstarted: Make) -> None:
    jaas = f'{PLAIN} required username="admin" password="admin-secret" ' \
           'user_admin="admin-secret" user_alice="alice-secret";'
    sasl = {"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT", "sasl.enabled.mechanisms": "PLAIN",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": jaas}
    cluster = grown_from_one(unstarted, 3, sasl)
    cluster.start_all()
    options: dict[str, Any] = {"bootstrap_controllers": cluster.bootstrap_servers(),
                               "request_timeout_ms": 10000, "default_api_timeout_ms": 30000, **SASL}
    with Admin(**options) as client, Admin(**options) as watcher:
        grow_to_three(cluster, client, watcher)
