"""DescribeAcls, CreateAcls and DeleteAcls on the controller: the decisions in Kafka's order with Kafka's
messages (``AclApis``, ``AclControlManager``), and what a running controller answers and writes."""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from integration.client import ConnectionClosed

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.protocol.spec import all_messages
from kafka_admin_kraft_server.authorizer import AuthorizerConfig, StandardAuthorizer
from kafka_admin_kraft_server.handlers import BROKER_APIS, CONTROLLER_APIS, acls, envelope, registry
from unit.protocol.strategies import MessageStrategies
from unit.reference_server.runtime_testlib import Running, make_runtime, running, wait_for

CREATE = messages.CreateAclsRequest
DESCRIBE = messages.DescribeAclsRequest
DELETE = messages.DeleteAclsRequest
RECORD = messages.AccessControlEntryRecord
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
TOPIC, CLUSTER = 2, 4
READ, ALTER, DESCRIBE_OP = 3, 7, 8
DENY, ALLOW = 2, 3


def creation(name: str = "kafka-cluster", *, kind: int = CLUSTER, pattern: int = LITERAL,
             principal: str = "User:alice", host: str = "*", operation: int = ALTER,
             permission: int = ALLOW) -> CREATE.AclCreation:
    return CREATE.AclCreation(resource_type=kind, resource_name=name, resource_pattern_type=pattern,
                              principal=principal, host=host, operation=operation, permission_type=permission)


def record(name: str = "kafka-cluster", *, kind: int = CLUSTER, pattern: int = LITERAL,
           principal: str = "User:alice", operation: int = ALTER, permission: int = ALLOW) -> RECORD:
    return RECORD(id=Uuid.random(), resource_type=kind, resource_name=name, pattern_type=pattern,
                  principal=principal, host="*", operation=operation, permission_type=permission)


def table(*records: RECORD) -> dict[Uuid, RECORD]:
    return {r.id: r for r in records}


def results(response: messages.CreateAclsResponse) -> list[tuple[int, str | None]]:
    return [(r.error_code, r.error_message) for r in response.results]


# ------------------------------------------------------------------ CreateAcls


def test_create_writes_one_record_per_new_binding() -> None:
    existing = record()
    response, records = acls.create(CREATE(creations=[
        creation(), creation("orders", kind=TOPIC, operation=READ),
        creation("orders", kind=TOPIC, operation=READ),
        creation("pay", kind=TOPIC, pattern=PREFIXED, permission=DENY)]),
        table(existing), active=True, leader_id=1, node_id=1)
    # The first exists already, the third repeats the second: both succeed without a record.
    assert results(response) == [(0, ""), (0, ""), (0, ""), (0, "")]
    assert [(r.resource_name, r.pattern_type, r.operation, r.permission_type) for r in records] == [
        ("orders", LITERAL, READ, ALLOW), ("pay", PREFIXED, ALTER, DENY)]
    ids = {r.id for r in records}
    assert len(ids) == 2 and existing.id not in ids


@pytest.mark.parametrize(("acl", "message"), [
    (creation("other"), "The only valid name for the CLUSTER resource is kafka-cluster"),
    (creation("", kind=TOPIC), "Invalid empty resource name"),
    (creation(kind=ANY), "Invalid resourceType ANY"),
    (creation(kind=99), "Invalid resourceType UNKNOWN"),
    (creation("t", kind=TOPIC, pattern=MATCH), "Invalid patternType MATCH"),
    (creation("t", kind=TOPIC, pattern=ANY), "Invalid patternType ANY"),
    (creation(operation=ANY), "Invalid operation ANY"),
    (creation(operation=77), "Invalid operation UNKNOWN"),
    (creation(permission=ANY), "Invalid permissionType ANY"),
])
def test_create_refuses_invalid_bindings_one_by_one(acl: CREATE.AclCreation, message: str) -> None:
    response, records = acls.create(CREATE(creations=[acl, creation("t", kind=TOPIC)]), {}, active=True,
                                    leader_id=1, node_id=1)
    assert results(response) == [(42, message), (0, "")]
    assert [r.resource_name for r in records] == ["t"]


def test_a_controller_that_is_not_active_names_the_leader_after_the_first_checks() -> None:
    response, records = acls.create(CREATE(creations=[creation(), creation("other"), creation(kind=ANY)]), {},
                                    active=False, leader_id=2, node_id=1)
    not_controller = (41, "The active controller appears to be node 2.")
    assert results(response) == [not_controller,
                                 (42, "The only valid name for the CLUSTER resource is kafka-cluster"),
                                 not_controller]
    assert records == []


# ------------------------------------------------------------------ DescribeAcls


def test_describe_groups_the_matches_by_pattern() -> None:
    stored = table(record(), record(operation=DESCRIBE_OP, principal="User:bob"),
                   record("orders", kind=TOPIC, operation=READ), record("or", kind=TOPIC, pattern=PREFIXED))
    auth = StandardAuthorizer(AuthorizerConfig(frozenset()), 1, lambda: stored)
    everything = DESCRIBE(resource_type_filter=ANY, resource_name_filter=None, pattern_type_filter=ANY,
                          principal_filter=None, host_filter=None, operation=ANY, permission_type=ANY)
    response = acls.describe(everything, auth)
    assert (response.error_code, response.error_message) == (0, "")
    assert [(r.resource_type, r.resource_name, r.pattern_type, [(a.principal, a.operation) for a in r.acls])
            for r in response.resources] == [
        (TOPIC, "or", PREFIXED, [("User:alice", ALTER)]),
        (TOPIC, "orders", LITERAL, [("User:alice", READ)]),
        (CLUSTER, "kafka-cluster", LITERAL, [("User:alice", ALTER), ("User:bob", DESCRIBE_OP)])]
    matching = DESCRIBE(resource_type_filter=TOPIC, resource_name_filter="orders", pattern_type_filter=MATCH,
                        principal_filter=None, host_filter=None, operation=ANY, permission_type=ANY)
    assert [r.resource_name for r in acls.describe(matching, auth).resources] == ["or", "orders"]


def test_without_an_authorizer_the_acl_apis_are_disabled() -> None:
    response = acls.describe(DESCRIBE(resource_type_filter=ANY, operation=ANY, permission_type=ANY), None)
    assert (response.error_code, response.error_message, response.resources) == (
        54, "No Authorizer is configured on the broker", [])


def test_unknown_codes_fail_to_parse_in_kafka() -> None:
    assert acls.unparseable(CREATE(creations=[creation(operation=0)]))
    assert not acls.unparseable(CREATE(creations=[creation(operation=77)]))
    assert acls.unparseable(DESCRIBE(resource_type_filter=0, operation=ANY, permission_type=ANY))
    assert acls.unparseable(DELETE(filters=[DELETE.DeleteAclsFilter(resource_type_filter=ANY,
                                                                    pattern_type_filter=ANY, operation=ANY,
                                                                    permission_type=0)]))


# ------------------------------------------------------------------ DeleteAcls


def delete_filter(name: str | None = None, *, kind: int = ANY, pattern: int = ANY,
                  principal: str | None = None, operation: int = ANY) -> DELETE.DeleteAclsFilter:
    return DELETE.DeleteAclsFilter(resource_type_filter=kind, resource_name_filter=name,
                                   pattern_type_filter=pattern, principal_filter=principal, host_filter=None,
                                   operation=operation, permission_type=ANY)


def test_delete_removes_what_each_filter_matches_once() -> None:
    alice, bob = record(), record(principal="User:bob", operation=DESCRIBE_OP)
    response, records = acls.delete(DELETE(filters=[
        delete_filter(principal="User:alice"), delete_filter(kind=CLUSTER), delete_filter(kind=TOPIC),
        delete_filter(kind=99), delete_filter(operation=88)]), table(alice, bob), active=True, leader_id=1,
        node_id=1)
    found = [(r.error_code, r.error_message, [(m.principal, m.error_code, m.error_message)
                                              for m in r.matching_acls]) for r in response.filter_results]
    assert found == [(0, None, [("User:alice", 0, None)]),
                     (0, None, [("User:alice", 0, None), ("User:bob", 0, None)]),
                     (0, None, []),
                     (42, "Unknown patternFilter.", []),
                     (42, "Unknown entryFilter.", [])]
    assert [r.id for r in records] == [alice.id, bob.id]  # once each, however many filters match


def test_delete_on_a_controller_that_is_not_active() -> None:
    response, records = acls.delete(DELETE(filters=[delete_filter(), delete_filter()]), table(record()),
                                    active=False, leader_id=-1, node_id=1)
    assert [(r.error_code, r.error_message) for r in response.filter_results] == [
        (41, "No controller appears to be active.")] * 2
    assert records == []


# ------------------------------------------------------------------ the table, and a running controller


def test_the_acl_apis_are_served_on_both_listener_kinds() -> None:
    for key in (29, 30, 31):
        assert key in CONTROLLER_APIS and key in BROKER_APIS
    assert not registry.forwarded(29) and registry.forwarded(30) and registry.forwarded(31)
    unreachable = envelope.unreachable(30, 3, 100, CREATE(creations=[creation(), creation()]))
    assert results(unreachable) == [(41, "This is not the correct controller for this cluster.")] * 2


def ask(server: Running, body: Any, version: int) -> Any:
    with server.client() as client:
        return client.request(body, version)


def test_a_running_controller_creates_describes_and_deletes() -> None:
    runtime = make_runtime(authorizer=AuthorizerConfig(frozenset({"User:ANONYMOUS"})))
    with running(runtime) as server:
        two = [creation(), creation("orders", kind=TOPIC, operation=READ)]
        created = ask(server, CREATE(creations=two), 3)
        assert results(created) == [(0, ""), (0, "")]
        stored = server.core.acls()
        assert sorted(r.resource_name for r in stored.values()) == ["kafka-cluster", "orders"]
        again = ask(server, CREATE(creations=[creation()]), 3)
        assert results(again) == [(0, "")] and len(server.core.acls()) == 2  # no second record
        described = ask(server, DESCRIBE(resource_type_filter=TOPIC, resource_name_filter=None,
                                         pattern_type_filter=ANY, principal_filter="User:alice",
                                         host_filter=None, operation=ANY, permission_type=ANY), 3)
        assert [r.resource_name for r in described.resources] == ["orders"]
        deleted = ask(server, DELETE(filters=[delete_filter(kind=TOPIC)]), 3)
        assert [m.resource_name for m in deleted.filter_results[0].matching_acls] == ["orders"]
        wait_for(lambda: sorted(r.resource_name for r in server.core.acls().values()) == ["kafka-cluster"])


def test_a_running_controller_without_an_authorizer() -> None:
    with running(make_runtime()) as server:
        created = ask(server, CREATE(creations=[creation(), creation()]), 1)
        assert results(created) == [(54, "No Authorizer is configured.")] * 2
        deleted = ask(server, DELETE(filters=[delete_filter()]), 1)
        assert [(r.error_code, r.error_message) for r in deleted.filter_results] == [
            (54, "No Authorizer is configured.")]
        assert server.core.acls() == {}


ACL_SPECS = {spec.name: spec for spec in all_messages()
             if spec.name in ("CreateAclsRequest", "DescribeAclsRequest", "DeleteAclsRequest")}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_acl_requests_get_an_answer_or_close_the_connection(data: st.DataObject) -> None:
    """Any request the codec reads (random codes, names, principals, hosts) is answered with one result
    per item, or is one Kafka fails to parse; the decisions never raise."""
    spec = ACL_SPECS[data.draw(st.sampled_from(sorted(ACL_SPECS)))]
    version = data.draw(st.sampled_from(spec.version_list))
    request = data.draw(MessageStrategies(spec).message(version))
    stored = table(record(), record("t", kind=TOPIC, pattern=PREFIXED, principal="alice"))
    if acls.unparseable(request):
        return
    if isinstance(request, CREATE):
        response, records = acls.create(request, stored, active=True, leader_id=1, node_id=1)
        assert len(response.results) == len(request.creations)
        assert len(records) <= len(request.creations)
    elif isinstance(request, DELETE):
        deleted, removals = acls.delete(request, stored, active=True, leader_id=1, node_id=1)
        assert len(deleted.filter_results) == len(request.filters)
        assert {r.id for r in removals} <= set(stored)
    else:
        auth = StandardAuthorizer(AuthorizerConfig(frozenset()), 1, lambda: stored)
        assert acls.describe(request, auth).error_code == 0


def test_mutated_acl_frames_never_take_the_controller_down(caplog: pytest.LogCaptureFixture) -> None:
    """Random bytes in ACL requests: each is answered or closes its own connection; the controller keeps
    answering the others and logs no unexpected error."""
    rng = random.Random(29)
    everything = DESCRIBE(resource_type_filter=ANY, operation=ANY, permission_type=ANY)
    bodies = [framing.encode_request(CREATE(creations=[creation(), creation("t", kind=TOPIC)]), 3, 1, "fuzz"),
              framing.encode_request(DELETE(filters=[delete_filter(principal="User:alice")]), 2, 1, "fuzz"),
              framing.encode_request(everything, 1, 1, "fuzz")]
    runtime = make_runtime(authorizer=AuthorizerConfig(frozenset({"User:ANONYMOUS"})))
    with running(runtime) as server, server.client() as bystander:
        for _ in range(60):
            frame = bytearray(rng.choice(bodies)[4:])
            for _ in range(rng.randrange(1, 4)):
                frame[rng.randrange(10, len(frame))] = rng.randrange(256)
            with server.client() as offender:
                offender.send_raw(len(frame).to_bytes(4, "big") + bytes(frame))
                with contextlib.suppress(ConnectionClosed, OSError):
                    offender.recv_frame()
            assert bystander.api_versions().error_code == 0
    assert "Unexpected error" not in caplog.text
