"""Kafka's StandardAuthorizer (``org.apache.kafka.metadata.authorizer.StandardAuthorizer``), over the
ACLs of the node's committed metadata image.

Settings (read only when ``authorizer.class.name`` names it; without one every request is authorized,
as in Kafka, and the ACL APIs answer SECURITY_DISABLED):

* ``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer``: the only class the
  reference server implements (anything else stops the start with one line saying so);
* ``super.users``: principals separated by ``;`` (``User:admin;User:ops``), each ``Type:name``; they are
  allowed everything, before any ACL is read;
* ``allow.everyone.if.no.acl.found`` (``true`` in any case, anything else is false): what a request gets
  when no ACL at all names the resource; false (Kafka's default) denies it.

A decision follows ``StandardAuthorizerData.authorize``: a super user is allowed; otherwise the ACLs of
the resource's type whose pattern covers the resource (LITERAL with the same name or ``*``, PREFIXED with
a prefix of it) are examined, and one applies when its principal is the request's or ``User:*``, its host
is the client's address or ``*`` and its operation is the one asked, ALL, or (for an ALLOW) one that
implies it: DESCRIBE is implied by READ, WRITE, DELETE and ALTER, DESCRIBE_CONFIGS by ALTER_CONFIGS. A
DENY that applies wins; else an ALLOW that applies allows; else a resource that has ACLs (for anyone) is
denied, and one without any gets the default. Each decision is written to the ``kafka.authorizer.logger``
audit log as Kafka words it (denials at INFO, grants at DEBUG).

The ACLs are the committed image's (Kafka's ``AclPublisher`` loads the authorizer from the metadata it
has replayed), on controllers and brokers alike. Two things are not modelled: the initial load (a Kafka
node answers AUTHORIZER_NOT_READY to non-super users until its metadata has caught up; here the image is
the node's own from the start), and an ACL whose principal has no ``:`` (Kafka stores it and then fails
every authorization of its resource with an internal error; here it applies to nobody).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from kafka_admin_kraft.acl import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from kafka_admin_kraft.config.server import ConfigError
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid

log = logging.getLogger("org.apache.kafka.metadata.authorizer.StandardAuthorizerData")
audit = logging.getLogger("kafka.authorizer.logger")

AUTHORIZER_CLASS_NAME: Final = "authorizer.class.name"
SUPER_USERS: Final = "super.users"
ALLOW_EVERYONE_IF_NO_ACL_FOUND: Final = "allow.everyone.if.no.acl.found"
STANDARD_AUTHORIZER: Final = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

_IMPLIES: Final[Mapping[AclOperation, frozenset[AclOperation]]] = {
    AclOperation.DESCRIBE: frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                                      AclOperation.DELETE, AclOperation.ALTER}),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}),
}
"""For an ALLOW ACL: the operations that grant the key (``StandardAuthorizerData.findResult``)."""


@dataclass(frozen=True)
class AuthorizerConfig:
    """The authorizer settings of a node."""

    super_users: frozenset[str]
    allow_everyone_if_no_acl_found: bool = False


def authorizer_config(originals: Mapping[str, str]) -> AuthorizerConfig | None:
    """The configured authorizer, None without one; ConfigError naming the key for a class the
    reference server does not implement or a super user that is not ``Type:name``."""
    name = (originals.get(AUTHORIZER_CLASS_NAME) or "").strip()
    if not name:
        return None
    if name != STANDARD_AUTHORIZER:
        raise ConfigError(f"{AUTHORIZER_CLASS_NAME}={name} is not supported: the reference server implements "
                          f"{STANDARD_AUTHORIZER} only")
    users = set()
    for entry in (originals.get(SUPER_USERS) or "").split(";"):
        user = entry.strip()
        if not user:
            continue
        if ":" not in user:
            raise ConfigError(f"{SUPER_USERS}: expected a string in format principalType:principalName but "
                              f"got {user}")
        users.add(user)
    allow = (originals.get(ALLOW_EVERYONE_IF_NO_ACL_FOUND) or "").strip().lower() == "true"
    return AuthorizerConfig(frozenset(users), allow)


def config_keys(config: AuthorizerConfig | None) -> frozenset[str]:
    """The settings the authorizer reads (none without one): they are not unknown keys."""
    if config is None:
        return frozenset()
    return frozenset({AUTHORIZER_CLASS_NAME, SUPER_USERS, ALLOW_EVERYONE_IF_NO_ACL_FOUND})


def java_host_address(ip: str) -> str:
    """An address as Java's ``InetAddress.getHostAddress`` prints it (IPv6 uncompressed, no leading
    zeros: ``0:0:0:0:0:0:0:1``), which is what ACL hosts are compared with."""
    try:
        address = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        groups = address.exploded.split(":")
        return ":".join(format(int(group, 16), "x") for group in groups)
    return str(address)


@dataclass(frozen=True)
class Action:
    """What a request asks: ``operation`` on a resource, for the API named ``api`` (the audit log)."""

    operation: AclOperation
    resource_type: ResourceType
    resource_name: str
    api: str
    log_if_allowed: bool = True
    log_if_denied: bool = True


def _principal_parts(text: str) -> tuple[str, str] | None:
    kind, colon, name = text.partition(":")
    return (kind, name) if colon else None


def _applies(acl: AclBinding, principals: tuple[tuple[str, str] | None, ...], host: str,
             operation: AclOperation) -> bool:
    """Whether ``acl`` (whose pattern covers the resource) applies to the request."""
    parsed = _principal_parts(acl.principal)
    if parsed is None or parsed not in principals:
        return False
    if acl.host not in (WILDCARD, host):
        return False
    if acl.operation == AclOperation.ALL:
        return True
    if acl.permission_type == AclPermissionType.ALLOW and operation in _IMPLIES:
        return acl.operation in _IMPLIES[operation]
    return acl.operation == operation


def _covers(acl: AclBinding, resource_type: ResourceType, name: str) -> bool:
    if acl.resource_type != resource_type:
        return False
    if acl.pattern_type == PatternType.LITERAL:
        return acl.resource_name in (name, WILDCARD)
    return acl.pattern_type == PatternType.PREFIXED and name.startswith(acl.resource_name)


def _resource_type_name(kind: ResourceType) -> str:
    """``SecurityUtils.resourceTypeName``: TRANSACTIONAL_ID -> TransactionalId."""
    return "".join(part.capitalize() for part in kind.name.split("_"))


def _acl_text(acl: AclBinding) -> str:
    return (f"StandardAcl[resourceType={acl.resource_type}, resourceName={acl.resource_name}, "
            f"patternType={acl.pattern_type}, principal={acl.principal}, host={acl.host}, "
            f"operation={acl.operation}, permissionType={acl.permission_type}]")


def binding(record: messages.AccessControlEntryRecord) -> AclBinding:
    """The binding an AccessControlEntryRecord stores."""
    return AclBinding.from_wire(record.resource_type, record.resource_name, record.pattern_type,
                                record.principal, record.host, record.operation, record.permission_type)


class StandardAuthorizer:
    """Decides requests against the ACLs ``acls()`` returns (the committed image's)."""

    def __init__(self, config: AuthorizerConfig, node_id: int,
                 acls: Callable[[], Mapping[Uuid, messages.AccessControlEntryRecord]]) -> None:
        self.config = config
        self.node_id = node_id
        self._acls = acls
        self._source: Mapping[Uuid, messages.AccessControlEntryRecord] | None = None
        self._bindings: tuple[AclBinding, ...] = ()
        default = "ALLOWED" if config.allow_everyone_if_no_acl_found else "DENIED"
        log.info("[StandardAuthorizer %d] set super.users=%s, default result=%s", node_id,
                 ",".join(sorted(config.super_users)), default)

    def bindings(self) -> tuple[AclBinding, ...]:
        """Every ACL of the image (decoded again only when the image's ACLs changed)."""
        current = self._acls()
        if current is not self._source:
            self._source = current
            self._bindings = tuple(binding(record) for record in current.values())
        return self._bindings

    def acls(self, selector: AclBindingFilter) -> list[AclBinding]:
        """The ACLs the filter matches (DescribeAcls)."""
        return [acl for acl in self.bindings() if selector.matches(acl)]

    def authorize(self, principal: str, host: str, action: Action) -> bool:
        """Whether ``principal`` (``Type:name``) connecting from ``host`` may do ``action``."""
        host = java_host_address(host)
        allowed, rule = self._decide(principal, host, action)
        self._audit(principal, host, action, allowed, rule)
        return allowed

    def authorized_operations(self, principal: str, host: str, operations: Iterable[AclOperation],
                              resource_type: ResourceType, resource_name: str,
                              api: str) -> list[AclOperation]:
        """The ``operations`` the principal may do on the resource, asked without audit lines at INFO
        (Kafka's ``AuthHelper.authorizedOperations``)."""
        return [operation for operation in operations
                if self.authorize(principal, host, Action(operation, resource_type, resource_name, api,
                                                          log_if_allowed=False, log_if_denied=False))]

    def _decide(self, principal: str, host: str, action: Action) -> tuple[bool, str]:
        if principal in self.config.super_users:
            return True, "SuperUser"
        parsed = _principal_parts(principal)
        principals = (parsed, _principal_parts(WILDCARD_PRINCIPAL))
        allow: AclBinding | None = None
        named = False
        for acl in self.bindings():
            if not _covers(acl, action.resource_type, action.resource_name):
                continue
            named = True
            if not _applies(acl, principals, host, action.operation):
                continue
            if acl.permission_type == AclPermissionType.DENY:
                return False, f"MatchingAcl(acl={_acl_text(acl)})"
            if acl.permission_type == AclPermissionType.ALLOW:
                allow = acl
        if allow is not None:
            return True, f"MatchingAcl(acl={_acl_text(allow)})"
        if named:
            return False, "DefaultDeny"
        default = self.config.allow_everyone_if_no_acl_found
        return default, "DefaultAllow" if default else "DefaultDeny"

    def _audit(self, principal: str, host: str, action: Action, allowed: bool, rule: str) -> None:
        wanted = action.log_if_allowed if allowed else action.log_if_denied
        level = (logging.DEBUG if allowed else logging.INFO) if wanted else 5
        if not audit.isEnabledFor(level):
            return
        audit.log(level, "Principal = %s is %s operation = %s from host = %s on resource = %s:%s:%s for "
                         "request = %s with resourceRefCount = 1 based on rule %s", principal,
                  "Allowed" if allowed else "Denied", action.operation, host,
                  _resource_type_name(action.resource_type), PatternType.LITERAL, action.resource_name,
                  action.api, rule)


__all__ = ["ALLOW_EVERYONE_IF_NO_ACL_FOUND", "AUTHORIZER_CLASS_NAME", "STANDARD_AUTHORIZER", "SUPER_USERS",
           "Action", "AuthorizerConfig", "StandardAuthorizer", "authorizer_config", "binding", "config_keys",
           "java_host_address"]
