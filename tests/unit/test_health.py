"""Quorum health (``kafka_admin_kraft.health``): the rules of ``assess`` on hand-built quorums."""

from __future__ import annotations

import json
import re
from typing import Any

from kafka_admin_kraft import health as health_module
from kafka_admin_kraft.health import (
    Blocker,
    Finding,
    FindingCode,
    HealthStatus,
    HealthThresholds,
    NodeProbe,
    QuorumHealth,
    Registrations,
    Severity,
    UpgradeCheck,
    assess,
    blocked_upgrade,
    fetching,
    ghost_controllers,
    parse_refusal,
    upgrade_target,
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


# ------------------------------------------------------------------ registrations and blocked upgrades

BLOCKED = ("The update failed for all features since the following feature had an error: Invalid update "
           "version 33 for feature metadata.version. Controller 4 only supports versions 7-29")
CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def newer(node_id: int, level: int = 29) -> NodeProbe:
    """A node of Kafka 4.4 at ``level``."""
    return probe(node_id, mv=(7, 33), level=level)


def registered(*controllers: int, **options: Any) -> Registrations:
    return Registrations(controllers=controllers, **options)


def test_refusals_name_the_node_and_its_range_as_kafka_words_them() -> None:
    assert parse_refusal(BLOCKED) == Blocker(
        feature="metadata.version", level=33, role="controller", node_id=4, supported=(7, 29))
    v1 = "Invalid update version 2 for feature group.version. Broker 101 only supports versions 0-1"
    assert parse_refusal(v1) == Blocker(feature="group.version", level=2, role="broker", node_id=101,
                                        supported=(0, 1))
    single = parse_refusal("Invalid update version 2 for feature share.version. Broker 5 only supports "
                           "versions 1")
    assert single is not None and single.supported == (1, 1)
    local = parse_refusal("Invalid update version 1 for feature streams.version. Local controller 2 does "
                          "not support this feature.")
    assert local == Blocker(feature="streams.version", level=1, role="local controller", node_id=2)
    never = parse_refusal("Invalid update version 33 for feature metadata.version. controller 3 has not "
                          "registered, and may not support this feature")
    assert never == Blocker(feature="metadata.version", level=33, role="unregistered controller", node_id=3)
    assert parse_refusal("Invalid update version 5 for feature group.version. Can't downgrade to a newer "
                         "version.") is None
    assert parse_refusal("Invalid metadata.version 99. Valid versions are from 7 to 34.") is None


def test_a_registered_controller_neither_voting_nor_fetching_is_a_ghost_unregistered_from_4_4_iv2() -> None:
    stopped = replica(4, caught_up=NOW - 60_000)
    info = quorum(observers=(stopped, replica(5)))
    at_33 = judge(info, [newer(i, 33) for i in (1, 2, 3)], registrations=registered(1, 2, 3, 4, 5))
    (ghost,) = at_33.findings
    assert (ghost.code, ghost.severity, ghost.node_id, at_33.status) == (
        "GHOST_CONTROLLER_REGISTRATION", Severity.INFO, 4, HealthStatus.OK)
    assert ghost.message.startswith("controller 4 is registered but is neither a voter nor fetching")
    assert ghost.fix == f"kafka-cluster unregister-controller {CONNECT} --id 4"
    # below 4.4-IV2 UnregisterController is refused: no command, the level it needs
    below = judge(info, registrations=registered(1, 2, 3, 4, 5))
    (ghost,) = below.findings
    assert ghost.fix is None
    assert ghost.message.endswith(
        "it can be unregistered from metadata.version 4.4-IV2 on (metadata.version is 29); until then, "
        "should it hold an upgrade back, a controller of a newer release started under its id takes its "
        "place (FEATURE_UPGRADE_BLOCKED then says how)")
    # an observer that stopped fetching long ago is gone from DescribeQuorum: still a ghost
    assert codes(judge(quorum(), registrations=registered(1, 2, 3, 6))) == ["GHOST_CONTROLLER_REGISTRATION"]
    # a fetching observer, the voters, or no list of registrations (bootstrap servers): no finding
    assert codes(judge(info, registrations=registered(1, 2, 3, 5))) == []
    assert codes(judge(info, registrations=Registrations(brokers=(101,)))) == []


def test_fetching_is_measured_on_the_leaders_clock() -> None:
    limits = HealthThresholds(max_lag_ms=2000)
    leader = replica(1)
    for last, fetches in ((NOW - 2000, True), (NOW - 2001, False), (-1, False), (None, True)):
        observer = ReplicaState(replica_id=4, replica_directory_id=DIRS[4], log_end_offset=100,
                                last_fetch_timestamp=last, last_caught_up_timestamp=last)
        info = quorum(leader, replica(2), replica(3), observers=(observer,))
        assert fetching(info, 4, limits) is fetches, last
    # a leader that does not report its own time (before DescribeQuorum v1): any fetch counts
    blind = replica(1, caught_up=None)
    info = quorum(blind, replica(2), replica(3), observers=(replica(4, caught_up=NOW - 60_000),))
    assert fetching(info, 4, limits) and ghost_controllers(info, [1, 2, 3, 4, 9], limits) == (9,)


def test_an_upgrade_the_controller_refuses_for_a_ghost_names_it_and_the_fix_follows_the_level() -> None:
    info = quorum()
    check = UpgradeCheck(feature="metadata.version", level=33, refusal=BLOCKED)
    health = judge(info, [newer(i) for i in (1, 2, 3)], registrations=registered(1, 2, 3, 4),
                   upgrade_check=check, cluster_id=CLUSTER)
    assert codes(health) == ["FEATURE_UPGRADE_BLOCKED", "GHOST_CONTROLLER_REGISTRATION"]
    blocked = health.findings[0]
    assert (blocked.severity, blocked.node_id, health.status) == (Severity.INFO, 4, HealthStatus.OK)
    assert blocked.message == (
        "metadata.version 33 (4.4-IV2) is held back by controller 4, registered as supporting "
        "metadata.version 7-29 but neither a voter nor fetching (a registration left behind), which only "
        "metadata.version 4.4-IV2 lets be unregistered: start controller 4 again on Kafka 4.4 or later (it "
        "registers again with that release's ranges), upgrade, then stop it and unregister it")
    assert blocked.fix == (
        f"kafka-storage format --cluster-id {CLUSTER} --config <controller-4.properties> --release-version "
        "4.2-IV1 --no-initial-controllers --ignore-formatted && kafka-server-start <controller-4.properties>")
    # a static quorum's controllers are formatted without the dynamic options; no cluster id: a placeholder
    static = judge(info, [probe(i, mv=(7, 33), kraft=0) for i in (1, 2, 3)], upgrade_check=check)
    assert static.findings[0].fix == (
        "kafka-storage format --cluster-id <cluster id> --config <controller-4.properties> --release-version "
        "4.2-IV1 --ignore-formatted && kafka-server-start <controller-4.properties>")
    # at 4.4-IV2, a later feature held back by it: it is unregistered
    group = "Invalid update version 2 for feature group.version. Controller 4 only supports versions 0-1"
    blocker = parse_refusal(group)
    assert blocker is not None
    finding = blocked_upgrade(blocker, info, finalized={"metadata.version": 33}, registrations=None,
                              cluster_id=None, connect=CONNECT, thresholds=HealthThresholds())
    assert finding.message.endswith("(a registration left behind): unregister it")
    assert finding.fix == f"kafka-cluster unregister-controller {CONNECT} --id 4"


def test_a_refusal_naming_a_voter_an_observer_or_the_leader_says_to_upgrade_that_node() -> None:
    info = quorum(observers=(replica(4),))
    probes = [newer(i) for i in (1, 2, 3)]

    def blocked(refusal: str) -> Finding:
        check = UpgradeCheck(feature="metadata.version", level=33, refusal=refusal)
        (finding,) = judge(info, probes, upgrade_check=check).findings
        assert finding.code == "FEATURE_UPGRADE_BLOCKED" and finding.fix is None
        return finding

    prefix = "Invalid update version 33 for feature metadata.version. "
    voter = blocked(prefix + "Controller 2 only supports versions 7-29")
    assert voter.message == ("metadata.version 33 (4.4-IV2) is held back by voter 2, registered as "
                             "supporting metadata.version 7-29: restart it on Kafka 4.4 or later (it "
                             "registers again)")
    observer = blocked(prefix + "Controller 4 only supports versions 7-29")
    assert observer.message.endswith("controller 4, registered as supporting metadata.version 7-29, which "
                                     "fetches as an observer: upgrade it to Kafka 4.4 or later, or stop it "
                                     "and unregister it")
    local = blocked(prefix + "Local controller 1 only supports versions 7-29")
    assert local.message.endswith("the active controller, node 1, supporting metadata.version 7-29: upgrade "
                                  "it to Kafka 4.4 or later")
    never = blocked(prefix + "controller 5 has not registered, and may not support this feature")
    assert never.message.endswith("controller 5, a voter that has never registered: start it on Kafka 4.4 "
                                  "or later")
    other = judge(info, probes, upgrade_check=UpgradeCheck(feature="metadata.version", level=33,
                                                           refusal="something else"))
    assert other.findings[0].message == (
        "metadata.version 33 (4.4-IV2), which every node that answered supports, is refused by the active "
        "controller: something else")
    # a verdict on another level than the one proposed now is stale: the upgrade is offered
    stale = judge(info, probes, upgrade_check=UpgradeCheck(feature="metadata.version", level=32,
                                                           refusal=prefix + "Controller 4 only ..."))
    assert codes(stale) == ["METADATA_VERSION_UPGRADE_AVAILABLE"]


def test_a_broker_holding_an_upgrade_back_is_unregistered_unless_it_runs() -> None:
    info = quorum()
    probes = [newer(i) for i in (1, 2, 3)]
    check = UpgradeCheck(feature="metadata.version", level=33, refusal=(
        "Invalid update version 33 for feature metadata.version. Broker 101 only supports versions 7-29"))
    unknown = judge(info, probes, upgrade_check=check).findings[0]
    assert unknown.message.endswith("broker 101, registered as supporting metadata.version 7-29: unregister "
                                    "it if it is gone for good, else upgrade it to Kafka 4.4 or later")
    assert unknown.fix == f"kafka-cluster unregister {CONNECT} --id 101"
    fenced = judge(info, probes, upgrade_check=check,
                   registrations=Registrations(brokers=(), fenced_brokers={101: NOW}))
    assert "7-29, and fenced: unregister it" in fenced.findings[0].message
    assert codes(fenced) == ["FEATURE_UPGRADE_BLOCKED", "FENCED_BROKER_REGISTERED"]
    running = judge(info, probes, upgrade_check=check, registrations=Registrations(brokers=(101,),
                                                                                   fenced_brokers={}))
    assert running.findings[0].message.endswith("broker 101, registered as supporting metadata.version 7-29: "
                                                "upgrade it to Kafka 4.4 or later")
    assert running.findings[0].fix is None


def test_an_upgrade_the_controller_could_not_validate_is_offered_and_says_so() -> None:
    check = UpgradeCheck(feature="metadata.version", level=33,
                         unchecked="CLUSTER_AUTHORIZATION_FAILED: the principal may not alter the cluster")
    (finding,) = judge(quorum(), [newer(i) for i in (1, 2, 3)], upgrade_check=check).findings
    assert finding.code == "METADATA_VERSION_UPGRADE_AVAILABLE"
    assert finding.message == (
        "metadata.version is 29; every node that answered supports 33 (not validated by the active "
        "controller: CLUSTER_AUTHORIZATION_FAILED: the principal may not alter the cluster)")
    assert upgrade_target([newer(1), newer(2)], {"metadata.version": 29}) == 33
    assert upgrade_target([newer(1), probe(2)], {"metadata.version": 29}) is None
    assert upgrade_target([newer(1)], {}) is None


def test_a_fenced_broker_is_information_until_seen_fenced_for_longer_than_the_threshold() -> None:
    limits = {"fenced_broker_ms": 60_000}
    first = judge(quorum(), registrations=Registrations(brokers=(102,), fenced_brokers={101: NOW}),
                  limits=limits)
    (fenced,) = first.findings
    assert (fenced.code, fenced.severity, fenced.node_id, first.status) == (
        "FENCED_BROKER_REGISTERED", Severity.INFO, 101, HealthStatus.OK)
    assert fenced.message == ("broker 101 is registered and is fenced: if it is gone for good, unregister it "
                              "(its supported feature levels count when features are upgraded)")
    assert fenced.fix == f"kafka-cluster unregister {CONNECT} --id 101"
    late = judge(quorum(), registrations=Registrations(fenced_brokers={101: NOW - 60_000}), limits=limits)
    (fenced,) = late.findings
    assert (fenced.severity, late.status) == (Severity.WARNING, HealthStatus.WARNING)
    assert fenced.message.startswith("broker 101 is registered and has been seen fenced for 60000 ms:")
    assert late.registrations == Registrations(fenced_brokers={101: NOW - 60_000})
