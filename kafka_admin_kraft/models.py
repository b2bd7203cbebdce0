"""Typed results and arguments of the admin operations: frozen pydantic models.

They mirror the value types of Kafka's Java Admin client (``QuorumInfo``, ``RaftVoterEndpoint``,
``FeatureUpdate``, ``FeatureMetadata``, ...) with Python names. A directory id is a
:class:`~kafka_admin_kraft.protocol.primitives.Uuid` (``ZERO_UUID`` for "none"), given as a ``Uuid`` or
its text form and dumped to JSON as its text form (22 characters of URL-safe base64); a cluster id is
text. Optional values that Kafka encodes as -1 on the wire are ``None`` here. The fields of the models
users build are checked by ``kafka_admin_kraft.values``, whose ``UpgradeType`` and ``ZERO_UUID_TEXT``
are importable from here too.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainSerializer, PlainValidator, ValidationInfo, model_validator

from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.values import (
    ZERO_UUID_TEXT,
    UpgradeType,
    directory_id,
    endpoint_fields,
    endpoint_text,
    feature_update_fields,
)

__all__ = [
    "ZERO_UUID_TEXT",
    "ApiVersionRange",
    "ClusterDescription",
    "ClusterNode",
    "Endpoint",
    "FeatureMetadata",
    "FeatureUpdate",
    "FeatureUpdateResult",
    "FinalizedVersionRange",
    "Node",
    "NodeApiVersions",
    "QuorumInfo",
    "RaftVoterEndpoint",
    "ReplicaState",
    "SupportedVersionRange",
    "UpgradeType",
]


def _directory_id(value: object, info: ValidationInfo) -> Uuid:
    return directory_id(value, info.field_name or "directory id")


DirectoryId = Annotated[
    Uuid, PlainValidator(_directory_id), PlainSerializer(str, return_type=str, when_used="json")
]
"""A directory id field: a ``Uuid`` inside, given as a ``Uuid`` or its text form (checked by
``values.directory_id``), its text form in JSON."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Endpoint(_Frozen):
    """A listener of a controller: ``LISTENER://host:port`` (Java's ``RaftVoterEndpoint``).

    Built by a caller, it is checked as ``add_raft_voter`` checks its endpoints: an upper-case listener
    name without whitespace (as Kafka requires), a host name or IP literal, a port of 1-65535; a wrong
    type raises ``TypeError``, a wrong value a ``ValueError`` naming the field.
    """

    listener: str
    """Listener name, e.g. ``CONTROLLER``."""
    host: str
    """Host name or address."""
    port: int
    """TCP port."""

    def __init__(self, *, listener: str, host: str, port: int) -> None:
        listener, host, port = endpoint_fields(listener, host, port)
        BaseModel.__init__(self, listener=listener, host=host, port=port)

    def __str__(self) -> str:
        return endpoint_text(self.listener, self.host, self.port)


RaftVoterEndpoint = Endpoint
"""Java's name for :class:`Endpoint`."""


class Node(_Frozen):
    """A voter of the quorum and its listeners (DescribeQuorum v2+ ``Nodes``)."""

    node_id: int
    """The controller's node id."""
    endpoints: tuple[Endpoint, ...]
    """Its listeners, in response order."""


class ReplicaState(_Frozen):
    """What the quorum leader knows about one replica of ``__cluster_metadata``."""

    replica_id: int
    """Node id of the replica."""
    replica_directory_id: DirectoryId = ZERO_UUID
    """Its metadata log directory id (``ZERO_UUID`` when unknown or before DescribeQuorum v2);
    ``str()`` gives Kafka's text form."""
    log_end_offset: int
    """The last offset the leader saw it fetch (its own log end offset for the leader; -1 if never)."""
    last_fetch_timestamp: int | None = None
    """Wall-clock ms of its last fetch; None when unknown (-1 on the wire, or before v1)."""
    last_caught_up_timestamp: int | None = None
    """Wall-clock ms when it was last caught up with the leader; None when unknown."""


class QuorumInfo(_Frozen):
    """The state of the KRaft metadata quorum, as its leader reports it (DescribeQuorum)."""

    leader_id: int
    """Node id of the quorum leader."""
    leader_epoch: int
    """The leader's epoch."""
    high_watermark: int
    """The high watermark of ``__cluster_metadata`` (-1 when the leader has none yet)."""
    voters: tuple[ReplicaState, ...]
    """The current voter set, including a not yet committed change, in response order."""
    committed_voters: tuple[ReplicaState, ...] | None = None
    """The voter set as of the high watermark (DescribeQuorum v3); None when the server only speaks
    v0-v2 and so cannot say. Never derived from ``voters``."""
    observers: tuple[ReplicaState, ...]
    """Replicas that fetch from the leader without voting (brokers, controllers not yet added)."""
    nodes: dict[int, Node]
    """Voters' listeners by node id (empty before DescribeQuorum v2)."""
    api_version: int = -1
    """The DescribeQuorum version the answer came in."""


class ClusterNode(_Frozen):
    """A broker or controller as DescribeCluster lists it."""

    node_id: int
    """Its node id."""
    host: str
    """Host of the listener the request came in on."""
    port: int
    """Port of that listener."""
    rack: str | None = None
    """Rack, if configured."""
    is_fenced: bool = False
    """Whether the broker is fenced (DescribeCluster v2+)."""


class ClusterDescription(_Frozen):
    """Cluster id, controller and nodes (DescribeCluster)."""

    cluster_id: str
    """The cluster id."""
    controller: ClusterNode | None
    """With bootstrap controllers: the active controller; with bootstrap servers: the node brokers
    report (in KRaft a random live broker). None when unknown."""
    nodes: tuple[ClusterNode, ...]
    """Brokers (bootstrap servers) or registered controllers (bootstrap controllers)."""


class ApiVersionRange(_Frozen):
    """The versions of one API a node accepts (an ApiKeys entry of its ApiVersions answer)."""

    api_key: int
    """The API's key, e.g. 55 for DescribeQuorum."""
    min_version: int
    """Oldest version the node accepts."""
    max_version: int
    """Newest version the node accepts."""


class NodeApiVersions(_Frozen):
    """The APIs one node advertises and their version ranges (ApiVersions), as Kafka's
    ``NodeApiVersions`` holds them."""

    node_id: int
    """The node asked."""
    api_versions: tuple[ApiVersionRange, ...]
    """One range per API the node serves on the listener asked, in API key order."""

    def get(self, api_key: int) -> ApiVersionRange | None:
        """The range of ``api_key``, or None when the node does not serve it."""
        return next((r for r in self.api_versions if r.api_key == api_key), None)


class SupportedVersionRange(_Frozen):
    """The levels of a feature that a node can run."""

    min_version: int
    """Lowest supported level."""
    max_version: int
    """Highest supported level."""

    @model_validator(mode="after")
    def _check(self) -> SupportedVersionRange:
        if self.min_version < 0 or self.max_version < 0 or self.max_version < self.min_version:
            raise ValueError(f"invalid supported range {self.min_version}..{self.max_version}")
        return self


class FinalizedVersionRange(_Frozen):
    """The finalized level of a feature (Kafka reports min = max = the level)."""

    min_version_level: int
    """Minimum finalized level."""
    max_version_level: int
    """Maximum finalized level: the feature's level."""

    @model_validator(mode="after")
    def _check(self) -> FinalizedVersionRange:
        if (
            self.min_version_level < 0
            or self.max_version_level < 0
            or self.max_version_level < self.min_version_level
        ):
            raise ValueError(f"invalid finalized range {self.min_version_level}..{self.max_version_level}")
        return self


class FeatureMetadata(_Frozen):
    """Feature levels, as one node reports them in ApiVersions."""

    finalized_features: dict[str, FinalizedVersionRange]
    """Finalized levels by feature name (features at level 0 are not listed)."""
    finalized_features_epoch: int | None
    """The metadata offset the finalized levels come from; None when unknown."""
    supported_features: dict[str, SupportedVersionRange]
    """Levels the node supports, by feature name."""


class FeatureUpdate(_Frozen):
    """A requested level for one feature, checked as ``update_features`` checks its arguments."""

    level: int
    """The target (maximum) level; 0 removes the feature and needs a downgrade type."""
    upgrade_type: UpgradeType = UpgradeType.UPGRADE
    """Upgrade, safe downgrade or unsafe downgrade."""

    def __init__(self, *, level: int, upgrade_type: UpgradeType | int = UpgradeType.UPGRADE) -> None:
        level, kind = feature_update_fields(level, upgrade_type)
        BaseModel.__init__(self, level=level, upgrade_type=kind)


class FeatureUpdateResult(_Frozen):
    """The outcome of one feature's update."""

    feature: str
    """Feature name."""
    error_code: int = 0
    """0 on success, else Kafka's error code."""
    error_message: str | None = None
    """The server's message for this feature, if any."""

    @property
    def ok(self) -> bool:
        """Whether the update (or its validation) succeeded."""
        # Imported here: the tools load this module at start-up, the error table only when needed.
        from kafka_admin_kraft.protocol.error_codes import ErrorCode

        return self.error_code == ErrorCode.NONE

    def exception(self) -> Exception | None:
        """The error as a :class:`~kafka_admin_kraft.errors.KafkaApiError`, or None on success."""
        if self.ok:
            return None
        from kafka_admin_kraft.errors import error_for_code

        return error_for_code(self.error_code, self.error_message).in_context("update_features")
