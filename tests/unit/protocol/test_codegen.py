"""Generated code is committed and must match what the specs generate today."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import codegen
from kafka_admin_kraft.protocol.spec import SpecError, parse_spec


def test_generated_files_are_fresh() -> None:
    stale = [path.name for path, content in codegen.outputs().items() if path.read_text() != content]
    assert stale == [], "run: python -m kafka_admin_kraft.protocol.codegen"


def test_spec_language_errors() -> None:
    for bad in ("request X versions=0 wat=1", "request X versions=0\n Field int32",
                "request X versions=0\n  Field int32 bogus", "request X versions=2-1"):
        with pytest.raises(SpecError):
            parse_spec(bad)


def test_struct_fields_lists_every_struct_once_message_and_common_first() -> None:
    (spec,) = parse_spec(
        "response R versions=0\n"
        "  Outer []Outer\n"
        "    Inner []Inner\n"
        "      Id int32\n"
        "    States []State\n"
        "  Other Other\n"
        "    Name string\n"
        "  common State\n"
        "    Value int64\n"
    )
    structs = spec.struct_fields()
    assert list(structs) == ["R", "State", "Outer", "Inner", "Other"]
    assert [f.name for f in structs["Outer"]] == ["Inner", "States"]
    assert [f.name for f in structs["Inner"]] == ["Id"]
    assert [f.name for f in structs["State"]] == ["Value"]
