"""leader-epoch-checkpoint, byte for byte, and its refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft.storage import (
    EpochEntry,
    StorageFormatError,
    read_leader_epoch_checkpoint,
    write_leader_epoch_checkpoint,
)


def test_leader_epoch_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "leader-epoch-checkpoint"
    write_leader_epoch_checkpoint(path, [EpochEntry(0, 0), EpochEntry(5, 120)])
    assert path.read_bytes() == b"0\n2\n0 0\n5 120\n"
    assert read_leader_epoch_checkpoint(path) == [(0, 0), (5, 120)]
    write_leader_epoch_checkpoint(path, [])
    assert path.read_bytes() == b"0\n0\n"
    assert read_leader_epoch_checkpoint(path) == []
    path.write_bytes(b"")
    assert read_leader_epoch_checkpoint(path) == []


@pytest.mark.parametrize(("content", "text"), [
    (b"1\n0\n", "Unrecognised version: 1"),
    (b"0\n2\n0 0\n", "Expected 2 entries in checkpoint file, but found only 1"),
    (b"0\n1\n0 0\n1 5\n", "Expected 1 entries"),
    (b"0\n1\n0,0\n", "Malformed line"),
    (b"0\n1\n0 x\n", "Malformed line"),
    (b"zero\n", "Malformed line"),
])
def test_bad_leader_epoch_checkpoint(tmp_path: Path, content: bytes, text: str) -> None:
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_bytes(content)
    with pytest.raises(StorageFormatError) as info:
        read_leader_epoch_checkpoint(path)
    assert text in info.value.reason
