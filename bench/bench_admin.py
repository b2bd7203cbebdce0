"""The Admin SDK on loopback: describe_metadata_quorum round trips against a 3-node reference quorum.

Figures (one line each):
  ours        Admin.describe_metadata_quorum(): calls per second, p50 and p99 latency (one connection,
              negotiated once; every call decodes the response into pydantic models)
  async       the same through AsyncAdmin
  kafka-python KafkaAdminClient.describe_metadata_quorum() on the same leader in the same run, with only
              its bootstrap replaced (it cannot bootstrap from a controller; see
              tests/integration/test_kafka_python.py)
  import      ``import kafka_admin_kraft`` (wall time in a fresh interpreter, best of 5), with
              ``kafka_admin_kraft.Admin`` resolved (the client), and with what a first call loads
              (its operation, pydantic and the result models)

Usage: python bench/bench_admin.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft_server.local import HOST, LocalQuorum

ROOT = Path(__file__).resolve().parents[1]


def figures(name: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p50 = statistics.median(samples) * 1e3
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1e3
    print(f"{name:<13} {len(samples) / sum(samples):8.0f} calls/s   p50 {p50:.3f} ms   p99 {p99:.3f} ms")


def timed(call: Callable[[], Any], n: int, warmup: int = 20) -> list[float]:
    for _ in range(warmup):
        call()
    out = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def wait_caught_up(admin: Admin, timeout: float = 60.0) -> int:
    """The leader's id, once every voter has replicated up to the high watermark."""
    deadline = time.monotonic() + timeout
    while True:
        quorum = admin.describe_metadata_quorum()
        if all(v.log_end_offset >= quorum.high_watermark > 0 for v in quorum.voters):
            return quorum.leader_id
        if time.monotonic() > deadline:
            raise TimeoutError(f"voters not caught up after {timeout:g} s: {quorum}")
        time.sleep(0.1)


def import_ms(statement: str) -> float:
    """Best of 5 fresh interpreters (after one that fills a bytecode cache, as an installed package
    has one): wall time of ``statement`` measured inside the process."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        runs = [
            float(
                subprocess.run(
                    [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                    env=env,
                ).stdout
            )
            for _ in range(6)
        ]
    return min(runs[1:]) * 1000


def kafka_python(port: int, n: int) -> list[float] | None:
    try:
        from kafka.admin import KafkaAdminClient
        from kafka.net.manager import KafkaConnectionManager
    except ImportError:
        return None
    KafkaConnectionManager.bootstrap = lambda self, timeout_ms=None, refresh=True: None  # type: ignore
    KafkaConnectionManager.least_loaded_node = lambda self: "bootstrap-0"  # type: ignore
    client = KafkaAdminClient(bootstrap_servers=f"{HOST}:{port}", request_timeout_ms=5000)
    try:
        return timed(client.describe_metadata_quorum, n)
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, LocalQuorum(Path(tmp), 3) as cluster:
        cluster.format().start_all()
        with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=60000) as admin:
            leader = wait_caught_up(admin)
            figures("ours", timed(admin.describe_metadata_quorum, args.calls))

        async def run_async() -> list[float]:
            async with AsyncAdmin(bootstrap_controllers=cluster.bootstrap_servers()) as aadmin:
                for _ in range(20):
                    await aadmin.describe_metadata_quorum()
                out = []
                for _ in range(args.calls):
                    start = time.perf_counter()
                    await aadmin.describe_metadata_quorum()
                    out.append(time.perf_counter() - start)
                return out

        figures("async", asyncio.run(run_async()))
        theirs = kafka_python(cluster.nodes[leader].port, args.calls)
        if theirs is None:
            print("kafka-python  not installed")
        else:
            figures("kafka-python", theirs)
    print(f"import        {import_ms('import kafka_admin_kraft'):.1f} ms  import kafka_admin_kraft")
    print(
        f"import        {import_ms('import kafka_admin_kraft; kafka_admin_kraft.Admin'):.1f} ms  "
        f"with kafka_admin_kraft.Admin resolved"
    )
    first_call = (
        "import kafka_admin_kraft; kafka_admin_kraft.Admin; "
        "import kafka_admin_kraft.client.operations.describe_metadata_quorum as op; op.QuorumInfo"
    )
    print(
        f"import        {import_ms(first_call):.1f} ms  "
        f"with what a first describe_metadata_quorum() loads (pydantic, the result models)"
    )


if __name__ == "__main__":
    main()
