"""Wall time of the drop-in tools, each run as a fresh process exactly as an operator runs it.

Figures (one line each; best, median and worst of N runs):
  status      kafka-metadata-quorum --bootstrap-controller <3 local controllers> describe --status
  replication kafka-metadata-quorum ... describe --replication
  features    kafka-features --bootstrap-controller ... describe
  format      kafka-storage format --standalone (a fresh directory each run, fsyncs included)
  uuid        kafka-storage random-uuid
  help        kafka-metadata-quorum --help
  python      python -c pass (the interpreter's own start-up, for scale)

Every command runs once before it is timed, with bytecode caching on (into a temporary
PYTHONPYCACHEPREFIX, even where PYTHONDONTWRITEBYTECODE is set), as an installed tool runs.

Usage: python bench/bench_cli.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka_admin_kraft import Admin
from kafka_admin_kraft_server.local import HOST, LocalQuorum

BIN = Path(sys.executable).parent


ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def report(name: str, samples: list[float]) -> None:
    ms = sorted(s * 1e3 for s in samples)
    print(f"{name:<12} best {ms[0]:6.0f} ms   median {statistics.median(ms):6.0f} ms   worst {ms[-1]:6.0f} ms"
          f"   ({len(ms)} runs)")


def tool(name: str, *args: str) -> list[str]:
    return [str(BIN / name), *args]


def format_samples(root: Path, runs: int) -> list[float]:
    samples = []
    for run in range(-1, runs):  # run -1 fills the bytecode cache
        directory = root / f"format-{run}"
        config = root / f"format-{run}.properties"
        config.write_text("process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:9093\n"
                          "controller.listener.names=CONTROLLER\n"
                          f"controller.quorum.bootstrap.servers=127.0.0.1:9093\nlog.dirs={directory}\n")
        took = wall(tool("kafka-storage", "format", "--config", str(config),
                         "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg", "--standalone"))
        if run >= 0:
            samples.append(took)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, LocalQuorum(Path(tmp) / "quorum", 3) as quorum:
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        quorum.format().start_all()
        bootstrap = quorum.bootstrap_servers()
        with Admin(bootstrap_controllers=bootstrap, default_api_timeout_ms=60000) as admin:
            deadline = time.monotonic() + 60
            while admin.describe_metadata_quorum().high_watermark <= 0 and time.monotonic() < deadline:
                time.sleep(0.1)
        quorum_tool = tool("kafka-metadata-quorum", "--bootstrap-controller", bootstrap)
        for name, command in (
            ("status", [*quorum_tool, "describe", "--status"]),
            ("replication", [*quorum_tool, "describe", "--replication"]),
            ("features", tool("kafka-features", "--bootstrap-controller", bootstrap, "describe")),
            ("uuid", tool("kafka-storage", "random-uuid")),
            ("help", tool("kafka-metadata-quorum", "--help")),
            ("python", [sys.executable, "-c", "pass"]),
        ):
            wall(command)  # warm the page cache and the bytecode cache
            report(name, [wall(command) for _ in range(args.runs)])
        report("format", format_samples(Path(tmp), args.runs))
    print(f"controllers  {HOST}, 3 reference controllers; python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
