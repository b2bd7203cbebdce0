"""The asyncio runtime around a fake core: routing, ordering, bad input, controller duties."""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.records import ApiMessageAndVersion
from kafka_admin_kraft.storage import BootstrapMetadata
from kafka_admin_kraft_server.runtime import WallClock
from unit.reference_server.fakes import MemoryLog
from unit.reference_server.runtime_testlib import make_runtime, raw_request, running, wait_for


def describe_quorum_body() -> messages.DescribeQuorumRequest:
    Q = messages.DescribeQuorumRequest
    return Q(topics=[Q.TopicData(topic_name="__cluster_metadata",
                                 partitions=[Q.PartitionData(partition_index=0)])])


def test_api_versions_and_describe_quorum_over_the_wire() -> None:
    """DescribeQuorum v3, the project's unreleased version, is served with unstable.api.versions.enable."""
    with running(make_runtime(unstable_api_versions=True)) as server, server.client() as client:
        for version in range(5):
            response = client.api_versions(version)
            assert response.error_code == 0
        assert client.versions[55] == (0, 3)
        for version in range(4):
            answer = client.describe_quorum(version)
            assert answer.topics[0].partitions[0].leader_id == 1
        assert [r.api_version for r in server.core.requests if r.api_key == 55] == [0, 1, 2, 3]
        assert all(r.listener == "CONTROLLER" for r in server.core.requests)


def test_describe_quorum_v3_is_neither_advertised_nor_accepted_by_default() -> None:
    """No Kafka line serves DescribeQuorum v3: without unstable.api.versions.enable a node advertises
    0-2 and closes the connection on a v3 request, unanswered, as Kafka does with a version it lacks."""
    with running(make_runtime()) as server:
        with server.client() as client:
            client.api_versions()
            assert client.versions[55] == (0, 2)
            assert client.describe_quorum(2).topics[0].partitions[0].leader_id == 1
        with server.client() as client:
            client.send(describe_quorum_body(), 3)
            assert client.is_closed_by_server()
        assert [r.api_version for r in server.core.requests if r.api_key == 55] == [2]


def test_unknown_api_versions_version_gets_v0_unsupported_version() -> None:
    with running(make_runtime()) as server, server.client() as client:
        client.send_raw(raw_request(18, 9, 77, b"\x05hello\x02x\x00"))
        correlation_id, body = framing.decode_response(client.recv_frame(), 18, 0)
        assert correlation_id == 77
        assert body.error_code == 35
        assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(18, 0, 5)]
        assert client.api_versions(3).error_code == 0  # the connection stays usable


def test_a_kafka_3_9_node_advertises_vote_v0_1_and_closes_on_vote_v2() -> None:
    """A node running as Kafka 3.9: ApiVersions says Vote 0-1; Vote v1 is answered, Vote v2 closes the
    connection unanswered, as Kafka 3.9 does with a version it does not know. A 4.0 node takes v2."""
    vote = messages.VoteRequest(cluster_id=None, voter_id=1)
    with running(make_runtime(line="3.9")) as server:
        with server.client() as client:
            client.api_versions()
            assert client.versions[52] == (0, 1)
            assert isinstance(client.request(vote, 1), messages.VoteResponse)
        with server.client() as client:
            client.send(vote, 2)
            assert client.is_closed_by_server()
        assert [(r.api_key, r.api_version) for r in server.core.requests if r.api_key == 52] == [(52, 1)]
    with running(make_runtime(line="4.0")) as server, server.client() as client:
        client.api_versions()
        assert client.versions[52] == (0, 2)
        assert isinstance(client.request(vote, 2), messages.VoteResponse)


def _too_new() -> list[tuple[str, Any, int]]:
    """(line, request, version): the first version above each line's that the codec can write."""
    U = messages.UpdateFeaturesRequest
    cases: list[tuple[str, Any, int]] = [
        ("3.9", U(timeout_ms=1000, feature_updates=[]), 2),
        ("3.9", messages.DescribeClusterRequest(endpoint_type=2), 2),
        ("4.0", messages.FetchRequest(), 18),
    ]
    for line in ("3.9", "4.0", "4.1"):
        cases.append((line, messages.AddRaftVoterRequest(cluster_id="c", voter_id=2), 1))
    return cases


@pytest.mark.parametrize(("line", "body", "version"), _too_new(),
                         ids=[f"{line}-{type(body).__name__}-v{v}" for line, body, v in _too_new()])
def test_a_request_above_the_lines_versions_closes_the_connection(line: str, body: Any, version: int) -> None:
    """Kafka's ApiVersionManager refuses a version its line does not serve and the connection is closed
    unanswered; the handler never sees it. ApiVersions on the same node lists the line's top."""
    with running(make_runtime(line=line)) as server:
        with server.client() as client:
            client.api_versions()
            assert client.versions[body.API_KEY][1] == version - 1
            client.send(body, version)
            assert client.is_closed_by_server()
        assert not [r for r in server.core.requests if r.api_key == body.API_KEY]


def test_fetch_v0_reaches_the_core_on_kafka_3_9_and_closes_the_connection_from_4_0() -> None:
    """Kafka 4.0 removed Fetch v0-3 (KIP-896); a 3.9 node still takes them."""
    fetch = messages.FetchRequest(replica_id=2, max_wait_ms=0, topics=[messages.FetchRequest.FetchTopic(
        topic="__cluster_metadata", partitions=[messages.FetchRequest.FetchPartition(partition=0)])])
    with running(make_runtime(line="3.9")) as server, server.client() as client:
        client.api_versions()
        assert client.versions[1] == (0, 17)
        assert isinstance(client.request(fetch, 0), messages.FetchResponse)
        assert [(r.api_key, r.api_version) for r in server.core.requests] == [(1, 0)]
    with running(make_runtime(line="4.0")) as server, server.client() as client:
        client.api_versions()
        assert client.versions[1] == (4, 17)
        client.send(fetch, 3)
        assert client.is_closed_by_server()
        assert not server.core.requests


@pytest.mark.parametrize("data", [
    raw_request(999, 0, 1, b""),                          # unknown api key
    raw_request(3, 12, 1, b"\x01\x00\x00\x00"),            # Metadata: known, not served by a controller
    raw_request(55, 7, 1, b""),                           # DescribeQuorum version that does not exist
    raw_request(55, 2, 1, b"\x02\x05ab"),                  # truncated body
    struct.pack(">i", 3) + b"\x00\x12\x00",               # a header cut short
    struct.pack(">i", 1 << 30) + b"\x00" * 16,            # above socket.request.max.bytes
    struct.pack(">i", -5),                                # negative size
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",                 # not Kafka at all
], ids=["unknown-key", "not-served", "unknown-version", "truncated-body", "short-header", "oversized",
        "negative-size", "http"])
def test_bad_input_closes_only_that_connection(data: bytes, caplog: pytest.LogCaptureFixture) -> None:
    with running(make_runtime()) as server:
        with server.client() as bystander, server.client() as offender:
            bystander.api_versions()
            offender.send_raw(data)
            assert offender.is_closed_by_server()
            assert bystander.describe_quorum().error_code == 0
        with server.client() as fresh:
            assert fresh.api_versions().error_code == 0
        assert server.thread.is_alive()
    assert any("clos" in record.getMessage().lower() for record in caplog.records)


def test_requests_are_answered_in_order_and_a_waiting_fetch_mutes_the_connection() -> None:
    with running(make_runtime()) as server, server.client() as client:
        client.api_versions()
        server.core.hold_fetch = True
        fetch = messages.FetchRequest(replica_state=messages.FetchRequest.ReplicaState(replica_id=2))
        first = client.send(fetch, 17)
        versions = messages.ApiVersionsRequest(client_software_name="a", client_software_version="1")
        second = client.send(versions, 3)
        third = client.send(describe_quorum_body(), 2)
        wait_for(lambda: any(r.api_key == 1 for r in server.core.requests))
        time.sleep(0.2)
        assert not any(r.api_key == 55 for r in server.core.requests)  # not read while Fetch waits
        server.call(server.core.release_fetches)
        server.call(server.runtime._wake.set)
        assert client.receive(1, 17)[0] == first
        assert client.receive(18, 3)[0] == second
        assert client.receive(55, 2)[0] == third


def test_activation_appends_bootstrap_records_then_noops() -> None:
    bootstrap = BootstrapMetadata([ApiMessageAndVersion(messages.FeatureLevelRecord(
        name="metadata.version", feature_level=29), 0), ApiMessageAndVersion(messages.FeatureLevelRecord(
            name="group.version", feature_level=1), 0)], 29)
    with running(make_runtime(idle_ms=50, bootstrap=bootstrap)) as server:
        wait_for(lambda: len(server.core.appended) >= 4)
        first = server.core.appended[0]
        assert [type(r).__name__ for r in first] == ["BeginTransactionRecord", "FeatureLevelRecord",
                                                     "FeatureLevelRecord", "EndTransactionRecord"]
        later = [[type(r).__name__ for r in batch] for batch in server.core.appended[1:]]
        assert all(kinds in (["NoOpRecord"], ["RegisterControllerRecord"]) for kinds in later)  # KIP-919
        wait_for(lambda: server.core.committed_features().metadata_version == 29)
        with server.client() as client:
            response = client.api_versions()
            finalized = {f.name: f.max_version_level for f in response.finalized_features}
            assert finalized == {"metadata.version": 29, "group.version": 1}
            assert response.finalized_features_epoch >= 4


def test_old_metadata_version_bootstraps_without_a_transaction() -> None:
    bootstrap = BootstrapMetadata([ApiMessageAndVersion(messages.FeatureLevelRecord(
        name="metadata.version", feature_level=12), 0)], 12)
    with running(make_runtime(bootstrap=bootstrap)) as server:
        wait_for(lambda: len(server.core.appended) >= 1)
        assert [type(r).__name__ for r in server.core.appended[0]] == ["FeatureLevelRecord"]


def test_a_follower_appends_nothing() -> None:
    with running(make_runtime(lead=False, idle_ms=20)) as server:
        time.sleep(0.3)
        assert server.core.appended == []
        with server.client() as client:
            response = client.api_versions()
            assert response.finalized_features_epoch == -1
            finalized = {f.name: f.max_version_level for f in response.finalized_features}
            assert finalized == {"metadata.version": 33}


def test_shutdown_resigns_and_flushes() -> None:
    runtime = make_runtime()
    with running(runtime) as server:
        wait_for(lambda: runtime.core.leader_id == 1)
    server.thread.join(5)
    assert server.result == [0]
    assert server.core.resigned
    log = runtime.log
    assert isinstance(log, MemoryLog) and log.flushes >= 1


def test_the_clock_never_goes_backwards() -> None:
    readings = iter([1000, 1005, 990, 1010])
    clock = WallClock(lambda: next(readings))
    assert [clock(), clock(), clock(), clock()] == [1000, 1005, 1005, 1010]
