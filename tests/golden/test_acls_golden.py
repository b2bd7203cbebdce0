"""Golden wire vectors, worked out by hand, for CreateAcls (API 30), DescribeAcls (API 29) and DeleteAcls
(API 31), and the metadata records the active controller writes for them, AccessControlEntryRecord (18)
and RemoveAccessControlEntryRecord (19).

The reference schemas (Kafka 4.2) hold none of these, so the bytes follow Kafka's own JSON schemas
(``CreateAclsRequest.json``, ``DescribeAclsRequest.json``, ``DeleteAclsRequest.json``, their responses
and the two records): v0-v1 are classic (int16 string lengths, int32 array lengths, -1 for null), v2+
flexible (compact lengths hold N+1, 0 for null, every struct ends with its tagged fields); v0 has no
pattern type, which then reads as its default, 3 LITERAL. The records are v0 and flexible. Every vector
is checked both ways.
"""

from __future__ import annotations

import pytest

from golden.golden_testlib import golden_tests
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey, MetadataRecordType
from kafka_admin_kraft.protocol.primitives import Uuid

CREATE = messages.CreateAclsRequest
CREATED = messages.CreateAclsResponse
DESCRIBE = messages.DescribeAclsRequest
DESCRIBED = messages.DescribeAclsResponse
DELETE = messages.DeleteAclsRequest
DELETED = messages.DeleteAclsResponse
ENTRY = messages.AccessControlEntryRecord
REMOVE = messages.RemoveAccessControlEntryRecord

ALICE = b"User:alice"   # 10 bytes
ACL_ID = Uuid(bytes(range(1, 17)))

CREATION = CREATE.AclCreation(resource_type=2, resource_name="t", resource_pattern_type=3,
                              principal="User:alice", host="*", operation=3, permission_type=3)

CREATE_V0 = b"".join([
    b"\x00\x00\x00\x01",          # Creations int32 count = 1
    b"\x02",                      # ResourceType int8 = 2 TOPIC
    b"\x00\x01" b"t",             # ResourceName string
    b"\x00\x0a" + ALICE,          # Principal string
    b"\x00\x01" b"*",             # Host string
    b"\x03",                      # Operation int8 = 3 READ
    b"\x03",                      # PermissionType int8 = 3 ALLOW
])

CREATE_V1 = b"".join([
    b"\x00\x00\x00\x01",
    b"\x02",
    b"\x00\x01" b"t",
    b"\x03",                      # ResourcePatternType int8 = 3 LITERAL (v1+)
    b"\x00\x0a" + ALICE,
    b"\x00\x01" b"*",
    b"\x03",
    b"\x03",
])

CREATE_V2 = b"".join([
    b"\x02",                      # Creations compact array: 1 element
    b"\x02",                      # ResourceType
    b"\x02" b"t",                 # ResourceName compact string
    b"\x03",                      # ResourcePatternType
    b"\x0b" + ALICE,              # Principal compact string
    b"\x02" b"*",                 # Host compact string
    b"\x03",                      # Operation
    b"\x03",                      # PermissionType
    b"\x00",                      # AclCreation tagged fields
    b"\x00",                      # top-level tagged fields
])

CREATED_V1 = b"".join([
    b"\x00\x00\x00\x00",          # ThrottleTimeMs int32 = 0
    b"\x00\x00\x00\x02",          # Results int32 count = 2
    b"\x00\x00",                  # ErrorCode = 0
    b"\xff\xff",                  # ErrorMessage null
    b"\x00\x2a",                  # ErrorCode = 42 INVALID_REQUEST
    b"\x00\x02" b"no",            # ErrorMessage string
])

CREATED_V3 = b"".join([
    b"\x00\x00\x00\x00",          # ThrottleTimeMs
    b"\x03",                      # Results compact array: 2 elements
    b"\x00\x00", b"\x00", b"\x00",  # ErrorCode 0, ErrorMessage null, tagged fields
    b"\x00\x1f", b"\x03" b"no", b"\x00",  # ErrorCode 31 CLUSTER_AUTHORIZATION_FAILED, "no", tagged fields
    b"\x00",                      # top-level tagged fields
])

DESCRIBE_V1 = b"".join([
    b"\x01",                      # ResourceTypeFilter int8 = 1 ANY
    b"\xff\xff",                  # ResourceNameFilter null
    b"\x01",                      # PatternTypeFilter int8 = 1 ANY (v1+)
    b"\x00\x08" b"User:bob",      # PrincipalFilter
    b"\xff\xff",                  # HostFilter null
    b"\x01",                      # Operation = 1 ANY
    b"\x01",                      # PermissionType = 1 ANY
])

DESCRIBE_V2 = b"".join([
    b"\x01",
    b"\x00",                      # ResourceNameFilter compact null
    b"\x01",
    b"\x09" b"User:bob",
    b"\x00",
    b"\x01",
    b"\x01",
    b"\x00",                      # tagged fields
])

DESCRIBED_V0 = b"".join([
    b"\x00\x00\x00\x00",          # ThrottleTimeMs
    b"\x00\x00",                  # ErrorCode
    b"\xff\xff",                  # ErrorMessage null
    b"\x00\x00\x00\x01",          # Resources count = 1
    b"\x04",                      # ResourceType = 4 CLUSTER
    b"\x00\x0d" b"kafka-cluster",  # ResourceName
    b"\x00\x00\x00\x01",          # Acls count = 1
    b"\x00\x0a" + ALICE,          # Principal
    b"\x00\x01" b"*",             # Host
    b"\x08",                      # Operation = 8 DESCRIBE
    b"\x03",                      # PermissionType = 3 ALLOW
])

DESCRIBED_V1 = DESCRIBED_V0[:28] + b"\x03" + DESCRIBED_V0[28:]  # PatternType 3 LITERAL after the name

DESCRIBED_V2 = b"".join([
    b"\x00\x00\x00\x00",
    b"\x00\x00",
    b"\x00",                      # ErrorMessage compact null
    b"\x02",                      # Resources: 1 element
    b"\x04",
    b"\x0e" b"kafka-cluster",
    b"\x03",                      # PatternType
    b"\x02",                      # Acls: 1 element
    b"\x0b" + ALICE,
    b"\x02" b"*",
    b"\x08",
    b"\x03",
    b"\x00",                      # AclDescription tagged fields
    b"\x00",                      # DescribeAclsResource tagged fields
    b"\x00",                      # top-level tagged fields
])

DESCRIBED_REFUSED_V2 = b"".join([
    b"\x00\x00\x00\x00",
    b"\x00\x1f",                  # ErrorCode 31
    b"\x03" b"no",
    b"\x01",                      # Resources: empty
    b"\x00",
])

DELETE_V2 = b"".join([
    b"\x02",                      # Filters: 1 element
    b"\x02",                      # ResourceTypeFilter = 2 TOPIC
    b"\x02" b"t",                 # ResourceNameFilter
    b"\x03",                      # PatternTypeFilter = 3 LITERAL
    b"\x00",                      # PrincipalFilter null
    b"\x00",                      # HostFilter null
    b"\x01",                      # Operation ANY
    b"\x01",                      # PermissionType ANY
    b"\x00",                      # DeleteAclsFilter tagged fields
    b"\x00",                      # top-level tagged fields
])

DELETE_V1 = b"".join([
    b"\x00\x00\x00\x01",
    b"\x02",
    b"\x00\x01" b"t",
    b"\x03",
    b"\xff\xff",
    b"\xff\xff",
    b"\x01",
    b"\x01",
])

DELETED_V2 = b"".join([
    b"\x00\x00\x00\x00",          # ThrottleTimeMs
    b"\x02",                      # FilterResults: 1 element
    b"\x00\x00",                  # ErrorCode
    b"\x00",                      # ErrorMessage null
    b"\x02",                      # MatchingAcls: 1 element
    b"\x00\x00",                  # ErrorCode
    b"\x00",                      # ErrorMessage null
    b"\x02",                      # ResourceType TOPIC
    b"\x02" b"t",                 # ResourceName
    b"\x03",                      # PatternType
    b"\x0b" + ALICE,              # Principal
    b"\x02" b"*",                 # Host
    b"\x03",                      # Operation READ
    b"\x03",                      # PermissionType ALLOW
    b"\x00",                      # DeleteAclsMatchingAcl tagged fields
    b"\x00",                      # DeleteAclsFilterResult tagged fields
    b"\x00",                      # top-level tagged fields
])

ENTRY_V0 = b"".join([
    bytes(range(1, 17)),          # Id uuid
    b"\x02",                      # ResourceType
    b"\x02" b"t",                 # ResourceName
    b"\x04",                      # PatternType = 4 PREFIXED
    b"\x0b" + ALICE,              # Principal
    b"\x02" b"*",                 # Host
    b"\x07",                      # Operation = 7 ALTER
    b"\x02",                      # PermissionType = 2 DENY
    b"\x00",                      # tagged fields
])

REMOVE_V0 = bytes(range(1, 17)) + b"\x00"

ACL = DESCRIBED.AclDescription(principal="User:alice", host="*", operation=8, permission_type=3)
RESOURCE = DESCRIBED.DescribeAclsResource(resource_type=4, resource_name="kafka-cluster", pattern_type=3,
                                          acls=[ACL])
MATCHED = DELETED.DeleteAclsMatchingAcl(
    error_code=0, error_message=None, resource_type=2, resource_name="t", pattern_type=3,
    principal="User:alice", host="*", operation=3, permission_type=3)
DESCRIBE_FILTER = DESCRIBE(resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
                           principal_filter="User:bob", host_filter=None, operation=1, permission_type=1)
DELETE_FILTER = DELETE.DeleteAclsFilter(resource_type_filter=2, resource_name_filter="t",
                                        pattern_type_filter=3, principal_filter=None, host_filter=None,
                                        operation=1, permission_type=1)
FOUND = [RESOURCE]
CREATED_RESULTS = [CREATED.AclCreationResult(error_code=0, error_message=None),
                   CREATED.AclCreationResult(error_code=42, error_message="no")]

CASES = [
    pytest.param(CREATE, 0, CREATE(creations=[CREATION]), CREATE_V0, id="CreateAclsRequest-v0"),
    pytest.param(CREATE, 1, CREATE(creations=[CREATION]), CREATE_V1, id="CreateAclsRequest-v1"),
    pytest.param(CREATE, 2, CREATE(creations=[CREATION]), CREATE_V2, id="CreateAclsRequest-v2"),
    pytest.param(CREATED, 1, CREATED(throttle_time_ms=0, results=CREATED_RESULTS), CREATED_V1,
                 id="CreateAclsResponse-v1"),
    pytest.param(CREATED, 3, CREATED(results=[CREATED.AclCreationResult(error_code=0, error_message=None),
                                              CREATED.AclCreationResult(error_code=31, error_message="no")]),
                 CREATED_V3, id="CreateAclsResponse-v3"),
    pytest.param(DESCRIBE, 1, DESCRIBE_FILTER, DESCRIBE_V1, id="DescribeAclsRequest-v1"),
    pytest.param(DESCRIBE, 2, DESCRIBE_FILTER, DESCRIBE_V2, id="DescribeAclsRequest-v2"),
    pytest.param(DESCRIBED, 0, DESCRIBED(error_code=0, error_message=None, resources=FOUND), DESCRIBED_V0,
                 id="DescribeAclsResponse-v0"),
    pytest.param(DESCRIBED, 1, DESCRIBED(error_code=0, error_message=None, resources=FOUND), DESCRIBED_V1,
                 id="DescribeAclsResponse-v1"),
    pytest.param(DESCRIBED, 2, DESCRIBED(error_code=0, error_message=None, resources=FOUND), DESCRIBED_V2,
                 id="DescribeAclsResponse-v2"),
    pytest.param(DESCRIBED, 2, DESCRIBED(error_code=31, error_message="no", resources=[]),
                 DESCRIBED_REFUSED_V2, id="DescribeAclsResponse-v2-refused"),
    pytest.param(DELETE, 1, DELETE(filters=[DELETE_FILTER]), DELETE_V1, id="DeleteAclsRequest-v1"),
    pytest.param(DELETE, 2, DELETE(filters=[DELETE_FILTER]), DELETE_V2, id="DeleteAclsRequest-v2"),
    pytest.param(DELETED, 2, DELETED(filter_results=[DELETED.DeleteAclsFilterResult(
        error_code=0, error_message=None, matching_acls=[MATCHED])]), DELETED_V2, id="DeleteAclsResponse-v2"),
    pytest.param(ENTRY, 0, ENTRY(id=ACL_ID, resource_type=2, resource_name="t", pattern_type=4,
                                 principal="User:alice", host="*", operation=7, permission_type=2), ENTRY_V0,
                 id="AccessControlEntryRecord-v0"),
    pytest.param(REMOVE, 0, REMOVE(id=ACL_ID), REMOVE_V0, id="RemoveAccessControlEntryRecord-v0"),
]


test_encode_matches_golden, test_decode_matches_golden = golden_tests(CASES)


def test_v0_reads_the_literal_pattern_type() -> None:
    assert CREATE.decode(CREATE_V0, 0).creations[0].resource_pattern_type == 3
    assert DESCRIBED.decode(DESCRIBED_V0, 0).resources[0].pattern_type == 3


def test_the_api_keys_versions_listeners_and_headers() -> None:
    assert (ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS) == (29, 30, 31)
    for request, response in ((CREATE, CREATED), (DESCRIBE, DESCRIBED), (DELETE, DELETED)):
        assert request.VERSIONS == response.VERSIONS == (0, 3)
        assert set(request.LISTENERS) == {"broker", "controller"}
        for version, headers in ((0, (1, 0)), (1, (1, 0)), (2, (2, 1)), (3, (2, 1))):
            assert (framing.request_header_version(request.API_KEY, version),
                    framing.response_header_version(request.API_KEY, version)) == headers
    records = MetadataRecordType
    assert (records.ACCESS_CONTROL_ENTRY_RECORD, records.REMOVE_ACCESS_CONTROL_ENTRY_RECORD) == (18, 19)
    assert messages.metadata_record_class(18) is ENTRY and messages.metadata_record_class(19) is REMOVE


REQUEST_FRAME = b"".join([
    b"\x00\x00\x00\x1c",          # size int32 = 28
    b"\x00\x1d",                  # RequestApiKey int16 = 29
    b"\x00\x02",                  # RequestApiVersion int16 = 2
    b"\x00\x00\x00\x07",          # CorrelationId int32 = 7
    b"\x00\x01" b"c",             # ClientId classic string (request header v2)
    b"\x00",                      # header tagged fields: none
    DESCRIBE_V2,                  # the body above (16 bytes)
])


def test_whole_request_frame() -> None:
    assert framing.encode_request(DESCRIBE_FILTER, 2, 7, "c").hex(" ") == REQUEST_FRAME.hex(" ")
    decoded = framing.decode_request(REQUEST_FRAME[4:])
    header = decoded.header
    assert (header.request_api_key, header.client_id, decoded.body) == (29, "c", DESCRIBE_FILTER)
