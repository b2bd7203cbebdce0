"""Cross-check the record tables against Kafka's JSON schemas when the shared reference is present."""

from __future__ import annotations

from pathlib import Path

from kafka_admin_kraft.protocol import messages
from unit.protocol.test_spec_conformance import NEWER_THAN_REFERENCE, NOT_IN_REFERENCE
from unit.records.records_testlib import reference_schema


def test_metadata_record_api_keys_match_the_schemas(shared_dir: Path) -> None:
    for api_key in messages.METADATA_RECORD_NAMES:
        cls = messages.metadata_record_class(api_key)
        if cls.NAME in NOT_IN_REFERENCE:
            continue
        schema = reference_schema(shared_dir, cls.NAME)
        assert schema["type"] == "metadata"
        assert schema["apiKey"] == api_key
        low, _, high = str(schema["validVersions"]).partition("-")
        ours = (cls.VERSIONS[0], NEWER_THAN_REFERENCE.get(cls.NAME, cls.VERSIONS[1]))  # v4 of 4.3 and later
        assert (int(low), int(high or low)) == ours
