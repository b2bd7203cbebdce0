"""create_acls, describe_acls and delete_acls: CreateAcls (API 30), DescribeAcls (API 29) and DeleteAcls
(API 31), like Kafka's Admin client's ``createAcls``, ``describeAcls`` and ``deleteAcls``.

With bootstrap controllers the requests go to the active controller; with bootstrap servers to any broker,
which answers DescribeAcls from its own metadata and forwards the other two. Versions: the highest both
sides speak, at least v1 when a binding or filter names a pattern type other than LITERAL (or ANY, which
v0 reads as LITERAL), and v3 when one names the USER resource type (Kafka's versions 1 and 3).

Kafka refuses a whole CreateAcls or DeleteAcls by giving every creation or filter the same error: when
any result carries CLUSTER_AUTHORIZATION_FAILED, SECURITY_DISABLED, NOT_CONTROLLER or
UNKNOWN_SERVER_ERROR the call raises it (NOT_CONTROLLER is retried at the new active controller, as
for the other controller APIs); other errors (an invalid binding or filter) stay in that item's
result. DescribeAcls raises its top-level error. An empty list of bindings or filters sends nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafka_admin_kraft.acl import (
    AclBinding,
    AclBindingFilter,
    AclCreateResult,
    AclDeleteResult,
    AclMatch,
    PatternType,
    ResourceType,
)
from kafka_admin_kraft.client.core import AdminCore, Op, controller_errors
from kafka_admin_kraft.errors import ErrorCode, error_for_code
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct

REQUEST_ERRORS = (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.SECURITY_DISABLED,
                  ErrorCode.NOT_CONTROLLER, ErrorCode.UNKNOWN_SERVER_ERROR)
"""Result errors Kafka gives every item of a request it refused as a whole."""
MISSING = "the server did not report this item"


def _minimum(items: Sequence[AclBinding | AclBindingFilter]) -> tuple[int, str]:
    """The lowest version able to carry ``items``, and why."""
    if any(item.resource_type == ResourceType.USER for item in items):
        return 3, "(the USER resource type needs v3)"
    if any(item.pattern_type not in (PatternType.LITERAL, PatternType.ANY) for item in items):
        return 1, "(pattern types other than LITERAL need v1)"
    return 0, ""


def _raise_request_error(results: Sequence[tuple[int, str | None]], operation: str, node: str) -> None:
    for code, message in results:
        if code in REQUEST_ERRORS:
            raise error_for_code(code, message).in_context(operation, node)


def _send(core: AdminCore, cls: type[Struct], items: Sequence[AclBinding | AclBindingFilter], body: Struct,
          operation: str, deadline: float) -> Op[tuple[Struct, str]]:
    conn = yield from core.target(deadline)
    minimum, why = _minimum(items)
    version = core.choose_version(conn, cls, operation, minimum=minimum, why=why)
    response = yield from core.request(conn, body, version, deadline)
    return response, conn.label


def _filter_fields(selector: AclBindingFilter) -> dict[str, Any]:
    return {"resource_type_filter": selector.resource_type, "resource_name_filter": selector.resource_name,
            "pattern_type_filter": selector.pattern_type, "principal_filter": selector.principal,
            "host_filter": selector.host, "operation": selector.operation,
            "permission_type": selector.permission_type}


def create_acls(core: AdminCore, bindings: Sequence[AclBinding],
                timeout: float | None = None) -> Op[list[AclCreateResult]]:
    operation = "create_acls"
    cls = messages.CreateAclsRequest
    request = cls(creations=[cls.AclCreation(
        resource_type=b.resource_type, resource_name=b.resource_name, resource_pattern_type=b.pattern_type,
        principal=b.principal, host=b.host, operation=b.operation, permission_type=b.permission_type)
        for b in bindings])

    def attempt(deadline: float) -> Op[list[AclCreateResult]]:
        response, node = yield from _send(core, cls, bindings, request, operation, deadline)
        assert isinstance(response, messages.CreateAclsResponse)
        outcomes = [(r.error_code, r.error_message) for r in response.results]
        _raise_request_error(outcomes, operation, node)
        outcomes += [(ErrorCode.UNKNOWN_SERVER_ERROR, MISSING)] * (len(bindings) - len(outcomes))
        return [AclCreateResult(binding, code, message if code else None)
                for binding, (code, message) in zip(bindings, outcomes, strict=False)]

    if not bindings:
        return []
    return (yield from core.call(operation, attempt, timeout, controller_errors(core.config)))


def describe_acls(core: AdminCore, selector: AclBindingFilter,
                  timeout: float | None = None) -> Op[list[AclBinding]]:
    operation = "describe_acls"
    cls = messages.DescribeAclsRequest
    request = cls(**_filter_fields(selector))

    def attempt(deadline: float) -> Op[list[AclBinding]]:
        response, node = yield from _send(core, cls, [selector], request, operation, deadline)
        assert isinstance(response, messages.DescribeAclsResponse)
        if response.error_code:
            raise error_for_code(response.error_code, response.error_message).in_context(operation, node)
        return [AclBinding.from_wire(r.resource_type, r.resource_name, r.pattern_type, acl.principal,
                                     acl.host, acl.operation, acl.permission_type)
                for r in response.resources for acl in r.acls]

    return (yield from core.call(operation, attempt, timeout))


def delete_acls(core: AdminCore, selectors: Sequence[AclBindingFilter],
                timeout: float | None = None) -> Op[list[AclDeleteResult]]:
    operation = "delete_acls"
    cls = messages.DeleteAclsRequest
    request = cls(filters=[cls.DeleteAclsFilter(**_filter_fields(s)) for s in selectors])

    def attempt(deadline: float) -> Op[list[AclDeleteResult]]:
        response, node = yield from _send(core, cls, selectors, request, operation, deadline)
        assert isinstance(response, messages.DeleteAclsResponse)
        results = list(response.filter_results)
        _raise_request_error([(r.error_code, r.error_message) for r in results], operation, node)
        found = []
        for index, selector in enumerate(selectors):
            if index >= len(results):
                found.append(AclDeleteResult(selector, (), ErrorCode.UNKNOWN_SERVER_ERROR, MISSING))
                continue
            result = results[index]
            matches = tuple(AclMatch(AclBinding.from_wire(m.resource_type, m.resource_name,
                                                          m.pattern_type, m.principal, m.host, m.operation,
                                                          m.permission_type),
                                     m.error_code, m.error_message if m.error_code else None)
                            for m in result.matching_acls)
            found.append(AclDeleteResult(selector, matches, result.error_code,
                                         result.error_message if result.error_code else None))
        return found

    if not selectors:
        return []
    return (yield from core.call(operation, attempt, timeout, controller_errors(core.config)))
