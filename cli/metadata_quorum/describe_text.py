"""What `kafka-metadata-quorum describe` prints, as pure functions of a `QuorumInfo` or of the plain
answer the command reads (`QuorumAnswer`, the same fields without pydantic).

Kept apart from the click app so that the golden tests can pin every byte without a server, and so
that the text and the JSON document are computed from the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from kafka_admin_kraft.protocol.primitives import ZERO_UUID

if TYPE_CHECKING:
    from kafka_admin_kraft.client.answers import QuorumAnswer, ReplicaAnswer
    from kafka_admin_kraft.models import QuorumInfo, ReplicaState

Quorum: TypeAlias = "QuorumInfo | QuorumAnswer"
Replica: TypeAlias = "ReplicaState | ReplicaAnswer"

LABEL_WIDTH = 24
REPLICATION_HEADER = (
    "NodeId",
    "DirectoryId",
    "LogEndOffset",
    "Lag",
    "LastFetchTimestamp",
    "LastCaughtUpTimestamp",
    "Status",
)


class LeaderNotAVoterError(LookupError):
    """The reported leader is not among the voters (Kafka's tool fails with this message too)."""

    def __init__(self) -> None:
        super().__init__("No value present")


class ClockDriftError(ValueError):
    """A timestamp cannot be shown as "ms ago": it is not positive or lies in the future."""

    def __init__(self, now_ms: int, what: str, timestamp: int) -> None:
        super().__init__(
            "Error while computing relative time, possible drift in system clock.\n"
            f"Current timestamp is {now_ms}, {what} timestamp is {timestamp}"
        )


def _leader(quorum: Quorum) -> Replica:
    for voter in quorum.voters:
        if voter.replica_id == quorum.leader_id:
            return voter
    raise LeaderNotAVoterError()


def _endpoints(quorum: Quorum, replica: Replica) -> list[str]:
    node = quorum.nodes.get(replica.replica_id)
    return [str(endpoint) for endpoint in node.endpoints] if node is not None else []


def max_follower_lag(quorum: Quorum) -> tuple[int, int]:
    """(MaxFollowerLag, MaxFollowerLagTimeMs): measured against the voter with the smallest log end
    offset (the first one on a tie), the leader included, so a single voter shows (0, 0)."""
    leader = _leader(quorum)
    voters: Sequence[Replica] = quorum.voters
    slowest = min(voters, key=lambda voter: voter.log_end_offset)
    lag = leader.log_end_offset - slowest.log_end_offset
    if slowest.replica_id == quorum.leader_id:
        return lag, 0
    if leader.last_caught_up_timestamp is None or slowest.last_caught_up_timestamp is None:
        return lag, -1
    return lag, leader.last_caught_up_timestamp - slowest.last_caught_up_timestamp


def _node_text(quorum: Quorum, replica: Replica) -> str:
    text = f'{{"id": {replica.replica_id}'
    if replica.replica_directory_id != ZERO_UUID:
        text += f', "directoryId": "{replica.replica_directory_id}"'
    endpoints = _endpoints(quorum, replica)
    if endpoints:
        text += ', "endpoints": [' + ", ".join(f'"{e}"' for e in endpoints) + "]"
    return text + "}"


def _nodes_text(quorum: Quorum, replicas: Sequence[Replica]) -> str:
    return "[" + ", ".join(_node_text(quorum, replica) for replica in replicas) + "]"


def _line(label: str, value: object) -> str:
    return f"{label + ':':<{LABEL_WIDTH}}{value}\n"


def status_text(cluster_id: str, quorum: Quorum) -> str:
    """`describe --status`: eight labelled lines, plus `CommittedVoters:` after `CurrentVoters:` when
    the server answered DescribeQuorum v3 (Kafka itself never prints that line)."""
    lag, lag_ms = max_follower_lag(quorum)
    text = (
        _line("ClusterId", cluster_id)
        + _line("LeaderId", quorum.leader_id)
        + _line("LeaderEpoch", quorum.leader_epoch)
        + _line("HighWatermark", quorum.high_watermark)
        + _line("MaxFollowerLag", lag)
        + _line("MaxFollowerLagTimeMs", lag_ms)
        + _line("CurrentVoters", _nodes_text(quorum, quorum.voters))
    )
    if quorum.committed_voters is not None:
        text += _line("CommittedVoters", _nodes_text(quorum, quorum.committed_voters))
    return text + _line("CurrentObservers", _nodes_text(quorum, quorum.observers))


def _node_json(quorum: Quorum, replica: Replica) -> dict[str, Any]:
    directory = replica.replica_directory_id
    return {
        "id": replica.replica_id,
        "directory_id": None if directory == ZERO_UUID else str(directory),
        "endpoints": _endpoints(quorum, replica),
    }


def status_json(cluster_id: str, quorum: Quorum) -> dict[str, Any]:
    """`describe --status --output json`: the same facts with numbers as numbers."""
    lag, lag_ms = max_follower_lag(quorum)
    committed = quorum.committed_voters
    return {
        "cluster_id": cluster_id,
        "leader_id": quorum.leader_id,
        "leader_epoch": quorum.leader_epoch,
        "high_watermark": quorum.high_watermark,
        "max_follower_lag": lag,
        "max_follower_lag_time_ms": lag_ms,
        "current_voters": [_node_json(quorum, r) for r in quorum.voters],
        "committed_voters": None if committed is None else [_node_json(quorum, r) for r in committed],
        "current_observers": [_node_json(quorum, r) for r in quorum.observers],
    }


def replication_rows(quorum: Quorum) -> list[tuple[Replica, str]]:
    """Leader first, then the other voters, then the observers, each in response order."""
    leader = _leader(quorum)
    rows = [(leader, "Leader")]
    rows += [(v, "Follower") for v in quorum.voters if v.replica_id != quorum.leader_id]
    rows += [(o, "Observer") for o in quorum.observers]
    return rows


def _timestamp_cell(timestamp: int | None, now_ms: int | None, what: str) -> str:
    if timestamp is None:
        return "-1"
    if now_ms is None:
        return str(timestamp)
    if timestamp <= 0 or timestamp > now_ms:
        raise ClockDriftError(now_ms, what, timestamp)
    return f"{now_ms - timestamp} ms ago"


def replication_text(quorum: Quorum, now_ms: int | None = None) -> str:
    """`describe --replication`: every cell padded to its column's width and followed by a TAB (the
    last one too). With `now_ms` (`--human-readable`), known timestamps become `<n> ms ago`."""
    leader_offset = _leader(quorum).log_end_offset
    table = [list(REPLICATION_HEADER)]
    for replica, status in replication_rows(quorum):
        table.append(
            [
                str(replica.replica_id),
                str(replica.replica_directory_id),
                str(replica.log_end_offset),
                str(leader_offset - replica.log_end_offset),
                _timestamp_cell(replica.last_fetch_timestamp, now_ms, "last fetch"),
                _timestamp_cell(replica.last_caught_up_timestamp, now_ms, "last caught up"),
                status,
            ]
        )
    # Kafka's ToolsUtils.prettyPrintTable layout, which is none of tabulate's formats; importing
    # tabulate here (about 45 ms, most of it importlib.metadata) would take this command past the
    # tools' 300 ms start-up aim (BENCHMARKS.md), so the two lines below lay it out.
    widths = [max(len(row[column]) for row in table) for column in range(len(REPLICATION_HEADER))]
    return "".join("".join(f"{cell:<{width}}\t" for cell, width in zip(row, widths, strict=True)) + "\n"
                   for row in table)


def replication_json(quorum: Quorum) -> dict[str, Any]:
    """`describe --replication --output json`: raw epoch-millisecond timestamps (null when unknown),
    whatever `--human-readable` says, so that scripts compute ages against their own clock."""
    leader_offset = _leader(quorum).log_end_offset
    return {
        "replicas": [
            {
                "node_id": replica.replica_id,
                "directory_id": str(replica.replica_directory_id),
                "log_end_offset": replica.log_end_offset,
                "lag": leader_offset - replica.log_end_offset,
                "last_fetch_timestamp": replica.last_fetch_timestamp,
                "last_caught_up_timestamp": replica.last_caught_up_timestamp,
                "status": status,
            }
            for replica, status in replication_rows(quorum)
        ]
    }
