"""What the benchmarks of a steady quorum and its exporter share: a local 3-node reference quorum
waited for until ``check`` says it is healthy, and the address an exporter they start serves on."""

from __future__ import annotations

import select
import subprocess
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


def exporter_url(process: subprocess.Popen[str]) -> str:
    """The /metrics URL an exporter started with ``--listen 127.0.0.1:0`` announces on its stderr."""
    assert process.stderr is not None
    ready, _, _ = select.select([process.stderr], [], [], 60)
    line = process.stderr.readline() if ready else ""
    if "http://" not in line:
        raise RuntimeError(f"the exporter did not start: {line!r}")
    return line.split()[-1]
