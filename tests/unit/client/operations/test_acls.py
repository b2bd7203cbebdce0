"""create_acls, describe_acls and delete_acls (``client/operations/acls.py``) through the in-memory network:
the requests at each version, per-item results, request-wide refusals raised (NOT_CONTROLLER retried)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafka_admin_kraft import AsyncAdmin
from kafka_admin_kraft.acl import (
    ANY_BINDING,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from kafka_admin_kraft.errors import (
    ClusterAuthorizationFailedError,
    InvalidRequestError,
    SecurityDisabledError,
    UnsupportedOperationError,
)
from kafka_admin_kraft.protocol import messages
from unit.client.fake import FAST, AsyncFakeNetwork, FakeNetwork, admin

CREATED = messages.CreateAclsResponse
DESCRIBED = messages.DescribeAclsResponse
DELETED = messages.DeleteAclsResponse
ALICE_DESCRIBES = AclBinding(ResourceType.CLUSTER, "kafka-cluster", "User:alice", AclOperation.DESCRIBE)
PREFIXED_WRITE = AclBinding(ResourceType.TOPIC, "pay", "User:bob", AclOperation.WRITE, AclPermissionType.DENY,
                            pattern_type=PatternType.PREFIXED, host="10.0.0.9")


def network(versions: tuple[int, int] = (1, 3)) -> FakeNetwork:
    net = FakeNetwork(3, leader=1)
    for node in net.nodes.values():
        for key in (29, 30, 31):
            node.versions[key] = versions
    return net


def created(*codes: tuple[int, str | None]) -> Any:
    return lambda node, version, body: CREATED(results=[
        CREATED.AclCreationResult(error_code=code, error_message=message) for code, message in codes])


def test_create_acls_sends_every_binding_and_returns_a_result_each() -> None:
    net = network()
    net.nodes[1].handlers[30] = created((0, ""), (42, "Invalid empty resource name"))
    with admin(net) as a:
        results = a.create_acls([ALICE_DESCRIBES, PREFIXED_WRITE])
    assert [(r.binding, r.ok, r.error_message) for r in results] == [
        (ALICE_DESCRIBES, True, None), (PREFIXED_WRITE, False, "Invalid empty resource name")]
    assert isinstance(results[1].exception(), InvalidRequestError)
    node, version, body = net.sent("CreateAcls")[0]
    assert (node, version) == (1, 3)
    assert [(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal, c.host, c.operation,
             c.permission_type) for c in body.creations] == [
        (4, "kafka-cluster", 3, "User:alice", "*", 8, 3), (2, "pay", 4, "User:bob", "10.0.0.9", 4, 2)]


def test_a_refusal_of_the_whole_request_is_raised_and_not_controller_retried() -> None:
    net = network()
    answers = iter([created((41, "The active controller appears to be node 2."),
                            (42, "The only valid name for the CLUSTER resource is kafka-cluster")),
                    created((0, ""), (0, ""))])
    net.nodes[1].handlers[30] = lambda node, version, body: next(answers)(node, version, body)
    with admin(net) as a:
        assert all(r.ok for r in a.create_acls([ALICE_DESCRIBES, PREFIXED_WRITE]))
    assert len(net.sent("CreateAcls")) == 2

    refused = network()
    refused.nodes[1].handlers[30] = created((31, "Request ... is not authorized."))
    with admin(refused) as a, pytest.raises(ClusterAuthorizationFailedError) as info:
        a.create_acls([ALICE_DESCRIBES])
    assert info.value.refusal is not None and info.value.refusal.operation == "ALTER"
    disabled = network()
    disabled.nodes[1].handlers[30] = created((54, "No Authorizer is configured."))
    with admin(disabled) as a, pytest.raises(SecurityDisabledError, match="No Authorizer is configured"):
        a.create_acls([ALICE_DESCRIBES])


def test_missing_results_are_reported_not_invented() -> None:
    net = network()
    net.nodes[1].handlers[30] = created((0, ""))
    with admin(net) as a:
        results = a.create_acls([ALICE_DESCRIBES, PREFIXED_WRITE])
    assert [r.error_code for r in results] == [0, -1]


def test_versions_follow_what_the_bindings_need() -> None:
    old = network((0, 3))
    old.nodes[1].handlers[30] = created((0, ""))
    with admin(old) as a:
        a.create_acls([ALICE_DESCRIBES])
    assert old.sent("CreateAcls")[0][1] == 3
    only_v0 = network((0, 0))
    with admin(only_v0) as a, pytest.raises(UnsupportedOperationError, match="other than LITERAL need v1"):
        a.create_acls([PREFIXED_WRITE])
    user = AclBinding(ResourceType.USER, "alice", "User:bob", AclOperation.ALL)
    with admin(network((1, 2))) as a, pytest.raises(UnsupportedOperationError, match="USER resource type"):
        a.create_acls([user])


def test_nothing_to_create_or_delete_sends_nothing() -> None:
    net = network()
    with admin(net) as a:
        assert a.create_acls([]) == [] and a.delete_acls([]) == []
    assert net.requests == []


def test_describe_acls_lists_the_bindings() -> None:
    net = network()
    r = DESCRIBED
    net.nodes[1].handlers[29] = lambda node, version, body: r(resources=[r.DescribeAclsResource(
        resource_type=4, resource_name="kafka-cluster", pattern_type=3, acls=[
            r.AclDescription(principal="User:alice", host="*", operation=8, permission_type=3),
            r.AclDescription(principal="User:carol", host="*", operation=99, permission_type=3)])])
    with admin(net) as a:
        found = a.describe_acls(AclBindingFilter(ResourceType.CLUSTER, principal="User:alice"))
        everything = a.describe_acls()
    assert found[0] == ALICE_DESCRIBES and found[1].operation == AclOperation.UNKNOWN
    assert len(everything) == 2
    _, version, body = net.sent("DescribeAcls")[0]
    assert (version, body.resource_type_filter, body.resource_name_filter, body.pattern_type_filter,
            body.principal_filter, body.host_filter, body.operation, body.permission_type) == (
        3, 4, None, 1, "User:alice", None, 1, 1)
    assert net.sent("DescribeAcls")[1][2].resource_type_filter == 1


def test_describe_acls_raises_its_error() -> None:
    net = network()
    net.nodes[1].handlers[29] = lambda node, version, body: DESCRIBED(
        error_code=54, error_message="No Authorizer is configured on the broker")
    with admin(net) as a, pytest.raises(SecurityDisabledError, match="on the broker"):
        a.describe_acls()
    with admin(net) as a, pytest.raises(TypeError, match="AclBindingFilter or None"):
        a.describe_acls(ALICE_DESCRIBES)  # type: ignore[arg-type]


def test_delete_acls_reports_what_each_filter_removed() -> None:
    net = network()
    r = DELETED

    def matched(name: str) -> Any:
        return r.DeleteAclsMatchingAcl(resource_type=2, resource_name=name, pattern_type=3,
                                       principal="User:bob", host="*", operation=3, permission_type=3,
                                       error_message=None)

    net.nodes[1].handlers[31] = lambda node, version, body: r(filter_results=[
        r.DeleteAclsFilterResult(error_message=None, matching_acls=[matched("a"), matched("b")]),
        r.DeleteAclsFilterResult(error_code=42, error_message="Unknown patternFilter.")])
    topics = AclBindingFilter(ResourceType.TOPIC)
    with admin(net) as a:
        results = a.delete_acls([topics, ANY_BINDING])
    assert results[0].ok and [b.resource_name for b in results[0].deleted] == ["a", "b"]
    assert results[0].filter == topics and results[1].error_message == "Unknown patternFilter."
    assert isinstance(results[1].exception(), InvalidRequestError)
    _, version, body = net.sent("DeleteAcls")[0]
    assert version == 3 and [f.resource_type_filter for f in body.filters] == [2, 1]


def test_arguments_are_checked_before_anything_is_sent() -> None:
    net = network()
    with admin(net) as a:
        with pytest.raises(TypeError, match="iterable of AclBinding"):
            a.create_acls(ALICE_DESCRIBES)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="hold AclBindingFilter only"):
            a.delete_acls([ALICE_DESCRIBES])  # type: ignore[list-item]
    assert net.requests == []


def test_async_admin() -> None:
    net = network()
    net.nodes[1].handlers[30] = created((0, ""))

    async def main() -> None:
        async with AsyncAdmin(bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net),
                              **FAST) as a:
            assert [r.ok for r in await a.create_acls([ALICE_DESCRIBES])] == [True]
            net.nodes[1].handlers[29] = lambda node, version, body: DESCRIBED()
            assert await a.describe_acls() == []
            net.nodes[1].handlers[31] = lambda node, version, body: DELETED(filter_results=[
                DELETED.DeleteAclsFilterResult(error_message=None)])
            assert [r.deleted for r in await a.delete_acls([ANY_BINDING])] == [()]

    asyncio.run(main())
