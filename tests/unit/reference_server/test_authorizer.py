"""StandardAuthorizer (``reference_server/authorizer.py``): its settings, and its decisions as Kafka's
``StandardAuthorizerData`` makes them (super users, the default when no ACL names the resource, DENY
winning, wildcard and prefixed patterns, the operations that imply DESCRIBE), with the audit lines."""

from __future__ import annotations

import logging

import pytest

from kafka_admin_kraft.acl import AclOperation, ResourceType
from kafka_admin_kraft.config.server import ConfigError
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.authorizer import (
    STANDARD_AUTHORIZER,
    Action,
    AuthorizerConfig,
    StandardAuthorizer,
    authorizer_config,
    config_keys,
    java_host_address,
)

RECORD = messages.AccessControlEntryRecord
ALLOW, DENY = 3, 2
LITERAL, PREFIXED = 3, 4
TOPIC, CLUSTER = 2, 4


def acl(name: str = "kafka-cluster", *, principal: str = "User:alice", operation: int = AclOperation.DESCRIBE,
        permission: int = ALLOW, kind: int = CLUSTER, pattern: int = LITERAL, host: str = "*") -> RECORD:
    return RECORD(id=Uuid.random(), resource_type=kind, resource_name=name, pattern_type=pattern,
                  principal=principal, host=host, operation=operation, permission_type=permission)


def authorizer(*records: RECORD, super_users: tuple[str, ...] = ("User:admin",),
               allow_if_none: bool = False) -> StandardAuthorizer:
    acls = {record.id: record for record in records}
    return StandardAuthorizer(AuthorizerConfig(frozenset(super_users), allow_if_none), 1, lambda: acls)


def cluster(operation: AclOperation) -> Action:
    return Action(operation, ResourceType.CLUSTER, "kafka-cluster", "DescribeCluster")


def topic(operation: AclOperation, name: str) -> Action:
    return Action(operation, ResourceType.TOPIC, name, "Metadata")


# ------------------------------------------------------------------ settings


def test_no_authorizer_without_the_class_name() -> None:
    assert authorizer_config({}) is None
    assert authorizer_config({"authorizer.class.name": " ", "super.users": "User:admin"}) is None
    assert config_keys(None) == frozenset()


def test_the_standard_authorizers_settings() -> None:
    config = authorizer_config({"authorizer.class.name": STANDARD_AUTHORIZER,
                                "super.users": " User:admin ;User:CN=node,O=Acme;;",
                                "allow.everyone.if.no.acl.found": "TRUE"})
    assert config == AuthorizerConfig(frozenset({"User:admin", "User:CN=node,O=Acme"}), True)
    assert config_keys(config) == {"authorizer.class.name", "super.users", "allow.everyone.if.no.acl.found"}
    # Boolean.parseBoolean: anything but "true" is false, Kafka's default.
    lenient = authorizer_config({"authorizer.class.name": STANDARD_AUTHORIZER,
                                 "allow.everyone.if.no.acl.found": "yes"})
    assert lenient == AuthorizerConfig(frozenset(), False)


def test_other_authorizers_and_bad_super_users_stop_the_start() -> None:
    with pytest.raises(ConfigError, match="kafka.security.authorizer.AclAuthorizer is not supported: the "
                                          "reference server implements .*StandardAuthorizer only"):
        authorizer_config({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    with pytest.raises(ConfigError, match="super.users: expected a string in format "
                                          "principalType:principalName but got admin"):
        authorizer_config({"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "admin"})


# ------------------------------------------------------------------ decisions


def test_super_users_may_do_anything_even_against_a_deny() -> None:
    auth = authorizer(acl(principal="User:*", operation=AclOperation.ALL, permission=DENY))
    assert auth.authorize("User:admin", "127.0.0.1", cluster(AclOperation.ALTER))
    assert not auth.authorize("User:alice", "127.0.0.1", cluster(AclOperation.ALTER))


def test_without_acls_on_the_resource_the_default_decides() -> None:
    assert not authorizer().authorize("User:alice", "127.0.0.1", cluster(AclOperation.DESCRIBE))
    assert authorizer(allow_if_none=True).authorize("User:alice", "127.0.0.1", cluster(AclOperation.DESCRIBE))
    # An ACL on the resource for someone else: the resource has ACLs, so the default no longer applies.
    other = acl(principal="User:bob")
    assert not authorizer(other, allow_if_none=True).authorize("User:alice", "127.0.0.1",
                                                               cluster(AclOperation.DESCRIBE))
    # An ACL on another resource leaves it at the default.
    elsewhere = acl("orders", kind=TOPIC)
    assert authorizer(elsewhere, allow_if_none=True).authorize("User:alice", "127.0.0.1",
                                                               cluster(AclOperation.DESCRIBE))


@pytest.mark.parametrize(("granted", "asked", "allowed"), [
    (AclOperation.DESCRIBE, AclOperation.DESCRIBE, True),
    (AclOperation.ALTER, AclOperation.DESCRIBE, True),
    (AclOperation.READ, AclOperation.DESCRIBE, True),
    (AclOperation.WRITE, AclOperation.DESCRIBE, True),
    (AclOperation.DELETE, AclOperation.DESCRIBE, True),
    (AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE, False),
    (AclOperation.DESCRIBE, AclOperation.ALTER, False),
    (AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS, True),
    (AclOperation.ALTER_CONFIGS, AclOperation.ALTER, False),
    (AclOperation.ALL, AclOperation.CLUSTER_ACTION, True),
])
def test_an_allow_grants_its_operation_and_those_it_implies(granted: AclOperation, asked: AclOperation,
                                                            allowed: bool) -> None:
    auth = authorizer(acl(operation=granted))
    assert auth.authorize("User:alice", "127.0.0.1", cluster(asked)) is allowed


def test_a_deny_wins_and_implies_nothing() -> None:
    allow_all = acl(operation=AclOperation.ALL)
    deny_alter = acl(operation=AclOperation.ALTER, permission=DENY)
    auth = authorizer(allow_all, deny_alter)
    assert not auth.authorize("User:alice", "127.0.0.1", cluster(AclOperation.ALTER))
    assert auth.authorize("User:alice", "127.0.0.1", cluster(AclOperation.DESCRIBE))
    # A DENY for everyone beats an ALLOW for alice; a DENY of ALL denies every operation.
    assert not authorizer(allow_all, acl(principal="User:*", operation=AclOperation.ALL, permission=DENY)) \
        .authorize("User:alice", "127.0.0.1", cluster(AclOperation.DESCRIBE))


def test_principals_and_hosts() -> None:
    auth = authorizer(acl(principal="User:*", host="10.0.0.1"))
    assert auth.authorize("User:carol", "10.0.0.1", cluster(AclOperation.DESCRIBE))
    assert not auth.authorize("User:carol", "10.0.0.2", cluster(AclOperation.DESCRIBE))
    assert not authorizer(acl(principal="Group:alice")).authorize("User:alice", "127.0.0.1",
                                                                  cluster(AclOperation.DESCRIBE))
    # IPv6 addresses are compared as Java prints them.
    ipv6 = authorizer(acl(host="0:0:0:0:0:0:0:1"))
    assert ipv6.authorize("User:alice", "::1", cluster(AclOperation.DESCRIBE))


def test_an_acl_whose_principal_has_no_type_applies_to_nobody() -> None:
    assert not authorizer(acl(principal="alice")).authorize("User:alice", "127.0.0.1",
                                                            cluster(AclOperation.DESCRIBE))


def test_literal_wildcard_and_prefixed_patterns() -> None:
    auth = authorizer(acl("orders", kind=TOPIC, operation=AclOperation.READ),
                      acl("pay", kind=TOPIC, pattern=PREFIXED, operation=AclOperation.WRITE),
                      acl("*", kind=TOPIC, operation=AclOperation.DESCRIBE))
    assert auth.authorize("User:alice", "1.2.3.4", topic(AclOperation.READ, "orders"))
    assert not auth.authorize("User:alice", "1.2.3.4", topic(AclOperation.READ, "orders2"))
    assert auth.authorize("User:alice", "1.2.3.4", topic(AclOperation.WRITE, "payments"))
    assert not auth.authorize("User:alice", "1.2.3.4", topic(AclOperation.WRITE, "pa"))
    assert auth.authorize("User:alice", "1.2.3.4", topic(AclOperation.DESCRIBE, "anything"))
    # A literal name that is only a prefix of the resource does not cover it.
    assert not authorizer(acl("pay", kind=TOPIC, operation=AclOperation.READ)).authorize(
        "User:alice", "1.2.3.4", topic(AclOperation.READ, "payments"))


def test_authorized_operations() -> None:
    auth = authorizer(acl(operation=AclOperation.ALTER),
                      acl(operation=AclOperation.CLUSTER_ACTION, permission=DENY))
    asked = [AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION]
    found = auth.authorized_operations("User:alice", "127.0.0.1", asked, ResourceType.CLUSTER,
                                       "kafka-cluster", "DescribeCluster")
    assert found == [AclOperation.ALTER, AclOperation.DESCRIBE]


def test_the_acls_are_read_again_only_when_the_image_changed() -> None:
    acls: dict[Uuid, RECORD] = {}
    current = [acls]
    auth = StandardAuthorizer(AuthorizerConfig(frozenset()), 1, lambda: current[0])
    assert not auth.authorize("User:alice", "127.0.0.1", cluster(AclOperation.DESCRIBE))
    first = auth.bindings()
    assert auth.bindings() is first
    record = acl()
    current[0] = {record.id: record}
    assert auth.authorize("User:alice", "127.0.0.1", cluster(AclOperation.DESCRIBE))


def test_audit_lines(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, "kafka.authorizer.logger")
    auth = authorizer(acl(operation=AclOperation.ALTER))
    auth.authorize("User:bob", "127.0.0.1", cluster(AclOperation.ALTER))
    auth.authorize("User:alice", "127.0.0.1", cluster(AclOperation.ALTER))
    auth.authorized_operations("User:bob", "127.0.0.1", [AclOperation.ALTER], ResourceType.CLUSTER,
                               "kafka-cluster", "DescribeCluster")
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "kafka.authorizer.logger"]
    assert lines == [
        ("INFO", "Principal = User:bob is Denied operation = ALTER from host = 127.0.0.1 on resource = "
                 "Cluster:LITERAL:kafka-cluster for request = DescribeCluster with resourceRefCount = 1 "
                 "based on rule DefaultDeny"),
        ("DEBUG", "Principal = User:alice is Allowed operation = ALTER from host = 127.0.0.1 on resource = "
                  "Cluster:LITERAL:kafka-cluster for request = DescribeCluster with resourceRefCount = 1 "
                  "based on rule MatchingAcl(acl=StandardAcl[resourceType=CLUSTER, "
                  "resourceName=kafka-cluster, patternType=LITERAL, principal=User:alice, host=*, "
                  "operation=ALTER, permissionType=ALLOW])"),
    ]


def test_java_host_addresses() -> None:
    assert java_host_address("127.0.0.1") == "127.0.0.1"
    assert java_host_address("::1") == "0:0:0:0:0:0:0:1"
    assert java_host_address("fe80::1%eth0") == "fe80:0:0:0:0:0:0:1"
    assert java_host_address("::ffff:10.0.0.1") == "10.0.0.1"
    assert java_host_address("") == ""
