"""The protocol package's generated modules: the committed ones match what the specs generate today,
the specs' comments reach the generated docstrings, and the generated names follow from the specs,
not from the order things were generated in."""

from __future__ import annotations

import re

from kafka_admin_kraft.codegen import protocol as codegen
from kafka_admin_kraft.protocol import messages
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
