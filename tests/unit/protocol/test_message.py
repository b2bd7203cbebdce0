"""The base class of generated messages: unknown tagged fields behave as a list of their own on every
struct, whether it was built or decoded, although decoders make none while there are none."""

from __future__ import annotations

import copy

from kafka_admin_kraft.protocol import messages

R = messages.DescribeQuorumResponse


def _decoded() -> R:
    message = R(topics=[R.TopicData(topic_name="t", partitions=[R.PartitionData(
        current_voters=[R.ReplicaState(replica_id=1), R.ReplicaState(replica_id=2)])])])
    return R.decode(message.encode(2), 2)


def test_each_struct_has_a_list_of_its_own() -> None:
    decoded = _decoded()
    voters = decoded.topics[0].partitions[0].current_voters
    assert voters[0].unknown_tagged_fields == [] and voters[1].unknown_tagged_fields == []
    voters[0].unknown_tagged_fields.append((9, b"\x01"))
    assert voters[0].unknown_tagged_fields == [(9, b"\x01")]
    assert voters[1].unknown_tagged_fields == [] and decoded.unknown_tagged_fields == []
    assert R.decode(decoded.encode(2), 2).topics[0].partitions[0].current_voters[0].unknown_tagged_fields == [
        (9, b"\x01")]


def test_none_and_an_empty_list_compare_equal() -> None:
    built, decoded = R.ReplicaState(), R.ReplicaState.decode(R.ReplicaState().encode(2), 2)
    assert built == decoded and decoded == R.ReplicaState(unknown_tagged_fields=[])
    assert decoded != R.ReplicaState(unknown_tagged_fields=[(1, b"")])
    built.unknown_tagged_fields = [(1, b"")]
    assert built == R.ReplicaState(unknown_tagged_fields=[(1, b"")]) and built != decoded


def test_copies_keep_the_tagged_fields() -> None:
    decoded = _decoded()
    decoded.unknown_tagged_fields = [(4, b"x")]
    assert copy.copy(decoded).unknown_tagged_fields == [(4, b"x")]
    assert copy.deepcopy(decoded) == decoded
