"""The pytest plugin's quorums: how soon a test gets a three-node quorum with a leader, and how soon a
killed or cut-off leader is replaced, through ``KraftQuorum`` (what the ``kraft_quorum`` fixture
returns) with its default settings (``FAST_ELECTIONS``).

Figures (one line each, median, min and max over --runs):
  ready        ``start_quorum(root, 3)`` on its own: start a fork server, format, fork three nodes,
               wait until a leader answers DescribeQuorum (the first quorum of a pytest run)
  processes    of that, until every node logged "Kafka Server started" (the fork server's imports
               and the nodes' start-up)
  warm         ``start_quorum(root, 3, forkserver=...)`` with a fork server already up, as the
               fixtures start every later quorum of a run
  kill         SIGKILL of the leader until another leader answers
  partition    ``isolate(leader)`` until another leader answers

Usage: python bench/bench_fixtures.py [--runs N]
Aim: ready in under 1.5 s.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import tempfile
import time
from pathlib import Path

from kafka_admin_kraft_server.local import ForkServer
from kafka_admin_kraft_server.testing.quorum import KraftQuorum, start_quorum


def started_at(quorum: KraftQuorum) -> float:
    """When the last node logged that it started (wall clock, from the log's timestamps)."""
    times = []
    for node in quorum.nodes.values():
        line = next(line for line in node.log.splitlines() if "Kafka Server started" in line)
        stamp = datetime.datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f")
        times.append(stamp.timestamp())
    return max(times)


def one_run(root: Path, forkserver: ForkServer) -> dict[str, float]:
    figures = {}
    began = time.monotonic()
    start_quorum(root / "warm", 3, forkserver=forkserver).close()
    figures["warm"] = time.monotonic() - began
    began_wall, began = time.time(), time.monotonic()
    quorum = start_quorum(root / "cold", 3)
    try:
        figures["ready"] = time.monotonic() - began
        figures["processes"] = started_at(quorum) - began_wall
        leader = quorum.wait_for_leader()
        began = time.monotonic()
        quorum.kill(leader)
        quorum.wait_for_leader(exclude={leader})
        figures["kill"] = time.monotonic() - began
        quorum.start(leader)
        leader = quorum.wait_for_leader()
        quorum.wait_caught_up()
        began = time.monotonic()
        quorum.isolate(leader)
        quorum.wait_for_leader(exclude={leader})
        figures["partition"] = time.monotonic() - began
    finally:
        quorum.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        forkserver = ForkServer(Path(tmp))
        try:
            start_quorum(Path(tmp) / "warm-up", 1, forkserver=forkserver).close()
            for index in range(args.runs):
                runs.append(one_run(Path(tmp) / f"run-{index}", forkserver))
        finally:
            forkserver.close()
    for figure in ("ready", "processes", "warm", "kill", "partition"):
        values = [run[figure] for run in runs]
        print(f"{figure:10} median {statistics.median(values):.2f} s, min {min(values):.2f} s, "
              f"max {max(values):.2f} s ({', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
