"""The project's specs against Kafka's own JSON schemas: every message, field, type, version range,
nullability, tag, default and flag must agree, apart from the documented DescribeQuorum v3 proposal
and the versions newer than the reference schemas (Kafka 4.2), which their golden bytes check."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.spec import FieldSpec, MessageSpec, Versions, all_messages

OURS = {m.name: m for m in all_messages()}
# Messages the project defines that are not among the reference schemas.
# The broker registration messages and records and the principal encoding are checked against their
# hand-worked golden vectors (tests/golden/test_broker_registration_golden.py) instead, and so is
# ControllerRegistration (tests/golden/test_controller_registration_golden.py), and UnregisterBroker,
# UnregisterController (Kafka 4.4) and their records (tests/golden/test_unregister_golden.py).
NOT_IN_REFERENCE = {"EnvelopeRequest", "EnvelopeResponse", "BrokerRegistrationRequest",
                    "BrokerRegistrationResponse", "BrokerHeartbeatRequest", "BrokerHeartbeatResponse",
                    "BrokerRegistrationChangeRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
                    "DefaultPrincipalData", "ControllerRegistrationRequest", "ControllerRegistrationResponse",
                    "UnregisterBrokerRequest", "UnregisterBrokerResponse", "UnregisterBrokerRecord",
                    "UnregisterControllerRequest", "UnregisterControllerResponse",
                    "UnregisterControllerRecord", "CreateAclsRequest", "CreateAclsResponse",
                    "DescribeAclsRequest", "DescribeAclsResponse", "DeleteAclsRequest", "DeleteAclsResponse",
                    "AccessControlEntryRecord", "RemoveAccessControlEntryRecord"}


def _load(path: Path) -> dict[str, Any]:
    text = re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M)
    data: dict[str, Any] = json.loads(text)
    return data


def _kafka_specs(shared: Path) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in map(_load, sorted((shared / "kafka-spec" / "messages").glob("*.json")))}


def _default(kind: str, value: Any) -> Any:
    if value is None:
        return None
    text = str(value)
    if kind == "bool":
        return text.lower()
    if kind in {"int8", "int16", "int32", "int64", "uint16", "uint32"}:
        return int(text, 0)
    return text


def _compare_fields(ours: list[FieldSpec], theirs: list[dict[str, Any]], where: str,
                    common: dict[str, list[FieldSpec]],
                    their_common: dict[str, list[dict[str, Any]]]) -> None:
    assert [f.name for f in ours] == [f["name"] for f in theirs], where
    for mine, kafka in zip(ours, theirs, strict=True):
        here = f"{where}.{mine.name}"
        assert mine.type == kafka["type"], here
        assert mine.versions == Versions.parse(kafka["versions"]), here
        assert mine.nullable == Versions.parse(kafka.get("nullableVersions", "none")), here
        assert mine.ignorable == bool(kafka.get("ignorable", False)), here
        assert mine.map_key == bool(kafka.get("mapKey", False)), here
        assert _default(mine.type, mine.default) == _default(kafka["type"], kafka.get("default")), here
        assert mine.tag == kafka.get("tag"), here
        assert mine.tagged == Versions.parse(kafka.get("taggedVersions", "none")), here
        their_flexible = kafka.get("flexibleVersions")
        assert mine.flexible == (Versions.parse(their_flexible) if their_flexible else None), here
        if "fields" in kafka:
            _compare_fields(mine.fields, kafka["fields"], here, common, their_common)
        elif mine.is_struct:
            name = mine.element_type
            assert not mine.fields, here
            _compare_fields(common[name], their_common[name], f"{where}<{name}>", common, their_common)


def _without_committed_voters(message: MessageSpec) -> MessageSpec:
    """DescribeQuorumResponse minus the v3 proposal, to compare with Kafka's v0-v2 schema."""
    partition = message.fields[2].fields[1]
    assert [f.name for f in partition.fields][6:9] == ["CurrentVoters", "CommittedVoters", "Observers"]
    committed = partition.fields[7]
    assert (committed.type, str(committed.versions), committed.ignorable) == ("[]ReplicaState", "3+", True)
    assert committed.nullable.is_empty() and committed.tag is None and committed.default is None
    partition.fields.pop(7)
    message.versions = Versions(0, 2)
    return message


NEWER_THAN_REFERENCE = {"RegisterBrokerRecord": 3, "ApiVersionsRequest": 4, "ApiVersionsResponse": 4}
"""Message -> the reference schemas' highest version, where the spec goes further: RegisterBrokerRecord
v4 (Kafka 4.3, KIP-1066), checked in tests/golden/test_broker_registration_golden.py, and ApiVersions v5
(Kafka 4.4, KIP-1242), checked in tests/golden/test_message_golden.py."""
OLDER_THAN_REFERENCE = {"FetchRequest": 4, "FetchResponse": 4}
"""Message -> the reference schemas' lowest version, where the spec starts lower: Fetch v0-3, which Kafka
4.0 removed (KIP-896) and Kafka 3.9 serves; checked against Kafka 3.9.0's schemas below."""


def _up_to(message: MessageSpec, high: int) -> MessageSpec:
    """``message`` without the fields that start above version ``high``."""
    message.fields = [f for f in message.fields if f.versions.low <= high]
    message.versions = Versions(message.versions.low, high)
    return message


def test_every_reference_schema_is_specified(shared_dir: Path) -> None:
    assert set(_kafka_specs(shared_dir)) == set(OURS) - NOT_IN_REFERENCE


@pytest.mark.parametrize("name", sorted(set(OURS) - NOT_IN_REFERENCE))
def test_spec_matches_kafka(shared_dir: Path, name: str) -> None:
    kafka = _kafka_specs(shared_dir)[name]
    mine = all_messages_fresh()[name]
    if name.startswith("DescribeQuorum"):
        assert mine.versions == Versions(0, 3)
        mine = _without_committed_voters(mine) if name.endswith("Response") else mine
        mine.versions = Versions(0, 2)
    if name in NEWER_THAN_REFERENCE:
        mine = _up_to(mine, NEWER_THAN_REFERENCE[name])
    if name in OLDER_THAN_REFERENCE:
        mine.versions = Versions(OLDER_THAN_REFERENCE[name], mine.versions.high)
    assert mine.kind == kafka["type"]
    assert mine.api_key == kafka.get("apiKey")
    assert mine.versions == Versions.parse(kafka["validVersions"])
    assert mine.flexible == Versions.parse(kafka["flexibleVersions"])
    assert mine.listeners == kafka.get("listeners", [])
    assert mine.unstable_latest == bool(kafka.get("latestVersionUnstable", False))
    their_headers = [(Versions.parse(r), int(h)) for r, h in kafka.get("headerVersions", {}).items()]
    assert mine.header_versions == their_headers
    common = {s.name: s.fields for s in mine.common_structs}
    their_common = {s["name"]: s["fields"] for s in kafka.get("commonStructs", [])}
    assert set(common) == set(their_common)
    _compare_fields(mine.fields, kafka["fields"], name, common, their_common)


@pytest.mark.parametrize("name", sorted(OLDER_THAN_REFERENCE))
def test_versions_older_than_the_reference_match_kafka_3_9(shared_dir: Path, name: str) -> None:
    """The spec minus what came after Kafka 3.9 (Fetch v18) is Kafka 3.9.0's schema, versions included."""
    kafka = _load(shared_dir / "kafka-spec" / "messages-3.9" / f"{name}.json")
    mine = _up_to(all_messages_fresh()[name], 17)
    assert (mine.api_key, mine.versions, mine.flexible) == (
        kafka["apiKey"], Versions.parse(kafka["validVersions"]), Versions.parse(kafka["flexibleVersions"]))
    common = {s.name: s.fields for s in mine.common_structs}
    their_common = {s["name"]: s["fields"] for s in kafka.get("commonStructs", [])}
    _compare_fields(_without_after(mine.fields, 17), kafka["fields"], name, common, their_common)


def _without_after(fields: list[FieldSpec], high: int) -> list[FieldSpec]:
    """``fields`` (nested too) without those that start above version ``high``."""
    kept = [f for f in fields if f.versions.low <= high]
    for f in kept:
        f.fields = _without_after(f.fields, high)
    return kept


def all_messages_fresh() -> dict[str, MessageSpec]:
    """A fresh parse, since some tests edit the model they compare."""
    return {m.name: m for m in all_messages()}


@pytest.mark.parametrize("name", sorted(n for n, m in OURS.items() if m.kind in ("request", "response")))
def test_header_versions_follow_kafka_rule(name: str) -> None:
    """The generated header version per API version: explicit map where the schema has one, else the
    flexibleVersions rule, with every ApiVersions response on header v0."""
    spec = OURS[name]
    cls = getattr(messages, name)
    for version in spec.version_list:
        flexible = version in spec.flexible
        if spec.kind == "request":
            expected = 2 if flexible else 1
        else:
            expected = 0 if spec.api_key == 18 else (1 if flexible else 0)
        assert cls.HEADER_VERSIONS[version] == expected, (name, version)


def test_generated_classes_match_specs() -> None:
    for name, spec in OURS.items():
        cls = getattr(messages, name)
        assert (spec.versions.low, spec.versions.high) == cls.VERSIONS
        assert (spec.api_key if spec.api_key is not None else -1) == cls.API_KEY
        assert set(cls._ENCODERS) == set(spec.version_list) == set(cls._DECODERS)
