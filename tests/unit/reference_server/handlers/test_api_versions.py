"""ApiVersions as a controller of each Kafka line answers it."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft_server.handlers import api_versions
from kafka_admin_kraft_server.handlers.registry import BROKER
from kafka_admin_kraft_server.kafka_line import LINES
from unit.reference_server.handlers.handlers_testlib import view


def request(version: int, name: str = "kafka-admin-kraft",
            software: str = "1.0") -> messages.ApiVersionsRequest:
    return messages.ApiVersionsRequest(client_software_name=name, client_software_version=software)


@pytest.mark.parametrize("version", range(6))
def test_api_versions_lists_the_controller_apis_at_every_version(version: int) -> None:
    response, at = api_versions.handle(request(version), version, view())
    assert at == version and response.error_code == 0
    keys = {entry.api_key: (entry.min_version, entry.max_version) for entry in response.api_keys}
    assert keys == {1: (4, 18), 17: (0, 1), 18: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 36: (0, 2),
                    52: (0, 2), 53: (0, 1),
                    54: (0, 1), 55: (0, 2), 57: (0, 2), 58: (0, 0), 59: (0, 1), 60: (0, 2), 62: (0, 4),
                    63: (0, 2), 64: (0, 0), 70: (0, 0), 80: (0, 1), 81: (0, 0), 82: (0, 0), 94: (0, 0)}
    assert [entry.api_key for entry in response.api_keys] == sorted(keys)
    framing.encode_response(response, version, 7)  # every version encodes (features dropped below v3)


# The controller listener's ranges of each line where they differ from 4.4's above (the line table's
# sources are in tests/unit/reference_server/test_kafka_line.py). UnregisterController (94, KIP-1312)
# is new in 4.4: older lines leave it out. The ACL APIs (29-31) keep v0 in 3.9.
BEFORE_4_3 = {18: (0, 4), 63: (0, 1)}
DIFFERENCES = {
    "3.9": {1: (0, 17), 29: (0, 3), 30: (0, 3), 31: (0, 3), 52: (0, 1), 57: (0, 1), 60: (0, 1), 80: (0, 0),
            **BEFORE_4_3},
    "4.0": {1: (4, 17), 80: (0, 0), **BEFORE_4_3},
    "4.1": {80: (0, 0), **BEFORE_4_3},
    "4.2": BEFORE_4_3,
    "4.3": {18: (0, 4)},
    "4.4": {},
}


@pytest.mark.parametrize("line", sorted(LINES))
def test_each_line_advertises_its_versions(line: str) -> None:
    newest, _ = api_versions.handle(request(4), 4, view())
    response, _ = api_versions.handle(request(4), 4, view(line=LINES[line]))
    expected = {e.api_key: (e.min_version, e.max_version) for e in newest.api_keys} | DIFFERENCES[line]
    if line != "4.4":
        del expected[94]
    assert {e.api_key: (e.min_version, e.max_version) for e in response.api_keys} == expected
    broker, _ = api_versions.handle(request(4), 4, view(line=LINES[line]), BROKER)
    metadata = (0, 12) if line == "3.9" else (0, 13)
    forwarded = {key: expected[key] for key in (30, 31, 55, 57, 64, 80, 81, 94) if key in expected}
    assert {e.api_key: (e.min_version, e.max_version) for e in broker.api_keys} == {
        3: metadata, 17: expected[17], 18: expected[18], 29: expected[29], 36: expected[36], 60: expected[60],
        **forwarded}


def test_describe_quorum_v3_only_with_unstable_api_versions() -> None:
    response, _ = api_versions.handle(request(4), 4, view(unstable_api_versions=True))
    assert {e.api_key: (e.min_version, e.max_version) for e in response.api_keys}[55] == (0, 3)


@pytest.mark.parametrize("line", sorted(LINES))
def test_each_line_advertises_its_feature_ranges(line: str) -> None:
    response, _ = api_versions.handle(request(4), 4, view(line=LINES[line]))
    assert [(f.name, f.min_version, f.max_version) for f in response.supported_features] == list(
        LINES[line].features.supported_features())
    ranges = {f.name: (f.min_version, f.max_version) for f in response.supported_features}
    assert ranges["metadata.version"] == {"3.9": (1, 21), "4.0": (7, 25), "4.1": (7, 27), "4.2": (7, 29),
                                          "4.3": (7, 30), "4.4": (7, 33)}[line]


def test_supported_features_hide_minimum_zero_below_v4() -> None:
    v3, _ = api_versions.handle(request(3), 3, view())
    assert [(f.name, f.min_version, f.max_version) for f in v3.supported_features] == [
        ("metadata.version", 7, 33)]
    v4, _ = api_versions.handle(request(4), 4, view())
    assert [(f.name, f.min_version, f.max_version) for f in v4.supported_features] == [
        ("metadata.version", 7, 33), ("kraft.version", 0, 1), ("transaction.version", 0, 2),
        ("group.version", 0, 1), ("eligible.leader.replicas.version", 0, 1), ("share.version", 0, 2),
        ("streams.version", 0, 1)]


def test_unstable_feature_versions_advertise_the_testing_levels() -> None:
    response, _ = api_versions.handle(request(4), 4, view(unstable_feature_versions=True))
    assert response.supported_features[0].name == "metadata.version"
    assert (response.supported_features[0].min_version, response.supported_features[0].max_version) == (7, 34)


def test_finalized_features_and_epoch() -> None:
    response, _ = api_versions.handle(request(4), 4, view())
    assert [(f.name, f.min_version_level, f.max_version_level) for f in response.finalized_features] == [
        ("metadata.version", 29, 29), ("kraft.version", 1, 1), ("group.version", 1, 1)]
    assert response.finalized_features_epoch == 42
    assert response.zk_migration_ready is False


@pytest.mark.parametrize("line", sorted(LINES))
def test_unknown_version_gets_a_v0_unsupported_version_answer(line: str) -> None:
    """Kafka answers a too-new ApiVersions at v0 with UNSUPPORTED_VERSION and only its own ApiVersions
    range (the line's, as far as the codec speaks it)."""
    response, at = api_versions.handle(None, 9, view(line=LINES[line]))
    assert at == 0
    assert response.error_code == 35
    assert [(e.api_key, e.min_version, e.max_version) for e in response.api_keys] == [
        (18, 0, 5 if line == "4.4" else 4)]


@pytest.mark.parametrize(("name", "software"), [("", "1.0"), ("bad name", "1.0"), ("ok", "-1"), ("ok", "1.")])
def test_bad_software_name_or_version_is_invalid_request(name: str, software: str) -> None:
    response, at = api_versions.handle(request(3, name, software), 3, view())
    assert (response.error_code, at, response.api_keys) == (42, 3, [])
    # Below v3 the fields do not exist, so nothing is checked.
    response, _ = api_versions.handle(request(2, name, software), 2, view())
    assert response.error_code == 0


CLUSTER = view().cluster_id


def identified(cluster_id: str | None, node_id: int) -> messages.ApiVersionsRequest:
    return messages.ApiVersionsRequest(client_software_name="kafka-admin-kraft",
                                       client_software_version="1.0", cluster_id=cluster_id, node_id=node_id)


@pytest.mark.parametrize(("cluster_id", "node_id", "error"), [
    (None, -1, 0), (CLUSTER, 1, 0), ("another-cluster", 1, 129), (CLUSTER, 2, 129),
    ("another-cluster", -1, 129), (None, 1, 42)])
def test_a_broker_checks_the_node_a_v5_request_means(cluster_id: str | None, node_id: int,
                                                     error: int) -> None:
    """KIP-1242: a broker answers a request meant for another cluster or node REBOOTSTRAP_REQUIRED; the
    controller listener does not check, and before v5 there is nothing to check."""
    node = view(line=LINES["4.4"])
    assert (node.cluster_id, node.node_id) == (CLUSTER, 1)
    response, at = api_versions.handle(identified(cluster_id, node_id), 5, node, BROKER)
    assert (response.error_code, at) == (error, 5)
    assert (response.api_keys == []) is (error != 0)
    controller, _ = api_versions.handle(identified(cluster_id, node_id), 5, node)
    assert controller.error_code == 0
    below, _ = api_versions.handle(identified(cluster_id, node_id), 4, node, BROKER)
    assert below.error_code == 0
