"""What the tool tests share: running the installed console scripts, and reference clusters to run them
against (three dynamic controllers, optionally a broker and a controller formatted as an observer)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from console_scripts import console_script
from integration.harness import FAST_ELECTIONS, UNSTABLE_API_VERSIONS, Cluster, wait_until

from kafka_admin_kraft_server.local import LocalNode, free_ports

PROPERTIES = {**FAST_ELECTIONS, "controller.quorum.request.timeout.ms": "2000", **UNSTABLE_API_VERSIONS}
"""With DescribeQuorum v3, whose CommittedVoters the tools print and wait on."""


def run(tool: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run an installed tool; stdout and stderr are captured as text (not a terminal)."""
    return subprocess.run(
        [console_script(tool), *args], capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def start_quorum(root: Path, *, broker_id: int | None = None) -> Cluster:
    """Three dynamic controllers (and a broker) started and with a leader that has a high watermark."""
    cluster = Cluster(root, 3, properties=dict(PROPERTIES))
    try:
        cluster.format()
        if broker_id is not None:
            cluster.add_broker(broker_id)
        cluster.start_all()
        leader, _ = cluster.wait_for_leader(60)
        cluster.wait_caught_up(leader, 60)
        if broker_id is not None:
            cluster.wait_ready(broker_id, 60)

            def broker_observed() -> bool:
                data = cluster.quorum_from(leader)
                return data is not None and any(o.replica_id == broker_id for o in data.observers)

            wait_until(broker_observed, 60, "the broker to fetch as an observer")
    except BaseException:  # a quorum that did not come up is stopped, not left running
        cluster.close()
        raise
    return cluster


BROKER_ID = 100
"""The broker of ``module_quorum``."""


def module_quorum(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Cluster]:
    """A module fixture's body: three controllers and broker ``BROKER_ID``, stopped after the module."""
    cluster = start_quorum(tmp_path_factory.mktemp(name), broker_id=BROKER_ID)
    try:
        yield cluster
    finally:
        cluster.close()


def run_against(cluster: Cluster, tool: str, *args: str) -> tuple[int, str, str]:
    """``tool --bootstrap-controller <the cluster's controllers> args``: exit code, stdout, stderr."""
    result = run(tool, "--bootstrap-controller", cluster.bootstrap_servers(), *args)
    return result.returncode, result.stdout, result.stderr


def add_observer_controller(cluster: Cluster, node_id: int) -> LocalNode:
    """A controller formatted like ``kafka-storage format --no-initial-controllers`` and started: it
    fetches from the leader as an observer until someone adds it to the voters."""
    node = cluster.new_node(node_id, free_ports(1)[0])
    cluster.nodes[node_id] = node
    cluster.write_config(node)
    dynamic, cluster.dynamic = cluster.dynamic, False
    try:
        cluster.format_node(node)
    finally:
        cluster.dynamic = dynamic
    cluster.start(node_id)
    return node
