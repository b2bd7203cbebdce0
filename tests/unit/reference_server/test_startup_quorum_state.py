"""A quorum-state file that cannot be read refuses the start with one message naming the file and
what is wrong, and releases the directory lock."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_admin_kraft.config.server import ServerConfig, parse_config
from kafka_admin_kraft_server.startup import DirectoryLock, StartupError, start_storage
from unit.reference_server.server_testlib import DIR_IDS, format_directory

PARTITION = "__cluster_metadata-0"
CORRUPT = {
    "binary garbage": (bytes([0xFF, 0xFE, 0x00, 0x80]) * 8,
                       "quorum-state at byte 0: not UTF-8: invalid start byte"),
    "empty": (b"", "quorum-state: File ended prematurely."),
    "not JSON": (b"leaderId=1\n", "quorum-state: not JSON: Expecting value: line 1 column 1 (char 0)"),
    "JSON array": (b"[1, 2]\n", "quorum-state: Deserialized node [1, 2] is not an object node"),
    "no data_version": (b'{"leaderId": 1}\n', "does not have data_version field"),
    "wrong field type": (b'{"leaderId": "one", "leaderEpoch": 1, "votedId": -1, "votedDirectoryId": '
                         b'"AAAAAAAAAAAAAAAAAAAAAA", "data_version": 1}\n',
                         "quorum-state: field leaderId: expected an int32, got 'one'"),
}


@pytest.fixture(autouse=True)
def _fast_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def config(directory: Path) -> ServerConfig:
    return parse_config({"process.roles": "controller", "node.id": "1",
                         "listeners": "CONTROLLER://127.0.0.1:9093",
                         "controller.listener.names": "CONTROLLER",
                         "controller.quorum.voters": "1@127.0.0.1:9093", "log.dirs": str(directory)})


@pytest.mark.parametrize("case", list(CORRUPT))
def test_a_corrupt_quorum_state_is_a_startup_refusal(tmp_path: Path, case: str) -> None:
    data, reason = CORRUPT[case]
    format_directory(tmp_path, node_id=1, directory_id=DIR_IDS[0])
    (tmp_path / PARTITION).mkdir()
    path = tmp_path / PARTITION / "quorum-state"
    path.write_bytes(data)
    with pytest.raises(StartupError) as caught:
        start_storage(config(tmp_path))
    message = str(caught.value)
    assert message.startswith(f"Error while reading the Quorum status from the file {path}")
    assert reason in message and "\n" not in message
    DirectoryLock(tmp_path).release()  # the lock was released: it can be taken again


def test_a_quorum_state_that_is_a_directory_is_a_startup_refusal(tmp_path: Path) -> None:
    format_directory(tmp_path, node_id=1, directory_id=DIR_IDS[0])
    (tmp_path / PARTITION / "quorum-state").mkdir(parents=True)
    expected = "Error while reading the Quorum status from the file .*quorum-state: Is a directory"
    with pytest.raises(StartupError, match=expected):
        start_storage(config(tmp_path))
