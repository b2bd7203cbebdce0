"""The ACL values (``kafka_admin_kraft/acl.py``): Kafka's codes, the checks of bindings and filters a
caller builds, how a filter matches (Kafka's ``AclBindingFilter.matches``), the result types and the
table of what each API needs on the cluster."""

from __future__ import annotations

import pytest

from kafka_admin_kraft import acl
from kafka_admin_kraft.acl import (
    ANY_BINDING,
    AclBinding,
    AclBindingFilter,
    AclCreateResult,
    AclDeleteResult,
    AclMatch,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    cluster_operation,
)
from kafka_admin_kraft.errors import InvalidRequestError
from kafka_admin_kraft.protocol.api_keys import ApiKey


def test_kafkas_codes_and_names() -> None:
    assert [(m.name, int(m)) for m in ResourceType] == [
        ("UNKNOWN", 0), ("ANY", 1), ("TOPIC", 2), ("GROUP", 3), ("CLUSTER", 4), ("TRANSACTIONAL_ID", 5),
        ("DELEGATION_TOKEN", 6), ("USER", 7)]
    assert [(m.name, int(m)) for m in PatternType] == [
        ("UNKNOWN", 0), ("ANY", 1), ("MATCH", 2), ("LITERAL", 3), ("PREFIXED", 4)]
    assert (AclOperation.ALL, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION,
            AclOperation.TWO_PHASE_COMMIT) == (2, 7, 8, 9, 15)
    assert (AclPermissionType.DENY, AclPermissionType.ALLOW) == (2, 3)
    assert str(AclOperation.ALTER) == "ALTER"
    assert ResourceType.from_code(99) is ResourceType.UNKNOWN
    assert AclOperation.from_code(8) is AclOperation.DESCRIBE


def test_a_binding_defaults_to_allow_a_literal_from_any_host() -> None:
    binding = AclBinding(ResourceType.CLUSTER, "kafka-cluster", "User:alice", AclOperation.DESCRIBE)
    assert (binding.permission_type, binding.pattern_type, binding.host) == (
        AclPermissionType.ALLOW, PatternType.LITERAL, "*")
    assert binding == AclBinding(4, "kafka-cluster", "User:alice", 8, 3)
    assert str(binding) == ("(pattern=ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, "
                            "patternType=LITERAL), entry=(principal=User:alice, host=*, operation=DESCRIBE, "
                            "permissionType=ALLOW))")


@pytest.mark.parametrize(("arguments", "error", "match"), [
    ((ResourceType.ANY, "t", "User:a", AclOperation.READ), ValueError, "resource_type must be one of TOPIC"),
    ((ResourceType.TOPIC, "", "User:a", AclOperation.READ), ValueError, "resource_name .* not empty"),
    ((ResourceType.TOPIC, "t", "alice", AclOperation.READ), ValueError, "no ':' between type and name"),
    ((ResourceType.TOPIC, "t", "User:a", AclOperation.ANY), ValueError, "operation must be one of ALL"),
    ((ResourceType.TOPIC, "t", "User:a", AclOperation.READ, AclPermissionType.ANY), ValueError,
     "permission_type must be one of DENY, ALLOW"),
    ((ResourceType.TOPIC, "t", "User:a", 99), ValueError, r"AclOperation \(.*\) or its code, got 99"),
    ((ResourceType.TOPIC, "t", "User:a", True), TypeError, "got bool True"),
    (("TOPIC", "t", "User:a", 3), TypeError, "got str 'TOPIC'"),
])
def test_a_binding_must_be_definite(arguments: tuple[object, ...], error: type[Exception],
                                    match: str) -> None:
    with pytest.raises(error, match=match):
        AclBinding(*arguments)  # type: ignore[arg-type]


def test_a_binding_pattern_type_must_be_literal_or_prefixed() -> None:
    with pytest.raises(ValueError, match="pattern_type must be one of LITERAL, PREFIXED, not MATCH"):
        AclBinding(ResourceType.TOPIC, "t", "User:a", AclOperation.READ, pattern_type=PatternType.MATCH)


def test_a_filter_may_be_indefinite_but_not_unknown() -> None:
    everything = AclBindingFilter(ResourceType.ANY, None, pattern_type=PatternType.ANY,
                                  operation=AclOperation.ANY, permission_type=AclPermissionType.ANY)
    assert everything == ANY_BINDING
    with pytest.raises(ValueError, match="not UNKNOWN"):
        AclBindingFilter(ResourceType.UNKNOWN)
    with pytest.raises(ValueError, match="no ':'"):
        AclBindingFilter(principal="bob")
    assert not ANY_BINDING.unknown
    assert AclBindingFilter.from_wire(99, None, 1, None, None, 1, 1).unknown
    assert AclBindingFilter.from_wire(1, None, 1, None, None, 1, 0).unknown


FOOBAR = AclBindingFilter(ResourceType.TOPIC, "foobar", pattern_type=PatternType.MATCH)


def _binding(name: str, pattern: PatternType = PatternType.LITERAL, **entry: object) -> AclBinding:
    fields: dict[str, object] = {"principal": "User:alice", "operation": AclOperation.READ}
    fields.update(entry)
    return AclBinding(ResourceType.TOPIC, name, pattern_type=pattern, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(("selector", "binding", "matches"), [
    (ANY_BINDING, _binding("t"), True),
    (AclBindingFilter(ResourceType.GROUP), _binding("t"), False),
    (AclBindingFilter(ResourceType.TOPIC, "t"), _binding("t"), True),
    (AclBindingFilter(ResourceType.TOPIC, "t"), _binding("t", PatternType.PREFIXED), True),
    (AclBindingFilter(ResourceType.TOPIC, "t", pattern_type=PatternType.LITERAL),
     _binding("t", PatternType.PREFIXED), False),
    (AclBindingFilter(ResourceType.TOPIC, "*"), _binding("*"), True),
    # MATCH: the literal name, the wildcard and every prefix of the name apply.
    (FOOBAR, _binding("foobar"), True),
    (FOOBAR, _binding("*"), True),
    (FOOBAR,
     _binding("foo", PatternType.PREFIXED), True),
    (FOOBAR, _binding("foo"), False),
    (FOOBAR,
     _binding("fob", PatternType.PREFIXED), False),
    (AclBindingFilter(ResourceType.TOPIC, "foo", pattern_type=PatternType.PREFIXED),
     _binding("foo", PatternType.PREFIXED), True),
    (AclBindingFilter(principal="User:bob"), _binding("t"), False),
    (AclBindingFilter(host="10.0.0.1"), _binding("t"), False),
    (AclBindingFilter(host="*"), _binding("t"), True),
    (AclBindingFilter(operation=AclOperation.WRITE), _binding("t"), False),
    (AclBindingFilter(permission_type=AclPermissionType.DENY), _binding("t"), False),
    (AclBindingFilter(permission_type=AclPermissionType.ALLOW, operation=AclOperation.READ), _binding("t"),
     True),
])
def test_filters_match_as_kafka(selector: AclBindingFilter, binding: AclBinding, matches: bool) -> None:
    assert selector.matches(binding) is matches


def test_iterables_of_bindings_and_filters() -> None:
    binding = _binding("t")
    assert acl.bindings([binding]) == (binding,)
    assert acl.filters(iter([ANY_BINDING])) == (ANY_BINDING,)
    with pytest.raises(TypeError, match="iterable of AclBinding"):
        acl.bindings(binding)
    with pytest.raises(TypeError, match="must hold AclBindingFilter only, got AclBinding"):
        acl.filters([binding])


def test_results_turn_their_error_into_the_exception() -> None:
    binding = _binding("t")
    assert AclCreateResult(binding).ok and AclCreateResult(binding).exception() is None
    refused = AclCreateResult(binding, 42, "Invalid empty resource name").exception()
    assert isinstance(refused, InvalidRequestError) and "create_acls" in str(refused)
    deleted = AclDeleteResult(ANY_BINDING, (AclMatch(binding), AclMatch(_binding("u"), 42, "no")))
    assert deleted.ok and deleted.deleted == (binding,)
    assert isinstance(AclDeleteResult(ANY_BINDING, (), 42, "Unknown patternFilter.").exception(),
                      InvalidRequestError)


@pytest.mark.parametrize(("api", "controller", "broker"), [
    (ApiKey.DESCRIBE_QUORUM, AclOperation.DESCRIBE, AclOperation.DESCRIBE),
    (ApiKey.DESCRIBE_CLUSTER, AclOperation.ALTER, None),
    (ApiKey.ADD_RAFT_VOTER, AclOperation.ALTER, AclOperation.ALTER),
    (ApiKey.REMOVE_RAFT_VOTER, AclOperation.ALTER, AclOperation.ALTER),
    (ApiKey.UPDATE_FEATURES, AclOperation.ALTER, AclOperation.ALTER),
    (ApiKey.UNREGISTER_BROKER, AclOperation.ALTER, AclOperation.ALTER),
    (ApiKey.UNREGISTER_CONTROLLER, AclOperation.ALTER, AclOperation.ALTER),
    (ApiKey.DESCRIBE_ACLS, AclOperation.DESCRIBE, AclOperation.DESCRIBE),
    (ApiKey.CREATE_ACLS, AclOperation.ALTER, AclOperation.ALTER),
    (ApiKey.DELETE_ACLS, AclOperation.ALTER, AclOperation.ALTER),
    (ApiKey.VOTE, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.FETCH, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.FETCH_SNAPSHOT, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.BEGIN_QUORUM_EPOCH, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.END_QUORUM_EPOCH, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.UPDATE_RAFT_VOTER, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.BROKER_REGISTRATION, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.BROKER_HEARTBEAT, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.CONTROLLER_REGISTRATION, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.ENVELOPE, AclOperation.CLUSTER_ACTION, None),
    (ApiKey.API_VERSIONS, None, None),
    (ApiKey.METADATA, None, None),
])
def test_what_each_api_needs_on_the_cluster(api: int, controller: AclOperation | None,
                                            broker: AclOperation | None) -> None:
    """ControllerApis and KafkaApis: a broker forwards most of these to the controller, which decides."""
    assert cluster_operation(api, acl.CONTROLLER) == controller
    assert cluster_operation(api, acl.BROKER) == broker
    assert set(acl.CLUSTER_OPERATIONS) == {
        AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.DESCRIBE}
