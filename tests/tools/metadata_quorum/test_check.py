"""`kafka-metadata-quorum check`: the text renderer on hand-built results, then the installed console
script against a real quorum (OK, WARNING and CRITICAL as voters die, exit codes, text and JSON),
against a port nothing listens on (UNKNOWN, within the deadline) and with bad arguments."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from integration.harness import Cluster, free_ports

from kafka_admin_kraft.health import (
    Finding,
    HealthStatus,
    HealthThresholds,
    QuorumHealth,
    Registrations,
    Severity,
)
from kafka_admin_kraft.models import QuorumInfo, ReplicaState
from kafka_admin_kraft_cli.metadata_quorum.check import health_text
from kafka_admin_kraft_cli.metadata_quorum.health_options import health_json
from tools.cluster_util import PROPERTIES, run

TOOL = "kafka-metadata-quorum"
NOW = 1_700_000_000_000
DIRECTORY = {1: "AQEBAQEBAQEBAQEBAQEBAQ", 2: "AgICAgICAgICAgICAgICAg", 3: "AwMDAwMDAwMDAwMDAwMDAw"}
CONNECT = "--bootstrap-controller c1:9093"


def quorum_info(leader: int = 1, epoch: int = 2, high_watermark: int = 345) -> QuorumInfo:
    voters = tuple(ReplicaState(replica_id=i, replica_directory_id=d, log_end_offset=345,
                                last_fetch_timestamp=NOW, last_caught_up_timestamp=NOW)
                   for i, d in DIRECTORY.items())
    return QuorumInfo(leader_id=leader, leader_epoch=epoch, high_watermark=high_watermark, voters=voters,
                      committed_voters=voters, observers=(), nodes={}, api_version=3)


def result(status: HealthStatus, tolerance: int, *findings: Finding,
           quorum: QuorumInfo | None = None) -> QuorumHealth:
    return QuorumHealth(status=status, fault_tolerance=tolerance, findings=findings, checked_at_ms=NOW,
                        quorum=quorum)


UNREACHABLE = Finding(code="VOTER_UNREACHABLE", severity=Severity.WARNING, node_id=3,
                      directory_id=DIRECTORY[3],
                      message="voter 3 does not answer ApiVersions at c3:9093: connection refused")
NO_MAJORITY = Finding(code="NO_MAJORITY", severity=Severity.CRITICAL,
                      message="only 1 of 3 voters are caught up and reachable, a majority needs 2: "
                              "the quorum cannot commit metadata")
STATIC = Finding(code="STATIC_QUORUM", severity=Severity.INFO, message="the voters have no directory ids",
                 fix=f"kafka-features {CONNECT} upgrade --feature kraft.version=1")


# ------------------------------------------------------------------ the renderer


def test_a_healthy_quorum_is_one_nagios_line() -> None:
    assert health_text(result(HealthStatus.OK, 1, quorum=quorum_info())) == (
        "OK: quorum of 3 voters, leader 1 (epoch 2), high watermark 345, fault tolerance 1\n")


def test_findings_most_severe_first_with_fixes_under_their_message() -> None:
    health = result(HealthStatus.CRITICAL, 0, STATIC, UNREACHABLE, NO_MAJORITY,
                    quorum=quorum_info(leader=2, epoch=5))
    assert health_text(health) == (
        "CRITICAL: quorum of 3 voters, leader 2 (epoch 5), high watermark 345, fault tolerance 0\n"
        "CRITICAL  NO_MAJORITY        only 1 of 3 voters are caught up and reachable, a majority needs 2: "
        "the quorum cannot commit metadata\n"
        "WARNING   VOTER_UNREACHABLE  voter 3 does not answer ApiVersions at c3:9093: connection refused "
        "(directory id AwMDAwMDAwMDAwMDAwMDAw)\n"
        "INFO      STATIC_QUORUM      the voters have no directory ids\n"
        "                             fix: kafka-features --bootstrap-controller c1:9093 upgrade "
        "--feature kraft.version=1\n")


def test_a_directory_id_already_in_the_message_is_not_repeated() -> None:
    replaced = Finding(code="REPLACED_DISK_OBSERVER", severity=Severity.WARNING, node_id=3,
                       directory_id="CQkJCQkJCQkJCQkJCQkJCQ",
                       message="node 3 fetches as an observer with directory id CQkJCQkJCQkJCQkJCQkJCQ")
    text = health_text(result(HealthStatus.WARNING, 0, replaced, quorum=quorum_info()))
    assert text.splitlines()[1] == ("WARNING   REPLACED_DISK_OBSERVER  node 3 fetches as an observer with "
                                    "directory id CQkJCQkJCQkJCQkJCQkJCQ")


def test_a_quorum_not_read_is_said_on_the_first_line_only() -> None:
    unknown = Finding(code="QUORUM_UNREACHABLE", severity=Severity.UNKNOWN,
                      message="cannot read the quorum: c1:9093: connection refused")
    assert health_text(result(HealthStatus.UNKNOWN, 0, unknown)) == (
        "UNKNOWN: cannot read the quorum: c1:9093: connection refused\n")
    assert health_text(result(HealthStatus.UNKNOWN, 0)) == "UNKNOWN: the quorum was not read\n"


def test_no_leader_and_no_high_watermark_yet() -> None:
    no_leader = Finding(code="NO_LEADER", severity=Severity.CRITICAL, message="the quorum reports no leader")
    health = result(HealthStatus.CRITICAL, 0, no_leader, quorum=quorum_info(leader=-1, high_watermark=-1))
    assert health_text(health) == ("CRITICAL: quorum of 3 voters, no leader (epoch 2), fault tolerance 0\n"
                                   "CRITICAL  NO_LEADER  the quorum reports no leader\n")


def test_the_json_document_lists_the_registrations_the_bootstrap_kind_can_see() -> None:
    ghost = Finding(code="GHOST_CONTROLLER_REGISTRATION", severity=Severity.INFO, node_id=4,
                    message="controller 4 is registered but is neither a voter nor fetching from the leader",
                    fix=f"kafka-cluster unregister-controller {CONNECT} --id 4")
    controllers = result(HealthStatus.OK, 1, ghost, quorum=quorum_info()).model_copy(
        update={"registrations": Registrations(controllers=(1, 2, 3, 4))})
    document = health_json(controllers)
    assert (document["registered_controllers"], document["fenced_brokers"]) == ([1, 2, 3, 4], None)
    assert document["findings"][0]["fix"] == "kafka-cluster unregister-controller --bootstrap-controller " \
        "c1:9093 --id 4"
    brokers = controllers.model_copy(update={"registrations": Registrations(brokers=(101,),
                                                                            fenced_brokers={102: NOW - 5})})
    document = health_json(brokers)
    assert (document["registered_controllers"], document["fenced_brokers"]) == (
        None, [{"node_id": 102, "fenced_since_ms": NOW - 5}])
    unread = health_json(result(HealthStatus.UNKNOWN, 0))
    assert (unread["registered_controllers"], unread["fenced_brokers"]) == (None, None)


def test_the_fenced_broker_threshold_is_an_option_and_voter_commands_leave_it_out() -> None:
    from kafka_admin_kraft_cli.metadata_quorum import main
    from kafka_admin_kraft_cli.metadata_quorum.health_options import thresholds

    options = {"max_lag_offsets": 1, "max_lag_ms": 2, "pending_change_ms": 3, "probe_timeout_ms": 4,
               "fenced_broker_ms": 5, "other": 6}
    assert thresholds(options) == HealthThresholds(max_lag_offsets=1, max_lag_ms=2, pending_change_ms=3,
                                                   probe_timeout_ms=4, fenced_broker_ms=5)
    assert options == {"other": 6}
    assert thresholds({"max_lag_ms": 7}) == HealthThresholds(max_lag_ms=7)
    names = {name: {p.name for p in command.params} for name, command in main.commands.items()}
    assert {"fenced_broker_ms", "no_probe"} <= names["check"] & names["watch"] & names["exporter"]
    assert not {"fenced_broker_ms", "no_probe"} & (names["reconcile"] | names["scale"]
                                                   | names["replace-controller"])


# ------------------------------------------------------------------ the console script


def check(cluster: Cluster, *args: str) -> tuple[int, str, str]:
    done = run(TOOL, "--bootstrap-controller", cluster.bootstrap_servers(), "check", *args)
    return done.returncode, done.stdout, done.stderr


def codes(document: dict[str, object]) -> list[tuple[object, object, object]]:
    findings = document["findings"]
    assert isinstance(findings, list)
    return [(f["code"], f["severity"], f["node_id"]) for f in findings]


def test_exit_codes_as_voters_die(tmp_path: Path) -> None:
    """A leader resigns 1.5 fetch timeouts after it last heard from a majority: 4.5 s here, enough to
    see the quorum without a majority (CRITICAL) before that."""
    cluster = Cluster(tmp_path, 3, properties={**PROPERTIES, "controller.quorum.fetch.timeout.ms": "3000"})
    try:
        cluster.format().start_all()
        leader, data = cluster.wait_for_leader(30)
        cluster.wait_caught_up(leader, 30)
        epoch = data.leader_epoch
        first, second = sorted(i for i in cluster.nodes if i != leader)
        head = f"quorum of 3 voters, leader {leader} \\(epoch {epoch}\\), high watermark \\d+"

        code, out, err = check(cluster)
        assert (code, err) == (0, "")
        assert re.fullmatch(f"OK: {head}, fault tolerance 1\n", out), out
        code, out, err = check(cluster, "--output", "json")
        document = json.loads(out)
        assert (code, err, document["status"], document["exit_code"]) == (0, "", "OK", 0)
        assert (document["leader_id"], document["voters"], document["findings"]) == (leader, [1, 2, 3], [])
        assert document["cluster_id"] == cluster.cluster_id

        cluster.kill(first)
        code, out, err = check(cluster)
        assert (code, err) == (1, "")
        lines = out.splitlines()
        assert re.fullmatch(f"WARNING: {head}, fault tolerance 0", lines[0]), out
        assert lines[1].startswith(f"WARNING   VOTER_UNREACHABLE   voter {first} does not answer ApiVersions "
                                   f"at {cluster.nodes[first].address}: ")
        assert lines[1].endswith(f" (directory id {cluster.nodes[first].directory_id})")
        assert lines[2] == ("WARNING   NO_FAULT_TOLERANCE  2 of 3 voters are healthy: losing one more stops "
                            "the quorum")
        assert len(lines) == 3

        cluster.kill(second)
        code, out, err = check(cluster)
        assert (code, err) == (2, "")
        lines = out.splitlines()
        assert re.fullmatch(f"CRITICAL: {head}, fault tolerance 0", lines[0]), out
        assert lines[1] == ("CRITICAL  NO_MAJORITY        only 1 of 3 voters are caught up and reachable, "
                            "a majority needs 2: the quorum cannot commit metadata")
        assert [line.split()[:3] for line in lines[2:]] == [["WARNING", "VOTER_UNREACHABLE", "voter"]] * 2
        code, out, err = check(cluster, "--output", "json")
        document = json.loads(out)
        assert (code, err, document["status"], document["fault_tolerance"]) == (2, "", "CRITICAL", 0)
        assert codes(document) == [("NO_MAJORITY", "CRITICAL", None), ("VOTER_UNREACHABLE", "WARNING", first),
                                   ("VOTER_UNREACHABLE", "WARNING", second)]
        assert document["healthy_voters"] == [leader]
    finally:
        cluster.close()


def test_nothing_listening_is_unknown_within_the_deadline() -> None:
    address = f"127.0.0.1:{free_ports(1)[0]}"
    started = time.monotonic()
    done = run(TOOL, "--bootstrap-controller", address, "check", "--timeout-ms", "500")
    assert time.monotonic() - started < 5
    assert (done.returncode, done.stderr) == (3, "")
    assert done.stdout.startswith("UNKNOWN: cannot read the quorum: ")
    assert f"{address}: connection refused" in done.stdout
    assert done.stdout.count("\n") == 1

    done = run(TOOL, "--bootstrap-controller", address, "check", "--timeout-ms", "500", "--output", "json")
    document = json.loads(done.stdout)
    assert (done.returncode, document["status"], document["exit_code"]) == (3, "UNKNOWN", 3)
    assert codes(document) == [("QUORUM_UNREACHABLE", "UNKNOWN", None)]


def test_bad_arguments_are_parse_errors_with_exit_1() -> None:
    usage = "usage: kafka-metadata-quorum check [-h] [--max-lag-offsets MAX_LAG_OFFSETS]"
    for args, message in [
        (("--timeout-ms", "soon"), "Invalid value for '--timeout-ms': 'soon' is not a valid integer range."),
        (("--max-lag-ms", "-1"), "Invalid value for '--max-lag-ms': -1 is not in the range x>=0."),
        (("--output", "xml"), "Invalid value for '--output': 'xml' is not one of 'text', 'json'."),
        (("--timeout", "5"), "unrecognized arguments: '--timeout'"),  # additions are never abbreviated
    ]:
        done = run(TOOL, "--bootstrap-controller", "127.0.0.1:1", "check", *args)
        assert (done.returncode, done.stdout) == (1, ""), args
        first, second = done.stderr.splitlines()
        assert first.startswith(usage)
        assert second == f"kafka-metadata-quorum check: error: {message}"
