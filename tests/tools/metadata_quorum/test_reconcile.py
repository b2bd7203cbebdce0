"""`kafka-metadata-quorum reconcile`: its refusals in-process, and the installed tool growing a
standalone controller to three (reference processes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from integration.harness import Cluster
from integration.test_voters import FAST, format_observer

from tools.metadata_quorum.quorum_util import PROG, refused
from tools.metadata_quorum.voter_util import entry, quorum, tool, voters


def test_refusals_before_any_request() -> None:
    refused(quorum("reconcile", "--voters", "1,x"),
            "Invalid --voters entry 'x': 'x' is not a node id; expected <id>, <id>@<directory-id> or "
            "<id>@<host>:<port>:<directory-id>")
    result = quorum("reconcile", "--voters", "1", "--no-probe")
    assert result.stderr.endswith(f"{PROG} reconcile: error: unrecognized arguments: '--no-probe'\n")


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[Cluster]:
    """Node 1 formatted with --standalone, nodes 2 and 3 with --no-initial-controllers (observers)."""
    cluster = Cluster(tmp_path / "standalone", 3, properties=dict(FAST))
    try:
        for node in cluster.nodes.values():
            cluster.write_config(node)
        cluster.format_node(cluster.nodes[1], initial_controllers=[1])
        for node_id in (2, 3):
            format_observer(cluster, cluster.nodes[node_id])
        cluster.start_all()
        cluster.wait_for_leader(30)
        yield cluster
    finally:
        cluster.close()


def test_grow_a_standalone_controller_to_three(standalone: Cluster) -> None:
    cluster = standalone
    wanted = ["--voters", f"1,{entry(cluster, 2)},{entry(cluster, 3)}"]
    before = voters(cluster)
    assert list(before) == [1]

    dry = tool(cluster, "reconcile", *wanted, "--dry-run")
    assert (dry.returncode, dry.stderr) == (0, ""), dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[:4] == ["Current voters:  1", "Desired voters:  1, 2, 3",
                         "Fault tolerance: 0 now, 1 after the change",
                         "Plan (2 steps, each committed before the next):"]
    assert lines[4] == f"  1. Add voter 2 (directory id {cluster.nodes[2].directory_id})"
    assert lines[6] == f"  2. Add voter 3 (directory id {cluster.nodes[3].directory_id})"
    assert lines[-1] == "Dry run: no change made."

    unconfirmed = tool(cluster, "reconcile", *wanted)
    assert unconfirmed.returncode == 1
    assert unconfirmed.stdout == dry.stdout.replace("Dry run: no change made.\n", "")
    assert unconfirmed.stderr == ("No terminal to confirm on: add --yes to change voters from a script "
                                  "(no change made)\n")

    nothing = tool(cluster, "reconcile", "--voters", ",", "--yes")
    assert (nothing.returncode, nothing.stdout) == (1, "")
    assert nothing.stderr == (
        "Voter change refused: the quorum needs at least one voter (no step was completed)\n")
    assert voters(cluster) == before

    grown = tool(cluster, "reconcile", *wanted, "--yes")
    assert grown.returncode == 0, grown.stderr
    assert grown.stdout.startswith(unconfirmed.stdout)
    assert grown.stdout.splitlines()[-1].startswith(
        "Done: the voters are now 1, 2, 3, fault tolerance 1 (2 steps committed in ")
    progress = grown.stderr.splitlines()
    assert [line.split(" ... ")[0] for line in progress] == [
        f"Step 1/2: Add voter 2 (directory id {cluster.nodes[2].directory_id})",
        f"Step 2/2: Add voter 3 (directory id {cluster.nodes[3].directory_id})"]
    assert all(" ... committed in " in line for line in progress)
    assert voters(cluster) == {i: str(n.directory_id) for i, n in cluster.nodes.items()}

    again = tool(cluster, "reconcile", *wanted)
    assert (again.returncode, again.stdout, again.stderr) == (
        0, "Nothing to do: the voters are already 1, 2, 3\n", "")
