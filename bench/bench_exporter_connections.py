"""The exporter under a crowd of idle connections, on a local 3-node reference quorum: what scrapes
cost, and what the crowd costs the exporter.

For each descriptor limit of the exporter (--fds: the inherited one, and `ulimit -n 256` as a hostile
probe ran it) and each crowd (0 and --idle connections that connect and never send a byte, opened
2 ms apart before the scrapes, and held through them):

  scrape median, p99   --scrapes GETs of /metrics one after another, each on a fresh connection (as
                       the crowd's arrival would have to be sorted out for it), timeout 5 s; a config
                       gives up after 3 timeouts in a row (counted as failed)
  threads              the exporter's thread count (/proc/<pid>/status Threads, the highest seen)
  CPU busy / idle      the exporter's CPU time per wall second while scraping, and over 3 s with the
                       crowd held and nobody scraping
  crowd opened         how many of the crowd could connect (a config stops opening after 3 connects in
                       a row fail within 1 s)
  crowd held / left    how many of the crowd's connections are still open when the scrapes start (1 s
                       after the last one connected), and at the end (3 s or more later)

Usage: python bench/bench_exporter_connections.py [--idle N] [--scrapes N] [--fds N ...]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import requests
from healthy_quorum import exporter_url, start_healthy

from kafka_admin_kraft_server.local import LocalQuorum

BIN = Path(sys.executable).parent
SCRAPE_TIMEOUT = 5.0
GIVE_UP = 3
PACE = 0.002
"""Seconds between two connections of the crowd."""


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def threads(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


class ThreadWatch:
    """The highest thread count of ``pid``, sampled every 50 ms while it runs."""

    def __init__(self, pid: int) -> None:
        self.pid, self.highest = pid, threads(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(OSError, StopIteration):
                self.highest = max(self.highest, threads(self.pid))

    def __enter__(self) -> ThreadWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def run(bootstrap: str, fds: int | None, idle: int, scrapes: int) -> dict[str, float | str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (fds, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    command = [str(BIN / "kafka-metadata-quorum"), "--bootstrap-controller", bootstrap, "exporter",
               "--listen", "127.0.0.1:0"]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=limit if fds is not None else None)  # noqa: PLW1509 - before exec
    crowd: list[socket.socket] = []
    try:
        url = exporter_url(process)
        address = ("127.0.0.1", urllib.parse.urlsplit(url).port or 0)
        requests.get(url, timeout=30).raise_for_status()
        with ThreadWatch(process.pid) as watch:
            unanswered = 0
            while len(crowd) < idle and unanswered < GIVE_UP:  # paced: a short accept backlog takes each
                try:
                    crowd.append(socket.create_connection(address, timeout=1))
                    unanswered = 0
                except OSError:
                    unanswered += 1
                time.sleep(PACE)
            time.sleep(1)
            held = sum(still_open(sock) for sock in crowd)
            latencies: list[float] = []
            failed = in_a_row = 0
            cpu, started = cpu_seconds(process.pid), time.monotonic()
            for _ in range(scrapes):
                begun = time.perf_counter()
                try:
                    requests.get(url, timeout=SCRAPE_TIMEOUT).raise_for_status()
                    latencies.append(time.perf_counter() - begun)
                    in_a_row = 0
                except requests.RequestException:
                    failed += 1
                    in_a_row += 1
                    if in_a_row == GIVE_UP:
                        failed += scrapes - len(latencies) - failed
                        break
            busy = (cpu_seconds(process.pid) - cpu) / (time.monotonic() - started)
            cpu, started = cpu_seconds(process.pid), time.monotonic()
            time.sleep(3)
            quiet = (cpu_seconds(process.pid) - cpu) / (time.monotonic() - started)
        left = sum(still_open(sock) for sock in crowd)
    finally:
        for sock in crowd:
            sock.close()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
    return {"median": statistics.median(latencies) if latencies else float("nan"),
            "p99": percentile(latencies, 0.99) if latencies else float("nan"), "failed": failed,
            "threads": watch.highest, "busy": busy, "quiet": quiet, "opened": len(crowd), "held": held,
            "left": left}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--idle", type=int, default=1_500, help="idle connections in the crowd")
    parser.add_argument("--scrapes", type=int, default=200, help="scrapes per configuration")
    parser.add_argument("--fds", type=int, nargs="*", default=[256],
                        help="exporter descriptor limits to try besides the inherited one")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < args.idle + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(args.idle + 200, hard), hard))
        soft = min(args.idle + 200, hard)
    rows = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, LocalQuorum(Path(tmp) / "quorum", 3) as quorum:
        bootstrap = start_healthy(quorum)
        for fds in (None, *args.fds):
            for idle in (0, args.idle):
                rows.append((fds, idle, run(bootstrap, fds, idle, args.scrapes)))
    load = max(load, os.getloadavg()[0])

    print(f"| exporter `ulimit -n` | idle connections | scrape median | p99 | failed of {args.scrapes} "
          "| threads | CPU scraping | CPU idle | crowd opened | held | left |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for fds, idle, row in rows:
        print(f"| {fds or soft} | {idle:,} | {float(row['median']) * 1e3:,.1f} ms | "
              f"{float(row['p99']) * 1e3:,.1f} ms | {row['failed']} | {row['threads']} | {row['busy']:.0%} "
              f"| {row['quiet']:.0%} | {row['opened']:,} | {row['held']:,} | {row['left']:,} |")
    print(f"\nload average (1 min) up to {load:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
