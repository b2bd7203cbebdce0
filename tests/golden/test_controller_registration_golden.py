"""Golden wire vectors, worked out by hand, for ControllerRegistration (API 70, KIP-919) and the
RegisterControllerRecord the active controller writes for it.

Every vector is checked both ways: the object encodes to exactly these bytes, and the bytes decode
to an object equal to it. Only v0 exists and it is flexible: compact lengths hold N+1, every struct
ends with its tagged fields, and the frames use request header v2 and response header v1.
"""

from __future__ import annotations

import pytest

from golden.golden_testlib import golden_tests
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.primitives import Uuid

UUID_A_BYTES = b"\x6d\x2a\x1f\x0e\x43\x5c\x4b\x8a\x9e\x01\x23\x45\x67\x89\xab\xcd"
UUID_A = Uuid(UUID_A_BYTES)
REQ = messages.ControllerRegistrationRequest
RESP = messages.ControllerRegistrationResponse
RECORD = messages.RegisterControllerRecord

REQUEST_V0 = b"".join([
    b"\x00\x00\x00\x03",          # ControllerId int32 = 3
    UUID_A_BYTES,                 # IncarnationId uuid
    b"\x00",                      # ZkMigrationReady bool = false
    b"\x02",                      # Listeners compact array, 1 element
    b"\x0b" b"CONTROLLER",        #   Name compact string, 10 bytes
    b"\x02" b"h",                 #   Host compact string, 1 byte
    b"\x23\x85",                  #   Port uint16 = 9093
    b"\x00\x00",                  #   SecurityProtocol int16 = 0 PLAINTEXT
    b"\x00",                      #   tagged fields: none
    b"\x03",                      # Features compact array, 2 elements
    b"\x11" b"metadata.version",  #   Name compact string, 16 bytes
    b"\x00\x07",                  #   MinSupportedVersion int16 = 7
    b"\x00\x1d",                  #   MaxSupportedVersion int16 = 29
    b"\x00",                      #   tagged fields: none
    b"\x0e" b"kraft.version",     #   Name compact string, 13 bytes
    b"\x00\x00",                  #   MinSupportedVersion int16 = 0
    b"\x00\x01",                  #   MaxSupportedVersion int16 = 1
    b"\x00",                      #   tagged fields: none
    b"\x00",                      # tagged fields: none
])

REQUEST_V0_EMPTY = b"".join([
    b"\x00\x00\x00\x03", UUID_A_BYTES,
    b"\x01",                      # ZkMigrationReady bool = true
    b"\x01",                      # Listeners compact array, empty
    b"\x01",                      # Features compact array, empty
    b"\x00",                      # tagged fields: none
])

# Kafka's success answer sets only ThrottleTimeMs: ErrorMessage keeps its default, "" (not null).
RESPONSE_V0_OK = b"".join([
    b"\x00\x00\x00\x00",          # ThrottleTimeMs int32 = 0
    b"\x00\x00",                  # ErrorCode int16 = 0
    b"\x01",                      # ErrorMessage compact nullable string = ""
    b"\x00",                      # tagged fields: none
])

RESPONSE_V0_NULL_MESSAGE = b"".join([
    b"\x00\x00\x00\x00", b"\x00\x00",
    b"\x00",                      # ErrorMessage compact nullable string = null
    b"\x00",
])

RESPONSE_V0_NOT_CONTROLLER = b"".join([
    b"\x00\x00\x00\x0a",          # ThrottleTimeMs int32 = 10
    b"\x00\x29",                  # ErrorCode int16 = 41 NOT_CONTROLLER
    b"\x03" b"no",                # ErrorMessage compact nullable string, 2 bytes
    b"\x00",                      # tagged fields: none
])

RECORD_V0 = b"".join([
    b"\x00\x00\x00\x03",          # ControllerId int32 = 3
    UUID_A_BYTES,                 # IncarnationId uuid
    b"\x00",                      # ZkMigrationReady bool = false
    b"\x02",                      # EndPoints compact array, 1 element
    b"\x0b" b"CONTROLLER", b"\x02" b"h", b"\x23\x85", b"\x00\x00", b"\x00",
    b"\x02",                      # Features compact array, 1 element
    b"\x11" b"metadata.version", b"\x00\x07", b"\x00\x1d", b"\x00",
    b"\x00",                      # tagged fields: none
])

CASES = [
    pytest.param(REQ, 0, REQ(controller_id=3, incarnation_id=UUID_A, zk_migration_ready=False, listeners=[
        REQ.Listener(name="CONTROLLER", host="h", port=9093, security_protocol=0)], features=[
        REQ.Feature(name="metadata.version", min_supported_version=7, max_supported_version=29),
        REQ.Feature(name="kraft.version", min_supported_version=0, max_supported_version=1)]),
        REQUEST_V0, id="ControllerRegistrationRequest-v0"),
    pytest.param(REQ, 0, REQ(controller_id=3, incarnation_id=UUID_A, zk_migration_ready=True),
                 REQUEST_V0_EMPTY, id="ControllerRegistrationRequest-v0-empty"),
    pytest.param(RESP, 0, RESP(throttle_time_ms=0, error_code=0, error_message=""), RESPONSE_V0_OK,
                 id="ControllerRegistrationResponse-v0"),
    pytest.param(RESP, 0, RESP(throttle_time_ms=0, error_code=0, error_message=None),
                 RESPONSE_V0_NULL_MESSAGE, id="ControllerRegistrationResponse-v0-null-message"),
    pytest.param(RESP, 0, RESP(throttle_time_ms=10, error_code=41, error_message="no"),
                 RESPONSE_V0_NOT_CONTROLLER, id="ControllerRegistrationResponse-v0-error"),
    pytest.param(RECORD, 0, RECORD(
        controller_id=3, incarnation_id=UUID_A, zk_migration_ready=False,
        end_points=[RECORD.ControllerEndpoint(name="CONTROLLER", host="h", port=9093, security_protocol=0)],
        features=[RECORD.ControllerFeature(name="metadata.version", min_supported_version=7,
                                           max_supported_version=29)]),
        RECORD_V0, id="RegisterControllerRecord-v0"),
]


test_encode_matches_golden, test_decode_matches_golden = golden_tests(CASES)


def test_the_api_key_versions_and_defaults() -> None:
    assert (REQ.API_KEY, REQ.VERSIONS, RESP.API_KEY, RESP.VERSIONS) == (70, (0, 0), 70, (0, 0))
    assert RECORD.API_KEY == 27
    assert messages.request_class(70) is REQ and messages.response_class(70) is RESP
    assert (framing.request_header_version(70, 0), framing.response_header_version(70, 0)) == (2, 1)
    # Unset fields take their type's default: ZkMigrationReady false, empty lists, ErrorMessage "".
    assert REQ(controller_id=3, incarnation_id=UUID_A).encode(0) == REQUEST_V0_EMPTY.replace(
        b"\x01\x01\x01\x00", b"\x00\x01\x01\x00")
    assert RESP().encode(0) == RESPONSE_V0_OK


REQUEST_FRAME = b"".join([
    b"\x00\x00\x00\x24",          # size int32 = 36
    b"\x00\x46",                  # RequestApiKey int16 = 70
    b"\x00\x00",                  # RequestApiVersion int16 = 0
    b"\x00\x00\x00\x07",          # CorrelationId int32 = 7
    b"\x00\x01" b"c",             # ClientId classic string (request header v2)
    b"\x00",                      # header tagged fields: none
    REQUEST_V0_EMPTY,             # the body above (24 bytes)
])

RESPONSE_FRAME = b"".join([
    b"\x00\x00\x00\x0d",          # size int32 = 13
    b"\x00\x00\x00\x07",          # CorrelationId int32 = 7
    b"\x00",                      # header tagged fields: none (response header v1)
    RESPONSE_V0_OK,               # the body above (8 bytes)
])


def test_whole_frames() -> None:
    request = REQ(controller_id=3, incarnation_id=UUID_A, zk_migration_ready=True)
    assert framing.encode_request(request, 0, 7, "c").hex(" ") == REQUEST_FRAME.hex(" ")
    decoded = framing.decode_request(REQUEST_FRAME[4:])
    assert (decoded.header.request_api_key, decoded.header.client_id, decoded.body) == (70, "c", request)
    assert framing.encode_response(RESP(), 0, 7).hex(" ") == RESPONSE_FRAME.hex(" ")
    assert framing.decode_response(RESPONSE_FRAME[4:], 70, 0) == (7, RESP())
