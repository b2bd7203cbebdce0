"""Kafka's error table as data and one exception class per code."""

from __future__ import annotations

from pathlib import Path

from kafka_admin_kraft import errors
from kafka_admin_kraft.errors import ERRORS, KafkaApiError, error_for_code

NEWER_THAN_REFERENCE = {136}
"""Codes newer than the reference table (Kafka 4.2): CONTROLLER_ID_NOT_REGISTERED (Kafka 4.4, KIP-1312)."""


def test_table_matches_kafka(shared_dir: Path) -> None:
    rows = [line.rstrip("\n").split("\t")
            for line in (shared_dir / "reference" / "kafka-errors.tsv").read_text().splitlines()
            if line and not line.startswith("#")][1:]
    assert {int(r[0]) for r in rows} == set(ERRORS) - NEWER_THAN_REFERENCE
    for code, name, retriable, java_exception, message in rows:
        entry = ERRORS[int(code)]
        assert (entry.name, entry.retriable, entry.java_exception, entry.message) == (
            name, retriable == "yes", java_exception, message)
        assert entry.exception.java_exception == (java_exception or "UnknownServerException")


def test_exception_per_code() -> None:
    error = error_for_code(6, "not the leader")
    assert isinstance(error, errors.NotLeaderOrFollowerError)  # type: ignore[attr-defined]
    assert error.retriable and error.code == 6 and error.message == "not the leader"
    assert str(error) == "[NOT_LEADER_OR_FOLLOWER] not the leader"
    duplicate = error_for_code(126)
    assert type(duplicate).__name__ == "DuplicateVoterError" and not duplicate.retriable
    assert duplicate.message == ERRORS[126].message
    assert len({entry.exception for entry in ERRORS.values()}) == len(ERRORS)
    assert all(issubclass(entry.exception, KafkaApiError) for entry in ERRORS.values())


def test_unknown_code() -> None:
    error = error_for_code(4242)
    assert isinstance(error, KafkaApiError) and error.code == 4242 and "4242" in str(error)
