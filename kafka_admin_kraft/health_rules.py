"""The health rules of :mod:`kafka_admin_kraft.health`, on plain values: no pydantic.

The rules read what the client saw through read-only views (the protocols below), which the SDK's
models (``QuorumInfo``, ``NodeProbe``, ``HealthThresholds``, ...) and the operations' plain answers
(``kafka_admin_kraft.client.answers`` and the named tuples here) both satisfy, and they produce plain
findings and a plain result, :class:`HealthAnswer`. ``health.QuorumHealth``, what ``Admin.check_quorum``
returns, is validated from that result; ``kafka-metadata-quorum check`` prints it as it is, so that it
never imports pydantic, about half of a fresh process's time (BENCHMARKS.md, "Command-line tools:
start-up to answer"). Named tuples rather than dataclasses, as in ``client.answers``: they cost a
tool's start-up a tenth as much.

The codes, their severities and what each rule judges are listed in :mod:`kafka_admin_kraft.health`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, NamedTuple, Protocol, TypeVar

from kafka_admin_kraft.features import (
    CONTROLLER_UNREGISTRATION_VERSION,
    KRAFT_VERSION,
    LINES,
    METADATA_VERSION,
    NEWEST,
)
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.values import VoterKey, voter_order

__all__ = [
    "BlockerAnswer",
    "FindingAnswer",
    "FindingCode",
    "HealthAnswer",
    "HealthStatus",
    "HealthView",
    "Limits",
    "ProbeAnswer",
    "RegistrationsAnswer",
    "Severity",
    "UpgradeCheckAnswer",
    "assess",
    "blocked_upgrade",
    "fetching",
    "finalized_levels",
    "ghost_controllers",
    "healthy_voters",
    "lag_reason",
    "leader_state",
    "majority",
    "most_severe_first",
    "parse_refusal",
    "unreachable",
    "unregister_controller_fix",
    "upgrade_target",
    "voter_change",
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
    """What a finding is about (the codes of ``kafka_admin_kraft.health``'s docstring). A string whose
    value is its name: ``str()``, f-strings and JSON give the bare code, and it equals that text."""

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
    FEATURE_UPGRADE_BLOCKED = "FEATURE_UPGRADE_BLOCKED"
    GHOST_CONTROLLER_REGISTRATION = "GHOST_CONTROLLER_REGISTRATION"
    FENCED_BROKER_REGISTERED = "FENCED_BROKER_REGISTERED"

    # As enum.StrEnum (Python 3.11+) does: a (str, Enum) member's own str() is "FindingCode.NO_LEADER",
    # and its format() follows the value or that name depending on the Python version.
    def __str__(self) -> str:
        return self.value

    def __format__(self, format_spec: str) -> str:
        return format(self.value, format_spec)


# ------------------------------------------------------------------ what the rules read


class ReplicaView(Protocol):
    """A replica as the leader reports it (``models.ReplicaState``, ``answers.ReplicaAnswer``)."""

    @property
    def replica_id(self) -> int: ...
    @property
    def replica_directory_id(self) -> Uuid: ...
    @property
    def log_end_offset(self) -> int: ...
    @property
    def last_fetch_timestamp(self) -> int | None: ...
    @property
    def last_caught_up_timestamp(self) -> int | None: ...


class QuorumView(Protocol):
    """The leader's DescribeQuorum answer (``models.QuorumInfo``, ``answers.QuorumAnswer``)."""

    @property
    def leader_id(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...
    @property
    def high_watermark(self) -> int: ...
    @property
    def voters(self) -> Sequence[ReplicaView]: ...
    @property
    def committed_voters(self) -> Sequence[ReplicaView] | None: ...
    @property
    def observers(self) -> Sequence[ReplicaView]: ...
    @property
    def api_version(self) -> int: ...


class RangeView(Protocol):
    """A supported range of a feature (``models.SupportedVersionRange``, ``answers.SupportedAnswer``)."""

    @property
    def min_version(self) -> int: ...
    @property
    def max_version(self) -> int: ...


class ProbeView(Protocol):
    """One node's ApiVersions outcome (``health.NodeProbe``, :class:`ProbeAnswer`)."""

    @property
    def node_id(self) -> int: ...
    @property
    def address(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def supported_features(self) -> Mapping[str, RangeView]: ...
    @property
    def finalized_features(self) -> Mapping[str, int]: ...
    @property
    def reachable(self) -> bool: ...


class LimitsView(Protocol):
    """The thresholds (``health.HealthThresholds``, :class:`Limits`)."""

    @property
    def max_lag_offsets(self) -> int: ...
    @property
    def max_lag_ms(self) -> int: ...
    @property
    def pending_change_ms(self) -> int: ...
    @property
    def probe_timeout_ms(self) -> int: ...
    @property
    def fenced_broker_ms(self) -> int: ...


class RegistrationsView(Protocol):
    """The registered nodes (``health.Registrations``, :class:`RegistrationsAnswer`)."""

    @property
    def controllers(self) -> Sequence[int] | None: ...
    @property
    def brokers(self) -> Sequence[int] | None: ...
    @property
    def fenced_brokers(self) -> Mapping[int, int] | None: ...


class UpgradeCheckView(Protocol):
    """The active controller's verdict on an upgrade (``health.UpgradeCheck``,
    :class:`UpgradeCheckAnswer`)."""

    @property
    def feature(self) -> str: ...
    @property
    def level(self) -> int: ...
    @property
    def refusal(self) -> str | None: ...
    @property
    def unchecked(self) -> str | None: ...
    @property
    def denied(self) -> bool: ...


Role = Literal["local controller", "controller", "broker", "unregistered controller"]


class BlockerView(Protocol):
    """The node a refused feature update names (``health.Blocker``, :class:`BlockerAnswer`)."""

    @property
    def feature(self) -> str: ...
    @property
    def level(self) -> int: ...
    @property
    def role(self) -> Role: ...
    @property
    def node_id(self) -> int: ...
    @property
    def supported(self) -> tuple[int, int] | None: ...


class FindingView(Protocol):
    """One finding (``health.Finding``, :class:`FindingAnswer`)."""

    @property
    def code(self) -> FindingCode: ...
    @property
    def severity(self) -> Severity: ...
    @property
    def message(self) -> str: ...
    @property
    def node_id(self) -> int | None: ...
    @property
    def directory_id(self) -> Uuid | None: ...
    @property
    def fix(self) -> str | None: ...


class HealthView(Protocol):
    """A check's result (``health.QuorumHealth``, :class:`HealthAnswer`): what the tools print, and
    what a loop passes back as ``previous``."""

    @property
    def status(self) -> HealthStatus: ...
    @property
    def fault_tolerance(self) -> int: ...
    @property
    def findings(self) -> Sequence[FindingView]: ...
    @property
    def checked_at_ms(self) -> int: ...
    @property
    def quorum(self) -> QuorumView | None: ...
    @property
    def cluster_id(self) -> str | None: ...
    @property
    def probes(self) -> Sequence[ProbeView]: ...
    @property
    def finalized_features(self) -> Mapping[str, int]: ...
    @property
    def voter_change_since_ms(self) -> int | None: ...
    @property
    def registrations(self) -> RegistrationsView | None: ...
    @property
    def upgrade_check(self) -> UpgradeCheckView | None: ...
    @property
    def exit_code(self) -> int: ...
    def healthy_voters(self) -> tuple[int, ...]: ...


# ------------------------------------------------------------------ what they make (the models' field names)


class Limits(NamedTuple):
    """The thresholds of ``health.HealthThresholds`` (its defaults are these), unchecked."""

    max_lag_offsets: int = 10_000
    max_lag_ms: int = 2_000
    pending_change_ms: int = 5_000
    probe_timeout_ms: int = 2_000
    fenced_broker_ms: int = 3_600_000


class FindingAnswer(NamedTuple):
    """One problem or notice (``health.Finding``)."""

    code: FindingCode
    severity: Severity
    message: str
    node_id: int | None = None
    directory_id: Uuid | None = None
    fix: str | None = None


class ProbeAnswer(NamedTuple):
    """One node's answer to ApiVersions, or why there was none (``health.NodeProbe``)."""

    node_id: int
    address: str
    error: str | None = None
    supported_features: Mapping[str, RangeView] = {}
    finalized_features: Mapping[str, int] = {}

    @property
    def reachable(self) -> bool:
        return self.error is None


class RegistrationsAnswer(NamedTuple):
    """The registered nodes DescribeCluster listed (``health.Registrations``)."""

    controllers: tuple[int, ...] | None = None
    brokers: tuple[int, ...] | None = None
    fenced_brokers: Mapping[int, int] | None = None


class UpgradeCheckAnswer(NamedTuple):
    """The active controller's verdict on raising one feature (``health.UpgradeCheck``)."""

    feature: str
    level: int
    refusal: str | None = None
    unchecked: str | None = None
    denied: bool = False


class BlockerAnswer(NamedTuple):
    """The node a refused feature update names (``health.Blocker``)."""

    feature: str
    level: int
    role: Role
    node_id: int
    supported: tuple[int, int] | None = None


class HealthAnswer(NamedTuple):
    """The result of a check (``health.QuorumHealth``, which documents each field)."""

    status: HealthStatus
    fault_tolerance: int
    findings: tuple[FindingAnswer, ...]
    checked_at_ms: int
    quorum: QuorumView | None = None
    cluster_id: str | None = None
    probes: tuple[ProbeView, ...] = ()
    finalized_features: Mapping[str, int] = {}
    voter_change_since_ms: int | None = None
    registrations: RegistrationsView | None = None
    upgrade_check: UpgradeCheckView | None = None

    @property
    def exit_code(self) -> int:
        """The monitoring-plugin exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."""
        return int(self.status)

    def healthy_voters(self) -> tuple[int, ...]:
        """Ids of the voters counted as healthy."""
        return healthy_voters(self)


F = TypeVar("F", bound=FindingView)


def most_severe_first(findings: Iterable[F]) -> tuple[F, ...]:
    """Findings most severe first; within a severity, in the order given (causes, each voter, before
    their consequences)."""
    return tuple(sorted(findings, key=lambda f: -f.severity))


def healthy_voters(health: HealthView) -> tuple[int, ...]:
    """Ids of the voters counted as healthy: those no voter failure is about."""
    unhealthy = {f.node_id for f in health.findings if f.code in _VOTER_FAILURES}
    voters = health.quorum.voters if health.quorum is not None else ()
    return tuple(v.replica_id for v in voters if v.replica_id not in unhealthy)


# ------------------------------------------------------------------ the rules


_VOTER_FAILURES = frozenset(
    {FindingCode.LEADER_UNREACHABLE, FindingCode.VOTER_UNREACHABLE, FindingCode.VOTER_LAGGING}
)


def _status(findings: Sequence[FindingAnswer]) -> HealthStatus:
    return max((f.severity.status for f in findings), default=HealthStatus.OK)


def majority(voter_count: int) -> int:
    """How many of ``voter_count`` voters must be caught up for the quorum to commit: more than half."""
    return voter_count // 2 + 1


def unreachable(code: FindingCode, message: str, checked_at_ms: int, severity: Severity) -> HealthAnswer:
    """The result when the quorum could not be read at all (``QUORUM_UNREACHABLE``, ``NO_LEADER``)."""
    finding = FindingAnswer(code=code, severity=severity, message=message)
    return HealthAnswer(
        status=severity.status, fault_tolerance=0, findings=(finding,), checked_at_ms=checked_at_ms
    )


def voter_change(quorum: QuorumView) -> tuple[frozenset[VoterKey], frozenset[VoterKey]] | None:
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


def leader_state(quorum: QuorumView) -> ReplicaView | None:
    """The leader's own entry among the voters; None when it is not one."""
    return next((v for v in quorum.voters if v.replica_id == quorum.leader_id), None)


def _last_fetch(replica: ReplicaView) -> int:
    return replica.last_fetch_timestamp if replica.last_fetch_timestamp is not None else -1


def lag_reason(leader: ReplicaView, replica: ReplicaView, limits: LimitsView) -> str | None:
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
    quorum: QuorumView, probes: Mapping[int, ProbeView], limits: LimitsView
) -> list[FindingAnswer]:
    leader = leader_state(quorum)
    findings: list[FindingAnswer] = []
    for voter in quorum.voters:
        probe = probes.get(voter.replica_id)
        directory = voter.replica_directory_id
        if voter.replica_id == quorum.leader_id:
            if probe is not None and not probe.reachable:
                findings.append(
                    FindingAnswer(
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
                FindingAnswer(
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
                FindingAnswer(
                    code=FindingCode.VOTER_LAGGING,
                    severity=Severity.WARNING,
                    node_id=voter.replica_id,
                    directory_id=directory,
                    message=f"voter {voter.replica_id} {behind}",
                )
            )
    return findings


def _tolerance_findings(quorum: QuorumView, healthy: int, connect: str) -> tuple[int, list[FindingAnswer]]:
    size = len(quorum.voters)
    needed = majority(size)
    findings: list[FindingAnswer] = []
    if healthy < needed:
        findings.append(
            FindingAnswer(
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
            FindingAnswer(
                code=FindingCode.NO_FAULT_TOLERANCE,
                severity=Severity.WARNING,
                fix=fix,
                message=f"{healthy} of {size} voters are healthy: losing one more stops the quorum",
            )
        )
    if size % 2 == 0:
        findings.append(
            FindingAnswer(
                code=FindingCode.EVEN_VOTER_COUNT,
                severity=Severity.WARNING,
                message=f"{size} voters tolerate {size - needed} failure(s), no more than {size - 1} would",
            )
        )
    return max(0, healthy - needed), findings


def _membership_findings(
    quorum: QuorumView,
    finalized: Mapping[str, int],
    pending_ms: int | None,
    limits: LimitsView,
    connect: str,
) -> list[FindingAnswer]:
    findings: list[FindingAnswer] = []
    change = voter_change(quorum)
    if change is not None and pending_ms is not None:
        added, removed = change
        late = pending_ms >= limits.pending_change_ms
        findings.append(
            FindingAnswer(
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
            FindingAnswer(
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
            FindingAnswer(
                code=FindingCode.STATIC_QUORUM,
                severity=Severity.INFO,
                message="the voters have no directory ids (controller.quorum.voters, kraft.version 0): "
                "controllers cannot be added or removed",
                fix=f"kafka-features {connect} upgrade --feature {KRAFT_VERSION}=1",
            )
        )
    return findings


def finalized_levels(quorum: QuorumView, probes: Sequence[ProbeView]) -> dict[str, int]:
    """The finalized feature levels: the leader's, else those of any node that answered its probe."""
    leader = next((p for p in probes if p.node_id == quorum.leader_id and p.reachable), None)
    source = leader if leader is not None else next((p for p in probes if p.reachable), None)
    return dict(source.finalized_features) if source is not None else {}


def upgrade_target(probes: Iterable[ProbeView], finalized: Mapping[str, int]) -> int | None:
    """The metadata.version every node that answered supports, when it is above the finalized one."""
    answered = [p for p in probes if p.reachable and p.supported_features]
    current = finalized.get(METADATA_VERSION)
    tops = [
        p.supported_features[METADATA_VERSION].max_version
        for p in answered
        if METADATA_VERSION in p.supported_features
    ]
    if current is None or not answered or len(tops) < len(answered) or min(tops) <= current:
        return None
    return min(tops)


def _feature_findings(probes: Iterable[ProbeView]) -> list[FindingAnswer]:
    answered = [p for p in probes if p.reachable and p.supported_features]
    findings: list[FindingAnswer] = []
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
                FindingAnswer(
                    code=FindingCode.SUPPORTED_FEATURES_DIFFER,
                    severity=Severity.INFO,
                    message=f"nodes support different {name} levels ({seen}): "
                    "a rolling upgrade is in progress",
                )
            )
    return findings


# ------------------------------------------------------------------ registrations and blocked upgrades

_REFUSAL = re.compile(
    r"Invalid update version (?P<level>-?\d+) for feature (?P<feature>\S+)\. "
    r"(?:(?P<role>Local controller|Controller|Broker) (?P<id>-?\d+) "
    r"(?:only supports versions (?P<low>\d+)(?:-(?P<high>\d+))?|does not support this feature)"
    r"|controller (?P<unregistered>-?\d+) has not registered)"
)
_ROLES: Mapping[str, Role] = {
    "Local controller": "local controller", "Controller": "controller", "Broker": "broker"
}
UNREGISTRATION_RELEASE = NEWEST.release_string(CONTROLLER_UNREGISTRATION_VERSION)
"""4.4-IV2: the metadata.version from which a controller can be unregistered (KIP-1312)."""


def parse_refusal(message: str) -> BlockerAnswer | None:
    """The node a refused feature update names, from Kafka's message (the top-level one of UpdateFeatures
    v2, ``The update failed for all features since ...``, or a v0/v1 feature's); None when it names none
    (a downgrade, a dependency, an unknown level)."""
    found = _REFUSAL.search(message)
    if found is None:
        return None
    feature, level = found["feature"], int(found["level"])
    if found["unregistered"] is not None:
        return BlockerAnswer(feature=feature, level=level, role="unregistered controller",
                       node_id=int(found["unregistered"]))
    supported = None
    if found["low"] is not None:
        supported = (int(found["low"]), int(found["high"] if found["high"] is not None else found["low"]))
    return BlockerAnswer(feature=feature, level=level, role=_ROLES[found["role"]], node_id=int(found["id"]),
                   supported=supported)


def fetching(quorum: QuorumView, node_id: int, limits: LimitsView) -> bool:
    """Whether ``node_id`` fetches from the leader as an observer (see the module docstring); an
    observer whose times the leader does not report (DescribeQuorum v0) counts as fetching."""
    leader = leader_state(quorum)
    now = leader.last_fetch_timestamp if leader is not None else None
    for observer in quorum.observers:
        last = observer.last_fetch_timestamp
        if observer.replica_id != node_id or (last is not None and last < 0):
            continue
        if last is None or now is None or now < 0 or now - last <= limits.max_lag_ms:
            return True
    return False


def ghost_controllers(
    quorum: QuorumView, registered: Iterable[int], limits: LimitsView
) -> tuple[int, ...]:
    """The registered controllers that are neither voters nor fetching: stopped, or gone for good."""
    voters = {v.replica_id for v in quorum.voters}
    return tuple(
        sorted(n for n in set(registered) if n not in voters and not fetching(quorum, n, limits))
    )


def _level_text(feature: str, level: int) -> str:
    """``metadata.version 33 (4.4-IV2)``, ``group.version 1``."""
    if feature == METADATA_VERSION and NEWEST.is_known_metadata_version(level):
        return f"{feature} {level} ({NEWEST.release_string(level)})"
    return f"{feature} {level}"


def _release_supporting(feature: str, level: int) -> str:
    """The first Kafka line whose nodes support ``level`` of ``feature``."""
    line = next((line for line in LINES.values() if line.supported_range(feature)[1] >= level), None)
    return f"Kafka {line.name} or later" if line is not None else "a Kafka release that supports it"


def unregister_controller_fix(node_id: int, connect: str) -> str:
    """The command that unregisters a controller (Kafka 4.4's ``kafka-cluster``, KIP-1312)."""
    return f"kafka-cluster unregister-controller {connect} --id {node_id}"


def _unregister_broker_fix(node_id: int, connect: str) -> str:
    return f"kafka-cluster unregister {connect} --id {node_id}"


def _restart_fix(node_id: int, cluster_id: str | None, finalized: Mapping[str, int]) -> str:
    """Start a controller again under ``node_id``, on a disk of its own if its old one is gone: the
    format is skipped where the directory is formatted already, joins as an observer on a dynamic
    quorum, and writes the cluster's finalized metadata.version."""
    config = f"<controller-{node_id}.properties>"
    words = ["kafka-storage format", f"--cluster-id {cluster_id or '<cluster id>'}", f"--config {config}"]
    current = finalized.get(METADATA_VERSION)
    if current is not None and NEWEST.is_known_metadata_version(current):
        words.append(f"--release-version {NEWEST.release_string(current)}")
    if finalized.get(KRAFT_VERSION, 0) >= 1:
        words.append("--no-initial-controllers")
    words.append("--ignore-formatted")
    return f"{' '.join(words)} && kafka-server-start {config}"


def _supporting(blocker: BlockerView) -> str:
    if blocker.supported is None:
        return f"not supporting {blocker.feature}"
    low, high = blocker.supported
    return f"supporting {blocker.feature} {low}" + (f"-{high}" if high != low else "")


def _can_unregister(finalized: Mapping[str, int]) -> bool:
    return finalized.get(METADATA_VERSION, 0) >= CONTROLLER_UNREGISTRATION_VERSION


def blocked_upgrade(
    blocker: BlockerView,
    quorum: QuorumView,
    *,
    finalized: Mapping[str, int],
    registrations: RegistrationsView | None,
    cluster_id: str | None,
    connect: str,
    thresholds: LimitsView,
) -> FindingAnswer:
    """``FEATURE_UPGRADE_BLOCKED``: who holds the refused level back, and what clears it. A voter or a
    running node is upgraded (a restarted node registers again, with its new ranges); a stopped
    controller that is no voter is unregistered from metadata.version 4.4-IV2 on, and below that, since
    unregistering needs that very level, started again on a release that supports the level under the
    same node id, until the upgrade is done; a fenced broker is unregistered."""
    node_id, wanted = blocker.node_id, _level_text(blocker.feature, blocker.level)
    release = _release_supporting(blocker.feature, blocker.level)
    fix = None
    if blocker.role == "local controller":
        why = f"the active controller, node {node_id}, {_supporting(blocker)}: upgrade it to {release}"
    elif blocker.role == "unregistered controller":
        why = f"controller {node_id}, a voter that has never registered: start it on {release}"
    elif blocker.role == "broker":
        fenced = registrations is not None and node_id in (registrations.fenced_brokers or {})
        running = registrations is not None and node_id in (registrations.brokers or ())
        registered = f"broker {node_id}, registered as {_supporting(blocker)}"
        if running:
            why = f"{registered}: upgrade it to {release}"
        else:
            fix = _unregister_broker_fix(node_id, connect)
            state = ", and fenced" if fenced else ""
            why = f"{registered}{state}: unregister it if it is gone for good, else upgrade it to {release}"
    else:
        why, fix = _controller_blocker(blocker, quorum, finalized, cluster_id, connect, thresholds)
    return FindingAnswer(
        code=FindingCode.FEATURE_UPGRADE_BLOCKED,
        severity=Severity.INFO,
        node_id=node_id,
        message=f"{wanted} is held back by {why}",
        fix=fix,
    )


def _controller_blocker(
    blocker: BlockerView,
    quorum: QuorumView,
    finalized: Mapping[str, int],
    cluster_id: str | None,
    connect: str,
    thresholds: LimitsView,
) -> tuple[str, str | None]:
    """Who a registered controller holding an upgrade back is, what clears it, and the command if one."""
    node_id = blocker.node_id
    release = _release_supporting(blocker.feature, blocker.level)
    ranges = f"registered as {_supporting(blocker)}"
    registered = f"controller {node_id}, {ranges}"
    if node_id in {v.replica_id for v in quorum.voters}:
        return f"voter {node_id}, {ranges}: restart it on {release} (it registers again)", None
    if fetching(quorum, node_id, thresholds):
        return f"{registered}, which fetches as an observer: upgrade it to {release}, or stop it and " \
               "unregister it", None
    left = f"{registered} but neither a voter nor fetching (a registration left behind)"
    if _can_unregister(finalized):
        return f"{left}: unregister it", unregister_controller_fix(node_id, connect)
    reaches = blocker.feature == METADATA_VERSION and blocker.level >= CONTROLLER_UNREGISTRATION_VERSION
    return (
        f"{left}, which only {METADATA_VERSION} {UNREGISTRATION_RELEASE} lets be unregistered: start "
        f"controller {node_id} again on {release} (it registers again with that release's ranges), "
        f"upgrade, then {'stop it and unregister it' if reaches else 'stop it'}",
        _restart_fix(node_id, cluster_id, finalized),
    )


def _upgrade_findings(
    quorum: QuorumView,
    probes: Sequence[ProbeView],
    finalized: Mapping[str, int],
    check: UpgradeCheckView | None,
    registrations: RegistrationsView | None,
    cluster_id: str | None,
    connect: str,
    limits: LimitsView,
) -> list[FindingAnswer]:
    """The metadata.version upgrade every node that answered supports: available, or held back."""
    target = upgrade_target(probes, finalized)
    if target is None:
        return []
    if check is not None and check.level == target and check.refusal is not None:
        blocker = parse_refusal(check.refusal)
        if blocker is not None:
            return [blocked_upgrade(blocker, quorum, finalized=finalized, registrations=registrations,
                                    cluster_id=cluster_id, connect=connect, thresholds=limits)]
        return [FindingAnswer(
            code=FindingCode.FEATURE_UPGRADE_BLOCKED,
            severity=Severity.INFO,
            message=f"{_level_text(METADATA_VERSION, target)}, which every node that answered supports, is "
            f"refused by the active controller: {check.refusal}",
        )]
    current = finalized[METADATA_VERSION]
    message = f"{METADATA_VERSION} is {current}; every node that answered supports {target}"
    if check is not None and check.unchecked is not None:
        message += f" (not validated by the active controller: {check.unchecked})"
    return [FindingAnswer(
        code=FindingCode.METADATA_VERSION_UPGRADE_AVAILABLE,
        severity=Severity.INFO,
        message=message,
        fix=f"kafka-features {connect} upgrade --feature {METADATA_VERSION}={target}",
    )]


def _registration_findings(
    quorum: QuorumView,
    finalized: Mapping[str, int],
    registrations: RegistrationsView | None,
    limits: LimitsView,
    connect: str,
    checked_at_ms: int,
) -> list[FindingAnswer]:
    """Registered controllers left behind, and registered brokers that are fenced."""
    if registrations is None:
        return []
    findings: list[FindingAnswer] = []
    for node_id in ghost_controllers(quorum, registrations.controllers or (), limits):
        message = (
            f"controller {node_id} is registered but is neither a voter nor fetching from the leader: its "
            "supported feature levels still count when features are upgraded"
        )
        fix = None
        if _can_unregister(finalized):
            fix = unregister_controller_fix(node_id, connect)
        else:
            current = finalized.get(METADATA_VERSION)
            now = f" ({METADATA_VERSION} is {current})" if current is not None else ""
            message += (
                f"; it can be unregistered from {METADATA_VERSION} {UNREGISTRATION_RELEASE} on{now}; until "
                "then, should it hold an upgrade back, a controller of a newer release started under its id "
                "takes its place (FEATURE_UPGRADE_BLOCKED then says how)"
            )
        findings.append(FindingAnswer(
            code=FindingCode.GHOST_CONTROLLER_REGISTRATION, severity=Severity.INFO, node_id=node_id,
            message=message, fix=fix,
        ))
    for node_id, since in sorted((registrations.fenced_brokers or {}).items()):
        fenced_ms = max(0, checked_at_ms - since)
        late = fenced_ms >= limits.fenced_broker_ms
        how_long = f"has been seen fenced for {fenced_ms} ms" if fenced_ms else "is fenced"
        findings.append(FindingAnswer(
            code=FindingCode.FENCED_BROKER_REGISTERED,
            severity=Severity.WARNING if late else Severity.INFO,
            node_id=node_id,
            message=f"broker {node_id} is registered and {how_long}: if it is gone for good, unregister it "
            "(its supported feature levels count when features are upgraded)",
            fix=_unregister_broker_fix(node_id, connect),
        ))
    return findings


def assess(
    quorum: QuorumView,
    probes: Sequence[ProbeView],
    *,
    thresholds: LimitsView,
    checked_at_ms: int,
    connect: str,
    cluster_id: str | None = None,
    voter_change_since_ms: int | None = None,
    registrations: RegistrationsView | None = None,
    upgrade_check: UpgradeCheckView | None = None,
) -> HealthAnswer:
    """Judge a quorum from the leader's DescribeQuorum answer and the nodes' ApiVersions probes.

    ``connect`` is the connection part of the fix commands (``--bootstrap-controller host:port``);
    ``voter_change_since_ms`` when the current uncommitted voter change was first seen;
    ``registrations`` what DescribeCluster listed; ``upgrade_check`` the active controller's verdict on
    the metadata.version ``upgrade_target`` finds, when it was asked."""
    by_id = {p.node_id: p for p in probes}
    finalized = finalized_levels(quorum, probes)
    if quorum.leader_id < 0 or leader_state(quorum) is None:
        findings = [
            FindingAnswer(
                code=FindingCode.NO_LEADER,
                severity=Severity.CRITICAL,
                message=f"the quorum reports no leader among its voters (leader id "
                f"{quorum.leader_id}, epoch {quorum.leader_epoch})",
            )
        ]
        return HealthAnswer(
            status=HealthStatus.CRITICAL,
            fault_tolerance=0,
            findings=tuple(findings),
            checked_at_ms=checked_at_ms,
            quorum=quorum,
            cluster_id=cluster_id,
            probes=tuple(probes),
            finalized_features=finalized,
            registrations=registrations,
        )
    findings = _voter_findings(quorum, by_id, thresholds)
    failed = {f.node_id for f in findings}
    healthy = sum(1 for v in quorum.voters if v.replica_id not in failed)
    tolerance, more = _tolerance_findings(quorum, healthy, connect)
    findings += more
    since = voter_change_since_ms if voter_change(quorum) is not None else None
    pending_ms = None if since is None else max(0, checked_at_ms - since)
    findings += _membership_findings(quorum, finalized, pending_ms, thresholds, connect)
    findings += _feature_findings(probes)
    findings += _upgrade_findings(
        quorum, probes, finalized, upgrade_check, registrations, cluster_id, connect, thresholds
    )
    findings += _registration_findings(quorum, finalized, registrations, thresholds, connect, checked_at_ms)
    return HealthAnswer(
        status=_status(findings),
        fault_tolerance=tolerance,
        findings=most_severe_first(findings),
        checked_at_ms=checked_at_ms,
        quorum=quorum,
        cluster_id=cluster_id,
        probes=tuple(probes),
        finalized_features=finalized,
        voter_change_since_ms=since,
        registrations=registrations,
        upgrade_check=upgrade_check,
    )
