"""The specs' comments: every field is documented in the project's own words (never one of Kafka's
``about`` texts) and a comment sits right above the field it documents; the generated names of API
keys, record types and error codes follow from the specs and the error table."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.errors import ErrorCode, KafkaStorageError, UnknownServerError, error_for_code
from kafka_admin_kraft.protocol.api_keys import ApiKey, MetadataRecordType
from kafka_admin_kraft.protocol.spec import FieldSpec, MessageSpec, SpecError, all_messages, parse_spec


def _kafka_abouts(spec_dir: Path) -> dict[tuple[str, ...], str]:
    """(message, field path...) -> Kafka's ``about``; common struct fields under ``<StructName>``."""
    abouts: dict[tuple[str, ...], str] = {}

    def walk(path: tuple[str, ...], fields: list[dict[str, Any]]) -> None:
        for spec in fields:
            here = (*path, spec["name"])
            abouts[here] = " ".join(spec.get("about", "").split())
            walk(here, spec.get("fields", []))

    for file in sorted(spec_dir.glob("*.json")):
        data = json.loads(re.sub(r"^\s*//.*$", "", file.read_text(), flags=re.M))
        walk((data["name"],), data["fields"])
        for common in data.get("commonStructs", []):
            walk((data["name"], f"<{common['name']}>"), common["fields"])
    return abouts


def _normalised(text: str) -> str:
    """Case, spacing and a closing full stop do not make a sentence our own."""
    return " ".join(text.split()).lower().removesuffix(".")


def _ours(message: MessageSpec) -> dict[tuple[str, ...], str]:
    abouts: dict[tuple[str, ...], str] = {}

    def walk(path: tuple[str, ...], fields: list[FieldSpec]) -> None:
        for spec in fields:
            abouts[(*path, spec.name)] = spec.about
            walk((*path, spec.name), spec.fields)

    walk((message.name,), message.fields)
    for common in message.common_structs:
        walk((message.name, f"<{common.name}>"), common.fields)
    return abouts


def test_every_field_is_documented() -> None:
    undocumented = [".".join(path) for message in all_messages() for path, about in _ours(message).items()
                    if not about]
    assert undocumented == []


def test_every_field_kafka_also_specifies_is_documented(shared_dir: Path) -> None:
    kafka = _kafka_abouts(shared_dir / "kafka-spec" / "messages")
    shared = [(path, about) for message in all_messages() for path, about in _ours(message).items()
              if path in kafka]
    assert [".".join(path) for path, about in shared if not about.strip()] == []
    assert len(shared) > 350, "field paths no longer line up with Kafka's specs"


def test_no_comment_is_a_kafka_about_text(shared_dir: Path) -> None:
    """Kafka's specs are reference data: a comment says it in our words, never in theirs."""
    spec_dirs = [shared_dir / "kafka-spec" / "messages", shared_dir / "kafka-spec" / "messages-3.9"]
    theirs = {_normalised(about) for spec_dir in spec_dirs for about in _kafka_abouts(spec_dir).values()
              if about}
    assert len(theirs) > 200
    ours = [(".".join(path), about) for message in all_messages() for path, about in _ours(message).items()]
    ours += [(message.name, message.doc) for message in all_messages()]
    assert [f"{where}: {text}" for where, text in ours if _normalised(text) in theirs] == []


@pytest.mark.parametrize("text", [
    "request X versions=0\n  # dangling",
    "request X versions=0\n    # wrong indentation\n  Field int32",
    "request X versions=0\n  Field int32\n  # about\n  common S\n    A int32",
])
def test_misplaced_comments_are_spec_errors(text: str) -> None:
    with pytest.raises(SpecError, match="comment"):
        parse_spec(text)


def test_comment_lines_join() -> None:
    [message] = parse_spec("request X versions=0\n  # The first\n  # and second line.\n  Field int32")
    assert message.fields[0].about == "The first and second line."


def test_names_for_api_keys_record_types_and_error_codes() -> None:
    for message in all_messages():
        if message.kind == "request":
            assert ApiKey[_upper(message.name.removesuffix("Request"))] == message.api_key
        if message.kind == "metadata":
            assert MetadataRecordType[_upper(message.name)] == message.api_key
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER == 6 and ErrorCode(6).retriable
    assert ErrorCode.DUPLICATE_VOTER.exception.__name__ == "DuplicateVoterError"
    assert ErrorCode.NONE.message == "" and ErrorCode.NONE.code == 0


def _upper(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def test_no_doubled_error_suffix_and_the_old_names_still_import() -> None:
    from kafka_admin_kraft import errors

    assert not [name for name in dir(errors) if name.endswith("ErrorError")
                and getattr(errors, name).__name__.endswith("ErrorError")]
    assert errors.UnknownServerErrorError is UnknownServerError  # type: ignore[attr-defined]
    assert errors.KafkaStorageErrorError is KafkaStorageError  # type: ignore[attr-defined]
    assert type(error_for_code(-1)) is UnknownServerError
    assert isinstance(error_for_code(4242), UnknownServerError)
