"""Cross-check the record tables against Kafka's JSON schemas when the shared reference is present."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records.control import SCHEMA_CLASSES, ControlRecordType
from unit.protocol.test_spec_conformance import NOT_IN_REFERENCE


def _schema(shared_dir: Path, name: str) -> dict[str, object]:
    text = (shared_dir / "kafka-spec" / "messages" / f"{name}.json").read_text()
    return dict(json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)))


def test_metadata_record_api_keys_match_the_schemas(shared_dir: Path) -> None:
    for api_key in messages.METADATA_RECORD_NAMES:
        cls = messages.metadata_record_class(api_key)
        if cls.NAME in NOT_IN_REFERENCE:
            continue
        schema = _schema(shared_dir, cls.NAME)
        assert schema["type"] == "metadata"
        assert schema["apiKey"] == api_key
        low, _, high = str(schema["validVersions"]).partition("-")
        assert (int(low), int(high or low)) == cls.VERSIONS


def test_control_values_are_flexible_at_version_zero(shared_dir: Path) -> None:
    assert set(SCHEMA_CLASSES) == {ControlRecordType.LEADER_CHANGE, ControlRecordType.SNAPSHOT_HEADER,
                                   ControlRecordType.SNAPSHOT_FOOTER, ControlRecordType.KRAFT_VERSION,
                                   ControlRecordType.KRAFT_VOTERS}
    for cls in SCHEMA_CLASSES.values():
        schema = _schema(shared_dir, cls.NAME)
        assert schema["type"] == "data"
        assert schema["flexibleVersions"] == "0+"
        assert str(schema["validVersions"]).startswith("0")
