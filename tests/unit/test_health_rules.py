"""The health rules on plain values: the operations' plain answers judged without pydantic, to the same
result as the SDK's models (``tests/unit/test_health.py`` tests each rule through ``health.assess``)."""

from __future__ import annotations

import subprocess
import sys

from kafka_admin_kraft.client.answers import QuorumAnswer, ReplicaAnswer, SupportedAnswer
from kafka_admin_kraft.health import HealthThresholds, QuorumHealth, UpgradeCheck, quorum_health
from kafka_admin_kraft.health import assess as assess_models
from kafka_admin_kraft.health_rules import (
    FindingAnswer,
    FindingCode,
    HealthAnswer,
    HealthStatus,
    Limits,
    ProbeAnswer,
    RegistrationsAnswer,
    Severity,
    UpgradeCheckAnswer,
    assess,
    most_severe_first,
    unreachable,
)
from kafka_admin_kraft.models import QuorumInfo
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

CONNECT = "--bootstrap-controller c1:9093"
NOW = 1_700_000_000_000
DIRS = {i: Uuid.from_string(text) for i, text in
        {1: "AQEBAQEBAQEBAQEBAQEBAQ", 2: "AgICAgICAgICAgICAgICAg", 3: "AwMDAwMDAwMDAwMDAwMDAw",
         4: "BAQEBAQEBAQEBAQEBAQEBA"}.items()}


def replica(node_id: int, offset: int = 100, caught_up: int | None = NOW) -> ReplicaAnswer:
    return ReplicaAnswer(replica_id=node_id, replica_directory_id=DIRS[node_id], log_end_offset=offset,
                         last_fetch_timestamp=caught_up, last_caught_up_timestamp=caught_up)


def quorum(*voters: ReplicaAnswer, observers: tuple[ReplicaAnswer, ...] = ()) -> QuorumAnswer:
    voters = voters or (replica(1), replica(2), replica(3))
    return QuorumAnswer(leader_id=1, leader_epoch=5, high_watermark=100, voters=voters,
                        committed_voters=voters, observers=observers, nodes={}, api_version=3)


def probe(node_id: int, error: str | None = None, top: int = 29) -> ProbeAnswer:
    if error is not None:
        return ProbeAnswer(node_id=node_id, address=f"c{node_id}:9093", error=error)
    return ProbeAnswer(node_id=node_id, address=f"c{node_id}:9093",
                       supported_features={"metadata.version": SupportedAnswer(7, top)},
                       finalized_features={"metadata.version": 27, "kraft.version": 1})


def test_plain_answers_are_judged_to_plain_findings_most_severe_first() -> None:
    answer = quorum(replica(1), replica(2, offset=50), replica(3), replica(4))
    health = assess(answer, [probe(1), probe(2), probe(3), probe(4, error="connection refused")],
                    thresholds=Limits(max_lag_offsets=10), checked_at_ms=NOW, connect=CONNECT)
    assert isinstance(health, HealthAnswer)
    assert all(isinstance(f, FindingAnswer) for f in health.findings)
    assert [(f.code, f.node_id) for f in health.findings] == [
        (FindingCode.NO_MAJORITY, None),
        (FindingCode.VOTER_LAGGING, 2),
        (FindingCode.VOTER_UNREACHABLE, 4),
        (FindingCode.EVEN_VOTER_COUNT, None),
        (FindingCode.METADATA_VERSION_UPGRADE_AVAILABLE, None),
    ]
    assert (health.status, health.exit_code, health.fault_tolerance) == (HealthStatus.CRITICAL, 2, 0)
    assert health.healthy_voters() == (1, 3)
    assert health.quorum is answer
    assert health.finalized_features == {"metadata.version": 27, "kraft.version": 1}


def test_the_model_of_a_plain_result_is_what_the_models_are_judged_to() -> None:
    """``quorum_health`` validates the plain result into the ``QuorumHealth`` that ``health.assess``
    makes of the same quorum given as models: the SDK's result does not depend on the path."""
    answer = quorum(replica(1), replica(2, caught_up=NOW - 5_000), replica(3),
                    observers=(ReplicaAnswer(2, DIRS[4], 100, NOW + 1, NOW),))
    probes = [probe(1), probe(2, top=30), probe(3, error="timed out")]
    options = {"checked_at_ms": NOW, "connect": CONNECT, "cluster_id": "c",
               "registrations": RegistrationsAnswer(controllers=(1, 2, 3, 9))}
    plain = assess(answer, probes, thresholds=Limits(), **options)
    model = quorum_health(plain)
    info = QuorumInfo.model_validate(answer, from_attributes=True)
    assert isinstance(model, QuorumHealth) and isinstance(model.quorum, QuorumInfo)
    expected = assess_models(info, list(model.probes), thresholds=HealthThresholds(), **options)
    assert model == expected
    assert [f.code for f in model.findings] == [f.code for f in plain.findings]
    assert FindingCode.REPLACED_DISK_OBSERVER in [f.code for f in plain.findings]
    assert FindingCode.GHOST_CONTROLLER_REGISTRATION in [f.code for f in plain.findings]


def test_a_plain_upgrade_check_is_judged_and_carried_into_the_model() -> None:
    check = UpgradeCheckAnswer(feature="metadata.version", level=29, refusal="Invalid update version 29 for "
                               "feature metadata.version. Controller 9 only supports versions 7-27")
    answer = quorum()
    plain = assess(answer, [probe(1), probe(2), probe(3)], thresholds=Limits(), checked_at_ms=NOW,
                   connect=CONNECT, registrations=RegistrationsAnswer(controllers=(1, 2, 3, 9)),
                   upgrade_check=check)
    blocked = [f for f in plain.findings if f.code is FindingCode.FEATURE_UPGRADE_BLOCKED]
    assert [f.node_id for f in blocked] == [9]
    # metadata.version 27 cannot unregister it: started again under its id, on a release that supports 29
    assert (blocked[0].fix or "").startswith("kafka-storage format --cluster-id <cluster id> "
                                             "--config <controller-9.properties>")
    assert quorum_health(plain).upgrade_check == UpgradeCheck(**check._asdict())


def test_unreachable_is_one_finding_and_no_quorum() -> None:
    health = unreachable(FindingCode.QUORUM_UNREACHABLE, "cannot read the quorum", NOW, Severity.UNKNOWN)
    assert (health.status, health.exit_code, health.quorum, health.healthy_voters()) == (
        HealthStatus.UNKNOWN, 3, None, ())
    assert quorum_health(health).findings[0].message == "cannot read the quorum"


def test_most_severe_first_keeps_the_order_within_a_severity() -> None:
    found = [FindingAnswer(FindingCode.STATIC_QUORUM, Severity.INFO, "a"),
             FindingAnswer(FindingCode.VOTER_LAGGING, Severity.WARNING, "b", node_id=2),
             FindingAnswer(FindingCode.VOTER_LAGGING, Severity.WARNING, "c", node_id=3),
             FindingAnswer(FindingCode.NO_MAJORITY, Severity.CRITICAL, "d")]
    assert [f.message for f in most_severe_first(found)] == ["d", "b", "c", "a"]


def test_limits_default_to_the_thresholds_of_the_sdk() -> None:
    assert Limits()._asdict() == HealthThresholds().model_dump()
    assert ZERO_UUID not in DIRS.values()


def test_the_rules_import_no_pydantic() -> None:
    """What keeps ``kafka-metadata-quorum check`` fast: the rules and the plain operation alone."""
    code = ("import sys, kafka_admin_kraft.health_rules, kafka_admin_kraft.client.operations.check_quorum; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' "
            "or m in ('kafka_admin_kraft.models', 'kafka_admin_kraft.health')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
