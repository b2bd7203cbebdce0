"""The metadata shell's tree over an image: Kafka's node names and layout, Kafka's leaf text.

The layout is Kafka's (``org.apache.kafka.image.node`` and the shell's ``RootShellNode`` and
``LocalShellNode``; the newest copies found, Kafka trunk):

::

    /local/version, /local/commitId                       LocalShellNode
    /image/provenance                                     ProvenanceNode (a leaf)
    /image/features/metadataVersion, finalized_<name>     FeaturesImageNode
    /image/cluster/brokers/<id>, controllers/<id>         ClusterImageNode and its two children
    /image/topics/byName/<name>/{name,id,<partition>}     TopicsImageNode, TopicImageNode
    /image/topics/byId/<id>/...                           the same topic nodes, by id
    /image/configs/<TYPE>[:<name>]/<key>                  ConfigurationsImageNode (``BROKER`` alone
                                                          for the default resource of a type)
    /image/clientQuotas/<entity>/<key>                    ClientQuotasImageNode: ``user(alice)``,
                                                          ``clientId(c)_user(u)``, ``\\``-escaped
    /image/producerIds/nextProducerId                     ProducerIdsImageNode
    /image/acls/byId/<id>                                 AclsImageNode, AclsImageByIdNode
    /image/scram/<mechanism>/<user>                       ScramImageNode: both mechanisms always
    /image/delegationToken/<token id>                     DelegationTokenImageNode

``/image/features/metadataVersion`` prints ``FeaturesImage.metadataVersion()``, which Kafka 4 holds
as an ``Optional``: ``Optional[4.4-IV2]``, or ``Optional.empty`` for an empty image. A node lists its
children in no particular order; the commands sort them (``String.compareTo``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, Protocol

from kafka_admin_kraft.features import NEWEST
from kafka_admin_kraft.image.model import (
    CONFIG_RESOURCE_TYPES,
    SCRAM_MECHANISMS,
    MetadataImage,
    QuotaEntity,
    Topic,
    quota_text,
)
from kafka_admin_kraft.image.text import java_sorted, optional

FINALIZED_PREFIX: Final = "finalized_"
_TEXT: Final = object()
"""A leaf's value when it has none of its own: its text."""
KAFKA_COMMIT_ID: Final = "unknown"
"""``AppInfoParser``'s commit id when it has none; ``/local/commitId`` of this tool."""


class Node:
    """A node of the tree: a directory (children) or a leaf (text and value)."""

    is_directory: bool = True

    def child_names(self) -> list[str]:
        return []

    def child(self, name: str) -> Node | None:
        return None

    def text(self) -> str:
        """A leaf's printed line."""
        raise TypeError("a directory has no text")

    def value(self) -> Any:
        """A leaf's JSON value."""
        raise TypeError("a directory has no value")

    def identity(self) -> Any:
        """What two leaves are compared on: equal identities, equal leaves."""
        raise TypeError("a directory has no identity")


class Leaf(Node):
    """A leaf of plain text, or of a JSON value and its text."""

    is_directory = False

    def __init__(self, text: str, value: Any = _TEXT) -> None:
        self._text = text
        self._value = text if value is _TEXT else value

    def text(self) -> str:
        return self._text

    def value(self) -> Any:
        return self._value

    def identity(self) -> Any:
        return self._value


class Item(Protocol):
    def text(self) -> str: ...

    def value(self) -> Any: ...


class ItemLeaf(Node):
    """A leaf showing a value of the image model: text and JSON made only when asked for."""

    is_directory = False

    def __init__(self, item: Item) -> None:
        self.item = item

    def text(self) -> str:
        return self.item.text()

    def value(self) -> Any:
        return self.item.value()

    def identity(self) -> Any:
        return self.item


class Directory(Node):
    """Children built on demand: ``make`` maps a name to its node (or None)."""

    def __init__(self, names: Callable[[], list[str]], make: Callable[[str], Node | None]) -> None:
        self._names = names
        self._make = make

    def child_names(self) -> list[str]:
        return self._names()

    def child(self, name: str) -> Node | None:
        return self._make(name)


def fixed(children: Mapping[str, Callable[[], Node]]) -> Directory:
    """A directory with a fixed set of children."""
    return Directory(lambda: list(children), lambda name: children[name]() if name in children else None)


def keyed(keys: Callable[[], Mapping[str, Any]], make: Callable[[Any], Node]) -> Directory:
    """A directory with one child per key of a mapping (built once, when first asked for)."""
    cache: list[Mapping[str, Any]] = []

    def items() -> Mapping[str, Any]:
        if not cache:
            cache.append(keys())
        return cache[0]

    def child(name: str) -> Node | None:
        found = items()
        return make(found[name]) if name in found else None
    return Directory(lambda: list(items()), child)


def quota_entity_name(entity: QuotaEntity) -> str | None:
    """``ClientQuotasImageNode.clientQuotaEntityToString``: ``clientId(..)``, ``ip(..)``, ``user(..)``
    joined by ``_`` in that order, with ``\\``, ``(`` and ``)`` escaped; an entry without a name
    (a default entity) adds nothing. None for an entity type Kafka does not know."""
    names: dict[str, str | None] = {}
    for kind, name in entity:
        if kind not in ("client-id", "ip", "user"):
            return None
        names[kind] = name
    parts = []
    for kind, label in (("client-id", "clientId"), ("ip", "ip"), ("user", "user")):
        name = names.get(kind)
        if name is not None:
            escaped = name.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            parts.append(f"{label}({escaped})")
    return "_".join(parts)


def config_resource_name(resource_type: int, name: str) -> str:
    """``ConfigurationsImageNode``: ``TOPIC:orders``, or the type alone for its default resource."""
    type_name = CONFIG_RESOURCE_TYPES.get(resource_type, "UNKNOWN")
    return type_name if not name else f"{type_name}:{name}"


def _topic_node(topic: Topic) -> Node:
    partitions = topic.partitions

    def names() -> list[str]:
        return ["name", "id", *(str(partition_id) for partition_id in partitions)]

    def child(name: str) -> Node | None:
        if name == "name":
            return Leaf(topic.name)
        if name == "id":
            return Leaf(topic.id)
        try:
            partition = partitions.get(int(name))
        except ValueError:
            return None
        return None if partition is None else ItemLeaf(partition)

    return Directory(names, child)


def image_node(image: MetadataImage) -> Node:
    """``MetadataImageNode``: the ``/image`` directory."""

    def features() -> Node:
        def names() -> list[str]:
            return ["metadataVersion", *(FINALIZED_PREFIX + name for name in image.features)]

        def child(name: str) -> Node | None:
            if name == "metadataVersion":
                level = image.metadata_version
                release = None if level is None else NEWEST.release_strings.get(level,
                                                                                f"metadata.version {level}")
                return Leaf(optional(release), release)
            if name.startswith(FINALIZED_PREFIX):
                level = image.features.get(name[len(FINALIZED_PREFIX):], 0)
                return Leaf(str(level), level)
            return None

        return Directory(names, child)

    def cluster() -> Node:
        return fixed({
            "brokers": lambda: keyed(lambda: {str(k): v for k, v in image.brokers.items()},
                                     ItemLeaf),
            "controllers": lambda: keyed(lambda: {str(k): v for k, v in image.controllers.items()},
                                         ItemLeaf),
        })

    def topics() -> Node:
        return fixed({"byName": lambda: keyed(image.topics_by_name, _topic_node),
                      "byId": lambda: keyed(lambda: image.topics, _topic_node)})

    def configs() -> Node:
        def resources() -> dict[str, dict[str, str]]:
            return {config_resource_name(*resource): values for resource, values in image.configs.items()}
        return keyed(resources, lambda values: keyed(lambda: values, lambda value: Leaf(value)))

    def client_quotas() -> Node:
        def entities() -> dict[str, dict[str, float]]:
            found = {}
            for entity, quotas in image.client_quotas.items():
                name = quota_entity_name(entity)
                if name is not None:
                    found[name] = quotas
            return found
        return keyed(entities, lambda quotas: keyed(lambda: quotas,
                                                    lambda value: Leaf(quota_text(value), value)))

    def scram() -> Node:
        def mechanism(type_id: int) -> Callable[[], Node]:
            users = image.scram.get(type_id, {})
            return lambda: keyed(lambda: users, ItemLeaf)
        return fixed({name: mechanism(type_id) for type_id, name in SCRAM_MECHANISMS.items()})

    return fixed({
        "provenance": lambda: ItemLeaf(image.provenance),
        "features": features,
        "cluster": cluster,
        "topics": topics,
        "configs": configs,
        "clientQuotas": client_quotas,
        "producerIds": lambda: fixed({"nextProducerId": lambda: Leaf(str(image.next_producer_id),
                                                                     image.next_producer_id)}),
        "acls": lambda: fixed({"byId": lambda: keyed(lambda: image.acls, ItemLeaf)}),
        "scram": scram,
        "delegationToken": lambda: keyed(lambda: image.delegation_tokens, ItemLeaf),
    })


def root_node(image: MetadataImage, version: Callable[[], str]) -> Node:
    """``RootShellNode``: ``/local`` (the shell's ``version``, asked when read, and ``commitId``) and
    ``/image``."""
    local = fixed({"version": lambda: Leaf(version()), "commitId": lambda: Leaf(KAFKA_COMMIT_ID)})
    return fixed({"local": lambda: local, "image": lambda: image_node(image)})


def walk(node: Node, path: str = "/") -> Iterator[tuple[str, Node]]:
    """Every node under ``node`` with its path, parents first, children in Kafka's order."""
    yield path, node
    if node.is_directory:
        for name in java_sorted(node.child_names()):
            child = node.child(name)
            if child is not None:
                yield from walk(child, path + name if path.endswith("/") else f"{path}/{name}")


def lookup(root: Node, path: str) -> Node | None:
    """The node at an absolute path (``/image/features``), or None."""
    node: Node | None = root
    for part in (part for part in path.split("/") if part):
        if node is None or not node.is_directory:
            return None
        node = node.child(part)
    return node
