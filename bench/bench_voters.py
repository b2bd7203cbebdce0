"""Voter changes and feature updates on the reference KRaft server (loopback, Kafka's default timeouts).

Figures (one line each):
  add caught-up   Admin.add_raft_voter() for a controller already fetching as a caught-up observer of a
                  one-voter quorum: the round trip (leader checks, ApiVersions to the new voter, the
                  VotersRecord appended and committed by both voters); median and max over --adds runs
                  (the voter is removed again between runs)
  add 100 MB      a new controller started against a leader whose log holds --log-mb of metadata: time
                  from its start until the voter set with it is committed (it must fetch the snapshot
                  and the log and be caught up first; until then the leader answers REQUEST_TIMED_OUT
                  and the call is retried every 100 ms)
  UpdateFeatures  Admin.update_features() round trip on a 3-voter quorum (the FeatureLevelRecord
                  appended by the active controller and committed by a majority before the answer),
                  p50 and p99 over --updates calls alternating streams.version 0 and 1

The large log is written before start-up into the leader's directory, as its first epoch would have
written it (``prewritten_log``): ConfigRecords with 1 KiB values, 100 per batch, in 8 MiB segments.

Usage: python bench/bench_voters.py [--adds N] [--log-mb MB] [--updates N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from prewritten_log import write_first_epoch

from kafka_admin_kraft import Admin, FeatureUpdate
from kafka_admin_kraft.models import UpgradeType
from kafka_admin_kraft.protocol.exceptions import KafkaApiError
from kafka_admin_kraft.storage import InitialController
from kafka_admin_kraft_server.local import HOST, LISTENER, LocalNode, LocalQuorum

T = TypeVar("T")
REQUEST_TIMED_OUT = 7
DUPLICATE_VOTER = 126


def wait_for(condition: Callable[[], T | None], timeout: float, what: str, interval: float = 0.05) -> T:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
            if value:
                return value
        except (OSError, KafkaApiError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def admin(quorum: LocalQuorum) -> Admin:
    return Admin(bootstrap_controllers=quorum.bootstrap_servers(), request_timeout_ms=30000,
                 default_api_timeout_ms=60000)


def endpoints(node: LocalNode) -> list[dict[str, Any]]:
    return [{"listener": LISTENER, "host": HOST, "port": node.port}]


def standalone_pair(root: Path) -> LocalQuorum:
    """Node 1 formatted ``--standalone``, node 2 ``--no-initial-controllers`` (an observer)."""
    quorum = LocalQuorum(root, 2)
    for node in quorum.nodes.values():
        quorum.write_config(node)
    quorum.format_node(quorum.nodes[1], [1])
    quorum.format_node(quorum.nodes[2], [])
    return quorum


def caught_up_observer(client: Admin, node: LocalNode) -> bool:
    quorum = client.describe_metadata_quorum()
    return any(o.replica_id == node.node_id and o.last_caught_up_timestamp is not None
               and o.last_caught_up_timestamp > 0 and o.log_end_offset >= quorum.high_watermark
               for o in quorum.observers)


def add_until_committed(client: Admin, node: LocalNode) -> int:
    """AddRaftVoter, retried while the leader says REQUEST_TIMED_OUT (the voter is not caught up, or
    the VotersRecord was appended but not committed within the request timeout: a retry then gets
    DUPLICATE_VOTER), until the voter set with ``node`` is committed; returns the attempts made."""
    attempts = 0
    while True:
        attempts += 1
        try:
            client.add_raft_voter(node.node_id, node.directory_id, endpoints(node))
            return attempts
        except KafkaApiError as exc:
            if exc.code == DUPLICATE_VOTER:
                wait_for(lambda: node.node_id in {v.replica_id for v in
                                                  client.describe_metadata_quorum().committed_voters or ()},
                         600, "the new voter set to be committed")
                return attempts
            if exc.code != REQUEST_TIMED_OUT:
                raise
        time.sleep(0.1)


def add_caught_up(root: Path, runs: int) -> list[float]:
    times: list[float] = []
    with standalone_pair(root / "add") as quorum:
        quorum.start_all()
        new = quorum.nodes[2]
        with admin(quorum) as client:
            for _ in range(runs):
                wait_for(lambda: caught_up_observer(client, new), 60, "node 2 caught up as an observer")
                started = time.perf_counter()
                client.add_raft_voter(new.node_id, new.directory_id, endpoints(new))
                times.append(time.perf_counter() - started)
                wait_for(lambda: remove(client, new), 60, "node 2 removed again")
    return times


def remove(client: Admin, node: LocalNode) -> bool:
    try:
        client.remove_raft_voter(node.node_id, node.directory_id)
    except KafkaApiError as exc:
        if exc.code == REQUEST_TIMED_OUT:  # the previous change is not committed yet
            return False
        raise
    return True


def prewrite_log(quorum: LocalQuorum, megabytes: int) -> int:
    """Node 1's first epoch with ``megabytes`` of ConfigRecords; returns the log end offset."""
    node = quorum.nodes[1]
    return write_first_epoch(node.partition_dir, [InitialController(1, HOST, node.port, node.directory_id)],
                             LISTENER, megabytes)


def add_after_catch_up(root: Path, megabytes: int) -> tuple[float, int]:
    with standalone_pair(root / "add-large") as quorum:
        end_offset = prewrite_log(quorum, megabytes)
        quorum.start(1)
        with admin(quorum) as client:
            wait_for(lambda: client.describe_metadata_quorum().high_watermark >= end_offset, 600,
                     "the pre-written log to be committed")
            new = quorum.nodes[2]
            started = time.perf_counter()
            quorum.start(2)
            attempts = add_until_committed(client, new)
            return time.perf_counter() - started, attempts


def update_features_round_trips(root: Path, calls: int, warmup: int = 10) -> list[float]:
    with LocalQuorum(root / "features", 3) as quorum:
        quorum.format().start_all()
        with admin(quorum) as client:
            wait_for(lambda: client.describe_metadata_quorum().high_watermark > 0, 60, "a leader")
            levels = [FeatureUpdate(level=0, upgrade_type=UpgradeType.SAFE_DOWNGRADE), FeatureUpdate(level=1)]
            times = []
            for index in range(warmup + calls):
                started = time.perf_counter()
                result = client.update_features({"streams.version": levels[index % 2]})
                elapsed = time.perf_counter() - started
                assert result["streams.version"].ok
                if index >= warmup:
                    times.append(elapsed)
    return times


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--adds", type=int, default=10)
    parser.add_argument("--log-mb", type=int, default=100)
    parser.add_argument("--updates", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-voters-"))
    try:
        if args.adds > 0:
            times = add_caught_up(root, args.adds)
            print(f"AddRaftVoter, caught-up controller: median {statistics.median(times) * 1e3:.1f} ms, "
                  f"max {max(times) * 1e3:.1f} ms over {len(times)} runs")
        if args.log_mb > 0:
            elapsed, attempts = add_after_catch_up(root, args.log_mb)
            print(f"AddRaftVoter, new controller fetching a {args.log_mb} MB log first: {elapsed:.2f} s "
                  f"from its start to the committed voter set ({attempts} AddRaftVoter calls)")
        if args.updates > 0:
            times = update_features_round_trips(root, args.updates)
            print(f"UpdateFeatures round trip (append + commit), 3 voters: p50 "
                  f"{statistics.median(times) * 1e3:.1f} ms, p99 {percentile(times, 0.99) * 1e3:.1f} ms "
                  f"over {len(times)} calls")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
