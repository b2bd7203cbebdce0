"""What the secured-quorum tests share: the quorum described over a secured listener once the voters'
own secured connections to each other have carried the log."""

from __future__ import annotations

import time
from typing import Any

from integration.harness import Cluster

from kafka_admin_kraft import Admin
from kafka_admin_kraft.models import QuorumInfo


def describe_replicated(cluster: Cluster, how: str, **security: Any) -> QuorumInfo:
    """The quorum through an Admin with ``security``, waited for (30 s) until every voter caught up
    with the high watermark; ``how`` names the voters' connections in the failure message."""
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=30000,
               request_timeout_ms=5000, **security) as admin:
        deadline = time.monotonic() + 30
        while True:
            quorum = admin.describe_metadata_quorum()
            caught_up = all(v.log_end_offset >= quorum.high_watermark > 0 for v in quorum.voters)
            if caught_up or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert quorum.leader_id in cluster.nodes
        assert sorted(v.replica_id for v in quorum.voters) == sorted(cluster.nodes)
        assert caught_up, f"the voters' {how} connections to each other never carried the log"
        assert admin.describe_cluster().cluster_id == cluster.cluster_id
    return quorum
