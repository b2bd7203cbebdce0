"""Envelope (API 58): wrapping a forwarded request and unwrapping the controller's answer."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft_server.handlers import envelope


def _request_frame(body: messages.DescribeQuorumRequest, version: int, correlation_id: int) -> bytes:
    return framing.encode_request(body, version, correlation_id, client_id="adminclient-1")[4:]


def test_wrap_and_unwrap_a_request_round_trip() -> None:
    inner = messages.DescribeQuorumRequest(topics=[])
    frame = _request_frame(inner, 2, 77)
    wrapped = envelope.wrap(frame, "127.0.0.1", "alice")
    assert wrapped.request_data == frame and wrapped.client_host_address == bytes([127, 0, 0, 1])
    assert envelope.deserialize_principal(wrapped.request_principal) == ("User", "alice")
    on_the_wire = framing.encode_request(wrapped, 0, 5)
    decoded = framing.decode_request(on_the_wire[4:])
    assert isinstance(decoded.body, messages.EnvelopeRequest)
    unwrapped = envelope.unwrap_request(decoded.body)
    assert (unwrapped.header.request_api_key, unwrapped.header.request_api_version) == (55, 2)
    assert unwrapped.header.correlation_id == 77 and unwrapped.header.client_id == "adminclient-1"
    assert unwrapped.body == inner


def test_the_principal_is_serialized_as_kafka_does() -> None:
    # int16 version 0, then DefaultPrincipalData v0: compact "User", compact "ANONYMOUS", false, no tags
    assert envelope.serialize_principal("ANONYMOUS") == (b"\x00\x00" b"\x05User" b"\x0aANONYMOUS" b"\x00"
                                                         b"\x00")
    for bad in (None, b"", b"\x00", b"\x00\x01\x05User\x01\x00\x00", b"\x00\x00\x05Us"):
        with pytest.raises(ValueError, match="DefaultPrincipalData"):
            envelope.deserialize_principal(bad)


def test_client_addresses() -> None:
    assert envelope.client_address_bytes("::1") == bytes(15) + b"\x01"
    assert envelope.client_address_bytes("not-an-ip") == b""


def test_wrap_and_unwrap_a_response_round_trip() -> None:
    inner = messages.AddRaftVoterResponse(throttle_time_ms=0, error_code=126, error_message="duplicate")
    wrapped = envelope.wrap_response(inner, 0, 77)
    assert framing.peek_correlation_id(wrapped.response_data) == 77
    on_the_wire = framing.encode_response(wrapped, 0, 5)
    correlation_id, decoded = framing.decode_response(on_the_wire[4:], ApiKey.ENVELOPE, 0)
    assert correlation_id == 5 and isinstance(decoded, messages.EnvelopeResponse)
    assert envelope.unwrap_response(decoded, 80, 0) == inner


def test_an_envelope_error_has_no_inner_response() -> None:
    answer = envelope.error_response(ErrorCode.INVALID_REQUEST)
    back = framing.decode_response(framing.encode_response(answer, 0, 1)[4:], ApiKey.ENVELOPE, 0)[1]
    with pytest.raises(ValueError, match="error 42"):
        envelope.unwrap_response(back, 55, 2)


@pytest.mark.parametrize(("api_key", "version"), [(55, 0), (55, 2), (57, 1), (80, 0), (81, 0)])
def test_unreachable_controller_answers_are_retriable_and_encodable(api_key: int, version: int) -> None:
    body = envelope.unreachable(api_key, version, 100)
    framing.encode_response(body, version, 1)
    if isinstance(body, messages.DescribeQuorumResponse):
        assert body.topics[0].partitions[0].error_code == 6
    else:
        assert body.error_code == (41 if api_key == 57 else 6)
    with pytest.raises(ValueError):
        envelope.unreachable(3, 12, 100)
