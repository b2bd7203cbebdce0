"""The metadata image: what the metadata records of a KRaft log add up to, as Kafka's ``MetadataImage``
holds it, plus the quorum's kraft.version and voter set from the KRaft control records.

Each value knows the text Kafka's metadata shell prints for it (its ``text()``: the class's
``toString`` in Kafka) and a JSON form (``value()``) with camelCase names, for scripts. Sources, all
in Kafka's ``metadata`` module unless said otherwise:

* ``BrokerRegistration.toString`` (the newest copy found, commit 519306a9; its layout is pinned by
  ``ClusterImageBrokersNodeTest``): ``BrokerRegistration(id=.., epoch=.., incarnationId=..,
  listeners=[Endpoint(...), ...], supportedFeatures={name: range, ...}, rack=Optional.., fenced=..,
  inControlledShutdown=.., isMigratingZkBroker=.., directories=[..])``, listeners sorted by name,
  features by name, directories by ``Uuid.compareTo``;
* ``ControllerRegistration.toString`` (commit 04ef4202): ``ControllerRegistration(id=..,
  incarnationId=.., zkMigrationReady=.., listeners=[..], supportedFeatures={..})``;
* ``Endpoint.toString`` (``clients``): ``Endpoint(listenerName='..', securityProtocol=..,
  host='..', port=..)``; ``VersionRange.toString``: ``3`` when min equals max, ``3+`` up to
  ``Short.MAX_VALUE``, else ``1-4``;
* ``PartitionRegistration.toString`` (commit 737a2396, and ``TopicImageNodeTest``);
* ``StandardAcl`` (a Java record, commit 124a95c7): ``StandardAcl[resourceType=.., ..]``;
* ``ScramCredentialDataNode`` and ``DelegationTokenDataNode``: their own print methods, unredacted
  as the shell's ``ShellNodePrinter`` prints them (``MetadataNodeRedactionCriteria.Disabled``);
* ``ProvenanceNode``: ``offset .., epoch .., time <ISO_ZONED_DATE_TIME in UTC>``.

Voters are not part of Kafka's image (the shell cannot show them); here they are kept for the
difference of two images, with a text of the project's own.
"""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass, field
from typing import Any, Final

from kafka_admin_kraft.image.text import (
    iso_zoned_utc,
    java_bool,
    java_double,
    java_list,
    java_sorted,
    optional,
)

SECURITY_PROTOCOLS: Final = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
"""``SecurityProtocol`` by id (``clients``); an unknown id prints as ``null`` (``forId``)."""
LEADER_RECOVERY_STATES: Final = {0: "RECOVERED", 1: "RECOVERING"}
"""``LeaderRecoveryState`` by value."""
RESOURCE_TYPES: Final = {0: "UNKNOWN", 1: "ANY", 2: "TOPIC", 3: "GROUP", 4: "CLUSTER", 5: "TRANSACTIONAL_ID",
                         6: "DELEGATION_TOKEN", 7: "USER"}
"""ACL ``ResourceType`` by code (``clients``); ``fromCode`` gives UNKNOWN for other codes."""
PATTERN_TYPES: Final = {0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}
ACL_OPERATIONS: Final = {0: "UNKNOWN", 1: "ANY", 2: "ALL", 3: "READ", 4: "WRITE", 5: "CREATE", 6: "DELETE",
                         7: "ALTER", 8: "DESCRIBE", 9: "CLUSTER_ACTION", 10: "DESCRIBE_CONFIGS",
                         11: "ALTER_CONFIGS", 12: "IDEMPOTENT_WRITE", 13: "CREATE_TOKENS",
                         14: "DESCRIBE_TOKENS", 15: "TWO_PHASE_COMMIT"}
PERMISSION_TYPES: Final = {0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}
CONFIG_RESOURCE_TYPES: Final = {8: "BROKER_LOGGER", 4: "BROKER", 2: "TOPIC", 0: "UNKNOWN",
                                16: "CLIENT_METRICS", 32: "GROUP"}
"""``ConfigResource.Type`` by id (``clients``), in declaration order; ``forId`` gives UNKNOWN otherwise."""
SCRAM_MECHANISMS: Final = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
"""``ScramMechanism`` by type, without UNKNOWN: the children of ``/image/scram``."""
MIGRATING_DIRECTORY: Final = "AAAAAAAAAAAAAAAAAAAAAA"
"""``DirectoryId.MIGRATING``: the directory of every replica of a record that names none."""
SHORT_MAX: Final = 0x7FFF


def version_range(low: int, high: int) -> str:
    """``VersionRange.toString``."""
    if low == high:
        return str(low)
    if high == SHORT_MAX:
        return f"{low}+"
    return f"{low}-{high}"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where the image stands: the last record applied (offset and epoch) and its batch's timestamp."""

    offset: int = -1
    epoch: int = -1
    time_ms: int = -1

    def text(self) -> str:
        return f"offset {self.offset}, epoch {self.epoch}, time {iso_zoned_utc(self.time_ms)}"

    def value(self) -> dict[str, int]:
        return {"offset": self.offset, "epoch": self.epoch, "timeMs": self.time_ms}


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str
    host: str
    port: int
    security_protocol: int

    def text(self) -> str:
        protocol = SECURITY_PROTOCOLS.get(self.security_protocol, "null")
        return (f"Endpoint(listenerName='{self.name}', securityProtocol={protocol}, host='{self.host}', "
                f"port={self.port})")

    def value(self) -> dict[str, Any]:
        return {"name": self.name, "host": self.host, "port": self.port,
                "securityProtocol": SECURITY_PROTOCOLS.get(self.security_protocol, self.security_protocol)}


def _listeners_text(listeners: dict[str, Endpoint]) -> str:
    return ", ".join(listeners[name].text() for name in java_sorted(listeners))


def _features_text(features: dict[str, tuple[int, int]]) -> str:
    return ", ".join(f"{name}: {version_range(*features[name])}" for name in java_sorted(features))


def _features_value(features: dict[str, tuple[int, int]]) -> dict[str, dict[str, int]]:
    return {name: {"min": low, "max": high} for name, (low, high) in sorted(features.items())}


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    id: int
    epoch: int
    incarnation_id: str
    listeners: dict[str, Endpoint]
    supported_features: dict[str, tuple[int, int]]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    directories: tuple[str, ...]
    """Sorted as Kafka sorts them (``Uuid.compareTo``)."""

    def text(self) -> str:
        return (f"BrokerRegistration(id={self.id}, epoch={self.epoch}, incarnationId={self.incarnation_id}, "
                f"listeners=[{_listeners_text(self.listeners)}], "
                f"supportedFeatures={{{_features_text(self.supported_features)}}}, "
                f"rack={optional(self.rack)}, fenced={java_bool(self.fenced)}, "
                f"inControlledShutdown={java_bool(self.in_controlled_shutdown)}, "
                f"isMigratingZkBroker={java_bool(self.is_migrating_zk_broker)}, "
                f"directories={java_list(self.directories)})")

    def value(self) -> dict[str, Any]:
        return {"id": self.id, "epoch": self.epoch, "incarnationId": self.incarnation_id,
                "listeners": [self.listeners[name].value() for name in java_sorted(self.listeners)],
                "supportedFeatures": _features_value(self.supported_features), "rack": self.rack,
                "fenced": self.fenced, "inControlledShutdown": self.in_controlled_shutdown,
                "isMigratingZkBroker": self.is_migrating_zk_broker, "directories": list(self.directories)}


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    id: int
    incarnation_id: str
    zk_migration_ready: bool
    listeners: dict[str, Endpoint]
    supported_features: dict[str, tuple[int, int]]

    def text(self) -> str:
        return (f"ControllerRegistration(id={self.id}, incarnationId={self.incarnation_id}, "
                f"zkMigrationReady={java_bool(self.zk_migration_ready)}, "
                f"listeners=[{_listeners_text(self.listeners)}], "
                f"supportedFeatures={{{_features_text(self.supported_features)}}})")

    def value(self) -> dict[str, Any]:
        return {"id": self.id, "incarnationId": self.incarnation_id,
                "zkMigrationReady": self.zk_migration_ready,
                "listeners": [self.listeners[name].value() for name in java_sorted(self.listeners)],
                "supportedFeatures": _features_value(self.supported_features)}


@dataclass(slots=True)
class Partition:
    """``PartitionRegistration``: a partition's replicas, ISR, leader and epochs. Changed in place
    while records are replayed (a log holds many changes of each partition); read-only after."""

    replicas: tuple[int, ...]
    directories: tuple[str, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    elr: tuple[int, ...]
    last_known_elr: tuple[int, ...]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int

    def text(self) -> str:
        state = LEADER_RECOVERY_STATES.get(self.leader_recovery_state, str(self.leader_recovery_state))
        return (f"PartitionRegistration(replicas={java_list(self.replicas)}, "
                f"directories={java_list(self.directories)}, isr={java_list(self.isr)}, "
                f"removingReplicas={java_list(self.removing_replicas)}, "
                f"addingReplicas={java_list(self.adding_replicas)}, elr={java_list(self.elr)}, "
                f"lastKnownElr={java_list(self.last_known_elr)}, leader={self.leader}, "
                f"leaderRecoveryState={state}, leaderEpoch={self.leader_epoch}, "
                f"partitionEpoch={self.partition_epoch})")

    def value(self) -> dict[str, Any]:
        return {"replicas": list(self.replicas), "directories": list(self.directories),
                "isr": list(self.isr), "removingReplicas": list(self.removing_replicas),
                "addingReplicas": list(self.adding_replicas),
                "elr": list(self.elr), "lastKnownElr": list(self.last_known_elr), "leader": self.leader,
                "leaderRecoveryState": LEADER_RECOVERY_STATES.get(self.leader_recovery_state,
                                                                  self.leader_recovery_state),
                "leaderEpoch": self.leader_epoch, "partitionEpoch": self.partition_epoch}


@dataclass(slots=True)
class Topic:
    name: str
    id: str
    partitions: dict[int, Partition] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Acl:
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int

    def text(self) -> str:
        return (f"StandardAcl[resourceType={RESOURCE_TYPES.get(self.resource_type, 'UNKNOWN')}, "
                f"resourceName={self.resource_name}, "
                f"patternType={PATTERN_TYPES.get(self.pattern_type, 'UNKNOWN')}, "
                f"principal={self.principal}, host={self.host}, "
                f"operation={ACL_OPERATIONS.get(self.operation, 'UNKNOWN')}, "
                f"permissionType={PERMISSION_TYPES.get(self.permission_type, 'UNKNOWN')}]")

    def value(self) -> dict[str, Any]:
        return {"resourceType": RESOURCE_TYPES.get(self.resource_type, "UNKNOWN"),
                "resourceName": self.resource_name,
                "patternType": PATTERN_TYPES.get(self.pattern_type, "UNKNOWN"), "principal": self.principal,
                "host": self.host, "operation": ACL_OPERATIONS.get(self.operation, "UNKNOWN"),
                "permissionType": PERMISSION_TYPES.get(self.permission_type, "UNKNOWN")}


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def text(self) -> str:
        return (f"ScramCredentialData(salt={self.salt.hex()}, storedKey={self.stored_key.hex()}, "
                f"serverKey={self.server_key.hex()}, iterations={self.iterations})")

    def value(self) -> dict[str, Any]:
        return {"salt": self.salt.hex(), "storedKey": self.stored_key.hex(),
                "serverKey": self.server_key.hex(), "iterations": self.iterations}


@dataclass(frozen=True, slots=True)
class DelegationToken:
    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiry_timestamp: int

    def text(self) -> str:
        # DelegationTokenDataNode's own layout, unbalanced parentheses included.
        return (f"DelegationTokenDatatokenId={self.token_id}(owner={self.owner}"
                f"(tokenRequester={self.requester}(renewers={' '.join(self.renewers)}, "
                f"issueTimestamp={self.issue_timestamp}, maxTimestamp={self.max_timestamp}), "
                f"expiryTimestamp={self.expiry_timestamp}")

    def value(self) -> dict[str, Any]:
        return {"tokenId": self.token_id, "owner": self.owner, "requester": self.requester,
                "renewers": list(self.renewers), "issueTimestamp": self.issue_timestamp,
                "maxTimestamp": self.max_timestamp, "expiryTimestamp": self.expiry_timestamp}


@dataclass(frozen=True, slots=True)
class Voter:
    """A voter of the VotersRecord in force (KIP-853)."""

    id: int
    directory_id: str
    endpoints: tuple[tuple[str, str, int], ...]
    """(listener name, host, port), in the record's order."""
    kraft_version: tuple[int, int]

    def text(self) -> str:
        endpoints = ", ".join(f"{name}://{host}:{port}" for name, host, port in self.endpoints)
        return (f"Voter(id={self.id}, directoryId={self.directory_id}, endpoints=[{endpoints}], "
                f"kraftVersion={version_range(*self.kraft_version)})")

    def value(self) -> dict[str, Any]:
        return {"id": self.id, "directoryId": self.directory_id,
                "endpoints": [{"name": name, "host": host, "port": port}
                              for name, host, port in self.endpoints],
                "kraftVersion": {"min": self.kraft_version[0], "max": self.kraft_version[1]}}


QuotaEntity = tuple[tuple[str, str | None], ...]
"""A client quota entity: its (entity type, name or None for the default) pairs, sorted by type."""
ConfigResource = tuple[int, str]
"""(``ConfigResource.Type`` id, resource name; ``""`` for the type's default resource)."""


@dataclass(slots=True)
class MetadataImage:
    """The image of a metadata log at one offset.

    ``warnings`` lists the records Kafka's loader would refuse (a change of a broker that is not
    registered, an unknown record type, ...), which were skipped. ``committed_offset`` is the last
    offset known to be committed from the input alone (see :mod:`kafka_admin_kraft.image.source`),
    -1 when nothing is known to be committed.
    """

    provenance: Provenance = field(default_factory=Provenance)
    metadata_version: int | None = None
    features: dict[str, int] = field(default_factory=dict)
    brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    controllers: dict[int, ControllerRegistration] = field(default_factory=dict)
    topics: dict[str, Topic] = field(default_factory=dict)
    """By topic id (text)."""
    configs: dict[ConfigResource, dict[str, str]] = field(default_factory=dict)
    client_quotas: dict[QuotaEntity, dict[str, float]] = field(default_factory=dict)
    next_producer_id: int = -1
    acls: dict[str, Acl] = field(default_factory=dict)
    """By ACL id (text)."""
    scram: dict[int, dict[str, ScramCredential]] = field(default_factory=dict)
    """By mechanism type, then user name."""
    delegation_tokens: dict[str, DelegationToken] = field(default_factory=dict)
    kraft_version: int | None = None
    voters: dict[int, Voter] | None = None
    """None when no VotersRecord was read (a static quorum, kraft.version 0)."""
    committed_offset: int = -1
    source: str = ""
    warnings: list[str] = field(default_factory=list)

    def copy(self) -> MetadataImage:
        """An image equal to this one that replaying more records into this one leaves alone: the
        partitions and the inner mappings are copied, the immutable registrations shared."""
        return MetadataImage(
            provenance=self.provenance, metadata_version=self.metadata_version, features=dict(self.features),
            brokers=dict(self.brokers), controllers=dict(self.controllers),
            topics={topic_id: Topic(topic.name, topic.id, {index: copy.copy(partition) for index, partition
                                                           in topic.partitions.items()})
                    for topic_id, topic in self.topics.items()},
            configs={resource: dict(values) for resource, values in self.configs.items()},
            client_quotas={entity: dict(values) for entity, values in self.client_quotas.items()},
            next_producer_id=self.next_producer_id, acls=dict(self.acls),
            scram={mechanism: dict(users) for mechanism, users in self.scram.items()},
            delegation_tokens=dict(self.delegation_tokens), kraft_version=self.kraft_version,
            voters=None if self.voters is None else dict(self.voters), committed_offset=self.committed_offset,
            source=self.source, warnings=list(self.warnings))

    def topics_by_name(self) -> dict[str, Topic]:
        """Kafka's ``TopicsImage.topicsByName``."""
        return {topic.name: topic for topic in self.topics.values()}

    def is_empty(self) -> bool:
        """No metadata at all (the image of an empty snapshot)."""
        return (self.metadata_version is None and not self.features and not self.brokers
                and not self.controllers and not self.topics and not self.configs and not self.client_quotas
                and not self.acls and not any(self.scram.values()) and not self.delegation_tokens
                and self.next_producer_id == -1)


def quota_text(value: float) -> str:
    """A quota as ``ClientQuotaImageNode`` prints it (``Double.toString``)."""
    return java_double(value)


def bytes_from_json(text: str) -> bytes:
    """A bytes field of Kafka's JSON form (standard base64)."""
    return base64.b64decode(text)
