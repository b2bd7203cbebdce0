"""`kafka-metadata-quorum replace-controller`: its refusals in-process, the installed tool swapping
in a wiped controller under its new directory id on a reference quorum, and refusing a controller that
is only an observer (adding a voter is scale --add's)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration.harness import Cluster, wait_until
from integration.test_voters import format_observer

from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.storage import MetaProperties, write_meta_properties
from tools.cluster_util import add_observer_controller, module_quorum
from tools.metadata_quorum.quorum_util import refused
from tools.metadata_quorum.voter_util import D2, follower, quorum, tool, voters


def test_refusals_before_any_request(tmp_path: Path) -> None:
    refused(quorum("replace-controller", "--controller-id", "3"),
            "You must supply the configuration file of the new controller when using replace-controller.")
    metadata = tmp_path / "metadata"
    metadata.mkdir()
    write_meta_properties(metadata, MetaProperties(version=1, cluster_id="c", node_id=2,
                                                   directory_id=D2))
    config = tmp_path / "controller-2.properties"
    config.write_text(f"process.roles=controller\nnode.id=2\ncontroller.listener.names=CONTROLLER\n"
                      f"listeners=CONTROLLER://:9093\nmetadata.log.dir={metadata}\n")
    refused(quorum("--command-config", str(config), "replace-controller", "--controller-id", "3"),
            f"--controller-id 3 differs from node.id 2 in {config}: is it the replaced controller's file?")


def test_replace_a_wiped_controller(three: Cluster) -> None:
    cluster = three
    victim = follower(cluster)
    node = cluster.nodes[victim]
    old = str(node.directory_id)
    cluster.kill(victim)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = Uuid.random()
    format_observer(cluster, node)
    cluster.start(victim)
    config = str(node.config_path)

    other = str(victim + 10)
    wrong = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", other)
    assert (wrong.returncode, wrong.stdout) == (1, "")
    assert wrong.stderr.startswith(f"--controller-id {victim + 10} differs from node.id {victim} in ")

    dry = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", str(victim),
               "--dry-run")
    assert dry.returncode == 0, dry.stderr
    current = ", ".join(f"{i}@{old}" if i == victim else str(i) for i in (1, 2, 3))
    assert f"Current voters:  {current}\n" in dry.stdout
    assert f"  1. Remove voter {victim} (directory id {old})" in dry.stdout
    assert f"  2. Add voter {victim} (directory id {node.directory_id})" in dry.stdout
    assert voters(cluster)[victim] == old

    replaced = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", str(victim),
                    "--yes")
    assert replaced.returncode == 0, replaced.stderr
    assert [line.split(" ... ")[0] for line in replaced.stderr.splitlines() if " ... " in line] == [
        f"Step 1/2: Remove voter {victim} (directory id {old})",
        f"Step 2/2: Add voter {victim} (directory id {node.directory_id})"]
    wait_until(lambda: voters(cluster).get(victim) == str(node.directory_id), 10, "the new directory id")
    again = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", str(victim))
    assert (again.returncode, again.stdout) == (0, "Nothing to do: the voters are already 1, 2, 3\n")
    cluster.assert_running()


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three voters of its own: this module's observer controller must not outlive it."""
    yield from module_quorum(tmp_path_factory, "observed")


def test_an_observer_is_refused_and_scale_add_is_named(observed: Cluster) -> None:
    cluster = observed
    node = add_observer_controller(cluster, 5)
    config = str(node.config_path)
    for extra in ((), ("--dry-run",), ("--yes",)):
        result = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", "5",
                      *extra)
        assert (result.returncode, result.stdout) == (1, ""), result.stderr
        assert result.stderr == (
            "Cannot replace controller 5: node 5 is not a voter (the voters are 1, 2, 3); to add it as a "
            f"voter, run scale --add 5@{node.directory_id}\n")
    assert sorted(voters(cluster)) == [1, 2, 3]
    # the command the refusal names is the one that adds it
    suggested = tool(cluster, "scale", "--add", f"5@{node.directory_id}", "--dry-run")
    assert suggested.returncode == 0, suggested.stderr
    assert f"  1. Add voter 5 (directory id {node.directory_id})" in suggested.stdout
    cluster.assert_running()
