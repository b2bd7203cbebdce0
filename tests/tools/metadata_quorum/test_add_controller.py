"""`kafka-metadata-quorum add-controller`: the dry run and its own refusal in-process, then the installed
tool against a reference cluster (three dynamic controllers and a broker, real processes): add a fourth
controller and remove it again, and the server's refusals as Kafka's tool prints them. How the
controller's properties file is read: test_controller_identity."""
# ruff: noqa: E501

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration.harness import Cluster

from tools.cluster_util import add_observer_controller, module_quorum
from tools.metadata_quorum.quorum_util import (
    DIRECTORY_ID,
    NOWHERE,
    add_dry_run,
    controller_config,
    quorum_tool,
    refused,
    run,
)


def test_add_controller_dry_run_prints_kafkas_line(tmp_path: Path) -> None:
    result = add_dry_run(controller_config(tmp_path, {}))
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == ("DRY RUN of adding controller 5 with directory id wZoXPqWoSu6F6c8MkmdyAg and endpoints: "
                             "CONTROLLER://example.com:9093, CONTROLLER_SSL://example.com:9094\n")
    document = json.loads(add_dry_run(controller_config(tmp_path, {}), "--output", "json").stdout)
    assert document == {"node_id": 5, "directory_id": DIRECTORY_ID, "dry_run": True,
                        "endpoints": ["CONTROLLER://example.com:9093", "CONTROLLER_SSL://example.com:9094"]}


def test_add_controller_needs_the_controller_configuration() -> None:
    refused(run("--bootstrap-controller", NOWHERE, "add-controller"),
            "You must supply the configuration file of the controller you are adding when using add-controller.")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from module_quorum(tmp_path_factory, "quorum")


def test_add_then_remove_a_controller_and_refusals(cluster: Cluster) -> None:
    new = add_observer_controller(cluster, 4)
    endpoint = f"CONTROLLER://127.0.0.1:{new.port}"
    code, out, err = quorum_tool(cluster, "--command-config", str(new.config_path), "add-controller")
    assert (code, err) == (0, ""), err
    assert out == f"Added controller 4 with directory id {new.directory_id} and endpoints: {endpoint}\n"
    code, out, _ = quorum_tool(cluster, "describe", "--status")
    assert f'{{"id": 4, "directoryId": "{new.directory_id}", "endpoints": ["{endpoint}"]}}' in out.splitlines()[6]

    # Adding a controller whose id already votes: the leader's DUPLICATE_VOTER, as the Java client reports it.
    code, out, err = quorum_tool(cluster, "--command-config", str(cluster.nodes[1].config_path), "add-controller")
    assert (code, out) == (1, "")
    assert err.startswith("org.apache.kafka.common.errors.DuplicateVoterException: The voter id for ReplicaKey(id=1")

    code, out, err = quorum_tool(cluster, "remove-controller", "-i", "4", "-d", str(new.directory_id))
    assert (code, err) == (0, "Note: if controller 4 runs with controller.quorum.auto.join.enable=true (Kafka 4.2+), "
                              "it adds itself back to the voters unless it is stopped first\n"), err
    assert out == f"Removed  KRaft controller 4 with directory id {new.directory_id}\n"
    code, out, _ = quorum_tool(cluster, "describe", "--status")
    assert '"id": 4' not in out.splitlines()[6]

    code, out, err = quorum_tool(cluster, "remove-controller", "-i", "4", "-d", str(new.directory_id))
    assert (code, out) == (1, "")
    assert err.startswith("org.apache.kafka.common.errors.VoterNotFoundException: Cannot remove voter")
