"""A local 3-node reference quorum, started and waited for until ``check`` says it is healthy: what
the benchmarks that measure a steady quorum (health checks, the exporter) start from."""

from __future__ import annotations

import time

from kafka_admin_kraft import Admin
from kafka_admin_kraft_server.local import LocalQuorum

HEALTHY_WITHIN_S = 60.0


def start_healthy(quorum: LocalQuorum) -> str:
    """Format and start every node of ``quorum``, wait until its check exits 0; its bootstrap string."""
    quorum.format().start_all()
    bootstrap = quorum.bootstrap_servers()
    with Admin(bootstrap_controllers=bootstrap, default_api_timeout_ms=60000) as admin:
        deadline = time.monotonic() + HEALTHY_WITHIN_S
        while admin.check_quorum().exit_code != 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the quorum did not become healthy within {HEALTHY_WITHIN_S:g} s")
            time.sleep(0.2)
    return bootstrap
