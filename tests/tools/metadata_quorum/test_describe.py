"""`kafka-metadata-quorum describe`: its flag checks in-process, then the installed tool against a
reference cluster (three dynamic controllers and a broker, real processes), through the controllers
and through the broker."""
# ruff: noqa: E501

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from integration.harness import Cluster

from tools.cluster_util import BROKER_ID, module_quorum, run
from tools.metadata_quorum.quorum_util import NOWHERE, PROG, quorum_tool, refused
from tools.metadata_quorum.quorum_util import run as run_in_process


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ((), "One of --status or --replication must be specified with describe sub-command"),
        (("--status", "--replication"),
         "Only one of --status or --replication should be specified with describe sub-command"),
        (("--status", "--human-readable"), "The option --human-readable is only supported along with --replication"),
        # Unambiguous prefixes are accepted, as argparse4j does.
        (("--stat", "--rep"), "Only one of --status or --replication should be specified with describe sub-command"),
    ],
)
def test_describe_flag_checks(flags: tuple[str, ...], message: str) -> None:
    refused(run_in_process("--bootstrap-c", NOWHERE, "describe", *flags), message)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from module_quorum(tmp_path_factory, "quorum")


def test_describe_status(cluster: Cluster) -> None:
    code, out, err = quorum_tool(cluster, "describe", "--status")
    assert (code, err) == (0, "")
    labels = ["ClusterId:", "LeaderId:", "LeaderEpoch:", "HighWatermark:", "MaxFollowerLag:", "MaxFollowerLagTimeMs:",
              "CurrentVoters:", "CommittedVoters:", "CurrentObservers:"]
    lines = out.splitlines()
    assert [line[:24].rstrip() for line in lines] == labels
    assert all(len(line[:24]) == 24 and line[24] != " " for line in lines)
    values = {line[:24].rstrip(): line[24:] for line in lines}
    assert values["ClusterId:"] == cluster.cluster_id
    assert re.fullmatch(r"-?\d+", values["HighWatermark:"])
    assert int(values["LeaderId:"]) in (1, 2, 3)
    expected_voters = ", ".join(
        f'{{"id": {n.node_id}, "directoryId": "{n.directory_id}", "endpoints": ["CONTROLLER://127.0.0.1:{n.port}"]}}'
        for n in sorted(cluster.controllers(), key=lambda n: n.node_id) if n.node_id != BROKER_ID)
    assert values["CurrentVoters:"] == f"[{expected_voters}]"
    assert values["CommittedVoters:"] == f"[{expected_voters}]"
    broker = cluster.nodes[BROKER_ID]
    assert f'{{"id": {BROKER_ID}, "directoryId": "{broker.directory_id}"}}' in values["CurrentObservers:"]


def test_describe_replication(cluster: Cluster) -> None:
    code, out, err = quorum_tool(cluster, "describe", "--replication")
    assert (code, err) == (0, "")
    lines = out.split("\n")
    assert lines[-1] == ""
    rows = lines[:-1]
    assert re.fullmatch(r"NodeId\s+DirectoryId\s+LogEndOffset\s+Lag\s+LastFetchTimestamp\s+LastCaughtUpTimestamp"
                        r"\s+Status\s+", rows[0])
    assert all(row.endswith("\t") for row in rows)
    assert re.fullmatch(r"\d+\s+\S+\s+\d+\s+\d+\s+-?\d+\s+-?\d+\s+Leader\s*", rows[1])
    statuses = [row.split("\t")[6].strip() for row in rows[1:]]
    assert statuses[:3] == ["Leader", "Follower", "Follower"]
    assert "Observer" in statuses[3:]
    assert len({len(cell) for cell in (row.split("\t")[1] for row in rows)}) == 1

    code, out, _ = quorum_tool(cluster, "describe", "--re", "--hu")  # prefixes, as argparse4j allows
    assert code == 0
    leader_cells = out.splitlines()[1].split("\t")
    assert "ms ago" in leader_cells[4] and "ms ago" in leader_cells[5]


def test_describe_through_the_broker(cluster: Cluster) -> None:
    broker = cluster.nodes[BROKER_ID]
    result = run(PROG, "--bootstrap-server", broker.address, "describe", "--status")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines()[0] == f"ClusterId:              {cluster.cluster_id}"
    assert f'"id": {BROKER_ID}' in result.stdout.splitlines()[-1]
    result = run(PROG, "--bootstrap-server", broker.address, "describe", "--replication", "--output", "json")
    assert result.returncode == 0
    assert BROKER_ID in [row["node_id"] for row in json.loads(result.stdout)["replicas"]]


def test_describe_status_json(cluster: Cluster) -> None:
    code, out, _ = quorum_tool(cluster, "describe", "--status", "--output", "json")
    assert code == 0
    document = json.loads(out)
    assert document["cluster_id"] == cluster.cluster_id
    assert sorted(v["id"] for v in document["current_voters"]) == [1, 2, 3]
    assert document["committed_voters"] is not None
