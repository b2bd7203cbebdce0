"""Golden bytes for request/response headers and whole frames (int32 size prefix included).

Rules (Kafka's protocol guide): request header v1 = ApiKey int16, ApiVersion int16, CorrelationId int32,
ClientId classic nullable string (int16 length, -1 = null); v2 adds a tagged-field section, but ClientId
stays a classic string. Response header v0 = CorrelationId; v1 adds a tagged-field section. Flexible API
versions use request v2 / response v1, except that every ApiVersions response uses response header v0.
"""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import framing, messages

RH = messages.RequestHeader
META = b"__cluster_metadata"

# ---------------------------------------------------------------------------------------------
# Headers on their own
# ---------------------------------------------------------------------------------------------

REQUEST_HEADER_V1 = b"".join([
    b"\x00\x37",          # RequestApiKey int16 = 55
    b"\x00\x02",          # RequestApiVersion int16 = 2
    b"\x00\x00\x00\x2a",  # CorrelationId int32 = 42
    b"\x00\x0d" b"adminclient-1",  # ClientId classic nullable string, 13 bytes
])

REQUEST_HEADER_V2 = b"".join([
    b"\x00\x37",          # RequestApiKey int16 = 55
    b"\x00\x02",          # RequestApiVersion int16 = 2
    b"\x00\x00\x00\x2a",  # CorrelationId int32 = 42
    b"\x00\x0d" b"adminclient-1",  # ClientId: still a classic int16-length string in v2
    b"\x00",              # tagged fields: none
])

REQUEST_HEADER_V1_NULL_CLIENT = b"".join([
    b"\x00\x11",          # RequestApiKey int16 = 17
    b"\x00\x01",          # RequestApiVersion int16 = 1
    b"\xff\xff\xff\xff",  # CorrelationId int32 = -1
    b"\xff\xff",          # ClientId classic nullable string = null
])

REQUEST_HEADER_V2_NULL_CLIENT = b"".join([
    b"\x00\x01",          # RequestApiKey int16 = 1
    b"\x00\x12",          # RequestApiVersion int16 = 18
    b"\x7f\xff\xff\xff",  # CorrelationId int32 = 2147483647
    b"\xff\xff",          # ClientId classic nullable string = null (not the compact 0x00)
    b"\x00",              # tagged fields: none
])

REQUEST_HEADER_V2_EMPTY_CLIENT = b"".join([
    b"\x00\x52",          # RequestApiKey int16 = 82
    b"\x00\x00",          # RequestApiVersion int16 = 0
    b"\x00\x00\x00\x00",  # CorrelationId int32 = 0
    b"\x00\x00",          # ClientId classic nullable string = "" (not null)
    b"\x00",              # tagged fields: none
])

RESPONSE_HEADER_V0 = b"".join([
    b"\x00\x00\x00\x2a",  # CorrelationId int32 = 42
])

RESPONSE_HEADER_V1 = b"".join([
    b"\x00\x00\x00\x2a",  # CorrelationId int32 = 42
    b"\x00",              # tagged fields: none
])

HEADER_CASES = [
    pytest.param(RH, 1, RH(request_api_key=55, request_api_version=2, correlation_id=42,
                           client_id="adminclient-1"), REQUEST_HEADER_V1, id="RequestHeader-v1"),
    pytest.param(RH, 2, RH(request_api_key=55, request_api_version=2, correlation_id=42,
                           client_id="adminclient-1"), REQUEST_HEADER_V2, id="RequestHeader-v2"),
    pytest.param(RH, 1, RH(request_api_key=17, request_api_version=1, correlation_id=-1, client_id=None),
                 REQUEST_HEADER_V1_NULL_CLIENT, id="RequestHeader-v1-null-client"),
    pytest.param(RH, 2, RH(request_api_key=1, request_api_version=18, correlation_id=2147483647,
                           client_id=None), REQUEST_HEADER_V2_NULL_CLIENT, id="RequestHeader-v2-null-client"),
    pytest.param(RH, 2, RH(request_api_key=82, request_api_version=0, correlation_id=0, client_id=""),
                 REQUEST_HEADER_V2_EMPTY_CLIENT, id="RequestHeader-v2-empty-client"),
    pytest.param(messages.ResponseHeader, 0, messages.ResponseHeader(correlation_id=42), RESPONSE_HEADER_V0,
                 id="ResponseHeader-v0"),
    pytest.param(messages.ResponseHeader, 1, messages.ResponseHeader(correlation_id=42), RESPONSE_HEADER_V1,
                 id="ResponseHeader-v1"),
]


@pytest.mark.parametrize(("cls", "version", "obj", "golden"), HEADER_CASES)
def test_header_encode_matches_golden(cls: type, version: int, obj: object, golden: bytes) -> None:
    assert obj.encode(version).hex(" ") == golden.hex(" ")  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "version", "obj", "golden"), HEADER_CASES)
def test_header_decode_matches_golden(cls: type, version: int, obj: object, golden: bytes) -> None:
    assert cls.decode(golden, version) == obj  # type: ignore[attr-defined]


def test_request_header_v2_unknown_tag_survives() -> None:
    golden = b"".join([
        b"\x00\x37",          # RequestApiKey int16 = 55
        b"\x00\x00",          # RequestApiVersion int16 = 0
        b"\x00\x00\x00\x01",  # CorrelationId int32 = 1
        b"\x00\x01" b"c",     # ClientId classic string
        b"\x01",              # tagged fields: 1 entry
        b"\x05",              #   tag 5 (unknown)
        b"\x02",              #   size 2
        b"\xbe\xef",          #   raw value
    ])
    header = RH.decode(golden, 2)
    assert header.client_id == "c"
    assert header.unknown_tagged_fields == [(5, b"\xbe\xef")]
    assert header.encode(2) == golden


# ---------------------------------------------------------------------------------------------
# Header version choice
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("api_key", "version", "request_header", "response_header"), [
    (18, 0, 1, 0), (18, 1, 1, 0), (18, 2, 1, 0),
    (18, 3, 2, 0), (18, 4, 2, 0),          # ApiVersions responses always use response header v0
    (3, 8, 1, 0), (3, 9, 2, 1), (3, 13, 2, 1),
    (1, 11, 1, 0), (1, 12, 2, 1), (1, 18, 2, 1),
    (17, 0, 1, 0), (17, 1, 1, 0),          # SaslHandshake is never flexible
    (36, 1, 1, 0), (36, 2, 2, 1),
    (53, 0, 1, 0), (53, 1, 2, 1),          # BeginQuorumEpoch v0 is not flexible
    (54, 0, 1, 0), (54, 1, 2, 1),          # EndQuorumEpoch v0 is not flexible
    (52, 0, 2, 1), (55, 0, 2, 1), (55, 3, 2, 1), (57, 0, 2, 1), (58, 0, 2, 1), (59, 0, 2, 1),
    (60, 0, 2, 1), (80, 0, 2, 1), (80, 1, 2, 1), (81, 0, 2, 1), (82, 0, 2, 1),
])
def test_header_versions(api_key: int, version: int, request_header: int, response_header: int) -> None:
    assert framing.request_header_version(api_key, version) == request_header
    assert framing.response_header_version(api_key, version) == response_header


# ---------------------------------------------------------------------------------------------
# Whole frames
# ---------------------------------------------------------------------------------------------

API_VERSIONS_V3_REQUEST_FRAME = b"".join([
    b"\x00\x00\x00\x31",  # size int32 = 49
    b"\x00\x12",          # RequestApiKey int16 = 18
    b"\x00\x03",          # RequestApiVersion int16 = 3
    b"\x00\x00\x00\x01",  # CorrelationId int32 = 1
    b"\x00\x0d" b"adminclient-1",  # ClientId classic string
    b"\x00",              # header tagged fields: none (request header v2)
    b"\x12" b"apache-kafka-java",  # ClientSoftwareName compact string
    b"\x06" b"3.9.0",     # ClientSoftwareVersion compact string
    b"\x00",              # body tagged fields: none
])

API_VERSIONS_V0_REQUEST_FRAME = b"".join([
    b"\x00\x00\x00\x0a",  # size int32 = 10
    b"\x00\x12",          # RequestApiKey int16 = 18
    b"\x00\x00",          # RequestApiVersion int16 = 0
    b"\x00\x00\x00\x00",  # CorrelationId int32 = 0
    b"\xff\xff",          # ClientId = null (request header v1); the v0 body is empty
])

DESCRIBE_QUORUM_V2_REQUEST_FRAME = b"".join([
    b"\x00\x00\x00\x2a",  # size int32 = 42
    b"\x00\x37",          # RequestApiKey int16 = 55
    b"\x00\x02",          # RequestApiVersion int16 = 2
    b"\x00\x00\x00\x05",  # CorrelationId int32 = 5
    b"\x00\x03" b"cli",   # ClientId classic string
    b"\x00",              # header tagged fields: none
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

SASL_HANDSHAKE_V1_REQUEST_FRAME = b"".join([
    b"\x00\x00\x00\x14",  # size int32 = 20
    b"\x00\x11",          # RequestApiKey int16 = 17
    b"\x00\x01",          # RequestApiVersion int16 = 1
    b"\x00\x00\x00\x02",  # CorrelationId int32 = 2
    b"\x00\x03" b"cli",   # ClientId classic string (request header v1: no tagged fields)
    b"\x00\x05" b"PLAIN",  # Mechanism classic string
])

BEGIN_QUORUM_EPOCH_V0_REQUEST_FRAME = b"".join([
    b"\x00\x00\x00\x13",  # size int32 = 19
    b"\x00\x35",          # RequestApiKey int16 = 53
    b"\x00\x00",          # RequestApiVersion int16 = 0
    b"\x00\x00\x00\x09",  # CorrelationId int32 = 9
    b"\x00\x03" b"cli",   # ClientId classic string (request header v1)
    b"\xff\xff",          # ClusterId classic nullable string = null
    b"\x00\x00\x00\x00",  # Topics classic array, empty
])

API_VERSIONS_V3_RESPONSE_FRAME = b"".join([
    b"\x00\x00\x00\x13",  # size int32 = 19
    b"\x00\x00\x00\x01",  # CorrelationId int32 = 1 (response header v0: no tagged fields)
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # ApiKeys compact array, 1 element
    b"\x00\x12",          #   ApiKey int16 = 18
    b"\x00\x00",          #   MinVersion int16 = 0
    b"\x00\x04",          #   MaxVersion int16 = 4
    b"\x00",              #   tagged fields: none
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00",              # tagged fields: none
])

API_VERSIONS_V0_RESPONSE_FRAME = b"".join([
    b"\x00\x00\x00\x10",  # size int32 = 16
    b"\x00\x00\x00\x07",  # CorrelationId int32 = 7
    b"\x00\x23",          # ErrorCode int16 = 35 UNSUPPORTED_VERSION
    b"\x00\x00\x00\x01",  # ApiKeys classic array, 1 element
    b"\x00\x12",          #   ApiKey int16 = 18
    b"\x00\x00",          #   MinVersion int16 = 0
    b"\x00\x04",          #   MaxVersion int16 = 4
])

DESCRIBE_QUORUM_V0_RESPONSE_FRAME = b"".join([
    b"\x00\x00\x00\x09",  # size int32 = 9
    b"\x00\x00\x00\x05",  # CorrelationId int32 = 5
    b"\x00",              # response header v1 tagged fields: none
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x01",              # Topics compact array, empty
    b"\x00",              # tagged fields: none
])

SASL_AUTHENTICATE_V1_RESPONSE_FRAME = b"".join([
    b"\x00\x00\x00\x14",  # size int32 = 20
    b"\x00\x00\x00\x03",  # CorrelationId int32 = 3 (response header v0)
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\xff\xff",          # ErrorMessage classic nullable string = null
    b"\x00\x00\x00\x00",  # AuthBytes classic bytes, empty
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # SessionLifetimeMs int64 = 0
])

SASL_AUTHENTICATE_V2_RESPONSE_FRAME = b"".join([
    b"\x00\x00\x00\x12",  # size int32 = 18
    b"\x00\x00\x00\x03",  # CorrelationId int32 = 3
    b"\x00",              # response header v1 tagged fields: none
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x01",              # AuthBytes compact bytes, empty
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # SessionLifetimeMs int64 = 0
    b"\x00",              # tagged fields: none
])

BEGIN_QUORUM_EPOCH_V0_RESPONSE_FRAME = b"".join([
    b"\x00\x00\x00\x0a",  # size int32 = 10
    b"\x00\x00\x00\x09",  # CorrelationId int32 = 9 (response header v0)
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x00",  # Topics classic array, empty
])

REQUEST_FRAMES = [
    pytest.param(messages.ApiVersionsRequest(client_software_name="apache-kafka-java",
                                             client_software_version="3.9.0"),
                 3, 1, "adminclient-1", 2, API_VERSIONS_V3_REQUEST_FRAME, id="ApiVersions-v3"),
    pytest.param(messages.ApiVersionsRequest(), 0, 0, None, 1, API_VERSIONS_V0_REQUEST_FRAME,
                 id="ApiVersions-v0-null-client"),
    pytest.param(messages.DescribeQuorumRequest(topics=[messages.DescribeQuorumRequest.TopicData(
        topic_name="__cluster_metadata", partitions=[messages.DescribeQuorumRequest.PartitionData()])]),
        2, 5, "cli", 2, DESCRIBE_QUORUM_V2_REQUEST_FRAME, id="DescribeQuorum-v2"),
    pytest.param(messages.SaslHandshakeRequest(mechanism="PLAIN"), 1, 2, "cli", 1,
                 SASL_HANDSHAKE_V1_REQUEST_FRAME, id="SaslHandshake-v1"),
    pytest.param(messages.BeginQuorumEpochRequest(cluster_id=None), 0, 9, "cli", 1,
                 BEGIN_QUORUM_EPOCH_V0_REQUEST_FRAME, id="BeginQuorumEpoch-v0"),
]

RESPONSE_FRAMES = [
    pytest.param(messages.ApiVersionsResponse(api_keys=[
        messages.ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=4)]),
        3, 1, API_VERSIONS_V3_RESPONSE_FRAME, id="ApiVersions-v3"),
    pytest.param(messages.ApiVersionsResponse(error_code=35, api_keys=[
        messages.ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=4)]),
        0, 7, API_VERSIONS_V0_RESPONSE_FRAME, id="ApiVersions-v0"),
    pytest.param(messages.DescribeQuorumResponse(), 0, 5, DESCRIBE_QUORUM_V0_RESPONSE_FRAME,
                 id="DescribeQuorum-v0"),
    pytest.param(messages.SaslAuthenticateResponse(error_message=None), 1, 3,
                 SASL_AUTHENTICATE_V1_RESPONSE_FRAME, id="SaslAuthenticate-v1"),
    pytest.param(messages.SaslAuthenticateResponse(error_message=None), 2, 3,
                 SASL_AUTHENTICATE_V2_RESPONSE_FRAME, id="SaslAuthenticate-v2"),
    pytest.param(messages.BeginQuorumEpochResponse(), 0, 9, BEGIN_QUORUM_EPOCH_V0_RESPONSE_FRAME,
                 id="BeginQuorumEpoch-v0"),
]


@pytest.mark.parametrize(("body", "version", "correlation_id", "client_id", "header_version", "golden"),
                         REQUEST_FRAMES)
def test_encode_request_frame(body: messages.ApiVersionsRequest, version: int, correlation_id: int,
                              client_id: str | None, header_version: int, golden: bytes) -> None:
    assert framing.encode_request(body, version, correlation_id, client_id).hex(" ") == golden.hex(" ")


@pytest.mark.parametrize(("body", "version", "correlation_id", "client_id", "header_version", "golden"),
                         REQUEST_FRAMES)
def test_decode_request_frame(body: messages.ApiVersionsRequest, version: int, correlation_id: int,
                              client_id: str | None, header_version: int, golden: bytes) -> None:
    assert int.from_bytes(golden[:4], "big") == len(golden) - 4  # the golden's own size prefix
    frame = framing.decode_request(golden[4:])
    assert frame.header == RH(request_api_key=body.API_KEY, request_api_version=version,
                              correlation_id=correlation_id, client_id=client_id)
    assert frame.header_version == header_version
    assert frame.body == body


@pytest.mark.parametrize(("body", "version", "correlation_id", "golden"), RESPONSE_FRAMES)
def test_encode_response_frame(body: messages.ApiVersionsResponse, version: int, correlation_id: int,
                               golden: bytes) -> None:
    assert framing.encode_response(body, version, correlation_id).hex(" ") == golden.hex(" ")


@pytest.mark.parametrize(("body", "version", "correlation_id", "golden"), RESPONSE_FRAMES)
def test_decode_response_frame(body: messages.ApiVersionsResponse, version: int, correlation_id: int,
                               golden: bytes) -> None:
    assert int.from_bytes(golden[:4], "big") == len(golden) - 4
    assert framing.decode_response(golden[4:], body.API_KEY, version) == (correlation_id, body)


def test_unknown_api_versions_version_still_yields_its_header() -> None:
    """A server must read the header of an ApiVersions request of a version it does not know (v3+ ->
    header v2) to answer UNSUPPORTED_VERSION; the body is left unparsed."""
    frame = b"".join([
        b"\x00\x12",          # RequestApiKey int16 = 18
        b"\x00\x07",          # RequestApiVersion int16 = 7 (unknown)
        b"\x00\x00\x00\x0b",  # CorrelationId int32 = 11
        b"\x00\x03" b"cli",   # ClientId classic string
        b"\x00",              # header tagged fields: none
        b"\x99\x98\x97",      # a body this codec cannot know
    ])
    decoded = framing.decode_request(frame)
    assert decoded.header == RH(request_api_key=18, request_api_version=7, correlation_id=11, client_id="cli")
    assert decoded.header_version == 2
    assert decoded.body is None
