"""The installed ``kafka-metadata-diff``: the changes of two snapshots, two directories or two offsets
of one log, as text and JSON, with ``diff``'s exit status."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from console_scripts import console_script
from unit.image.image_testlib import controller, feature, voters, write_segment, write_snapshot

from kafka_admin_kraft.protocol import messages

KRAFT = messages.KRaftVersionRecord(version=0, k_raft_version=1)


def diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script("kafka-metadata-diff"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_two_snapshots(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write_snapshot(
        tmp_path / "a", [[feature("metadata.version", 30)], [controller(1)]], kraft=[KRAFT, voters(1)]
    )
    b = write_snapshot(
        tmp_path / "b",
        [[feature("metadata.version", 33)], [controller(1), controller(2)]],
        kraft=[KRAFT, voters(1, 2)],
    )
    result = diff(str(a), str(b))
    assert result.returncode == 1 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"--- {a} (offset ") and lines[1].startswith(f"+++ {b} (offset ")
    assert lines[2:] == [
        "",
        "features:",
        "  ~ /image/features/metadataVersion",
        "      old: Optional[4.3-IV0]",
        "      new: Optional[4.4-IV2]",
        "",
        "voters and registrations:",
        "  + /image/cluster/controllers/2: ControllerRegistration(id=2, "
        "incarnationId=MJkaH0j0RwuC3W2GHQHtWA, zkMigrationReady=false, listeners=[Endpoint("
        "listenerName='CONTROLLER', securityProtocol=PLAINTEXT, host='localhost', port=9093)], "
        "supportedFeatures={kraft.version: 0-1})",
        "  + /kraft/voters/2: Voter(id=2, directoryId=AAAAAAAAAAAAAAAAAAAAZg, "
        "endpoints=[CONTROLLER://localhost:9094], kraftVersion=0-1)",
        "",
        "3 changes",
    ]
    same = diff(str(a), str(a))
    assert (same.returncode, same.stdout) == (0, "")


def test_two_offsets_of_one_log_as_json(tmp_path: Path) -> None:
    leader = messages.LeaderChangeMessage(version=0, leader_id=1)
    write_segment(tmp_path, [[leader], [feature("metadata.version", 30)], [feature("group.version", 1)]])
    result = diff(str(tmp_path), str(tmp_path), "--offset-a", "1", "--output", "json")
    document = json.loads(result.stdout)
    assert result.returncode == 1
    assert document["a"]["provenance"]["offset"] == 1 and document["b"]["provenance"]["offset"] == 2
    assert document["areas"] == [
        {
            "area": "features",
            "title": "features",
            "changes": [
                {"path": "/image/features/finalized_group.version", "change": "added", "old": None, "new": 1}
            ],
        }
    ]


def test_unreadable_input_exits_2_with_one_line(tmp_path: Path) -> None:
    result = diff(str(tmp_path / "missing"), str(tmp_path))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"Error: {tmp_path / 'missing'}: no such file or directory\n"
