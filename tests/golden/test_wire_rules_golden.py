"""Hand-made golden bytes for the cross-cutting wire rules (Kafka's protocol guide, KIP-482): unknown
tagged fields, tag order, null versus empty, UTF-8, uuids, uint16 and int64 ranges, and what happens to
a field set on a version that does not have it (EncodeError unless the field is ignorable, then it is
dropped)."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.errors import DecodeError, EncodeError, UndefinedVersionError
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

UUID_A_BYTES = b"\x6d\x2a\x1f\x0e\x43\x5c\x4b\x8a\x9e\x01\x23\x45\x67\x89\xab\xcd"
UUID_B_BYTES = b"\xf0\xe1\xd2\xc3\xb4\xa5\x96\x87\x78\x69\x5a\x4b\x3c\x2d\x1e\x0f"
UUID_A, UUID_B = Uuid(UUID_A_BYTES), Uuid(UUID_B_BYTES)
META = b"__cluster_metadata"

DQ = messages.DescribeQuorumResponse
URV = messages.UpdateRaftVoterResponse
CURRENT_LEADER = URV.CurrentLeader(leader_id=1, leader_epoch=5, host="c1", port=9093)
CURRENT_LEADER_BYTES = b"".join([
    b"\x00\x00\x00\x01",  # LeaderId int32 = 1
    b"\x00\x00\x00\x05",  # LeaderEpoch int32 = 5
    b"\x03" b"c1",        # Host compact string
    b"\x00\x00\x23\x85",  # Port int32 = 9093
    b"\x00",              # tagged fields: none
])  # 16 bytes


def _roundtrip(cls: type[Struct], golden: bytes, version: int) -> Struct:
    decoded = cls.decode(golden, version)
    assert decoded.encode(version).hex(" ") == golden.hex(" ")
    return decoded


# ---------------------------------------------------------------------------------------------
# Unknown tagged fields survive decode -> encode byte for byte, at every nesting level
# ---------------------------------------------------------------------------------------------

def test_unknown_tagged_fields_survive_at_every_level() -> None:
    golden = b"".join([
        b"\x02",              # Topics compact array, 1 element
        b"\x13" + META,       #   TopicName compact string
        b"\x02",              #   Partitions compact array, 1 element
        b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
        b"\x01",              #     tagged fields: 1 entry
        b"\x05",              #       tag 5 (unknown)
        b"\x02",              #       size 2
        b"\xab\xcd",          #       raw value
        b"\x01",              #   tagged fields: 1 entry
        b"\x00",              #     tag 0 (unknown: DescribeQuorumRequest defines no tags)
        b"\x01",              #     size 1
        b"\xee",              #     raw value
        b"\x02",              # tagged fields: 2 entries
        b"\x03",              #   tag 3
        b"\x00",              #   size 0
        b"\x8c\x02",          #   tag 268 (two-byte unsigned varint)
        b"\x03",              #   size 3
        b"\x01\x02\x03",      #   raw value
    ])
    request = _roundtrip(messages.DescribeQuorumRequest, golden, 2)
    assert request.unknown_tagged_fields == [(3, b""), (268, b"\x01\x02\x03")]
    topic = request.topics[0]
    assert topic.topic_name == "__cluster_metadata"
    assert topic.unknown_tagged_fields == [(0, b"\xee")]
    assert topic.partitions[0].unknown_tagged_fields == [(5, b"\xab\xcd")]


def test_unknown_tagged_field_next_to_a_known_one_with_a_two_byte_size() -> None:
    raw = bytes([0x5A]) * 200
    golden = b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x02",              # tagged fields: 2 entries
        b"\x00",              #   tag 0 = CurrentLeader (known)
        b"\x10",              #   size 16
        CURRENT_LEADER_BYTES,  #  CurrentLeader struct
        b"\x01",              #   tag 1 (unknown)
        b"\xc8\x01",          #   size 200 (two-byte unsigned varint)
        raw,                  #   raw value
    ])
    response = _roundtrip(URV, golden, 0)
    assert response.current_leader == CURRENT_LEADER
    assert response.unknown_tagged_fields == [(1, raw)]


def test_unknown_tags_after_known_api_versions_features() -> None:
    golden = b"".join([
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x01",              # ApiKeys compact array, empty
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x03",              # tagged fields: 3 entries
        b"\x00",              #   tag 0 = SupportedFeatures
        b"\x14",              #   size 20
        b"\x02",              #     compact array, 1 element
        b"\x0e" b"kraft.version",  # Name compact string
        b"\x00\x00",          #     MinVersion int16 = 0
        b"\x00\x01",          #     MaxVersion int16 = 1
        b"\x00",              #     tagged fields: none
        b"\x04",              #   tag 4 (unknown)
        b"\x01",              #   size 1
        b"\xff",              #   raw value
        b"\x09",              #   tag 9 (unknown)
        b"\x00",              #   size 0
    ])
    response = _roundtrip(messages.ApiVersionsResponse, golden, 4)
    assert response.supported_features == [messages.ApiVersionsResponse.SupportedFeatureKey(
        name="kraft.version", min_version=0, max_version=1)]
    assert response.unknown_tagged_fields == [(4, b"\xff"), (9, b"")]


# ---------------------------------------------------------------------------------------------
# Tagged fields are written in ascending tag order, known and unknown interleaved
# ---------------------------------------------------------------------------------------------

def test_tagged_fields_written_in_ascending_order() -> None:
    response = URV(current_leader=CURRENT_LEADER, unknown_tagged_fields=[(1, b"\x01"), (7, b"\x07")])
    golden = b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x03",              # tagged fields: 3 entries
        b"\x00",              #   tag 0 = CurrentLeader
        b"\x10",              #   size 16
        CURRENT_LEADER_BYTES,  #  CurrentLeader struct
        b"\x01",              #   tag 1 (unknown)
        b"\x01",              #   size 1
        b"\x01",              #   raw value
        b"\x07",              #   tag 7 (unknown)
        b"\x01",              #   size 1
        b"\x07",              #   raw value
    ])
    assert response.encode(0).hex(" ") == golden.hex(" ")


def test_known_tags_then_unknown_tags_in_ascending_order() -> None:
    """FetchRequest v15 knows tags 0 (ClusterId) and 1 (ReplicaState); raw tags 3 and 5 follow them."""
    request = messages.FetchRequest(cluster_id="", replica_state=messages.FetchRequest.ReplicaState(
        replica_id=1, replica_epoch=2), unknown_tagged_fields=[(3, b"\x03"), (5, b"\x05")])
    golden = b"".join([
        b"\x00\x00\x00\x00",  # MaxWaitMs int32 = 0
        b"\x00\x00\x00\x00",  # MinBytes int32 = 0
        b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
        b"\x00",              # IsolationLevel int8 = 0
        b"\x00\x00\x00\x00",  # SessionId int32 = 0
        b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
        b"\x01",              # Topics compact array, empty
        b"\x01",              # ForgottenTopicsData compact array, empty
        b"\x01",              # RackId compact string = ""
        b"\x04",              # tagged fields: 4 entries
        b"\x00",              #   tag 0 = ClusterId (default null, so "" is written)
        b"\x01",              #   size 1
        b"\x01",              #   compact nullable string = ""
        b"\x01",              #   tag 1 = ReplicaState
        b"\x0d",              #   size 13
        b"\x00\x00\x00\x01",  #     ReplicaId int32 = 1
        b"\x00\x00\x00\x00\x00\x00\x00\x02",  # ReplicaEpoch int64 = 2
        b"\x00",              #     tagged fields: none
        b"\x03\x01\x03",      #   tag 3 (raw), size 1, value 0x03
        b"\x05\x01\x05",      #   tag 5 (raw), size 1, value 0x05
    ])
    assert request.encode(15).hex(" ") == golden.hex(" ")
    assert messages.FetchRequest.decode(golden, 15) == request


def test_raw_tag_equal_to_an_unwritten_known_tag_is_refused() -> None:
    """Tag 0 is FetchRequest's ClusterId; a raw tag 0 is an error even while ClusterId is null."""
    with pytest.raises(EncodeError):
        messages.FetchRequest(unknown_tagged_fields=[(0, b"\x00")]).encode(15)


def test_duplicate_unknown_tags_are_refused() -> None:
    with pytest.raises(EncodeError):
        URV(unknown_tagged_fields=[(3, b"a"), (3, b"b")]).encode(0)


def test_raw_tag_colliding_with_a_written_known_tag_is_refused() -> None:
    with pytest.raises(EncodeError):
        URV(current_leader=CURRENT_LEADER, unknown_tagged_fields=[(0, b"\x00")]).encode(0)


def test_tagged_fields_on_a_non_flexible_version_are_refused() -> None:
    with pytest.raises(EncodeError):
        messages.BeginQuorumEpochRequest(unknown_tagged_fields=[(0, b"")]).encode(0)
    nested = messages.BeginQuorumEpochResponse(topics=[messages.BeginQuorumEpochResponse.TopicData(
        topic_name="t", unknown_tagged_fields=[(1, b"x")])])
    with pytest.raises(EncodeError):
        nested.encode(0)
    with pytest.raises(EncodeError):
        messages.SaslHandshakeRequest(mechanism="PLAIN", unknown_tagged_fields=[(0, b"")]).encode(1)
    with pytest.raises(EncodeError):
        messages.RequestHeader(request_api_key=17, unknown_tagged_fields=[(0, b"")]).encode(1)


# ---------------------------------------------------------------------------------------------
# Null versus empty
# ---------------------------------------------------------------------------------------------

NULL_VS_EMPTY = [
    pytest.param(messages.MetadataRequest, 12, messages.MetadataRequest(topics=None), b"".join([
        b"\x00",              # Topics compact nullable array = null
        b"\x01",              # AllowAutoTopicCreation bool = true
        b"\x00",              # IncludeTopicAuthorizedOperations bool = false
        b"\x00",              # tagged fields: none
    ]), id="compact-array-null"),
    pytest.param(messages.MetadataRequest, 12, messages.MetadataRequest(topics=[]), b"".join([
        b"\x01",              # Topics compact nullable array, empty
        b"\x01",              # AllowAutoTopicCreation bool = true
        b"\x00",              # IncludeTopicAuthorizedOperations bool = false
        b"\x00",              # tagged fields: none
    ]), id="compact-array-empty"),
    pytest.param(messages.MetadataRequest, 4, messages.MetadataRequest(topics=None), b"".join([
        b"\xff\xff\xff\xff",  # Topics classic nullable array = null (-1)
        b"\x01",              # AllowAutoTopicCreation bool = true
    ]), id="classic-array-null"),
    pytest.param(messages.MetadataRequest, 4, messages.MetadataRequest(topics=[]), b"".join([
        b"\x00\x00\x00\x00",  # Topics classic nullable array, empty
        b"\x01",              # AllowAutoTopicCreation bool = true
    ]), id="classic-array-empty"),
    pytest.param(messages.AddRaftVoterResponse, 0, messages.AddRaftVoterResponse(error_message=None),
                 b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x00",              # ErrorMessage compact nullable string = null
        b"\x00",              # tagged fields: none
    ]), id="compact-string-null"),
    pytest.param(messages.AddRaftVoterResponse, 0, messages.AddRaftVoterResponse(error_message=""), b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x01",              # ErrorMessage compact nullable string = ""
        b"\x00",              # tagged fields: none
    ]), id="compact-string-empty"),
    pytest.param(messages.SaslAuthenticateResponse, 1, messages.SaslAuthenticateResponse(error_message=""),
                 b"".join([
                     b"\x00\x00",          # ErrorCode int16 = 0
                     b"\x00\x00",          # ErrorMessage classic nullable string = ""
                     b"\x00\x00\x00\x00",  # AuthBytes classic bytes, empty
                     b"\x00\x00\x00\x00\x00\x00\x00\x00",  # SessionLifetimeMs int64 = 0
                 ]), id="classic-string-empty"),
    pytest.param(messages.EnvelopeRequest, 0, messages.EnvelopeRequest(request_principal=None), b"".join([
        b"\x01",              # RequestData compact bytes, empty
        b"\x00",              # RequestPrincipal compact nullable bytes = null
        b"\x01",              # ClientHostAddress compact bytes, empty
        b"\x00",              # tagged fields: none
    ]), id="compact-bytes-null"),
    pytest.param(messages.EnvelopeRequest, 0, messages.EnvelopeRequest(request_principal=b""), b"".join([
        b"\x01",              # RequestData compact bytes, empty
        b"\x01",              # RequestPrincipal compact nullable bytes, empty
        b"\x01",              # ClientHostAddress compact bytes, empty
        b"\x00",              # tagged fields: none
    ]), id="compact-bytes-empty"),
]


@pytest.mark.parametrize(("cls", "version", "obj", "golden"), NULL_VS_EMPTY)
def test_null_versus_empty(cls: type[Struct], version: int, obj: Struct, golden: bytes) -> None:
    assert obj.encode(version).hex(" ") == golden.hex(" ")
    assert cls.decode(golden, version) == obj


def test_null_and_empty_decode_to_different_values() -> None:
    assert messages.MetadataRequest.decode(b"\x00\x01\x00\x00", 12).topics is None
    assert messages.MetadataRequest.decode(b"\x01\x01\x00\x00", 12).topics == []
    assert messages.AddRaftVoterResponse.decode(b"\x00\x00\x00\x00\x00\x00\x00\x00", 0).error_message is None
    assert messages.AddRaftVoterResponse.decode(b"\x00\x00\x00\x00\x00\x00\x01\x00", 0).error_message == ""


@pytest.mark.parametrize(("obj", "version"), [
    pytest.param(messages.MetadataRequest(topics=[messages.MetadataRequest.MetadataRequestTopic(name=None)]),
                 9, id="MetadataRequest-v9-topic-name"),
    pytest.param(messages.MetadataResponse(topics=[messages.MetadataResponse.MetadataResponseTopic(name=None)]),
                 11, id="MetadataResponse-v11-topic-name"),
    pytest.param(messages.DescribeQuorumResponse(topics=[DQ.TopicData(topic_name=None)]), 2,
                 id="DescribeQuorumResponse-topic-name"),
    pytest.param(messages.EnvelopeRequest(request_data=None), 0, id="EnvelopeRequest-request-data"),
    pytest.param(messages.SaslAuthenticateRequest(auth_bytes=None), 1, id="SaslAuthenticateRequest-classic"),
])
def test_null_in_a_non_nullable_field_is_refused(obj: Struct, version: int) -> None:
    with pytest.raises(EncodeError):
        obj.encode(version)


# ---------------------------------------------------------------------------------------------
# UTF-8: lengths count bytes, not characters
# ---------------------------------------------------------------------------------------------

NON_ASCII = "kafka-\u00fc\u20ac\U0001f642"  # "kafka-" + u-umlaut (2 bytes) + euro (3) + emoji (4)
NON_ASCII_BYTES = b"kafka-" b"\xc3\xbc" b"\xe2\x82\xac" b"\xf0\x9f\x99\x82"  # 15 bytes


def test_non_ascii_compact_string() -> None:
    golden = b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x00",              # ErrorMessage compact nullable string = null
        b"\x10" + NON_ASCII_BYTES,  # ClusterId compact string, 15 UTF-8 bytes (9 characters)
        b"\xff\xff\xff\xff",  # ControllerId int32 = -1
        b"\x01",              # Brokers compact array, empty
        b"\x80\x00\x00\x00",  # ClusterAuthorizedOperations int32 = -2147483648
        b"\x00",              # tagged fields: none
    ])
    obj = messages.DescribeClusterResponse(cluster_id=NON_ASCII)
    assert obj.encode(0).hex(" ") == golden.hex(" ")
    assert messages.DescribeClusterResponse.decode(golden, 0) == obj


def test_non_ascii_classic_string() -> None:
    golden = b"".join([
        b"\x00\x0f" + NON_ASCII_BYTES,  # ClusterId classic nullable string, 15 UTF-8 bytes
        b"\x00\x00\x00\x00",  # Topics classic array, empty
    ])
    obj = messages.BeginQuorumEpochRequest(cluster_id=NON_ASCII)
    assert obj.encode(0).hex(" ") == golden.hex(" ")
    assert messages.BeginQuorumEpochRequest.decode(golden, 0) == obj


def test_non_ascii_client_id_in_request_header_v2() -> None:
    golden = b"".join([
        b"\x00\x12",          # RequestApiKey int16 = 18
        b"\x00\x03",          # RequestApiVersion int16 = 3
        b"\x00\x00\x00\x01",  # CorrelationId int32 = 1
        b"\x00\x0f" + NON_ASCII_BYTES,  # ClientId classic string, 15 bytes
        b"\x00",              # tagged fields: none
    ])
    header = messages.RequestHeader(request_api_key=18, request_api_version=3, correlation_id=1,
                                    client_id=NON_ASCII)
    assert header.encode(2).hex(" ") == golden.hex(" ")
    assert messages.RequestHeader.decode(golden, 2) == header


# ---------------------------------------------------------------------------------------------
# Uuids: 16 bytes, most significant half first; text form is URL-safe base64 without padding
# ---------------------------------------------------------------------------------------------

def test_uuid_field() -> None:
    one = Uuid.from_string("AAAAAAAAAAAAAAAAAAAAAQ")
    high = Uuid.from_ints(-1, 2)
    golden_one = b"".join([
        b"\x00",              # ClusterId compact nullable string = null
        b"\x00\x00\x00\x01",  # VoterId int32 = 1
        b"\x00\x00\x00\x00\x00\x00\x00\x00",  # VoterDirectoryId uuid, most significant 64 bits = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x01",  #                      least significant 64 bits = 1
        b"\x00",              # tagged fields: none
    ])
    golden_high = b"".join([
        b"\x00",              # ClusterId compact nullable string = null
        b"\x00\x00\x00\x01",  # VoterId int32 = 1
        b"\xff\xff\xff\xff\xff\xff\xff\xff",  # VoterDirectoryId uuid, most significant 64 bits = -1
        b"\x00\x00\x00\x00\x00\x00\x00\x02",  #                      least significant 64 bits = 2
        b"\x00",              # tagged fields: none
    ])
    for uuid, golden in ((one, golden_one), (high, golden_high)):
        obj = messages.RemoveRaftVoterRequest(cluster_id=None, voter_id=1, voter_directory_id=uuid)
        assert obj.encode(0).hex(" ") == golden.hex(" ")
        assert messages.RemoveRaftVoterRequest.decode(golden, 0).voter_directory_id == uuid
    assert str(high) == "__________8AAAAAAAAAAg"
    assert str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert str(Uuid(UUID_A_BYTES)) == "bSofDkNcS4qeASNFZ4mrzQ"


# ---------------------------------------------------------------------------------------------
# Integer ranges: uint16 above 32767, int64 extremes, out-of-range values refused
# ---------------------------------------------------------------------------------------------

def test_uint16_ports_above_32767() -> None:
    listener = messages.AddRaftVoterRequest.Listener
    golden = b"".join([
        b"\x00",              # ClusterId compact nullable string = null
        b"\x00\x00\x00\x00",  # TimeoutMs int32 = 0
        b"\x00\x00\x00\x00",  # VoterId int32 = 0
        b"\x00" * 16,         # VoterDirectoryId uuid = zero
        b"\x04",              # Listeners compact array, 3 elements
        b"\x02" b"a",         #   [0] Name compact string
        b"\x02" b"h",         #   [0] Host compact string
        b"\x80\x00",          #   [0] Port uint16 = 32768
        b"\x00",              #   [0] tagged fields: none
        b"\x02" b"b",         #   [1] Name compact string
        b"\x02" b"h",         #   [1] Host compact string
        b"\xff\xff",          #   [1] Port uint16 = 65535
        b"\x00",              #   [1] tagged fields: none
        b"\x02" b"c",         #   [2] Name compact string
        b"\x02" b"h",         #   [2] Host compact string
        b"\x00\x00",          #   [2] Port uint16 = 0
        b"\x00",              #   [2] tagged fields: none
        b"\x00",              # tagged fields: none
    ])
    obj = messages.AddRaftVoterRequest(cluster_id=None, listeners=[listener(name="a", host="h", port=32768),
                                                  listener(name="b", host="h", port=65535),
                                                  listener(name="c", host="h", port=0)])
    assert obj.encode(0).hex(" ") == golden.hex(" ")
    decoded = messages.AddRaftVoterRequest.decode(golden, 0)
    assert [item.port for item in decoded.listeners] == [32768, 65535, 0]
    assert decoded == obj


@pytest.mark.parametrize("port", [65536, -1])
def test_uint16_out_of_range_is_refused(port: int) -> None:
    obj = messages.AddRaftVoterRequest(listeners=[messages.AddRaftVoterRequest.Listener(
        name="a", host="h", port=port)])
    with pytest.raises(EncodeError):
        obj.encode(0)


def test_int64_extremes() -> None:
    golden = b"".join([
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x02",              # Topics compact array, 1 element
        b"\x13" + META,       #   TopicName compact string
        b"\x02",              #   Partitions compact array, 1 element
        b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
        b"\x00\x00",          #     ErrorCode int16 = 0
        b"\x7f\xff\xff\xff",  #     LeaderId int32 = 2147483647
        b"\x80\x00\x00\x00",  #     LeaderEpoch int32 = -2147483648
        b"\x7f\xff\xff\xff\xff\xff\xff\xff",  # HighWatermark int64 = 2^63-1
        b"\x02",              #     CurrentVoters compact array, 1 element
        b"\x00\x00\x00\x01",  #       ReplicaId int32 = 1
        b"\x80\x00\x00\x00\x00\x00\x00\x00",  # LogEndOffset int64 = -2^63
        b"\x00",              #       tagged fields: none
        b"\x01",              #     Observers compact array, empty
        b"\x00",              #     tagged fields: none
        b"\x00",              #   tagged fields: none
        b"\x00",              # tagged fields: none
    ])
    obj = DQ(topics=[DQ.TopicData(topic_name="__cluster_metadata", partitions=[DQ.PartitionData(
        leader_id=2**31 - 1, leader_epoch=-(2**31), high_watermark=2**63 - 1,
        current_voters=[DQ.ReplicaState(replica_id=1, log_end_offset=-(2**63))])])])
    assert obj.encode(0).hex(" ") == golden.hex(" ")
    assert DQ.decode(golden, 0) == obj


def test_fetch_high_watermark_tag_written_unless_int64_max() -> None:
    partition = messages.FetchRequest.FetchPartition
    golden = b"".join([
        b"\x00\x00\x00\x00",  # MaxWaitMs int32 = 0
        b"\x00\x00\x00\x00",  # MinBytes int32 = 0
        b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
        b"\x00",              # IsolationLevel int8 = 0
        b"\x00\x00\x00\x00",  # SessionId int32 = 0
        b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
        b"\x02",              # Topics compact array, 1 element
        UUID_A_BYTES,         #   TopicId uuid
        b"\x03",              #   Partitions compact array, 2 elements
        b"\x00\x00\x00\x00",  #     [0] Partition int32 = 0
        b"\xff\xff\xff\xff",  #     [0] CurrentLeaderEpoch int32 = -1
        b"\x00\x00\x00\x00\x00\x00\x00\x00",  # [0] FetchOffset int64 = 0
        b"\xff\xff\xff\xff",  #     [0] LastFetchedEpoch int32 = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff",  # [0] LogStartOffset int64 = -1
        b"\x00\x00\x00\x00",  #     [0] PartitionMaxBytes int32 = 0
        b"\x01",              #     [0] tagged fields: 1 entry
        b"\x01",              #       tag 1 = HighWatermark
        b"\x08",              #       size 8
        b"\x80\x00\x00\x00\x00\x00\x00\x00",  # int64 = -2^63
        b"\x00\x00\x00\x01",  #     [1] Partition int32 = 1
        b"\xff\xff\xff\xff",  #     [1] CurrentLeaderEpoch int32 = -1
        b"\x00\x00\x00\x00\x00\x00\x00\x00",  # [1] FetchOffset int64 = 0
        b"\xff\xff\xff\xff",  #     [1] LastFetchedEpoch int32 = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff",  # [1] LogStartOffset int64 = -1
        b"\x00\x00\x00\x00",  #     [1] PartitionMaxBytes int32 = 0
        b"\x00",              #     [1] tagged fields: none (HighWatermark = 2^63-1, the default)
        b"\x00",              #   tagged fields: none
        b"\x01",              # ForgottenTopicsData compact array, empty
        b"\x01",              # RackId compact string = ""
        b"\x00",              # tagged fields: none
    ])
    obj = messages.FetchRequest(topics=[messages.FetchRequest.FetchTopic(topic_id=UUID_A, partitions=[
        partition(partition=0, high_watermark=-(2**63)), partition(partition=1, high_watermark=2**63 - 1)])])
    assert obj.encode(18).hex(" ") == golden.hex(" ")
    assert messages.FetchRequest.decode(golden, 18) == obj


@pytest.mark.parametrize(("obj", "version"), [
    pytest.param(DQ(topics=[DQ.TopicData(partitions=[DQ.PartitionData(high_watermark=2**63)])]), 0,
                 id="int64-too-big"),
    pytest.param(DQ(topics=[DQ.TopicData(partitions=[DQ.PartitionData(high_watermark=-(2**63) - 1)])]), 0,
                 id="int64-too-small"),
    pytest.param(DQ(topics=[DQ.TopicData(partitions=[DQ.PartitionData(leader_epoch=2**31)])]), 0,
                 id="int32-too-big"),
    pytest.param(DQ(error_code=2**15), 0, id="int16-too-big"),
])
def test_out_of_range_integers_are_refused(obj: Struct, version: int) -> None:
    with pytest.raises(EncodeError):
        obj.encode(version)


# ---------------------------------------------------------------------------------------------
# A non-default value in a field the version lacks: EncodeError unless the field is ignorable
# ---------------------------------------------------------------------------------------------

UFQ = messages.UpdateFeaturesRequest
FQ = messages.FetchRequest

NOT_IGNORABLE = [
    pytest.param(DQ(topics=[DQ.TopicData(partitions=[DQ.PartitionData(current_voters=[
        DQ.ReplicaState(replica_directory_id=UUID_A)])])]), 1,
        id="DescribeQuorumResponse-v1-ReplicaDirectoryId"),
    pytest.param(DQ(nodes=[DQ.Node(node_id=1)]), 1, id="DescribeQuorumResponse-v1-Nodes"),
    pytest.param(UFQ(feature_updates=[UFQ.FeatureUpdateKey(feature="x", allow_downgrade=True)]), 1,
                 id="UpdateFeaturesRequest-v1-AllowDowngrade"),
    pytest.param(UFQ(feature_updates=[UFQ.FeatureUpdateKey(feature="x", upgrade_type=2)]), 0,
                 id="UpdateFeaturesRequest-v0-UpgradeType"),
    pytest.param(UFQ(validate_only=True), 0, id="UpdateFeaturesRequest-v0-ValidateOnly"),
    pytest.param(messages.AddRaftVoterRequest(ack_when_committed=False), 0,
                 id="AddRaftVoterRequest-v0-AckWhenCommitted"),
    pytest.param(messages.MetadataRequest(include_cluster_authorized_operations=True), 11,
                 id="MetadataRequest-v11-IncludeClusterAuthorizedOperations"),
    pytest.param(messages.MetadataResponse(cluster_authorized_operations=0), 11,
                 id="MetadataResponse-v11-ClusterAuthorizedOperations"),
    pytest.param(FQ(replica_id=1), 15, id="FetchRequest-v15-ReplicaId"),
    pytest.param(FQ(replica_state=FQ.ReplicaState(replica_id=1)), 14, id="FetchRequest-v14-ReplicaState"),
    pytest.param(messages.VoteRequest(topics=[messages.VoteRequest.TopicData(partitions=[
        messages.VoteRequest.PartitionData(pre_vote=True)])]), 1, id="VoteRequest-v1-PreVote"),
    pytest.param(messages.DescribeClusterRequest(endpoint_type=2), 0,
                 id="DescribeClusterRequest-v0-EndpointType"),
    pytest.param(messages.DescribeClusterRequest(include_fenced_brokers=True), 1,
                 id="DescribeClusterRequest-v1-IncludeFencedBrokers"),
    pytest.param(messages.DescribeClusterResponse(brokers=[
        messages.DescribeClusterResponse.DescribeClusterBroker(is_fenced=True)]), 1,
        id="DescribeClusterResponse-v1-IsFenced"),
    pytest.param(messages.FetchResponse(node_endpoints=[messages.FetchResponse.NodeEndpoint(node_id=1)]), 15,
                 id="FetchResponse-v15-NodeEndpoints"),
    pytest.param(messages.VoteResponse(node_endpoints=[messages.VoteResponse.NodeEndpoint(node_id=1)]), 0,
                 id="VoteResponse-v0-NodeEndpoints"),
    pytest.param(messages.BeginQuorumEpochResponse(node_endpoints=[
        messages.BeginQuorumEpochResponse.NodeEndpoint(node_id=1)]), 0,
        id="BeginQuorumEpochResponse-v0-NodeEndpoints"),
    pytest.param(messages.FetchSnapshotResponse(node_endpoints=[
        messages.FetchSnapshotResponse.NodeEndpoint(node_id=1)]), 0,
        id="FetchSnapshotResponse-v0-NodeEndpoints"),
]


@pytest.mark.parametrize(("obj", "version"), NOT_IGNORABLE)
def test_non_ignorable_absent_field_is_refused(obj: Struct, version: int) -> None:
    with pytest.raises(EncodeError):
        obj.encode(version)


IGNORABLE = [
    pytest.param(DQ(error_message="boom"), 1, b"".join([
        b"\x00\x00",          # ErrorCode int16 = 0 (ErrorMessage exists only from v2: dropped)
        b"\x01",              # Topics compact array, empty
        b"\x00",              # tagged fields: none
    ]), id="DescribeQuorumResponse-v1-ErrorMessage"),
    pytest.param(DQ(error_message=None, topics=[DQ.TopicData(topic_name="t", partitions=[DQ.PartitionData(
        error_message=None, committed_voters=[DQ.ReplicaState(replica_id=1)])])]), 2, b"".join([
            b"\x00\x00",          # ErrorCode int16 = 0
            b"\x00",              # ErrorMessage compact nullable string = null
            b"\x02",              # Topics compact array, 1 element
            b"\x02" b"t",         #   TopicName compact string
            b"\x02",              #   Partitions compact array, 1 element
            b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
            b"\x00\x00",          #     ErrorCode int16 = 0
            b"\x00",              #     ErrorMessage compact nullable string = null
            b"\x00\x00\x00\x00",  #     LeaderId int32 = 0
            b"\x00\x00\x00\x00",  #     LeaderEpoch int32 = 0
            b"\x00\x00\x00\x00\x00\x00\x00\x00",  # HighWatermark int64 = 0
            b"\x01",              #     CurrentVoters compact array, empty
            b"\x01",              #     Observers compact array, empty (CommittedVoters is v3+: dropped)
            b"\x00",              #     tagged fields: none
            b"\x00",              #   tagged fields: none
            b"\x01",              # Nodes compact array, empty
            b"\x00",              # tagged fields: none
        ]), id="DescribeQuorumResponse-v2-CommittedVoters"),
    pytest.param(DQ(topics=[DQ.TopicData(topic_name="t", partitions=[DQ.PartitionData(current_voters=[
        DQ.ReplicaState(replica_id=2, log_end_offset=3, last_fetch_timestamp=4,
                        last_caught_up_timestamp=5)])])]),
        0, b"".join([
            b"\x00\x00",          # ErrorCode int16 = 0
            b"\x02",              # Topics compact array, 1 element
            b"\x02" b"t",         #   TopicName compact string
            b"\x02",              #   Partitions compact array, 1 element
            b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
            b"\x00\x00",          #     ErrorCode int16 = 0
            b"\x00\x00\x00\x00",  #     LeaderId int32 = 0
            b"\x00\x00\x00\x00",  #     LeaderEpoch int32 = 0
            b"\x00\x00\x00\x00\x00\x00\x00\x00",  # HighWatermark int64 = 0
            b"\x02",              #     CurrentVoters compact array, 1 element
            b"\x00\x00\x00\x02",  #       ReplicaId int32 = 2
            b"\x00\x00\x00\x00\x00\x00\x00\x03",  # LogEndOffset int64 = 3 (timestamps are v1+: dropped)
            b"\x00",              #       tagged fields: none
            b"\x01",              #     Observers compact array, empty
            b"\x00",              #     tagged fields: none
            b"\x00",              #   tagged fields: none
            b"\x00",              # tagged fields: none
        ]), id="DescribeQuorumResponse-v0-timestamps"),
    pytest.param(messages.ApiVersionsRequest(client_software_name="x", client_software_version="y"), 2, b"",
                 id="ApiVersionsRequest-v2-ClientSoftware"),
    pytest.param(messages.ApiVersionsResponse(throttle_time_ms=100, zk_migration_ready=True,
                                              supported_features=[
        messages.ApiVersionsResponse.SupportedFeatureKey(name="x", max_version=1)]), 0, b"".join([
            b"\x00\x00",          # ErrorCode int16 = 0
            b"\x00\x00\x00\x00",  # ApiKeys classic array, empty (no throttle, no features in v0)
        ]), id="ApiVersionsResponse-v0-ThrottleTimeMs-features"),
    pytest.param(messages.UpdateFeaturesResponse(error_message=None, results=[
        messages.UpdateFeaturesResponse.UpdatableFeatureResult(feature="x")]), 2, b"".join([
            b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
            b"\x00\x00",          # ErrorCode int16 = 0
            b"\x00",              # ErrorMessage compact nullable string = null (Results are v0-1: dropped)
            b"\x00",              # tagged fields: none
        ]), id="UpdateFeaturesResponse-v2-Results"),
    pytest.param(messages.BeginQuorumEpochRequest(
        cluster_id=None, voter_id=3,
        leader_endpoints=[messages.BeginQuorumEpochRequest.LeaderEndpoint(name="C", host="h", port=1)],
        topics=[messages.BeginQuorumEpochRequest.TopicData(topic_name="t", partitions=[
            messages.BeginQuorumEpochRequest.PartitionData(voter_directory_id=UUID_A, leader_id=1,
                                                           leader_epoch=2)])]), 0, b"".join([
            b"\xff\xff",          # ClusterId classic nullable string = null (VoterId: dropped)
            b"\x00\x00\x00\x01",  # Topics classic array, 1 element
            b"\x00\x01" b"t",     #   TopicName classic string
            b"\x00\x00\x00\x01",  #   Partitions classic array, 1 element
            b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0 (VoterDirectoryId: dropped)
            b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
            b"\x00\x00\x00\x02",  #     LeaderEpoch int32 = 2 (LeaderEndpoints: dropped)
        ]), id="BeginQuorumEpochRequest-v0-v1-fields"),
    pytest.param(messages.EndQuorumEpochRequest(cluster_id=None, topics=[
        messages.EndQuorumEpochRequest.TopicData(topic_name="t", partitions=[
            messages.EndQuorumEpochRequest.PartitionData(preferred_successors=[2])])]),
        1, b"".join([
            b"\x00",              # ClusterId compact nullable string = null
            b"\x02",              # Topics compact array, 1 element
            b"\x02" b"t",         #   TopicName compact string
            b"\x02",              #   Partitions compact array, 1 element
            b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
            b"\x00\x00\x00\x00",  #     LeaderId int32 = 0
            b"\x00\x00\x00\x00",  #     LeaderEpoch int32 = 0 (PreferredSuccessors is v0 only: dropped)
            b"\x01",              #     PreferredCandidates compact array, empty
            b"\x00",              #     tagged fields: none
            b"\x00",              #   tagged fields: none
            b"\x01",              # LeaderEndpoints compact array, empty
            b"\x00",              # tagged fields: none
        ]), id="EndQuorumEpochRequest-v1-PreferredSuccessors"),
    pytest.param(messages.VoteRequest(cluster_id=None, voter_id=3, topics=[messages.VoteRequest.TopicData(
        topic_name="t", partitions=[messages.VoteRequest.PartitionData(
            replica_directory_id=UUID_A, voter_directory_id=UUID_B)])]), 0, b"".join([
            b"\x00",              # ClusterId compact nullable string = null (VoterId: dropped)
            b"\x02",              # Topics compact array, 1 element
            b"\x02" b"t",         #   TopicName compact string
            b"\x02",              #   Partitions compact array, 1 element
            b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
            b"\x00\x00\x00\x00",  #     ReplicaEpoch int32 = 0
            b"\x00\x00\x00\x00",  #     ReplicaId int32 = 0 (both directory ids: dropped)
            b"\x00\x00\x00\x00",  #     LastOffsetEpoch int32 = 0
            b"\x00\x00\x00\x00\x00\x00\x00\x00",  # LastOffset int64 = 0
            b"\x00",              #     tagged fields: none
            b"\x00",              #   tagged fields: none
            b"\x00",              # tagged fields: none
        ]), id="VoteRequest-v0-directory-ids"),
    pytest.param(FQ(topics=[FQ.FetchTopic(topic="t", topic_id=UUID_A, partitions=[FQ.FetchPartition(
        replica_directory_id=UUID_A, high_watermark=5)])]), 16, b"".join([
            b"\x00\x00\x00\x00",  # MaxWaitMs int32 = 0
            b"\x00\x00\x00\x00",  # MinBytes int32 = 0
            b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
            b"\x00",              # IsolationLevel int8 = 0
            b"\x00\x00\x00\x00",  # SessionId int32 = 0
            b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
            b"\x02",              # Topics compact array, 1 element
            UUID_A_BYTES,         #   TopicId uuid (Topic name is v0-12: dropped)
            b"\x02",              #   Partitions compact array, 1 element
            b"\x00\x00\x00\x00",  #     Partition int32 = 0
            b"\xff\xff\xff\xff",  #     CurrentLeaderEpoch int32 = -1
            b"\x00\x00\x00\x00\x00\x00\x00\x00",  # FetchOffset int64 = 0
            b"\xff\xff\xff\xff",  #     LastFetchedEpoch int32 = -1
            b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LogStartOffset int64 = -1
            b"\x00\x00\x00\x00",  #     PartitionMaxBytes int32 = 0
            b"\x00",              #     tagged fields: none (ReplicaDirectoryId v17+, HighWatermark v18+)
            b"\x00",              #   tagged fields: none
            b"\x01",              # ForgottenTopicsData compact array, empty
            b"\x01",              # RackId compact string = ""
            b"\x00",              # tagged fields: none
        ]), id="FetchRequest-v16-later-tags"),
    pytest.param(messages.MetadataResponse(error_code=31), 12, b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x01",              # Brokers compact array, empty
        b"\x00",              # ClusterId compact nullable string = null
        b"\xff\xff\xff\xff",  # ControllerId int32 = -1
        b"\x01",              # Topics compact array, empty (top-level ErrorCode is v13+: dropped)
        b"\x00",              # tagged fields: none
    ]), id="MetadataResponse-v12-ErrorCode"),
    pytest.param(messages.SaslAuthenticateResponse(error_message=None, session_lifetime_ms=1000), 0,
                 b"".join([
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\xff\xff",          # ErrorMessage classic nullable string = null
        b"\x00\x00\x00\x00",  # AuthBytes classic bytes, empty (SessionLifetimeMs is v1+: dropped)
    ]), id="SaslAuthenticateResponse-v0-SessionLifetimeMs"),
]


@pytest.mark.parametrize(("obj", "version", "golden"), IGNORABLE)
def test_ignorable_absent_field_is_dropped(obj: Struct, version: int, golden: bytes) -> None:
    assert obj.encode(version).hex(" ") == golden.hex(" ")


# ---------------------------------------------------------------------------------------------
# Reader rules: no tag-order check, a known tag outside its versions is an error, any non-zero
# byte is a true bool
# ---------------------------------------------------------------------------------------------

def test_tagged_fields_read_in_any_order() -> None:
    golden = b"".join([
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x01",              # ApiKeys compact array, empty
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x02",              # tagged fields: 2 entries, descending on purpose
        b"\x03",              #   tag 3 = ZkMigrationReady
        b"\x01",              #   size 1
        b"\x01",              #   bool = true
        b"\x01",              #   tag 1 = FinalizedFeaturesEpoch
        b"\x08",              #   size 8
        b"\x00\x00\x00\x00\x00\x00\x00\x07",  # int64 = 7
    ])
    decoded = messages.ApiVersionsResponse.decode(golden, 3)
    assert decoded == messages.ApiVersionsResponse(zk_migration_ready=True, finalized_features_epoch=7)
    written_back = b"".join([
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x01",              # ApiKeys compact array, empty
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x02",              # tagged fields: 2 entries, now ascending
        b"\x01",              #   tag 1 = FinalizedFeaturesEpoch
        b"\x08",              #   size 8
        b"\x00\x00\x00\x00\x00\x00\x00\x07",  # int64 = 7
        b"\x03",              #   tag 3 = ZkMigrationReady
        b"\x01",              #   size 1
        b"\x01",              #   bool = true
    ])
    assert decoded.encode(3).hex(" ") == written_back.hex(" ")


def _fetch_request_with_partition_tag_1() -> bytes:
    return b"".join([
        b"\x00\x00\x00\x00",  # MaxWaitMs int32 = 0
        b"\x00\x00\x00\x00",  # MinBytes int32 = 0
        b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
        b"\x00",              # IsolationLevel int8 = 0
        b"\x00\x00\x00\x00",  # SessionId int32 = 0
        b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
        b"\x02",              # Topics compact array, 1 element
        UUID_A_BYTES,         #   TopicId uuid
        b"\x02",              #   Partitions compact array, 1 element
        b"\x00\x00\x00\x00",  #     Partition int32 = 0
        b"\xff\xff\xff\xff",  #     CurrentLeaderEpoch int32 = -1
        b"\x00\x00\x00\x00\x00\x00\x00\x00",  # FetchOffset int64 = 0
        b"\xff\xff\xff\xff",  #     LastFetchedEpoch int32 = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LogStartOffset int64 = -1
        b"\x00\x00\x00\x00",  #     PartitionMaxBytes int32 = 0
        b"\x01",              #     tagged fields: 1 entry
        b"\x01",              #       tag 1 = HighWatermark (known, valid from v18)
        b"\x08",              #       size 8
        b"\x00\x00\x00\x00\x00\x00\x00\x05",  # int64 = 5
        b"\x00",              #   tagged fields: none
        b"\x01",              # ForgottenTopicsData compact array, empty
        b"\x01",              # RackId compact string = ""
        b"\x00",              # tagged fields: none
    ])


def test_known_tag_is_decoded_in_its_versions() -> None:
    decoded = messages.FetchRequest.decode(_fetch_request_with_partition_tag_1(), 18)
    assert decoded.topics[0].partitions[0].high_watermark == 5
    assert decoded.topics[0].partitions[0].unknown_tagged_fields == []


def test_known_tag_outside_its_versions_is_a_decode_error() -> None:
    """Kafka's generated reader throws "Tag 1 is not valid for version 17" here."""
    with pytest.raises(DecodeError):
        messages.FetchRequest.decode(_fetch_request_with_partition_tag_1(), 17)


def test_any_non_zero_byte_reads_as_true() -> None:
    golden = b"".join([
        b"\x02",              # IncludeClusterAuthorizedOperations bool: 0x02 reads as true
        b"\x00",              # tagged fields: none
    ])
    decoded = messages.DescribeClusterRequest.decode(golden, 0)
    assert decoded.include_cluster_authorized_operations is True
    assert decoded.encode(0) == b"\x01\x00"  # writers emit 1


# ---------------------------------------------------------------------------------------------
# Varint boundaries: a compact length N+1 of 127 takes one byte, 128 takes two (0x80 0x01)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("length", "prefix"), [
    (126, b"\x7f"),      # N+1 = 127: one byte
    (127, b"\x80\x01"),  # N+1 = 128: two bytes
    (16383, b"\x80\x80\x01"),  # N+1 = 16384: three bytes
])
def test_compact_string_length_varint_boundaries(length: int, prefix: bytes) -> None:
    golden = b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x00",              # ErrorMessage compact nullable string = null
        prefix + b"x" * length,  # ClusterId compact string, N bytes (varint N+1)
        b"\xff\xff\xff\xff",  # ControllerId int32 = -1
        b"\x01",              # Brokers compact array, empty
        b"\x80\x00\x00\x00",  # ClusterAuthorizedOperations int32 = -2147483648
        b"\x00",              # tagged fields: none
    ])
    obj = messages.DescribeClusterResponse(cluster_id="x" * length)
    assert obj.encode(0)[:12].hex(" ") == golden[:12].hex(" ")
    assert obj.encode(0) == golden
    assert messages.DescribeClusterResponse.decode(golden, 0) == obj


@pytest.mark.parametrize(("count", "prefix"), [(126, b"\x7f"), (127, b"\x80\x01")])
def test_compact_array_count_varint_boundaries(count: int, prefix: bytes) -> None:
    candidate = b"".join([
        b"\x00\x00\x00\x07",  # CandidateId int32 = 7
        bytes(16),            # CandidateDirectoryId uuid = zero
        b"\x00",              # tagged fields: none
    ])
    body = b"".join([
        b"\x00",              # ClusterId compact nullable string = null
        b"\x02",              # Topics compact array, 1 element
        b"\x02" b"t",         #   TopicName compact string
        b"\x02",              #   Partitions compact array, 1 element
        b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
        b"\x00\x00\x00\x00",  #     LeaderId int32 = 0
        b"\x00\x00\x00\x00",  #     LeaderEpoch int32 = 0
        prefix,               #     PreferredCandidates compact array, count+1 as unsigned varint
        candidate * count,    #       the elements
        b"\x00",              #     tagged fields: none
        b"\x00",              #   tagged fields: none
        b"\x01",              # LeaderEndpoints compact array, empty
        b"\x00",              # tagged fields: none
    ])
    req = messages.EndQuorumEpochRequest
    obj = req(cluster_id=None, topics=[req.TopicData(topic_name="t", partitions=[req.PartitionData(
        preferred_candidates=[req.ReplicaInfo(candidate_id=7) for _ in range(count)])])])
    assert obj.encode(1) == body
    assert req.decode(body, 1) == obj


@pytest.mark.parametrize(("size", "prefix"), [(127, b"\x7f"), (128, b"\x80\x01")])
def test_tagged_field_size_varint_boundaries(size: int, prefix: bytes) -> None:
    golden = b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x01",              # tagged fields: 1 entry
        b"\x00",              #   tag 0 = CurrentLeader
        prefix,               #   size (unsigned varint)
        b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
        b"\x00\x00\x00\x02",  #     LeaderEpoch int32 = 2
        bytes([size - 13]) + b"h" * (size - 14),  # Host compact string, size-14 bytes (struct = 14 + N)
        b"\x00\x00\x00\x03",  #     Port int32 = 3
        b"\x00",              #     tagged fields: none
    ])
    obj = URV(current_leader=URV.CurrentLeader(leader_id=1, leader_epoch=2, host="h" * (size - 14), port=3))
    assert obj.encode(0).hex(" ") == golden.hex(" ")
    assert URV.decode(golden, 0) == obj


def test_classic_string_length_limit() -> None:
    ok = messages.SaslHandshakeRequest(mechanism="m" * 32767)
    assert ok.encode(0) == b"\x7f\xff" + b"m" * 32767  # Mechanism classic string, 32767 bytes
    with pytest.raises(EncodeError):
        messages.SaslHandshakeRequest(mechanism="m" * 32768).encode(0)


@pytest.mark.parametrize("field", ["diverging_epoch", "current_leader", "snapshot_id"])
def test_tagged_struct_absent_before_v12_is_refused(field: str) -> None:
    partition = messages.FetchResponse.PartitionData(records=None)
    kind = type(getattr(partition, field))
    setattr(partition, field, kind(**{next(iter(kind._FIELDS)): 1}))
    obj = messages.FetchResponse(responses=[messages.FetchResponse.FetchableTopicResponse(
        topic="t", partitions=[partition])])
    with pytest.raises(EncodeError):
        obj.encode(11)


def _fetch_response_with_current_leader(leader: bytes, size: bytes) -> bytes:
    return b"".join([
        b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
        b"\x00\x00",          # ErrorCode int16 = 0
        b"\x00\x00\x00\x00",  # SessionId int32 = 0
        b"\x02",              # Responses compact array, 1 element
        UUID_A_BYTES,         #   TopicId uuid
        b"\x02",              #   Partitions compact array, 1 element
        b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
        b"\x00\x00",          #     ErrorCode int16 = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x00",  # HighWatermark int64 = 0
        b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LastStableOffset int64 = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LogStartOffset int64 = -1
        b"\x00",              #     AbortedTransactions compact nullable array = null
        b"\xff\xff\xff\xff",  #     PreferredReadReplica int32 = -1
        b"\x00",              #     Records compact nullable records = null
        b"\x01",              #     tagged fields: 1 entry
        b"\x01",              #       tag 1 = CurrentLeader
        size,                 #       size
        leader,               #       LeaderIdAndEpoch struct
        b"\x00",              #   tagged fields: none
        b"\x00",              # tagged fields: none
    ])


def test_unknown_tag_inside_a_tagged_struct_survives() -> None:
    leader = b"".join([
        b"\x00\x00\x00\x01",  # LeaderId int32 = 1
        b"\x00\x00\x00\x05",  # LeaderEpoch int32 = 5
        b"\x01",              # tagged fields: 1 entry
        b"\x09",              #   tag 9 (unknown)
        b"\x01",              #   size 1
        b"\xaa",              #   raw value
    ])  # 12 bytes
    golden = _fetch_response_with_current_leader(leader, b"\x0c")
    response = _roundtrip(messages.FetchResponse, golden, 13)
    current = response.responses[0].partitions[0].current_leader
    assert (current.leader_id, current.leader_epoch) == (1, 5)
    assert current.unknown_tagged_fields == [(9, b"\xaa")]


def test_tagged_struct_with_default_fields_but_unknown_tags_is_written() -> None:
    """Kafka's generated equals() compares unknown tagged fields too, so this struct is not the default."""
    leader = b"".join([
        b"\xff\xff\xff\xff",  # LeaderId int32 = -1 (default)
        b"\xff\xff\xff\xff",  # LeaderEpoch int32 = -1 (default)
        b"\x01",              # tagged fields: 1 entry
        b"\x04",              #   tag 4 (unknown)
        b"\x00",              #   size 0
    ])  # 11 bytes
    golden = _fetch_response_with_current_leader(leader, b"\x0b")
    _roundtrip(messages.FetchResponse, golden, 13)


@pytest.mark.parametrize(("cls", "version"), [
    (messages.FetchRequest, 19),            # v0-3 are Kafka 3.9's (removed in 4.0), v18 is 4.1's
    (messages.RegisterBrokerRecord, 5),     # v4 is Kafka 4.3's (KIP-1066)
    (messages.DescribeQuorumRequest, 4),
    (messages.BeginQuorumEpochResponse, 2),
    (messages.SaslHandshakeRequest, 2),
])
def test_undefined_versions_are_refused(cls: type[Struct], version: int) -> None:
    with pytest.raises(UndefinedVersionError):
        cls().encode(version)
    with pytest.raises(UndefinedVersionError):
        cls.decode(b"", version)
