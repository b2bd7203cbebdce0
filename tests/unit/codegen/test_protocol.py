"""The protocol package's generated modules: the committed ones match what the specs generate today,
the specs' comments reach the generated docstrings, the generated names follow from the specs,
not from the order things were generated in, and a decoded uuid field, kept as its wire bytes until
read, behaves as one built with a ``Uuid``."""

from __future__ import annotations

import re

import pytest

from kafka_admin_kraft.codegen import protocol as codegen
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.protocol.spec import SPEC_DIR, parse_spec


def test_generated_files_are_fresh() -> None:
    stale = [path.name for path, content in codegen.outputs().items() if path.read_text() != content]
    assert stale == [], "run: python -m kafka_admin_kraft.codegen"


def test_docstrings_carry_the_comments() -> None:
    response = messages.DescribeQuorumResponse
    source = codegen.outputs()[codegen.MESSAGES_DIR / "describe_quorum.py"]
    high_watermark = "Offset below which the log is committed; -1 while the new leader has none yet."
    assert f'"""{high_watermark} (int64, versions 0+)"""' in source
    assert response.__doc__ is not None and response.__doc__.startswith("DescribeQuorum (API 55)")
    assert response.PartitionData.__doc__ is not None
    assert response.PartitionData.__doc__.startswith("Quorum state per described partition.")


def test_function_names_come_from_the_first_version_of_a_layout() -> None:
    source = codegen.outputs()[codegen.MESSAGES_DIR / "describe_quorum.py"]
    assert ("DescribeQuorumResponse._ENCODERS = {0: _e_DescribeQuorumResponse_v0, "
            "1: _e_DescribeQuorumResponse_v1, 2: _e_DescribeQuorumResponse_v2, "
            "3: _e_DescribeQuorumResponse_v3}") in source
    assert ("DescribeQuorumRequest._ENCODERS = {0: _e_DescribeQuorumRequest_v0, "
            "1: _e_DescribeQuorumRequest_v0, 2: _e_DescribeQuorumRequest_v0, "
            "3: _e_DescribeQuorumRequest_v0}") in source
    assert "_F_iuqqq = _Packer('>i16sqqq')" in source


def test_a_new_version_renames_nothing() -> None:
    """One more DescribeQuorum version with a new layout adds functions and leaves the others alone."""
    text = (SPEC_DIR / "describe_quorum.kspec").read_text()
    grown = text.replace("versions=0-3", "versions=0-4").replace(
        "      Observers []ReplicaState\n", "      Observers []ReplicaState\n      Extra int32 v4+\n")
    before = _function_names(codegen.generate_module("describe_quorum", parse_spec(text)))
    after = _function_names(codegen.generate_module("describe_quorum", parse_spec(grown)))
    assert before < after
    assert {name for name in after - before if not name.endswith("_v4")} == set()


def _function_names(source: str) -> set[str]:
    functions = re.findall(r"^def (\w+)\(", source, flags=re.M)
    return set(functions) | set(re.findall(r"^(_F_\w+) =", source, flags=re.M))


def _replica(directory_id: Uuid) -> messages.DescribeQuorumResponse.ReplicaState:
    return messages.DescribeQuorumResponse.ReplicaState(replica_id=4, replica_directory_id=directory_id,
                                                        log_end_offset=9)


def test_a_decoded_uuid_is_made_on_first_read_and_stays_the_same_object() -> None:
    state = messages.DescribeQuorumResponse.ReplicaState
    directory_id = Uuid.random()
    body = _replica(directory_id).encode(2)
    decoded = state.decode(body, 2)
    assert decoded._replica_directory_id == directory_id.bytes  # the wire bytes, nothing made yet
    assert decoded.encode(2) == body  # encoded from them as they are
    first = decoded.replica_directory_id
    assert type(first) is Uuid and first == directory_id and decoded.replica_directory_id is first
    assert state.decode(_replica(ZERO_UUID).encode(2), 2).replica_directory_id is ZERO_UUID


def test_a_decoded_uuid_compares_prints_and_encodes_as_a_built_one() -> None:
    directory_id = Uuid.random()
    built = _replica(directory_id)
    body = built.encode(2)
    for read_first in (False, True):
        decoded = type(built).decode(body, 2)
        if read_first:
            assert decoded.replica_directory_id == directory_id
        assert decoded == built and built == decoded
        assert repr(decoded) == repr(built) and decoded.to_dict() == built.to_dict()
        assert decoded.encode(2) == body


def test_a_uuid_field_refuses_bytes() -> None:
    raw = Uuid.random().bytes
    with pytest.raises(TypeError, match="replica_directory_id takes a Uuid, not bytes"):
        _replica(raw)  # type: ignore[arg-type]
    state = _replica(ZERO_UUID)
    with pytest.raises(TypeError, match="replica_directory_id takes a Uuid, not bytes"):
        state.replica_directory_id = raw  # type: ignore[assignment]
    assert state.replica_directory_id is ZERO_UUID
