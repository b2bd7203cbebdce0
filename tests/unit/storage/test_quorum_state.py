"""quorum-state, byte for byte: Kafka's data versions 0 and 1, its JSON and its refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft.protocol.exceptions import EncodeError
from kafka_admin_kraft.storage import QuorumState, StorageFormatError, read_quorum_state, write_quorum_state
from unit.storage.storage_testlib import DIR_ID

V0_LINE = ('{"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,'
           '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')
V1_LINE = ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA",'
           '"data_version":1}')


def test_quorum_state_v0_and_v1_lines(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    v0 = QuorumState(data_version=0, leader_id=1, leader_epoch=5, current_voters=(1, 2, 3))
    write_quorum_state(path, v0)
    assert path.read_bytes() == V0_LINE.encode()
    assert read_quorum_state(path) == v0
    v1 = QuorumState(leader_id=1, leader_epoch=5)
    write_quorum_state(path, v1)
    assert path.read_bytes() == V1_LINE.encode()
    assert read_quorum_state(path) == v1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quorum-state"]


def test_quorum_state_details(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    voted = QuorumState(leader_id=-1, leader_epoch=6, voted_id=2, voted_directory_id=DIR_ID)
    write_quorum_state(path, voted)
    assert path.read_text() == ('{"leaderId":-1,"leaderEpoch":6,"votedId":2,'
                                '"votedDirectoryId":"3Db5QLSqSZieL3rJBUUegA","data_version":1}')
    odd = QuorumState(data_version=0, cluster_id='q"\\\u00e9\n\x01', current_voters=None)
    write_quorum_state(path, odd)
    expected_start = '{"clusterId":"q\\"\\\\\u00e9\\n\\u0001","leaderId":-1'
    assert path.read_text(encoding="utf-8").startswith(expected_start)
    assert '"currentVoters":null' in path.read_text()
    assert read_quorum_state(path) == odd
    path.write_text(V1_LINE + "\nignored second line")
    assert read_quorum_state(path).leader_epoch == 5
    path.write_text('{"data_version":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","votedId":"3",'
                    '"leaderEpoch":5,"leaderId":1,"unknown":true}')
    assert read_quorum_state(path) == QuorumState(leader_id=1, leader_epoch=5, voted_id=3)


@pytest.mark.parametrize(("content", "text"), [
    ("", "File ended prematurely."),
    ("[1]", "is not an object node"),
    ("{not json", "not JSON"),
    ('{"leaderId":1}', "does not have data_version field"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":2}', "data_version (2) is not within"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":-1}', "data_version (-1) is not within"),
    ('{"leaderId":1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}',
     "unable to locate field 'leaderEpoch'"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":1}',
     "unable to locate field 'votedDirectoryId'"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"x","data_version":1}', "uuid"),
    ('{"leaderId":true,"leaderEpoch":5,"votedId":-1,"votedDirectoryId":"x","data_version":1}', "int32"),
    ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":0}', "unable to locate field 'clusterId'"),
    ('{"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":[1],'
     '"data_version":0}', "expected an object"),
    ("[" * 100000, "not JSON"),
])
def test_bad_quorum_state(tmp_path: Path, content: str, text: str) -> None:
    path = tmp_path / "quorum-state"
    path.write_text(content)
    with pytest.raises(StorageFormatError, match=None) as info:
        read_quorum_state(path)
    assert text in str(info.value)
    assert info.value.what == str(path)


@pytest.mark.parametrize("state", [
    QuorumState(data_version=1, cluster_id="c"),
    QuorumState(data_version=1, applied_offset=5),
    QuorumState(data_version=1, current_voters=(1,)),
    QuorumState(data_version=0, voted_directory_id=DIR_ID),
    QuorumState(data_version=2),
])
def test_quorum_state_fields_must_fit_the_version(tmp_path: Path, state: QuorumState) -> None:
    with pytest.raises(EncodeError):
        write_quorum_state(tmp_path / "quorum-state", state)
    assert list(tmp_path.iterdir()) == []
