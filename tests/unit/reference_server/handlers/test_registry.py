"""The API table: what each listener kind serves follows Kafka's specs, ApiVersions and forwarding read
it, and the runtime dispatches through it."""

from __future__ import annotations

import dataclasses

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.spec import all_messages
from kafka_admin_kraft_server.handlers import BROKER_APIS, CONTROLLER_APIS, api_versions, envelope, registry
from kafka_admin_kraft_server.handlers.registry import BROKER, CONTROLLER, Answer, Call, ControllerRole
from unit.reference_server.handlers.handlers_testlib import view
from unit.reference_server.runtime_testlib import make_runtime, running

SPEC_LISTENERS = {m.api_key: set(m.listeners) for m in all_messages() if m.kind == "request"}


def test_controller_listeners_serve_what_kafka_serves_on_them() -> None:
    """Every API Kafka's specs give the controller listener, the SASL exchange included (whatever the
    listener's security: Kafka answers ILLEGAL_SASL_STATE where no exchange is due)."""
    expected = {key for key, listeners in SPEC_LISTENERS.items() if CONTROLLER in listeners}
    assert set(CONTROLLER_APIS) == expected
    assert list(CONTROLLER_APIS) == sorted(CONTROLLER_APIS)


def test_broker_listeners_serve_kafkas_broker_apis_but_fetch() -> None:
    """The reference broker hosts no partitions: Fetch is the one broker API it leaves out."""
    expected = {key for key, listeners in SPEC_LISTENERS.items() if BROKER in listeners}
    assert set(BROKER_APIS) == expected - {ApiKey.FETCH}
    assert {key for key in BROKER_APIS if registry.forwarded(key)} == {
        ApiKey.DESCRIBE_QUORUM, ApiKey.UPDATE_FEATURES, ApiKey.UNREGISTER_BROKER, ApiKey.ADD_RAFT_VOTER,
        ApiKey.REMOVE_RAFT_VOTER, ApiKey.UNREGISTER_CONTROLLER, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS}


def test_every_row_serves_its_request_class_versions() -> None:
    for key in {*CONTROLLER_APIS, *BROKER_APIS}:
        entry = registry.api(key)
        assert entry is not None and entry.versions == messages.request_class(key).VERSIONS


def test_api_versions_lists_the_table_at_the_lines_versions() -> None:
    """Every API the table serves on broker listeners, at the versions of the node's line (the
    newest: the codec's, but for DescribeQuorum v3, which no Kafka line serves, and the ACL APIs' v0,
    which Kafka 4.0 removed)."""
    response, _ = api_versions.handle(messages.ApiVersionsRequest(), 0, view(), BROKER)
    newest = {ApiKey.DESCRIBE_QUORUM: (0, 2), ApiKey.DESCRIBE_ACLS: (1, 3), ApiKey.CREATE_ACLS: (1, 3),
              ApiKey.DELETE_ACLS: (1, 3)}
    assert [(k.api_key, (k.min_version, k.max_version)) for k in response.api_keys] == [
        (key, newest.get(key, messages.request_class(key).VERSIONS)) for key in BROKER_APIS]


def test_unreachable_answers_come_from_the_forwarded_rows() -> None:
    for key in BROKER_APIS:
        entry = registry.api(key)
        assert entry is not None
        if entry.unreachable is None:
            with pytest.raises(ValueError, match="not forwarded"):
                envelope.unreachable(key, 0, 100)
        else:
            assert type(envelope.unreachable(key, 0, 100)) is messages.response_class(key)


async def _no_answer(node: ControllerRole, call: Call) -> Answer:
    return None


def test_the_table_refuses_rows_that_break_its_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(ApiKey.DESCRIBE_CLUSTER, controller=_no_answer)
    monkeypatch.delitem(registry._TABLE, ApiKey.METADATA)  # room for it, so that another rule refuses it
    with pytest.raises(ValueError, match="MetadataRequest is served by broker listeners in Kafka, not by "
                                         "controller listeners"):
        registry.register(ApiKey.METADATA, controller=_no_answer)
    with pytest.raises(ValueError, match="no broker handler of its own"):
        registry.register(ApiKey.METADATA, broker=registry.forward,
                          forwarded=lambda version, node_id: messages.MetadataResponse())
    assert registry.api(ApiKey.METADATA) is None


def test_the_runtime_dispatches_through_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Swap DescribeCluster's controller handler in the table: the running server answers with it."""
    async def intercepted(node: ControllerRole, call: Call) -> Answer:
        response = messages.DescribeClusterResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                                    error_message="intercepted")
        return response, call.version

    row = registry.api(ApiKey.DESCRIBE_CLUSTER)
    assert row is not None
    swapped = dataclasses.replace(row, controller=intercepted)
    monkeypatch.setitem(registry._TABLE, ApiKey.DESCRIBE_CLUSTER, swapped)
    with running(make_runtime()) as server, server.client() as client:
        answer = client.request(messages.DescribeClusterRequest(endpoint_type=2), 1)
    assert (answer.error_code, answer.error_message) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                                         "intercepted")
