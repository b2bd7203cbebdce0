"""The server refuses to start where Kafka would, with Kafka's message and a non-zero exit."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

from integration.harness import Cluster, server_command, server_env
from kafka_admin_kraft.storage import MetaProperties, write_meta_properties


def run_server(cluster: Cluster, node_id: int) -> subprocess.CompletedProcess[str]:
    node = cluster.nodes[node_id]
    return subprocess.run(server_command(node.config_path), capture_output=True, text=True, timeout=30,
                          env=server_env(), stdin=subprocess.DEVNULL)


def test_unformatted_directory(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1)
    cluster.write_config(cluster.nodes[1])
    cluster.nodes[1].metadata_dir.mkdir(parents=True)
    result = run_server(cluster, 1)
    assert result.returncode == 1
    assert "No readable meta.properties files found." in result.stderr
    assert "ERROR Exiting Kafka due to fatal exception during startup" in result.stderr


def test_node_id_mismatch(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1).format()
    node = cluster.nodes[1]
    write_meta_properties(node.metadata_dir, MetaProperties(1, cluster.cluster_id, 7, node.directory_id))
    result = run_server(cluster, 1)
    assert result.returncode == 1
    assert "Stored node id 7 doesn't match previous node id 1" in result.stderr


def test_cluster_id_mismatch_between_directories(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1).format()
    node = cluster.nodes[1]
    other = node.metadata_dir.parent / "data"
    other.mkdir()
    write_meta_properties(other, MetaProperties(1, "AAAAAAAAAAAAAAAAAAAAAQ-other", 1, None))
    cluster.write_config(node, {"log.dirs": f"{node.metadata_dir},{other}"})
    result = run_server(cluster, 1)
    assert result.returncode == 1
    assert "Invalid cluster.id in: " in result.stderr and "Expected " in result.stderr


def test_a_second_process_on_the_same_directory(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1).format().start_all()
    cluster.wait_ready(1)
    result = run_server(cluster, 1)
    assert result.returncode == 1
    assert "Failed to acquire lock on file .lock" in result.stderr
    cluster.assert_running()
