"""Golden wire vectors, worked out by hand from Kafka's JSON schemas: ApiVersions, Metadata,
DescribeCluster, Envelope, SaslHandshake and SaslAuthenticate.

Every vector is checked both ways: the object encodes to exactly these bytes, and the bytes decode
to an object equal to it. None of these byte strings was produced by the project's encoder.

Notation: "compact" lengths are unsigned varints holding N+1 (0 = null); classic strings have an
int16 length, classic bytes and arrays an int32 length; every struct of a flexible version ends
with a tagged-field section (varint count, then tag/size/value entries).
"""

from __future__ import annotations

import pytest

from golden.golden_testlib import golden_tests
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import EncodeError
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

UUID_A_BYTES = b"\x6d\x2a\x1f\x0e\x43\x5c\x4b\x8a\x9e\x01\x23\x45\x67\x89\xab\xcd"
UUID_A = Uuid(UUID_A_BYTES)
ZERO_UUID_BYTES = b"\x00" * 16

AV = messages.ApiVersionsResponse
MDREQ = messages.MetadataRequest
MD = messages.MetadataResponse
DC = messages.DescribeClusterResponse

# ---------------------------------------------------------------------------------------------
# ApiVersions (API 18). Request v0-2 have no fields; v3 adds ClientSoftwareName/Version and
# becomes flexible; v5 (Kafka 4.4, KIP-1242) adds ClusterId (compact nullable string) and NodeId
# (int32), untagged. Response v1 adds ThrottleTimeMs; v3 is flexible with four tagged fields; v4 and
# v5 have v3's layout.
# ---------------------------------------------------------------------------------------------

API_VERSIONS_REQUEST_V0_TO_V2 = b""  # no fields at all in v0, v1 and v2

API_VERSIONS_REQUEST_V3 = b"".join([
    b"\x12" b"apache-kafka-java",  # ClientSoftwareName compact string, 17 bytes (N+1 = 0x12)
    b"\x06" b"3.9.0",              # ClientSoftwareVersion compact string, 5 bytes
    b"\x00",                       # tagged fields: none
])

API_VERSIONS_REQUEST_V4 = b"".join([
    b"\x12" b"kafka-admin-kraft",  # ClientSoftwareName compact string, 17 bytes
    b"\x06" b"0.1.0",              # ClientSoftwareVersion compact string, 5 bytes
    b"\x00",                       # tagged fields: none
])

API_VERSIONS_REQUEST_V5 = b"".join([
    b"\x12" b"apache-kafka-java",  # ClientSoftwareName compact string, 17 bytes
    b"\x06" b"4.4.0",              # ClientSoftwareVersion compact string, 5 bytes
    b"\x17" b"MkU3OEVBNTcwNTJENDM2Qg",  # ClusterId compact nullable string, 22 bytes (N+1 = 0x17)
    b"\x00\x00\x00\x03",          # NodeId int32 = 3
    b"\x00",                       # tagged fields: none
])

API_VERSIONS_REQUEST_V5_NO_TARGET = b"".join([
    b"\x12" b"kafka-admin-kraft",  # ClientSoftwareName compact string, 17 bytes
    b"\x06" b"0.1.0",              # ClientSoftwareVersion compact string, 5 bytes
    b"\x00",                       # ClusterId compact nullable string = null (length 0)
    b"\xff\xff\xff\xff",          # NodeId int32 = -1 (the default: no node named)
    b"\x00",                       # tagged fields: none
])

API_VERSIONS_RESPONSE_V5_REBOOTSTRAP = b"".join([
    b"\x00\x81",          # ErrorCode int16 = 129 REBOOTSTRAP_REQUIRED
    b"\x01",              # ApiKeys compact array, empty
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00",              # tagged fields: none (epoch -1 and the empty lists are defaults)
])

API_VERSIONS_RESPONSE_V0 = b"".join([
    b"\x00\x23",          # ErrorCode int16 = 35 UNSUPPORTED_VERSION
    b"\x00\x00\x00\x01",  # ApiKeys classic array, 1 element
    b"\x00\x12",          #   ApiKey int16 = 18
    b"\x00\x00",          #   MinVersion int16 = 0
    b"\x00\x04",          #   MaxVersion int16 = 4
])

API_VERSIONS_RESPONSE_V1 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x02",  # ApiKeys classic array, 2 elements
    b"\x00\x12",          #   [0] ApiKey int16 = 18
    b"\x00\x00",          #   [0] MinVersion int16 = 0
    b"\x00\x04",          #   [0] MaxVersion int16 = 4
    b"\x00\x37",          #   [1] ApiKey int16 = 55
    b"\x00\x00",          #   [1] MinVersion int16 = 0
    b"\x00\x02",          #   [1] MaxVersion int16 = 2
    b"\x00\x00\x00\x64",  # ThrottleTimeMs int32 = 100
])

API_VERSIONS_RESPONSE_V2 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x01",  # ApiKeys classic array, 1 element
    b"\x00\x01",          #   ApiKey int16 = 1 (Fetch)
    b"\x00\x04",          #   MinVersion int16 = 4
    b"\x00\x11",          #   MaxVersion int16 = 17
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
])

API_VERSIONS_RESPONSE_V3 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x03",              # ApiKeys compact array, 2 elements
    b"\x00\x12",          #   [0] ApiKey int16 = 18
    b"\x00\x00",          #   [0] MinVersion int16 = 0
    b"\x00\x04",          #   [0] MaxVersion int16 = 4
    b"\x00",              #   [0] tagged fields: none
    b"\x00\x37",          #   [1] ApiKey int16 = 55
    b"\x00\x00",          #   [1] MinVersion int16 = 0
    b"\x00\x02",          #   [1] MaxVersion int16 = 2
    b"\x00",              #   [1] tagged fields: none
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x04",              # tagged fields: 4 entries, ascending tags
    b"\x00",              #   tag 0 = SupportedFeatures
    b"\x17",              #   size 23
    b"\x02",              #     compact array, 1 element
    b"\x11" b"metadata.version",  # Name compact string, 16 bytes
    b"\x00\x01",          #     MinVersion int16 = 1
    b"\x00\x1b",          #     MaxVersion int16 = 27
    b"\x00",              #     tagged fields: none
    b"\x01",              #   tag 1 = FinalizedFeaturesEpoch
    b"\x08",              #   size 8
    b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # int64 = 42
    b"\x02",              #   tag 2 = FinalizedFeatures
    b"\x17",              #   size 23
    b"\x02",              #     compact array, 1 element
    b"\x11" b"metadata.version",  # Name compact string, 16 bytes
    b"\x00\x15",          #     MaxVersionLevel int16 = 21
    b"\x00\x15",          #     MinVersionLevel int16 = 21
    b"\x00",              #     tagged fields: none
    b"\x03",              #   tag 3 = ZkMigrationReady
    b"\x01",              #   size 1
    b"\x01",              #   bool = true
])

API_VERSIONS_RESPONSE_V4 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # ApiKeys compact array, 1 element
    b"\x00\x12",          #   ApiKey int16 = 18
    b"\x00\x00",          #   MinVersion int16 = 0
    b"\x00\x04",          #   MaxVersion int16 = 4
    b"\x00",              #   tagged fields: none
    b"\x00\x00\x00\x0a",  # ThrottleTimeMs int32 = 10
    b"\x01",              # tagged fields: 1 entry (epoch -1, no finalized features and
                          # ZkMigrationReady false are defaults and are not written)
    b"\x00",              #   tag 0 = SupportedFeatures
    b"\x14",              #   size 20
    b"\x02",              #     compact array, 1 element
    b"\x0e" b"kraft.version",  # Name compact string, 13 bytes
    b"\x00\x00",          #     MinVersion int16 = 0
    b"\x00\x01",          #     MaxVersion int16 = 1
    b"\x00",              #     tagged fields: none
])

API_VERSIONS_CASES = [
    pytest.param(messages.ApiVersionsRequest, v, messages.ApiVersionsRequest(),
                 API_VERSIONS_REQUEST_V0_TO_V2, id=f"ApiVersionsRequest-v{v}")
    for v in (0, 1, 2)
] + [
    pytest.param(messages.ApiVersionsRequest, 3, messages.ApiVersionsRequest(
        client_software_name="apache-kafka-java", client_software_version="3.9.0"),
        API_VERSIONS_REQUEST_V3, id="ApiVersionsRequest-v3"),
    pytest.param(messages.ApiVersionsRequest, 4, messages.ApiVersionsRequest(
        client_software_name="kafka-admin-kraft", client_software_version="0.1.0"),
        API_VERSIONS_REQUEST_V4, id="ApiVersionsRequest-v4"),
    pytest.param(messages.ApiVersionsRequest, 5, messages.ApiVersionsRequest(
        client_software_name="apache-kafka-java", client_software_version="4.4.0",
        cluster_id="MkU3OEVBNTcwNTJENDM2Qg", node_id=3),
        API_VERSIONS_REQUEST_V5, id="ApiVersionsRequest-v5"),
    pytest.param(messages.ApiVersionsRequest, 5, messages.ApiVersionsRequest(
        client_software_name="kafka-admin-kraft", client_software_version="0.1.0"),
        API_VERSIONS_REQUEST_V5_NO_TARGET, id="ApiVersionsRequest-v5-no-target"),
    pytest.param(AV, 5, AV(error_code=129, throttle_time_ms=0),
                 API_VERSIONS_RESPONSE_V5_REBOOTSTRAP, id="ApiVersionsResponse-v5"),
    pytest.param(AV, 0, AV(error_code=35, api_keys=[AV.ApiVersion(api_key=18, min_version=0, max_version=4)]),
                 API_VERSIONS_RESPONSE_V0, id="ApiVersionsResponse-v0"),
    pytest.param(AV, 1, AV(error_code=0, throttle_time_ms=100, api_keys=[
        AV.ApiVersion(api_key=18, min_version=0, max_version=4),
        AV.ApiVersion(api_key=55, min_version=0, max_version=2)]),
        API_VERSIONS_RESPONSE_V1, id="ApiVersionsResponse-v1"),
    pytest.param(AV, 2, AV(api_keys=[AV.ApiVersion(api_key=1, min_version=4, max_version=17)]),
                 API_VERSIONS_RESPONSE_V2, id="ApiVersionsResponse-v2"),
    pytest.param(AV, 3, AV(
        api_keys=[AV.ApiVersion(api_key=18, min_version=0, max_version=4),
                  AV.ApiVersion(api_key=55, min_version=0, max_version=2)],
        supported_features=[AV.SupportedFeatureKey(name="metadata.version", min_version=1, max_version=27)],
        finalized_features_epoch=42,
        finalized_features=[AV.FinalizedFeatureKey(name="metadata.version", max_version_level=21,
                                                   min_version_level=21)],
        zk_migration_ready=True),
        API_VERSIONS_RESPONSE_V3, id="ApiVersionsResponse-v3"),
    pytest.param(AV, 4, AV(
        throttle_time_ms=10,
        api_keys=[AV.ApiVersion(api_key=18, min_version=0, max_version=4)],
        supported_features=[AV.SupportedFeatureKey(name="kraft.version", min_version=0, max_version=1)]),
        API_VERSIONS_RESPONSE_V4, id="ApiVersionsResponse-v4"),
]

# ---------------------------------------------------------------------------------------------
# Metadata (API 3), flexible versions 9-13. Request: v10 adds TopicId and makes Name nullable,
# v11 drops IncludeClusterAuthorizedOperations. Response: v10 adds TopicId, v11 drops
# ClusterAuthorizedOperations, v12 makes the topic Name nullable, v13 adds the top-level ErrorCode.
# ---------------------------------------------------------------------------------------------

METADATA_REQUEST_V9 = b"".join([
    b"\x02",              # Topics compact nullable array, 1 element
    b"\x04" b"foo",       #   Name compact string, 3 bytes
    b"\x00",              #   tagged fields: none
    b"\x01",              # AllowAutoTopicCreation bool = true
    b"\x01",              # IncludeClusterAuthorizedOperations bool = true
    b"\x00",              # IncludeTopicAuthorizedOperations bool = false
    b"\x00",              # tagged fields: none
])

METADATA_REQUEST_V10 = b"".join([
    b"\x02",              # Topics compact nullable array, 1 element
    UUID_A_BYTES,         #   TopicId uuid
    b"\x00",              #   Name compact nullable string = null
    b"\x00",              #   tagged fields: none
    b"\x00",              # AllowAutoTopicCreation bool = false
    b"\x00",              # IncludeClusterAuthorizedOperations bool = false
    b"\x01",              # IncludeTopicAuthorizedOperations bool = true
    b"\x00",              # tagged fields: none
])

METADATA_REQUEST_V11 = b"".join([
    b"\x00",              # Topics compact nullable array = null (all topics)
    b"\x01",              # AllowAutoTopicCreation bool = true
    b"\x00",              # IncludeTopicAuthorizedOperations bool = false
    b"\x00",              # tagged fields: none
])

METADATA_REQUEST_V12 = b"".join([
    b"\x01",              # Topics compact nullable array, empty (no topics)
    b"\x00",              # AllowAutoTopicCreation bool = false
    b"\x01",              # IncludeTopicAuthorizedOperations bool = true
    b"\x00",              # tagged fields: none
])

METADATA_REQUEST_V13 = b"".join([
    b"\x02",              # Topics compact nullable array, 1 element
    ZERO_UUID_BYTES,      #   TopicId uuid = zero
    b"\x04" b"bar",       #   Name compact nullable string, 3 bytes
    b"\x00",              #   tagged fields: none
    b"\x01",              # AllowAutoTopicCreation bool = true
    b"\x00",              # IncludeTopicAuthorizedOperations bool = false
    b"\x00",              # tagged fields: none
])

METADATA_RESPONSE_V9 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x02",              # Brokers compact array, 1 element
    b"\x00\x00\x00\x01",  #   NodeId int32 = 1
    b"\x03" b"b1",        #   Host compact string
    b"\x00\x00\x23\x84",  #   Port int32 = 9092
    b"\x00",              #   Rack compact nullable string = null
    b"\x00",              #   tagged fields: none
    b"\x02" b"c",         # ClusterId compact nullable string = "c"
    b"\x00\x00\x00\x01",  # ControllerId int32 = 1
    b"\x02",              # Topics compact array, 1 element
    b"\x00\x00",          #   ErrorCode int16 = 0
    b"\x02" b"t",         #   Name compact string = "t"
    b"\x00",              #   IsInternal bool = false
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
    b"\x02\x00\x00\x00\x01",  # ReplicaNodes compact []int32 = [1]
    b"\x02\x00\x00\x00\x01",  # IsrNodes compact []int32 = [1]
    b"\x01",              #     OfflineReplicas compact []int32 = []
    b"\x00",              #     tagged fields: none
    b"\x80\x00\x00\x00",  #   TopicAuthorizedOperations int32 = -2147483648
    b"\x00",              #   tagged fields: none
    b"\x80\x00\x00\x00",  # ClusterAuthorizedOperations int32 = -2147483648
    b"\x00",              # tagged fields: none
])

METADATA_RESPONSE_V10 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x02",              # Brokers compact array, 1 element
    b"\x00\x00\x00\x02",  #   NodeId int32 = 2
    b"\x02" b"h",         #   Host compact string
    b"\x00\x00\x23\x85",  #   Port int32 = 9093
    b"\x03" b"r1",        #   Rack compact nullable string = "r1"
    b"\x00",              #   tagged fields: none
    b"\x00",              # ClusterId compact nullable string = null
    b"\xff\xff\xff\xff",  # ControllerId int32 = -1
    b"\x02",              # Topics compact array, 1 element
    b"\x00\x00",          #   ErrorCode int16 = 0
    b"\x02" b"t",         #   Name compact string = "t"
    UUID_A_BYTES,         #   TopicId uuid
    b"\x01",              #   IsInternal bool = true
    b"\x01",              #   Partitions compact array, empty
    b"\x80\x00\x00\x00",  #   TopicAuthorizedOperations int32 = -2147483648
    b"\x00",              #   tagged fields: none
    b"\x00\x00\x01\x00",  # ClusterAuthorizedOperations int32 = 256
    b"\x00",              # tagged fields: none
])

METADATA_RESPONSE_V11 = b"".join([
    b"\x00\x00\x00\x05",  # ThrottleTimeMs int32 = 5
    b"\x02",              # Brokers compact array, 1 element
    b"\x00\x00\x00\x01",  #   NodeId int32 = 1
    b"\x03" b"b1",        #   Host compact string
    b"\x00\x00\x23\x84",  #   Port int32 = 9092
    b"\x00",              #   Rack compact nullable string = null
    b"\x00",              #   tagged fields: none
    b"\x02" b"c",         # ClusterId compact nullable string = "c"
    b"\x00\x00\x00\x01",  # ControllerId int32 = 1
    b"\x02",              # Topics compact array, 1 element
    b"\x00\x03",          #   ErrorCode int16 = 3 UNKNOWN_TOPIC_OR_PARTITION
    b"\x05" b"gone",      #   Name compact string = "gone"
    ZERO_UUID_BYTES,      #   TopicId uuid = zero
    b"\x00",              #   IsInternal bool = false
    b"\x01",              #   Partitions compact array, empty
    b"\x80\x00\x00\x00",  #   TopicAuthorizedOperations int32 = -2147483648
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none (no ClusterAuthorizedOperations from v11)
])

METADATA_RESPONSE_V12 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x01",              # Brokers compact array, empty
    b"\x04" b"cid",       # ClusterId compact nullable string = "cid"
    b"\x00\x00\x00\x00",  # ControllerId int32 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x00\x64",          #   ErrorCode int16 = 100 UNKNOWN_TOPIC_ID
    b"\x00",              #   Name compact nullable string = null (nullable from v12)
    UUID_A_BYTES,         #   TopicId uuid
    b"\x00",              #   IsInternal bool = false
    b"\x01",              #   Partitions compact array, empty
    b"\x80\x00\x00\x00",  #   TopicAuthorizedOperations int32 = -2147483648
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

METADATA_RESPONSE_V13 = b"".join([
    b"\x00\x00\x00\x07",  # ThrottleTimeMs int32 = 7
    b"\x01",              # Brokers compact array, empty
    b"\x00",              # ClusterId compact nullable string = null
    b"\xff\xff\xff\xff",  # ControllerId int32 = -1
    b"\x01",              # Topics compact array, empty
    b"\x00\x1f",          # ErrorCode int16 = 31 CLUSTER_AUTHORIZATION_FAILED (v13+)
    b"\x00",              # tagged fields: none
])

METADATA_CASES = [
    pytest.param(MDREQ, 9, MDREQ(topics=[MDREQ.MetadataRequestTopic(name="foo")],
                                 allow_auto_topic_creation=True, include_cluster_authorized_operations=True),
                 METADATA_REQUEST_V9, id="MetadataRequest-v9"),
    pytest.param(MDREQ, 10, MDREQ(topics=[MDREQ.MetadataRequestTopic(topic_id=UUID_A, name=None)],
                                  allow_auto_topic_creation=False, include_topic_authorized_operations=True),
                 METADATA_REQUEST_V10, id="MetadataRequest-v10"),
    pytest.param(MDREQ, 11, MDREQ(topics=None, allow_auto_topic_creation=True),
                 METADATA_REQUEST_V11, id="MetadataRequest-v11"),
    pytest.param(MDREQ, 12, MDREQ(topics=[], allow_auto_topic_creation=False,
                                  include_topic_authorized_operations=True),
                 METADATA_REQUEST_V12, id="MetadataRequest-v12"),
    pytest.param(MDREQ, 13, MDREQ(topics=[MDREQ.MetadataRequestTopic(topic_id=ZERO_UUID, name="bar")]),
                 METADATA_REQUEST_V13, id="MetadataRequest-v13"),
    pytest.param(MD, 9, MD(
        brokers=[MD.MetadataResponseBroker(node_id=1, host="b1", port=9092, rack=None)],
        cluster_id="c", controller_id=1,
        topics=[MD.MetadataResponseTopic(name="t", partitions=[MD.MetadataResponsePartition(
            partition_index=0, leader_id=1, leader_epoch=5, replica_nodes=[1], isr_nodes=[1],
            offline_replicas=[])])]),
        METADATA_RESPONSE_V9, id="MetadataResponse-v9"),
    pytest.param(MD, 10, MD(
        brokers=[MD.MetadataResponseBroker(node_id=2, host="h", port=9093, rack="r1")],
        cluster_id=None, controller_id=-1,
        topics=[MD.MetadataResponseTopic(name="t", topic_id=UUID_A, is_internal=True)],
        cluster_authorized_operations=256),
        METADATA_RESPONSE_V10, id="MetadataResponse-v10"),
    pytest.param(MD, 11, MD(
        throttle_time_ms=5,
        brokers=[MD.MetadataResponseBroker(node_id=1, host="b1", port=9092)],
        cluster_id="c", controller_id=1,
        topics=[MD.MetadataResponseTopic(error_code=3, name="gone")]),
        METADATA_RESPONSE_V11, id="MetadataResponse-v11"),
    pytest.param(MD, 12, MD(
        cluster_id="cid", controller_id=0,
        topics=[MD.MetadataResponseTopic(error_code=100, name=None, topic_id=UUID_A)]),
        METADATA_RESPONSE_V12, id="MetadataResponse-v12"),
    pytest.param(MD, 13, MD(throttle_time_ms=7, cluster_id=None, controller_id=-1, error_code=31),
                 METADATA_RESPONSE_V13, id="MetadataResponse-v13"),
]

# ---------------------------------------------------------------------------------------------
# DescribeCluster (API 60), flexible from v0. v1 adds EndpointType to both sides, v2 adds
# IncludeFencedBrokers (request) and IsFenced per broker (response).
# ---------------------------------------------------------------------------------------------

DESCRIBE_CLUSTER_REQUEST_V0 = b"".join([
    b"\x01",              # IncludeClusterAuthorizedOperations bool = true
    b"\x00",              # tagged fields: none
])

DESCRIBE_CLUSTER_REQUEST_V1 = b"".join([
    b"\x00",              # IncludeClusterAuthorizedOperations bool = false
    b"\x02",              # EndpointType int8 = 2 (controllers)
    b"\x00",              # tagged fields: none
])

DESCRIBE_CLUSTER_REQUEST_V2 = b"".join([
    b"\x00",              # IncludeClusterAuthorizedOperations bool = false
    b"\x01",              # EndpointType int8 = 1 (brokers)
    b"\x01",              # IncludeFencedBrokers bool = true
    b"\x00",              # tagged fields: none
])

DESCRIBE_CLUSTER_RESPONSE_V0 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x04" b"abc",       # ClusterId compact string
    b"\x00\x00\x00\x01",  # ControllerId int32 = 1
    b"\x02",              # Brokers compact array, 1 element
    b"\x00\x00\x00\x01",  #   BrokerId int32 = 1
    b"\x02" b"h",         #   Host compact string
    b"\x00\x00\x23\x84",  #   Port int32 = 9092
    b"\x00",              #   Rack compact nullable string = null
    b"\x00",              #   tagged fields: none
    b"\x80\x00\x00\x00",  # ClusterAuthorizedOperations int32 = -2147483648
    b"\x00",              # tagged fields: none
])

DESCRIBE_CLUSTER_RESPONSE_V1 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x02",              # EndpointType int8 = 2 (controllers)
    b"\x04" b"abc",       # ClusterId compact string
    b"\x00\x00\x0b\xb8",  # ControllerId int32 = 3000
    b"\x02",              # Brokers compact array, 1 element
    b"\x00\x00\x0b\xb8",  #   BrokerId int32 = 3000
    b"\x04" b"ctl",       #   Host compact string
    b"\x00\x00\x23\x85",  #   Port int32 = 9093
    b"\x07" b"rack-a",    #   Rack compact nullable string = "rack-a"
    b"\x00",              #   tagged fields: none
    b"\x80\x00\x00\x00",  # ClusterAuthorizedOperations int32 = -2147483648
    b"\x00",              # tagged fields: none
])

DESCRIBE_CLUSTER_RESPONSE_V2 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x01",              # EndpointType int8 = 1 (brokers)
    b"\x04" b"abc",       # ClusterId compact string
    b"\x00\x00\x00\x01",  # ControllerId int32 = 1
    b"\x03",              # Brokers compact array, 2 elements
    b"\x00\x00\x00\x01",  #   [0] BrokerId int32 = 1
    b"\x02" b"h",         #   [0] Host compact string
    b"\x00\x00\x23\x84",  #   [0] Port int32 = 9092
    b"\x00",              #   [0] Rack compact nullable string = null
    b"\x01",              #   [0] IsFenced bool = true
    b"\x00",              #   [0] tagged fields: none
    b"\x00\x00\x00\x02",  #   [1] BrokerId int32 = 2
    b"\x03" b"h2",        #   [1] Host compact string
    b"\x00\x00\x23\x84",  #   [1] Port int32 = 9092
    b"\x02" b"r",         #   [1] Rack compact nullable string = "r"
    b"\x00",              #   [1] IsFenced bool = false
    b"\x00",              #   [1] tagged fields: none
    b"\x00\x00\x00\x0f",  # ClusterAuthorizedOperations int32 = 15
    b"\x00",              # tagged fields: none
])

DESCRIBE_CLUSTER_CASES = [
    pytest.param(messages.DescribeClusterRequest, 0,
                 messages.DescribeClusterRequest(include_cluster_authorized_operations=True),
                 DESCRIBE_CLUSTER_REQUEST_V0, id="DescribeClusterRequest-v0"),
    pytest.param(messages.DescribeClusterRequest, 1, messages.DescribeClusterRequest(endpoint_type=2),
                 DESCRIBE_CLUSTER_REQUEST_V1, id="DescribeClusterRequest-v1"),
    pytest.param(messages.DescribeClusterRequest, 2,
                 messages.DescribeClusterRequest(endpoint_type=1, include_fenced_brokers=True),
                 DESCRIBE_CLUSTER_REQUEST_V2, id="DescribeClusterRequest-v2"),
    pytest.param(DC, 0, DC(cluster_id="abc", controller_id=1, brokers=[
        DC.DescribeClusterBroker(broker_id=1, host="h", port=9092)]),
        DESCRIBE_CLUSTER_RESPONSE_V0, id="DescribeClusterResponse-v0"),
    pytest.param(DC, 1, DC(endpoint_type=2, cluster_id="abc", controller_id=3000, brokers=[
        DC.DescribeClusterBroker(broker_id=3000, host="ctl", port=9093, rack="rack-a")]),
        DESCRIBE_CLUSTER_RESPONSE_V1, id="DescribeClusterResponse-v1"),
    pytest.param(DC, 2, DC(cluster_id="abc", controller_id=1, cluster_authorized_operations=15, brokers=[
        DC.DescribeClusterBroker(broker_id=1, host="h", port=9092, is_fenced=True),
        DC.DescribeClusterBroker(broker_id=2, host="h2", port=9092, rack="r")]),
        DESCRIBE_CLUSTER_RESPONSE_V2, id="DescribeClusterResponse-v2"),
]

# ---------------------------------------------------------------------------------------------
# Envelope (API 58), v0 only, flexible.
# ---------------------------------------------------------------------------------------------

ENVELOPE_REQUEST_V0 = b"".join([
    b"\x04" b"\x00\x37\x00",  # RequestData compact bytes, 3 bytes
    b"\x03" b"\x01\x02",      # RequestPrincipal compact nullable bytes, 2 bytes
    b"\x05" b"\x7f\x00\x00\x01",  # ClientHostAddress compact bytes, 4 bytes (127.0.0.1)
    b"\x00",                  # tagged fields: none
])

ENVELOPE_REQUEST_V0_NULL_PRINCIPAL = b"".join([
    b"\x01",                  # RequestData compact bytes, empty
    b"\x00",                  # RequestPrincipal compact nullable bytes = null
    b"\x11" + bytes(16),      # ClientHostAddress compact bytes, 16 bytes (IPv6 ::)
    b"\x00",                  # tagged fields: none
])

ENVELOPE_RESPONSE_V0 = b"".join([
    b"\x03" b"\xaa\xbb",      # ResponseData compact nullable bytes, 2 bytes
    b"\x00\x00",              # ErrorCode int16 = 0
    b"\x00",                  # tagged fields: none
])

ENVELOPE_RESPONSE_V0_NULL = b"".join([
    b"\x00",                  # ResponseData compact nullable bytes = null
    b"\x00\x61",              # ErrorCode int16 = 97 PRINCIPAL_DESERIALIZATION_FAILURE
    b"\x00",                  # tagged fields: none
])

ENVELOPE_CASES = [
    pytest.param(messages.EnvelopeRequest, 0, messages.EnvelopeRequest(
        request_data=b"\x00\x37\x00", request_principal=b"\x01\x02", client_host_address=b"\x7f\x00\x00\x01"),
        ENVELOPE_REQUEST_V0, id="EnvelopeRequest-v0"),
    pytest.param(messages.EnvelopeRequest, 0, messages.EnvelopeRequest(
        request_data=b"", request_principal=None, client_host_address=bytes(16)),
        ENVELOPE_REQUEST_V0_NULL_PRINCIPAL, id="EnvelopeRequest-v0-null-principal"),
    pytest.param(messages.EnvelopeResponse, 0, messages.EnvelopeResponse(response_data=b"\xaa\xbb"),
                 ENVELOPE_RESPONSE_V0, id="EnvelopeResponse-v0"),
    pytest.param(messages.EnvelopeResponse, 0, messages.EnvelopeResponse(error_code=97),
                 ENVELOPE_RESPONSE_V0_NULL, id="EnvelopeResponse-v0-null-data"),
]

# ---------------------------------------------------------------------------------------------
# SaslHandshake (API 17): never flexible; v1 has the same layout as v0.
# SaslAuthenticate (API 36): v1 adds SessionLifetimeMs to the response, v2 is flexible.
# ---------------------------------------------------------------------------------------------

SASL_HANDSHAKE_REQUEST_V0 = b"".join([
    b"\x00\x05" b"PLAIN",          # Mechanism classic string, 5 bytes
])

SASL_HANDSHAKE_REQUEST_V1 = b"".join([
    b"\x00\x0d" b"SCRAM-SHA-512",  # Mechanism classic string, 13 bytes
])

SASL_HANDSHAKE_RESPONSE_V0 = b"".join([
    b"\x00\x00",                   # ErrorCode int16 = 0
    b"\x00\x00\x00\x02",           # Mechanisms classic array, 2 elements
    b"\x00\x05" b"PLAIN",          #   [0] classic string
    b"\x00\x0d" b"SCRAM-SHA-256",  #   [1] classic string
])

SASL_HANDSHAKE_RESPONSE_V1 = b"".join([
    b"\x00\x21",                   # ErrorCode int16 = 33 UNSUPPORTED_SASL_MECHANISM
    b"\x00\x00\x00\x01",           # Mechanisms classic array, 1 element
    b"\x00\x05" b"PLAIN",          #   [0] classic string
])

SASL_AUTHENTICATE_REQUEST_V0 = b"".join([
    b"\x00\x00\x00\x0d" b"\x00alice\x00secret",  # AuthBytes classic bytes, 13 bytes
])

SASL_AUTHENTICATE_REQUEST_V1 = b"".join([
    b"\x00\x00\x00\x00",          # AuthBytes classic bytes, empty
])

SASL_AUTHENTICATE_REQUEST_V2 = b"".join([
    b"\x0e" b"\x00alice\x00secret",  # AuthBytes compact bytes, 13 bytes (N+1 = 0x0e)
    b"\x00",                         # tagged fields: none
])

SASL_AUTHENTICATE_RESPONSE_V0 = b"".join([
    b"\x00\x00",                  # ErrorCode int16 = 0
    b"\xff\xff",                  # ErrorMessage classic nullable string = null
    b"\x00\x00\x00\x00",          # AuthBytes classic bytes, empty
])

SASL_AUTHENTICATE_RESPONSE_V1 = b"".join([
    b"\x00\x00",                  # ErrorCode int16 = 0
    b"\xff\xff",                  # ErrorMessage classic nullable string = null
    b"\x00\x00\x00\x03" b"abc",   # AuthBytes classic bytes, 3 bytes
    b"\x00\x00\x00\x00\x00\x36\xee\x80",  # SessionLifetimeMs int64 = 3600000
])

SASL_AUTHENTICATE_RESPONSE_V2 = b"".join([
    b"\x00\x3a",                  # ErrorCode int16 = 58 SASL_AUTHENTICATION_FAILED
    b"\x04" b"bad",               # ErrorMessage compact nullable string, 3 bytes
    b"\x01",                      # AuthBytes compact bytes, empty
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # SessionLifetimeMs int64 = 0
    b"\x00",                      # tagged fields: none
])

SASL_CASES = [
    pytest.param(messages.SaslHandshakeRequest, 0, messages.SaslHandshakeRequest(mechanism="PLAIN"),
                 SASL_HANDSHAKE_REQUEST_V0, id="SaslHandshakeRequest-v0"),
    pytest.param(messages.SaslHandshakeRequest, 1, messages.SaslHandshakeRequest(mechanism="SCRAM-SHA-512"),
                 SASL_HANDSHAKE_REQUEST_V1, id="SaslHandshakeRequest-v1"),
    pytest.param(messages.SaslHandshakeResponse, 0,
                 messages.SaslHandshakeResponse(mechanisms=["PLAIN", "SCRAM-SHA-256"]),
                 SASL_HANDSHAKE_RESPONSE_V0, id="SaslHandshakeResponse-v0"),
    pytest.param(messages.SaslHandshakeResponse, 1,
                 messages.SaslHandshakeResponse(error_code=33, mechanisms=["PLAIN"]),
                 SASL_HANDSHAKE_RESPONSE_V1, id="SaslHandshakeResponse-v1"),
    pytest.param(messages.SaslAuthenticateRequest, 0,
                 messages.SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00secret"),
                 SASL_AUTHENTICATE_REQUEST_V0, id="SaslAuthenticateRequest-v0"),
    pytest.param(messages.SaslAuthenticateRequest, 1, messages.SaslAuthenticateRequest(auth_bytes=b""),
                 SASL_AUTHENTICATE_REQUEST_V1, id="SaslAuthenticateRequest-v1"),
    pytest.param(messages.SaslAuthenticateRequest, 2,
                 messages.SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00secret"),
                 SASL_AUTHENTICATE_REQUEST_V2, id="SaslAuthenticateRequest-v2"),
    pytest.param(messages.SaslAuthenticateResponse, 0,
                 messages.SaslAuthenticateResponse(error_message=None, auth_bytes=b""),
                 SASL_AUTHENTICATE_RESPONSE_V0, id="SaslAuthenticateResponse-v0"),
    pytest.param(messages.SaslAuthenticateResponse, 1, messages.SaslAuthenticateResponse(
        error_message=None, auth_bytes=b"abc", session_lifetime_ms=3600000),
        SASL_AUTHENTICATE_RESPONSE_V1, id="SaslAuthenticateResponse-v1"),
    pytest.param(messages.SaslAuthenticateResponse, 2, messages.SaslAuthenticateResponse(
        error_code=58, error_message="bad", auth_bytes=b""),
        SASL_AUTHENTICATE_RESPONSE_V2, id="SaslAuthenticateResponse-v2"),
]

CASES = API_VERSIONS_CASES + METADATA_CASES + DESCRIBE_CLUSTER_CASES + ENVELOPE_CASES + SASL_CASES


test_encode_matches_golden, test_decode_matches_golden = golden_tests(CASES)


def test_api_versions_v4_cannot_name_a_cluster_or_node() -> None:
    """ClusterId and NodeId exist from v5 on and are not ignorable: v4 cannot carry them."""
    with pytest.raises(EncodeError, match="ClusterId"):
        messages.ApiVersionsRequest(client_software_name="a", client_software_version="1",
                                    cluster_id="c", node_id=1).encode(4)
    with pytest.raises(EncodeError, match="NodeId"):
        messages.ApiVersionsRequest(client_software_name="a", client_software_version="1",
                                    node_id=1).encode(4)
