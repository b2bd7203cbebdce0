"""What the read operations take from the servers' answers, as named tuples: the data of the result
models (:mod:`kafka_admin_kraft.models`) without pydantic. Named tuples rather than dataclasses: making
nine frozen dataclasses costs a tool about 7 ms at start-up, making these one.

``Admin`` validates them into the models it returns (``Model.model_validate(answer,
from_attributes=True)``: the field names are the models'). The tools print them as they are, so that
a command that only reads and prints never imports pydantic, about half of a fresh process's time
(BENCHMARKS.md, "Command-line tools: start-up to answer").
"""

from __future__ import annotations

from typing import NamedTuple

from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.values import endpoint_text


class EndpointAnswer(NamedTuple):
    """A voter's listener as the leader reports it (``models.Endpoint``)."""

    listener: str
    host: str
    port: int

    def __str__(self) -> str:
        return endpoint_text(self.listener, self.host, self.port)


class NodeAnswer(NamedTuple):
    """A voter and its listeners (``models.Node``)."""

    node_id: int
    endpoints: tuple[EndpointAnswer, ...]


class ReplicaAnswer(NamedTuple):
    """One replica of ``__cluster_metadata`` (``models.ReplicaState``); -1 times are None."""

    replica_id: int
    replica_directory_id: Uuid
    log_end_offset: int
    last_fetch_timestamp: int | None
    last_caught_up_timestamp: int | None


class QuorumAnswer(NamedTuple):
    """The quorum as its leader reports it (``models.QuorumInfo``)."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaAnswer, ...]
    committed_voters: tuple[ReplicaAnswer, ...] | None
    observers: tuple[ReplicaAnswer, ...]
    nodes: dict[int, NodeAnswer]
    api_version: int


class ClusterNodeAnswer(NamedTuple):
    """A broker or controller as DescribeCluster lists it (``models.ClusterNode``)."""

    node_id: int
    host: str
    port: int
    rack: str | None
    is_fenced: bool


class ClusterAnswer(NamedTuple):
    """Cluster id, controller and nodes (``models.ClusterDescription``)."""

    cluster_id: str
    controller: ClusterNodeAnswer | None
    nodes: tuple[ClusterNodeAnswer, ...]


class SupportedAnswer(NamedTuple):
    """The levels of a feature a node can run (``models.SupportedVersionRange``)."""

    min_version: int
    max_version: int


class FinalizedAnswer(NamedTuple):
    """The finalized level of a feature (``models.FinalizedVersionRange``)."""

    min_version_level: int
    max_version_level: int


class FeaturesAnswer(NamedTuple):
    """Feature levels as one node reports them in ApiVersions (``models.FeatureMetadata``)."""

    finalized_features: dict[str, FinalizedAnswer]
    finalized_features_epoch: int | None
    supported_features: dict[str, SupportedAnswer]
