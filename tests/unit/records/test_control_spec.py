"""Cross-check the control record types against Kafka's JSON schemas when the shared reference is present."""

from __future__ import annotations

from pathlib import Path

from kafka_admin_kraft.records import ControlRecordType
from kafka_admin_kraft.records.control import SCHEMA_CLASSES
from unit.records.records_testlib import reference_schema


def test_control_values_are_flexible_at_version_zero(shared_dir: Path) -> None:
    assert set(SCHEMA_CLASSES) == {ControlRecordType.LEADER_CHANGE, ControlRecordType.SNAPSHOT_HEADER,
                                   ControlRecordType.SNAPSHOT_FOOTER, ControlRecordType.KRAFT_VERSION,
                                   ControlRecordType.KRAFT_VOTERS}
    for cls in SCHEMA_CLASSES.values():
        schema = reference_schema(shared_dir, cls.NAME)
        assert schema["type"] == "data"
        assert schema["flexibleVersions"] == "0+"
        assert str(schema["validVersions"]).startswith("0")
