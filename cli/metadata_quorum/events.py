"""What `kafka-metadata-quorum watch` reports: the events between consecutive quorum checks, and the
live view of the latest one. Pure: no I/O, no clock (times come from the checks).

Each event is a JSON-ready dict with ``time_ms`` (epoch ms of the check that saw it), ``event`` and the
fields of its kind:

* ``started``: the first check's status, cluster id, leader, epoch, high watermark, voters, fault
  tolerance and finding codes;
* ``status_changed``: ``from``, ``to``, ``findings`` (codes), ``fault_tolerance``;
* ``leader_changed``: ``from``, ``to`` (null while the quorum has no leader), ``epoch``; a new epoch
  with the same leader counts, since it is a new election;
* ``voters_changed``: ``added``, ``removed``, ``voters`` (node ids);
* ``replica_lagging``: a voter got a ``VOTER_LAGGING`` or ``VOTER_UNREACHABLE`` finding (``node_id``,
  ``directory_id``, ``code``, ``message``); ``replica_caught_up``: that finding went away while the
  node is still a voter;
* ``connection_lost`` (``reason``) and ``connection_restored`` (``status``): the quorum could not be
  read (status UNKNOWN), and could again.

The watch adds ``webhook_delivered`` and ``webhook_failed`` from ``alerts``; ``describe`` words them too.

A check that cannot say something (UNKNOWN says nothing about the leader; a quorum without a leader
reports no lag) leaves the last known value in place, so an outage does not read as a change.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_admin_kraft.health import FindingCode, HealthStatus

if TYPE_CHECKING:
    from rich.console import RenderableType

    from kafka_admin_kraft.health import Finding, QuorumHealth
    from kafka_admin_kraft.models import QuorumInfo, ReplicaState

Event = dict[str, Any]

BEHIND_CODES = frozenset({FindingCode.VOTER_LAGGING, FindingCode.VOTER_UNREACHABLE})
"""Findings that make a voter count as lagging for ``replica_lagging`` / ``replica_caught_up``."""
STATUS_STYLES = {"OK": "bold green", "WARNING": "bold yellow", "CRITICAL": "bold red",
                 "UNKNOWN": "bold magenta"}
SEVERITY_STYLES = {"INFO": "cyan", "WARNING": "yellow", "CRITICAL": "red", "UNKNOWN": "magenta"}


@dataclass(frozen=True)
class Leader:
    node_id: int
    epoch: int


@dataclass(frozen=True)
class Facts:
    """What the checks so far have established: the latest status, plus the last known leader, voters
    and lagging voters (carried over when the latest check could not tell)."""

    status: HealthStatus
    leader_known: bool
    leader: Leader | None
    """None when the quorum is known to have no leader."""
    voters: frozenset[int] | None
    """None until a check has read the voter set."""
    behind: Mapping[int, Finding] = field(default_factory=dict)
    """Lagging or unreachable voters by node id, with the finding that says so."""


def _has_leader(health: QuorumHealth) -> bool:
    return health.quorum is not None and not any(f.code is FindingCode.NO_LEADER for f in health.findings)


def _facts(health: QuorumHealth, carried: Facts | None) -> Facts:
    quorum = health.quorum
    if health.status is HealthStatus.UNKNOWN:
        if carried is None:
            return Facts(status=health.status, leader_known=False, leader=None, voters=None)
        return Facts(status=health.status, leader_known=carried.leader_known, leader=carried.leader,
                     voters=carried.voters, behind=carried.behind)
    voters = frozenset(v.replica_id for v in quorum.voters) if quorum is not None else None
    if voters is None and carried is not None:
        voters = carried.voters
    if quorum is not None and _has_leader(health):
        leader: Leader | None = Leader(quorum.leader_id, quorum.leader_epoch)
        behind: Mapping[int, Finding] = {f.node_id: f for f in health.findings
                                         if f.code in BEHIND_CODES and f.node_id is not None}
    else:
        leader = None
        behind = carried.behind if carried is not None else {}
    return Facts(status=health.status, leader_known=True, leader=leader, voters=voters, behind=behind)


def _directory_text(finding: Finding) -> str | None:
    return None if finding.directory_id is None else str(finding.directory_id)


def _event(time_ms: int, name: str, **fields: Any) -> Event:
    return {"time_ms": time_ms, "event": name, **fields}


def _lagging(time_ms: int, finding: Finding) -> Event:
    return _event(time_ms, "replica_lagging", node_id=finding.node_id,
                  directory_id=_directory_text(finding), code=finding.code, message=finding.message)


def _lost(time_ms: int, health: QuorumHealth) -> Event:
    reason = health.findings[0].message if health.findings else "the quorum cannot be read"
    return _event(time_ms, "connection_lost", reason=reason)


def first_events(health: QuorumHealth) -> tuple[Facts, list[Event]]:
    """The facts and events of the first check: ``started``, then what is already wrong
    (``connection_lost``, ``replica_lagging``), so that every later recovery has its start."""
    facts = _facts(health, None)
    quorum = health.quorum
    time_ms = health.checked_at_ms
    events = [_event(
        time_ms, "started", status=health.status.name, cluster_id=health.cluster_id,
        leader_id=facts.leader.node_id if facts.leader is not None else None,
        leader_epoch=quorum.leader_epoch if quorum is not None else None,
        high_watermark=quorum.high_watermark if quorum is not None else None,
        voters=sorted(facts.voters) if facts.voters is not None else [],
        fault_tolerance=health.fault_tolerance, findings=[f.code for f in health.findings])]
    if health.status is HealthStatus.UNKNOWN:
        events.append(_lost(time_ms, health))
    events += [_lagging(time_ms, facts.behind[node]) for node in sorted(facts.behind)]
    return facts, events


def next_events(before: Facts, health: QuorumHealth) -> tuple[Facts, list[Event]]:
    """The facts after one more check, and the events between ``before`` and them."""
    after = _facts(health, before)
    time_ms = health.checked_at_ms
    events: list[Event] = []
    unknown = HealthStatus.UNKNOWN
    if after.status is unknown and before.status is not unknown:
        events.append(_lost(time_ms, health))
    if before.status is unknown and after.status is not unknown:
        events.append(_event(time_ms, "connection_restored", status=after.status.name))
    if after.status is not before.status:
        events.append(_event(time_ms, "status_changed",
                             **{"from": before.status.name, "to": after.status.name},
                             findings=[f.code for f in health.findings],
                             fault_tolerance=health.fault_tolerance))
    if before.leader_known and after.leader_known and before.leader != after.leader:
        events.append(_event(
            time_ms, "leader_changed",
            **{"from": before.leader.node_id if before.leader is not None else None,
               "to": after.leader.node_id if after.leader is not None else None},
            epoch=after.leader.epoch if after.leader is not None else None))
    if before.voters is not None and after.voters is not None and before.voters != after.voters:
        events.append(_event(time_ms, "voters_changed", added=sorted(after.voters - before.voters),
                             removed=sorted(before.voters - after.voters), voters=sorted(after.voters)))
    started_lagging = sorted(after.behind.keys() - before.behind.keys())
    events += [_lagging(time_ms, after.behind[node]) for node in started_lagging]
    voters = after.voters or frozenset()
    for node in sorted(before.behind.keys() - after.behind.keys()):
        if node in voters:
            events.append(_event(time_ms, "replica_caught_up", node_id=node,
                                 directory_id=_directory_text(before.behind[node])))
    return after, events


def _names(ids: Sequence[int]) -> str:
    return ", ".join(map(str, ids)) or "none"


def describe(event: Event) -> str:
    """One line for people about an event (the live view, and ``--output text`` without a terminal)."""
    kind = event["event"]
    if kind == "started":
        leader = event["leader_id"]
        where = f"leader {leader} (epoch {event['leader_epoch']})" if leader is not None else "no leader"
        return (f"watching cluster {event['cluster_id'] or '(unknown)'}: status {event['status']}, {where}, "
                f"voters {_names(event['voters'])}")
    if kind == "status_changed":
        codes = ", ".join(event["findings"])
        return f"status {event['from']} -> {event['to']}" + (f" ({codes})" if codes else "")
    if kind == "leader_changed":
        to = "none" if event["to"] is None else f"{event['to']} (epoch {event['epoch']})"
        return f"leader {'none' if event['from'] is None else event['from']} -> {to}"
    if kind == "voters_changed":
        return (f"voters now {_names(event['voters'])}: added {_names(event['added'])}, "
                f"removed {_names(event['removed'])}")
    if kind == "replica_lagging":
        return f"{event['code']}: {event['message']}"
    if kind == "replica_caught_up":
        return f"voter {event['node_id']} caught up"
    if kind == "connection_lost":
        return f"connection lost: {event['reason']}"
    if kind == "connection_restored":
        return f"connection restored: status {event['status']}"
    if kind == "webhook_delivered":
        return f"webhook {event['url']} got the {event['status']} alert (HTTP {event['http_status']})"
    if kind == "webhook_failed":
        return f"webhook {event['url']} did not get the {event['status']} alert: {event['reason']}"
    details = ", ".join(f"{key} {value}" for key, value in event.items() if key not in ("time_ms", "event"))
    return f"{kind}: {details}" if details else kind


def clock(time_ms: int) -> str:
    """Local wall-clock time of day, to the second."""
    return datetime.datetime.fromtimestamp(time_ms / 1000).strftime("%H:%M:%S")


def timestamp(time_ms: int) -> str:
    """Local date and time with the offset, to the millisecond (lines for logs)."""
    moment = datetime.datetime.fromtimestamp(time_ms / 1000).astimezone()
    return moment.isoformat(timespec="milliseconds")


def ago(ms: int | None) -> str:
    """``"850 ms ago"``, ``"12.3 s ago"``, ``"4 min 5 s ago"``; ``"never"`` for None."""
    if ms is None:
        return "never"
    ms = max(0, ms)
    if ms < 1000:
        return f"{ms} ms ago"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s ago"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s ago"


def _replica_rows(quorum: QuorumInfo, health: QuorumHealth) -> list[tuple[str, ...]]:
    leader = next((v for v in quorum.voters if v.replica_id == quorum.leader_id), None)
    probes = {p.node_id: p for p in health.probes}

    def row(replica: ReplicaState, role: str) -> tuple[str, ...]:
        lag = "-"
        caught_up = "-"
        if leader is not None and replica is not leader:
            if replica.log_end_offset >= 0:
                lag = str(max(0, leader.log_end_offset - replica.log_end_offset))
            if replica.last_caught_up_timestamp is None:
                caught_up = "never"
            elif leader.last_caught_up_timestamp is not None:
                caught_up = ago(leader.last_caught_up_timestamp - replica.last_caught_up_timestamp)
        probe = probes.get(replica.replica_id) if role != "observer" else None
        reached = "" if probe is None else "yes" if probe.reachable else f"no: {probe.error}"
        offset = str(replica.log_end_offset) if replica.log_end_offset >= 0 else "-"
        return (str(replica.replica_id), str(replica.replica_directory_id), role, offset, lag, caught_up,
                reached)

    rows = [row(v, "leader" if v is leader else "voter") for v in quorum.voters]
    return rows + [row(o, "observer") for o in quorum.observers]


def _header(health: QuorumHealth) -> RenderableType:
    from rich.table import Table
    from rich.text import Text

    quorum = health.quorum
    grid = Table.grid(padding=(0, 3))
    for _ in range(3):
        grid.add_column()
    status = Text.assemble("status ", (health.status.name, STATUS_STYLES[health.status.name]))
    grid.add_row(Text(f"cluster {health.cluster_id or '(unknown)'}"), status,
                 Text(f"checked {clock(health.checked_at_ms)}"))
    if quorum is not None and _has_leader(health):
        grid.add_row(Text(f"leader {quorum.leader_id}, epoch {quorum.leader_epoch}"),
                     Text(f"high watermark {quorum.high_watermark}"),
                     Text(f"fault tolerance {health.fault_tolerance}"))
    else:
        grid.add_row(Text("no leader known"), Text(""), Text(f"fault tolerance {health.fault_tolerance}"))
    return grid


def _findings(findings: Sequence[Finding]) -> RenderableType:
    from rich.table import Table
    from rich.text import Text

    if not findings:
        return Text("No findings.", style="green")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, min_width=len("CRITICAL"))
    grid.add_column()
    for finding in findings:
        text = Text.assemble((f"{finding.code}: ", "bold"), finding.message)
        if finding.fix is not None:
            text.append(f"\nfix: {finding.fix}", style="dim")
        grid.add_row(Text(finding.severity.name, style=SEVERITY_STYLES[finding.severity.name]), text)
    return grid


def _recent(events: Sequence[Event]) -> RenderableType:
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for event in events:
        grid.add_row(clock(event["time_ms"]), event["event"], Text(describe(event)))
    return grid


def live_view(health: QuorumHealth, recent: Sequence[Event]) -> RenderableType:
    """One frame of the live view: header, replicas, findings and the recent events, oldest first."""
    from rich.console import Group
    from rich.rule import Rule
    from rich.table import Table
    from rich.text import Text

    parts: list[RenderableType] = [Rule("kafka-metadata-quorum watch", style="dim"), _header(health)]
    if health.quorum is not None:
        table = Table(expand=False, pad_edge=False, box=None, header_style="bold")
        table.add_column("Node", justify="right")
        table.add_column("Directory id", no_wrap=True, min_width=22)
        table.add_column("Role")
        table.add_column("Log end offset", justify="right")
        table.add_column("Lag", justify="right")
        table.add_column("Last caught up", justify="right")
        table.add_column("Reachable")
        for row in _replica_rows(health.quorum, health):
            table.add_row(*row, style="bold" if row[2] == "leader" else None)
        parts += [Text(""), table]
    parts += [Text(""), Text("Findings", style="bold underline"), _findings(health.findings)]
    parts += [Text(""), Text("Recent events", style="bold underline"),
              _recent(recent) if recent else Text("none yet", style="dim")]
    return Group(*parts)
