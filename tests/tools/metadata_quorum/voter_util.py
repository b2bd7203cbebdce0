"""What the tests of the voter commands (reconcile, scale, replace-controller) share: directory ids and
a plan to render, the tool in-process against an address nothing listens on, and the installed tool
against a reference quorum."""

from __future__ import annotations

import json
import subprocess
from typing import Literal

from click.testing import CliRunner, Result
from console_scripts import console_script
from integration.harness import Cluster

from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.voters import VoterPlan, VoterStep
from kafka_admin_kraft_cli.metadata_quorum import main
from tools.metadata_quorum.quorum_util import NOWHERE, PROG

D1, D2, D3, D4 = (Uuid.random() for _ in range(4))


def step(action: Literal["add", "remove"], node_id: int, directory: Uuid, after: set[tuple[int, Uuid]],
         tolerance: int) -> VoterStep:
    return VoterStep(action, node_id, directory, frozenset(after), tolerance,
                     f"because; {len(after)} voters afterwards, fault tolerance {tolerance}")


GROW = VoterPlan(
    current=frozenset({(1, D1)}),
    desired=frozenset({(1, D1), (2, D2), (3, D3)}),
    steps=(step("add", 2, D2, {(1, D1), (2, D2)}, 0), step("add", 3, D3, {(1, D1), (2, D2), (3, D3)}, 1)),
    fault_tolerance=0,
)


def quorum(*args: str) -> Result:
    return CliRunner().invoke(main, ["--bootstrap-controller", NOWHERE, *args], prog_name=PROG)


def tool(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    command = [console_script(PROG), "--bootstrap-controller", cluster.bootstrap_servers(), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)


def voters(cluster: Cluster) -> dict[int, str]:
    """Node id -> directory id of the committed voters, as `describe --status --output json` shows them."""
    result = tool(cluster, "describe", "--status", "--output", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["committed_voters"] == document["current_voters"]
    return {v["id"]: v["directory_id"] for v in document["current_voters"]}


def entry(cluster: Cluster, node_id: int) -> str:
    node = cluster.nodes[node_id]
    return f"{node_id}@127.0.0.1:{node.port}:{node.directory_id}"


def follower(cluster: Cluster) -> int:
    leader, _ = cluster.wait_for_leader(30)
    return next(i for i in (3, 2, 1) if i != leader)
