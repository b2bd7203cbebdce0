"""ControllerRegistration (KIP-919) on the controller: the handler's decisions, and what a running
controller, active or not, answers to good, bad and unreadable registrations."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.handlers import (
    BROKER_APIS,
    CONTROLLER_APIS,
    api_versions,
    controller_registration,
)
from kafka_admin_kraft_server.raft.api import Endpoint, NodeIdentity, RaftConfig
from kafka_admin_kraft_server.runtime import ControllerRuntime, ListenerSpec, RuntimeOptions
from unit.reference_server.fakes import FakeCore, MemoryLog
from unit.reference_server.handlers.handlers_testlib import INCARNATION_A, RECORD, REQ, registration, view
from unit.reference_server.runtime_testlib import lone_runtime, raw_request, running, wait_for


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


# ------------------------------------------------------------------------------------------- DescribeCluster


# ------------------------------------------------------------------------------------------- runtime


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
