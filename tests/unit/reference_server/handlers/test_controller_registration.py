"""Controller registration (KIP-919): the ControllerRegistration handler's decisions, the image keeping
the latest RegisterControllerRecord per controller (and snapshots carrying them), DescribeCluster
listing them, and a runtime whose registration manager registers it with itself over the wire."""

from __future__ import annotations

import logging

import pytest
from simulation.memory import MemoryLog as SnapshotLog

from kafka_admin_kraft.features import SUPPORTED_FEATURES
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    SnapshotId,
    decode_metadata_record,
    metadata_batches,
)
from kafka_admin_kraft.storage import BootstrapMetadata
from kafka_admin_kraft_server.handlers import (
    BROKER_APIS,
    CONTROLLER_APIS,
    api_versions,
    controller_registration,
    describe_cluster,
)
from kafka_admin_kraft_server.raft.api import Endpoint, NodeIdentity, RaftConfig
from kafka_admin_kraft_server.raft.image import SnapshotImage
from kafka_admin_kraft_server.registration import log as registration_log
from kafka_admin_kraft_server.runtime import ControllerRuntime, ListenerSpec, RuntimeOptions
from unit.reference_server.fakes import FakeCore, MemoryLog
from unit.reference_server.handlers.test_api_versions import view
from unit.reference_server.test_runtime import raw_request, running, wait_for

REQ = messages.ControllerRegistrationRequest
RECORD = messages.RegisterControllerRecord
INCARNATION_A = Uuid(b"\x01" * 16)
INCARNATION_B = Uuid(b"\x02" * 16)


def registration(controller_id: int = 4, incarnation: Uuid = INCARNATION_A, host: str = "ctl4",
                 port: int = 9093, **overrides: object) -> messages.ControllerRegistrationRequest:
    fields: dict[str, object] = dict(
        controller_id=controller_id, incarnation_id=incarnation, zk_migration_ready=False,
        listeners=[REQ.Listener(name="CONTROLLER", host=host, port=port, security_protocol=0)],
        features=[REQ.Feature(name="metadata.version", min_supported_version=7, max_supported_version=29)])
    fields.update(overrides)
    return REQ(**fields)  # type: ignore[arg-type]


def record(controller_id: int, incarnation: Uuid, host: str = "h", port: int = 9093) -> ApiMessageAndVersion:
    return ApiMessageAndVersion(RECORD(controller_id=controller_id, incarnation_id=incarnation, end_points=[
        RECORD.ControllerEndpoint(name="CONTROLLER", host=host, port=port, security_protocol=0)]), 0)


# ------------------------------------------------------------------------------------------- handler


def test_the_active_controller_writes_the_registration_as_requested() -> None:
    request = registration(zk_migration_ready=True, listeners=[
        REQ.Listener(name="CONTROLLER", host="ctl4", port=9093, security_protocol=3),
        REQ.Listener(name="INTERNAL", host="10.0.0.4", port=9094, security_protocol=0)])
    decision = controller_registration.handle(request, active=True, metadata_version=29)
    assert decision.response == messages.ControllerRegistrationResponse(throttle_time_ms=0, error_code=0,
                                                                        error_message="")
    assert decision.record is not None and decision.record.version == 0
    written = decision.record.message
    assert written == RECORD(
        controller_id=4, incarnation_id=INCARNATION_A, zk_migration_ready=False,  # Kafka 4 writes false
        end_points=[
            RECORD.ControllerEndpoint(name="CONTROLLER", host="ctl4", port=9093, security_protocol=3),
            RECORD.ControllerEndpoint(name="INTERNAL", host="10.0.0.4", port=9094, security_protocol=0)],
        features=[RECORD.ControllerFeature(name="metadata.version", min_supported_version=7,
                                           max_supported_version=29)])


@pytest.mark.parametrize(("active", "level", "code", "message"), [
    (False, 29, 41, "This is not the correct controller for this cluster."),
    (True, 14, 35, "The version of API is not supported."),
])
def test_refusals_carry_the_codes_default_message(active: bool, level: int, code: int, message: str) -> None:
    decision = controller_registration.handle(registration(), active=active, metadata_version=level)
    response = decision.response
    assert (response.error_code, response.error_message, decision.record) == (code, message, None)


def test_registered_ranges_are_not_checked_against_the_finalized_levels() -> None:
    # Kafka's ClusterControlManager.registerController stores them; UpdateFeatures is where they count.
    request = registration(features=[REQ.Feature(name="metadata.version", min_supported_version=7,
                                                 max_supported_version=8)])
    assert controller_registration.handle(request, active=True, metadata_version=29).record is not None


@pytest.mark.parametrize(("request_", "reason"), [
    (registration(controller_id=-1), "the controller id -1 is negative"),
    (registration(host="a b"), "the host 'a b' of its listener CONTROLLER contains the character ' '"),
    (registration(host=""), "the host '' of its listener CONTROLLER is empty"),
    (registration(listeners=[REQ.Listener(name="C", host="a", port=1, security_protocol=0),
                             REQ.Listener(name="C", host="b", port=2, security_protocol=0)]),
     "the listener C is given twice"),
], ids=["negative-id", "bad-host", "empty-host", "duplicate-listener"])
def test_malformed_registrations_get_invalid_request(request_: messages.ControllerRegistrationRequest,
                                                     reason: str) -> None:
    decision = controller_registration.handle(request_, active=True, metadata_version=29)
    assert decision.record is None
    assert decision.response.error_code == 42
    assert decision.response.error_message is not None and decision.response.error_message.startswith(reason)


def test_controllers_advertise_controller_registration_and_brokers_do_not() -> None:
    assert ApiKey.CONTROLLER_REGISTRATION in CONTROLLER_APIS
    assert ApiKey.CONTROLLER_REGISTRATION not in BROKER_APIS
    response, _ = api_versions.handle(messages.ApiVersionsRequest(), 0, view())
    assert [(k.min_version, k.max_version) for k in response.api_keys if k.api_key == 70] == [(0, 0)]


# ------------------------------------------------------------------------------------------- image


def append(log: SnapshotLog, *records: ApiMessageAndVersion) -> None:
    for batch in metadata_batches(log.end_offset(), 1, 0, list(records)):
        log.append(batch)


def test_the_image_keeps_the_latest_registration_per_controller_and_snapshots_carry_them() -> None:
    log = SnapshotLog()
    append(log, record(2, INCARNATION_A), record(1, INCARNATION_A, port=1))
    append(log, record(1, INCARNATION_B, port=2),
           ApiMessageAndVersion(messages.BeginTransactionRecord(name="t"), 0), record(3, INCARNATION_A),
           ApiMessageAndVersion(messages.AbortTransactionRecord(reason="Controller failover"), 0))
    image = SnapshotImage()
    for batch in log.batches(0):
        image.apply_batch(batch)
    latest = [(r.controller_id, r.incarnation_id, r.end_points[0].port)
              for r in image.controller_registrations()]
    assert latest == [(1, INCARNATION_B, 2), (2, INCARNATION_A, 9093)]  # 3 was in an aborted transaction
    assert image.broker_registrations() == []

    values = list(image.values(lambda source, first: log.batches(first)))
    assert [decode_metadata_record(v) for v in values] == [record(2, INCARNATION_A),
                                                           record(1, INCARNATION_B, port=2)]
    snapshot = SnapshotId(image.next_offset, 1)
    loaded = SnapshotImage()
    loaded.load_snapshot(snapshot, metadata_batches(0, 1, 0, [decode_metadata_record(v) for v in values]))
    assert loaded.controller_registrations() == image.controller_registrations()


# ------------------------------------------------------------------------------------------- DescribeCluster


def describe() -> messages.DescribeClusterRequest:
    return messages.DescribeClusterRequest(endpoint_type=2)


def test_describe_cluster_lists_registered_controllers_and_voters_not_registered_yet() -> None:
    controllers = [
        RECORD(controller_id=2, incarnation_id=INCARNATION_A, end_points=[  # a voter: its registration wins
            RECORD.ControllerEndpoint(name="CONTROLLER", host="ctl2", port=7002)]),
        RECORD(controller_id=9, incarnation_id=INCARNATION_A, end_points=[  # an observer, maybe stopped
            RECORD.ControllerEndpoint(name="CONTROLLER", host="ctl9", port=7009)]),
        RECORD(controller_id=8, incarnation_id=INCARNATION_A)]  # no endpoint on this listener
    response = describe_cluster.handle(describe(), 2, view(leader_id=2), controllers)
    # Voter 1 and 3 have not registered: listed from the voter set (see the handler's docstring).
    assert [(b.broker_id, b.host, b.port) for b in response.brokers] == [
        (1, "127.0.0.1", 9094), (2, "ctl2", 7002), (3, "127.0.0.1", 9096), (9, "ctl9", 7009)]
    assert response.controller_id == 2
    other = describe_cluster.handle(describe(), 2, view(listener="OTHER", leader_id=2), controllers)
    assert (other.brokers, other.controller_id) == ([], -1)


# ------------------------------------------------------------------------------------------- runtime


def lone_runtime(bootstrap: BootstrapMetadata | None = None) -> ControllerRuntime:
    """A lone leader, which registers itself in process (its voter set names another port)."""
    log = MemoryLog()
    # Advertised port 0 stands for the port bound.
    identity = NodeIdentity(node_id=1, directory_id=Uuid(b"\x09" * 16), cluster_id="test-cluster-id-000000",
                            listeners=(Endpoint("CONTROLLER", "127.0.0.1", 0),))
    options = RuntimeOptions(listeners=(ListenerSpec("CONTROLLER", "127.0.0.1", 0),),
                             bootstrap_metadata=bootstrap, bootstrap_source="test")
    return ControllerRuntime(identity, RaftConfig(), FakeCore(1, log), log, options)


def test_a_controller_registers_with_the_active_controller_and_describe_cluster_lists_it() -> None:
    runtime = lone_runtime()
    with running(runtime) as server:
        core = server.core
        assert runtime.registration is not None
        wait_for(lambda: runtime.registration is not None and runtime.registration.registered)
        [registered] = core.registered_controllers()
        assert registered.incarnation_id == runtime.registration.incarnation_id
        assert registered.end_points == [RECORD.ControllerEndpoint(name="CONTROLLER", host="127.0.0.1",
                                                                   port=server.port, security_protocol=0)]
        assert [(f.name, f.min_supported_version, f.max_supported_version) for f in registered.features] == [
            *SUPPORTED_FEATURES]
        with server.client() as client:
            assert {(k.api_key, k.min_version, k.max_version) for k in client.api_versions().api_keys} >= {
                (70, 0, 0)}
            answer = client.request(messages.DescribeClusterRequest(endpoint_type=2), 2)
            assert [(b.broker_id, b.port) for b in answer.brokers] == [(1, server.port)]
            assert answer.controller_id == 1
            # An observer registers through the same API; another incarnation of node 1 replaces ours,
            # and the manager registers again, as Kafka's does.
            observer = registration(controller_id=7, host="127.0.0.1", port=7007)
            assert client.request(observer, 0).error_code == 0
            assert client.request(registration(controller_id=1, incarnation=INCARNATION_B), 0).error_code == 0
            mine = runtime.registration.incarnation_id
            wait_for(lambda: [r.incarnation_id for r in core.registered_controllers()] == [mine,
                                                                                           INCARNATION_A])
            answer = client.request(messages.DescribeClusterRequest(endpoint_type=2), 2)
            assert [(b.broker_id, b.port) for b in answer.brokers] == [(1, server.port), (7, 7007)]
        appended = [type(r).__name__ for batch in core.appended for r in batch]
        assert appended.count("RegisterControllerRecord") == 4


def test_nothing_registers_before_metadata_version_3_7(caplog: pytest.LogCaptureFixture) -> None:
    bootstrap = BootstrapMetadata([ApiMessageAndVersion(messages.FeatureLevelRecord(
        name="metadata.version", feature_level=14), 0)], 14)
    caplog.set_level(logging.INFO, logger=registration_log.name)
    runtime = lone_runtime(bootstrap)
    with running(runtime) as server:
        core = server.core
        wait_for(lambda: any("predates controller registration" in r.getMessage() for r in caplog.records))
        with server.client() as client:
            refused = client.request(registration(), 0)
            assert (refused.error_code, refused.error_message) == (35, "The version of API is not supported.")
            assert client.request(messages.DescribeClusterRequest(endpoint_type=2), 2).error_code == 35
        assert core.registered_controllers() == []
        assert runtime.registration is not None and not runtime.registration.registered


def test_bad_registrations_get_answers_and_an_unreadable_one_closes_only_its_connection() -> None:
    with running(lone_runtime()) as server:
        wait_for(lambda: server.runtime._active)
        with server.client() as client:
            answer = client.request(registration(host="a b"), 0)
            assert answer.error_code == 42 and "contains the character ' '" in answer.error_message
            with server.client() as offender:
                body = registration().encode(0)
                offender.send_raw(raw_request(70, 0, 5, body[:-7]))  # the Features list cut short
                assert offender.is_closed_by_server()
            assert client.request(registration(), 0).error_code == 0  # the server carries on
        assert server.thread.is_alive()


def test_a_controller_that_is_not_active_says_not_controller() -> None:
    log = MemoryLog()
    core = FakeCore(2, log, lead=False)
    options = RuntimeOptions(listeners=(ListenerSpec("CONTROLLER", "127.0.0.1", 0),))
    runtime = ControllerRuntime(NodeIdentity(2, Uuid(b"\x03" * 16), "c", (Endpoint("CONTROLLER", "h", 1),)),
                                RaftConfig(), core, log, options)
    with running(runtime) as server, server.client() as client:
        answer = client.request(registration(), 0)
        not_controller = "This is not the correct controller for this cluster."
        assert (answer.error_code, answer.error_message) == (41, not_controller)
        assert log.end_offset() == 0
