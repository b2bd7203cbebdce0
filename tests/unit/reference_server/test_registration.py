"""Controller registration (KIP-919): a runtime's registration manager registers it with the active
controller over the wire (itself, here), again when another incarnation replaces it, and not before
metadata.version 3.7."""

from __future__ import annotations

import logging

import pytest

from kafka_admin_kraft.features import SUPPORTED_FEATURES
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import ApiMessageAndVersion
from kafka_admin_kraft.storage import BootstrapMetadata
from kafka_admin_kraft_server.registration import log as registration_log
from unit.reference_server.handlers.handlers_testlib import INCARNATION_A, INCARNATION_B, RECORD, registration
from unit.reference_server.runtime_testlib import lone_runtime, running, wait_for


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
