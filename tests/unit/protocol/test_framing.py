"""Headers and frames: header version choice per API and version, ApiVersions exceptions, limits."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.errors import UndefinedVersionError
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.framing import FrameSplitter, FrameTooLargeError


@pytest.mark.parametrize(("api_key", "version", "request_header", "response_header"), [
    (18, 0, 1, 0), (18, 2, 1, 0), (18, 3, 2, 0), (18, 4, 2, 0),   # ApiVersions responses: always v0
    (53, 0, 1, 0), (53, 1, 2, 1), (54, 0, 1, 0), (54, 1, 2, 1),   # Begin/EndQuorumEpoch v0 classic
    (17, 0, 1, 0), (17, 1, 1, 0),                                 # SaslHandshake never flexible
    (36, 1, 1, 0), (36, 2, 2, 1), (1, 11, 1, 0), (1, 12, 2, 1), (3, 8, 1, 0), (3, 9, 2, 1),
    (55, 0, 2, 1), (80, 1, 2, 1), (81, 0, 2, 1), (82, 0, 2, 1), (57, 2, 2, 1), (60, 0, 2, 1),
])
def test_header_versions(api_key: int, version: int, request_header: int, response_header: int) -> None:
    assert framing.request_header_version(api_key, version) == request_header
    assert framing.response_header_version(api_key, version) == response_header


def test_request_frame_bytes() -> None:
    body = messages.DescribeQuorumRequest(topics=[messages.DescribeQuorumRequest.TopicData(
        topic_name="__cluster_metadata",
        partitions=[messages.DescribeQuorumRequest.PartitionData(partition_index=0)])])
    frame = framing.encode_request(body, 2, correlation_id=7, client_id="adm")
    header = (b"\x00\x37" b"\x00\x02" b"\x00\x00\x00\x07"   # key 55, version 2, correlation id 7
              b"\x00\x03adm"                               # ClientId: classic string even in v2
              b"\x00")                                     # header tagged fields
    payload = (b"\x02" b"\x13__cluster_metadata" b"\x02" b"\x00\x00\x00\x00" b"\x00" b"\x00" b"\x00")
    assert frame == len(header + payload).to_bytes(4, "big") + header + payload
    decoded = framing.decode_request(frame[4:])
    assert decoded.header.client_id == "adm" and decoded.header.correlation_id == 7
    assert decoded.header_version == 2 and decoded.body == body


def test_response_frame_round_trip() -> None:
    body = messages.ApiVersionsResponse(error_code=35, api_keys=[
        messages.ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=4)])
    frame = framing.encode_response(body, 4, correlation_id=99)
    # Response header v0 (no tagged section) even though ApiVersions v4 is flexible.
    assert frame[4:8] == b"\x00\x00\x00\x63" and frame[8:10] == b"\x00\x23"
    assert framing.peek_correlation_id(frame[4:]) == 99
    assert framing.decode_response(frame[4:], 18, 4) == (99, body)


def test_unknown_api_versions_version_still_has_a_header() -> None:
    header = messages.RequestHeader(request_api_key=18, request_api_version=9, correlation_id=3,
                                    client_id="x")
    frame = header.encode(2) + b"\x01\x02\x03"  # a body we cannot know
    decoded = framing.decode_request(frame)
    assert decoded.body is None and decoded.header.correlation_id == 3


def test_unknown_api_key_and_version() -> None:
    with pytest.raises(UndefinedVersionError, match="unknown api key 999"):
        framing.decode_request(b"\x03\xe7\x00\x00\x00\x00\x00\x01\xff\xff")
    with pytest.raises(UndefinedVersionError):
        framing.decode_request(b"\x00\x37\x00\x09\x00\x00\x00\x01\xff\xff\x00")


def test_frame_splitter() -> None:
    splitter = FrameSplitter(max_frame_bytes=10)
    assert splitter.feed(b"\x00\x00\x00\x03ab") == []
    assert splitter.pending == 6
    assert splitter.feed(b"c\x00\x00\x00\x00\x00\x00") == [b"abc", b""]
    assert splitter.pending == 2
    with pytest.raises(FrameTooLargeError):
        FrameSplitter(max_frame_bytes=10).feed(b"\x00\x00\x00\x0b")
    with pytest.raises(FrameTooLargeError):
        FrameSplitter().feed(b"\xff\xff\xff\xff")
