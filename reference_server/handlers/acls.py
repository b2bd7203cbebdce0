"""DescribeAcls (API 29), CreateAcls (API 30) and DeleteAcls (API 31), versions 0-3 (1-3 from Kafka 4.0),
as Kafka's ``AclApis`` answers them on a controller and a broker, with ``AclControlManager`` deciding the
records on the active controller.

Who may ask is ``handlers.authorization``'s business (DESCRIBE on the cluster to describe, ALTER to create
or delete). Then:

- Without an authorizer: DescribeAcls answers SECURITY_DISABLED ``No Authorizer is configured on the
  broker``; CreateAcls and DeleteAcls answer SECURITY_DISABLED ``No Authorizer is configured.`` for every
  creation or filter.
- A request with a resource type, pattern type, operation or permission of code 0 (UNKNOWN) fails to parse
  in Kafka (``CreateAclsRequest.validate``, ``DescribeAclsRequest.normalizeAndValidate``,
  ``DeleteAclsRequest.normalizeAndValidate``): the connection is closed. Other unknown codes read as
  UNKNOWN and are refused below.
- **DescribeAcls** (a controller or a broker, from its committed metadata): the ACLs the filter matches
  (``kafka_admin_kraft.acl.AclBindingFilter``), grouped by resource pattern, patterns and entries in a
  stable order (Kafka's follows a hash map).
- **CreateAcls** (the active controller; a broker forwards it): per creation, in order, INVALID_REQUEST
  for a CLUSTER resource not named ``kafka-cluster`` (``The only valid name for the CLUSTER resource is
  kafka-cluster``) or an empty name (``Invalid empty resource name``), then ``AclControlManager``'s
  checks (``Invalid resourceType ANY``, ``Invalid patternType MATCH``, ``Invalid operation ANY``,
  ``Invalid permissionType ANY``). A binding that exists already (committed, or appended and not yet
  committed, or earlier in the same request) succeeds without a record; each new one gets an
  AccessControlEntryRecord (v0) under a new random id. The records go in one batch and the answer comes
  once it is committed (a success's ErrorMessage keeps its default, ""). A controller that is not active
  answers NOT_CONTROLLER with ``The active controller appears to be node <id>.`` for every binding that
  passed the first checks.
- **DeleteAcls** (the active controller; a broker forwards it): per filter, INVALID_REQUEST for a field
  read as UNKNOWN (``Unknown patternFilter.`` or ``Unknown entryFilter.``), else the ACLs it matches
  among those the controller sees (committed and appended), each removed by a
  RemoveAccessControlEntryRecord (v0, one per ACL however many filters match it), all in one batch,
  answered once committed; a success's messages are null. NOT_CONTROLLER as above.

When no controller can be reached a broker answers NOT_CONTROLLER for every creation or filter, which
clients retry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from kafka_admin_kraft.acl import CLUSTER_NAME, AclBinding, AclBindingFilter, PatternType, ResourceType
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import ApiMessageAndVersion

from ..authorizer import StandardAuthorizer, binding
from ..raft.core import NotLeaderError
from . import registry
from .error_responses import error_response
from .registry import Answer, BrokerRole, Call, ControllerRole
from .update_features import wrong_controller_message

log = logging.getLogger("kafka.controller.QuorumController")

RECORD_VERSION: Final = 0
NO_AUTHORIZER: Final = "No Authorizer is configured."
NO_AUTHORIZER_DESCRIBE: Final = "No Authorizer is configured on the broker"

Created = messages.CreateAclsResponse
Described = messages.DescribeAclsResponse
Deleted = messages.DeleteAclsResponse
Acls = Mapping[Uuid, messages.AccessControlEntryRecord]


def unparseable(body: Struct | None) -> bool:
    """A code 0 (UNKNOWN) where Kafka's request classes refuse it while parsing."""
    if isinstance(body, messages.CreateAclsRequest):
        return any(0 in (c.resource_type, c.resource_pattern_type, c.operation, c.permission_type)
                   for c in body.creations)
    if isinstance(body, messages.DescribeAclsRequest):
        return 0 in (body.resource_type_filter, body.pattern_type_filter, body.operation,
                     body.permission_type)
    if isinstance(body, messages.DeleteAclsRequest):
        return any(0 in (f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)
                   for f in body.filters)
    return False


# ------------------------------------------------------------------ DescribeAcls


def describe(request: messages.DescribeAclsRequest, authorizer: StandardAuthorizer | None) -> Described:
    """The answer of a node whose authorizer is ``authorizer``."""
    if authorizer is None:
        return Described(throttle_time_ms=0, error_code=ErrorCode.SECURITY_DISABLED,
                         error_message=NO_AUTHORIZER_DESCRIBE)
    selector = AclBindingFilter.from_wire(request.resource_type_filter, request.resource_name_filter,
                                          request.pattern_type_filter, request.principal_filter,
                                          request.host_filter, request.operation, request.permission_type)
    return Described(throttle_time_ms=0, error_code=ErrorCode.NONE,
                     resources=resources(authorizer.acls(selector)))


def resources(bindings: Sequence[AclBinding]) -> list[Described.DescribeAclsResource]:
    """Bindings grouped by resource pattern (Kafka's ``DescribeAclsResponse.aclsResources``)."""
    grouped: dict[tuple[int, str, int], set[tuple[str, str, int, int]]] = {}
    for acl in bindings:
        grouped.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), set()).add(
            (acl.principal, acl.host, acl.operation, acl.permission_type))
    return [Described.DescribeAclsResource(
        resource_type=kind, resource_name=name, pattern_type=pattern,
        acls=[Described.AclDescription(principal=principal, host=host, operation=operation,
                                       permission_type=permission)
              for principal, host, operation, permission in sorted(entries)])
        for (kind, name, pattern), entries in sorted(grouped.items())]


# ------------------------------------------------------------------ what the controller sees


def controller_acls(node: ControllerRole) -> dict[Uuid, messages.AccessControlEntryRecord]:
    """The ACLs as the active controller sees them: committed, with its appended changes."""
    acls = dict(node.core.acls())
    for record in node.uncommitted_records():
        if isinstance(record, messages.AccessControlEntryRecord):
            acls[record.id] = record
        elif isinstance(record, messages.RemoveAccessControlEntryRecord):
            acls.pop(record.id, None)
    return acls


def _new_id(taken: Mapping[Uuid, object]) -> Uuid:
    while True:
        acl_id = Uuid.random()
        if acl_id not in taken and acl_id != Uuid(bytes(16)):
            return acl_id


# ------------------------------------------------------------------ CreateAcls


def _creation_error(acl: AclBinding) -> str | None:
    """``AclApis.handleCreateAcls``' checks, then ``AclControlManager.validateNewAcl``'s."""
    if acl.resource_type == ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not acl.resource_name:
        return "Invalid empty resource name"
    return None


def _new_acl_error(acl: AclBinding) -> str | None:
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {acl.resource_type}"
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {acl.pattern_type}"
    if acl.operation.name in ("UNKNOWN", "ANY"):
        return f"Invalid operation {acl.operation}"
    if acl.permission_type.name not in ("DENY", "ALLOW"):
        return f"Invalid permissionType {acl.permission_type}"
    return None


def _created(code: int = ErrorCode.NONE, message: str | None = None) -> Created.AclCreationResult:
    if code == ErrorCode.NONE:
        return Created.AclCreationResult(error_code=code)
    return Created.AclCreationResult(error_code=code, error_message=message)


def create(request: messages.CreateAclsRequest, existing: Acls, *, active: bool, leader_id: int,
           node_id: int) -> tuple[Created, list[messages.AccessControlEntryRecord]]:
    """The answer and the records to append, for a controller that sees ``existing``."""
    bindings = [AclBinding.from_wire(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal,
                                     c.host, c.operation, c.permission_type) for c in request.creations]
    known = {binding(record) for record in existing.values()}
    taken: dict[Uuid, object] = dict(existing)
    results: list[Created.AclCreationResult] = []
    records: list[messages.AccessControlEntryRecord] = []
    for acl in bindings:
        error = _creation_error(acl)
        if error is not None:
            results.append(_created(ErrorCode.INVALID_REQUEST, error))
            continue
        if not active:
            results.append(_created(ErrorCode.NOT_CONTROLLER, wrong_controller_message(leader_id, node_id)))
            continue
        error = _new_acl_error(acl)
        if error is not None:
            results.append(_created(ErrorCode.INVALID_REQUEST, error))
            continue
        if acl not in known:
            known.add(acl)
            acl_id = _new_id(taken)
            taken[acl_id] = acl
            records.append(messages.AccessControlEntryRecord(
                id=acl_id, resource_type=acl.resource_type, resource_name=acl.resource_name,
                pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host,
                operation=acl.operation, permission_type=acl.permission_type))
        results.append(_created())
    return Created(throttle_time_ms=0, results=results), records


# ------------------------------------------------------------------ DeleteAcls


def _filter_result(code: int, message: str | None,
                   matching: Sequence[Deleted.DeleteAclsMatchingAcl] = ()) -> Deleted.DeleteAclsFilterResult:
    return Deleted.DeleteAclsFilterResult(error_code=code, error_message=message,
                                          matching_acls=list(matching))


def _matching(acl: AclBinding) -> Deleted.DeleteAclsMatchingAcl:
    return Deleted.DeleteAclsMatchingAcl(
        error_code=ErrorCode.NONE, error_message=None, resource_type=acl.resource_type,
        resource_name=acl.resource_name, pattern_type=acl.pattern_type, principal=acl.principal,
        host=acl.host, operation=acl.operation, permission_type=acl.permission_type)


def _sort_key(item: tuple[Uuid, AclBinding]) -> tuple[int, str, int, str, str, int, int]:
    acl = item[1]
    return (acl.resource_type, acl.resource_name, acl.pattern_type, acl.principal, acl.host, acl.operation,
            acl.permission_type)


def delete(request: messages.DeleteAclsRequest, existing: Acls, *, active: bool, leader_id: int,
           node_id: int) -> tuple[Deleted, list[messages.RemoveAccessControlEntryRecord]]:
    """The answer and the records to append, for a controller that sees ``existing``."""
    if not active:
        message = wrong_controller_message(leader_id, node_id)
        return Deleted(throttle_time_ms=0, filter_results=[
            _filter_result(ErrorCode.NOT_CONTROLLER, message) for _ in request.filters]), []
    stored = sorted(((acl_id, binding(record)) for acl_id, record in existing.items()), key=_sort_key)
    removed: dict[Uuid, None] = {}
    results = []
    for f in request.filters:
        selector = AclBindingFilter.from_wire(f.resource_type_filter, f.resource_name_filter,
                                              f.pattern_type_filter, f.principal_filter, f.host_filter,
                                              f.operation, f.permission_type)
        if selector.resource_type.name == "UNKNOWN" or selector.pattern_type.name == "UNKNOWN":
            results.append(_filter_result(ErrorCode.INVALID_REQUEST, "Unknown patternFilter."))
            continue
        if selector.operation.name == "UNKNOWN" or selector.permission_type.name == "UNKNOWN":
            results.append(_filter_result(ErrorCode.INVALID_REQUEST, "Unknown entryFilter."))
            continue
        matched = [(acl_id, acl) for acl_id, acl in stored if selector.matches(acl)]
        removed.update(dict.fromkeys(acl_id for acl_id, _ in matched))
        results.append(_filter_result(ErrorCode.NONE, None, [_matching(acl) for _, acl in matched]))
    records = [messages.RemoveAccessControlEntryRecord(id=acl_id) for acl_id in removed]
    return Deleted(throttle_time_ms=0, filter_results=results), records


# ------------------------------------------------------------------ the handlers


async def _commit(node: ControllerRole, call: Call, response: Struct, records: Sequence[Struct]) -> Answer:
    """Append ``records`` in one batch and answer once they are committed (at once when there are none);
    NOT_CONTROLLER for the whole request if leadership is lost first."""

    def refused() -> Struct:
        message = wrong_controller_message(node.core.leader_id, node.identity.node_id)
        return error_response(call.api_key, call.body, call.version, ErrorCode.NOT_CONTROLLER, message)

    if not records:
        return response, call.version
    batch = [ApiMessageAndVersion(r, RECORD_VERSION) for r in records]
    try:
        offset = node.core.append(batch, node.now_ms())
    except NotLeaderError:
        return refused(), call.version
    node.wake()
    log.info("[QuorumController id=%d] %s appended %d record(s) up to offset %d", node.identity.node_id,
             type(call.body).__name__.removesuffix("Request"), len(records), offset)
    body = await node.when_committed(offset, response, refused, records=batch)
    return None if body is None else (body, call.version)


async def on_describe(node: ControllerRole | BrokerRole, call: Call) -> Answer:
    request = call.body
    assert isinstance(request, messages.DescribeAclsRequest)
    if unparseable(request):
        return None
    return describe(request, node.authorizer), call.version


async def _change(node: ControllerRole, call: Call) -> Answer:
    """CreateAcls or DeleteAcls on a controller: decided with ``create`` or ``delete``, then committed."""
    request = call.body
    if unparseable(request):
        return None
    if node.authorizer is None:
        return error_response(call.api_key, request, call.version, ErrorCode.SECURITY_DISABLED,
                              NO_AUTHORIZER), call.version
    seen, active, leader, me = controller_acls(node), node.active, node.core.leader_id, node.identity.node_id
    response: Struct
    records: Sequence[Struct]
    if isinstance(request, messages.CreateAclsRequest):
        response, added = create(request, seen, active=active, leader_id=leader, node_id=me)
        records = added
    else:
        assert isinstance(request, messages.DeleteAclsRequest)
        response, removed = delete(request, seen, active=active, leader_id=leader, node_id=me)
        records = removed
    return await _commit(node, call, response, records)


def _unreachable(api_key: int) -> Callable[[int, int, Struct | None], Struct]:
    """A broker's answer when no controller can be reached: NOT_CONTROLLER for every creation or filter."""

    def answer(api_version: int, node_id: int, request: Struct | None = None) -> Struct:
        code = ErrorCode.NOT_CONTROLLER
        return error_response(api_key, request, api_version, code, code.message)

    return answer


registry.register(ApiKey.DESCRIBE_ACLS, controller=on_describe, broker=on_describe)
registry.register(ApiKey.CREATE_ACLS, controller=_change, forwarded=_unreachable(ApiKey.CREATE_ACLS))
registry.register(ApiKey.DELETE_ACLS, controller=_change, forwarded=_unreachable(ApiKey.DELETE_ACLS))

__all__ = ["NO_AUTHORIZER", "NO_AUTHORIZER_DESCRIBE", "controller_acls", "create", "delete", "describe",
           "resources", "unparseable"]
