"""Bad bytes raise the codec's own errors, naming the field and the byte offset; a fuzz run over
mutated messages and frames never sees any other exception."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.errors import DecodeError, EncodeError, ProtocolError, UndefinedVersionError
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.spec import all_messages
from unit.protocol.strategies import MessageStrategies

R = messages.DescribeQuorumResponse


def _quorum() -> R:
    state = R.ReplicaState(replica_id=1, log_end_offset=10)
    return R(topics=[R.TopicData(topic_name="__cluster_metadata", partitions=[R.PartitionData(
        leader_id=1, leader_epoch=2, high_watermark=10, current_voters=[state, state])])])


def test_truncated_body_names_field_and_offset() -> None:
    body = _quorum().encode(0)
    # ErrorCode(2) Topics(1) TopicName(1+18) Partitions(1) PartitionIndex(4) ErrorCode(2)
    # LeaderId(4) LeaderEpoch(4) HighWatermark(8) CurrentVoters(1) [ReplicaId(4) LogEndOffset(8) tags(1)]
    with pytest.raises(DecodeError) as info:
        R.decode(body[:52], 0)
    assert info.value.path == "Topics[0].Partitions[0].CurrentVoters[0].LogEndOffset"
    assert info.value.offset == 50
    assert "DescribeQuorumResponse v0" in str(info.value)


def test_trailing_bytes_are_refused() -> None:
    with pytest.raises(DecodeError, match="1 bytes left after the last field"):
        R.decode(_quorum().encode(0) + b"\x00", 0)


def test_oversized_lengths() -> None:
    body = bytearray(_quorum().encode(0))
    body[3] = 0x7F  # TopicName compact length (byte 3) claims 126 bytes; its text starts at byte 4
    with pytest.raises(DecodeError, match="string of 126 bytes exceeds the 72 bytes left") as info:
        R.decode(bytes(body), 0)
    assert info.value.path == "Topics[0].TopicName" and info.value.offset == 4


def test_bad_varint_in_array_length() -> None:
    with pytest.raises(DecodeError, match="varint"):
        R.decode(b"\x00\x00" + b"\xff" * 6, 0)


def test_invalid_utf8() -> None:
    body = bytearray(_quorum().encode(0))
    body[4] = 0xFF
    with pytest.raises(DecodeError, match="not UTF-8"):
        R.decode(bytes(body), 0)


def test_unknown_version() -> None:
    with pytest.raises(UndefinedVersionError, match="not 9"):
        R.decode(b"", 9)
    with pytest.raises(UndefinedVersionError):
        _quorum().encode(-1)


def test_known_tag_on_wrong_version_is_refused() -> None:
    # FetchRequest ReplicaDirectoryId is tag 0 of FetchPartition from v17; in v12 tag 0 is unknown there
    # but ClusterId (tag 0 at top level) exists from v12: a top-level tag-0 value must decode as ClusterId.
    request = messages.FetchRequest(cluster_id="c", max_wait_ms=1)
    decoded = messages.FetchRequest.decode(request.encode(12), 12)
    assert decoded.cluster_id == "c" and decoded.unknown_tagged_fields == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_fuzz_mutated_bodies(data: st.DataObject, seed: int) -> None:
    spec = data.draw(st.sampled_from(all_messages()))
    version = data.draw(st.sampled_from(spec.version_list))
    strategies = MessageStrategies(spec)
    body = data.draw(strategies.message(version))
    encoded = body.encode(version)
    rng = random.Random(seed)
    for _ in range(100):
        mutated = bytearray(encoded)
        action = rng.randrange(4)
        if action == 0 and mutated:
            del mutated[rng.randrange(len(mutated)):]
        elif action == 1 and mutated:
            mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8)
        elif action == 2:
            mutated[rng.randrange(len(mutated) + 1):0] = rng.randbytes(rng.randrange(1, 6))
        else:
            for _ in range(rng.randrange(1, 4)):
                if mutated:
                    mutated[rng.randrange(len(mutated))] = rng.choice((0x00, 0x7F, 0x80, 0xFF))
        with contextlib.suppress(ProtocolError):
            strategies.cls.decode(bytes(mutated), version)


def test_fuzz_request_frames() -> None:
    """Random and mutated request frames through the server-side decoder: only ProtocolError."""
    rng = random.Random(7)
    base = [framing.encode_request(_request(key), version, correlation_id=1, client_id="fuzz")[4:]
            for key, version in ((55, 2), (18, 3), (18, 0), (80, 1), (57, 1), (1, 17), (53, 0), (29, 1),
                                 (30, 3), (31, 2), (64, 0), (94, 0))]
    for _ in range(4000):
        frame = bytearray(rng.choice(base))
        for _ in range(rng.randrange(1, 4)):
            if rng.random() < 0.3:
                del frame[rng.randrange(len(frame) + 1):]
            elif frame:
                frame[rng.randrange(len(frame))] = rng.randrange(256)
        with contextlib.suppress(ProtocolError):
            framing.decode_request(bytes(frame))
    for _ in range(2000):
        with contextlib.suppress(ProtocolError):
            framing.decode_request(rng.randbytes(rng.randrange(0, 40)))


def _request(api_key: int) -> Struct:
    cls = messages.request_class(api_key)
    return cls()


def test_encode_error_names_the_member_out_of_range() -> None:
    """Fixed-width fields are packed together; the error still names the one that does not fit."""
    bad = R.ReplicaState(replica_id=1, log_end_offset=1 << 63, last_fetch_timestamp=5)
    message = R(topics=[R.TopicData(partitions=[R.PartitionData(observers=[R.ReplicaState(), bad])])])
    with pytest.raises(EncodeError) as info:
        message.encode(1)
    assert info.value.path == "Topics[0].Partitions[0].Observers[1].LogEndOffset"
    port = R(nodes=[R.Node(listeners=[R.Listener(port=65536)])])
    with pytest.raises(EncodeError, match=r"Nodes\[0\].Listeners\[0\].Port"):
        port.encode(2)
