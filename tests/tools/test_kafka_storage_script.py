"""The installed ``kafka-storage`` console script end to end: directories it formats boot the reference
server, which elects the voters written by the tool."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from console_scripts import console_script

from kafka_admin_kraft import Admin
from kafka_admin_kraft.models import QuorumInfo
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.local import HOST, free_ports, server_command, server_env
from tools.storage_util import CLUSTER_ID, controller_props, meta_properties, read_batches, write_config

SNAPSHOT = Path("__cluster_metadata-0") / "00000000000000000000-0000000000.checkpoint"


def kafka_storage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([console_script("kafka-storage"), *args], capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[[Path], subprocess.Popen[bytes]]]:
    """Start ``python -m kafka_admin_kraft_server --config <file>``; every process is killed at teardown."""
    started: list[subprocess.Popen[bytes]] = []

    def start(config: Path) -> subprocess.Popen[bytes]:
        log = open(config.with_suffix(".log"), "wb")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen(server_command(config), stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                   env=server_env(), cwd=str(tmp_path))
        log.close()
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def wait_for_quorum(address: str, condition: Callable[[QuorumInfo], bool],
                    timeout: float = 30.0) -> QuorumInfo:
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            with Admin(bootstrap_controllers=address, default_api_timeout_ms=3000,
                       request_timeout_ms=2000) as admin:
                quorum = admin.describe_metadata_quorum()
            if condition(quorum):
                return quorum
            last = quorum
        except Exception as exc:  # noqa: BLE001 - the server may still be starting
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting on {address}; last: {last!r}")


def three_configs(root: Path) -> tuple[list[int], list[Path]]:
    ports = free_ports(3)
    servers = ",".join(f"{HOST}:{port}" for port in ports)
    configs = [write_config(root / f"node-{i}.properties", **controller_props(
        root, i, port, controller_quorum_bootstrap_servers=servers)) for i, port in enumerate(ports, 1)]
    return ports, configs


def test_script_random_uuid_version_mapping_and_parse_error() -> None:
    uuid = kafka_storage("random-uuid")
    assert uuid.returncode == 0 and re.fullmatch(r"[A-Za-z0-9_-]{22}\n", uuid.stdout) and uuid.stderr == ""
    mapping = kafka_storage("version-mapping", "--release-version", "3.9")
    assert mapping.returncode == 0 and mapping.stdout.splitlines()[:2] == ["metadata.version=21 (3.9)",
                                                                          "kraft.version=1"]
    error = kafka_storage("format", "--config", "x")
    assert (error.returncode, error.stdout) == (1, "")
    assert error.stderr.splitlines()[-1] == (
        "kafka-storage format: error: argument --cluster-id/-t is required")


def test_standalone_controller_boots_and_leads_with_observers(
        tmp_path: Path, start_server: Callable[[Path], subprocess.Popen[bytes]]) -> None:
    ports, configs = three_configs(tmp_path)
    first = kafka_storage("format", "-c", str(configs[0]), "-t", CLUSTER_ID, "--standalone")
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout.splitlines()[-1] == (
        f"Formatting dynamic metadata voter directory {tmp_path / 'meta-1'} with metadata.version 4.4-IV2.")
    for config, node_id in zip(configs[1:], (2, 3), strict=True):
        result = kafka_storage("format", "-c", str(config), "-t", CLUSTER_ID, "--no-initial-controllers")
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1] == (
            f"Formatting metadata directory {tmp_path / f'meta-{node_id}'} with metadata.version 4.4-IV2.")
        # Kafka 4.4 (KIP-1170): every controller's zero checkpoint holds the bootstrap records; without
        # initial controllers its control batch has kraft.version 1 and no voter set
        control, data, _ = read_batches(tmp_path / f"meta-{node_id}" / SNAPSHOT)
        assert [type(value).__name__ for value in control.values] == ["SnapshotHeaderRecord",
                                                                       "KRaftVersionRecord"]
        assert data.values[0][2].name == "metadata.version" and data.values[0][2].feature_level == 33
    directory_ids = {i: Uuid.from_string(meta_properties(tmp_path / f"meta-{i}")["directory.id"])
                     for i in (1, 2, 3)}

    for config in configs:
        start_server(config)
    address = f"{HOST}:{ports[0]}"
    quorum = wait_for_quorum(address, lambda q: q.leader_id == 1 and len(q.observers) == 2)
    assert [(v.replica_id, v.replica_directory_id) for v in quorum.voters] == [(1, directory_ids[1])]
    assert sorted((o.replica_id, o.replica_directory_id) for o in quorum.observers) == [
        (2, directory_ids[2]), (3, directory_ids[3])]
    info = kafka_storage("info", "-c", str(configs[0]))
    assert info.returncode == 0 and f"directory.id={directory_ids[1]}" in info.stdout


def test_initial_controllers_on_all_three_boot_one_quorum(
        tmp_path: Path, start_server: Callable[[Path], subprocess.Popen[bytes]]) -> None:
    ports, configs = three_configs(tmp_path)
    directory_ids = [kafka_storage("random-uuid").stdout.strip() for _ in range(3)]
    pairs = list(zip(ports, directory_ids, strict=True))
    voters = ",".join(f"{i}@{HOST}:{port}:{d}" for i, (port, d) in enumerate(pairs, 1))
    for node_id, config in enumerate(configs, 1):
        result = kafka_storage("format", "-c", str(config), "-t", CLUSTER_ID, "--initial-controllers", voters)
        assert result.returncode == 0, result.stderr
        assert meta_properties(tmp_path / f"meta-{node_id}")["directory.id"] == directory_ids[node_id - 1]
    snapshots = [read_batches(tmp_path / f"meta-{i}" / SNAPSHOT)[0].values[2] for i in (1, 2, 3)]
    assert snapshots[0] == snapshots[1] == snapshots[2]
    assert [(v.voter_id, str(v.voter_directory_id), v.endpoints[0].port) for v in snapshots[0].voters] == [
        (i, d, port) for i, (d, port) in enumerate(zip(directory_ids, ports, strict=True), 1)]

    for config in configs:
        start_server(config)
    quorum = wait_for_quorum(",".join(f"{HOST}:{port}" for port in ports), lambda q: q.leader_id in (1, 2, 3))
    assert sorted((v.replica_id, v.replica_directory_id) for v in quorum.voters) == [
        (i, Uuid.from_string(d)) for i, d in enumerate(directory_ids, 1)]
    assert quorum.observers == ()
