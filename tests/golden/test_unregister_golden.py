"""Golden wire vectors, worked out by hand, for UnregisterBroker (API 64) and UnregisterController
(API 94, KIP-1312, Kafka 4.4), and the metadata records the active controller writes for them,
UnregisterBrokerRecord (1) and UnregisterControllerRecord (29, Kafka 4.4).

The reference schemas (Kafka 4.2) hold none of these, so the bytes follow Kafka's own JSON schemas
(``UnregisterBrokerRequest.json``, ``UnregisterControllerRequest.json`` and their responses and records):
every one has only v0, flexible; compact lengths hold N+1, every struct ends with its tagged fields, and
the frames use request header v2 and response header v1. Every vector is checked both ways.
"""

from __future__ import annotations

import pytest

from golden.golden_testlib import golden_tests
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey, MetadataRecordType
from kafka_admin_kraft.protocol.error_codes import ErrorCode, error_for_code

UB_REQ = messages.UnregisterBrokerRequest
UB_RESP = messages.UnregisterBrokerResponse
UC_REQ = messages.UnregisterControllerRequest
UC_RESP = messages.UnregisterControllerResponse
UB_RECORD = messages.UnregisterBrokerRecord
UC_RECORD = messages.UnregisterControllerRecord

UNREGISTER_BROKER_REQUEST_V0 = b"".join([
    b"\x00\x00\x00\x65",          # BrokerId int32 = 101
    b"\x00",                      # tagged fields: none
])

UNREGISTER_CONTROLLER_REQUEST_V0 = b"".join([
    b"\x00\x00\x0b\xb9",          # ControllerId int32 = 3001
    b"\x00",                      # tagged fields: none
])

# Kafka's success answer sets only ThrottleTimeMs: ErrorMessage keeps its default, "" (not null).
RESPONSE_V0_OK = b"".join([
    b"\x00\x00\x00\x00",          # ThrottleTimeMs int32 = 0
    b"\x00\x00",                  # ErrorCode int16 = 0
    b"\x01",                      # ErrorMessage compact nullable string = ""
    b"\x00",                      # tagged fields: none
])

UNREGISTER_BROKER_RESPONSE_V0_NOT_REGISTERED = b"".join([
    b"\x00\x00\x00\x00",          # ThrottleTimeMs int32 = 0
    b"\x00\x66",                  # ErrorCode int16 = 102 BROKER_ID_NOT_REGISTERED
    b"\x28" b"Broker ID 7 is not currently registered",  # compact nullable string, 39 bytes
    b"\x00",                      # tagged fields: none
])

UNREGISTER_CONTROLLER_RESPONSE_V0_NOT_REGISTERED = b"".join([
    b"\x00\x00\x00\x05",          # ThrottleTimeMs int32 = 5
    b"\x00\x88",                  # ErrorCode int16 = 136 CONTROLLER_ID_NOT_REGISTERED
    b"\x03" b"no",                # ErrorMessage compact nullable string, 2 bytes
    b"\x00",                      # tagged fields: none
])

UNREGISTER_CONTROLLER_RESPONSE_V0_NULL_MESSAGE = b"".join([
    b"\x00\x00\x00\x00",
    b"\x00\x23",                  # ErrorCode int16 = 35 UNSUPPORTED_VERSION
    b"\x00",                      # ErrorMessage compact nullable string = null
    b"\x00",
])

UNREGISTER_BROKER_RECORD_V0 = b"".join([
    b"\x00\x00\x00\x65",                  # BrokerId int32 = 101
    b"\x00\x00\x00\x00\x00\x00\x01\x2c",  # BrokerEpoch int64 = 300
    b"\x00",                              # tagged fields: none
])

UNREGISTER_CONTROLLER_RECORD_V0 = b"".join([
    b"\x00\x00\x00\x03",          # ControllerId int32 = 3
    b"\x00",                      # tagged fields: none
])

CASES = [
    pytest.param(UB_REQ, 0, UB_REQ(broker_id=101), UNREGISTER_BROKER_REQUEST_V0,
                 id="UnregisterBrokerRequest-v0"),
    pytest.param(UB_RESP, 0, UB_RESP(throttle_time_ms=0, error_code=0, error_message=""), RESPONSE_V0_OK,
                 id="UnregisterBrokerResponse-v0"),
    pytest.param(UB_RESP, 0, UB_RESP(error_code=102, error_message="Broker ID 7 is not currently registered"),
                 UNREGISTER_BROKER_RESPONSE_V0_NOT_REGISTERED, id="UnregisterBrokerResponse-v0-error"),
    pytest.param(UC_REQ, 0, UC_REQ(controller_id=3001), UNREGISTER_CONTROLLER_REQUEST_V0,
                 id="UnregisterControllerRequest-v0"),
    pytest.param(UC_RESP, 0, UC_RESP(throttle_time_ms=0, error_code=0, error_message=""), RESPONSE_V0_OK,
                 id="UnregisterControllerResponse-v0"),
    pytest.param(UC_RESP, 0, UC_RESP(throttle_time_ms=5, error_code=136, error_message="no"),
                 UNREGISTER_CONTROLLER_RESPONSE_V0_NOT_REGISTERED,
                 id="UnregisterControllerResponse-v0-error"),
    pytest.param(UC_RESP, 0, UC_RESP(error_code=35, error_message=None),
                 UNREGISTER_CONTROLLER_RESPONSE_V0_NULL_MESSAGE, id="UnregisterControllerResponse-v0-null"),
    pytest.param(UB_RECORD, 0, UB_RECORD(broker_id=101, broker_epoch=300), UNREGISTER_BROKER_RECORD_V0,
                 id="UnregisterBrokerRecord-v0"),
    pytest.param(UC_RECORD, 0, UC_RECORD(controller_id=3), UNREGISTER_CONTROLLER_RECORD_V0,
                 id="UnregisterControllerRecord-v0"),
]


test_encode_matches_golden, test_decode_matches_golden = golden_tests(CASES)


def test_the_api_keys_versions_listeners_and_defaults() -> None:
    assert (UB_REQ.API_KEY, UB_REQ.VERSIONS, UB_RESP.API_KEY, UB_RESP.VERSIONS) == (64, (0, 0), 64, (0, 0))
    assert (UC_REQ.API_KEY, UC_REQ.VERSIONS, UC_RESP.API_KEY, UC_RESP.VERSIONS) == (94, (0, 0), 94, (0, 0))
    assert (ApiKey.UNREGISTER_BROKER, ApiKey.UNREGISTER_CONTROLLER) == (64, 94)
    assert (UB_RECORD.API_KEY, UC_RECORD.API_KEY) == (1, 29)
    assert MetadataRecordType.UNREGISTER_BROKER_RECORD == 1
    assert MetadataRecordType.UNREGISTER_CONTROLLER_RECORD == 29
    assert messages.metadata_record_class(29) is UC_RECORD and messages.metadata_record_class(1) is UB_RECORD
    assert set(UB_REQ.LISTENERS) == set(UC_REQ.LISTENERS) == {"broker", "controller"}
    for key in (64, 94):
        assert (framing.request_header_version(key, 0), framing.response_header_version(key, 0)) == (2, 1)
    # Unset fields take their type's default: ErrorMessage "", not null.
    assert UB_RESP().encode(0) == UC_RESP().encode(0) == RESPONSE_V0_OK


def test_controller_id_not_registered_error() -> None:
    error = ErrorCode.CONTROLLER_ID_NOT_REGISTERED
    assert (error.code, error.retriable) == (136, False)
    assert ErrorCode(136) is error and error_for_code(136).code == 136


REQUEST_FRAME = b"".join([
    b"\x00\x00\x00\x11",          # size int32 = 17
    b"\x00\x5e",                  # RequestApiKey int16 = 94
    b"\x00\x00",                  # RequestApiVersion int16 = 0
    b"\x00\x00\x00\x07",          # CorrelationId int32 = 7
    b"\x00\x01" b"c",             # ClientId classic string (request header v2)
    b"\x00",                      # header tagged fields: none
    UNREGISTER_CONTROLLER_REQUEST_V0,  # the body above (5 bytes)
])

RESPONSE_FRAME = b"".join([
    b"\x00\x00\x00\x0d",          # size int32 = 13
    b"\x00\x00\x00\x07",          # CorrelationId int32 = 7
    b"\x00",                      # header tagged fields: none (response header v1)
    RESPONSE_V0_OK,               # the body above (8 bytes)
])


def test_whole_frames() -> None:
    request = UC_REQ(controller_id=3001)
    assert framing.encode_request(request, 0, 7, "c").hex(" ") == REQUEST_FRAME.hex(" ")
    decoded = framing.decode_request(REQUEST_FRAME[4:])
    assert (decoded.header.request_api_key, decoded.header.client_id, decoded.body) == (94, "c", request)
    assert framing.encode_response(UC_RESP(), 0, 7).hex(" ") == RESPONSE_FRAME.hex(" ")
    assert framing.decode_response(RESPONSE_FRAME[4:], 94, 0) == (7, UC_RESP())
