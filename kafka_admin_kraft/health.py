"""Quorum health: what ``Admin.check_quorum`` returns, and the rules that judge a quorum.

The rules are one pure function, :func:`assess`, of what the client saw: the leader's DescribeQuorum
answer, the ApiVersions answer (or failure) of each node it probed, and how long a voter change has
been pending. Each problem becomes a :class:`Finding` with a stable code, a severity, the node and
directory id it is about, one line of explanation and, where one exists, the command that fixes it.

Codes (the members of :class:`FindingCode`), with their severity:

* ``QUORUM_UNREACHABLE`` (UNKNOWN): no controller or broker answered; nothing is known.
* ``NO_LEADER`` (CRITICAL): nodes answer but none is the active controller (an election that does
  not end).
* ``LEADER_UNREACHABLE`` (CRITICAL): the leader's endpoint does not answer ApiVersions.
* ``NO_MAJORITY`` (CRITICAL): fewer than a majority of the voters are caught up and reachable: the
  quorum cannot commit.
* ``VOTER_UNREACHABLE`` (WARNING): a voter's endpoint does not answer ApiVersions.
* ``VOTER_LAGGING`` (WARNING): a voter is behind the leader by more than the offset or time
  threshold (time as Kafka's leader measures it: since the voter was last caught up).
* ``NO_FAULT_TOLERANCE`` (WARNING): one more failed voter stops the quorum.
* ``EVEN_VOTER_COUNT`` (WARNING): an even number of voters tolerates no more failures than one voter
  fewer.
* ``VOTER_CHANGE_PENDING`` (WARNING): CurrentVoters has differed from CommittedVoters (DescribeQuorum
  v3) for longer than the threshold; ``VOTER_CHANGE_IN_PROGRESS`` (INFO) before that.
* ``REPLACED_DISK_OBSERVER`` (WARNING): an observer has a voter's node id but another directory id:
  the controller's disk was replaced and the new directory never swapped in.
* ``STATIC_QUORUM`` (INFO): voters without a directory id (``controller.quorum.voters``): voters
  cannot be added or removed until kraft.version is 1.
* ``METADATA_VERSION_UPGRADE_AVAILABLE`` (INFO): every node that answered supports a higher
  metadata.version than the finalized one.
* ``SUPPORTED_FEATURES_DIFFER`` (INFO): nodes report different supported ranges for a feature (a
  rolling upgrade in progress).

A voter counts as healthy when it is the leader, or when it is caught up within the thresholds and
its endpoint answered (or was not probed). The fault tolerance is the number of healthy voters beyond
a majority: how many more voters can fail before the quorum stops.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kafka_admin_kraft.features import KRAFT_VERSION, METADATA_VERSION
from kafka_admin_kraft.models import DirectoryId, QuorumInfo, ReplicaState, SupportedVersionRange
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft.values import VoterKey, voter_order

__all__ = [
    "Finding",
    "FindingCode",
    "HealthStatus",
    "HealthThresholds",
    "NodeProbe",
    "QuorumHealth",
    "Severity",
    "assess",
    "majority",
    "unreachable",
]


class HealthStatus(enum.IntEnum):
    """The overall verdict; its value is the monitoring-plugin exit code (Nagios, Icinga, probes)."""

    OK = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3


class Severity(enum.IntEnum):
    """How bad one finding is. INFO findings leave the status OK."""

    INFO = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3

    @property
    def status(self) -> HealthStatus:
        return HealthStatus.OK if self is Severity.INFO else HealthStatus[self.name]


class FindingCode(str, enum.Enum):
    """What a finding is about (the codes of the module docstring). A string whose value is its name:
    ``str()``, f-strings and JSON give the bare code, and it equals that text."""

    QUORUM_UNREACHABLE = "QUORUM_UNREACHABLE"
    NO_LEADER = "NO_LEADER"
    LEADER_UNREACHABLE = "LEADER_UNREACHABLE"
    NO_MAJORITY = "NO_MAJORITY"
    VOTER_UNREACHABLE = "VOTER_UNREACHABLE"
    VOTER_LAGGING = "VOTER_LAGGING"
    NO_FAULT_TOLERANCE = "NO_FAULT_TOLERANCE"
    EVEN_VOTER_COUNT = "EVEN_VOTER_COUNT"
    VOTER_CHANGE_PENDING = "VOTER_CHANGE_PENDING"
    VOTER_CHANGE_IN_PROGRESS = "VOTER_CHANGE_IN_PROGRESS"
    REPLACED_DISK_OBSERVER = "REPLACED_DISK_OBSERVER"
    STATIC_QUORUM = "STATIC_QUORUM"
    METADATA_VERSION_UPGRADE_AVAILABLE = "METADATA_VERSION_UPGRADE_AVAILABLE"
    SUPPORTED_FEATURES_DIFFER = "SUPPORTED_FEATURES_DIFFER"

    # As enum.StrEnum (Python 3.11+) does: a (str, Enum) member's own str() is "FindingCode.NO_LEADER",
    # and its format() follows the value or that name depending on the Python version.
    def __str__(self) -> str:
        return self.value

    def __format__(self, format_spec: str) -> str:
        return format(self.value, format_spec)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HealthThresholds(_Frozen):
    """When a voter counts as behind, and how long a check waits for answers."""

    max_lag_offsets: int = Field(default=10_000, ge=0)
    """Offsets a voter may be behind the leader's log end offset."""
    max_lag_ms: int = Field(default=2_000, ge=0)
    """Milliseconds since a voter was last caught up, on the leader's clock; Kafka's default
    ``controller.quorum.fetch.timeout.ms``, after which a follower would start an election."""
    pending_change_ms: int = Field(default=5_000, ge=0)
    """How long CurrentVoters may differ from CommittedVoters before it is a warning."""
    probe_timeout_ms: int = Field(default=2_000, gt=0)
    """How long each node's ApiVersions probe may take."""


class Finding(_Frozen):
    """One problem (or notice) about the quorum."""

    code: FindingCode
    """Stable identifier, e.g. ``FindingCode.VOTER_LAGGING``: match on this, not on the text."""
    severity: Severity
    message: str
    """One line for people."""
    node_id: int | None = None
    """The node it is about, if one."""
    directory_id: DirectoryId | None = None
    """That node's metadata directory id, when it matters (its text form in JSON)."""
    fix: str | None = None
    """The command that fixes it, with the real ids; None when there is no single command."""


class NodeProbe(_Frozen):
    """One node's answer to ApiVersions, or why there was none."""

    node_id: int
    address: str
    """``host:port`` probed."""
    error: str | None = None
    """Why the node did not answer; None when it did."""
    supported_features: dict[str, SupportedVersionRange] = Field(default_factory=dict)
    finalized_features: dict[str, int] = Field(default_factory=dict)
    """Finalized levels as this node reports them."""

    @property
    def reachable(self) -> bool:
        return self.error is None


class QuorumHealth(_Frozen):
    """The result of a quorum check."""

    status: HealthStatus
    fault_tolerance: int
    """How many more voters can fail before the quorum stops (0 when it has already stopped)."""
    findings: tuple[Finding, ...]
    """Most severe first (the model orders them; within a severity, in the order given: causes, each
    voter, before their consequences)."""
    checked_at_ms: int
    """Wall-clock time of the check, epoch milliseconds."""
    quorum: QuorumInfo | None = None
    """The leader's DescribeQuorum answer; None when the quorum could not be read."""
    cluster_id: str | None = None
    probes: tuple[NodeProbe, ...] = ()
    """Each probed node's ApiVersions outcome, by node id."""
    finalized_features: dict[str, int] = Field(default_factory=dict)
    """Finalized feature levels (the leader's, else any node's that answered)."""
    voter_change_since_ms: int | None = None
    """When the current uncommitted voter change was first seen (epoch ms); None when none is."""

    @field_validator("findings")
    @classmethod
    def _most_severe_first(cls, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
        return tuple(sorted(findings, key=lambda f: -f.severity))

    @property
    def exit_code(self) -> int:
        """The monitoring-plugin exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."""
        return int(self.status)

    def healthy_voters(self) -> tuple[int, ...]:
        """Ids of the voters counted as healthy."""
        unhealthy = {f.node_id for f in self.findings if f.code in _VOTER_FAILURES}
        voters = self.quorum.voters if self.quorum is not None else ()
        return tuple(v.replica_id for v in voters if v.replica_id not in unhealthy)


_VOTER_FAILURES = frozenset(
    {FindingCode.LEADER_UNREACHABLE, FindingCode.VOTER_UNREACHABLE, FindingCode.VOTER_LAGGING}
)


def _status(findings: Sequence[Finding]) -> HealthStatus:
    return max((f.severity.status for f in findings), default=HealthStatus.OK)


def majority(voter_count: int) -> int:
    """How many of ``voter_count`` voters must be caught up for the quorum to commit: more than half."""
    return voter_count // 2 + 1


def unreachable(code: FindingCode, message: str, checked_at_ms: int, severity: Severity) -> QuorumHealth:
    """The result when the quorum could not be read at all (``QUORUM_UNREACHABLE``, ``NO_LEADER``)."""
    finding = Finding(code=code, severity=severity, message=message)
    return QuorumHealth(
        status=severity.status, fault_tolerance=0, findings=(finding,), checked_at_ms=checked_at_ms
    )


def voter_change(quorum: QuorumInfo) -> tuple[frozenset[VoterKey], frozenset[VoterKey]] | None:
    """(added, removed) voters of an uncommitted change, as (id, directory id); None when CurrentVoters
    equals CommittedVoters or the server cannot say (DescribeQuorum before v3)."""
    if quorum.committed_voters is None:
        return None
    current = {(v.replica_id, v.replica_directory_id) for v in quorum.voters}
    committed = {(v.replica_id, v.replica_directory_id) for v in quorum.committed_voters}
    if current == committed:
        return None
    return frozenset(current - committed), frozenset(committed - current)


def _names(keys: Iterable[VoterKey]) -> str:
    named = (f"{node_id} ({directory})" for node_id, directory in sorted(keys, key=voter_order))
    return ", ".join(named) or "none"


def leader_state(quorum: QuorumInfo) -> ReplicaState | None:
    """The leader's own entry among the voters; None when it is not one."""
    return next((v for v in quorum.voters if v.replica_id == quorum.leader_id), None)


def _last_fetch(replica: ReplicaState) -> int:
    return replica.last_fetch_timestamp if replica.last_fetch_timestamp is not None else -1


def lag_reason(leader: ReplicaState, replica: ReplicaState, limits: HealthThresholds) -> str | None:
    """Why ``replica`` (a voter or an observer) is behind the leader, or None when it is within the
    thresholds."""
    if replica.last_caught_up_timestamp is None or replica.log_end_offset < 0:
        return "has not fetched from the leader since it took over"
    offsets = leader.log_end_offset - replica.log_end_offset
    if offsets > limits.max_lag_offsets:
        return f"is {offsets} offsets behind the leader (threshold {limits.max_lag_offsets})"
    if leader.last_caught_up_timestamp is not None:
        behind_ms = leader.last_caught_up_timestamp - replica.last_caught_up_timestamp
        if behind_ms > limits.max_lag_ms:
            return f"was last caught up {behind_ms} ms ago (threshold {limits.max_lag_ms} ms)"
    return None


def _voter_findings(
    quorum: QuorumInfo, probes: Mapping[int, NodeProbe], limits: HealthThresholds
) -> list[Finding]:
    leader = leader_state(quorum)
    findings: list[Finding] = []
    for voter in quorum.voters:
        probe = probes.get(voter.replica_id)
        directory = voter.replica_directory_id
        if voter.replica_id == quorum.leader_id:
            if probe is not None and not probe.reachable:
                findings.append(
                    Finding(
                        code=FindingCode.LEADER_UNREACHABLE,
                        severity=Severity.CRITICAL,
                        node_id=voter.replica_id,
                        directory_id=directory,
                        message=f"the leader, node {voter.replica_id}, does not answer ApiVersions at "
                        f"{probe.address}: {probe.error}",
                    )
                )
            continue
        if probe is not None and not probe.reachable:
            findings.append(
                Finding(
                    code=FindingCode.VOTER_UNREACHABLE,
                    severity=Severity.WARNING,
                    node_id=voter.replica_id,
                    directory_id=directory,
                    message=f"voter {voter.replica_id} does not answer ApiVersions at {probe.address}: "
                    f"{probe.error}",
                )
            )
            continue
        behind = lag_reason(leader, voter, limits) if leader is not None else None
        if behind is not None:
            findings.append(
                Finding(
                    code=FindingCode.VOTER_LAGGING,
                    severity=Severity.WARNING,
                    node_id=voter.replica_id,
                    directory_id=directory,
                    message=f"voter {voter.replica_id} {behind}",
                )
            )
    return findings


def _tolerance_findings(quorum: QuorumInfo, healthy: int, connect: str) -> tuple[int, list[Finding]]:
    size = len(quorum.voters)
    needed = majority(size)
    findings: list[Finding] = []
    if healthy < needed:
        findings.append(
            Finding(
                code=FindingCode.NO_MAJORITY,
                severity=Severity.CRITICAL,
                message=f"only {healthy} of {size} voters are caught up and reachable, a majority needs "
                f"{needed}: the quorum cannot commit metadata",
            )
        )
    elif healthy == needed:
        fix = None
        if healthy == size:  # every voter is healthy: only more voters raise the tolerance
            fix = (
                f"kafka-metadata-quorum {connect} --command-config <new-controller.properties> add-controller"
            )
        findings.append(
            Finding(
                code=FindingCode.NO_FAULT_TOLERANCE,
                severity=Severity.WARNING,
                fix=fix,
                message=f"{healthy} of {size} voters are healthy: losing one more stops the quorum",
            )
        )
    if size % 2 == 0:
        findings.append(
            Finding(
                code=FindingCode.EVEN_VOTER_COUNT,
                severity=Severity.WARNING,
                message=f"{size} voters tolerate {size - needed} failure(s), no more than {size - 1} would",
            )
        )
    return max(0, healthy - needed), findings


def _membership_findings(
    quorum: QuorumInfo,
    finalized: Mapping[str, int],
    pending_ms: int | None,
    limits: HealthThresholds,
    connect: str,
) -> list[Finding]:
    findings: list[Finding] = []
    change = voter_change(quorum)
    if change is not None and pending_ms is not None:
        added, removed = change
        late = pending_ms >= limits.pending_change_ms
        findings.append(
            Finding(
                code=FindingCode.VOTER_CHANGE_PENDING if late else FindingCode.VOTER_CHANGE_IN_PROGRESS,
                severity=Severity.WARNING if late else Severity.INFO,
                message=f"a voter change has not committed for {pending_ms} ms (adding {_names(added)}, "
                f"removing {_names(removed)}): a majority of the new voter set must fetch it",
            )
        )
    voters = {v.replica_id: v for v in quorum.voters}
    for observer in quorum.observers:
        voter = voters.get(observer.replica_id)
        if voter is None or ZERO_UUID in (voter.replica_directory_id, observer.replica_directory_id):
            continue
        # A directory just removed from the voter set stays among the leader's observers for a while
        # (Kafka's LeaderState): it is the replaced disk only while it fetches more recently than the voter.
        if _last_fetch(observer) <= _last_fetch(voter):
            continue
        node_id, old, new = observer.replica_id, voter.replica_directory_id, observer.replica_directory_id
        findings.append(
            Finding(
                code=FindingCode.REPLACED_DISK_OBSERVER,
                severity=Severity.WARNING,
                node_id=node_id,
                directory_id=new,
                message=f"node {node_id} fetches as an observer with directory id {new}, but the voter set "
                f"holds it with directory id {old}: its disk was replaced and never swapped in",
                fix=f"kafka-metadata-quorum {connect} remove-controller --controller-id {node_id} "
                f"--controller-directory-id {old} && kafka-metadata-quorum {connect} "
                f"--command-config <controller-{node_id}.properties> add-controller",
            )
        )
    static = quorum.api_version >= 2 and any(
        v.replica_directory_id == ZERO_UUID for v in voters.values()
    )
    if static and finalized.get(KRAFT_VERSION, 0) == 0:
        findings.append(
            Finding(
                code=FindingCode.STATIC_QUORUM,
                severity=Severity.INFO,
                message="the voters have no directory ids (controller.quorum.voters, kraft.version 0): "
                "controllers cannot be added or removed",
                fix=f"kafka-features {connect} upgrade --feature {KRAFT_VERSION}=1",
            )
        )
    return findings


def _feature_findings(
    probes: Iterable[NodeProbe], finalized: Mapping[str, int], connect: str
) -> list[Finding]:
    answered = [p for p in probes if p.reachable and p.supported_features]
    if not answered:
        return []
    findings: list[Finding] = []
    ranges: dict[str, dict[tuple[int, int], list[int]]] = {}
    for probe in answered:
        for name, supported in probe.supported_features.items():
            ranges.setdefault(name, {}).setdefault((supported.min_version, supported.max_version), []).append(
                probe.node_id
            )
    for name, by_range in sorted(ranges.items()):
        if len(by_range) > 1 or sum(len(ids) for ids in by_range.values()) < len(answered):
            seen = "; ".join(
                f"{low}-{high} on {', '.join(map(str, sorted(ids)))}"
                for (low, high), ids in sorted(by_range.items())
            )
            findings.append(
                Finding(
                    code=FindingCode.SUPPORTED_FEATURES_DIFFER,
                    severity=Severity.INFO,
                    message=f"nodes support different {name} levels ({seen}): "
                    "a rolling upgrade is in progress",
                )
            )
    current = finalized.get(METADATA_VERSION)
    tops = [
        p.supported_features[METADATA_VERSION].max_version
        for p in answered
        if METADATA_VERSION in p.supported_features
    ]
    if current is not None and len(tops) == len(answered) and min(tops) > current:
        target = min(tops)
        findings.append(
            Finding(
                code=FindingCode.METADATA_VERSION_UPGRADE_AVAILABLE,
                severity=Severity.INFO,
                message=f"{METADATA_VERSION} is {current}; every node that answered supports {target}",
                fix=f"kafka-features {connect} upgrade --feature {METADATA_VERSION}={target}",
            )
        )
    return findings


def assess(
    quorum: QuorumInfo,
    probes: Sequence[NodeProbe],
    *,
    thresholds: HealthThresholds,
    checked_at_ms: int,
    connect: str,
    cluster_id: str | None = None,
    voter_change_since_ms: int | None = None,
) -> QuorumHealth:
    """Judge a quorum from the leader's DescribeQuorum answer and the nodes' ApiVersions probes.

    ``connect`` is the connection part of the fix commands (``--bootstrap-controller host:port``);
    ``voter_change_since_ms`` when the current uncommitted voter change was first seen."""
    by_id = {p.node_id: p for p in probes}
    leader_probe = by_id.get(quorum.leader_id)
    source = (
        leader_probe
        if leader_probe is not None and leader_probe.reachable
        else next((p for p in probes if p.reachable), None)
    )
    finalized = dict(source.finalized_features) if source is not None else {}
    if quorum.leader_id < 0 or leader_state(quorum) is None:
        findings = [
            Finding(
                code=FindingCode.NO_LEADER,
                severity=Severity.CRITICAL,
                message=f"the quorum reports no leader among its voters (leader id "
                f"{quorum.leader_id}, epoch {quorum.leader_epoch})",
            )
        ]
        return QuorumHealth(
            status=HealthStatus.CRITICAL,
            fault_tolerance=0,
            findings=tuple(findings),
            checked_at_ms=checked_at_ms,
            quorum=quorum,
            cluster_id=cluster_id,
            probes=tuple(probes),
            finalized_features=finalized,
        )
    findings = _voter_findings(quorum, by_id, thresholds)
    failed = {f.node_id for f in findings}
    healthy = sum(1 for v in quorum.voters if v.replica_id not in failed)
    tolerance, more = _tolerance_findings(quorum, healthy, connect)
    findings += more
    since = voter_change_since_ms if voter_change(quorum) is not None else None
    pending_ms = None if since is None else max(0, checked_at_ms - since)
    findings += _membership_findings(quorum, finalized, pending_ms, thresholds, connect)
    findings += _feature_findings(probes, finalized, connect)
    return QuorumHealth(
        status=_status(findings),
        fault_tolerance=tolerance,
        findings=tuple(findings),
        checked_at_ms=checked_at_ms,
        quorum=quorum,
        cluster_id=cluster_id,
        probes=tuple(probes),
        finalized_features=finalized,
        voter_change_since_ms=since,
    )
