"""``record_json`` writes what the standard library's encoder writes for a message's fields, for
every message spec at every version, decoded or built, and for values a spec does not describe."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from unit.protocol.strategies import MessageStrategies

from kafka_admin_kraft.pipeline.record_json import record_json
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.protocol.spec import all_messages


def expected(value: object) -> str:
    """The documented form, from ``Struct.to_dict`` and the standard library's encoder."""
    plain = value.to_dict() if isinstance(value, Struct) else value
    return json.dumps(plain, separators=(",", ":"), default=str)


SPECS = [MessageStrategies(spec) for spec in all_messages()]


@pytest.mark.parametrize("strategies", SPECS, ids=[s.spec.name for s in SPECS])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_message_as_the_standard_encoder_writes_it(
    strategies: MessageStrategies, data: st.DataObject
) -> None:
    version = data.draw(st.sampled_from(strategies.spec.version_list))
    message = data.draw(strategies.message(version))
    decoded = strategies.cls.decode(message.encode(version), version)
    assert record_json(message) == expected(message)
    assert record_json(decoded) == expected(decoded)


def test_the_written_text_is_json_of_the_fields() -> None:
    voter = messages.VotersRecord.Voter(
        voter_id=1,
        voter_directory_id=Uuid(bytes(range(16))),
        endpoints=[messages.VotersRecord.Endpoint(name="CONTROLLER", host="h\u00e9\"st", port=9093)],
    )
    text = record_json(messages.VotersRecord(voters=[voter]))
    assert json.loads(text) == {
        "version": 0,
        "voters": [
            {
                "voter_id": 1,
                "voter_directory_id": "AAECAwQFBgcICQoLDA0ODw",
                "endpoints": [{"name": "CONTROLLER", "host": "h\u00e9\"st", "port": 9093}],
                "k_raft_version_feature": {"min_supported_version": 0, "max_supported_version": 0},
            }
        ],
    }
    assert "\\u00e9" in text  # ASCII only, as the standard encoder writes by default


@pytest.mark.parametrize(
    "odd",
    [
        {"partition_id": True},  # a bool where the spec says int32
        {"replicas": (1, 2)},  # a tuple where it says a list
        {"isr": [True, 2]},
        {"eligible_leader_replicas": None, "last_known_elr": [3]},
        {"topic_id": "not-an-id"},
        {"directories": [Uuid(bytes(16)), "text"]},
    ],
)
def test_values_the_spec_does_not_describe_go_through_the_standard_encoder(odd: dict[str, object]) -> None:
    message = messages.PartitionRecord(partition_id=0, topic_id=Uuid(bytes(16)), replicas=[1], isr=[1])
    for name, value in odd.items():
        setattr(message, name, value)
    assert record_json(message) == expected(message)


def test_values_without_a_spec() -> None:
    @dataclasses.dataclass
    class Marker:
        version: int

    for value in ({"api_key": 7, "body_hex": "00"}, [1, "a", None], Marker(1), "text"):
        assert record_json(value) == expected(value)


def test_a_struct_class_met_before_its_message_is_written_by_its_own_writer() -> None:
    endpoint = messages.VotersRecord.Endpoint(name="CONTROLLER", host="h", port=9093)
    assert record_json(endpoint) == expected(endpoint)
    assert record_json(messages.VotersRecord(voters=[])) == expected(messages.VotersRecord(voters=[]))


def test_a_class_named_like_a_message_gets_the_general_encoder() -> None:
    @dataclasses.dataclass
    class TopicRecord:  # not the codec's class, whatever its name
        name: str

    assert record_json(TopicRecord("t")) == expected(TopicRecord("t"))
