"""`kafka-metadata-quorum watch`'s events without a server: the events between consecutive checks
(hand-built quorums judged by the SDK's own rules) and the live view rendered to text."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console

from kafka_admin_kraft.health import (
    Finding,
    HealthStatus,
    HealthThresholds,
    NodeProbe,
    QuorumHealth,
    Severity,
    assess,
    unreachable,
)
from kafka_admin_kraft.models import QuorumInfo, ReplicaState
from kafka_admin_kraft_cli.metadata_quorum.events import (
    Event,
    Facts,
    ago,
    clock,
    describe,
    first_events,
    live_view,
    next_events,
)

NOW = 1_700_000_000_000
DIRS = {1: "wZoXPqWoSu6F6c8MkmdyAg", 2: "Zs1iKLhUQq2JbdWsR6Do7g", 3: "xWJCNDVGQNi0Vt3ouvnhQg",
        4: "r2tEDsFmR8ehrwtJg2K7zw", 100: "6dzlIM6mRhej399EgpSm8A"}
CONNECT = "--bootstrap-controller 127.0.0.1:9093"


def replica(node: int, offset: int = 50_000, caught_up: int | None = NOW) -> ReplicaState:
    return ReplicaState(replica_id=node, replica_directory_id=DIRS[node], log_end_offset=offset,
                        last_fetch_timestamp=caught_up, last_caught_up_timestamp=caught_up)


def check(leader: int = 1, epoch: int = 5, *, voters: tuple[int, ...] = (1, 2, 3),
          lagging: tuple[int, ...] = (), down: tuple[int, ...] = (), observers: tuple[int, ...] = (),
          at: int = NOW) -> QuorumHealth:
    """A result as ``check_quorum`` builds it: ``lagging`` voters are 20 000 offsets behind, ``down``
    ones do not answer ApiVersions."""
    states = tuple(replica(v, 30_000 if v in lagging else 50_000) for v in voters)
    quorum = QuorumInfo(leader_id=leader, leader_epoch=epoch, high_watermark=50_000, voters=states,
                        committed_voters=states, observers=tuple(replica(o) for o in observers), nodes={},
                        api_version=3)
    probes = [NodeProbe(node_id=v, address=f"127.0.0.1:{9090 + v}",
                        error="connection refused" if v in down else None) for v in voters]
    return assess(quorum, probes, thresholds=HealthThresholds(), checked_at_ms=at, connect=CONNECT,
                  cluster_id="MkU3OEVBNTcwNTJENDM2Qk")


def lost(at: int = NOW) -> QuorumHealth:
    return unreachable("QUORUM_UNREACHABLE", "cannot read the quorum: 127.0.0.1:9093: connection refused", at,
                       Severity.UNKNOWN)


def no_leader(at: int = NOW) -> QuorumHealth:
    return unreachable("NO_LEADER", "no active controller: election in progress", at, Severity.CRITICAL)


def run(*checks: QuorumHealth) -> list[list[Event]]:
    """The events of each check in turn, as the watch loop derives them."""
    facts, events = first_events(checks[0])
    out = [events]
    for health in checks[1:]:
        facts, events = next_events(facts, health)
        out.append(events)
    return out


def kinds(events: list[Event]) -> list[str]:
    return [e["event"] for e in events]


def test_the_first_check_is_a_started_event_with_the_state() -> None:
    [events] = run(check(leader=2, epoch=7))
    assert events == [{
        "time_ms": NOW, "event": "started", "status": "OK", "cluster_id": "MkU3OEVBNTcwNTJENDM2Qk",
        "leader_id": 2, "leader_epoch": 7, "high_watermark": 50_000, "voters": [1, 2, 3],
        "fault_tolerance": 1, "findings": [],
    }]
    json.dumps(events)


def test_what_is_already_wrong_at_the_start_is_reported_after_started() -> None:
    [events] = run(check(lagging=(3,)))
    assert kinds(events) == ["started", "replica_lagging"]
    assert events[0]["status"] == "WARNING"
    assert events[0]["findings"] == ["VOTER_LAGGING", "NO_FAULT_TOLERANCE"]
    lagging = events[1]
    assert (lagging["node_id"], lagging["directory_id"], lagging["code"]) == (3, DIRS[3], "VOTER_LAGGING")
    assert "20000 offsets behind" in lagging["message"]

    [events] = run(lost())
    assert kinds(events) == ["started", "connection_lost"]
    assert events[0]["status"] == "UNKNOWN" and events[0]["leader_id"] is None and events[0]["voters"] == []
    assert events[1]["reason"] == "cannot read the quorum: 127.0.0.1:9093: connection refused"


def test_nothing_is_reported_while_nothing_changes() -> None:
    steady = [check(lagging=(3,), at=NOW + i * 2000) for i in range(3)]
    assert run(*steady)[1:] == [[], []]
    assert run(lost(), lost(NOW + 2000))[1] == []


def test_leader_failover_and_recovery() -> None:
    _, failover, recovery = run(check(leader=1, epoch=5), check(leader=2, epoch=6, down=(1,), at=NOW + 2000),
                                check(leader=2, epoch=6, at=NOW + 4000))
    assert failover == [
        {"time_ms": NOW + 2000, "event": "status_changed", "from": "OK", "to": "WARNING",
         "findings": ["VOTER_UNREACHABLE", "NO_FAULT_TOLERANCE"], "fault_tolerance": 0},
        {"time_ms": NOW + 2000, "event": "leader_changed", "from": 1, "to": 2, "epoch": 6},
        {"time_ms": NOW + 2000, "event": "replica_lagging", "node_id": 1, "directory_id": DIRS[1],
         "code": "VOTER_UNREACHABLE",
         "message": "voter 1 does not answer ApiVersions at 127.0.0.1:9091: connection refused"},
    ]
    assert recovery == [
        {"time_ms": NOW + 4000, "event": "status_changed", "from": "WARNING", "to": "OK", "findings": [],
         "fault_tolerance": 1},
        {"time_ms": NOW + 4000, "event": "replica_caught_up", "node_id": 1, "directory_id": DIRS[1]},
    ]


def test_a_new_epoch_with_the_same_leader_is_a_leader_change() -> None:
    _, events = run(check(leader=1, epoch=5), check(leader=1, epoch=6))
    assert events == [{"time_ms": NOW, "event": "leader_changed", "from": 1, "to": 1, "epoch": 6}]


def test_an_election_gap_shows_no_leader_then_the_new_one() -> None:
    _, gap, elected = run(check(leader=1, epoch=5, lagging=(3,)), no_leader(NOW + 2000),
                          check(leader=2, epoch=6, at=NOW + 4000))
    assert kinds(gap) == ["status_changed", "leader_changed"]
    assert (gap[0]["from"], gap[0]["to"], gap[0]["findings"]) == ("WARNING", "CRITICAL", ["NO_LEADER"])
    assert gap[1] == {"time_ms": NOW + 2000, "event": "leader_changed", "from": 1, "to": None, "epoch": None}
    # Without a leader nothing is known about lag: voter 3 is not reported caught up until a leader says so.
    assert kinds(elected) == ["status_changed", "leader_changed", "replica_caught_up"]
    assert elected[1] == {"time_ms": NOW + 4000, "event": "leader_changed", "from": None, "to": 2, "epoch": 6}
    assert elected[2]["node_id"] == 3


def test_a_lost_connection_says_nothing_about_the_quorum() -> None:
    _, outage, back = run(check(leader=1, epoch=5, lagging=(3,)), lost(NOW + 2000), check(leader=1, epoch=5))
    assert outage == [
        {"time_ms": NOW + 2000, "event": "connection_lost",
         "reason": "cannot read the quorum: 127.0.0.1:9093: connection refused"},
        {"time_ms": NOW + 2000, "event": "status_changed", "from": "WARNING", "to": "UNKNOWN",
         "findings": ["QUORUM_UNREACHABLE"], "fault_tolerance": 0},
    ]
    assert kinds(back) == ["connection_restored", "status_changed", "replica_caught_up"]
    assert back[0]["status"] == "OK" and (back[1]["from"], back[1]["to"]) == ("UNKNOWN", "OK")


def test_a_failover_during_an_outage_shows_when_the_connection_returns() -> None:
    _, _, back = run(check(leader=1, epoch=5), lost(), check(leader=3, epoch=8))
    assert kinds(back) == ["connection_restored", "status_changed", "leader_changed"]
    assert (back[2]["from"], back[2]["to"], back[2]["epoch"]) == (1, 3, 8)


def test_first_sight_after_starting_unreachable_is_no_leader_change() -> None:
    _, back = run(lost(), check(leader=2, epoch=4))
    assert kinds(back) == ["connection_restored", "status_changed"]


def test_voter_changes() -> None:
    _, added = run(check(voters=(1, 2, 3)), check(voters=(1, 2, 3, 4)))
    assert kinds(added) == ["status_changed", "voters_changed"]  # four voters: EVEN_VOTER_COUNT
    assert {k: added[1][k] for k in ("added", "removed", "voters")} == {"added": [4], "removed": [],
                                                                        "voters": [1, 2, 3, 4]}
    # A lagging voter that is removed did not catch up: no replica_caught_up for it.
    _, removed = run(check(voters=(1, 2, 3, 4), lagging=(4,)), check(voters=(1, 2, 3)))
    assert kinds(removed) == ["status_changed", "voters_changed"]
    assert (removed[1]["added"], removed[1]["removed"]) == ([], [4])


def test_a_voter_going_from_lagging_to_unreachable_stays_one_lagging_episode() -> None:
    _, events = run(check(lagging=(3,)), check(down=(3,)))
    assert events == []


def test_every_event_has_a_line_for_people() -> None:
    (started, lagging), (changed, leader, caught_up) = run(check(lagging=(3,)), check(leader=2, epoch=6))
    assert describe(started) == ("watching cluster MkU3OEVBNTcwNTJENDM2Qk: status WARNING, "
                                 "leader 1 (epoch 5), voters 1, 2, 3")
    assert describe(lagging).startswith("VOTER_LAGGING: voter 3 is 20000 offsets behind the leader")
    assert describe(changed) == "status WARNING -> OK"
    assert describe(leader) == "leader 1 -> 2 (epoch 6)"
    assert describe(caught_up) == "voter 3 caught up"
    _, (lost_event, _), (restored, _, gone) = run(check(), lost(), no_leader())
    assert describe(lost_event) == ("connection lost: cannot read the quorum: 127.0.0.1:9093: "
                                    "connection refused")
    assert describe(restored) == "connection restored: status CRITICAL"
    assert describe(gone) == "leader 1 -> none"
    voters = {"time_ms": NOW, "event": "voters_changed", "added": [4], "removed": [], "voters": [1, 4]}
    assert describe(voters) == "voters now 1, 4: added 4, removed none"
    assert describe({"time_ms": NOW, "event": "webhook_failed", "url": "https://hooks.example/...",
                     "webhook": 1, "status": "WARNING", "reason": "HTTP 404"}) \
        == "webhook https://hooks.example/... did not get the WARNING alert: HTTP 404"


@pytest.mark.parametrize(("ms", "text"), [(None, "never"), (-5, "0 ms ago"), (850, "850 ms ago"),
                                          (12_345, "12.3 s ago"), (245_000, "4 min 5 s ago")])
def test_ago(ms: int | None, text: str) -> None:
    assert ago(ms) == text


def render(health: QuorumHealth, recent: list[Event]) -> str:
    console = Console(record=True, width=100, file=io.StringIO())
    console.print(live_view(health, recent))
    return console.export_text()


def test_live_view_shows_header_replicas_findings_and_events() -> None:
    before = check(leader=1, epoch=5, at=NOW)
    states = (replica(1, 500), replica(2, 480, NOW - 3_500), replica(3, -1, None))
    quorum = QuorumInfo(leader_id=1, leader_epoch=6, high_watermark=480, voters=states,
                        committed_voters=states, observers=(replica(100, 470, NOW - 200),), nodes={},
                        api_version=3)
    probes = [NodeProbe(node_id=1, address="127.0.0.1:9091"), NodeProbe(node_id=2, address="127.0.0.1:9092"),
              NodeProbe(node_id=3, address="127.0.0.1:9093", error="connection refused")]
    after = assess(quorum, probes, thresholds=HealthThresholds(), checked_at_ms=NOW + 2000, connect=CONNECT,
                   cluster_id="MkU3OEVBNTcwNTJENDM2Qk")
    (events, later) = run(before, after)
    text = render(after, events + later)
    lines = text.splitlines()
    assert "kafka-metadata-quorum watch" in lines[0]
    assert "cluster MkU3OEVBNTcwNTJENDM2Qk" in lines[1] and "status CRITICAL" in lines[1]
    assert f"checked {clock(NOW + 2000)}" in lines[1]
    assert "leader 1, epoch 6" in lines[2] and "high watermark 480" in lines[2]
    assert "fault tolerance 0" in lines[2]
    rows = {words[0]: words for words in map(str.split, lines) if words[:1] in (["1"], ["2"], ["3"], ["100"])}
    assert rows["1"] == ["1", DIRS[1], "leader", "500", "-", "-", "yes"]
    assert rows["2"] == ["2", DIRS[2], "voter", "480", "20", "3.5", "s", "ago", "yes"]
    assert rows["3"] == ["3", DIRS[3], "voter", "-", "-", "never", "no:", "connection", "refused"]
    assert rows["100"] == ["100", DIRS[100], "observer", "470", "30", "200", "ms", "ago"]
    findings = text[text.index("Findings"):text.index("Recent events")]
    assert "CRITICAL NO_MAJORITY: only 1 of 3 voters are caught up and reachable" in findings
    assert "WARNING  VOTER_LAGGING: voter 2 was last caught up 3500 ms ago" in findings
    assert "WARNING  VOTER_UNREACHABLE: voter 3 does not answer ApiVersions at 127.0.0.1:9093" in findings
    recent = text[text.index("Recent events"):].splitlines()[1:]
    assert [line.split()[1] for line in recent if re.match(r"\d\d:\d\d:\d\d ", line)] == [
        "started", "status_changed", "leader_changed", "replica_lagging", "replica_lagging"]
    assert f"{clock(NOW + 2000)} leader_changed" in text and "leader 1 -> 1 (epoch 6)" in text


def test_live_view_of_an_unreachable_quorum_and_of_a_fix() -> None:
    text = render(lost(), [])
    assert "status UNKNOWN" in text and "no leader known" in text
    assert "Node" not in text  # no replica table without a quorum
    assert "UNKNOWN  QUORUM_UNREACHABLE: cannot read the quorum" in text
    assert "none yet" in text
    health = QuorumHealth(status=HealthStatus.OK, fault_tolerance=1, checked_at_ms=NOW, findings=(Finding(
        code="STATIC_QUORUM", severity=Severity.INFO, message="the voters have no directory ids",
        fix=f"kafka-features {CONNECT} upgrade --feature kraft.version=1"),))
    text = render(health, [])
    assert "INFO     STATIC_QUORUM: the voters have no directory ids" in text
    assert f"fix: kafka-features {CONNECT} upgrade --feature kraft.version=1" in text


def test_facts_carry_the_leader_through_an_outage() -> None:
    facts, _ = first_events(check(leader=2, epoch=9))
    facts, _ = next_events(facts, lost())
    assert isinstance(facts, Facts)
    assert facts.status is HealthStatus.UNKNOWN
    assert facts.leader is not None and (facts.leader.node_id, facts.leader.epoch) == (2, 9)
    assert facts.voters == frozenset({1, 2, 3})
