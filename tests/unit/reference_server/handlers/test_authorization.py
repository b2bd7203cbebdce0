"""Cluster authorization before each handler (``handlers/authorization.py``): which operation each API
needs on a controller and on a broker, a refusal as Kafka answers it, Kafka's text of the refused
request, and forwarded requests decided for the client's principal."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kafka_admin_kraft.acl import AclOperation
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import ApiMessageAndVersion
from kafka_admin_kraft_server.authorizer import AuthorizerConfig, StandardAuthorizer
from kafka_admin_kraft_server.handlers import authorization, envelope
from kafka_admin_kraft_server.handlers.registry import BROKER, CONTROLLER, Call
from unit.reference_server.runtime_testlib import make_runtime, running, wait_for

RECORD = messages.AccessControlEntryRecord
REQUEST_TEXT = (r"Request Request\(processor=(\d+), "
                r"connectionId=127\.0\.0\.1:(\d+)-127\.0\.0\.1:(\d+)-(\d+), "
                r"session=org\.apache\.kafka\.network\.Session@[0-9a-f]+, "
                r"listenerName=ListenerName\(CONTROLLER\), securityProtocol=PLAINTEXT, "
                r"buffer=(null|java\.nio\.HeapByteBuffer\[pos=\d+ lim=\d+ cap=\d+\]), "
                r"envelope=None\) is not authorized\.")


def allow(operation: int, principal: str = "User:alice") -> RECORD:
    return RECORD(id=Uuid.random(), resource_type=4, resource_name="kafka-cluster", pattern_type=3,
                  principal=principal, host="*", operation=operation, permission_type=3)


def call(body: Any, version: int, *, principal: str = "alice", host: str = "127.0.0.1") -> Call:
    frame = framing.encode_request(body, version, 7, "test")[4:]
    return Call(framing.decode_request(frame), "CONTROLLER", "/127.0.0.1:5000", frame, host, principal,
                connection_id="127.0.0.1:9093-127.0.0.1:5000-0", processor=1, session=0x472CB172)


def authorizer(*records: RECORD) -> StandardAuthorizer:
    stored = {record.id: record for record in records}
    return StandardAuthorizer(AuthorizerConfig(frozenset({"User:admin"})), 1, lambda: stored)


DESCRIBE_CLUSTER = messages.DescribeClusterRequest(endpoint_type=2)
UPDATE = messages.UpdateFeaturesRequest(feature_updates=[])


def test_without_an_authorizer_nothing_is_refused() -> None:
    assert authorization.check(None, call(DESCRIBE_CLUSTER, 1), CONTROLLER) is None


def test_a_controller_needs_alter_for_describe_cluster() -> None:
    request = call(DESCRIBE_CLUSTER, 1)
    refused = authorization.check(authorizer(allow(AclOperation.DESCRIBE)), request, CONTROLLER)
    assert isinstance(refused, messages.DescribeClusterResponse) and refused.error_code == 31
    assert refused.error_message == (
        "Request Request(processor=1, connectionId=127.0.0.1:9093-127.0.0.1:5000-0, "
        "session=org.apache.kafka.network.Session@472cb172, listenerName=ListenerName(CONTROLLER), "
        "securityProtocol=PLAINTEXT, buffer=null, envelope=None) is not authorized.")
    assert authorization.check(authorizer(allow(AclOperation.ALTER)), request, CONTROLLER) is None
    assert authorization.check(authorizer(), call(DESCRIBE_CLUSTER, 1, principal="admin"), CONTROLLER) is None


def test_a_broker_answers_describe_cluster_to_anyone_and_leaves_forwarded_apis_to_the_controller() -> None:
    auth = authorizer()
    assert authorization.check(auth, call(DESCRIBE_CLUSTER, 1), BROKER) is None
    assert authorization.check(auth, call(UPDATE, 2), BROKER) is None
    describe_acls = messages.DescribeAclsRequest(resource_type_filter=1, operation=1, permission_type=1)
    refused = authorization.check(auth, call(describe_acls, 2), BROKER)
    assert refused is not None and refused.error_code == 31


def test_forwardable_requests_keep_their_buffer_and_forwarded_ones_name_their_envelope() -> None:
    direct = call(UPDATE, 2)
    size = len(direct.frame)
    assert f"buffer=java.nio.HeapByteBuffer[pos={size} lim={size} cap={size}], envelope=None)" in \
        authorization.request_text(direct)
    wrapped = envelope.wrap(direct.frame, "10.0.0.9", "alice")
    outer = call(wrapped, 0, principal="broker")
    inner = Call(direct.request, "CONTROLLER", "/127.0.0.1:5000", direct.frame, "10.0.0.9", "alice",
                 connection_id=outer.connection_id, processor=outer.processor, session=1, envelope=outer)
    text = authorization.request_text(inner)
    assert text.endswith(f"envelope=Some({authorization.request_text(outer)}))")
    assert "buffer=java.nio.HeapByteBuffer" in authorization.request_text(outer)


@pytest.mark.parametrize(("key", "body", "version", "operation"), [
    (ApiKey.DESCRIBE_QUORUM, messages.DescribeQuorumRequest(), 2, AclOperation.DESCRIBE),
    (ApiKey.UPDATE_FEATURES, UPDATE, 2, AclOperation.ALTER),
    (ApiKey.ADD_RAFT_VOTER, messages.AddRaftVoterRequest(), 0, AclOperation.ALTER),
    (ApiKey.REMOVE_RAFT_VOTER, messages.RemoveRaftVoterRequest(), 0, AclOperation.ALTER),
    (ApiKey.VOTE, messages.VoteRequest(), 1, AclOperation.CLUSTER_ACTION),
    (ApiKey.BROKER_HEARTBEAT, messages.BrokerHeartbeatRequest(), 1, AclOperation.CLUSTER_ACTION),
])
def test_each_api_is_allowed_by_its_operation_only(key: int, body: Any, version: int,
                                                   operation: AclOperation) -> None:
    request = call(body, version)
    assert authorization.check(authorizer(), request, CONTROLLER) is not None
    others = [o for o in (AclOperation.DESCRIBE, AclOperation.ALTER, AclOperation.CLUSTER_ACTION)
              if o != operation and not (operation == AclOperation.DESCRIBE and o == AclOperation.ALTER)]
    for other in others:
        assert authorization.check(authorizer(allow(other)), request, CONTROLLER) is not None, other
    assert authorization.check(authorizer(allow(operation)), request, CONTROLLER) is None


def test_a_running_controller_refuses_and_names_the_request() -> None:
    runtime = make_runtime(authorizer=AuthorizerConfig(frozenset()))
    with running(runtime) as server, server.client() as client:
        refused = client.request(messages.DescribeClusterRequest(endpoint_type=2), 1)
        assert refused.error_code == 31 and re.fullmatch(REQUEST_TEXT, refused.error_message)
        quorum = client.request(messages.DescribeQuorumRequest(), 2)
        assert (quorum.error_code, quorum.topics) == (31, [])
        update = client.request(UPDATE, 2)
        assert update.error_code == 31
        match = re.fullmatch(REQUEST_TEXT, update.error_message)
        assert match is not None and match.group(5).startswith("java.nio.HeapByteBuffer")
        assert client.api_versions().error_code == 0  # ApiVersions needs nothing


def test_describe_cluster_answers_the_authorized_operations() -> None:
    request = messages.DescribeClusterRequest(endpoint_type=2, include_cluster_authorized_operations=True)
    runtime = make_runtime(authorizer=AuthorizerConfig(frozenset({"User:ANONYMOUS"})))
    with running(runtime) as server, server.client() as client:
        assert client.request(request, 1).cluster_authorized_operations == 8096
    stored = {r.id: r for r in (allow(AclOperation.ALTER, "User:ANONYMOUS"),)}
    from kafka_admin_kraft_server.handlers.describe_cluster import authorized_operations

    auth = StandardAuthorizer(AuthorizerConfig(frozenset()), 1, lambda: stored)
    assert authorized_operations(auth, call(request, 1, principal="ANONYMOUS")) == \
        (1 << AclOperation.ALTER) | (1 << AclOperation.DESCRIBE)
    assert authorized_operations(auth, call(request, 1, principal="bob")) == 0
    assert authorized_operations(None, call(request, 1)) == 8096


def test_an_envelope_needs_cluster_action_and_its_request_is_decided_for_the_client() -> None:
    """ControllerApis.handleEnvelopeRequest: CLUSTER_ACTION for the broker's own principal (a refusal is
    the error code alone), then the inner request for the principal and address it carries."""
    inner = messages.DescribeQuorumRequest(topics=[])
    frame = framing.encode_request(inner, 2, 11, "client")[4:]
    refused_broker = make_runtime(authorizer=AuthorizerConfig(frozenset()))
    with running(refused_broker) as server, server.client() as broker:
        answer = broker.request(envelope.wrap(frame, "10.0.0.9", "admin"), 0)
        assert (answer.error_code, answer.response_data) == (31, None)

    trusted = make_runtime(authorizer=AuthorizerConfig(frozenset({"User:ANONYMOUS", "User:admin"})))
    with running(trusted) as server, server.client() as broker:
        for principal, code in (("alice", 31), ("admin", 0)):
            answer = broker.request(envelope.wrap(frame, "10.0.0.9", principal), 0)
            assert answer.error_code == 0
            correlation_id, body = framing.decode_response(answer.response_data, 55, 2)
            assert (correlation_id, body.error_code) == (11, code)
    stored = {r.id: r for r in (allow(AclOperation.DESCRIBE, "User:alice"),)}
    host_bound = RECORD(id=Uuid.random(), resource_type=4, resource_name="kafka-cluster", pattern_type=3,
                        principal="User:bob", host="10.0.0.9", operation=AclOperation.DESCRIBE,
                        permission_type=3)
    stored[host_bound.id] = host_bound
    auth = StandardAuthorizer(AuthorizerConfig(frozenset()), 1, lambda: stored)
    outer = call(envelope.wrap(frame, "10.0.0.9", "bob"), 0, principal="admin")
    forwarded = Call(framing.decode_request(frame), "CONTROLLER", "/127.0.0.1:5000", frame, "10.0.0.9", "bob",
                     envelope=outer)
    assert authorization.check(auth, forwarded, CONTROLLER) is None  # bob from the client's own address
    elsewhere = Call(forwarded.request, "CONTROLLER", "/127.0.0.1:5000", frame, "10.0.0.8", "bob")
    assert authorization.check(auth, elsewhere, CONTROLLER) is not None


PRIVILEGED = [
    (messages.DescribeClusterRequest(endpoint_type=2), 1, "message"),
    (messages.DescribeQuorumRequest(topics=[]), 2, "code"),
    (messages.AddRaftVoterRequest(voter_id=4, listeners=[]), 0, "default"),
    (messages.RemoveRaftVoterRequest(voter_id=3), 0, "default"),
    (UPDATE, 2, "message"),
    (messages.UnregisterBrokerRequest(broker_id=99), 0, "message"),
    (messages.UnregisterControllerRequest(controller_id=99), 0, "message"),
    (messages.DescribeAclsRequest(resource_type_filter=1, operation=1, permission_type=1), 3, "message"),
    (messages.CreateAclsRequest(creations=[messages.CreateAclsRequest.AclCreation(
        resource_type=2, resource_name="t", principal="User:x", host="*", operation=3, permission_type=3)]),
     3, "message"),
    (messages.DeleteAclsRequest(filters=[messages.DeleteAclsRequest.DeleteAclsFilter(
        resource_type_filter=2, pattern_type_filter=1, operation=1, permission_type=1)]), 3, "message"),
]


def _refusal(response: Any) -> tuple[int, str | None]:
    """The error code and message of a response, wherever the API puts them."""
    if isinstance(response, messages.CreateAclsResponse):
        return response.results[0].error_code, response.results[0].error_message
    if isinstance(response, messages.DeleteAclsResponse):
        return response.filter_results[0].error_code, response.filter_results[0].error_message
    return response.error_code, response.error_message


def test_every_privileged_api_is_refused_until_an_acl_grants_it() -> None:
    runtime = make_runtime(authorizer=AuthorizerConfig(frozenset()))
    with running(runtime) as server, server.client() as client:
        for body, version, kind in PRIVILEGED:
            code, message = _refusal(client.request(body, version))
            expected = {"message": message is not None and re.fullmatch(REQUEST_TEXT, message) is not None,
                        "default": message == "Cluster authorization failed.", "code": message == ""}
            assert code == 31 and expected[kind], (type(body).__name__, message)
        grant = messages.AccessControlEntryRecord(
            id=Uuid.random(), resource_type=4, resource_name="kafka-cluster", pattern_type=3,
            principal="User:ANONYMOUS", host="*", operation=AclOperation.ALTER, permission_type=3)
        server.call(lambda: runtime.core.append([ApiMessageAndVersion(grant, 0)], runtime.now_ms()))
        wait_for(lambda: bool(server.core.acls()))
        for body, version, _ in PRIVILEGED:
            code, _message = _refusal(client.request(body, version))
            assert code != 31, type(body).__name__
