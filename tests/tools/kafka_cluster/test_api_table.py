"""Kafka 4.4's API key table (``cli/kafka_cluster/api_table.py``) against the specs the project speaks:
the same names, listeners and version ranges, but where Kafka 4.4 and the project's codec differ for a
stated reason."""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft_cli.kafka_cluster.api_table import API_KEYS, BY_KEY

DIFFERENT = {
    ApiKey.FETCH: ((0, 18), (4, 18)),  # the codec still reads Kafka 3.9's v0-3; KIP-896 removed them in 4.0
    # the codec still reads Kafka 3.9's v0 of the ACL APIs; KIP-896 removed it in 4.0
    ApiKey.DESCRIBE_ACLS: ((0, 3), (1, 3)),
    ApiKey.CREATE_ACLS: ((0, 3), (1, 3)),
    ApiKey.DELETE_ACLS: ((0, 3), (1, 3)),
    ApiKey.DESCRIBE_QUORUM: ((0, 3), (0, 2)),  # v3 is the committed-voters proposal, never in Kafka
}


def test_the_table_agrees_with_the_projects_specs() -> None:
    for key in ApiKey:
        cls = messages.request_class(key)
        info = BY_KEY[key]
        assert info.name == cls.NAME.removesuffix("Request")
        assert info.broker == ("broker" in cls.LISTENERS), info
        ours, kafkas = DIFFERENT.get(key, (cls.VERSIONS, cls.VERSIONS))
        assert (cls.VERSIONS, (info.oldest, info.latest)) == (ours, kafkas), info


def test_every_key_once_in_order_from_produce_to_unregister_controller() -> None:
    assert [info.key for info in API_KEYS] == list(range(95))
    assert len({info.name for info in API_KEYS}) == 95
    removed = [info.name for info in API_KEYS if info.latest < info.oldest]
    assert removed == ["LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown"]
    assert not any(info.broker for info in API_KEYS if info.latest < info.oldest)
