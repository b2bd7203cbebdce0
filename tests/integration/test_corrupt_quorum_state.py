"""kraft-server on a directory whose quorum-state is corrupt refuses to start in one line naming the
file and what is wrong, with exit status 1, as for the other corrupt files."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from integration.harness import Cluster, server_command, server_env

CORRUPT = {
    "binary garbage": (bytes(range(0x80, 0x100)), " at byte 0: not UTF-8: invalid start byte"),
    "empty": (b"", ": File ended prematurely."),
    "JSON of the wrong shape": (b'{"leaderId": 1, "data_version": 7}\n',
                                ": field data_version: data_version (7) is not within the min (0) and "
                                "max (1) supported version"),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_a_corrupt_quorum_state_is_a_one_line_refusal(make_cluster: Callable[..., Cluster],
                                                      case: str) -> None:
    data, reason = CORRUPT[case]
    cluster = make_cluster(1).format()
    node = cluster.nodes[1]
    node.partition_dir.mkdir(parents=True, exist_ok=True)
    path = node.partition_dir / "quorum-state"
    path.write_bytes(data)
    result = subprocess.run(server_command(node.config_path), capture_output=True, text=True, timeout=30,
                            env=server_env(), stdin=subprocess.DEVNULL)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    refusal = [line for line in result.stderr.splitlines() if " ERROR " in line]
    assert len(refusal) == 1
    assert (f"ERROR Exiting Kafka due to fatal exception during startup: Error while reading the Quorum "
            f"status from the file {path}{reason} (kafka.Kafka$)") in refusal[0]
