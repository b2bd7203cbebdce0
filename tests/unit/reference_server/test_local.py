"""The configuration files a local reference quorum writes: plain ``key=value`` lines that the server's
reader (and Kafka's) loads back exactly; the Kafka line each node runs as."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft.config.properties import read_properties
from kafka_admin_kraft.config.server import load_config
from kafka_admin_kraft_server.local import LocalQuorum


def test_a_node_file_is_plain_lines_read_back_exactly(tmp_path: Path) -> None:
    quorum = LocalQuorum(tmp_path, 2, properties={"controller.quorum.election.timeout.ms": "500"})
    node = quorum.nodes[2]
    jaas = {"sasl.jaas.config": 'Module required username="a" password="x=y";'}
    path = quorum.write_config(node, jaas)
    expected = {**quorum.node_properties(node), **jaas}
    assert path.read_bytes() == "".join(f"{key}={value}\n" for key, value in expected.items()).encode()
    assert read_properties(path) == expected
    config = load_config(path)
    assert (config.node_id, config.election_timeout_ms) == (2, 500)
    assert [str(listener) for listener in config.listeners] == [f"CONTROLLER://127.0.0.1:{node.port}"]


def test_values_that_need_escapes_survive(tmp_path: Path) -> None:
    quorum = LocalQuorum(tmp_path / "caf\u00e9 dir", 1)
    path = quorum.write_config(quorum.nodes[1], {"note": " padded\\ and\nsplit"})
    assert path.read_bytes().isascii()
    props = read_properties(path)
    assert props["note"] == " padded\\ and\nsplit"
    assert props["log.dirs"] == str(tmp_path / "caf\u00e9 dir" / "node-1" / "metadata")


def test_each_node_runs_as_its_line_and_an_unknown_line_is_refused_unstarted(tmp_path: Path) -> None:
    quorum = LocalQuorum(tmp_path, 3, lines={1: "3.9"}, release_version="4.2")
    assert [node.line for node in quorum.nodes.values()] == ["3.9", "4.2", "4.2"]
    with pytest.raises(ValueError) as refused:
        quorum.start(1, line="3.8")
    assert str(refused.value) == "unknown Kafka line '3.8': the lines are 3.9, 4.0, 4.1, 4.2, 4.3, 4.4"
    assert (quorum.nodes[1].line, quorum.nodes[1].process, quorum.nodes[1].starts) == ("3.9", None, 0)
    with pytest.raises(ValueError, match="unknown Kafka line '5.0'"):
        LocalQuorum(tmp_path, 1, lines={1: "5.0"})
