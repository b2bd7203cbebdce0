"""The generated decoders' fast paths (arrays of fixed-width structs, short compact strings and bytes)
read exactly what the helpers read: every spec module that gets one is also generated without them,
and both decode the same bytes (valid, with and without tagged fields, empty arrays, truncated and
corrupted) to equal values or to the same error."""

from __future__ import annotations

import random
import struct
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.codegen import protocol as codegen
from kafka_admin_kraft.errors import DecodeError
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.protocol.spec import load_specs
from unit.protocol.strategies import MessageStrategies


@cache
def _reference_modules() -> dict[str, dict[str, Any]]:
    """Per spec module that has a fast path: the same module generated without fast paths, loaded."""
    modules = {}
    for stem, specs in load_specs().items():
        fast = codegen.generate_module(stem, specs)
        reference = codegen.generate_module(stem, specs, fast_paths=False)
        if fast == reference:
            continue
        namespace: dict[str, Any] = {"__name__": f"reference_{stem}"}
        exec(compile(reference, f"<reference {stem}>", "exec"), namespace)
        modules[stem] = namespace
    return modules


FAST_SPECS = [spec for stem, specs in load_specs().items() if stem in _reference_modules() for spec in specs]
CASES = [(spec.name, version) for spec in FAST_SPECS for version in spec.version_list]
STRATEGIES = {spec.name: MessageStrategies(spec) for spec in FAST_SPECS}
REFERENCE = {spec.name: namespace[spec.name] for namespace in _reference_modules().values()
             for spec in FAST_SPECS if spec.name in namespace}


def _shape(value: object) -> object:
    """A value as plain data that tells every difference apart: types, float bits, uuid bytes."""
    if isinstance(value, Struct):
        fields = tuple(_shape(getattr(value, name)) for name in value._FIELDS)
        return value.NAME, fields, tuple(value.unknown_tagged_fields)
    if isinstance(value, list):
        return [_shape(item) for item in value]
    if isinstance(value, Uuid):
        return "uuid", value.bytes
    if isinstance(value, float):
        return "float", struct.pack(">d", value)
    return type(value).__name__, value


def _outcome(cls: type[Struct], body: bytes, version: int) -> object:
    try:
        return _shape(cls.decode(body, version))
    except DecodeError as exc:
        return "error", str(exc), exc.path, exc.offset


def _assert_same(name: str, body: bytes, version: int) -> object:
    fast = _outcome(getattr(messages, name), body, version)
    assert fast == _outcome(REFERENCE[name], body, version)
    return fast


def test_the_fast_path_is_generated_where_expected() -> None:
    assert {"describe_quorum", "fetch", "api_versions", "vote", "topic_record"} <= set(_reference_modules())
    source = codegen.outputs()[codegen.MESSAGES_DIR / "describe_quorum.py"]
    assert "_F_iuqqqx = _Packer('>i16sqqqx')" in source and "_F_iuqqqx.iter_unpack(" in source
    # Nodes carry strings: their array has no fast path, but the strings have theirs
    assert "cls_nodes" not in source
    assert "o.host = buf[pos + 1:pos + k].decode()" in source


@pytest.mark.parametrize(("name", "version"), CASES, ids=[f"{n}-v{v}" for n, v in CASES])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_fast_and_reference_decoders_agree(name: str, version: int, data: st.DataObject, seed: int) -> None:
    message = data.draw(STRATEGIES[name].message(version))
    body = message.encode(version)
    assert _assert_same(name, body, version) == _shape(message)
    for cut in range(len(body)):
        _assert_same(name, body[:cut], version)
    rng = random.Random(seed)
    for _ in range(40):
        mutated = bytearray(body)
        for _ in range(rng.randrange(1, 3)):
            if mutated:
                mutated[rng.randrange(len(mutated))] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF,
                                                                  rng.randrange(256)))
        _assert_same(name, bytes(mutated), version)


R = messages.DescribeQuorumResponse


def _large_quorum(tagged: int | None) -> Any:
    """205 replicas, as a leader of a large quorum answers; replica ``tagged`` carries an unknown tag."""
    def replica(replica_id: int) -> Any:
        tags = [(7, b"\x01\x02")] if replica_id == tagged else []
        return R.ReplicaState(replica_id=replica_id, replica_directory_id=Uuid.random(),
                              log_end_offset=1_000 + replica_id, last_fetch_timestamp=5,
                              last_caught_up_timestamp=4, unknown_tagged_fields=tags)

    partition = R.PartitionData(leader_id=1, leader_epoch=7, high_watermark=1_000,
                                current_voters=[replica(i) for i in range(1, 6)],
                                observers=[replica(i) for i in range(100, 300)] + [R.ReplicaState()])
    return R(topics=[R.TopicData(topic_name="__cluster_metadata", partitions=[partition])])


@pytest.mark.parametrize("tagged", [None, 3, 100, 250])
def test_large_quorum_with_and_without_tagged_elements(tagged: int | None) -> None:
    message = _large_quorum(tagged)
    for version in (2, 3):
        body = message.encode(version)
        assert _assert_same("DescribeQuorumResponse", body, version) == _shape(message)
    observers = R.decode(message.encode(2), 2).topics[0].partitions[0].observers
    assert observers[-1].replica_directory_id is R.ReplicaState().replica_directory_id  # ZERO_UUID
    assert len({id(o.unknown_tagged_fields) for o in observers}) == len(observers)


def test_truncated_array_reports_as_before() -> None:
    message = _large_quorum(None)
    body = message.encode(2)
    start = body.index(message.topics[0].partitions[0].observers[0].replica_directory_id.bytes) - 4
    # cut inside the observers array: the array no longer fits, the element decoder names the field
    cuts = ((len(body) - 50, "199].<tagged fields>"), (len(body) - 60, "199].LastFetchTimestamp"),
            (start + 45 * 100 + 7, "100].ReplicaDirectoryId"), (start + 45 * 150 + 2, "150].ReplicaId"))
    for cut, field in cuts:
        outcome = _assert_same("DescribeQuorumResponse", body[:cut], 2)
        assert isinstance(outcome, tuple) and outcome[0] == "error"
        assert outcome[2] == f"Topics[0].Partitions[0].Observers[{field}", outcome
    with pytest.raises(DecodeError, match=r"array of 201 elements cannot fit in the 20 bytes left"):
        R.decode(body[:start + 20], 2)
