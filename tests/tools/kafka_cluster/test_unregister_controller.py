"""`kafka-cluster unregister-controller` against reference clusters: a stopped observer controller
unregistered, then refused as not registered (through a broker); a voter refused; a cluster of Kafka
4.3, and one of Kafka 4.4 still at metadata.version 4.3-IV0, answered as Kafka 4.4's tool answers them.

Those that reach a Kafka 4.4 controller need the reference server's UnregisterController handler
(KIP-1312)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration.harness import FAST_ELECTIONS, Cluster

from kafka_admin_kraft import Admin
from tools.kafka_cluster.conftest import LIVE, QUICK, start_cluster
from tools.kafka_cluster.tool_util import tool

OBSERVER = 2
UNSUPPORTED = "The target cluster does not support the controller unregistration API.\n"


@pytest.fixture(scope="module")
def controllers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Voter 1 and controller OBSERVER, which registered as an observer and was stopped."""
    cluster = start_cluster(tmp_path_factory.mktemp("unregister-controller"), 1, observer=OBSERVER)
    try:
        yield cluster
    finally:
        cluster.close()


def registered(cluster: Cluster) -> list[int]:
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), **QUICK) as admin:
        return [n.node_id for n in admin.describe_cluster().nodes]


def test_unregister_a_stopped_observer_then_it_is_not_registered(controllers: Cluster) -> None:
    assert registered(controllers) == [1, OBSERVER]
    assert tool("unregister-controller", "--bootstrap-controller", controllers.bootstrap_servers(),
                "--id", str(OBSERVER)) == (0, f"Controller {OBSERVER} is no longer registered.\n", "")
    assert registered(controllers) == [1]
    # through a broker, which forwards it to the active controller
    code, out, err = tool("unregister-controller", "-b", controllers.nodes[LIVE].address, "-i", str(OBSERVER))
    assert (code, out) == (1, "")
    first, note = err.splitlines()
    assert first.startswith("org.apache.kafka.common.errors.ControllerIdNotRegisteredException: ")
    assert note.startswith(f"Note: controller {OBSERVER} has no registration")
    code, out, _ = tool("unregister-controller", "-C", controllers.bootstrap_servers(), "-i", "9",
                        "--output", "json")
    assert (code, out) == (1, "")


def test_a_voter_is_refused(controllers: Cluster) -> None:
    code, out, err = tool("unregister-controller", "-C", controllers.bootstrap_servers(), "-i", "1")
    assert (code, out) == (1, "")
    assert err.startswith("org.apache.kafka.common.errors.")
    assert 1 in registered(controllers)


def _single(root: Path, **options: str) -> Cluster:
    cluster = Cluster(root, 1, properties=dict(FAST_ELECTIONS), **options)  # type: ignore[arg-type]
    cluster.format().start_all()
    cluster.wait_for_leader(30)
    return cluster


def test_a_kafka_4_3_cluster_lacks_the_api(tmp_path: Path) -> None:
    cluster = _single(tmp_path / "kafka-4.3", release_version="4.3")
    try:
        code, out, err = tool("unregister-controller", "-C", cluster.bootstrap_servers(), "-i", "2")
        assert (code, out) == (0, UNSUPPORTED)
        assert err == ("Note: unregister_controller: the server at node 1 (" + cluster.bootstrap_servers()
                       + ") is too old: it does not advertise UnregisterController (API key 94) (it needs "
                       "Kafka 4.4 at metadata.version 4.4-IV2 or later, KIP-1312)\n")
        code, out, _ = tool("unregister-controller", "-C", cluster.bootstrap_servers(), "-i", "2",
                            "--output", "json")
        assert code == 0 and json.loads(out)["unregistered"] is False
    finally:
        cluster.close()


def test_metadata_version_below_4_4_iv2_names_the_level_needed(tmp_path: Path) -> None:
    cluster = _single(tmp_path / "at-4.3-IV0", format_release_version="4.3")
    try:
        code, out, err = tool("unregister-controller", "-C", cluster.bootstrap_servers(), "-i", "2")
        assert (code, out) == (0, UNSUPPORTED)
        assert err.startswith("Note: unregistering a controller needs metadata.version 4.4-IV2 (level 33) or "
                              "later: finalize it once every node runs Kafka 4.4")
    finally:
        cluster.close()
