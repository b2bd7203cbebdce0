"""`kafka-metadata-quorum scale`: the voters it computes, its refusals in-process, and the installed
tool removing a voter (again: nothing to do, exit 0) and adding it back (by entry, then by
--controller-config) on a reference quorum."""

from __future__ import annotations

import json

import pytest
from integration.harness import Cluster

from kafka_admin_kraft_cli.metadata_quorum.scale import scaled
from kafka_admin_kraft_cli.metadata_quorum.voter_entries import VoterEntry, VoterSpecError
from tools.metadata_quorum.quorum_util import PROG, refused
from tools.metadata_quorum.voter_util import D2, D4, entry, follower, quorum, tool, voters


def test_scaling_adds_and_removes_from_the_current_voters() -> None:
    assert scaled([1, 2, 3], [VoterEntry(4), VoterEntry(5, D4)], []) == [
        VoterEntry(1), VoterEntry(2), VoterEntry(3), VoterEntry(4), VoterEntry(5, D4)]
    assert scaled([1, 2, 3], [], [VoterEntry(2)]) == [VoterEntry(1), VoterEntry(3)]
    assert scaled([1, 2, 3], [VoterEntry(2, D2)], [VoterEntry(1)]) == [VoterEntry(2, D2), VoterEntry(3)]
    # a --remove id that is not a voter has nothing to remove (a re-run, or a node never a voter)
    assert scaled([1, 2, 3], [], [VoterEntry(7), VoterEntry(3)]) == [VoterEntry(1), VoterEntry(2)]
    with pytest.raises(VoterSpecError, match="both --add and --remove"):
        scaled([1, 2, 3], [VoterEntry(2)], [VoterEntry(2)])
    with pytest.raises(VoterSpecError, match="--remove takes node ids"):
        scaled([1, 2, 3], [], [VoterEntry(2, D2)])


def test_refusals_before_any_request() -> None:
    refused(quorum("scale", "--add", "4,4"), "Invalid --add: node id 4 is given more than once")
    result = quorum("scale", "--yes")
    assert result.exit_code == 1
    assert result.stderr.endswith(
        f"{PROG} scale: error: one of the arguments --add --remove --controller-config is required\n")


def test_scale_remove_and_add_back_as_json(three: Cluster) -> None:
    cluster = three
    gone = follower(cluster)
    removed = tool(cluster, "scale", "--remove", str(gone), "--yes", "--output", "json")
    assert removed.returncode == 0, removed.stderr
    document = json.loads(removed.stdout)
    directory = str(cluster.nodes[gone].directory_id)
    assert [(s["action"], s["node_id"], s["directory_id"], s["fault_tolerance_after"])
            for s in document["plan"]["steps"]] == [("remove", gone, directory, 0)]
    assert document["plan"]["fault_tolerance"] == 1
    assert [(c["action"], c["node_id"]) for c in document["completed"]] == [("remove", gone)]
    assert document["completed"][0]["seconds"] >= 0
    assert (document["changed"], document["dry_run"], document["error"]) == (True, False, None)
    assert gone not in voters(cluster)

    # the node fetches on as an observer: adding it back (its endpoint given) restores the quorum
    back = tool(cluster, "scale", "--add", entry(cluster, gone), "--yes", "--output", "json")
    assert back.returncode == 0, back.stderr
    assert [(c["action"], c["node_id"]) for c in json.loads(back.stdout)["completed"]] == [("add", gone)]
    assert voters(cluster)[gone] == directory

    unknown = tool(cluster, "scale", "--remove", "9", "--yes")
    assert (unknown.returncode, unknown.stdout) == (0, "Nothing to do: the voters are already 1, 2, 3\n")
    assert unknown.stderr == "Note: node 9 is not a voter (the voters are 1, 2, 3): nothing to remove\n"

    # the controller's own properties file gives its node id, directory id and endpoint
    assert tool(cluster, "scale", "--remove", str(gone), "--yes").returncode == 0
    config = str(cluster.nodes[gone].config_path)
    # run again (as after an interruption), with and without its properties file: nothing to do, exit 0
    left = ", ".join(str(v) for v in sorted(voters(cluster)))
    for again_args in ([], ["--controller-config", config]):
        rerun = tool(cluster, "scale", "--remove", str(gone), *again_args, "--yes")
        assert (rerun.returncode, rerun.stdout) == (0, f"Nothing to do: the voters are already {left}\n")
        assert rerun.stderr == (f"Note: node {gone} is not a voter (the voters are {left}): nothing to "
                                "remove\n")
    twice = tool(cluster, "scale", "--add", entry(cluster, gone), "--controller-config", config, "--yes")
    assert (twice.returncode, twice.stderr) == (1, f"Controller {gone} is given both in --add and by "
                                                   "--controller-config\n")
    again = tool(cluster, "scale", "--controller-config", config, "--yes")
    assert again.returncode == 0, again.stderr
    assert voters(cluster)[gone] == directory
