"""Golden tests: `kafka-metadata-quorum describe` text, byte for byte, from hand-built QuorumInfo models
(Kafka 4.1+ node format, 24-character labels, a TAB after every replication cell).

Expected texts are written out literally, whatever their length."""
# ruff: noqa: E501

from __future__ import annotations

import pytest

from kafka_admin_kraft.models import Endpoint, Node, QuorumInfo, ReplicaState
from kafka_admin_kraft_cli.metadata_quorum import describe_text

D1, D2, D3, D4 = "ILZ5MPTeRWakmJu99uBJCA", "3Db5QLSqSZieL3rJBUUegA", "wZoXPqWoSu6F6c8MkmdyAg", "_KWDkTahTVaiVVVTaugNew"
ZERO = "AAAAAAAAAAAAAAAAAAAAAA"
NOW = 1_700_000_010_000


def replica(node_id: int, directory: str, offset: int, fetch: int | None, caught_up: int | None) -> ReplicaState:
    return ReplicaState(replica_id=node_id, replica_directory_id=directory, log_end_offset=offset,
                        last_fetch_timestamp=fetch, last_caught_up_timestamp=caught_up)


def node(node_id: int, *endpoints: tuple[str, str, int]) -> Node:
    return Node(node_id=node_id, endpoints=tuple(Endpoint(listener=lst, host=h, port=p) for lst, h, p in endpoints))


def three_voters(**changes: object) -> QuorumInfo:
    """Leader 3000 in the middle of the voter list; follower 3002 lags by 10 offsets."""
    fields: dict[str, object] = dict(
        leader_id=3000, leader_epoch=7, high_watermark=1500,
        voters=(replica(2999, D2, 1500, NOW - 200, NOW - 200),
                replica(3000, D1, 1510, NOW, NOW),
                replica(3002, D3, 1500, NOW - 300, NOW - 4000)),
        observers=(replica(0, D4, 1510, NOW - 100, NOW - 100), replica(1, ZERO, -1, None, None)),
        nodes={2999: node(2999, ("CONTROLLER", "localhost", 9092)),
               3000: node(3000, ("CONTROLLER", "localhost", 9093), ("CONTROLLER_SSL", "localhost", 9094)),
               3002: node(3002, ("CONTROLLER", "::1", 9095))},
    )
    fields.update(changes)
    return QuorumInfo.model_validate(fields)


def test_status_text_is_byte_exact() -> None:
    expected = (
        "ClusterId:              MkU3OEVBNTcwNTJENDM2Qk\n"
        "LeaderId:               3000\n"
        "LeaderEpoch:            7\n"
        "HighWatermark:          1500\n"
        "MaxFollowerLag:         10\n"
        "MaxFollowerLagTimeMs:   200\n"
        'CurrentVoters:          [{"id": 2999, "directoryId": "3Db5QLSqSZieL3rJBUUegA", '
        '"endpoints": ["CONTROLLER://localhost:9092"]}, '
        '{"id": 3000, "directoryId": "ILZ5MPTeRWakmJu99uBJCA", '
        '"endpoints": ["CONTROLLER://localhost:9093", "CONTROLLER_SSL://localhost:9094"]}, '
        '{"id": 3002, "directoryId": "wZoXPqWoSu6F6c8MkmdyAg", "endpoints": ["CONTROLLER://[::1]:9095"]}]\n'
        'CurrentObservers:       [{"id": 0, "directoryId": "_KWDkTahTVaiVVVTaugNew"}, {"id": 1}]\n'
    )
    assert describe_text.status_text("MkU3OEVBNTcwNTJENDM2Qk", three_voters()) == expected


def test_status_of_a_single_voter_without_directory_ids_or_endpoints() -> None:
    quorum = QuorumInfo(leader_id=1, leader_epoch=1, high_watermark=-1,
                        voters=(replica(1, ZERO, 5, NOW, NOW),), observers=(), nodes={})
    assert describe_text.status_text("c", quorum) == (
        "ClusterId:              c\n"
        "LeaderId:               1\n"
        "LeaderEpoch:            1\n"
        "HighWatermark:          -1\n"
        "MaxFollowerLag:         0\n"
        "MaxFollowerLagTimeMs:   0\n"
        'CurrentVoters:          [{"id": 1}]\n'
        "CurrentObservers:       []\n"
    )


def test_committed_voters_line_only_from_describe_quorum_v3() -> None:
    committed = (replica(2999, D2, 1500, NOW - 200, NOW - 200), replica(3000, D1, 1510, NOW, NOW))
    text = describe_text.status_text("c", three_voters(committed_voters=committed, api_version=3))
    lines = text.splitlines()
    assert lines[6].startswith("CurrentVoters:          [")
    assert lines[7] == (
        'CommittedVoters:        [{"id": 2999, "directoryId": "3Db5QLSqSZieL3rJBUUegA", '
        '"endpoints": ["CONTROLLER://localhost:9092"]}, {"id": 3000, "directoryId": "ILZ5MPTeRWakmJu99uBJCA", '
        '"endpoints": ["CONTROLLER://localhost:9093", "CONTROLLER_SSL://localhost:9094"]}]'
    )
    assert lines[8].startswith("CurrentObservers:")
    assert "CommittedVoters" not in describe_text.status_text("c", three_voters())


@pytest.mark.parametrize(
    ("voters", "expected"),
    [
        # The slowest voter is the leader itself (first on a tie): lag time 0.
        ((replica(1, D1, 10, NOW, NOW), replica(2, D2, 10, NOW - 50, NOW - 50)), (0, 0)),
        # A follower behind, both timestamps known.
        ((replica(1, D1, 10, NOW, NOW), replica(2, D2, 4, NOW - 50, NOW - 700)), (6, 700)),
        # A follower that never fetched: LEO -1 counts as -1, lag time unknown.
        ((replica(1, D1, 10, NOW, NOW), replica(2, D2, -1, None, None)), (11, -1)),
        # On a tie the first voter in response order is taken, here a follower.
        ((replica(2, D2, 10, NOW - 50, NOW - 900), replica(1, D1, 10, NOW, NOW)), (0, 900)),
    ],
)
def test_max_follower_lag_rules(voters: tuple[ReplicaState, ...], expected: tuple[int, int]) -> None:
    quorum = QuorumInfo(leader_id=1, leader_epoch=1, high_watermark=10, voters=voters, observers=(), nodes={})
    assert describe_text.max_follower_lag(quorum) == expected


def test_replication_table_is_byte_exact() -> None:
    expected = (
        "NodeId\tDirectoryId           \tLogEndOffset\tLag \tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t\n"
        "3000  \tILZ5MPTeRWakmJu99uBJCA\t1510        \t0   \t1700000010000     \t1700000010000        \tLeader  \t\n"
        "2999  \t3Db5QLSqSZieL3rJBUUegA\t1500        \t10  \t1700000009800     \t1700000009800        \tFollower\t\n"
        "3002  \twZoXPqWoSu6F6c8MkmdyAg\t1500        \t10  \t1700000009700     \t1700000006000        \tFollower\t\n"
        "0     \t_KWDkTahTVaiVVVTaugNew\t1510        \t0   \t1700000009900     \t1700000009900        \tObserver\t\n"
        "1     \tAAAAAAAAAAAAAAAAAAAAAA\t-1          \t1511\t-1                \t-1                   \tObserver\t\n"
    )
    assert describe_text.replication_text(three_voters()) == expected


def test_replication_human_readable() -> None:
    text = describe_text.replication_text(three_voters(), now_ms=NOW + 5)
    assert text.splitlines()[1] == "3000  \tILZ5MPTeRWakmJu99uBJCA\t1510        \t0   \t5 ms ago          \t5 ms ago             \tLeader  \t"
    assert text.splitlines()[3].split("\t")[4:6] == ["305 ms ago        ", "4005 ms ago          "]
    assert text.splitlines()[5].split("\t")[4:6] == ["-1                ", "-1                   "]


@pytest.mark.parametrize(
    ("fetch", "caught_up", "message"),
    [
        (NOW + 1, NOW, f"Current timestamp is {NOW}, last fetch timestamp is {NOW + 1}"),
        (0, NOW, f"Current timestamp is {NOW}, last fetch timestamp is 0"),
        (NOW, NOW + 7, f"Current timestamp is {NOW}, last caught up timestamp is {NOW + 7}"),
    ],
)
def test_human_readable_refuses_timestamps_in_the_future_or_not_positive(fetch: int, caught_up: int,
                                                                        message: str) -> None:
    quorum = QuorumInfo(leader_id=1, leader_epoch=1, high_watermark=1,
                        voters=(replica(1, D1, 1, fetch, caught_up),), observers=(), nodes={})
    with pytest.raises(describe_text.ClockDriftError) as info:
        describe_text.replication_text(quorum, now_ms=NOW)
    assert str(info.value) == "Error while computing relative time, possible drift in system clock.\n" + message


def test_a_leader_missing_from_the_voters_fails_like_kafka() -> None:
    quorum = three_voters(leader_id=42)
    with pytest.raises(describe_text.LeaderNotAVoterError, match="^No value present$"):
        describe_text.status_text("c", quorum)
    with pytest.raises(describe_text.LeaderNotAVoterError, match="^No value present$"):
        describe_text.replication_text(quorum)


def test_json_documents() -> None:
    quorum = three_voters(committed_voters=())
    status = describe_text.status_json("c", quorum)
    assert list(status) == ["cluster_id", "leader_id", "leader_epoch", "high_watermark", "max_follower_lag",
                            "max_follower_lag_time_ms", "current_voters", "committed_voters", "current_observers"]
    assert status["current_voters"][2] == {"id": 3002, "directory_id": D3, "endpoints": ["CONTROLLER://[::1]:9095"]}
    assert status["current_observers"][1] == {"id": 1, "directory_id": None, "endpoints": []}
    assert status["committed_voters"] == []
    assert describe_text.status_json("c", three_voters())["committed_voters"] is None
    rows = describe_text.replication_json(quorum)["replicas"]
    assert [(r["node_id"], r["status"]) for r in rows] == [
        (3000, "Leader"), (2999, "Follower"), (3002, "Follower"), (0, "Observer"), (1, "Observer")]
    assert rows[4] == {"node_id": 1, "directory_id": ZERO, "log_end_offset": -1, "lag": 1511,
                       "last_fetch_timestamp": None, "last_caught_up_timestamp": None, "status": "Observer"}
