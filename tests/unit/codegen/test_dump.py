"""The dump package's generated module: committed as the specs generate it today, with Kafka's names
of the record types."""

from __future__ import annotations

from kafka_admin_kraft.codegen import dump


def test_record_type_names_are_kafkas_constants() -> None:
    assert [dump.type_name(name) for name in ("RegisterBrokerRecord", "ZkMigrationStateRecord",
                                              "BrokerRegistrationChangeRecord", "KRaftVersionRecord")] == [
        "REGISTER_BROKER_RECORD", "ZK_MIGRATION_STATE_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD",
        "KRAFT_VERSION_RECORD"]


def test_generated_module_is_up_to_date() -> None:
    stale = [path.name for path, content in dump.outputs().items() if path.read_text() != content]
    assert stale == [], "run: python -m kafka_admin_kraft.codegen"


def test_every_metadata_record_of_the_tree_once_by_api_key() -> None:
    records = dump.metadata_specs()
    keys = [record.api_key for record in records]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    names = {record.name for record in records}
    assert {"PartitionRecord", "ConfigRecord", "PartitionChangeRecord"} <= names  # modelled or not
