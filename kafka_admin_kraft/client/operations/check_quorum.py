"""check_quorum: read the quorum the way an operator would, then judge it (``kafka_admin_kraft.health``).

1. DescribeQuorum on the leader (retried until the deadline, as ``describe_metadata_quorum``). No
   answer at all is ``QUORUM_UNREACHABLE`` (UNKNOWN); nodes that answer but name no active controller
   until the deadline are ``NO_LEADER`` (CRITICAL).
2. DescribeCluster for the cluster id and the nodes the client's bootstrap setting reaches
   (controllers, or brokers); a failure here only leaves the cluster id unknown.
3. ApiVersions to every voter and every listed node, each within the probe timeout and never
   retried: does it answer, and which feature levels does it support and see finalized. A voter is
   reached at the address DescribeCluster gave for its id, else at its first DescribeQuorum endpoint.
4. When CurrentVoters differs from CommittedVoters, DescribeQuorum again every 200 ms until the change
   commits or has been pending for the threshold (or the deadline comes), so that a single check
   tells a change in flight from one that is stuck. A ``previous`` result that saw the same change
   carries its first sighting over, so a watch loop need not wait.
"""

from __future__ import annotations

import contextlib

from kafka_admin_kraft.client.config import Address, format_address
from kafka_admin_kraft.client.core import AdminCore, NotYetKnownError, Op, Sleep
from kafka_admin_kraft.client.operations.describe_cluster import describe_cluster
from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_metadata_quorum
from kafka_admin_kraft.errors import (
    KafkaAdminError,
    KafkaConnectionError,
    KafkaTimeoutError,
    LeaderNotAvailableError,
    NotControllerError,
    NotLeaderOrFollowerError,
)
from kafka_admin_kraft.health import (
    FindingCode,
    HealthThresholds,
    NodeProbe,
    QuorumHealth,
    Severity,
    assess,
    unreachable,
    voter_change,
)
from kafka_admin_kraft.models import ClusterDescription, QuorumInfo, SupportedVersionRange

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


def _probe(core: AdminCore, node_id: int, address: Address, timeout: float) -> Op[NodeProbe]:
    where = format_address(address)
    try:
        response = yield from core.probe(address, core.clock() + timeout)
    except KafkaConnectionError as exc:
        return NodeProbe(node_id=node_id, address=where, error=exc.reason)
    except KafkaAdminError as exc:
        return NodeProbe(node_id=node_id, address=where, error=str(exc))
    if response.error_code:
        error = f"ApiVersions error code {response.error_code}"
        return NodeProbe(node_id=node_id, address=where, error=error)
    return NodeProbe(
        node_id=node_id,
        address=where,
        supported_features={
            f.name: SupportedVersionRange(min_version=f.min_version, max_version=f.max_version)
            for f in response.supported_features
        },
        finalized_features={f.name: f.max_version_level for f in response.finalized_features},
    )


def _targets(core: AdminCore, quorum: QuorumInfo, cluster: ClusterDescription | None) -> dict[int, Address]:
    """Where to probe each voter and listed node."""
    listed = {n.node_id: (n.host, n.port) for n in cluster.nodes} if cluster is not None else {}
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


def check_quorum(
    core: AdminCore,
    thresholds: HealthThresholds,
    *,
    probe: bool,
    previous: QuorumHealth | None,
    connect: str | None,
    timeout: float | None,
) -> Op[QuorumHealth]:
    budget = core.config.default_api_timeout if timeout is None else timeout
    deadline = core.clock() + budget
    now_ms = core.wall_clock_ms

    options = connect if connect is not None else connect_options(core)
    try:
        quorum = yield from describe_metadata_quorum(core, budget)
    except KafkaAdminError as exc:
        if _no_leader(exc):
            message = f"no active controller: {exc}"
            return unreachable(FindingCode.NO_LEADER, message, now_ms(), Severity.CRITICAL)
        message = f"cannot read the quorum: {exc}"
        return unreachable(FindingCode.QUORUM_UNREACHABLE, message, now_ms(), Severity.UNKNOWN)
    cluster: ClusterDescription | None = None
    with contextlib.suppress(KafkaAdminError):
        cluster = yield from describe_cluster(core, max(0.001, deadline - core.clock()))
    probes: list[NodeProbe] = []
    if probe:
        for node_id, address in _targets(core, quorum, cluster).items():
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
                quorum = yield from describe_metadata_quorum(core, max(0.001, deadline - core.clock()))
            except KafkaAdminError:
                break
    return assess(
        quorum,
        probes,
        thresholds=thresholds,
        checked_at_ms=now_ms(),
        connect=options,
        cluster_id=cluster.cluster_id if cluster is not None else None,
        voter_change_since_ms=since if voter_change(quorum) == change else now_ms(),
    )
