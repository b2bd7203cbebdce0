"""check_quorum: read the quorum the way an operator would, then judge it (``kafka_admin_kraft.health``).

1. DescribeQuorum on the leader (retried until the deadline, as ``describe_metadata_quorum``). No
   answer at all is ``QUORUM_UNREACHABLE`` (UNKNOWN); nodes that answer but name no active controller
   until the deadline are ``NO_LEADER`` (CRITICAL).
2. DescribeCluster for the cluster id and the nodes the client's bootstrap setting reaches: the
   registered controllers (bootstrap controllers, KIP-919), or the registered brokers, fenced ones
   included (bootstrap servers; DescribeCluster v2, KIP-1073, else the unfenced ones alone). A failure
   here only leaves the cluster id and the registrations unknown. A fenced broker keeps the time it
   was first seen fenced from a ``previous`` result that saw it so.
3. ApiVersions to every voter and every other listed node, each within the probe timeout and never
   retried: does it answer, and which feature levels does it support and see finalized. A voter is
   reached at the address DescribeCluster gave for its id, else at its first DescribeQuorum endpoint.
   Fenced brokers and registered controllers that neither vote nor fetch (``health.ghost_controllers``)
   are not running, and are not probed.
4. When CurrentVoters differs from CommittedVoters, DescribeQuorum again every 200 ms until the change
   commits or has been pending for the threshold (or the deadline comes), so that a single check
   tells a change in flight from one that is stuck. A ``previous`` result that saw the same change
   carries its first sighting over, so a watch loop need not wait.
5. When every node that answered supports a higher metadata.version than the finalized one
   (``health.upgrade_target``), UpdateFeatures with validateOnly asks the active controller, within
   the probe timeout, whether it would accept it: it weighs every registration, running or not, which
   the probes cannot see (Kafka's ``FeatureControlManager``). Its refusal, or why it could not be
   asked (CLUSTER_AUTHORIZATION_FAILED for a principal without ALTER on the cluster), goes to
   ``assess`` as an ``UpgradeCheck``; a ``previous`` result denied for the same level is not asked
   again, so that a watch loop with a read-only principal does not fill the authorizer's log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_admin_kraft.client.answers import ClusterAnswer, QuorumAnswer, SupportedAnswer
from kafka_admin_kraft.client.config import Address, format_address
from kafka_admin_kraft.client.core import AdminCore, NotYetKnownError, Op, Sleep
from kafka_admin_kraft.client.operations.describe_cluster import describe_cluster_answer
from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_quorum_answer
from kafka_admin_kraft.errors import (
    ClusterAuthorizationFailedError,
    ErrorCode,
    KafkaAdminError,
    KafkaApiError,
    KafkaConnectionError,
    KafkaTimeoutError,
    LeaderNotAvailableError,
    NotControllerError,
    NotLeaderOrFollowerError,
    UnsupportedOperationError,
)
from kafka_admin_kraft.features import METADATA_VERSION
from kafka_admin_kraft.health_rules import (
    FindingCode,
    HealthAnswer,
    HealthView,
    LimitsView,
    ProbeAnswer,
    RegistrationsAnswer,
    Severity,
    UpgradeCheckAnswer,
    UpgradeCheckView,
    assess,
    finalized_levels,
    ghost_controllers,
    unreachable,
    upgrade_target,
    voter_change,
)

if TYPE_CHECKING:
    from kafka_admin_kraft.health import HealthThresholds, QuorumHealth

PENDING_POLL = 0.2
NO_LEADER_ERRORS = (NotYetKnownError, NotControllerError, NotLeaderOrFollowerError, LeaderNotAvailableError)
"""Errors that mean a node answered but knows no leader yet."""


def connect_options(core: AdminCore) -> str:
    """The tools' connection options for this client's bootstrap setting."""
    option = "--bootstrap-controller" if core.config.bootstrap_controllers else "--bootstrap-server"
    return f"{option} {','.join(format_address(a) for a in core.config.bootstrap)}"


def _no_leader(exc: KafkaAdminError) -> bool:
    cause = exc.last_error if isinstance(exc, KafkaTimeoutError) else exc
    return isinstance(cause, NO_LEADER_ERRORS)


def _probe(core: AdminCore, node_id: int, address: Address, timeout: float) -> Op[ProbeAnswer]:
    where = format_address(address)
    try:
        response = yield from core.probe(address, core.clock() + timeout)
    except KafkaConnectionError as exc:
        return ProbeAnswer(node_id=node_id, address=where, error=exc.reason)
    except KafkaAdminError as exc:
        return ProbeAnswer(node_id=node_id, address=where, error=str(exc))
    if response.error_code:
        error = f"ApiVersions error code {response.error_code}"
        return ProbeAnswer(node_id=node_id, address=where, error=error)
    return ProbeAnswer(
        node_id=node_id,
        address=where,
        supported_features={
            f.name: SupportedAnswer(min_version=f.min_version, max_version=f.max_version)
            for f in response.supported_features
        },
        finalized_features={f.name: f.max_version_level for f in response.finalized_features},
    )


def _targets(
    core: AdminCore, quorum: QuorumAnswer, cluster: ClusterAnswer | None, limits: LimitsView
) -> dict[int, Address]:
    """Where to probe each voter and listed node that runs (step 3)."""
    nodes = cluster.nodes if cluster is not None else ()
    listed = {n.node_id: (n.host, n.port) for n in nodes if not n.is_fenced}
    if core.config.bootstrap_controllers:
        for node_id in ghost_controllers(quorum, listed, limits):
            del listed[node_id]
    targets: dict[int, Address] = {}
    for voter in quorum.voters:
        node = quorum.nodes.get(voter.replica_id)
        address = listed.get(voter.replica_id) or core.known_nodes.get(voter.replica_id)
        if address is None and node is not None and node.endpoints:
            address = (node.endpoints[0].host, node.endpoints[0].port)
        if address is not None:
            targets[voter.replica_id] = address
    for node_id, address in listed.items():
        targets.setdefault(node_id, address)
    return targets


def _describe_cluster(core: AdminCore, deadline: float) -> Op[tuple[ClusterAnswer | None, bool]]:
    """Step 2: DescribeCluster, and whether it listed the fenced brokers."""
    fenced = not core.config.bootstrap_controllers
    try:
        cluster = yield from describe_cluster_answer(
            core, max(0.001, deadline - core.clock()), include_fenced_brokers=fenced
        )
        return cluster, fenced
    except UnsupportedOperationError:  # brokers before Kafka 4.0: DescribeCluster v1 at most
        pass
    except KafkaAdminError:
        return None, False
    try:
        return (yield from describe_cluster_answer(core, max(0.001, deadline - core.clock()))), False
    except KafkaAdminError:
        return None, False


def describe_registrations(
    core: AdminCore, deadline: float, previous: HealthView | None
) -> Op[tuple[ClusterAnswer | None, RegistrationsAnswer | None]]:
    """Step 2: the cluster as DescribeCluster describes it, and the registrations it lists, a fenced
    broker with the time it was first seen fenced; (None, None) when it cannot be read."""
    cluster, listed_fenced = yield from _describe_cluster(core, deadline)
    if cluster is None:
        return None, None
    running = tuple(sorted(n.node_id for n in cluster.nodes if not n.is_fenced))
    if core.config.bootstrap_controllers:
        return cluster, RegistrationsAnswer(controllers=running)
    if not listed_fenced:
        return cluster, RegistrationsAnswer(brokers=running)
    before = previous.registrations if previous is not None else None
    seen = before.fenced_brokers if before is not None and before.fenced_brokers is not None else {}
    now_ms = core.wall_clock_ms()
    fenced = {n.node_id: seen.get(n.node_id, now_ms) for n in cluster.nodes if n.is_fenced}
    return cluster, RegistrationsAnswer(brokers=running, fenced_brokers=fenced)


def _unchecked(exc: KafkaAdminError) -> str:
    if isinstance(exc, ClusterAuthorizationFailedError):
        return f"the principal may not alter the cluster ({exc.name})"
    if isinstance(exc, KafkaApiError):
        return f"{exc.name}: {exc.message}"
    return str(exc)


def _validate(
    core: AdminCore, level: int, deadline: float, limits: LimitsView
) -> Op[UpgradeCheckAnswer]:
    """Step 5: the active controller's verdict on metadata.version ``level``."""
    left = min(deadline - core.clock(), limits.probe_timeout_ms / 1000)
    if left <= 0:
        why = "the check ran out of time"
        return UpgradeCheckAnswer(feature=METADATA_VERSION, level=level, unchecked=why)
    # Only when an upgrade is there to validate: the operation and its arguments are pydantic models.
    from kafka_admin_kraft.client.operations.update_features import update_features
    from kafka_admin_kraft.models import FeatureUpdate

    update = {METADATA_VERSION: FeatureUpdate(level=level)}
    try:
        results = yield from update_features(core, update, validate_only=True, timeout=left)
    except KafkaApiError as exc:  # UpdateFeatures v2 answers one error for all features
        if exc.code == ErrorCode.INVALID_UPDATE_VERSION:
            return UpgradeCheckAnswer(feature=METADATA_VERSION, level=level, refusal=exc.message)
        denied = isinstance(exc, ClusterAuthorizationFailedError)
        return UpgradeCheckAnswer(
            feature=METADATA_VERSION, level=level, unchecked=_unchecked(exc), denied=denied
        )
    except KafkaAdminError as exc:
        return UpgradeCheckAnswer(feature=METADATA_VERSION, level=level, unchecked=_unchecked(exc))
    result = results[METADATA_VERSION]
    if result.ok:
        return UpgradeCheckAnswer(feature=METADATA_VERSION, level=level)
    if result.error_code == ErrorCode.INVALID_UPDATE_VERSION:
        return UpgradeCheckAnswer(feature=METADATA_VERSION, level=level, refusal=result.error_message or "")
    error = result.exception()
    text = _unchecked(error) if isinstance(error, KafkaAdminError) else str(error)
    return UpgradeCheckAnswer(feature=METADATA_VERSION, level=level, unchecked=text)


def check_quorum(
    core: AdminCore,
    thresholds: HealthThresholds,
    *,
    probe: bool,
    previous: QuorumHealth | None,
    connect: str | None,
    timeout: float | None,
) -> Op[QuorumHealth]:
    """The operation, its result the SDK's model."""
    from kafka_admin_kraft.health import quorum_health

    answer = yield from check_quorum_answer(
        core, thresholds, probe=probe, previous=previous, connect=connect, timeout=timeout
    )
    return quorum_health(answer)


def check_quorum_answer(
    core: AdminCore,
    thresholds: LimitsView,
    *,
    probe: bool,
    previous: HealthView | None,
    connect: str | None,
    timeout: float | None,
) -> Op[HealthAnswer]:
    """The operation, its result left plain (what ``kafka-metadata-quorum check`` prints)."""
    budget = core.config.default_api_timeout if timeout is None else timeout
    deadline = core.clock() + budget
    now_ms = core.wall_clock_ms

    options = connect if connect is not None else connect_options(core)
    try:
        quorum = yield from describe_quorum_answer(core, budget)
    except KafkaAdminError as exc:
        if _no_leader(exc):
            message = f"no active controller: {exc}"
            return unreachable(FindingCode.NO_LEADER, message, now_ms(), Severity.CRITICAL)
        message = f"cannot read the quorum: {exc}"
        return unreachable(FindingCode.QUORUM_UNREACHABLE, message, now_ms(), Severity.UNKNOWN)
    cluster, registrations = yield from describe_registrations(core, deadline, previous)
    probes: list[ProbeAnswer] = []
    if probe:
        for node_id, address in _targets(core, quorum, cluster, thresholds).items():
            left = deadline - core.clock()
            if left <= 0:
                break
            wait = min(left, thresholds.probe_timeout_ms / 1000)
            probes.append((yield from _probe(core, node_id, address, wait)))
    change = voter_change(quorum)
    since: int | None = None
    if change is not None:
        since = now_ms()
        if previous is not None and previous.quorum is not None and voter_change(previous.quorum) == change:
            since = previous.voter_change_since_ms or since
        limit = since + thresholds.pending_change_ms
        while voter_change(quorum) == change and now_ms() < limit and core.clock() + PENDING_POLL < deadline:
            yield Sleep(PENDING_POLL)
            try:
                quorum = yield from describe_quorum_answer(core, max(0.001, deadline - core.clock()))
            except KafkaAdminError:
                break
    target = upgrade_target(probes, finalized_levels(quorum, probes))
    upgrade: UpgradeCheckView | None = None
    if target is not None:
        before = previous.upgrade_check if previous is not None else None
        denied = before is not None and before.level == target and before.denied
        upgrade = before if denied else (yield from _validate(core, target, deadline, thresholds))
    return assess(
        quorum,
        probes,
        thresholds=thresholds,
        checked_at_ms=now_ms(),
        connect=options,
        cluster_id=cluster.cluster_id if cluster is not None else None,
        voter_change_since_ms=since if voter_change(quorum) == change else now_ms(),
        registrations=registrations,
        upgrade_check=upgrade,
    )
