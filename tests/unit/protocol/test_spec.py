"""The spec language: what it refuses, and the walk over a message's structs."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol.spec import SpecError, parse_spec


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


def test_structs_walk_depth_first_with_common_structs_where_first_used() -> None:
    (spec,) = parse_spec(
        "response R versions=0\n"
        "  Outer []Outer\n"
        "    Inner []Inner\n"
        "      Id int32\n"
        "    States []State\n"
        "  # The other struct.\n"
        "  Other Other\n"
        "    Name string\n"
        "  common State\n"
        "    Value int64\n"
        "  common Unused\n"
        "    Value int64\n"
    )
    structs = spec.structs()
    assert [struct.name for struct in structs] == ["R", "Outer", "Inner", "State", "Other"]
    assert structs[-1].doc == "The other struct."
    assert structs[3] is spec.common_structs[0]


@pytest.mark.parametrize("text, error", [
    ("request X versions=0\n  A A\n    Id int32\n  B A\n    Id int32", "struct A is defined twice"),
    ("request X versions=0\n  A []Missing", "unknown struct type Missing"),
])
def test_structs_walk_refuses_a_struct_declared_twice_or_never(text: str, error: str) -> None:
    (spec,) = parse_spec(text)
    with pytest.raises(SpecError, match=error):
        spec.structs()


def test_a_field_is_tagged_in_the_versions_its_tag_names() -> None:
    [message] = parse_spec("request X versions=0-2 flexible=1+\n  A int32 tag=0@2+\n  B int32")
    tagged, plain = message.fields
    assert [tagged.tagged_at(version) for version in (0, 1, 2)] == [False, False, True]
    assert not plain.tagged_at(2)
