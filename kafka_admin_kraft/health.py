"""Quorum health: what ``Admin.check_quorum`` returns, and the rules that judge a quorum.

The rules are one pure function, :func:`assess`, of what the client saw: the leader's DescribeQuorum
answer, the ApiVersions answer (or failure) of each node it probed, and how long a voter change has
been pending. Each problem becomes a :class:`Finding` with a stable code, a severity, the node and
directory id it is about, one line of explanation and, where one exists, the command that fixes it.
The rules themselves run on plain values in :mod:`kafka_admin_kraft.health_rules` (which the tools
print without importing pydantic); this module holds the models the SDK returns, validated from the
rules' plain results.

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

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kafka_admin_kraft import health_rules as rules
from kafka_admin_kraft.health_rules import (
    FindingCode,
    HealthStatus,
    LimitsView,
    ProbeView,
    QuorumView,
    RegistrationsView,
    Role,
    Severity,
    UpgradeCheckView,
    fetching,
    finalized_levels,
    ghost_controllers,
    lag_reason,
    leader_state,
    majority,
    unregister_controller_fix,
    upgrade_target,
    voter_change,
)
from kafka_admin_kraft.models import DirectoryId, QuorumInfo, SupportedVersionRange

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
    "lag_reason",
    "leader_state",
    "majority",
    "parse_refusal",
    "quorum_health",
    "unreachable",
    "unregister_controller_fix",
    "upgrade_target",
    "voter_change",
]

_DEFAULTS = rules.Limits()


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HealthThresholds(_Frozen):
    """When a voter counts as behind, and how long a check waits for answers."""

    max_lag_offsets: int = Field(default=_DEFAULTS.max_lag_offsets, ge=0)
    """Offsets a voter may be behind the leader's log end offset."""
    max_lag_ms: int = Field(default=_DEFAULTS.max_lag_ms, ge=0)
    """Milliseconds since a voter was last caught up, on the leader's clock; Kafka's default
    ``controller.quorum.fetch.timeout.ms``, after which a follower would start an election."""
    pending_change_ms: int = Field(default=_DEFAULTS.pending_change_ms, ge=0)
    """How long CurrentVoters may differ from CommittedVoters before it is a warning."""
    probe_timeout_ms: int = Field(default=_DEFAULTS.probe_timeout_ms, gt=0)
    """How long each node's ApiVersions probe may take."""
    fenced_broker_ms: int = Field(default=_DEFAULTS.fenced_broker_ms, ge=0)
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
        return rules.most_severe_first(findings)

    @property
    def exit_code(self) -> int:
        """The monitoring-plugin exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."""
        return int(self.status)

    def healthy_voters(self) -> tuple[int, ...]:
        """Ids of the voters counted as healthy."""
        return rules.healthy_voters(self)


def quorum_health(answer: rules.HealthAnswer) -> QuorumHealth:
    """The model of a plain result of the rules (``health_rules.HealthAnswer``, whose field names are
    the model's)."""
    return QuorumHealth.model_validate(answer, from_attributes=True)


def unreachable(code: FindingCode, message: str, checked_at_ms: int, severity: Severity) -> QuorumHealth:
    """The result when the quorum could not be read at all (``QUORUM_UNREACHABLE``, ``NO_LEADER``)."""
    return quorum_health(rules.unreachable(code, message, checked_at_ms, severity))


def parse_refusal(message: str) -> Blocker | None:
    """The node a refused feature update names, from Kafka's message (the top-level one of UpdateFeatures
    v2, ``The update failed for all features since ...``, or a v0/v1 feature's); None when it names none
    (a downgrade, a dependency, an unknown level)."""
    blocker = rules.parse_refusal(message)
    return None if blocker is None else Blocker.model_validate(blocker, from_attributes=True)


def blocked_upgrade(
    blocker: rules.BlockerView,
    quorum: QuorumView,
    *,
    finalized: Mapping[str, int],
    registrations: RegistrationsView | None,
    cluster_id: str | None,
    connect: str,
    thresholds: LimitsView,
) -> Finding:
    """``FEATURE_UPGRADE_BLOCKED``: who holds the refused level back, and what clears it (see
    ``health_rules.blocked_upgrade``)."""
    finding = rules.blocked_upgrade(blocker, quorum, finalized=finalized, registrations=registrations,
                                    cluster_id=cluster_id, connect=connect, thresholds=thresholds)
    return Finding.model_validate(finding, from_attributes=True)


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
) -> QuorumHealth:
    """Judge a quorum from the leader's DescribeQuorum answer and the nodes' ApiVersions probes (see
    ``health_rules.assess``, which this validates into a ``QuorumHealth``)."""
    return quorum_health(rules.assess(
        quorum, probes, thresholds=thresholds, checked_at_ms=checked_at_ms, connect=connect,
        cluster_id=cluster_id, voter_change_since_ms=voter_change_since_ms, registrations=registrations,
        upgrade_check=upgrade_check,
    ))
