"""Kafka's access control lists: the codes and names of resource types, pattern types, operations and
permissions, ACL bindings and the filters that select them, and which permission on the cluster each
API needs.

One home for what the SDK sends (``create_acls``, ``describe_acls``, ``delete_acls``), what it explains
when a server refuses a call (``cluster_operation``), and what the reference server enforces, so that
the two sides cannot drift apart. The rules are Kafka's:

- the enums carry the codes of ``org.apache.kafka.common.resource.ResourceType``, ``PatternType``,
  ``org.apache.kafka.common.acl.AclOperation`` and ``AclPermissionType``; ``from_code`` reads any code as
  Kafka's ``fromCode`` does (an unknown one is UNKNOWN);
- an :class:`AclBinding` is definite (no ANY, MATCH or UNKNOWN: what ``CreateAcls`` may add, as
  ``AclBinding.toFilter().findIndefiniteField()`` is empty in Kafka's Admin client); the principal is
  ``Type:name`` (``User:alice``, ``User:*`` for everyone), the host an address or ``*``;
- an :class:`AclBindingFilter` matches bindings as ``AclBindingFilter.matches`` does: ANY and None
  match everything, a MATCH pattern matches the literal name, the ``*`` wildcard and every prefix of the
  name (``ResourcePatternFilter.matches``);
- ``cluster_operation`` is the operation on the CLUSTER resource (``kafka-cluster``) a principal needs
  for an API: on a controller as Kafka's ``ControllerApis`` authorizes it, through a broker as
  ``KafkaApis`` does (which forwards most of these APIs: the controller then authorizes the client's
  principal).

The results of ``create_acls`` and ``delete_acls`` (:class:`AclCreateResult`, :class:`AclDeleteResult`)
live here too. No pydantic here: the reference server and the client load this module.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeVar

from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.values import shown

CLUSTER_NAME: Final = "kafka-cluster"
"""The name of the one CLUSTER resource (Kafka's ``Resource.CLUSTER_NAME``)."""
WILDCARD: Final = "*"
"""A resource name or host matching every resource or host."""
WILDCARD_PRINCIPAL: Final = "User:*"
"""The principal of ACLs that apply to every principal."""

_E = TypeVar("_E", bound="_Coded")


class _Coded(enum.IntEnum):
    """An enum with Kafka's wire codes; its ``str`` is the name, as Java prints an enum."""

    @classmethod
    def from_code(cls: type[_E], code: int) -> _E:
        """The member of ``code``, UNKNOWN for a code Kafka does not define."""
        try:
            return cls(code)
        except ValueError:
            return cls(0)

    def __str__(self) -> str:
        return self.name


class ResourceType(_Coded):
    """What an ACL protects."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_Coded):
    """How an ACL's resource name matches: LITERAL (exactly, or ``*`` for all) or PREFIXED. ANY and
    MATCH exist for filters only."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(_Coded):
    """What an ACL allows or denies. ALL covers every operation; an ALLOW of READ, WRITE, DELETE or
    ALTER implies DESCRIBE, and one of ALTER_CONFIGS implies DESCRIBE_CONFIGS."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(_Coded):
    """Whether an ACL allows or denies; a DENY wins over any ALLOW."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_INDEFINITE: Final = {"ANY", "MATCH", "UNKNOWN"}


def _member(value: object, kind: type[_E], name: str, *, definite: bool) -> _E:
    """An enum member, given as the member or its code; ``definite`` refuses ANY, MATCH and UNKNOWN."""
    accepted = ", ".join(m.name for m in kind if not definite or m.name not in _INDEFINITE)
    if isinstance(value, kind):
        member = value
    elif isinstance(value, int) and not isinstance(value, bool):
        if value not in {m.value for m in kind}:
            raise ValueError(f"{name} must be a {kind.__name__} ({accepted}) or its code, got {value}")
        member = kind(value)
    else:
        raise TypeError(f"{name} must be a {kind.__name__} ({accepted}) or its code, got {shown(value)}")
    if member.name == "UNKNOWN" or (definite and member.name in _INDEFINITE):
        raise ValueError(f"{name} must be one of {accepted}, not {member.name}")
    return member


def _text(value: object, name: str, accepted: str, *, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {accepted}, got {shown(value)}")
    if not value:
        raise ValueError(f"{name} must be {accepted}, not empty")
    return value


PRINCIPAL: Final = "a principal as Type:name, e.g. 'User:alice' ('User:*' for everyone)"
HOST: Final = "a client address, or '*' for any"


def _principal(value: object, name: str, *, optional: bool) -> str | None:
    text = _text(value, name, PRINCIPAL + (" or None" if optional else ""), optional=optional)
    if text is not None and ":" not in text:
        raise ValueError(f"{name} must be {PRINCIPAL}, got {text!r} (no ':' between type and name)")
    return text


@dataclass(frozen=True, init=False)
class AclBinding:
    """One ACL: ``principal`` from ``host`` is allowed (or denied) ``operation`` on the resources
    ``resource_name`` names by ``pattern_type``."""

    resource_type: ResourceType
    resource_name: str
    """The name, ``*`` for every resource of the type, or a prefix (PREFIXED); ``kafka-cluster`` for
    the CLUSTER resource."""
    principal: str
    operation: AclOperation
    permission_type: AclPermissionType
    pattern_type: PatternType
    host: str

    def __init__(self, resource_type: ResourceType | int, resource_name: str, principal: str,
                 operation: AclOperation | int,
                 permission_type: AclPermissionType | int = AclPermissionType.ALLOW, *,
                 pattern_type: PatternType | int = PatternType.LITERAL, host: str = WILDCARD) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "resource_type", _member(resource_type, ResourceType, "AclBinding resource_type",
                                                definite=True))
        setattr_(self, "resource_name", _text(resource_name, "AclBinding resource_name",
                                              "a resource name (str)", optional=False))
        setattr_(self, "principal", _principal(principal, "AclBinding principal", optional=False))
        setattr_(self, "operation", _member(operation, AclOperation, "AclBinding operation", definite=True))
        setattr_(self, "permission_type", _member(permission_type, AclPermissionType,
                                                  "AclBinding permission_type", definite=True))
        setattr_(self, "pattern_type", _member(pattern_type, PatternType, "AclBinding pattern_type",
                                               definite=True))
        setattr_(self, "host", _text(host, "AclBinding host", HOST, optional=False))

    @classmethod
    def from_wire(cls, resource_type: int, resource_name: str, pattern_type: int, principal: str, host: str,
                  operation: int, permission_type: int) -> AclBinding:
        """A binding as a message or record carries it, codes read as Kafka reads them (unknown ones
        become UNKNOWN), without the checks a caller's binding gets."""
        binding = object.__new__(cls)
        for name, value in (("resource_type", ResourceType.from_code(resource_type)),
                            ("resource_name", resource_name), ("principal", principal),
                            ("operation", AclOperation.from_code(operation)),
                            ("permission_type", AclPermissionType.from_code(permission_type)),
                            ("pattern_type", PatternType.from_code(pattern_type)), ("host", host)):
            object.__setattr__(binding, name, value)
        return binding

    def __str__(self) -> str:
        """Kafka's ``AclBinding`` text."""
        return (f"(pattern=ResourcePattern(resourceType={self.resource_type}, name={self.resource_name}, "
                f"patternType={self.pattern_type}), entry=(principal={self.principal}, host={self.host}, "
                f"operation={self.operation}, permissionType={self.permission_type}))")


@dataclass(frozen=True, init=False)
class AclBindingFilter:
    """Selects ACL bindings for ``describe_acls`` and ``delete_acls``: each field matches anything
    when it is ANY (or None), and what it names otherwise. ``pattern_type`` MATCH selects every
    binding that applies to ``resource_name``: the literal name, the ``*`` wildcard and the prefixes
    of the name."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def __init__(self, resource_type: ResourceType | int = ResourceType.ANY, resource_name: str | None = None,
                 *, pattern_type: PatternType | int = PatternType.ANY, principal: str | None = None,
                 host: str | None = None, operation: AclOperation | int = AclOperation.ANY,
                 permission_type: AclPermissionType | int = AclPermissionType.ANY) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "resource_type", _member(resource_type, ResourceType, "AclBindingFilter resource_type",
                                                definite=False))
        setattr_(self, "resource_name", _text(resource_name, "AclBindingFilter resource_name",
                                              "None or a resource name (str)", optional=True))
        setattr_(self, "pattern_type", _member(pattern_type, PatternType, "AclBindingFilter pattern_type",
                                               definite=False))
        setattr_(self, "principal", _principal(principal, "AclBindingFilter principal", optional=True))
        setattr_(self, "host", _text(host, "AclBindingFilter host", "None or " + HOST, optional=True))
        setattr_(self, "operation", _member(operation, AclOperation, "AclBindingFilter operation",
                                            definite=False))
        setattr_(self, "permission_type", _member(permission_type, AclPermissionType,
                                                  "AclBindingFilter permission_type", definite=False))

    @classmethod
    def from_wire(cls, resource_type: int, resource_name: str | None, pattern_type: int,
                  principal: str | None, host: str | None, operation: int,
                  permission_type: int) -> AclBindingFilter:
        """A filter as a request carries it, codes read as Kafka reads them, without checks."""
        found = object.__new__(cls)
        for name, value in (("resource_type", ResourceType.from_code(resource_type)),
                            ("resource_name", resource_name),
                            ("pattern_type", PatternType.from_code(pattern_type)),
                            ("principal", principal), ("host", host),
                            ("operation", AclOperation.from_code(operation)),
                            ("permission_type", AclPermissionType.from_code(permission_type))):
            object.__setattr__(found, name, value)
        return found

    @property
    def unknown(self) -> bool:
        """A field Kafka reads as UNKNOWN: the filter is refused (``AclControlManager.validateFilter``)."""
        fields = (self.resource_type, self.pattern_type, self.operation, self.permission_type)
        return any(member.name == "UNKNOWN" for member in fields)

    def matches(self, binding: AclBinding) -> bool:
        return self._matches_pattern(binding) and self._matches_entry(binding)

    def _matches_pattern(self, binding: AclBinding) -> bool:
        if self.resource_type not in (ResourceType.ANY, binding.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, binding.pattern_type):
            return False
        if self.resource_name is None:
            return True
        if self.pattern_type in (PatternType.ANY, binding.pattern_type):
            return self.resource_name == binding.resource_name
        if binding.pattern_type == PatternType.LITERAL:
            return binding.resource_name in (self.resource_name, WILDCARD)
        return (binding.pattern_type == PatternType.PREFIXED
                and self.resource_name.startswith(binding.resource_name))

    def _matches_entry(self, binding: AclBinding) -> bool:
        return ((self.principal is None or self.principal == binding.principal)
                and (self.host is None or self.host == binding.host)
                and self.operation in (AclOperation.ANY, binding.operation)
                and self.permission_type in (AclPermissionType.ANY, binding.permission_type))


ANY_BINDING: Final = AclBindingFilter()
"""The filter that matches every ACL binding."""


def bindings(value: object, name: str = "bindings") -> tuple[AclBinding, ...]:
    """An iterable of AclBinding (not a str or a mapping), as a tuple."""
    return _items(value, name, AclBinding)


def filters(value: object, name: str = "filters") -> tuple[AclBindingFilter, ...]:
    """An iterable of AclBindingFilter (not a str or a mapping), as a tuple."""
    return _items(value, name, AclBindingFilter)


_T = TypeVar("_T")


def _items(value: object, name: str, kind: type[_T]) -> tuple[_T, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be an iterable of {kind.__name__}, got {shown(value)}")
    checked: list[_T] = []
    for item in value:
        if not isinstance(item, kind):
            raise TypeError(f"{name} must hold {kind.__name__} only, got {shown(item)}")
        checked.append(item)
    return tuple(checked)


# ---------------------------------------------------------------------- results


@dataclass(frozen=True)
class AclCreateResult:
    """The outcome of one binding of ``create_acls``: 0 when it exists now (added, or there already)."""

    binding: AclBinding
    error_code: int = 0
    error_message: str | None = None

    @property
    def ok(self) -> bool:
        return self.error_code == 0

    def exception(self) -> Exception | None:
        """The error as a :class:`~kafka_admin_kraft.errors.KafkaApiError`, or None on success."""
        return None if self.ok else _error(self.error_code, self.error_message, "create_acls")


@dataclass(frozen=True)
class AclMatch:
    """A binding a ``delete_acls`` filter matched, and whether its removal failed (never in KRaft)."""

    binding: AclBinding
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True)
class AclDeleteResult:
    """The outcome of one filter of ``delete_acls``: the bindings it matched and removed, or why it
    removed nothing."""

    filter: AclBindingFilter
    matches: tuple[AclMatch, ...] = ()
    error_code: int = 0
    error_message: str | None = None

    @property
    def ok(self) -> bool:
        return self.error_code == 0

    @property
    def deleted(self) -> tuple[AclBinding, ...]:
        """The bindings removed."""
        return tuple(match.binding for match in self.matches if match.error_code == 0)

    def exception(self) -> Exception | None:
        """The error as a :class:`~kafka_admin_kraft.errors.KafkaApiError`, or None on success."""
        return None if self.ok else _error(self.error_code, self.error_message, "delete_acls")


def _error(code: int, message: str | None, operation: str) -> Exception:
    # Imported on use: the error table is not needed until something failed.
    from kafka_admin_kraft.protocol.error_codes import error_for_code

    return error_for_code(code, message).in_context(operation)

CLUSTER_OPERATIONS: Final = (AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                             AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                             AclOperation.DESCRIBE)
"""The operations that apply to the CLUSTER resource (Kafka's ``AclEntry.supportedOperations``)."""

CONTROLLER: Final = "controller"
BROKER: Final = "broker"

_CONTROLLER_OPERATIONS: Final[Mapping[int, AclOperation]] = {
    # The replication and registration APIs the nodes send each other.
    **{key: AclOperation.CLUSTER_ACTION for key in (
        ApiKey.FETCH, ApiKey.FETCH_SNAPSHOT, ApiKey.VOTE, ApiKey.BEGIN_QUORUM_EPOCH, ApiKey.END_QUORUM_EPOCH,
        ApiKey.UPDATE_RAFT_VOTER, ApiKey.BROKER_REGISTRATION, ApiKey.BROKER_HEARTBEAT,
        ApiKey.CONTROLLER_REGISTRATION, ApiKey.ENVELOPE)},
    ApiKey.DESCRIBE_QUORUM: AclOperation.DESCRIBE,
    ApiKey.DESCRIBE_ACLS: AclOperation.DESCRIBE,
    # On a controller DescribeCluster needs ALTER, unlike on a broker.
    **{key: AclOperation.ALTER for key in (
        ApiKey.DESCRIBE_CLUSTER, ApiKey.ADD_RAFT_VOTER, ApiKey.REMOVE_RAFT_VOTER, ApiKey.UPDATE_FEATURES,
        ApiKey.UNREGISTER_BROKER, ApiKey.UNREGISTER_CONTROLLER, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS)},
}
"""``ControllerApis``: the operation on CLUSTER each API needs on a controller listener."""

FORWARDED: Final = frozenset({ApiKey.DESCRIBE_QUORUM, ApiKey.UPDATE_FEATURES, ApiKey.ADD_RAFT_VOTER,
                              ApiKey.REMOVE_RAFT_VOTER, ApiKey.UNREGISTER_BROKER,
                              ApiKey.UNREGISTER_CONTROLLER, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS})
"""The APIs of these that a broker forwards to the active controller (``KafkaApis.forwardToController``):
the controller authorizes the client's principal as if the client had asked it directly."""

_BROKER_OPERATIONS: Final[Mapping[int, AclOperation]] = {ApiKey.DESCRIBE_ACLS: AclOperation.DESCRIBE}
"""``KafkaApis``: what a broker itself checks; ApiVersions, Metadata and DescribeCluster need nothing."""


def cluster_operation(api_key: int, listener: str) -> AclOperation | None:
    """The operation on the CLUSTER resource a principal needs for ``api_key`` sent to a ``listener``
    ("controller" or "broker") listener, None when it needs none."""
    if listener == CONTROLLER or api_key in FORWARDED:
        return _CONTROLLER_OPERATIONS.get(api_key)
    return _BROKER_OPERATIONS.get(api_key)


__all__ = ["ANY_BINDING", "BROKER", "CLUSTER_NAME", "CLUSTER_OPERATIONS", "CONTROLLER", "FORWARDED", "HOST",
           "PRINCIPAL", "WILDCARD", "WILDCARD_PRINCIPAL", "AclBinding", "AclBindingFilter", "AclCreateResult",
           "AclDeleteResult", "AclMatch", "AclOperation", "AclPermissionType", "PatternType", "ResourceType",
           "bindings", "cluster_operation", "filters"]
