"""Quorum health (``kafka_admin_kraft.health``): the rules of ``assess`` on hand-built quorums."""

from __future__ import annotations

import json
import re
from typing import Any

from kafka_admin_kraft import health as health_module
from kafka_admin_kraft.health import (
    Finding,
    FindingCode,
    HealthStatus,
    HealthThresholds,
    NodeProbe,
    QuorumHealth,
    Severity,
    assess,
    voter_change,
)
from kafka_admin_kraft.models import QuorumInfo, ReplicaState, SupportedVersionRange
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

CONNECT = "--bootstrap-controller c1:9093"
NOW = 1_700_000_000_000
DIRS = {
    1: Uuid.from_string("AQEBAQEBAQEBAQEBAQEBAQ"),
    2: Uuid.from_string("AgICAgICAgICAgICAgICAg"),
    3: Uuid.from_string("AwMDAwMDAwMDAwMDAwMDAw"),
    4: Uuid.from_string("BAQEBAQEBAQEBAQEBAQEBA"),
    5: Uuid.from_string("BQUFBQUFBQUFBQUFBQUFBQ"),
}
NEW_DIR = Uuid.from_string("CQkJCQkJCQkJCQkJCQkJCQ")


def replica(
    node_id: int, offset: int = 100, caught_up: int | None = NOW, directory: Uuid | None = None
) -> ReplicaState:
    return ReplicaState(
        replica_id=node_id,
        replica_directory_id=directory or DIRS[node_id],
        log_end_offset=offset,
        last_fetch_timestamp=caught_up,
        last_caught_up_timestamp=caught_up,
    )


def quorum(
    *voters: ReplicaState,
    leader: int = 1,
    committed: tuple[ReplicaState, ...] | None = None,
    observers: tuple[ReplicaState, ...] = (),
    version: int = 3,
) -> QuorumInfo:
    voters = voters or (replica(1), replica(2), replica(3))
    return QuorumInfo(
        leader_id=leader,
        leader_epoch=5,
        high_watermark=100,
        voters=voters,
        committed_voters=(voters if committed is None else committed) if version >= 3 else None,
        observers=observers,
        nodes={},
        api_version=version,
    )


def probe(
    node_id: int, *, error: str | None = None, mv: tuple[int, int] = (7, 29), level: int = 29, kraft: int = 1
) -> NodeProbe:
    return NodeProbe(
        node_id=node_id,
        address=f"c{node_id}:9093",
        error=error,
        supported_features={}
        if error
        else {"metadata.version": SupportedVersionRange(min_version=mv[0], max_version=mv[1])},
        finalized_features={} if error else {"metadata.version": level, "kraft.version": kraft},
    )


def judge(info: QuorumInfo, probes: list[NodeProbe] | None = None, **options: Any) -> QuorumHealth:
    limits = HealthThresholds(**options.pop("limits", {}))
    if probes is None:
        probes = [probe(v.replica_id) for v in info.voters]
    return assess(info, probes, thresholds=limits, checked_at_ms=NOW, connect=CONNECT, **options)


def codes(health: QuorumHealth) -> list[str]:
    return [f.code for f in health.findings]


# ------------------------------------------------------------------ assess


def test_three_caught_up_voters_are_ok_and_tolerate_one_failure() -> None:
    health = judge(quorum())
    assert (health.status, health.exit_code, health.fault_tolerance, codes(health)) == (
        HealthStatus.OK,
        0,
        1,
        [],
    )
    assert health.healthy_voters() == (1, 2, 3)
    assert health.finalized_features == {"metadata.version": 29, "kraft.version": 1}


def test_a_voter_behind_in_offsets_lags_and_leaves_no_fault_tolerance() -> None:
    health = judge(quorum(replica(1), replica(2, offset=50), replica(3)), limits={"max_lag_offsets": 10})
    assert health.status is HealthStatus.WARNING and health.fault_tolerance == 0
    lagging = health.findings[0]
    assert (lagging.code, lagging.node_id, lagging.directory_id) == ("VOTER_LAGGING", 2, DIRS[2])
    assert "50 offsets behind" in lagging.message
    assert codes(health) == ["VOTER_LAGGING", "NO_FAULT_TOLERANCE"]
    assert health.healthy_voters() == (1, 3)
    # at the threshold it is not lagging
    assert (
        codes(judge(quorum(replica(1), replica(2, offset=90), replica(3)), limits={"max_lag_offsets": 10}))
        == []
    )


def test_a_voter_not_caught_up_for_longer_than_the_time_threshold_lags_on_the_leaders_clock() -> None:
    info = quorum(
        replica(1, caught_up=NOW), replica(2, caught_up=NOW - 2001), replica(3, caught_up=NOW - 2000)
    )
    health = judge(info)
    assert [(f.code, f.node_id) for f in health.findings if f.code == "VOTER_LAGGING"] == [
        ("VOTER_LAGGING", 2)
    ]
    assert "2001 ms ago" in health.findings[0].message
    never = judge(quorum(replica(1), replica(2, caught_up=None), replica(3)))
    assert "has not fetched" in never.findings[0].message


def test_unreachable_voters_count_as_failed_and_a_majority_of_them_is_critical() -> None:
    one = judge(quorum(), [probe(1), probe(2, error="connection refused"), probe(3)])
    assert codes(one) == ["VOTER_UNREACHABLE", "NO_FAULT_TOLERANCE"] and one.fault_tolerance == 0
    assert "connection refused" in one.findings[0].message and one.findings[0].node_id == 2
    two = judge(quorum(), [probe(1), probe(2, error="refused"), probe(3, error="refused")])
    assert two.status is HealthStatus.CRITICAL and two.exit_code == 2 and two.fault_tolerance == 0
    assert codes(two) == ["NO_MAJORITY", "VOTER_UNREACHABLE", "VOTER_UNREACHABLE"]
    assert "only 1 of 3 voters" in two.findings[0].message


def test_an_unreachable_leader_is_critical() -> None:
    health = judge(quorum(leader=2), [probe(1), probe(2, error="timed out"), probe(3)])
    assert health.status is HealthStatus.CRITICAL
    assert (health.findings[0].code, health.findings[0].node_id) == ("LEADER_UNREACHABLE", 2)
    # the finalized levels come from a node that answered
    assert health.finalized_features["metadata.version"] == 29


def test_a_single_voter_has_no_fault_tolerance_and_the_fix_adds_a_controller() -> None:
    health = judge(quorum(replica(1)))
    assert (health.status, health.fault_tolerance) == (HealthStatus.WARNING, 0)
    (finding,) = health.findings
    assert finding.code == "NO_FAULT_TOLERANCE"
    assert finding.fix == (
        f"kafka-metadata-quorum {CONNECT} --command-config <new-controller.properties> add-controller"
    )
    # two of three healthy: the fix is to repair the failed voter, not a command
    assert judge(quorum(), [probe(1), probe(2), probe(3, error="x")]).findings[1].fix is None


def test_an_even_number_of_voters_is_a_warning() -> None:
    health = judge(quorum(replica(1), replica(2), replica(3), replica(4)))
    assert codes(health) == ["EVEN_VOTER_COUNT"] and health.fault_tolerance == 1
    assert "4 voters tolerate 1 failure(s)" in health.findings[0].message


def test_a_pending_voter_change_is_information_first_and_a_warning_after_the_threshold() -> None:
    voters = (replica(1), replica(2), replica(3), replica(4))
    info = quorum(*voters, committed=voters[:3])
    assert voter_change(info) == (frozenset({(4, DIRS[4])}), frozenset())
    early = judge(info, voter_change_since_ms=NOW - 100, limits={"pending_change_ms": 1000})
    assert early.status is HealthStatus.WARNING  # four voters
    pending = next(f for f in early.findings if f.code.startswith("VOTER_CHANGE"))
    assert (pending.code, pending.severity) == ("VOTER_CHANGE_IN_PROGRESS", Severity.INFO)
    late = judge(info, voter_change_since_ms=NOW - 1000, limits={"pending_change_ms": 1000})
    pending = next(f for f in late.findings if f.code.startswith("VOTER_CHANGE"))
    assert (pending.code, pending.severity) == ("VOTER_CHANGE_PENDING", Severity.WARNING)
    assert (
        f"adding 4 ({DIRS[4]}), removing none" in pending.message and late.voter_change_since_ms == NOW - 1000
    )
    # DescribeQuorum v2 cannot tell: no finding, no since
    blind = judge(quorum(*voters, version=2), voter_change_since_ms=NOW - 10_000)
    assert "VOTER_CHANGE_PENDING" not in codes(blind) and blind.voter_change_since_ms is None


def test_an_observer_with_a_voters_id_and_a_new_directory_is_a_replaced_disk_with_the_swap_as_fix() -> None:
    # the old directory's voter stopped fetching when the disk went; the new one fetches as an observer
    voters = (replica(1), replica(2), replica(3, caught_up=NOW - 60_000))
    info = quorum(*voters, observers=(replica(3, directory=NEW_DIR), replica(7, directory=NEW_DIR)))
    health = judge(info)
    assert [f.code for f in health.findings] == [
        "VOTER_LAGGING",
        "NO_FAULT_TOLERANCE",
        "REPLACED_DISK_OBSERVER",
    ]
    finding = health.findings[2]
    assert (finding.code, finding.severity, finding.node_id, finding.directory_id) == (
        "REPLACED_DISK_OBSERVER",
        Severity.WARNING,
        3,
        NEW_DIR,
    )
    assert finding.fix == (
        f"kafka-metadata-quorum {CONNECT} remove-controller --controller-id 3 "
        f"--controller-directory-id {DIRS[3]} && kafka-metadata-quorum {CONNECT} "
        "--command-config <controller-3.properties> add-controller"
    )


def test_a_directory_just_removed_from_the_voters_lingering_as_an_observer_is_no_replaced_disk() -> None:
    swapped = quorum(
        replica(1), replica(2), replica(3, directory=NEW_DIR), observers=(replica(3, caught_up=NOW - 5000),)
    )
    assert judge(swapped).findings == ()


def test_voters_without_directory_ids_are_a_static_quorum_unless_the_server_is_too_old_to_say() -> None:
    static = tuple(replica(i, directory=ZERO_UUID) for i in (1, 2, 3))
    health = judge(quorum(*static, version=2), [probe(i, kraft=0) for i in (1, 2, 3)])
    (finding,) = health.findings
    assert (finding.code, finding.severity, health.status) == (
        "STATIC_QUORUM",
        Severity.INFO,
        HealthStatus.OK,
    )
    assert finding.fix == f"kafka-features {CONNECT} upgrade --feature kraft.version=1"
    assert judge(quorum(*static, version=1), [probe(i, kraft=0) for i in (1, 2, 3)]).findings == ()


def test_a_metadata_version_every_node_can_raise_is_an_upgrade_with_the_exact_level() -> None:
    health = judge(quorum(), [probe(1, level=21), probe(2, level=21), probe(3, level=21)])
    (finding,) = health.findings
    assert (finding.code, finding.severity, health.status) == (
        "METADATA_VERSION_UPGRADE_AVAILABLE",
        Severity.INFO,
        HealthStatus.OK,
    )
    assert finding.fix == f"kafka-features {CONNECT} upgrade --feature metadata.version=29"
    # one node that supports only the current level blocks it, and the ranges differ
    mixed = judge(quorum(), [probe(1, level=21), probe(2, level=21, mv=(7, 21)), probe(3, level=21)])
    (differ,) = mixed.findings
    assert differ.code == "SUPPORTED_FEATURES_DIFFER"
    assert differ.message.startswith(
        "nodes support different metadata.version levels (7-21 on 2; 7-29 on 1, 3)"
    )


def test_no_leader_among_the_voters_is_critical() -> None:
    health = judge(quorum(leader=-1))
    assert (health.status, codes(health)) == (HealthStatus.CRITICAL, ["NO_LEADER"])


def test_findings_are_ordered_most_severe_first_and_the_status_is_the_worst() -> None:
    voters = (replica(1), replica(2), replica(3, caught_up=NOW - 60_000), replica(4))
    info = quorum(*voters, observers=(replica(3, directory=NEW_DIR),))
    health = judge(
        info,
        [
            probe(1, level=21),
            probe(2, error="x", level=21),
            probe(3, error="x", level=21),
            probe(4, level=21),
        ],
    )
    severities = [f.severity for f in health.findings]
    assert severities == sorted(severities, reverse=True)
    assert health.status is HealthStatus.CRITICAL and health.findings[0].code == "NO_MAJORITY"
    assert {"EVEN_VOTER_COUNT", "REPLACED_DISK_OBSERVER", "METADATA_VERSION_UPGRADE_AVAILABLE"} <= set(
        codes(health)
    )


def test_the_module_docstring_lists_every_finding_code() -> None:
    listed = re.findall(r"``([A-Z_]+)`` \((?:INFO|WARNING|CRITICAL|UNKNOWN)\)", health_module.__doc__ or "")
    assert sorted(listed) == sorted(code.value for code in FindingCode)


def test_a_finding_code_is_its_bare_text_wherever_it_is_shown() -> None:
    code = FindingCode.VOTER_LAGGING
    assert code == "VOTER_LAGGING" and str(code) == f"{code}" == "VOTER_LAGGING"
    assert f"{code:<15}|" == format(code, "<15") + "|" == "VOTER_LAGGING  |"
    assert json.dumps({"code": code, "codes": [code]}) == (
        '{"code": "VOTER_LAGGING", "codes": ["VOTER_LAGGING"]}')
    finding = Finding(code="VOTER_LAGGING", severity=Severity.WARNING, message="m")
    assert finding.code is code
    assert finding.model_dump(mode="json")["code"] == "VOTER_LAGGING"
    assert json.loads(finding.model_dump_json())["code"] == "VOTER_LAGGING"
