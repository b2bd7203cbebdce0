"""ApiVersions and DescribeCluster as a Kafka 4.2 controller answers them."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft_server.handlers import ServerView, api_versions, describe_cluster
from unit.reference_server.fakes import voter_set


def view(**overrides: object) -> ServerView:
    fields: dict[str, object] = dict(cluster_id="MkU3OEVBNTcwNTJENDM2Qk", node_id=1, leader_id=2,
                                     voters=voter_set(1, 2, 3), listener="CONTROLLER",
                                     finalized_features={"metadata.version": 29, "group.version": 1,
                                                         "kraft.version": 1},
                                     finalized_features_epoch=42, metadata_version=29)
    fields.update(overrides)
    return ServerView(**fields)  # type: ignore[arg-type]


def request(version: int, name: str = "kafka-admin-kraft",
            software: str = "1.0") -> messages.ApiVersionsRequest:
    return messages.ApiVersionsRequest(client_software_name=name, client_software_version=software)


@pytest.mark.parametrize("version", range(5))
def test_api_versions_lists_the_controller_apis_at_every_version(version: int) -> None:
    response, at = api_versions.handle(request(version), version, view())
    assert at == version and response.error_code == 0
    keys = {entry.api_key: (entry.min_version, entry.max_version) for entry in response.api_keys}
    assert keys == {1: (4, 18), 18: (0, 4), 52: (0, 2), 53: (0, 1), 54: (0, 1), 55: (0, 3), 57: (0, 2),
                    58: (0, 0), 59: (0, 1), 60: (0, 2), 62: (0, 4), 63: (0, 1), 70: (0, 0), 80: (0, 1),
                    81: (0, 0), 82: (0, 0)}
    assert [entry.api_key for entry in response.api_keys] == sorted(keys)
    framing.encode_response(response, version, 7)  # every version encodes (features dropped below v3)


def test_supported_features_hide_minimum_zero_below_v4() -> None:
    v3, _ = api_versions.handle(request(3), 3, view())
    assert [(f.name, f.min_version, f.max_version) for f in v3.supported_features] == [
        ("metadata.version", 7, 29)]
    v4, _ = api_versions.handle(request(4), 4, view())
    assert [(f.name, f.min_version, f.max_version) for f in v4.supported_features] == [
        ("metadata.version", 7, 29), ("kraft.version", 0, 1), ("transaction.version", 0, 2),
        ("group.version", 0, 1), ("eligible.leader.replicas.version", 0, 1), ("share.version", 0, 1),
        ("streams.version", 0, 1)]


def test_unstable_feature_versions_advertise_the_testing_levels() -> None:
    response, _ = api_versions.handle(request(4), 4, view(unstable_feature_versions=True))
    assert response.supported_features[0].name == "metadata.version"
    assert (response.supported_features[0].min_version, response.supported_features[0].max_version) == (7, 30)


def test_finalized_features_and_epoch() -> None:
    response, _ = api_versions.handle(request(4), 4, view())
    assert [(f.name, f.min_version_level, f.max_version_level) for f in response.finalized_features] == [
        ("metadata.version", 29, 29), ("kraft.version", 1, 1), ("group.version", 1, 1)]
    assert response.finalized_features_epoch == 42
    assert response.zk_migration_ready is False


def test_unknown_version_gets_a_v0_unsupported_version_answer() -> None:
    response, at = api_versions.handle(None, 9, view())
    assert at == 0
    assert response.error_code == 35
    assert [(e.api_key, e.min_version, e.max_version) for e in response.api_keys] == [(18, 0, 4)]


@pytest.mark.parametrize(("name", "software"), [("", "1.0"), ("bad name", "1.0"), ("ok", "-1"), ("ok", "1.")])
def test_bad_software_name_or_version_is_invalid_request(name: str, software: str) -> None:
    response, at = api_versions.handle(request(3, name, software), 3, view())
    assert (response.error_code, at, response.api_keys) == (42, 3, [])
    # Below v3 the fields do not exist, so nothing is checked.
    response, _ = api_versions.handle(request(2, name, software), 2, view())
    assert response.error_code == 0


def describe(version: int, endpoint_type: int = 2,
             operations: bool = False) -> messages.DescribeClusterRequest:
    return messages.DescribeClusterRequest(endpoint_type=endpoint_type,
                                           include_cluster_authorized_operations=operations)


@pytest.mark.parametrize("version", [1, 2])
def test_describe_cluster_lists_the_voters_and_the_leader(version: int) -> None:
    response = describe_cluster.handle(describe(version), version, view())
    assert response.error_code == 0 and response.endpoint_type == 2
    assert response.cluster_id == "MkU3OEVBNTcwNTJENDM2Qk"
    assert response.controller_id == 2
    assert [(b.broker_id, b.host, b.port, b.rack) for b in response.brokers] == [
        (1, "127.0.0.1", 9094, None), (2, "127.0.0.1", 9095, None), (3, "127.0.0.1", 9096, None)]
    assert response.cluster_authorized_operations == -2147483648
    framing.encode_response(response, version, 1)


def test_describe_cluster_authorized_operations_and_unknown_leader() -> None:
    response = describe_cluster.handle(describe(2, operations=True), 2, view(leader_id=-1))
    assert response.cluster_authorized_operations == 8096
    assert response.controller_id == -1
    response = describe_cluster.handle(describe(2), 2, view(leader_id=7))  # not among the nodes
    assert response.controller_id == -1


MISMATCH = "The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER"


@pytest.mark.parametrize(("version", "endpoint_type", "code", "message"), [
    (0, 1, 42, MISMATCH),
    (1, 1, 114, MISMATCH),
    (2, 3, 115, "Unsupported endpoint type 3"),
    (1, 0, 115, "Unsupported endpoint type 0"),
])
def test_describe_cluster_endpoint_type_errors(version: int, endpoint_type: int, code: int,
                                               message: str) -> None:
    response = describe_cluster.handle(describe(version, endpoint_type), version, view())
    assert (response.error_code, response.error_message) == (code, message)
    assert response.brokers == [] and response.cluster_id == ""


def test_describe_cluster_before_controller_registration_is_unsupported() -> None:
    response = describe_cluster.handle(describe(2), 2, view(metadata_version=14))
    assert response.error_code == 35
