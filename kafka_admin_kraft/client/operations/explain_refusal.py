"""explain_refusal: who holds a refused feature update back, and what clears it.

The active controller refuses a level that a registered controller or broker does not support,
running or not, and its message names the first such node (Kafka's
``FeatureControlManager.reasonNotSupported``: ``Controller 3 only supports versions 7-29``). Whether
that node can simply be unregistered depends on what it is, which the message does not say: a voter
(it is upgraded and restarted), an observer that fetches (it runs), a registration left behind (it is
unregistered, from metadata.version 4.4-IV2 on; below, started again on a newer release), a fenced
broker. So the quorum is read (DescribeQuorum), the registrations DescribeCluster lists (as in
``check_quorum``) and the finalized levels (ApiVersions), and ``health.blocked_upgrade`` words it.
A message that names no node is not explained.
"""

from __future__ import annotations

from kafka_admin_kraft.client.core import AdminCore, Op
from kafka_admin_kraft.client.operations.check_quorum import connect_options, describe_registrations
from kafka_admin_kraft.client.operations.describe_features import describe_features
from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_metadata_quorum
from kafka_admin_kraft.health import Finding, HealthThresholds, blocked_upgrade, parse_refusal


def explain_refusal(
    core: AdminCore,
    message: str,
    thresholds: HealthThresholds,
    *,
    connect: str | None,
    timeout: float | None,
) -> Op[Finding | None]:
    blocker = parse_refusal(message)
    if blocker is None:
        return None
    budget = core.config.default_api_timeout if timeout is None else timeout
    deadline = core.clock() + budget
    quorum = yield from describe_metadata_quorum(core, budget)
    cluster, registrations = yield from describe_registrations(core, deadline, None)
    features = yield from describe_features(core, max(0.001, deadline - core.clock()))
    finalized = {name: f.max_version_level for name, f in features.finalized_features.items()}
    return blocked_upgrade(
        blocker,
        quorum,
        finalized=finalized,
        registrations=registrations,
        cluster_id=cluster.cluster_id if cluster is not None else None,
        connect=connect if connect is not None else connect_options(core),
        thresholds=thresholds,
    )
