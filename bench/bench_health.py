"""Quorum health on a local 3-node reference quorum (loopback, Kafka's default timeouts): what one check
costs, and what the exporter's cache saves when many scrapers ask.

Figures (two markdown tables):
  check, CLI        kafka-metadata-quorum --bootstrap-controller <3 controllers> check, a fresh process
                    each run as a monitoring agent runs it (median and p95 over --runs)
  check, SDK        Admin.check_quorum() in-process on one long-lived client: DescribeQuorum,
                    DescribeCluster and ApiVersions to each node (median and p95 over --calls); again
                    with probe=False (DescribeQuorum and DescribeCluster only)
  exporter          `exporter --listen 127.0.0.1:0` with --scrapers threads scraping /metrics back to back
                    for --seconds: scrape latency (median, p95), scrapes per second, and reads of the
                    quorum per scrape (kraft_quorum_reads_total delta / scrapes); once with the default
                    --min-interval-ms 5000, once with 0 (reads shared only while one is in flight)

Every tool command runs once before it is timed, with bytecode caching on, as an installed tool runs.

Usage: python bench/bench_health.py [--runs N] [--calls N] [--scrapers N] [--seconds S]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
from healthy_quorum import exporter_url, start_healthy
from prometheus_client.parser import text_string_to_metric_families

from kafka_admin_kraft import Admin
from kafka_admin_kraft_server.local import LocalQuorum

BIN = Path(sys.executable).parent
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def cli_checks(bootstrap: str, runs: int) -> list[float]:
    command = [str(BIN / "kafka-metadata-quorum"), "--bootstrap-controller", bootstrap, "check"]
    samples = []
    for run in range(-1, runs):  # run -1 fills the bytecode cache
        started = time.perf_counter()
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV)
        took = time.perf_counter() - started
        if result.returncode != 0:
            raise RuntimeError(f"check exited with {result.returncode} on a healthy quorum:\n{result.stdout}")
        if run >= 0:
            samples.append(took)
    return samples


def sdk_checks(admin: Admin, calls: int, probe: bool) -> list[float]:
    samples = []
    for call in range(-10, calls):
        started = time.perf_counter()
        health = admin.check_quorum(probe=probe)
        took = time.perf_counter() - started
        if health.exit_code != 0:
            raise RuntimeError(f"check_quorum says {health.status.name}: {health.findings}")
        if call >= 0:
            samples.append(took)
    return samples


def reads_total(text: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "kraft_quorum_reads_total":
                return sample.value
    raise RuntimeError("no kraft_quorum_reads_total in the scrape")


class ScrapeRun:
    """``scrapers`` threads scraping back to back for ``seconds``."""

    def __init__(self, url: str, scrapers: int, seconds: float) -> None:
        self.url, self.scrapers, self.seconds = url, scrapers, seconds
        self.latencies: list[float] = []
        self.last_texts: list[str] = []
        self.lock = threading.Lock()

    def scraper(self, until: float) -> None:
        latencies, text = [], ""
        with requests.Session() as session:
            while time.monotonic() < until:
                started = time.perf_counter()
                response = session.get(self.url, timeout=30)
                latencies.append(time.perf_counter() - started)
                response.raise_for_status()
                text = response.text
        with self.lock:
            self.latencies += latencies
            self.last_texts.append(text)

    def run(self) -> float:
        """Returns the wall time the scrapers ran."""
        until = time.monotonic() + self.seconds
        threads = [threading.Thread(target=self.scraper, args=(until,)) for _ in range(self.scrapers)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - started


def exporter_run(bootstrap: str, min_interval_ms: int, scrapers: int, seconds: float) -> dict[str, float]:
    command = [str(BIN / "kafka-metadata-quorum"), "--bootstrap-controller", bootstrap, "exporter",
               "--listen", "127.0.0.1:0", "--min-interval-ms", str(min_interval_ms)]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        url = exporter_url(process)
        before = reads_total(requests.get(url, timeout=30).text)
        run = ScrapeRun(url, scrapers, seconds)
        wall = run.run()
        after = max(reads_total(text) for text in run.last_texts)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    scrapes = len(run.latencies)
    return {"scrapes": scrapes, "per_second": scrapes / wall, "median": statistics.median(run.latencies),
            "p95": percentile(run.latencies, 0.95), "reads": after - before,
            "reads_per_scrape": (after - before) / scrapes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="fresh `check` processes")
    parser.add_argument("--calls", type=int, default=200, help="in-process Admin.check_quorum() calls")
    parser.add_argument("--scrapers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0, help="scraping time per exporter run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, LocalQuorum(Path(tmp) / "quorum", 3) as quorum:
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        bootstrap = start_healthy(quorum)
        with Admin(bootstrap_controllers=bootstrap, default_api_timeout_ms=60000) as admin:
            probed = sdk_checks(admin, args.calls, probe=True)
            unprobed = sdk_checks(admin, args.calls, probe=False)
        cli = cli_checks(bootstrap, args.runs)
        cached = exporter_run(bootstrap, 5000, args.scrapers, args.seconds)
        uncached = exporter_run(bootstrap, 0, args.scrapers, args.seconds)

    print("| check | median | p95 | runs |")
    print("|---|---:|---:|---:|")
    print(f"| `kafka-metadata-quorum ... check`, fresh process | {ms(statistics.median(cli))} "
          f"| {ms(percentile(cli, 0.95))} | {len(cli)} |")
    for name, samples in (("`Admin.check_quorum()`, in-process", probed),
                          ("`Admin.check_quorum(probe=False)`, in-process", unprobed)):
        print(f"| {name} | {ms(statistics.median(samples))} | {ms(percentile(samples, 0.95))} "
              f"| {len(samples)} |")
    print()
    print(f"| exporter, {args.scrapers} scrapers for {args.seconds:g} s | scrapes | scrapes/s | median "
          "| p95 | quorum reads | reads per scrape |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, run in (("`--min-interval-ms 5000` (default)", cached), ("`--min-interval-ms 0`", uncached)):
        print(f"| {name} | {run['scrapes']:,.0f} | {run['per_second']:,.0f} | {ms(run['median'])} "
              f"| {ms(run['p95'])} | {run['reads']:,.0f} | {run['reads_per_scrape']:.4f} |")


if __name__ == "__main__":
    main()
