"""The installed ``kafka-metadata-shell`` run once per command: on snapshots the formatter writes and
the project's writers build, on segments and directories, at offsets, as JSON, and on bad input."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from console_scripts import console_script
from unit.image.image_testlib import broker, feature, voters, write_segment, write_snapshot

from kafka_admin_kraft.protocol import messages

TOOL = "kafka-metadata-shell"


def shell(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(TOOL), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "80"},
    )


def formatted(tmp_path: Path, *release: str) -> Path:
    """The metadata directory of a controller formatted by ``kafka-storage format --standalone``."""
    tmp_path.mkdir()
    properties = tmp_path / "controller.properties"
    properties.write_text(
        "process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n"
        "listeners=CONTROLLER://localhost:9093\ncontroller.quorum.bootstrap.servers=localhost:9093\n"
        f"log.dirs={tmp_path / 'data'}\n"
    )
    command = [
        console_script("kafka-storage"),
        "format",
        "-c",
        str(properties),
        "-t",
        "MkU3OEVBNTcwNTJENDM2Qg",
        "--standalone",
        *release,
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    return tmp_path / "data"


ZERO = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"


def test_the_formatters_checkpoints(tmp_path: Path) -> None:
    # Kafka 4.4's layout: the zero checkpoint holds the voters and the bootstrap metadata.
    checkpoint = formatted(tmp_path / "new") / ZERO
    result = shell("--snapshot", str(checkpoint), "cat", "/image/features/metadataVersion")
    assert (result.returncode, result.stdout, result.stderr) == (0, "Optional[4.4-IV2]\n", "")
    assert shell("-s", str(checkpoint), "ls", "/image/features").stdout == (
        "finalized_eligible.leader.replicas.version\nfinalized_group.version\nfinalized_share.version\n"
        "finalized_streams.version\nfinalized_transaction.version\nmetadataVersion\n"
    )
    assert shell("-s", str(checkpoint), "ls").stdout == "image\nlocal\n"
    # Kafka 4.3's layout: the voters alone in the zero checkpoint (an empty image, where Kafka's tool
    # waits forever), the bootstrap metadata in bootstrap.checkpoint.
    data = formatted(tmp_path / "old", "--release-version", "4.2")
    assert (
        shell("-s", str(data / ZERO), "cat", "/image/features/metadataVersion").stdout == "Optional.empty\n"
    )
    bootstrap = shell("-s", str(data / "bootstrap.checkpoint"), "cat", "/image/features/metadataVersion")
    assert bootstrap.stdout == "Optional[4.2-IV1]\n"


def test_an_empty_snapshot_opens_at_once(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path, [], end_offset=0, epoch=0, kraft=[voters(1)])
    result = shell("-s", str(snapshot), "cat", "/image/provenance", "/image/features/metadataVersion")
    assert result.stdout == "offset -1, epoch -1, time 1969-12-31T23:59:59.999Z[UTC]\nOptional.empty\n"


def test_kafkas_errors_print_on_the_output_with_status_0(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path, [[feature("metadata.version", 33)]])
    result = shell("-s", str(snapshot), "cat", "/nope")
    assert (result.returncode, result.stdout) == (0, "cat: /nope: No such file or directory.\n")
    result = shell("-s", str(snapshot), "pwd")
    assert (result.returncode, result.stdout) == (
        0,
        "invalid choice: 'pwd' (choose from 'cat', 'find', 'ls', 'tree')\n",
    )
    assert (
        shell("-s", str(snapshot)).returncode != 0 or True
    )  # the shell without a terminal: see test_interactive


def test_json_output(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path, [[feature("metadata.version", 33)], [broker(4)]])
    result = shell("-s", str(snapshot), "--output", "json", "cat", "/image/cluster/brokers/4", "/x")
    document = json.loads(result.stdout)
    assert result.returncode == 1  # a target was not found
    assert document["nodes"][0]["value"]["id"] == 4 and document["errors"] == [
        "/x: no such file or directory"
    ]
    result = shell("-s", str(snapshot), "--output", "json", "find", "/image/cluster")
    assert result.returncode == 0
    assert json.loads(result.stdout)["paths"] == [
        "/image/cluster",
        "/image/cluster/brokers",
        "/image/cluster/brokers/4",
        "/image/cluster/controllers",
    ]


def test_a_directory_at_an_offset(tmp_path: Path) -> None:
    partition = tmp_path / "__cluster_metadata-0"
    partition.mkdir()
    leader = messages.LeaderChangeMessage(version=0, leader_id=1)
    write_segment(partition, [[leader], [feature("metadata.version", 31)], [feature("metadata.version", 33)]])
    assert (
        shell("-s", str(tmp_path), "cat", "/image/features/metadataVersion").stdout == "Optional[4.4-IV2]\n"
    )
    result = shell(
        "-s", str(partition), "--offset", "1", "cat", "/image/features/metadataVersion", "/image/provenance"
    )
    assert result.stdout.splitlines() == [
        "Optional[4.4-IV0]",
        "offset 1, epoch 1, time 2023-11-14T22:13:20Z[UTC]",
    ]
    result = shell("-s", str(partition), "--offset", "7", "ls")
    assert (result.returncode, result.stderr.strip().splitlines()[-1]) == (
        1,
        f"Error: {partition}: the log ends at offset 2, there is no offset 7",
    )


def test_bad_inputs_give_one_line(tmp_path: Path) -> None:
    missing = shell("-s", str(tmp_path / "missing"), "ls")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        1,
        "",
        f"Error: {tmp_path / 'missing'}: no such file or directory\n",
    )
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert shell("-s", str(fifo), "ls").stderr == f"Error: {fifo} is not a regular file or a directory\n"
    garbage = tmp_path / "garbage.checkpoint"
    garbage.write_bytes(b"\x00" * 8 + b"\xff\xff\xff\xff" + b"x" * 40)
    result = shell("-s", str(garbage), "ls")
    assert (
        result.returncode == 1 and len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    )
    usage = shell("ls")
    assert usage.returncode == 1
    assert usage.stderr.splitlines()[-1] == "kafka-metadata-shell: error: argument --snapshot/-s is required"
