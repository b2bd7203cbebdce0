"""`kafka-metadata-quorum remove-controller` without a server: the dry run and the refusals, in-process."""
# ruff: noqa: E501

from __future__ import annotations

import json

from tools.metadata_quorum.quorum_util import DIRECTORY_ID, NOWHERE, PROG, parse_error, refused, run

AUTO_JOIN_NOTE = ("if controller 2 runs with controller.quorum.auto.join.enable=true (Kafka 4.2+), it adds itself "
                  "back to the voters unless it is stopped first")


def test_remove_controller_dry_run_prints_kafkas_line_and_the_auto_join_note_apart() -> None:
    """Kafka's line alone on stdout; the note that a controller with auto-join comes back (the tool cannot
    read its configuration) on stderr, or as `notes` in the JSON document."""
    result = run("--bootstrap-controller", NOWHERE, "remove-controller", "-i", "2", "-d", "_KWDkTahTVaiVVVTaugNew",
                 "--dry-run")
    assert result.exit_code == 0
    assert result.stdout == "DRY RUN of removing  KRaft controller 2 with directory id _KWDkTahTVaiVVVTaugNew\n"
    assert result.stderr == f"Note: {AUTO_JOIN_NOTE}\n"
    result = run("--bootstrap-controller", NOWHERE, "remove-controller", "--controller-id", "2",
                 "--controller-directory-id", "_KWDkTahTVaiVVVTaugNew", "--dry-run", "--output", "json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == {"node_id": 2, "directory_id": "_KWDkTahTVaiVVVTaugNew", "dry_run": True,
                                         "notes": [AUTO_JOIN_NOTE]}


def test_remove_controller_refusals() -> None:
    base = ("--bootstrap-controller", NOWHERE, "remove-controller")
    refused(run(*base, "-i", "-3", "-d", DIRECTORY_ID), "Invalid negative --controller-id: -3")
    result = run(*base, "-i", "3", "-d", "not-a-uuid")
    assert result.exit_code == 1
    assert result.stderr.startswith("Failed to parse --controller-directory-id: ")
    command = f"{PROG} remove-controller"
    parse_error(run(*base, "-i", "x", "-d", DIRECTORY_ID),
                "argument --controller-id/-i: could not convert 'x' to Integer (For input string: \"x\")", command)
    parse_error(run(*base, "-d", DIRECTORY_ID), "argument --controller-id/-i is required", command)
    parse_error(run(*base, "-i", "3"), "argument --controller-directory-id/-d is required", command)
