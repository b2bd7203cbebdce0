"""`kafka-metadata-quorum remove-controller`: the dry run and the refusals in-process, and with
`--unregister` (KIP-1312) against a reference cluster: removed and unregistered once the removal is
committed, and an unregistration refused below metadata.version 4.4-IV2 that leaves the removal done.

The test against the cluster needs the reference server's UnregisterController handler."""
# ruff: noqa: E501

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from integration.harness import Cluster

from tools.cluster_util import PROPERTIES, add_observer_controller, run
from tools.metadata_quorum.quorum_util import DIRECTORY_ID, NOWHERE, PROG, parse_error, quorum_tool, refused
from tools.metadata_quorum.quorum_util import run as run_in_process

AUTO_JOIN_NOTE = ("if controller 2 runs with controller.quorum.auto.join.enable=true (Kafka 4.2+), it adds itself "
                  "back to the voters unless it is stopped first")


def test_remove_controller_dry_run_prints_kafkas_line_and_the_auto_join_note_apart() -> None:
    """Kafka's line alone on stdout; the note that a controller with auto-join comes back (the tool cannot
    read its configuration) on stderr, or as `notes` in the JSON document."""
    result = run_in_process("--bootstrap-controller", NOWHERE, "remove-controller", "-i", "2", "-d",
                            "_KWDkTahTVaiVVVTaugNew", "--dry-run")
    assert result.exit_code == 0
    assert result.stdout == "DRY RUN of removing  KRaft controller 2 with directory id _KWDkTahTVaiVVVTaugNew\n"
    assert result.stderr == f"Note: {AUTO_JOIN_NOTE}\n"
    result = run_in_process("--bootstrap-controller", NOWHERE, "remove-controller", "--controller-id", "2",
                            "--controller-directory-id", "_KWDkTahTVaiVVVTaugNew", "--dry-run", "--output", "json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == {"node_id": 2, "directory_id": "_KWDkTahTVaiVVVTaugNew", "dry_run": True,
                                         "notes": [AUTO_JOIN_NOTE]}


def test_remove_controller_refusals() -> None:
    base = ("--bootstrap-controller", NOWHERE, "remove-controller")
    refused(run_in_process(*base, "-i", "-3", "-d", DIRECTORY_ID), "Invalid negative --controller-id: -3")
    result = run_in_process(*base, "-i", "3", "-d", "not-a-uuid")
    assert result.exit_code == 1
    assert result.stderr.startswith("Failed to parse --controller-directory-id: ")
    command = f"{PROG} remove-controller"
    parse_error(run_in_process(*base, "-i", "x", "-d", DIRECTORY_ID),
                "argument --controller-id/-i: could not convert 'x' to Integer (For input string: \"x\")", command)
    parse_error(run_in_process(*base, "-d", DIRECTORY_ID), "argument --controller-id/-i is required", command)
    parse_error(run_in_process(*base, "-i", "3"), "argument --controller-directory-id/-d is required", command)


def test_remove_controller_dry_run_with_unregister() -> None:
    """Both lines of PR #22191's test, the note apart; as JSON, both steps."""
    base = ("--bootstrap-controller", NOWHERE, "remove-controller", "-i", "2", "-d", "_KWDkTahTVaiVVVTaugNew",
            "--dry-run", "--unregister")
    result = run_in_process(*base)
    assert (result.exit_code, result.stderr) == (0, f"Note: {AUTO_JOIN_NOTE}\n")
    assert result.stdout == ("DRY RUN of removing  KRaft controller 2 with directory id _KWDkTahTVaiVVVTaugNew\n"
                             "DRY RUN of unregistering  KRaft controller 2\n")
    result = run_in_process(*base, "--output", "json")
    assert json.loads(result.stdout) == {
        "node_id": 2, "directory_id": "_KWDkTahTVaiVVVTaugNew", "dry_run": True, "notes": [AUTO_JOIN_NOTE],
        "steps": [{"step": "remove-voter", "status": "dry-run"}, {"step": "unregister-controller", "status": "dry-run"}]}


@pytest.fixture(scope="module")
def at_4_3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three dynamic Kafka 4.4 controllers still at metadata.version 4.3-IV0, with a leader."""
    cluster = Cluster(tmp_path_factory.mktemp("remove-unregister"), 3,
                      properties=dict(PROPERTIES), format_release_version="4.3")
    try:
        cluster.format().start_all()
        leader, _ = cluster.wait_for_leader(60)
        cluster.wait_caught_up(leader, 60)
        yield cluster
    finally:
        cluster.close()


def _stopped_voter(cluster: Cluster, node_id: int) -> str:
    """Add controller ``node_id`` to the voters, stop it, and give its directory id."""
    node = add_observer_controller(cluster, node_id)
    code, _, err = quorum_tool(cluster, "--command-config", str(node.config_path), "add-controller")
    assert code == 0, err
    cluster.kill(node_id)
    return str(node.directory_id)


def _controllers(cluster: Cluster) -> str:
    result = run("kafka-cluster", "list-endpoints", "-C", cluster.bootstrap_servers(), "--output", "json")
    return ",".join(str(n["id"]) for n in json.loads(result.stdout)["nodes"])


def test_remove_and_unregister_a_stopped_controller(at_4_3: Cluster) -> None:
    directory = _stopped_voter(at_4_3, 4)
    # below 4.4-IV2 the removal is done, the unregistration refused: Kafka's error and what to do
    code, out, err = quorum_tool(at_4_3, "remove-controller", "-i", "4", "-d", directory, "--unregister",
                                 "--output", "json")
    assert code == 1
    error = "org.apache.kafka.common.errors.UnsupportedVersionException: The current MetadataVersion is too old to support controller unregistration."
    assert json.loads(out)["steps"] == [{"step": "remove-voter", "status": "done"},
                                        {"step": "unregister-controller", "status": "failed", "error": error}]
    lines = err.splitlines()
    assert lines[0] == error and lines[1].startswith("Note: unregistering a controller needs metadata.version 4.4-IV2")
    assert _controllers(at_4_3) == "1,2,3,4"
    with at_4_3.admin() as admin:
        admin.update_features({"metadata.version": 33})
    assert run("kafka-cluster", "unregister-controller", "-C", at_4_3.bootstrap_servers(), "--id", "4").stdout == (
        "Controller 4 is no longer registered.\n")

    directory = _stopped_voter(at_4_3, 5)
    code, out, err = quorum_tool(at_4_3, "remove-controller", "-i", "5", "-d", directory, "--unregister")
    assert (code, err) == (0, f"Note: {AUTO_JOIN_NOTE.replace('controller 2', 'controller 5')}\n"), err
    assert out == (f"Removed  KRaft controller 5 with directory id {directory}\n"
                   "Unregistered  KRaft controller 5\n")
    assert _controllers(at_4_3) == "1,2,3"
    code, out, err = quorum_tool(at_4_3, "remove-controller", "-i", "5", "-d", directory, "--unregister")
    assert (code, out) == (1, "") and err.startswith("org.apache.kafka.common.errors.VoterNotFoundException: ")
