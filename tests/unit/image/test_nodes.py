"""The shell's tree: Kafka's node names and layout (``MetadataImageNode`` and its children,
``RootShellNode``, ``LocalShellNode``)."""

from __future__ import annotations

from kafka_admin_kraft.image.model import MetadataImage
from kafka_admin_kraft.image.nodes import (
    config_resource_name,
    lookup,
    quota_entity_name,
    root_node,
    walk,
)
from kafka_admin_kraft.image.replay import ImageBuilder
from kafka_admin_kraft.protocol.primitives import Uuid
from unit.image.image_testlib import (
    TOPIC,
    acl,
    batches,
    broker,
    client_quota,
    config,
    controller,
    delegation_token,
    feature,
    partition,
    producer_ids,
    scram,
    topic,
)

ACL = Uuid.from_ints(7, 7)


def _image() -> MetadataImage:
    builder = ImageBuilder()
    groups = [
        [feature("metadata.version", 33), feature("group.version", 1)],
        [broker(1)],
        [controller(3)],
        [topic("orders"), partition(0, [1])],
        [config(2, "orders", "retention.ms", "1")],
        [config(4, "", "log.cleaner.threads", "2")],
        [client_quota([("user", "a(b)")], "producer_byte_rate", 1e7)],
        [producer_ids(1000)],
        [acl(ACL)],
        [scram("alice", b"s")],
        [delegation_token("tok")],
    ]
    for batch in batches(groups):
        builder.apply_batch(batch)
    return builder.image


def test_the_layout_is_kafkas() -> None:
    root = root_node(_image(), lambda: "0.1.0")
    paths = [path for path, node in walk(root) if not node.is_directory]
    assert paths == [
        "/image/acls/byId/" + str(ACL),
        "/image/clientQuotas/user(a\\(b\\))/producer_byte_rate",
        "/image/cluster/brokers/1",
        "/image/cluster/controllers/3",
        "/image/configs/BROKER/log.cleaner.threads",
        "/image/configs/TOPIC:orders/retention.ms",
        "/image/delegationToken/tok",
        "/image/features/finalized_group.version",
        "/image/features/metadataVersion",
        "/image/producerIds/nextProducerId",
        "/image/provenance",
        "/image/scram/SCRAM-SHA-256/alice",
        f"/image/topics/byId/{TOPIC}/0",
        f"/image/topics/byId/{TOPIC}/id",
        f"/image/topics/byId/{TOPIC}/name",
        "/image/topics/byName/orders/0",
        "/image/topics/byName/orders/id",
        "/image/topics/byName/orders/name",
        "/local/commitId",
        "/local/version",
    ]
    assert root.child_names() == ["local", "image"]
    scram_node = lookup(root, "/image/scram")
    assert scram_node is not None and scram_node.child_names() == ["SCRAM-SHA-256", "SCRAM-SHA-512"]


def test_leaf_texts() -> None:
    root = root_node(_image(), lambda: "0.1.0")

    def text(path: str) -> str:
        node = lookup(root, path)
        assert node is not None and not node.is_directory
        return node.text()

    assert text("/image/features/metadataVersion") == "Optional[4.4-IV2]"
    assert text("/image/clientQuotas/user(a\\(b\\))/producer_byte_rate") == "1.0E7"
    assert text("/image/topics/byName/orders/id") == str(TOPIC)
    assert text("/local/version") == "0.1.0"
    assert lookup(root, "/image/features/finalized_missing") is not None  # Kafka answers 0 for any name
    assert text("/image/features/finalized_missing") == "0"
    assert lookup(root, "/image/topics/byName/orders/x") is None
    assert lookup(root, "/image/cluster/brokers/1/deeper") is None


def test_empty_image() -> None:
    root = root_node(MetadataImage(), lambda: "v")
    node = lookup(root, "/image/features/metadataVersion")
    assert node is not None and node.text() == "Optional.empty" and node.value() is None


def test_names_of_quota_entities_and_config_resources() -> None:
    assert quota_entity_name((("client-id", "c"), ("user", "u"))) == "clientId(c)_user(u)"
    assert quota_entity_name((("ip", "1.2.3.4"),)) == "ip(1.2.3.4)"
    assert quota_entity_name((("user", None),)) == ""  # the default entity: Kafka prints nothing for it
    assert quota_entity_name((("group", "g"),)) is None
    assert config_resource_name(8, "1") == "BROKER_LOGGER:1"
    assert config_resource_name(99, "x") == "UNKNOWN:x"
