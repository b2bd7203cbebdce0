"""``Admin.check_quorum`` against real reference quorums: each finding produced by doing to real
processes what happens in production (kill, pause, wipe a disk, leave a voter change uncommitted,
format an older release), with the exact codes, severities, ids, fault tolerance and fix commands;
where a fix is printed, it is run through the console scripts and the finding must go away."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
from collections.abc import Callable

from console_scripts import console_script

from integration.harness import FAST_ELECTIONS, UNSTABLE_API_VERSIONS, Cluster, wait_until
from integration.test_voters import endpoints, format_observer, observer_seen
from kafka_admin_kraft import Admin
from kafka_admin_kraft.features import default_levels
from kafka_admin_kraft.health import Finding, HealthStatus, HealthThresholds, QuorumHealth, Severity
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.storage import bootstrap_records, write_bootstrap_checkpoint

Make = Callable[..., Cluster]
FAST = {**FAST_ELECTIONS, "controller.quorum.request.timeout.ms": "2000"}
SLOW_RESIGN = {**FAST, "controller.quorum.fetch.timeout.ms": "3000"}
"""A leader resigns 1.5 fetch timeouts after a majority last fetched from it (Kafka's check-quorum):
4.5 s instead of 1.5 s, so that a quorum without a majority can be checked before its leader goes."""
OLD_METADATA_VERSION = 27
"""4.1-IV1: below the 4.4-IV2 (33) every reference node supports."""


def start(make_cluster: Make, size: int, **options: object) -> tuple[Cluster, int]:
    cluster = make_cluster(size, **options).format().start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader, 30)
    return cluster, leader


def admin(cluster: Cluster) -> Admin:
    return Admin(bootstrap_controllers=cluster.bootstrap_servers(), request_timeout_ms=2000,
                 default_api_timeout_ms=10000)


def connect(cluster: Cluster) -> str:
    """The connection options the fix commands repeat for ``admin(cluster)``."""
    return f"--bootstrap-controller {cluster.bootstrap_servers()}"


def summary(health: QuorumHealth) -> list[tuple[str, Severity, int | None]]:
    return [(f.code, f.severity, f.node_id) for f in health.findings]


def finding(health: QuorumHealth, code: str) -> Finding:
    found = [f for f in health.findings if f.code == code]
    assert len(found) == 1, summary(health)
    return found[0]


def has(*codes: str) -> Callable[[QuorumHealth], bool]:
    return lambda health: set(codes) <= {f.code for f in health.findings}


def check_until(client: Admin, accept: Callable[[QuorumHealth], bool], what: str, within: float = 20,
                **options: object) -> QuorumHealth:
    """Check (with ``options``) every 0.2 s until ``accept`` holds for a result; return that result."""
    last: QuorumHealth | None = None

    def accepted() -> QuorumHealth | None:
        nonlocal last
        last = client.check_quorum(**options)
        return last if accept(last) else None

    try:
        return wait_until(accepted, within, what, interval=0.2)
    except AssertionError as exc:
        found = [(f.code, f.message) for f in last.findings] if last is not None else None
        raise AssertionError(f"{exc}; the last check found {found}") from None


def fix_commands(fix: str, **placeholders: str) -> list[list[str]]:
    """A printed fix (commands joined by ``&&``) as argument lists for the installed console scripts,
    with its ``<...>`` placeholders filled in."""
    for placeholder, value in placeholders.items():
        fix = fix.replace(placeholder, value)
    commands = []
    for command in fix.split(" && "):
        tool, *args = shlex.split(command)
        commands.append([console_script(tool), *args])
    return commands


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def run_fix(fix: str, **placeholders: str) -> None:
    for command in fix_commands(fix, **placeholders):
        result = run(command)
        assert result.returncode == 0, f"{command}: {result.stdout}{result.stderr}"


def test_voters_paused_and_lost_one_by_one(make_cluster: Make) -> None:
    """OK -> a follower paused (lagging, and unreachable once probed) -> resumed, OK -> one follower
    killed (WARNING) -> two (CRITICAL, no majority) -> the leader resigns (no leader) -> all gone
    (UNKNOWN)."""
    cluster, leader = start(make_cluster, 3, properties=dict(SLOW_RESIGN))
    first, second = sorted(i for i in cluster.nodes if i != leader)
    directory = {i: n.directory_id for i, n in cluster.nodes.items()}
    with admin(cluster) as client:
        health = client.check_quorum(timeout=10)
        assert (health.status, health.exit_code, health.fault_tolerance, health.findings) == (
            HealthStatus.OK, 0, 1, ())
        assert health.quorum is not None and health.quorum.leader_id == leader
        assert sorted(health.healthy_voters()) == [1, 2, 3]
        assert health.cluster_id == cluster.cluster_id
        assert sorted((p.node_id, p.address, p.reachable) for p in health.probes) == [
            (i, n.address, True) for i, n in sorted(cluster.nodes.items())]
        assert health.finalized_features["metadata.version"] == 33
        assert health.finalized_features["kraft.version"] == 1

        process = cluster.nodes[first].process
        assert process is not None
        limits = HealthThresholds(max_lag_ms=1000, probe_timeout_ms=300)
        os.kill(process.pid, signal.SIGSTOP)
        try:
            health = check_until(client, has("VOTER_LAGGING"), f"voter {first} to lag", probe=False,
                                 thresholds=limits, timeout=5)
            assert (health.status, health.fault_tolerance, health.probes) == (HealthStatus.WARNING, 0, ())
            assert summary(health) == [("VOTER_LAGGING", Severity.WARNING, first),
                                       ("NO_FAULT_TOLERANCE", Severity.WARNING, None)]
            lagging = health.findings[0]
            assert lagging.directory_id == directory[first]
            assert lagging.message.startswith(f"voter {first} was last caught up ")
            assert lagging.message.endswith(" ms ago (threshold 1000 ms)")
            assert health.findings[1].fix is None  # a voter is down: no command adds tolerance
            assert sorted(health.healthy_voters()) == sorted({1, 2, 3} - {first})

            health = client.check_quorum(thresholds=limits, timeout=5)
            assert summary(health) == [("VOTER_UNREACHABLE", Severity.WARNING, first),
                                       ("NO_FAULT_TOLERANCE", Severity.WARNING, None)]
            unreachable = health.findings[0]
            assert unreachable.directory_id == directory[first]
            assert unreachable.message == (f"voter {first} does not answer ApiVersions at "
                                           f"{cluster.nodes[first].address}: no response within 0.3 s")
        finally:
            os.kill(process.pid, signal.SIGCONT)
        check_until(client, lambda h: h.status is HealthStatus.OK, f"voter {first} to catch up again",
                    timeout=5)

        cluster.kill(first)
        health = client.check_quorum(timeout=5)
        assert (health.status, health.fault_tolerance) == (HealthStatus.WARNING, 0)
        assert summary(health) == [("VOTER_UNREACHABLE", Severity.WARNING, first),
                                   ("NO_FAULT_TOLERANCE", Severity.WARNING, None)]
        assert health.findings[0].directory_id == directory[first]
        assert health.findings[0].message.startswith(f"voter {first} does not answer ApiVersions at "
                                                     f"{cluster.nodes[first].address}: ")

        cluster.kill(second)
        health = client.check_quorum(timeout=5)
        assert (health.status, health.exit_code, health.fault_tolerance) == (HealthStatus.CRITICAL, 2, 0)
        assert summary(health) == [("NO_MAJORITY", Severity.CRITICAL, None),
                                   ("VOTER_UNREACHABLE", Severity.WARNING, first),
                                   ("VOTER_UNREACHABLE", Severity.WARNING, second)]
        assert health.findings[0].message == ("only 1 of 3 voters are caught up and reachable, a majority "
                                              "needs 2: the quorum cannot commit metadata")
        assert health.healthy_voters() == (leader,)

        health = check_until(client, has("NO_LEADER"), f"node {leader} to resign", timeout=1)
        assert (health.status, health.exit_code, health.fault_tolerance, health.quorum) == (
            HealthStatus.CRITICAL, 2, 0, None)
        assert summary(health) == [("NO_LEADER", Severity.CRITICAL, None)]

        cluster.kill(leader)
        health = client.check_quorum(timeout=1)
        assert (health.status, health.exit_code, health.quorum) == (HealthStatus.UNKNOWN, 3, None)
        assert summary(health) == [("QUORUM_UNREACHABLE", Severity.UNKNOWN, None)]
        assert "connection refused" in health.findings[0].message


def test_replaced_disk_left_as_an_observer_and_its_fix(make_cluster: Make) -> None:
    """A follower's metadata directory is wiped and formatted anew (a new directory id): it comes back
    as an observer while the voter set still names its old directory. The printed fix is run in its
    two halves: after remove-controller, two voters without tolerance; after add-controller, OK."""
    cluster, leader = start(make_cluster, 3, properties=dict(FAST))
    victim = max(i for i in cluster.nodes if i != leader)
    node = cluster.nodes[victim]
    old_directory = node.directory_id
    cluster.kill(victim)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = Uuid.random()
    format_observer(cluster, node)
    cluster.start(victim)
    with admin(cluster) as client:
        health = check_until(client, has("REPLACED_DISK_OBSERVER", "VOTER_LAGGING"),
                             f"node {victim} to fetch as an observer", timeout=5)
        assert (health.status, health.fault_tolerance) == (HealthStatus.WARNING, 0)
        assert sorted(summary(health)) == [("NO_FAULT_TOLERANCE", Severity.WARNING, None),
                                           ("REPLACED_DISK_OBSERVER", Severity.WARNING, victim),
                                           ("VOTER_LAGGING", Severity.WARNING, victim)]
        assert finding(health, "VOTER_LAGGING").directory_id == old_directory
        replaced = finding(health, "REPLACED_DISK_OBSERVER")
        assert replaced.directory_id == node.directory_id
        assert replaced.message == (
            f"node {victim} fetches as an observer with directory id {node.directory_id}, but the voter set "
            f"holds it with directory id {old_directory}: its disk was replaced and never swapped in")
        assert replaced.fix == (
            f"kafka-metadata-quorum {connect(cluster)} remove-controller --controller-id {victim} "
            f"--controller-directory-id {old_directory} && kafka-metadata-quorum {connect(cluster)} "
            f"--command-config <controller-{victim}.properties> add-controller")

        remove, add = replaced.fix.split(" && ")
        run_fix(remove)
        health = check_until(client, lambda h: len(h.quorum.voters) == 2 if h.quorum else False,
                             f"the old directory of node {victim} to leave the voters", timeout=5)
        assert (health.status, health.fault_tolerance) == (HealthStatus.WARNING, 0)
        assert summary(health) == [("NO_FAULT_TOLERANCE", Severity.WARNING, None),
                                   ("EVEN_VOTER_COUNT", Severity.WARNING, None)]
        no_tolerance = health.findings[0]
        assert no_tolerance.fix == (f"kafka-metadata-quorum {connect(cluster)} "
                                    "--command-config <new-controller.properties> add-controller")
        run_fix(add, **{f"<controller-{victim}.properties>": str(node.config_path)})
        health = check_until(client, lambda h: h.status is HealthStatus.OK, "three healthy voters again",
                             timeout=5)
        assert (health.fault_tolerance, health.findings) == (1, ())
        assert health.quorum is not None
        assert {(v.replica_id, v.replica_directory_id) for v in health.quorum.voters} == {
            (i, n.directory_id) for i, n in cluster.nodes.items()}


def test_static_quorum_of_four_and_the_kraft_version_fix(make_cluster: Make) -> None:
    """``controller.quorum.voters`` with four voters: an even count (WARNING) and a static quorum
    (INFO, fixed by upgrading kraft.version, after which the voters have directory ids)."""
    cluster, _ = start(make_cluster, 4, dynamic=False, properties=dict(FAST))
    with admin(cluster) as client:
        health = client.check_quorum(timeout=10)
        assert (health.status, health.exit_code, health.fault_tolerance) == (HealthStatus.WARNING, 1, 1)
        assert summary(health) == [("EVEN_VOTER_COUNT", Severity.WARNING, None),
                                   ("STATIC_QUORUM", Severity.INFO, None)]
        even, static = health.findings
        assert even.message == "4 voters tolerate 1 failure(s), no more than 3 would"
        assert even.fix is None
        assert static.fix == f"kafka-features {connect(cluster)} upgrade --feature kraft.version=1"
        assert "kraft.version" not in health.finalized_features  # level 0 is not listed
        assert health.quorum is not None
        assert {v.replica_directory_id for v in health.quorum.voters} == {ZERO_UUID}

        [upgrade] = fix_commands(static.fix)
        # Kafka refuses until every voter has told the leader its kraft.version range (UpdateRaftVoter)
        wait_until(lambda: run(upgrade).returncode == 0, 20, "the kraft.version upgrade", interval=0.3)
        health = check_until(client, lambda h: not has("STATIC_QUORUM")(h), "kraft.version 1", timeout=10)
        assert summary(health) == [("EVEN_VOTER_COUNT", Severity.WARNING, None)]
        assert health.finalized_features["kraft.version"] == 1
        assert health.quorum is not None
        assert {(v.replica_id, v.replica_directory_id) for v in health.quorum.voters} == {
            (i, n.directory_id) for i, n in cluster.nodes.items()}


def test_voter_change_that_cannot_commit(make_cluster: Make) -> None:
    """Node 4 is added while two of three voters are down: CurrentVoters names it, CommittedVoters
    does not. One check that gives up before the threshold sees the change in progress (INFO); the
    next, given that result, counts from the first sighting and finds it pending (WARNING)."""
    cluster = make_cluster(4, properties={**SLOW_RESIGN, **UNSTABLE_API_VERSIONS})  # CommittedVoters
    for node in cluster.nodes.values():
        cluster.write_config(node)
    for node_id in (1, 2, 3):
        cluster.format_node(cluster.nodes[node_id], initial_controllers=[1, 2, 3])
    new = cluster.nodes[4]
    format_observer(cluster, new)
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(30, candidates=[1, 2, 3])
    cluster.wait_caught_up(leader, 30)
    wait_until(observer_seen(cluster, new), 20, "node 4 fetching as an observer")
    down = sorted(i for i in (1, 2, 3) if i != leader)
    for node_id in down:
        cluster.kill(node_id)
    with Admin(bootstrap_controllers=cluster.nodes[leader].address, request_timeout_ms=2000,
               default_api_timeout_ms=10000) as client:
        client.add_raft_voter(4, new.directory_id, endpoints(new), ack_when_committed=False)
        first = client.check_quorum(thresholds=HealthThresholds(pending_change_ms=60_000), timeout=1)
        change = finding(first, "VOTER_CHANGE_IN_PROGRESS")
        assert change.severity is Severity.INFO
        assert first.voter_change_since_ms is not None
        assert first.quorum is not None and first.quorum.committed_voters is not None
        assert sorted(v.replica_id for v in first.quorum.voters) == [1, 2, 3, 4]
        assert sorted(v.replica_id for v in first.quorum.committed_voters) == [1, 2, 3]

        health = client.check_quorum(thresholds=HealthThresholds(pending_change_ms=500), previous=first,
                                     timeout=5)
        assert health.voter_change_since_ms == first.voter_change_since_ms
        assert (health.status, health.fault_tolerance) == (HealthStatus.CRITICAL, 0)
        assert summary(health) == [("NO_MAJORITY", Severity.CRITICAL, None),
                                   ("VOTER_UNREACHABLE", Severity.WARNING, down[0]),
                                   ("VOTER_UNREACHABLE", Severity.WARNING, down[1]),
                                   ("EVEN_VOTER_COUNT", Severity.WARNING, None),
                                   ("VOTER_CHANGE_PENDING", Severity.WARNING, None)]
        pending = finding(health, "VOTER_CHANGE_PENDING")
        waited = health.checked_at_ms - first.voter_change_since_ms
        assert waited >= 500
        assert pending.message == (f"a voter change has not committed for {waited} ms (adding 4 "
                                   f"({new.directory_id}), removing none): a majority of the new voter "
                                   "set must fetch it")
        assert finding(health, "NO_MAJORITY").message.startswith("only 2 of 4 voters")


def test_metadata_version_below_what_every_node_supports(make_cluster: Make) -> None:
    """Nodes formatted as ``kafka-storage format --release-version 4.1-IV1`` does: an upgrade is
    available (INFO, status OK); the printed kafka-features command makes the notice go away."""
    cluster = make_cluster(3, properties=dict(FAST)).format()
    for node in cluster.nodes.values():
        write_bootstrap_checkpoint(node.metadata_dir, bootstrap_records(OLD_METADATA_VERSION,
                                                                        default_levels(OLD_METADATA_VERSION)))
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader, 30)
    with admin(cluster) as client:
        health = client.check_quorum(timeout=10)
        assert (health.status, health.exit_code, health.fault_tolerance) == (HealthStatus.OK, 0, 1)
        assert summary(health) == [("METADATA_VERSION_UPGRADE_AVAILABLE", Severity.INFO, None)]
        upgrade = health.findings[0]
        assert upgrade.message == "metadata.version is 27; every node that answered supports 33"
        assert upgrade.fix == f"kafka-features {connect(cluster)} upgrade --feature metadata.version=33"
        assert health.finalized_features["metadata.version"] == OLD_METADATA_VERSION

        run_fix(upgrade.fix)
        health = check_until(client, lambda h: h.findings == (), "metadata.version 33", timeout=10)
        assert (health.status, health.finalized_features["metadata.version"]) == (HealthStatus.OK, 33)


def test_a_node_with_unstable_feature_versions_supports_more(make_cluster: Make) -> None:
    """Kafka's controller with ``unstable.feature.versions.enable=true`` advertises metadata.version
    up to the latest testing level: during a rolling change the supported ranges differ (INFO)."""
    cluster = make_cluster(2, properties=dict(FAST)).format()
    cluster.write_config(cluster.nodes[2], {"unstable.feature.versions.enable": "true"})
    cluster.start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader, 30)
    with admin(cluster) as client:
        health = client.check_quorum(timeout=10)
    differ = finding(health, "SUPPORTED_FEATURES_DIFFER")
    assert differ.severity is Severity.INFO
    assert differ.message == ("nodes support different metadata.version levels (7-33 on 1; 7-34 on 2): "
                              "a rolling upgrade is in progress")
