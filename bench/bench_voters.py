"""Voter changes and feature updates on the reference KRaft server (loopback, Kafka's default timeouts).

Figures (first table):
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

Guided versus manual voter changes (second table):
  grow 1 -> 3     a standalone controller with two caught-up observers grown to three voters, as fresh
                  processes: `kafka-metadata-quorum --bootstrap-controller <all> reconcile --voters 1,2,3
                  --yes` (Admin.reconcile_voters in-process when the tool has no `reconcile`) versus
                  `kafka-metadata-quorum --bootstrap-controller <all> --command-config
                  controller-N.properties add-controller` for N = 2 then 3; median over --grow-runs runs
                  of each (the quorum is shrunk back to node 1 between runs, untimed)
  replace         a follower of a 3-voter quorum whose log holds --replace-mb of metadata is killed, its
                  metadata directory wiped and formatted as an observer under a new directory id; from
                  starting the new incarnation until the voter set with the new directory id is
                  committed: Admin.replace_controller() (it waits until the new incarnation is caught
                  up, then removes the old directory and adds the new one) versus `remove-controller`
                  of the old directory, then `add-controller` with the controller's properties (it
                  waits until the leader sees the new incarnation caught up; retried every second on
                  failure). "caught up" is when DescribeQuorum, polled every 50 ms, first shows the new
                  incarnation with the leader's high watermark.

The large logs are written before start-up into node 1's directory, as its first epoch would have
written it (``prewritten_log``): ConfigRecords with 1 KiB values, 100 per batch, in 8 MiB segments;
for the replacement, nodes 2 and 3 then fetch it as observers and are added (timed as "filling").

Usage: python bench/bench_voters.py [--adds N] [--log-mb MB] [--updates N] [--grow-runs N]
                                    [--replace-mb MB]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from prewritten_log import write_first_epoch

from kafka_admin_kraft import Admin, Endpoint, FeatureUpdate
from kafka_admin_kraft.errors import ErrorCode, KafkaAdminError
from kafka_admin_kraft.models import QuorumInfo, UpgradeType
from kafka_admin_kraft.protocol.exceptions import KafkaApiError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.storage import InitialController
from kafka_admin_kraft.voters import DesiredVoter, Progress, VoterKey
from kafka_admin_kraft_server.local import HOST, LISTENER, LocalNode, LocalQuorum

T = TypeVar("T")
QUORUM_TOOL = Path(sys.executable).parent / "kafka-metadata-quorum"
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


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


def standalone(root: Path, size: int, properties: dict[str, str] | None = None) -> LocalQuorum:
    """Node 1 formatted ``--standalone``, the others ``--no-initial-controllers`` (observers); with
    DescribeQuorum v3 (``unstable.api.versions.enable``), whose CommittedVoters the waits read."""
    quorum = LocalQuorum(root, size,
                         properties={"unstable.api.versions.enable": "true", **(properties or {})})
    for node in quorum.nodes.values():
        quorum.write_config(node)
        quorum.format_node(node, [1] if node.node_id == 1 else [])
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
            if exc.code == ErrorCode.DUPLICATE_VOTER:
                wait_for(lambda: node.node_id in {v.replica_id for v in
                                                  client.describe_metadata_quorum().committed_voters or ()},
                         600, "the new voter set to be committed")
                return attempts
            if exc.code != ErrorCode.REQUEST_TIMED_OUT:
                raise
        time.sleep(0.1)


def add_caught_up(root: Path, runs: int) -> list[float]:
    times: list[float] = []
    with standalone(root / "add", 2) as quorum:
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
        if exc.code == ErrorCode.REQUEST_TIMED_OUT:  # the previous change is not committed yet
            return False
        raise
    return True


def prewrite_log(quorum: LocalQuorum, megabytes: int) -> int:
    """Node 1's first epoch with ``megabytes`` of ConfigRecords; returns the log end offset."""
    node = quorum.nodes[1]
    return write_first_epoch(node.partition_dir, [InitialController(1, HOST, node.port, node.directory_id)],
                             LISTENER, megabytes)


def add_after_catch_up(root: Path, megabytes: int) -> tuple[float, int]:
    with standalone(root / "add-large", 2) as quorum:
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


# ---------------------------------------------------------------- guided versus manual voter changes


def quorum_tool(quorum: LocalQuorum, *args: str) -> list[str]:
    return [str(QUORUM_TOOL), "--bootstrap-controller", quorum.bootstrap_servers(), *args]


def run_tool(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV)


def has_reconcile() -> bool:
    return run_tool([str(QUORUM_TOOL), "reconcile", "--help"]).returncode == 0


def desired(quorum: LocalQuorum, *node_ids: int) -> list[DesiredVoter]:
    return [DesiredVoter(i, endpoints=(Endpoint(listener=LISTENER, host=HOST, port=quorum.nodes[i].port),))
            for i in node_ids]


def voters_committed(client: Admin, wanted: set[VoterKey]) -> bool:
    quorum = client.describe_metadata_quorum()
    keys = {(v.replica_id, v.replica_directory_id) for v in quorum.voters}
    committed = {(v.replica_id, v.replica_directory_id) for v in quorum.committed_voters or ()}
    return keys == committed == wanted


def node_keys(quorum: LocalQuorum, *node_ids: int) -> set[VoterKey]:
    return {(i, quorum.nodes[i].directory_id) for i in node_ids}


def grow_guided(quorum: LocalQuorum, client: Admin, cli: bool) -> None:
    if cli:
        result = run_tool(quorum_tool(quorum, "reconcile", "--voters", "1,2,3", "--yes"))
        if result.returncode != 0:
            raise RuntimeError(f"reconcile exited with {result.returncode}:\n{result.stdout}")
    else:
        client.reconcile_voters(desired(quorum, 1, 2, 3), timeout=60)


def grow_manual(quorum: LocalQuorum) -> None:
    for node_id in (2, 3):
        command = quorum_tool(quorum, "--command-config", str(quorum.nodes[node_id].config_path),
                              "add-controller")
        result = run_tool(command)
        if result.returncode != 0:
            raise RuntimeError(f"add-controller exited with {result.returncode}:\n{result.stdout}")


def grow_runs(root: Path, runs: int, cli: bool) -> dict[str, list[float]]:
    """Alternately the guided and the manual grow 1 -> 3 on one quorum, shrunk back between runs."""
    samples: dict[str, list[float]] = {"guided": [], "manual": []}
    with standalone(root / "grow", 3) as quorum:
        quorum.start_all()
        with admin(quorum) as client:
            for run in range(-1, runs):  # run -1 fills the bytecode cache
                for way in ("guided", "manual"):
                    wait_for(lambda: all(caught_up_observer(client, quorum.nodes[i]) for i in (2, 3)), 60,
                             "nodes 2 and 3 caught up as observers")
                    started = time.perf_counter()
                    if way == "guided":
                        grow_guided(quorum, client, cli)
                    else:
                        grow_manual(quorum)
                    took = time.perf_counter() - started
                    wait_for(lambda: voters_committed(client, node_keys(quorum, 1, 2, 3)), 60,
                             "voters 1, 2, 3 committed")
                    if run >= 0:
                        samples[way].append(took)
                    client.reconcile_voters(desired(quorum, 1), timeout=60)
    return samples


class CatchUpWatch(threading.Thread):
    """Polls DescribeQuorum until a controller's new incarnation has the leader's high watermark;
    ``seen_at`` is then the ``time.perf_counter()`` of that answer."""

    def __init__(self, quorum: LocalQuorum, node_id: int, directory_id: Uuid) -> None:
        super().__init__(daemon=True)
        self.quorum, self.node_id, self.directory_id = quorum, node_id, directory_id
        self.seen_at: float | None = None
        self.stop = threading.Event()

    def caught_up(self, info: QuorumInfo) -> bool:
        return any(r.replica_id == self.node_id and r.replica_directory_id == self.directory_id
                   and r.log_end_offset >= info.high_watermark for r in (*info.observers, *info.voters))

    def run(self) -> None:
        with admin(self.quorum) as client:
            while not self.stop.is_set():
                try:
                    if self.caught_up(client.describe_metadata_quorum()):
                        self.seen_at = time.perf_counter()
                        return
                except KafkaAdminError:  # a leader change while the controller is replaced
                    pass
                time.sleep(0.05)


def fill(root: Path, megabytes: int) -> tuple[LocalQuorum, float, float]:
    """Three voters whose log holds ``megabytes``: node 1's log written before start-up, nodes 2 and 3
    fetching it as observers and then added. Returns the quorum (running) and both durations."""
    quorum = standalone(root / "replace", 3)
    started = time.perf_counter()
    end_offset = prewrite_log(quorum, megabytes)
    written = time.perf_counter() - started
    quorum.start_all()
    started = time.perf_counter()
    with admin(quorum) as client:
        wait_for(lambda: client.describe_metadata_quorum().high_watermark >= end_offset, 600,
                 "the pre-written log to be committed")
        client.reconcile_voters(desired(quorum, 1, 2, 3), timeout=600)
    return quorum, written, time.perf_counter() - started


def wipe_follower(quorum: LocalQuorum, client: Admin) -> tuple[LocalNode, str]:
    """Kill a follower, wipe its metadata directory and format it as an observer under a new
    directory id (not started); returns it and its old directory id."""
    leader = client.describe_metadata_quorum().leader_id
    node = quorum.nodes[next(i for i in (3, 2) if i != leader)]
    old = str(node.directory_id)
    quorum.kill(node.node_id)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = Uuid.random()
    quorum.format_node(node, [])
    return node, old


def replace_guided(client: Admin, node: LocalNode) -> float:
    """Admin.replace_controller right after the new incarnation starts; returns when the remove was
    sent (perf_counter)."""
    sent: list[float] = []

    def progress(event: Progress) -> None:
        if event.kind == "step" and not sent:
            sent.append(time.perf_counter())

    client.replace_controller(node.node_id, str(node.directory_id), endpoints=endpoints(node),
                              progress=progress, timeout=600)
    return sent[0]


def replace_manual(quorum: LocalQuorum, node: LocalNode, old: str) -> tuple[float, int]:
    """remove-controller of the old directory, then add-controller until it succeeds; returns when the
    removal was done (perf_counter) and the add-controller attempts."""
    removed = run_tool(quorum_tool(quorum, "remove-controller", "--controller-id", str(node.node_id),
                                   "--controller-directory-id", old))
    if removed.returncode != 0:
        raise RuntimeError(f"remove-controller exited with {removed.returncode}:\n{removed.stdout}")
    removed_at = time.perf_counter()
    attempts = 0
    while True:
        attempts += 1
        added = run_tool(quorum_tool(quorum, "--command-config", str(node.config_path), "add-controller"))
        if added.returncode == 0:
            return removed_at, attempts
        if attempts >= 60:
            raise RuntimeError(f"add-controller kept failing:\n{added.stdout}")
        time.sleep(1)


@dataclass(frozen=True)
class Replacement:
    """Seconds from the new incarnation's start."""

    wall: float
    """Until the voter set with the new directory id was committed."""
    caught_up: float
    """Until DescribeQuorum first showed the new incarnation at the high watermark."""
    removed: float
    """Guided: when the removal of the old directory was sent; manual: when remove-controller ended."""
    add_attempts: int = 0
    """Manual: add-controller runs needed."""


def replacements(root: Path, megabytes: int) -> tuple[dict[str, Replacement], float, float]:
    """One guided and one manual replacement on the same filled quorum, plus the time to write the
    log and the time for nodes 2 and 3 to fetch it and join."""
    quorum, written, fetched = fill(root, megabytes)
    figures: dict[str, Replacement] = {}
    try:
        with admin(quorum) as client:
            for way in ("guided", "manual"):
                wait_for(lambda: voters_committed(client, node_keys(quorum, 1, 2, 3)), 600,
                         "three committed voters")
                node, old = wipe_follower(quorum, client)
                watch = CatchUpWatch(quorum, node.node_id, node.directory_id)
                watch.start()
                started = time.perf_counter()
                quorum.start(node.node_id)
                if way == "guided":
                    removed, attempts = replace_guided(client, node), 0
                else:
                    removed, attempts = replace_manual(quorum, node, old)
                took = time.perf_counter() - started
                wait_for(lambda: voters_committed(client, node_keys(quorum, 1, 2, 3)), 60,
                         "the new directory id committed")
                watch.stop.set()
                watch.join()
                caught_up = (watch.seen_at or float("nan")) - started
                figures[way] = Replacement(took, caught_up, removed - started, attempts)
    finally:
        quorum.close()
    return figures, written, fetched


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--adds", type=int, default=10)
    parser.add_argument("--log-mb", type=int, default=100)
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--grow-runs", type=int, default=5)
    parser.add_argument("--replace-mb", type=int, default=100)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-voters-"))
    ENV["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    rows: list[tuple[str, str]] = []
    try:
        if args.adds > 0:
            times = add_caught_up(root, args.adds)
            rows.append(("AddRaftVoter on a caught-up controller (one voter to two, round trip)",
                         f"median {statistics.median(times) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms "
                         f"({len(times)} runs)"))
        if args.log_mb > 0:
            elapsed, attempts = add_after_catch_up(root, args.log_mb)
            rows.append((f"AddRaftVoter for a new controller that must first fetch a {args.log_mb} MB log: "
                         "from its start to the committed voter set", f"{elapsed:.2f} s ({attempts} calls)"))
        if args.updates > 0:
            times = update_features_round_trips(root, args.updates)
            rows.append(("UpdateFeatures round trip (append + commit on 3 voters)",
                         f"p50 {statistics.median(times) * 1e3:.1f} ms, "
                         f"p99 {percentile(times, 0.99) * 1e3:.1f} ms ({len(times)} calls)"))
        if rows:
            print("| figure | value |\n|---|---:|")
            for name, value in rows:
                print(f"| {name} | {value} |")
            print()
        if args.grow_runs > 0 or args.replace_mb > 0:
            print("| voter change | guided | manual |\n|---|---:|---:|")
        if args.grow_runs > 0:
            cli = has_reconcile()
            grow = grow_runs(root, args.grow_runs, cli)
            guided = "`reconcile --voters 1,2,3 --yes`" if cli else "Admin.reconcile_voters (in-process)"
            print(f"| grow 1 -> 3 (both observers caught up), median of {args.grow_runs}: {guided} vs 2 x "
                  f"`add-controller` | {statistics.median(grow['guided']):.2f} s "
                  f"| {statistics.median(grow['manual']):.2f} s |")
        if args.replace_mb > 0:
            figures, written, fetched = replacements(root, args.replace_mb)
            guided_run, manual_run = figures["guided"], figures["manual"]
            print(f"| replace a wiped controller, {args.replace_mb} MB log: Admin.replace_controller vs "
                  f"`remove-controller` + `add-controller`, from its start to the committed voter set "
                  f"| {guided_run.wall:.2f} s | {manual_run.wall:.2f} s |")
            print(f"| ... of which the new incarnation catching up | {guided_run.caught_up:.2f} s "
                  f"| {manual_run.caught_up:.2f} s |")
            print(f"| ... the old directory removed at | {guided_run.removed:.2f} s (once caught up) "
                  f"| {manual_run.removed:.2f} s (then {manual_run.add_attempts} add-controller run(s)) |")
            print(f"\nlog filled: {args.replace_mb} MB written before start-up in {written:.1f} s; "
                  f"nodes 2 and 3 fetched it and joined in {fetched:.1f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
