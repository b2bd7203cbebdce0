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
* ``FEATURE_UPGRADE_BLOCKED`` (INFO): the metadata.version every node that answered supports is refused
  by the active controller (UpdateFeatures with validateOnly), which weighs the supported ranges of every
  registered controller and broker, running or not (Kafka's ``FeatureControlManager``): names the
  registration that holds it back and what clears it. It takes the place of
  ``METADATA_VERSION_UPGRADE_AVAILABLE``.
* ``GHOST_CONTROLLER_REGISTRATION`` (INFO): a registered controller (KIP-919) that is neither a voter
  nor fetching from the leader: removing a controller from the voters leaves its registration, whose
  supported ranges hold back every later upgrade until UnregisterController (KIP-1312, metadata.version
  4.4-IV2) removes it. Known only with bootstrap controllers, which list the registered controllers.
* ``FENCED_BROKER_REGISTERED`` (WARNING): a registered broker has been seen fenced for longer than the
  threshold (a loop that passes ``previous`` measures it; INFO before that, and in a single check); its
  registration counts in upgrades all the same. Known only with bootstrap servers (DescribeCluster v2,
  KIP-1073).

A node "fetches" when the leader saw it fetch within ``max_lag_ms`` of its own clock (DescribeQuorum's
LastFetchTimestamp: the leader reports its own as the time of the answer); a running controller fetches
every few hundred milliseconds, and Kafka's leader keeps an observer that stopped for five minutes.
Where the leader reports no times (DescribeQuorum v0), an observer counts as fetching.

A voter counts as healthy when it is the leader, or when it is caught up within the thresholds and
its endpoint answered (or was not probed). The fault tolerance is the number of healthy voters beyond
a majority: how many more voters can fail before the quorum stops.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kafka_admin_kraft.features import (
    CONTROLLER_UNREGISTRATION_VERSION,
    KRAFT_VERSION,
    LINES,
    METADATA_VERSION,
    NEWEST,
)
from kafka_admin_kraft.models import DirectoryId, QuorumInfo, ReplicaState, SupportedVersionRange
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft.values import VoterKey, voter_order

__all__ = [
    "Blocker",
    "Finding",
    "FindingCode",
    "HealthStatus",
    "HealthThresholds",
    "NodeProbe",
    "QuorumHealth",
    "Registrations",
    "Severity",
    "UpgradeCheck",
    "assess",
    "blocked_upgrade",
    "fetching",
    "finalized_levels",
    "ghost_controllers",
    "majority",
    "parse_refusal",
    "unreachable",
    "upgrade_target",
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
    FEATURE_UPGRADE_BLOCKED = "FEATURE_UPGRADE_BLOCKED"
    GHOST_CONTROLLER_REGISTRATION = "GHOST_CONTROLLER_REGISTRATION"
    FENCED_BROKER_REGISTERED = "FENCED_BROKER_REGISTERED"

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
    fenced_broker_ms: int = Field(default=3_600_000, ge=0)
    """How long a broker may stay registered and fenced before it is a warning: an hour, longer than a
    broker takes to recover its logs and catch up after a restart."""


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


class Registrations(_Frozen):
    """The nodes registered in the cluster's metadata, as DescribeCluster lists them. Each kind of node
    answers for its own: controllers list the registered controllers (KIP-919), brokers the registered
    brokers, the fenced ones too from DescribeCluster v2 (KIP-1073); None where the client's bootstrap
    kind cannot see them."""

    controllers: tuple[int, ...] | None = None
    """Registered controllers, voters or not, running or not (bootstrap controllers)."""
    brokers: tuple[int, ...] | None = None
    """Registered brokers that are not fenced (bootstrap servers)."""
    fenced_brokers: dict[int, int] | None = None
    """Registered brokers that are fenced (bootstrap servers, brokers of Kafka 4.0 or newer), each with
    when it was first seen fenced, epoch ms (carried from check to check through ``previous``)."""


class UpgradeCheck(_Frozen):
    """The active controller's verdict on raising one feature (UpdateFeatures with validateOnly): it
    checks every registered controller's and broker's supported range, running or not, which a probe
    of the running nodes cannot see."""

    feature: str
    level: int
    refusal: str | None = None
    """Kafka's message when the controller refuses the level; None when it accepts it."""
    unchecked: str | None = None
    """Why the controller could not be asked (a principal without ALTER on the cluster gets
    CLUSTER_AUTHORIZATION_FAILED); None when it answered."""
    denied: bool = False
    """The principal may not alter the cluster: a loop that passes ``previous`` does not ask again for
    this level (a monitoring principal usually may not, and Kafka logs each denial)."""


Role = Literal["local controller", "controller", "broker", "unregistered controller"]


class Blocker(_Frozen):
    """The node a refused feature update names, parsed from Kafka's reason
    (``FeatureControlManager.reasonNotSupported``): the active controller itself (``Local controller
    <id> ...``), a registered broker (``Broker <id> ...``, checked first) or controller (``Controller
    <id> ...``), or a voter of ``controller.quorum.voters`` that never registered."""

    feature: str
    level: int
    role: Role
    node_id: int
    supported: tuple[int, int] | None = None
    """Its supported range; None when it does not support the feature at all, or never registered."""


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
    registrations: Registrations | None = None
    """The registered nodes DescribeCluster listed; None when it could not be read."""
    upgrade_check: UpgradeCheck | None = None
    """The active controller's verdict on the upgrade every node that answered supports, when asked."""

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


def finalized_levels(quorum: QuorumInfo, probes: Sequence[NodeProbe]) -> dict[str, int]:
    """The finalized feature levels: the leader's, else those of any node that answered its probe."""
    leader = next((p for p in probes if p.node_id == quorum.leader_id and p.reachable), None)
    source = leader if leader is not None else next((p for p in probes if p.reachable), None)
    return dict(source.finalized_features) if source is not None else {}


def upgrade_target(probes: Iterable[NodeProbe], finalized: Mapping[str, int]) -> int | None:
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


def _feature_findings(probes: Iterable[NodeProbe]) -> list[Finding]:
    answered = [p for p in probes if p.reachable and p.supported_features]
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


def parse_refusal(message: str) -> Blocker | None:
    """The node a refused feature update names, from Kafka's message (the top-level one of UpdateFeatures
    v2, ``The update failed for all features since ...``, or a v0/v1 feature's); None when it names none
    (a downgrade, a dependency, an unknown level)."""
    found = _REFUSAL.search(message)
    if found is None:
        return None
    feature, level = found["feature"], int(found["level"])
    if found["unregistered"] is not None:
        return Blocker(feature=feature, level=level, role="unregistered controller",
                       node_id=int(found["unregistered"]))
    supported = None
    if found["low"] is not None:
        supported = (int(found["low"]), int(found["high"] if found["high"] is not None else found["low"]))
    return Blocker(feature=feature, level=level, role=_ROLES[found["role"]], node_id=int(found["id"]),
                   supported=supported)


def fetching(quorum: QuorumInfo, node_id: int, limits: HealthThresholds) -> bool:
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
    quorum: QuorumInfo, registered: Iterable[int], limits: HealthThresholds
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


def _supporting(blocker: Blocker) -> str:
    if blocker.supported is None:
        return f"not supporting {blocker.feature}"
    low, high = blocker.supported
    return f"supporting {blocker.feature} {low}" + (f"-{high}" if high != low else "")


def _can_unregister(finalized: Mapping[str, int]) -> bool:
    return finalized.get(METADATA_VERSION, 0) >= CONTROLLER_UNREGISTRATION_VERSION


def blocked_upgrade(
    blocker: Blocker,
    quorum: QuorumInfo,
    *,
    finalized: Mapping[str, int],
    registrations: Registrations | None,
    cluster_id: str | None,
    connect: str,
    thresholds: HealthThresholds,
) -> Finding:
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
    return Finding(
        code=FindingCode.FEATURE_UPGRADE_BLOCKED,
        severity=Severity.INFO,
        node_id=node_id,
        message=f"{wanted} is held back by {why}",
        fix=fix,
    )


def _controller_blocker(
    blocker: Blocker,
    quorum: QuorumInfo,
    finalized: Mapping[str, int],
    cluster_id: str | None,
    connect: str,
    thresholds: HealthThresholds,
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
    quorum: QuorumInfo,
    probes: Sequence[NodeProbe],
    finalized: Mapping[str, int],
    check: UpgradeCheck | None,
    registrations: Registrations | None,
    cluster_id: str | None,
    connect: str,
    limits: HealthThresholds,
) -> list[Finding]:
    """The metadata.version upgrade every node that answered supports: available, or held back."""
    target = upgrade_target(probes, finalized)
    if target is None:
        return []
    if check is not None and check.level == target and check.refusal is not None:
        blocker = parse_refusal(check.refusal)
        if blocker is not None:
            return [blocked_upgrade(blocker, quorum, finalized=finalized, registrations=registrations,
                                    cluster_id=cluster_id, connect=connect, thresholds=limits)]
        return [Finding(
            code=FindingCode.FEATURE_UPGRADE_BLOCKED,
            severity=Severity.INFO,
            message=f"{_level_text(METADATA_VERSION, target)}, which every node that answered supports, is "
            f"refused by the active controller: {check.refusal}",
        )]
    current = finalized[METADATA_VERSION]
    message = f"{METADATA_VERSION} is {current}; every node that answered supports {target}"
    if check is not None and check.unchecked is not None:
        message += f" (not validated by the active controller: {check.unchecked})"
    return [Finding(
        code=FindingCode.METADATA_VERSION_UPGRADE_AVAILABLE,
        severity=Severity.INFO,
        message=message,
        fix=f"kafka-features {connect} upgrade --feature {METADATA_VERSION}={target}",
    )]


def _registration_findings(
    quorum: QuorumInfo,
    finalized: Mapping[str, int],
    registrations: Registrations | None,
    limits: HealthThresholds,
    connect: str,
    checked_at_ms: int,
) -> list[Finding]:
    """Registered controllers left behind, and registered brokers that are fenced."""
    if registrations is None:
        return []
    findings: list[Finding] = []
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
        findings.append(Finding(
            code=FindingCode.GHOST_CONTROLLER_REGISTRATION, severity=Severity.INFO, node_id=node_id,
            message=message, fix=fix,
        ))
    for node_id, since in sorted((registrations.fenced_brokers or {}).items()):
        fenced_ms = max(0, checked_at_ms - since)
        late = fenced_ms >= limits.fenced_broker_ms
        how_long = f"has been seen fenced for {fenced_ms} ms" if fenced_ms else "is fenced"
        findings.append(Finding(
            code=FindingCode.FENCED_BROKER_REGISTERED,
            severity=Severity.WARNING if late else Severity.INFO,
            node_id=node_id,
            message=f"broker {node_id} is registered and {how_long}: if it is gone for good, unregister it "
            "(its supported feature levels count when features are upgraded)",
            fix=_unregister_broker_fix(node_id, connect),
        ))
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
    registrations: Registrations | None = None,
    upgrade_check: UpgradeCheck | None = None,
) -> QuorumHealth:
    """Judge a quorum from the leader's DescribeQuorum answer and the nodes' ApiVersions probes.

    ``connect`` is the connection part of the fix commands (``--bootstrap-controller host:port``);
    ``voter_change_since_ms`` when the current uncommitted voter change was first seen;
    ``registrations`` what DescribeCluster listed; ``upgrade_check`` the active controller's verdict on
    the metadata.version ``upgrade_target`` finds, when it was asked."""
    by_id = {p.node_id: p for p in probes}
    finalized = finalized_levels(quorum, probes)
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
        registrations=registrations,
        upgrade_check=upgrade_check,
    )
